"""Right programs that are not the reference: semantics-preserving rewrites, for the true-positive rate of a suite.

Tests valued by the reference pass the reference by construction, and an oracle-right mutant is rare, so a
test suite's true-positive rate (right programs accepted) measured over mutants alone is trivially 1. A rewrite
has the reference's behaviour in another shape, as a right model sample would: an over-specified test (one that
pins an order the problem leaves free, a float compared exactly) or a time limit too tight for a slower program
rejects it. Each rewrite applies one transformation everywhere it can:

- ``rename``: local variables and parameters get new names (parameters only where no call passes them by keyword);
- ``for_to_while``: every ``for`` loop without an ``else`` becomes a ``while True`` loop over ``iter()``/``next()``;
- ``comprehension_to_loop``: every list comprehension assigned to a name or returned becomes an explicit loop that
  appends (its loop variables renamed, so nothing leaks into the function's scope);
- ``swap_branches``: ``if c: A else: B`` becomes ``if not c: B else: A``;
- ``mirror_compare``: ``a < b`` becomes ``b > a`` (where both sides are names, constants, attributes or subscripts:
  no side effect changes order);
- ``slow``: each top-level function runs its body three extra times on deep copies of its arguments before the call
  that counts (4x the CPU; not for recursive functions): a correct but slower program.

A rewrite that does not apply, or changes nothing, is not returned. Rewriting is not proof: the caller checks each
rewrite against an oracle before counting it as right (:mod:`evolvecoder_datasets.search.oracle`).

Example:
    >>> from evolvecoder_datasets.mutants.rewrites import rewrite_program
    >>> ref = "def total(xs):\\n    s = 0\\n    for x in xs:\\n        s += x\\n    return s\\n"
    >>> [r.kind for r in rewrite_program(ref)]
    ['rename', 'for_to_while', 'slow']
    >>> ns = {}
    >>> exec(rewrite_program(ref, kinds=["for_to_while"])[0].code, ns)
    >>> ns["total"]([1, 2, 3])
    6
"""

from __future__ import annotations

import ast
import builtins
import copy
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["REWRITER_VERSION", "REWRITES", "REWRITE_MODEL", "Rewrite", "rewrite_program"]

#: Bump when a rewrite changes what it produces.
REWRITER_VERSION = "1"
#: The model name rewrites carry in a pool.
REWRITE_MODEL = "rewrite"
REWRITES = ("rename", "for_to_while", "comprehension_to_loop", "swap_branches", "mirror_compare", "slow")

_BUILTINS = frozenset(dir(builtins))
_MIRROR = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE, ast.Eq: ast.Eq, ast.NotEq: ast.NotEq}
_SLOW_REPEATS = 3


@dataclass(frozen=True)
class Rewrite:
    """One rewritten program.

    Attributes:
        kind (`str`): the transformation, one of :data:`REWRITES`.
        code (`str`): the whole program (``ast.unparse``; comments are not kept).
    """

    kind: str
    code: str


def _names_bound(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names a function binds locally (assignments, loop and comprehension targets, ``with``/``except`` names)."""
    bound: set[str] = set()
    declared: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound - declared


def _rename(tree: ast.Module) -> bool:
    keywords = {k.arg for node in ast.walk(tree) if isinstance(node, ast.Call) for k in node.keywords if k.arg}
    defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    top = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    changed = False
    for fn in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)) and n is not fn
               for n in ast.walk(fn)):
            continue  # nested scopes: a closure could read a renamed name
        params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
        names = (_names_bound(fn) | (params - keywords)) - defined - top - _BUILTINS - {"self", "cls"}
        names -= {a.arg for a in fn.args.kwonlyargs}
        if fn.args.vararg:
            names.discard(fn.args.vararg.arg)
        if fn.args.kwarg:
            names.discard(fn.args.kwarg.arg)
        if not names:
            continue
        mapping = {name: f"v{k}_{name}" for k, name in enumerate(sorted(names))}
        for node in ast.walk(fn):
            if isinstance(node, ast.Name) and node.id in mapping:
                node.id = mapping[node.id]
                changed = True
            elif isinstance(node, ast.arg) and node.arg in mapping:
                node.arg = mapping[node.arg]
                changed = True
    return changed


class _ForToWhile(ast.NodeTransformer):
    def __init__(self) -> None:
        self.count = 0

    def visit_For(self, node: ast.For) -> ast.AST | list[ast.stmt]:
        self.generic_visit(node)
        if node.orelse:
            return node
        self.count += 1
        it = f"_rw_it{self.count}"
        step = ast.parse(
            f"try:\n    _rw_target = next({it})\nexcept StopIteration:\n    break").body[0]
        assert isinstance(step, ast.Try)
        assign = step.body[0]
        assert isinstance(assign, ast.Assign)
        assign.targets = [node.target]
        init = ast.Assign(targets=[ast.Name(it, ast.Store())],
                          value=ast.Call(ast.Name("iter", ast.Load()), [node.iter], []))
        loop = ast.While(test=ast.Constant(True), body=[step, *node.body], orelse=[])
        return [init, loop]


def _for_to_while(tree: ast.Module) -> bool:
    if any(isinstance(n, ast.Name) and n.id in ("iter", "next", "StopIteration") for n in ast.walk(tree)
           if isinstance(getattr(n, "ctx", None), ast.Store)):
        return False
    walker = _ForToWhile()
    walker.visit(tree)
    return walker.count > 0


def _comprehension_loop(comp: ast.ListComp, target: str, counter: list[int]) -> list[ast.stmt] | None:
    if any(isinstance(n, (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)) for n in ast.walk(comp)):
        return None
    if any(g.is_async for g in comp.generators):
        return None
    mapping: dict[str, str] = {}
    for gen in comp.generators:
        for node in ast.walk(gen.target):
            if isinstance(node, ast.Name):
                counter[0] += 1
                mapping[node.id] = f"_rw_c{counter[0]}_{node.id}"
    comp = copy.deepcopy(comp)
    for node in ast.walk(comp):
        if isinstance(node, ast.Name) and node.id in mapping:
            node.id = mapping[node.id]
    body: ast.stmt = ast.Expr(ast.Call(ast.Attribute(ast.Name(target, ast.Load()), "append", ast.Load()),
                                       [comp.elt], []))
    for gen in reversed(comp.generators):
        for cond in reversed(gen.ifs):
            body = ast.If(test=cond, body=[body], orelse=[])
        body = ast.For(target=gen.target, iter=gen.iter, body=[body], orelse=[])
    return [ast.Assign(targets=[ast.Name(target, ast.Store())], value=ast.List([], ast.Load())), body]


def _comprehension_to_loop(tree: ast.Module) -> bool:
    counter = [0]
    changed = False
    for parent in ast.walk(tree):
        if not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.For, ast.While, ast.If, ast.With,
                                   ast.Try)):
            continue
        for attr in ("body", "orelse", "finalbody"):
            stmts = getattr(parent, attr, None)
            if not isinstance(stmts, list):
                continue
            out: list[ast.stmt] = []
            for stmt in stmts:
                new = None
                if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                        and isinstance(stmt.value, ast.ListComp)):
                    name = stmt.targets[0].id
                    used = any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(stmt.value))
                    new = None if used else _comprehension_loop(stmt.value, name, counter)
                elif isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.ListComp):
                    counter[0] += 1
                    temp = f"_rw_result{counter[0]}"
                    loop = _comprehension_loop(stmt.value, temp, counter)
                    new = None if loop is None else [*loop, ast.Return(ast.Name(temp, ast.Load()))]
                if new is None:
                    out.append(stmt)
                else:
                    out.extend(new)
                    changed = True
            setattr(parent, attr, out)
    return changed


class _SwapBranches(ast.NodeTransformer):
    def __init__(self) -> None:
        self.count = 0

    def visit_If(self, node: ast.If) -> ast.If:
        self.generic_visit(node)
        if node.orelse and not (len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If)):
            self.count += 1
            return ast.If(test=ast.UnaryOp(ast.Not(), node.test), body=node.orelse, orelse=node.body)
        return node


def _swap_branches(tree: ast.Module) -> bool:
    walker = _SwapBranches()
    walker.visit(tree)
    return walker.count > 0


_PLAIN = (ast.Name, ast.Constant, ast.Attribute, ast.Subscript, ast.Load, ast.Slice, ast.UnaryOp, ast.USub,
          ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.Mod, ast.FloorDiv)


def _plain(node: ast.expr) -> bool:
    return all(isinstance(n, _PLAIN) for n in ast.walk(node))


def _mirror_compare(tree: ast.Module) -> bool:
    changed = False
    for node in ast.walk(tree):
        if (isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _MIRROR
                and _plain(node.left) and _plain(node.comparators[0])):
            node.left, node.comparators = node.comparators[0], [node.left]
            node.ops = [_MIRROR[type(node.ops[0])]()]
            changed = True
    return changed


def _slow(tree: ast.Module) -> bool:
    """Wrap the last top-level function (the entry point of a HumanEval-style program; helpers before it are
    left alone, so the cost is 4x, not 4x per level of calls)."""
    functions = [s for s in tree.body if isinstance(s, ast.FunctionDef)]
    if not functions:
        return False
    stmt = functions[-1]
    if stmt.decorator_list or any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(stmt)):
        return False
    if any(isinstance(n, ast.Name) and n.id == stmt.name for s in tree.body for n in ast.walk(s)):
        return False  # recursive, or called by a helper: the wrapper would repeat every level
    out: list[ast.stmt] = []
    changed = False
    for s in tree.body:
        out.append(s)
        if s is not stmt:
            continue
        name = stmt.name
        stmt.name = f"_rw_slow_{name}"
        wrapper = ast.parse(
            f"def {name}(*args, **kwargs):\n"
            f"    import copy as _rw_copy\n"
            f"    for _ in range({_SLOW_REPEATS}):\n"
            f"        {stmt.name}(*_rw_copy.deepcopy(args), **_rw_copy.deepcopy(kwargs))\n"
            f"    return {stmt.name}(*args, **kwargs)\n").body[0]
        out.append(wrapper)
        changed = True
    tree.body = out
    return changed


_TRANSFORMS = {
    "rename": _rename,
    "for_to_while": _for_to_while,
    "comprehension_to_loop": _comprehension_to_loop,
    "swap_branches": _swap_branches,
    "mirror_compare": _mirror_compare,
    "slow": _slow,
}


def rewrite_program(source: str, *, kinds: Iterable[str] = REWRITES) -> list[Rewrite]:
    """The semantics-preserving rewrites of ``source`` (one per kind that applies and changes the program).

    Args:
        source (`str`): a whole program (the reference).
        kinds (`Iterable[str]`, defaults to :data:`REWRITES`): the transformations to try, in order.

    Returns:
        `list[Rewrite]`: one per kind that applied, each different from the reference and from the others
        (compared after ``ast.unparse``). A program that does not parse has none.

    Raises:
        ValueError: an unknown kind.

    Example:
        >>> from evolvecoder_datasets.mutants.rewrites import rewrite_program
        >>> code = rewrite_program("def pos(x):\\n    if x > 0:\\n        return 1\\n    else:\\n        return 0\\n",
        ...                        kinds=["swap_branches"])[0].code
        >>> print(code.strip())
        def pos(x):
            if not x > 0:
                return 0
            else:
                return 1
    """
    kinds = list(kinds)
    unknown = [k for k in kinds if k not in _TRANSFORMS]
    if unknown:
        raise ValueError(f"unknown rewrite {unknown[0]!r}; choose from {REWRITES}")
    try:
        tree = ast.parse(source)
        original = ast.unparse(tree)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    seen = {original}
    out = []
    for kind in kinds:
        copy_ = copy.deepcopy(tree)
        try:
            if not _TRANSFORMS[kind](copy_):
                continue
            code = ast.unparse(ast.fix_missing_locations(copy_))
            compile(code, "<rewrite>", "exec")
        except (SyntaxError, ValueError, TypeError, AttributeError, RecursionError):
            continue
        if code not in seen:
            seen.add(code)
            out.append(Rewrite(kind, code + "\n"))
    return out
