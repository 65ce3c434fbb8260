"""What tests and programs name: called and defined names, independent tests, a normal form for duplicates.

Example:
    >>> from evolvecoder_datasets.code_names import called_names, reference_for
    >>> sorted(called_names("assert fib(3) == 2"))
    ['fib']
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Sequence

from ._parse import bound_names, parse_or_none

__all__ = [
    "called_names",
    "defined_names",
    "independent_tests",
    "normalise_test",
    "pytest_raises_item",
    "reference_for",
]

_BUILTIN_NAMES = frozenset(dir(builtins))


def pytest_raises_item(stmt: ast.With) -> tuple[ast.Call, ast.expr | None] | None:
    """The ``pytest.raises(...)`` call of a one-item ``with`` statement and its ``as`` target; None for any other
    ``with`` (the judge's rewrite and code_instruct's probe read the same shape).

    Example:
        >>> call, var = pytest_raises_item(ast.parse("with pytest.raises(KeyError) as e: d[1]").body[0])
        >>> ast.unparse(call), ast.unparse(var)
        ('pytest.raises(KeyError)', 'e')
    """
    if len(stmt.items) != 1:
        return None
    call, var = stmt.items[0].context_expr, stmt.items[0].optional_vars
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "raises"
            and isinstance(call.func.value, ast.Name) and call.func.value.id == "pytest"):
        return None
    return call, var


def called_names(test: str) -> set[str]:
    """Names called as functions (or classes) in ``test``, builtins excluded.

    Example:
        >>> sorted(called_names("assert fib(3) == len([1, 2]) and Solver().run(1)"))
        ['Solver', 'fib']
    """
    tree = parse_or_none(test)
    if tree is None:
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id not in _BUILTIN_NAMES:
            names.add(node.func.id)
    return names


def defined_names(program: str) -> set[str]:
    """Top-level function, class and variable names a program defines (empty when it does not parse).

    Example:
        >>> sorted(defined_names("import math\\nK = 3\\ndef f(x):\\n    return x\\nclass A: pass"))
        ['A', 'K', 'f', 'math']
    """
    tree = parse_or_none(program)
    if tree is None:
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def _bound_and_free(test: str) -> tuple[set[str], set[str]]:
    tree = parse_or_none(test)
    if tree is None:
        return set(), set()
    bound = bound_names(tree)
    loaded = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return bound, loaded - bound - _BUILTIN_NAMES


def independent_tests(tests: Sequence[str]) -> tuple[list[str], int]:
    """Drop tests that read a name only another test binds (they would fail alone, or pass only in order).

    Each test runs in a fresh copy of the program, so a test that uses ``x`` defined by an earlier ``x = ...; assert``
    item depends on it. Names the tests call as functions belong to the program and are not counted.

    Args:
        tests (`Sequence[str]`): parsed, syntactically valid tests.

    Returns:
        `tuple[list[str], int]`: the independent tests (in order) and how many were dropped.

    Example:
        >>> independent_tests(["xs = [3, 1]\\nassert srt(xs) == [1, 3]", "assert srt(xs) == [1, 3]", "assert srt([]) == []"])
        (['xs = [3, 1]\\nassert srt(xs) == [1, 3]', 'assert srt([]) == []'], 1)
    """
    info = [_bound_and_free(t) for t in tests]
    kept = []
    for k, (test, (_, free)) in enumerate(zip(tests, info)):
        bound_elsewhere = set().union(*(b for j, (b, _) in enumerate(info) if j != k)) if len(info) > 1 else set()
        if free & bound_elsewhere:
            continue
        kept.append(test)
    return kept, len(tests) - len(kept)


def normalise_test(test: str) -> str:
    """Whitespace-insensitive form of a test, for duplicate detection across rounds.

    Example:
        >>> normalise_test("assert  f( 1 )==2") == normalise_test("assert f(1) == 2")
        True
    """
    tree = parse_or_none(test)
    if tree is not None:
        return ast.dump(tree)
    return " ".join(test.split())


def reference_for(references: Sequence[str], tests: Sequence[str]) -> str | None:
    """The first reference program that defines a function (or class) the tests call.

    Example:
        >>> reference_for(["print(input())", "def sq(x):\\n    return x * x"], ["assert sq(3) == 9"])
        'def sq(x):\\n    return x * x'
    """
    wanted = set().union(*(called_names(t) for t in tests)) if tests else set()
    for program in references:
        if program and wanted & defined_names(program):
            return program
    return None
