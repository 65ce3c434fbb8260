"""Turn a ``code_eval`` reference (one string of test code) into independent tests for the sandbox.

HF ``code_eval`` runs ``candidate + "\\n" + reference`` as one script, so a reference is free-form Python. Most are
either a run of top-level ``assert`` lines or, once stored in a string column, the ``repr`` of a list of asserts;
both are split here so each assert runs (and is reported) on its own. Anything else, such as HumanEval's
``def check(candidate): ...`` followed by ``check(fn)``, stays one test and passes only when it runs through.

Example:
    >>> from evolvecoder_datasets.evaluate_metrics.references import split_reference
    >>> split_reference("assert f(1) == 2\\nassert f(2) == 3")
    ['assert f(1) == 2', 'assert f(2) == 3']
"""

from __future__ import annotations

import ast

__all__ = ["split_reference"]


def _string_list(tree: ast.Module) -> list[str] | None:
    """The strings of a reference that is only a list or tuple literal of strings, else ``None``."""
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return None
    node = tree.body[0].value
    if not isinstance(node, (ast.List, ast.Tuple)):
        return None
    try:
        items = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if not all(isinstance(item, str) for item in items):
        return None
    return list(items)


def split_reference(reference: str) -> list[str]:
    """Split one reference into the tests the sandbox runs independently.

    - a list-like string (``"['assert f(1) == 2', 'assert f(2) == 3']"``): one test per element, each element
      split in turn;
    - a block whose top-level statements are all ``assert``: one test per assert (its exact source, so
      multi-line asserts and ``assert a; assert b`` work), unless one binds a name with ``:=`` that the next
      ones may read: then the block stays one test;
    - anything else (set-up code, a ``check`` function and its call, code that does not parse): the whole
      block as one test, as ``code_eval`` would run it;
    - an empty or blank reference: no tests.

    Args:
        reference (`str`): the test code of one problem.

    Returns:
        `list[str]`: the tests, in their order in ``reference``.

    Example:
        >>> from evolvecoder_datasets.evaluate_metrics.references import split_reference
        >>> split_reference("['assert f(1) == 2', 'assert f(2) == 3']")
        ['assert f(1) == 2', 'assert f(2) == 3']
        >>> split_reference("def check(c):\\n    assert c(1) == 2\\n\\ncheck(f)")
        ['def check(c):\\n    assert c(1) == 2\\n\\ncheck(f)']
        >>> split_reference("  ")
        []
    """
    if not reference.strip():
        return []
    try:
        tree = ast.parse(reference)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return [reference]  # the sandbox reports it as a test that does not parse
    items = _string_list(tree)
    if items is not None:
        return [test for item in items for test in split_reference(item)]
    if all(isinstance(node, ast.Assert) for node in tree.body) and not _binds_names(tree):
        return [ast.get_source_segment(reference, node) or ast.unparse(node) for node in tree.body]
    return [reference]


def _binds_names(tree: ast.Module) -> bool:
    """Whether an assert binds a module name (``assert (r := f(1)) == 2``) that a later one may read."""
    return any(isinstance(node, ast.NamedExpr) for node in ast.walk(tree))
