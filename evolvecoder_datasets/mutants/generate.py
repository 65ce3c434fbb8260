"""The mutator: one small, plausible bug per mutant of a reference program (AST operators).

Example:
    >>> from evolvecoder_datasets.mutants.generate import generate_mutants
    >>> [m.operator for m in generate_mutants("def f(x):\\n    return x + 1\\n", operators=["arithmetic_swap"])]
    ['arithmetic_swap']
"""

from __future__ import annotations

import ast
import copy
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError, SchemaError

__all__ = ["MUTATOR_VERSION", "OPERATORS", "Mutant", "generate_mutants"]

# What the mutator produces for a given program and seed. Stages that cache mutants or their scores put it in their
# keys. 2: class decorators, bases and keywords are left alone; references too deep to parse are a SchemaError.
MUTATOR_VERSION = "2"

OPERATORS = (
    "comparison_flip",
    "negate_condition",
    "off_by_one",
    "arithmetic_swap",
    "logical_swap",
    "boundary_constant",
    "drop_branch",
    "early_return",
)

# A replacement per comparison: its boundary twin first (the classic off-by-one), then its opposite.
_COMPARE_SWAPS: dict[type, tuple[type, ...]] = {
    ast.Lt: (ast.LtE, ast.GtE),
    ast.LtE: (ast.Lt, ast.Gt),
    ast.Gt: (ast.GtE, ast.LtE),
    ast.GtE: (ast.Gt, ast.Lt),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
}
_ARITH_SWAPS: dict[type, tuple[type, ...]] = {
    ast.Add: (ast.Sub,),
    ast.Sub: (ast.Add,),
    ast.Mult: (ast.FloorDiv,),
    ast.FloorDiv: (ast.Mult, ast.Div),
    ast.Div: (ast.FloorDiv,),
    ast.Mod: (ast.FloorDiv,),
    ast.Pow: (ast.Mult,),
}
_SYMBOLS: dict[type, str] = {
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
    ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in",
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Div: "/", ast.Mod: "%",
    ast.Pow: "**", ast.And: "and", ast.Or: "or",
}  # fmt: skip

# An edit applies itself in place and returns the function that undoes it.
_Edit = Callable[[], Callable[[], None]]


@dataclass(frozen=True)
class Mutant:
    """One mutated program.

    Attributes:
        code (`str`): the whole mutated program (normalised by ``ast.unparse``; comments are not kept).
        operator (`str`): the mutation operator, one of :data:`OPERATORS`.
        lineno (`int`): line of the mutated node in the original source (1-based).
        col_offset (`int`): column of the mutated node in the original source (0-based).
        description (`str`): what changed, e.g. ``"`<` -> `<=`"``.
    """

    code: str
    operator: str
    lineno: int
    col_offset: int
    description: str

    @property
    def location(self) -> str:
        """``"line:col"`` of the mutated node, for reports."""
        return f"{self.lineno}:{self.col_offset}"


@dataclass(frozen=True)
class _Site:
    operator: str
    node: ast.AST
    description: str
    edit: _Edit


def _swap_attr(obj: Any, attr: str, value: Any) -> Callable[[], None]:
    old = getattr(obj, attr)
    setattr(obj, attr, value)
    return lambda: setattr(obj, attr, old)


def _swap_item(seq: list, pos: int, value: Any) -> Callable[[], None]:
    old = seq[pos]
    seq[pos] = value
    return lambda: seq.__setitem__(pos, old)


def _shifted(expr: ast.expr, delta: int) -> ast.expr:
    """``expr + delta`` (or ``- delta``), folding integer constants so ``n - 1`` becomes ``n`` for +1."""
    if isinstance(expr, ast.Constant) and type(expr.value) is int:
        return ast.Constant(expr.value + delta)
    if (
        isinstance(expr, ast.BinOp)
        and isinstance(expr.op, (ast.Add, ast.Sub))
        and isinstance(expr.right, ast.Constant)
        and type(expr.right.value) is int
    ):
        k = expr.right.value if isinstance(expr.op, ast.Add) else -expr.right.value
        k += delta
        if k == 0:
            return expr.left
        return ast.BinOp(expr.left, ast.Add() if k > 0 else ast.Sub(), ast.Constant(abs(k)))
    return ast.BinOp(copy.deepcopy(expr), ast.Add() if delta > 0 else ast.Sub(), ast.Constant(abs(delta)))


def _src(node: ast.AST) -> str:
    return ast.unparse(node)


class _SiteFinder(ast.NodeVisitor):
    """Collects every mutation site of a module, in source order, for the wanted operators."""

    def __init__(self, operators: frozenset[str]) -> None:
        self.ops = operators
        self.sites: list[_Site] = []
        self._docstrings: set[int] = set()
        self._returns: list[ast.expr | None] = []

    def add(self, operator: str, node: ast.AST, description: str, edit: _Edit) -> None:
        if operator in self.ops:
            self.sites.append(_Site(operator, node, description, edit))

    # -- statements ------------------------------------------------------------------------------------------

    def _mark_docstring(self, node: ast.AST) -> None:
        body = getattr(node, "body", None)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            self._docstrings.add(id(body[0].value))

    def visit_Module(self, node: ast.Module) -> None:
        self._mark_docstring(node)
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._mark_docstring(node)
        for stmt in node.body:  # skip decorators, base classes and keywords (`@dataclass(frozen=True)`)
            self.visit(stmt)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._mark_docstring(node)
        # The value a loop should return early: the function's last `return` value (or None).
        last = next((s for s in reversed(node.body) if isinstance(s, ast.Return)), None)
        self._returns.append(last.value if last is not None else None)
        for stmt in node.body:  # skip decorators, annotations and defaults
            self.visit(stmt)
        self._returns.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit(node.body)  # skip default values

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.visit(node.target)  # skip the annotation
        if node.value is not None:
            self.visit(node.value)

    def _negate(self, owner: ast.AST, attr: str, pos: int | None = None) -> None:
        test = getattr(owner, attr) if pos is None else getattr(owner, attr)[pos]
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return  # `logical_swap` already drops that `not`
        negated = ast.UnaryOp(ast.Not(), test)
        description = f"`{_src(test)}` -> `not ({_src(test)})`"
        if pos is None:
            self.add("negate_condition", test, description, lambda: _swap_attr(owner, attr, negated))
        else:
            seq = getattr(owner, attr)
            self.add("negate_condition", test, description, lambda: _swap_item(seq, pos, negated))

    def visit_While(self, node: ast.While) -> None:
        self._negate(node, "test")
        self._loop(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._negate(node, "test")
        self.generic_visit(node)

    def visit_comprehension(self, node: ast.comprehension) -> None:
        for pos in range(len(node.ifs)):
            self._negate(node, "ifs", pos)
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        cond = _src(node.test)
        self._negate(node, "test")
        # Drop the `if` branch: `if c: A else: B` -> `if c: pass else: B`.
        self.add(
            "drop_branch",
            node,
            f"drop the body of `if {cond}`",
            lambda: _swap_attr(node, "body", [ast.Pass()]),
        )
        if node.orelse:
            self.add(
                "drop_branch",
                node.orelse[0],
                f"drop the `else` of `if {cond}`",
                lambda: _swap_attr(node, "orelse", []),
            )
        self.generic_visit(node)

    def _loop(self, node: ast.For | ast.While | ast.AsyncFor) -> None:
        if self._returns and node.body:
            value = self._returns[-1]
            ret = ast.Return(copy.deepcopy(value) if value is not None else None)
            what = _src(ret)
            self.add(
                "early_return",
                node.body[-1],
                f"`{what}` at the end of the first loop iteration",
                lambda: _swap_attr(node, "body", [*node.body, ret]),
            )
        self.generic_visit(node)

    visit_For = visit_AsyncFor = _loop

    # -- expressions -----------------------------------------------------------------------------------------

    def visit_Compare(self, node: ast.Compare) -> None:
        for pos, op in enumerate(node.ops):
            for new in _COMPARE_SWAPS.get(type(op), ()):
                self.add(
                    "comparison_flip",
                    node,
                    f"`{_SYMBOLS[type(op)]}` -> `{_SYMBOLS[new]}`",
                    lambda pos=pos, new=new: _swap_item(node.ops, pos, new()),
                )
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        self._arith(node)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._arith(node, suffix="=")
        self.generic_visit(node)

    def _arith(self, node: ast.BinOp | ast.AugAssign, suffix: str = "") -> None:
        old = type(node.op)
        for new in _ARITH_SWAPS.get(old, ()):
            self.add(
                "arithmetic_swap",
                node,
                f"`{_SYMBOLS[old]}{suffix}` -> `{_SYMBOLS[new]}{suffix}`",
                lambda new=new: _swap_attr(node, "op", new()),
            )

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        new = ast.Or if isinstance(node.op, ast.And) else ast.And
        self.add(
            "logical_swap",
            node,
            f"`{_SYMBOLS[type(node.op)]}` -> `{_SYMBOLS[new]}`",
            lambda: _swap_attr(node, "op", new()),
        )
        self.generic_visit(node)

    def generic_visit(self, node: ast.AST) -> None:
        # Offer `not x` -> `x` wherever a `not` sits in a field of its parent.
        for name, value in ast.iter_fields(node):
            if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not):
                self.add(
                    "logical_swap",
                    value,
                    f"drop `not` in `{_src(value)}`",
                    lambda node=node, name=name, value=value: _swap_attr(node, name, value.operand),
                )
            elif isinstance(value, list):
                for pos, item in enumerate(value):
                    if isinstance(item, ast.UnaryOp) and isinstance(item.op, ast.Not):
                        self.add(
                            "logical_swap",
                            item,
                            f"drop `not` in `{_src(item)}`",
                            lambda value=value, pos=pos, item=item: _swap_item(value, pos, item.operand),
                        )
        super().generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if id(node) in self._docstrings:
            return
        if type(node.value) is bool:
            self.add(
                "boundary_constant",
                node,
                f"`{node.value}` -> `{not node.value}`",
                lambda: _swap_attr(node, "value", not node.value),
            )
        elif type(node.value) is int:
            for delta in (1, -1):
                new = node.value + delta
                self.add(
                    "boundary_constant",
                    node,
                    f"`{node.value}` -> `{new}`",
                    lambda new=new: _swap_attr(node, "value", new),
                )

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id == "range" and 1 <= len(node.args) <= 3:
            # The stop bound, and the start bound when given.
            bounds = [0] if len(node.args) == 1 else [1, 0]
            for pos in bounds:
                arg = node.args[pos]
                for delta in (1, -1):
                    new = _shifted(arg, delta)
                    self.add(
                        "off_by_one",
                        node,
                        f"`range` bound `{_src(arg)}` -> `{_src(new)}`",
                        lambda pos=pos, new=new: _swap_item(node.args, pos, new),
                    )
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        index = node.slice
        if isinstance(index, ast.Slice):
            for name in ("lower", "upper"):
                bound = getattr(index, name)
                if bound is None:
                    continue
                for delta in (1, -1):
                    new = _shifted(bound, delta)
                    self.add(
                        "off_by_one",
                        node,
                        f"slice bound `{_src(bound)}` -> `{_src(new)}`",
                        lambda name=name, new=new: _swap_attr(index, name, new),
                    )
        elif not isinstance(index, (ast.Constant, ast.Tuple)):
            for delta in (1, -1):
                new = _shifted(index, delta)
                self.add(
                    "off_by_one",
                    node,
                    f"index `{_src(index)}` -> `{_src(new)}`",
                    lambda new=new: _swap_attr(node, "slice", new),
                )
        self.generic_visit(node)


def _parse(source: str) -> tuple[ast.Module, str]:
    """The tree of ``source`` and its ``ast.unparse`` form; a source Python cannot take is a SchemaError."""
    try:
        tree = ast.parse(source)
        return tree, ast.unparse(tree)
    except SyntaxError as err:
        raise SchemaError(f"reference solution does not parse: {err.msg} (line {err.lineno})") from err
    except (ValueError, RecursionError, MemoryError) as err:
        # NUL bytes (ValueError before 3.12); expressions nested too deeply for the parser (MemoryError) or for
        # the recursive AST builder and unparser (RecursionError), e.g. a sum of a few thousand terms.
        raise SchemaError(f"reference solution cannot be mutated: {type(err).__name__}: {err}") from err


def generate_mutants(
    source: str,
    *,
    max_mutants: int | None = None,
    seed: int = 0,
    operators: Iterable[str] = OPERATORS,
) -> list[Mutant]:
    """Every single-edit mutant of a Python program, deduplicated.

    Mutants are produced in source order, each by one edit of one AST node, then kept only when they compile
    and their ``ast.unparse`` form differs from the original's and from every earlier mutant's. Docstrings,
    decorators, annotations and default values are left alone.

    Operators:
        ``comparison_flip`` (``<`` -> ``<=`` / ``>=``, ``==`` <-> ``!=``, ``in`` <-> ``not in``...),
        ``negate_condition`` (``if c`` -> ``if not (c)``, also in ``while``, conditional expressions and
        comprehension filters),
        ``off_by_one`` (``range`` bounds, indices and slice bounds +-1), ``arithmetic_swap`` (``+`` <-> ``-``,
        ``*`` <-> ``//``, ``/`` <-> ``//``, ``%`` -> ``//``, ``**`` -> ``*``, also in ``+=``...),
        ``logical_swap`` (``and`` <-> ``or``, drop a ``not``), ``boundary_constant`` (integers +-1, booleans
        flipped), ``drop_branch`` (empty an ``if`` body, drop an ``else``), ``early_return`` (the function's
        final ``return`` also at the end of a loop body, so it returns after one iteration).

    Args:
        source (`str`): the program (a whole module: functions, imports, helpers).
        max_mutants (`int`, *optional*): keep at most this many, a uniform sample (seeded) in source order;
            `None` keeps all.
        seed (`int`, *optional*, defaults to `0`): seed of that sample.
        operators (`Iterable[str]`, *optional*): the operators to apply, any of :data:`OPERATORS`.

    Returns:
        `list[Mutant]`: distinct mutants, in source order.

    Raises:
        SchemaError: ``source`` does not parse.
        ConfigError: an unknown operator, or a negative ``max_mutants``.

    Example:
        >>> from evolvecoder_datasets.mutants import generate_mutants
        >>> src = "def total(xs):\\n    s = 0\\n    for i in range(len(xs)):\\n        s += xs[i]\\n    return s\\n"
        >>> mutants = generate_mutants(src)
        >>> len(mutants), sorted({m.operator for m in mutants})
        (8, ['arithmetic_swap', 'boundary_constant', 'early_return', 'off_by_one'])
        >>> print(generate_mutants(src, operators=["early_return"])[0].code)
        def total(xs):
            s = 0
            for i in range(len(xs)):
                s += xs[i]
                return s
            return s
    """
    wanted = frozenset(operators)
    unknown = wanted - set(OPERATORS)
    if unknown:
        raise ConfigError(f"unknown mutation operators {sorted(unknown)}; choose from {list(OPERATORS)}")
    if max_mutants is not None and (isinstance(max_mutants, bool) or max_mutants < 0):
        raise ConfigError(f"max_mutants must be a non-negative integer or None, got {max_mutants!r}")

    tree, original = _parse(source)
    finder = _SiteFinder(wanted)
    try:
        finder.visit(tree)
    except RecursionError as err:
        raise SchemaError(f"reference solution cannot be mutated: {type(err).__name__}: {err}") from err

    seen = {original}
    mutants: list[Mutant] = []
    for site in finder.sites:
        undo = site.edit()
        try:
            code = ast.unparse(tree)
        except RecursionError:  # the edit nested the tree one level past what the unparser can take
            continue
        finally:
            undo()
        if code in seen:
            continue
        seen.add(code)
        try:
            compile(code, "<mutant>", "exec")
        except (SyntaxError, ValueError):
            continue
        mutants.append(
            Mutant(
                code=code,
                operator=site.operator,
                lineno=getattr(site.node, "lineno", 0),
                col_offset=getattr(site.node, "col_offset", 0),
                description=site.description,
            )
        )
    if max_mutants is not None and len(mutants) > max_mutants:
        keep = sorted(random.Random(seed).sample(range(len(mutants)), max_mutants))
        mutants = [mutants[i] for i in keep]
    return mutants
