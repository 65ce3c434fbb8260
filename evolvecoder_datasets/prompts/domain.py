"""The domain prompt: ask a model for a problem's precondition, written from its statement.

Where no precondition ships with a problem's source, a configured model writes one at the problem's first round:
``def precondition(<the function's parameters>) -> bool``, true exactly for the inputs the statement defines. The
answer is code, so it is never run here: :func:`parse` only reads it as text and checks its shape (it parses, it
defines ``precondition`` with the right parameter count); the evolve stage then runs it in the sandbox, like any
program, where it must admit every input of the problem's own asserts and reject at least one input outside what the
seeds show before it is used (else the inferred domain stays).

Example:
    >>> from evolvecoder_datasets.prompts import domain
    >>> request = domain.build_request("Return the n-th prime (1-indexed).", "nth_prime", ["n"], [(1,), (5,)])
    >>> "nth_prime(5)" in request.messages[-1]["content"]
    True
    >>> print(domain.parse("```python\\ndef precondition(n):\\n    return type(n) is int and n >= 1\\n```", 1))
    def precondition(n):
        return type(n) is int and n >= 1
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import Any

from ..errors import LLMResponseError
from ..llm.types import ChatRequest
from ..search.calls import render_args
from ._common import make_request

__all__ = ["STAGE", "VERSION", "build_request", "parse"]

VERSION = "domain-1"
STAGE = "evolve"
_MAX_SOURCE_CHARS = 2000
_FENCE = re.compile(r"```[a-zA-Z0-9_+-]*\n(.*?)```", re.DOTALL)

_SYSTEM = "You write input validators for Python functions. You answer with one Python code block."

_TASK = """\
Problem:
<<<
{question}
>>>

Write `def precondition({params}) -> bool` that returns True exactly when the arguments are inputs this problem \
defines: right types, ranges, formats and relations the statement states (e.g. "positive", "a string of lowercase \
letters", "the lists have the same length"). Where the statement is silent, accept only what the examples below show \
and what has one obvious answer. It must never raise: check types first. Standard library only.

Inputs the problem's tests use (all must be accepted):
{seeds}

Example answer for `def f(n)` where n is a positive integer:
```python
def precondition(n):
    return type(n) is int and n >= 1
```"""


def build_request(question: str, callee: str, params: Sequence[str], seeds: Sequence[tuple], *,
                  max_seeds: int = 6, **sampling: Any) -> ChatRequest:
    """The request for one problem's precondition (``params``: the function's parameter names; ``seeds``: argument
    tuples of its own asserts, the first ``max_seeds`` shown).

    Example:
        >>> build_request("Sum a list.", "total", ["xs"], [([1, 2],)]).prompt_version
        'domain-1'
    """
    shown = "\n".join(f"- {callee}({render_args(s)})" for s in list(seeds)[:max_seeds]) or "- (none)"
    messages = [{"role": "system", "content": _SYSTEM},
                {"role": "user", "content": _TASK.format(question=question.strip(), params=", ".join(params),
                                                          seeds=shown)}]
    return make_request(messages, version=VERSION, stage=STAGE, **sampling)


def parse(text: str, arity: int) -> str:
    """The precondition's source from an answer (the first code block defining it, else the whole text).

    Raises:
        LLMResponseError: no ``def precondition`` that parses and takes ``arity`` positional parameters (reasons
            ``no_precondition``, ``syntax``, ``arity``, ``too_long``).

    Example:
        >>> parse("def precondition(a, b):\\n    return a < b", 2).splitlines()[0]
        'def precondition(a, b):'
        >>> parse("def precondition(a):\\n    return True", 2)
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.errors.LLMResponseError: the precondition does not take 2 arguments
    """
    blocks = [b for b in _FENCE.findall(text or "") if "def precondition" in b]
    source = (blocks[0] if blocks else (text or "")).strip()
    if "def precondition" not in source:
        raise LLMResponseError("the answer defines no precondition", reason="no_precondition")
    source = source[source.index("def precondition"):]
    if len(source) > _MAX_SOURCE_CHARS:
        raise LLMResponseError("the precondition is too long", reason="too_long")
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        raise LLMResponseError("the precondition does not parse", reason="syntax") from None
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "precondition"]
    if not functions:
        raise LLMResponseError("the answer defines no precondition", reason="no_precondition")
    args = functions[0].args
    if len(args.posonlyargs) + len(args.args) != arity or args.vararg or args.kwonlyargs:
        raise LLMResponseError(f"the precondition does not take {arity} arguments", reason="arity")
    return ast.unparse(tree)
