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

__all__ = ["STAGE", "VERSION", "answer_text", "build_messages", "build_request", "stub_prefill"]

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


_STUB_TASK = """\
Complete the Python function that begins your answer: write its body, with any imports and helpers it needs, \
exactly as its docstring specifies. Do not print or add tests."""


def stub_prefill(question: str) -> str | None:
    """The start of an answer that continues ``question`` where the question is a function stub (HumanEval's form:
    Python whose last statement is a function with only a docstring), else ``None``.

    Sent as the answer's beginning (an assistant message the model continues), it makes a model write only the
    body, as HumanEval samples are taken: a small model otherwise copies the whole stub, docstring and examples, and
    spends most of its tokens on it.

    Example:
        >>> stub_prefill("def one() -> int:\\n    'Return 1.'\\n")
        "```python\\ndef one() -> int:\\n    'Return 1.'\\n"
        >>> stub_prefill("Write `def one() -> int` returning 1.") is None
        True
    """
    import ast

    try:
        tree = ast.parse(question)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    last = tree.body[-1] if tree.body else None
    if not isinstance(last, (ast.FunctionDef, ast.AsyncFunctionDef)) or len(last.body) != 1:
        return None
    only = last.body[0]
    if not (isinstance(only, ast.Expr) and isinstance(only.value, ast.Constant) and isinstance(only.value.value, str)):
        return None
    return "```python\n" + question.rstrip() + "\n"


def build_messages(question: str, *, stdio: bool = False, system_prompt: str | None = None,
                   complete_stub: bool = False) -> list[dict[str, str]]:
    """The chat messages asking for a solution of ``question``.

    Args:
        question (`str`): the problem statement.
        stdio (`bool`, defaults to `False`): ask for a program reading stdin and writing stdout instead of a function.
        system_prompt (`str`, *optional*): a system message sent before the task.
        complete_stub (`bool`, defaults to `False`): where the question is a function stub (:func:`stub_prefill`),
            ask for its body and end with the beginning of the answer (an assistant message holding the stub) for
            the model to continue; the stub is sent once, there.

    Example:
        >>> [m["role"] for m in build_messages("Sum a list.", system_prompt="You are terse.")]
        ['system', 'user']
        >>> [m["role"] for m in build_messages("def f():\\n    'Return 1.'", complete_stub=True)]
        ['user', 'assistant']
    """
    prefill = stub_prefill(question) if complete_stub and not stdio else None
    if prefill:  # the stub is read once, in the answer's beginning: prompt tokens are a small model's cost
        messages = [{"role": "user", "content": _STUB_TASK}, {"role": "assistant", "content": prefill}]
    else:
        template = _STDIO_TASK if stdio else _FUNCTION_TASK
        messages = [{"role": "user", "content": template.format(question=question.strip())}]
    if system_prompt:
        messages.insert(0, {"role": "system", "content": system_prompt})
    return messages


def build_request(question: str, *, stdio: bool = False, system_prompt: str | None = None,
                  complete_stub: bool = False, **sampling: Any) -> ChatRequest:
    """:func:`build_messages` wrapped in a :class:`ChatRequest` carrying :data:`VERSION`.

    Args:
        question (`str`): the problem statement.
        stdio (`bool`, defaults to `False`): ask for a stdin/stdout program.
        system_prompt (`str`, *optional*): a system message.
        complete_stub (`bool`, defaults to `False`): see :func:`build_messages`.
        **sampling: ``n``, ``temperature``, ``top_p``, ``max_tokens``, ``seed``, ``stop``.

    Example:
        >>> build_request("Sum a list.", n=2, temperature=0.6).prompt_version
        'solve-1'
    """
    return make_request(build_messages(question, stdio=stdio, system_prompt=system_prompt,
                                       complete_stub=complete_stub), version=VERSION, stage=STAGE, **sampling)


def answer_text(request: ChatRequest, text: str) -> str:
    """The whole answer to a request that may end with the answer's beginning (:func:`build_messages` with
    ``complete_stub``): backends that continue an assistant message return it with or without that beginning, and
    this gives it back with it.

    Example:
        >>> req = build_request("def f():\\n    'Return 1.'", complete_stub=True)
        >>> print(answer_text(req, "    return 1\\n```"))
        ```python
        def f():
            'Return 1.'
            return 1
        ```
    """
    last = request.messages[-1]
    if last["role"] != "assistant" or text.startswith(last["content"]):
        return text
    return last["content"] + text
