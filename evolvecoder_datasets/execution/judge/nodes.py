"""What a plan is made of: :class:`TestPlan`, and the judge-only AST nodes the planner writes into it."""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field

from .language import _PROBE

_UNKNOWN = object()
_MAX_UNROLL = 1_000  # items of one loop or comprehension the planner writes out
_PLAN_BUDGET = 200_000


class _Clean(ast.expr):
    """A call of a module the test imported (``re``, ``numpy`` ...) on values that need the program: the judge
    evaluates the arguments, then the call runs in a fresh sandbox process that imported only that module."""

    _fields = ("imports", "func", "args", "keywords")


class _Unrolled(ast.expr):
    """A comprehension written out item by item: ``items`` holds ``(conditions, [element])`` per item."""

    _fields = ("kind", "items")


class _Passes(ast.stmt):
    """A ``for`` loop written out pass by pass whose ``break``/``continue`` the judge decides at run time.

    ``passes`` holds, per item, the pass's ``(position, statement)`` pairs (a position is the number of sandbox
    steps before it, as in :attr:`TestPlan.body`); ``orelse`` runs when no pass broke out.
    """

    _fields = ("passes", "orelse")


class _Search(ast.expr):
    """``pytest.raises(..., match=pattern)``: ``re.search(pattern, text)`` in a process that can afford to hang
    (a plain-text pattern is a substring test in the judge)."""

    _fields = ("pattern", "text")


class _ExcInfo(ast.expr):
    """What ``with pytest.raises(E) as info`` binds: the raised exception as ``info.value`` and ``info.type``."""

    _fields = ("exc",)


def _literal_ast(value, depth: int = 0):
    """An AST that evaluates to ``value`` (plain data only), or None."""
    if depth > 50:
        return None
    t = type(value)
    if t in (int, bool, str, bytes) or value is None:
        return ast.Constant(value)
    if t in (float, complex):
        return None if value != value else ast.Constant(value)
    if t in (list, tuple, set):
        elts = [_literal_ast(v, depth + 1) for v in value]
        if any(e is None for e in elts) or (t is set and not elts):
            return None
        return (ast.List if t is list else ast.Tuple if t is tuple else ast.Set)(elts=elts, ctx=ast.Load())
    if t is dict:
        keys = [_literal_ast(k, depth + 1) for k in value]
        values = [_literal_ast(v, depth + 1) for v in value.values()]
        if any(e is None for e in keys + values):
            return None
        return ast.Dict(keys=keys, values=values)
    return None


class _Inside(Exception):
    """The test cannot be split; it runs whole inside the sandbox (flagged)."""


@dataclass
class TestPlan:
    """How one test runs: sandbox ``steps`` (``('x', statement)`` or ``('p', expression)``) and the judge's part.

    ``outside`` is False for a test that runs whole in the sandbox (``source`` is then sent as it is) and for a
    test that does not parse (``invalid`` holds the reason).
    """

    source: str
    outside: bool
    steps: list = field(default_factory=list)
    body: list = field(default_factory=list)  # (steps before it, ast.stmt) evaluated by the judge
    invalid: str | None = None
    reason: str = ""

    @functools.cached_property
    def fast(self):
        """``(equal_means_pass, expected)`` for the commonest shape, ``assert <probe> == <literal>`` (or ``!=``)."""
        if len(self.body) != 1 or len(self.steps) != 1 or self.steps[0][0] != "p":
            return None
        stmt = self.body[0][1]
        if type(stmt) is not ast.Assert or stmt.msg is not None or type(stmt.test) is not ast.Compare:
            return None
        test = stmt.test
        if len(test.ops) != 1 or type(test.ops[0]) not in (ast.Eq, ast.NotEq):
            return None
        left, right = test.left, test.comparators[0]
        if type(left) is not ast.Name or not left.id.startswith(_PROBE):
            return None
        try:
            expected = ast.literal_eval(right)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
        return type(test.ops[0]) is ast.Eq, expected

    @property
    def wire(self) -> str:
        """What the fork server receives for this test (never the judge's part)."""
        if self.invalid is not None:
            return "E" + self.invalid
        if not self.outside:
            return "T" + self.source
        return "P" + "\x1f".join(kind + src for kind, src in self.steps)

