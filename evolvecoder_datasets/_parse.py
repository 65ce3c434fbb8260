"""``ast.parse`` and ``ast.literal_eval`` that survive a CPython 3.11 race between threads.

CPython 3.11 (3.11.7 on these machines) keeps the AST converter's recursion counter once per interpreter, not per
thread. A parse that runs while another thread is inside its own parse (the GIL can change hands there, through a
finaliser the allocation triggers) can find the counter moved and raise ``SystemError: AST constructor recursion
depth mismatch``, although its source is fine. The sandbox plans tests in its worker threads while stages parse in
thread pools of their own, so the package parses through these two functions, which run the parse again in that
case (the tree is rebuilt from scratch; nothing of the failed attempt is kept).

Example:
    >>> from evolvecoder_datasets._parse import literal, parse
    >>> type(parse("x = 1")).__name__, literal("[1, 'a']")
    ('Module', [1, 'a'])
"""

from __future__ import annotations

import ast
from typing import Any

__all__ = ["parse", "literal"]

_ATTEMPTS = 5


def _raced(err: SystemError) -> bool:
    return "recursion depth mismatch" in str(err)


def parse(source: str, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """:func:`ast.parse`, run again where another thread's parse made it raise the race's ``SystemError``.

    Example:
        >>> from evolvecoder_datasets._parse import parse
        >>> parse("f(1)", "<test>", "eval").body.func.id
        'f'
    """
    for attempt in range(_ATTEMPTS):
        try:
            return ast.parse(source, filename, mode)
        except SystemError as err:
            if not _raced(err) or attempt == _ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def literal(text: str) -> Any:
    """:func:`ast.literal_eval` of ``text``, with the same retry as :func:`parse`.

    Example:
        >>> from evolvecoder_datasets._parse import literal
        >>> literal("(1.5, None)")
        (1.5, None)
    """
    return ast.literal_eval(parse(text.lstrip(" \t"), mode="eval"))
