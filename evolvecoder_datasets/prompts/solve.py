"""The solve prompt: ask a model for a solution of a problem (a function, or a stdin/stdout script).

The sample stage sends it once per model and problem with ``n`` samples; the answer's code is taken with
:func:`~evolvecoder_datasets.execution.extract_code` (there is nothing else to parse).

Example:
    >>> from evolvecoder_datasets.prompts import solve
    >>> messages = solve.build_messages("Write `def one() -> int` returning 1.")
    >>> messages[0]["role"], "single ```python code block" in messages[0]["content"]
    ('user', True)
    >>> solve.build_request("Read n, print n + 1.", stdio=True, n=4).n
    4
"""

from __future__ import annotations

from typing import Any

from ..llm.types import ChatRequest
from ._common import make_request

__all__ = ["STAGE", "VERSION", "build_messages", "build_request"]

VERSION = "solve-1"
STAGE = "sample"

_FUNCTION_TASK = """\
Solve the following programming problem in Python.

{question}

Write the complete solution: the function (or class) with exactly the name and signature the problem asks for, \
with any imports and helpers it needs. Do not read input, print, or include tests or example usage.
Reply with a single ```python code block."""

_STDIO_TASK = """\
Solve the following programming problem in Python.

{question}

Write a complete program that reads the input from standard input and writes the answer to standard output, \
exactly in the format the problem describes.
Reply with a single ```python code block."""


def build_messages(question: str, *, stdio: bool = False, system_prompt: str | None = None) -> list[dict[str, str]]:
    """The chat messages asking for a solution of ``question``.

    Args:
        question (`str`): the problem statement.
        stdio (`bool`, defaults to `False`): ask for a program reading stdin and writing stdout instead of a function.
        system_prompt (`str`, *optional*): a system message sent before the task.

    Example:
        >>> [m["role"] for m in build_messages("Sum a list.", system_prompt="You are terse.")]
        ['system', 'user']
    """
    template = _STDIO_TASK if stdio else _FUNCTION_TASK
    messages = [{"role": "user", "content": template.format(question=question.strip())}]
    if system_prompt:
        messages.insert(0, {"role": "system", "content": system_prompt})
    return messages


def build_request(question: str, *, stdio: bool = False, system_prompt: str | None = None,
                  **sampling: Any) -> ChatRequest:
    """:func:`build_messages` wrapped in a :class:`ChatRequest` carrying :data:`VERSION`.

    Args:
        question (`str`): the problem statement.
        stdio (`bool`, defaults to `False`): ask for a stdin/stdout program.
        system_prompt (`str`, *optional*): a system message.
        **sampling: ``n``, ``temperature``, ``top_p``, ``max_tokens``, ``seed``, ``stop``.

    Example:
        >>> build_request("Sum a list.", n=2, temperature=0.6).prompt_version
        'solve-1'
    """
    return make_request(build_messages(question, stdio=stdio, system_prompt=system_prompt), version=VERSION,
                        stage=STAGE, **sampling)
