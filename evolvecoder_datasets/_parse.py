"""``ast.parse`` and ``ast.literal_eval`` that survive a CPython 3.11 race between threads, and the two readings of
a parse every floor shares (:func:`parse_or_none`, :func:`bound_names`).

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

__all__ = ["bound_names", "literal", "parse", "parse_or_none"]

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


def parse_or_none(source: str) -> ast.Module | None:
    """The module ``source`` parses to, or None when it does not parse (a syntax error, a NUL byte).

    Example:
        >>> from evolvecoder_datasets._parse import parse_or_none
        >>> parse_or_none("def (") is None, type(parse_or_none("x = 1")).__name__
        (True, 'Module')
    """
    try:
        return parse(source)
    except (SyntaxError, ValueError):
        return None


def bound_names(tree: ast.AST) -> set[str]:
    """Every name ``tree`` binds anywhere: assignment and deletion targets, functions, classes, arguments, imports
    (their first component) and ``except ... as`` names.

    Example:
        >>> from evolvecoder_datasets._parse import bound_names, parse
        >>> sorted(bound_names(parse("import os.path\\nx = 1\\ndef f(a):\\n    try: pass\\n    except E as e: pass")))
        ['a', 'e', 'f', 'os', 'x']
    """
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound
