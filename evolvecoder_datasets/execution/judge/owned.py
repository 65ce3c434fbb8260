"""Which parts of a test are the test's own: names and statements that no program name reaches.

A test may compute its expected side with code the judge's language does not cover (a stdlib helper such as
``heapq``, a nested ``def``, a class, ``bytearray(...)``, a ``while`` loop). Sent to the sandbox as a probe, that
part would be the program's claim, though it reads nothing of the program's. The planner asks this module which
names are the test's own, so such a part runs instead in a fresh sandbox process that executed only the test's own
statements (see ``_Planner.probe`` and ``_Clean``), as the helpers of modules a test imports already do.

A name is the program's when the test reads it without binding it (``f``, ``Solution``), and it taints: whatever
a statement binds from a program-dependent name is program-dependent too, and so is a name handed to a program
call (``f(xs)`` may change ``xs``), or the receiver of a method call whose arguments are the program's
(``xs.sort(key=f)``). Everything else the test binds is its own; its top-level statements that read none of the
program's names, asserts aside, are the source a clean process runs.

Example:
    >>> import ast
    >>> names, stmts = owned_by_test(ast.parse("import heapq\\nxs = [3, 1]\\nr = f(xs)\\nassert r == heapq.nsmallest(1, xs)"))
    >>> sorted(names), [i for i, _ in stmts]
    (['heapq'], [0, 1])
"""

from __future__ import annotations

import ast
import builtins

from .syntax import _free_names

_BUILTINS = frozenset(vars(builtins))


def _bound_by(stmt: ast.stmt) -> set[str]:
    """Every name ``stmt`` binds at the test's top level (its own name for a ``def``/``class``, import aliases,
    assignment, loop, ``with`` and walrus targets), not the names bound inside a function or class body."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).partition(".")[0] for a in stmt.names}
    out: set[str] = set()
    todo: list = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
            continue
        elif isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue  # their targets are their own
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).partition(".")[0] for a in node.names}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        todo.extend(ast.iter_child_nodes(node))
    return out


def _reads(stmt: ast.stmt) -> set[str]:
    """Names ``stmt`` reads that it does not bind itself (a nested helper's name is bound, not read)."""
    inner: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not stmt:
            inner.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and node is not stmt:
            inner |= {(a.asname or a.name).partition(".")[0] for a in node.names}
    return set(_free_names(stmt)) - inner


def _handed(stmt: ast.stmt, dependent: set[str], modules: set[str]) -> set[str]:
    """Names ``stmt`` hands to a call that reaches the program: bare arguments, and the receiver of a method call
    with a program-dependent argument (each may be changed there); a module the test imported is never changed by
    applying its helper (``heapq.nsmallest(1, f(x))``)."""
    out: set[str] = set()
    for node in ast.walk(stmt):
        if not isinstance(node, ast.Call) or not _free_names(node) & dependent:
            continue
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            if isinstance(arg, ast.Starred):
                arg = arg.value
            if isinstance(arg, ast.Name):
                out.add(arg.id)
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            out.add(func.value.id)
    return out - _BUILTINS - modules


def unshadowed_builtins(tree: ast.Module) -> frozenset:
    """The builtins no statement of the test rebinds anywhere (a helper the planner inlines may bind ``str``)."""
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).partition(".")[0] for a in node.names}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return _BUILTINS - bound


def owned_by_test(tree: ast.Module) -> tuple[frozenset, list[tuple[int, str]]]:
    """``(names, statements)``: the names only the test's own code reaches, and the top-level statements (index,
    source) a clean process runs to rebuild them, in the test's order. Never raises on a parsed test."""
    bound: set[str] = set()
    modules: set[str] = set()
    per_stmt = []
    for stmt in tree.body:
        names = _bound_by(stmt)
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            modules |= names
        bound |= names
        per_stmt.append(names)
    read: set[str] = set()
    for stmt in tree.body:
        read |= _reads(stmt)
    dependent = (read - bound) - _BUILTINS  # the program's names
    sources: list[tuple[int, str]] = []
    for i, stmt in enumerate(tree.body):
        reads = _reads(stmt) - _BUILTINS
        dependent |= _handed(stmt, dependent, modules)
        if reads & dependent:
            if not isinstance(stmt, ast.Assert):
                dependent |= per_stmt[i] | reads  # bound from the program's values, or changed by them
            continue
        if per_stmt[i] & dependent:  # rebinds a name the program reached earlier: not the test's own from here on
            continue
        if not isinstance(stmt, ast.Assert):
            sources.append((i, ast.unparse(stmt)))
    return frozenset(bound - dependent), sources
