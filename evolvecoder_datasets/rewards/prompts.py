"""The dataset side of the rewards: a conversational ``prompt`` column for TRL from the question column.

Example:
    >>> from evolvecoder_datasets.rewards import build_prompts
    >>> build_prompts({"question": ["Write add(a, b)."]}, system_prompt=None)["prompt"][0][0]["role"]
    'user'
"""

from __future__ import annotations

from .. import schema

__all__ = ["SYSTEM_PROMPT", "build_prompts", "with_prompts"]

#: System message of :func:`with_prompts`: one fenced block, as the rewards' default extraction expects.
SYSTEM_PROMPT = (
    "You are an expert Python programmer. Solve the problem. Reply with the complete solution in a single "
    "```python code block, with every import it needs, and nothing after the block."
)


def build_prompts(batch: dict[str, list], *, system_prompt: str | None = SYSTEM_PROMPT,
                  question_column: str = schema.QUESTION) -> dict[str, list]:  # fmt: skip
    """``Dataset.map(batched=True)`` function: a conversational ``prompt`` column from the question column.

    Reads ``question`` (or ``question_column``); writes ``prompt``: an optional system message and the question as
    the user message, the shape TRL's trainers take.

    Args:
        batch (`dict[str, list]`): a batch of problem rows.
        system_prompt (`str`, *optional*, defaults to :data:`SYSTEM_PROMPT`): system message; ``None`` for none.
        question_column (`str`, defaults to ``"question"``): column holding the problem statement.

    Raises:
        SchemaError: the batch has no ``question_column``.

    Example:
        >>> build_prompts({"question": ["Write add(a, b)."]}, system_prompt=None)
        {'prompt': [[{'role': 'user', 'content': 'Write add(a, b).'}]]}
    """
    schema.check_columns(batch, [question_column], stage="build_prompts")
    system = [{"role": "system", "content": system_prompt}] if system_prompt else []
    return {"prompt": [system + [{"role": "user", "content": q}] for q in batch[question_column]]}


def with_prompts(dataset, *, system_prompt: str | None = SYSTEM_PROMPT, question_column: str = schema.QUESTION,
                 num_proc: int | None = None):  # fmt: skip
    """The dataset with a conversational ``prompt`` column, ready for ``GRPOTrainer`` with these rewards.

    Published revisions hold ``id``, ``question`` and ``tests``; TRL needs ``prompt``. The other columns stay, so
    the rewards receive ``tests`` (or ``inputs``/``outputs``) for each completion.

    Args:
        dataset (`datasets.Dataset`): problem rows.
        system_prompt (`str`, *optional*, defaults to :data:`SYSTEM_PROMPT`): system message; ``None`` for none.
        question_column (`str`, defaults to ``"question"``): column holding the problem statement.
        num_proc (`int`, *optional*): processes for ``map``.

    Returns:
        `datasets.Dataset`

    Raises:
        SchemaError: the dataset has no ``question_column``.

    Example:
        >>> from datasets import load_dataset
        >>> from evolvecoder_datasets.rewards import with_prompts
        >>> ds = with_prompts(load_dataset("TIGER-Lab/EvolveCoder-22K", split="train"))  # doctest: +SKIP
        >>> ds[0]["prompt"][-1]["role"]                                                                # doctest: +SKIP
        'user'
    """
    schema.check_columns(dataset.column_names, [question_column], stage="with_prompts")
    return dataset.map(
        build_prompts, batched=True, num_proc=num_proc, desc="prompts",
        fn_kwargs={"system_prompt": system_prompt, "question_column": question_column},
    )  # fmt: skip
