"""Reward functions for TRL's ``GRPOTrainer``, scored by running the completions in the sandbox.

TRL calls a reward function as ``f(prompts=..., completions=..., completion_ids=..., **kwargs)`` where ``kwargs``
carry every dataset column, one value per completion, plus ``trainer_state``, ``log_extra`` and ``log_metric``.
The functions here read the ``tests`` column (a list of ``assert`` strings per row) or, for stdin/stdout problems,
the ``inputs``/``outputs`` columns, and return one float per completion:

- :func:`code_reward`: 1.0 when every test passes, else 0.0 (``failing_value``; -1.0 as the verl-tool AceCoder
  reward uses is one :func:`make_code_reward` away).
- :func:`pass_rate_reward`: the fraction of tests passed.
- :func:`async_code_reward`, :func:`async_pass_rate_reward`: the same as coroutines, so TRL overlaps them with
  other async reward functions.

A completion gets ``None`` (TRL leaves it out of the advantage) when the sandbox itself failed or the row has no
tests, never a silent 0.0. Code is taken from the completion with :func:`~evolvecoder_datasets.execution.
extract_code` (thinking stripped, last Python block) and run after a preamble of common imports.

Each trainer process (one per rank) starts one sandbox on the first call, reuses it for every step and closes it
at exit; the trainer itself never forks. A binary reward's run stops at a completion's first test that does not
pass (its value is known there); a pass-rate reward runs them all. A row's ``time_limit_s`` column (the limit the
execute stage calibrated from the problem's reference, see :mod:`evolvecoder_datasets.limits`) replaces the fixed
``timeout_s`` for that row's tests, so a looping completion costs a fraction of a second, not seconds. Identical ``(program, tests)`` pairs are run once: within a batch, across
reward functions that share settings (``code_reward`` and ``pass_rate_reward`` together cost one execution), and
across steps through a bounded per-process cache.

Example:
    >>> from datasets import load_dataset                                       # doctest: +SKIP
    >>> from trl import GRPOConfig, GRPOTrainer                                  # doctest: +SKIP
    >>> from evolvecoder_datasets.rewards import code_reward                     # doctest: +SKIP
    >>> trainer = GRPOTrainer(model="HuggingFaceTB/SmolLM2-135M-Instruct", reward_funcs=[code_reward],
    ...                       train_dataset=load_dataset("org/EvolveCoder-22k", revision="round3", split="train"),
    ...                       args=GRPOConfig(output_dir="out"))                 # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from .cache import cache_info, clear_cache
from .config import COMMON_IMPORTS, RewardConfig
from .prompts import SYSTEM_PROMPT, build_prompts, with_prompts
from .reward import AsyncCodeReward, CodeReward, make_code_reward, make_pass_rate_reward

__all__ = [
    "COMMON_IMPORTS",
    "SYSTEM_PROMPT",
    "AsyncCodeReward",
    "CodeReward",
    "RewardConfig",
    "async_code_reward",
    "async_pass_rate_reward",
    "build_prompts",
    "cache_info",
    "clear_cache",
    "code_reward",
    "make_code_reward",
    "make_pass_rate_reward",
    "pass_rate_reward",
    "with_prompts",
]

# -- ready-made functions with TRL's protocol --------------------------------------------------------------------

_DEFAULTS = {
    "code_reward": CodeReward(RewardConfig(kind="binary"), name="code_reward"),
    "pass_rate_reward": CodeReward(RewardConfig(kind="pass_rate"), name="pass_rate_reward"),
    "async_code_reward": AsyncCodeReward(RewardConfig(kind="binary"), name="async_code_reward"),
    "async_pass_rate_reward": AsyncCodeReward(RewardConfig(kind="pass_rate"), name="async_pass_rate_reward"),
}


def code_reward(
    prompts: list | None = None, completions: list | None = None, completion_ids: list | None = None, **kwargs: Any
) -> list[float | None]:
    """1.0 for a completion whose code passes every test of its row, 0.0 otherwise; ``None`` on sandbox failure.

    The default settings: isolated mode, 1 s of CPU per test, :data:`COMMON_IMPORTS` as preamble, the last Python
    block of the answer. Use :func:`make_code_reward` for others (``failing_value=-1.0``, ``mode="fast"``, ...).

    Args:
        prompts (`list`, *optional*): the prompts (unused).
        completions (`list`): model answers, strings or conversations.
        completion_ids (`list`, *optional*): token ids (unused).
        **kwargs: dataset columns (``tests``, or ``inputs``/``outputs``) and TRL's ``log_metric``/``log_extra``.

    Returns:
        `list[float | None]`: one reward per completion.

    Raises:
        SchemaError: the batch has neither a ``tests`` column nor ``inputs``/``outputs`` columns.

    Example:
        >>> from evolvecoder_datasets.rewards import code_reward
        >>> code_reward(completions=["```python\\ndef sq(x):\\n    return x * x\\n```", "def sq(x): return x"],
        ...             tests=[["assert sq(3) == 9"], ["assert sq(3) == 9"]])
        [1.0, 0.0]
    """
    return _DEFAULTS["code_reward"](prompts, completions, completion_ids, **kwargs)


def pass_rate_reward(
    prompts: list | None = None, completions: list | None = None, completion_ids: list | None = None, **kwargs: Any
) -> list[float | None]:
    """The fraction of its row's tests a completion's code passes; ``None`` on sandbox failure.

    Same settings as :func:`code_reward`; :func:`make_pass_rate_reward` builds variants.

    Args:
        prompts (`list`, *optional*): the prompts (unused).
        completions (`list`): model answers, strings or conversations.
        completion_ids (`list`, *optional*): token ids (unused).
        **kwargs: dataset columns (``tests``, or ``inputs``/``outputs``) and TRL's ``log_metric``/``log_extra``.

    Returns:
        `list[float | None]`: one reward per completion.

    Raises:
        SchemaError: the batch has neither a ``tests`` column nor ``inputs``/``outputs`` columns.

    Example:
        >>> from evolvecoder_datasets.rewards import pass_rate_reward
        >>> pass_rate_reward(completions=["def sq(x):\\n    return x * 3"],
        ...                  tests=[["assert sq(3) == 9", "assert sq(2) == 4"]])
        [0.5]
    """
    return _DEFAULTS["pass_rate_reward"](prompts, completions, completion_ids, **kwargs)


async def async_code_reward(
    prompts: list | None = None, completions: list | None = None, completion_ids: list | None = None, **kwargs: Any
) -> list[float | None]:
    """Coroutine form of :func:`code_reward`; TRL runs it concurrently with other async reward functions.

    Args:
        prompts (`list`, *optional*): the prompts (unused).
        completions (`list`): model answers, strings or conversations.
        completion_ids (`list`, *optional*): token ids (unused).
        **kwargs: dataset columns and TRL's extras, as for :func:`code_reward`.

    Raises:
        SchemaError: the batch has neither a ``tests`` column nor ``inputs``/``outputs`` columns.

    Example:
        >>> import asyncio
        >>> asyncio.run(async_code_reward(completions=["x = 1"], tests=[["assert x == 1"]]))
        [1.0]
    """
    return await _DEFAULTS["async_code_reward"](prompts, completions, completion_ids, **kwargs)


async def async_pass_rate_reward(
    prompts: list | None = None, completions: list | None = None, completion_ids: list | None = None, **kwargs: Any
) -> list[float | None]:
    """Coroutine form of :func:`pass_rate_reward`.

    Args:
        prompts (`list`, *optional*): the prompts (unused).
        completions (`list`): model answers, strings or conversations.
        completion_ids (`list`, *optional*): token ids (unused).
        **kwargs: dataset columns and TRL's extras, as for :func:`pass_rate_reward`.

    Raises:
        SchemaError: the batch has neither a ``tests`` column nor ``inputs``/``outputs`` columns.

    Example:
        >>> import asyncio
        >>> asyncio.run(async_pass_rate_reward(completions=["x = 1"], tests=[["assert x == 1", "assert x == 2"]]))
        [0.5]
    """
    return await _DEFAULTS["async_pass_rate_reward"](prompts, completions, completion_ids, **kwargs)
