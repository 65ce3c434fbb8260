"""The judge: decides every verdict in the caller's process, which never runs program code.

A test is model-written Python, and the program under test is hostile until proven otherwise. So a test is split
before anything runs (:func:`plan_test`):

* **probes** — the maximal subexpressions that need the program (``f(x)``, ``Solution().two_sum(nums, 9)``, a
  name the program or the test's set-up code bound) plus the set-up statements that feed them. Only these go to the
  sandbox. They hold the *inputs* of the test, never its expected side.
* **the judge's part** — the assert itself, the expected values, the comparisons, tolerances, ``sorted``/``set``/
  ``abs``/``math.isclose`` and any helper function the test defines from such pieces. It runs here, in a small
  interpreter of an allowlisted expression language over the values the probes send back (decoded by
  :mod:`._wire`, strict and bounded: no pickle, nothing callable).

A test that cannot be split that way (a loop whose body calls the program, ``pytest.raises``, a regular expression)
is *inside*: it runs whole in the sandbox with the older in-process hardening, and its report says so
(:attr:`ExecutionReport.judged`). :func:`outside_share` counts how many tests of a suite are judged outside.

Example:
    >>> plan = plan_test("assert sorted(f([3, 1])) == [1, 3]")
    >>> plan.outside, plan.steps
    (True, [('p', 'f([3, 1])')])
    >>> judge(plan, encode_entries([("v", [3, 1])]))
    ('pass', '')
    >>> judge(plan, encode_entries([("v", [3, 2])]))
    ('fail', 'AssertionError')
"""

from __future__ import annotations

import ast
import builtins
import copy
import collections
import decimal
import fractions
import functools
import json
import math
import statistics
import string
from collections.abc import Iterable
from dataclasses import dataclass, field

from ._wire import CycleRef, ForeignObject, ProgramObject, WireError, decode_at, encode

__all__ = ["TestPlan", "plan_test", "judge", "encode_entries", "outside_share", "JUDGED_OUTSIDE", "JUDGED_INSIDE"]

JUDGED_OUTSIDE, JUDGED_INSIDE = "outside", "inside"
MAX_MESSAGE = 300
_STEP_BUDGET = 2_000_000  # interpreter steps per test: a model-written test that loops for ever is an error
_MAX_ITEMS = 10_000_000  # largest sequence the judge builds (repetition, range materialisation, padding)
_MAX_BITS = 1 << 22  # largest int the judge computes with ** or << (4 Mbit)
_PROBE = "\x00probe"  # ast.Name ids that can never come from source code

# ---------------------------------------------------------------------------------------------------------------
# What the judge's language knows.
# ---------------------------------------------------------------------------------------------------------------

_PURE_BUILTINS = (
    "abs", "all", "any", "bool", "chr", "complex", "dict", "divmod", "enumerate", "filter", "float", "frozenset",
    "int", "isinstance", "len", "list", "map", "max", "min", "ord", "pow", "range", "repr", "reversed", "round",
    "set", "sorted", "str", "sum", "tuple", "type", "zip", "bytes", "hex", "oct", "bin", "ascii", "format",
    "hash", "iter", "next", "slice", "callable",
)  # fmt: skip
_CONSTANTS = {"True": True, "False": False, "None": None, "Ellipsis": Ellipsis, "NotImplemented": NotImplemented}
_EXCEPTIONS = tuple(n for n, o in vars(builtins).items() if isinstance(o, type) and issubclass(o, BaseException))
_MODULES = {
    "math": {k: getattr(math, k) for k in dir(math) if not k.startswith("_")},
    "cmath": None,  # filled below
    "collections": {"Counter": collections.Counter, "OrderedDict": collections.OrderedDict,
                    "deque": collections.deque, "defaultdict": collections.defaultdict},
    "fractions": {"Fraction": fractions.Fraction},
    "decimal": {"Decimal": decimal.Decimal},
    "string": {k: getattr(string, k) for k in ("ascii_letters", "ascii_lowercase", "ascii_uppercase", "digits",
                                                "hexdigits", "octdigits", "punctuation", "whitespace", "printable")},
    "functools": {"reduce": functools.reduce, "cmp_to_key": functools.cmp_to_key},
    "statistics": {k: getattr(statistics, k) for k in ("mean", "fmean", "median", "median_low", "median_high",
                                                        "median_grouped", "mode", "multimode", "stdev", "pstdev",
                                                        "variance", "pvariance", "geometric_mean", "harmonic_mean")},
    "json": {"loads": json.loads, "dumps": json.dumps},
}  # fmt: skip
import cmath  # noqa: E402

_MODULES["cmath"] = {k: getattr(cmath, k) for k in dir(cmath) if not k.startswith("_")}

_METHODS: dict[type, frozenset] = {
    str: frozenset("""capitalize casefold center count encode endswith expandtabs find format index isalnum isalpha
        isascii isdecimal isdigit isidentifier islower isnumeric isprintable isspace istitle isupper join ljust lower
        lstrip partition removeprefix removesuffix replace rfind rindex rjust rpartition rsplit rstrip split
        splitlines startswith strip swapcase title upper zfill""".split()),
    bytes: frozenset("count decode endswith find hex index isalnum isalpha isdigit join lower split startswith strip "
                     "upper replace".split()),
    list: frozenset("append clear copy count extend index insert pop remove reverse sort".split()),
    tuple: frozenset("count index".split()),
    dict: frozenset("clear copy get items keys pop popitem setdefault update values".split()),
    set: frozenset("add clear copy difference difference_update discard intersection intersection_update "
                   "isdisjoint issubset issuperset pop remove symmetric_difference union update".split()),
    frozenset: frozenset("copy difference intersection isdisjoint issubset issuperset symmetric_difference "
                         "union".split()),
    int: frozenset("bit_length bit_count as_integer_ratio conjugate".split()),
    float: frozenset("is_integer as_integer_ratio hex conjugate".split()),
    complex: frozenset(["conjugate"]),
    collections.deque: frozenset("append appendleft count index pop popleft copy".split()),
    collections.Counter: frozenset("most_common elements total items keys values get copy".split()),
}  # fmt: skip
_ATTRIBUTES = {complex: {"real", "imag"}, int: {"real", "imag", "numerator", "denominator"},
               float: {"real", "imag"}, fractions.Fraction: {"numerator", "denominator"},
               range: {"start", "stop", "step"}}  # fmt: skip
_METHOD_NAMES = frozenset().union(*_METHODS.values())
for _t in (collections.OrderedDict, collections.defaultdict):
    _METHODS[_t] = _METHODS[dict]
_METHODS[bool] = _METHODS[int]
_METHODS[fractions.Fraction] = frozenset(["limit_denominator", "as_integer_ratio"])
_METHODS[decimal.Decimal] = frozenset(["quantize", "normalize", "to_integral_value", "is_nan"])

# The node classes of LeetCode-style problems, as the judge builds them. A test's expected side written with them
# (``== ListNode(2, ListNode(1))``) is built here, with their standard fields, not by the program's own class, which
# could drop its arguments and make every list look alike; the program's answer is compared with it structurally.
_NODE_CLASSES = {"ListNode": (("val", 0), ("next", None)),
                 "TreeNode": (("val", 0), ("left", None), ("right", None))}  # fmt: skip


def _node_class(name: str, fields: tuple):
    def build(*args, **kwargs):
        if len(args) > len(fields) or set(kwargs) - {f for f, _ in fields}:
            raise TypeError(f"{name}() takes at most {len(fields)} arguments")
        values = dict(fields)
        values.update(zip((f for f, _ in fields), args))
        values.update(kwargs)
        return ProgramObject(name, tuple(values.items()))

    build.__name__ = name
    return build


_JUDGE_NAMES = frozenset(_PURE_BUILTINS) | frozenset(_CONSTANTS) | frozenset(_EXCEPTIONS) | {"print"} | frozenset(
    _NODE_CLASSES)


class _ProgramType:
    """What ``type(x)`` is in the judge for a program-defined object: compares by class name only."""

    __slots__ = ("__name__",)

    def __init__(self, name: str) -> None:
        self.__name__ = name

    def __eq__(self, other):
        return type(other) is _ProgramType and other.__name__ == self.__name__

    def __hash__(self):
        return hash(self.__name__)

    def __repr__(self):
        return f"<class '{self.__name__}'>"


def _judge_type(value):
    if type(value) in (ProgramObject, ForeignObject):
        return _ProgramType(value.name)
    if type(value) is CycleRef:
        return _ProgramType("cycle")
    return type(value)


class JudgeLimit(Exception):
    """A test that would take the judge past its bounds (too many steps, too large a value): an error verdict."""


def _guard_size(n) -> None:
    if isinstance(n, int) and n > _MAX_ITEMS:
        raise JudgeLimit(f"the test builds a value of {n} items; the judge stops at {_MAX_ITEMS}")


def _safe_pow(base, exp, mod=None):
    if mod is None and isinstance(base, int) and isinstance(exp, int) and exp > 0 and abs(base) > 1:
        if exp * base.bit_length() > _MAX_BITS:
            raise JudgeLimit("the test computes a power too large to judge")
    if mod is not None and isinstance(exp, int) and isinstance(mod, int):
        if abs(exp).bit_length() * max(abs(mod).bit_length(), 1) ** 2 > 1 << 36:
            raise JudgeLimit("the test computes a modular power too large to judge")
    return pow(base, exp, mod) if mod is not None else pow(base, exp)


def _judge_builtins() -> dict:
    table = {name: getattr(builtins, name) for name in _PURE_BUILTINS}
    table["pow"] = _safe_pow
    table["type"] = lambda *a: _judge_type(a[0]) if len(a) == 1 else _refuse("type() with three arguments")
    table["print"] = lambda *a, **k: None
    table.update(_CONSTANTS)
    table.update({name: getattr(builtins, name) for name in _EXCEPTIONS})
    table.update({name: _node_class(name, fields) for name, fields in _NODE_CLASSES.items()})
    return table


def _refuse(what: str):
    raise JudgeLimit(f"{what} is outside the judge's language")


_BUILTIN_TABLE = _judge_builtins()
_MATERIALISING = frozenset(_BUILTIN_TABLE[name] for name in ("list", "tuple", "set", "frozenset", "sorted", "sum",
                                                              "max", "min", "all", "any", "dict"))  # fmt: skip
for _name in ("factorial", "comb", "perm"):
    _fn = getattr(math, _name)

    def _bounded(*args, _fn=_fn):
        if any(isinstance(a, int) and a > 100_000 for a in args):
            raise JudgeLimit("the test computes a combinatorial number too large to judge")
        return _fn(*args)

    _MODULES["math"][_name] = _bounded
_MODULES["math"]["pow"] = math.pow

# ---------------------------------------------------------------------------------------------------------------
# Planning: which parts of a test run where.
# ---------------------------------------------------------------------------------------------------------------


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


_SUPPORTED_EXPR = (
    ast.Constant, ast.Name, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare,
    ast.IfExp, ast.Subscript, ast.Slice, ast.Attribute, ast.Call, ast.Lambda, ast.ListComp, ast.SetComp,
    ast.DictComp, ast.GeneratorExp, ast.JoinedStr, ast.FormattedValue, ast.Starred, ast.keyword, ast.comprehension,
    ast.arguments, ast.arg, ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop,
)  # fmt: skip
_SUPPORTED_STMT = (ast.Assert, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return, ast.If, ast.For,
                   ast.While, ast.Break, ast.Continue, ast.Pass, ast.Raise)  # fmt: skip
_OPERATOR_NODES = (ast.Compare, ast.BoolOp, ast.UnaryOp, ast.BinOp, ast.IfExp, ast.Tuple, ast.List, ast.Set,
                   ast.Dict, ast.JoinedStr, ast.FormattedValue, ast.Starred)  # fmt: skip


def _bound_in(node) -> set[str]:
    """Names a function body or a comprehension binds locally."""
    names = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            names.add(sub.id)
        elif isinstance(sub, ast.arg):
            names.add(sub.arg)
    return names


class _DropAnnotations(ast.NodeTransformer):
    """Annotations are documentation to the judge (``list[Any]`` needs no ``typing``)."""

    def visit_arg(self, node: ast.arg):
        node.annotation = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef):
        self.generic_visit(node)
        node.returns = None
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign):
        if node.value is None:
            return ast.copy_location(ast.Pass(), node)
        target = self.visit(node.target)
        return ast.copy_location(ast.Assign(targets=[target], value=self.visit(node.value)), node)


class _Substitute(ast.NodeTransformer):
    """Parameters replaced by the call's arguments (inlining ``check(candidate)``)."""

    def __init__(self, mapping: dict) -> None:
        self.mapping = mapping

    def visit_Name(self, node: ast.Name):
        if isinstance(node.ctx, ast.Load) and node.id in self.mapping:
            return ast.copy_location(copy.deepcopy(self.mapping[node.id]), node)
        return node


_SCOPES = (ast.Lambda, ast.FunctionDef, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_FREE_CACHE: dict = {}  # id(node) -> (node, names): only for the duration of one plan_test call


def _free_names(node) -> frozenset:
    """Names ``node`` reads that it does not bind itself (comprehension targets, lambda and function parameters)."""
    hit = _FREE_CACHE.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    loaded, scopes = set(), []
    for sub in ast.walk(node):
        t = type(sub)
        if t is ast.Name:
            if type(sub.ctx) is ast.Load:
                loaded.add(sub.id)
        elif t is ast.Constant:
            continue
        elif isinstance(sub, _SCOPES):
            scopes.append(sub)
    for sub in scopes:
        loaded -= _bound_in(sub)
    names = frozenset(loaded)
    _FREE_CACHE[id(node)] = (node, names)
    return names


class _Planner:
    def __init__(self, forced: set[str]) -> None:
        self.forced = forced  # names that must live in the sandbox (the sandbox's code reads them)
        self.judge_values: dict[str, ast.stmt] = {}  # judge-side bindings (values and helper functions)
        self.ever_judge: set[str] = set()  # every name the judge bound at some point (the sandbox may need it)
        self.judge_funcs: set[str] = set()
        self.modules: set[str] = set(_MODULES)
        self.steps: list[tuple[str, str]] = []
        self.body: list = []
        self.sandbox_reads: set[str] = set()
        self.data_names: set[str] = set()  # names the test's set-up binds to what a program call returned
        self.deferred: dict[str, ast.FunctionDef] = {}  # test helpers that call the program, not sent yet
        self.imported: dict[str, str] = {}  # names the test's own imports bound (not the judge's modules)
        self.inlining = 0
        self.env: dict = {}  # values of the judge's own bindings, known while planning (to unroll loops over them)
        self.in_try = False  # planning the body of a try the judge runs: program calls become probes
        self.unrolled = 0

    # -- classification ---------------------------------------------------------------------------------------
    def known(self, name: str, local: frozenset = frozenset()) -> bool:
        if name in local:
            return True
        if name in self.forced:
            return False
        return name in self.judge_values or name in _JUDGE_NAMES or name in self.modules

    def depends(self, node, local: frozenset = frozenset()) -> bool:
        return any(not self.known(n, local) for n in _free_names(node))

    def callable_in_judge(self, func, local: frozenset) -> bool:
        if isinstance(func, ast.Name):  # never a parameter: a test helper calling what it was given stays outside
            return func.id not in local and self.known(func.id, local) and (
                func.id in _BUILTIN_TABLE or func.id in self.judge_funcs)
        if isinstance(func, ast.Attribute):
            if isinstance(func.value, ast.Name) and func.value.id in self.modules and self.known(func.value.id, local):
                return func.attr in (_MODULES.get(func.value.id) or {})
            return func.attr in _METHOD_NAMES and self.supported(func.value, local)
        if isinstance(func, ast.Lambda):
            return self.supported(func, local)
        return False

    def supported(self, node, local: frozenset = frozenset()) -> bool:
        """Whether the judge can evaluate ``node`` by itself (no program names, only its language)."""
        for sub in ast.walk(node):
            if not isinstance(sub, _SUPPORTED_EXPR):
                return False
            if isinstance(sub, ast.Attribute) and sub.attr.startswith("__") and sub.attr != "__name__":
                return False
        inner = local | frozenset(_bound_in(node) if isinstance(node, (ast.Lambda,)) else ())
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                inner = inner | frozenset(_bound_in(sub))
        if self.depends(node, inner):
            return False
        return all(self.callable_in_judge(sub.func, inner) for sub in ast.walk(node) if isinstance(sub, ast.Call))

    def pure_function(self, fn: ast.FunctionDef) -> bool:
        """A helper the test defines from judge pieces only (e.g. LeetCode's ``assert_<name>(result, expected)``)."""
        if fn.decorator_list or fn.args.vararg or fn.args.kwarg or fn.args.posonlyargs or fn.args.kwonlyargs:
            return False
        local = frozenset(_bound_in(fn)) | {fn.name}
        for sub in ast.walk(fn):
            if sub is fn:
                continue
            if isinstance(sub, (ast.stmt,)) and not isinstance(sub, _SUPPORTED_STMT):
                return False
            if isinstance(sub, ast.expr) and not isinstance(sub, _SUPPORTED_EXPR):
                return False
            if isinstance(sub, ast.Attribute) and sub.attr.startswith("__") and sub.attr != "__name__":
                return False
        for sub in ast.walk(fn):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and not self.known(sub.id, local):
                return False
            if isinstance(sub, ast.Call) and not self.callable_in_judge(sub.func, local):
                return False
        return True

    # -- probes -------------------------------------------------------------------------------------------------
    def probe(self, node) -> ast.expr:
        src = ast.unparse(node)
        self.release(_free_names(node))
        self.sandbox_reads |= _free_names(node)
        k = len(self.steps)
        self.steps.append(("p", src))
        return ast.copy_location(ast.Name(id=f"{_PROBE}{k}", ctx=ast.Load()), node)

    def split(self, node, local: frozenset = frozenset()) -> ast.expr:
        """The judge's expression for ``node``, with program-dependent subexpressions replaced by probes."""
        if not self.depends(node, local):
            if self.supported(node, local):
                return node
            raise _Inside(f"outside the judge's language: {ast.unparse(node)[:80]}")
        if isinstance(node, _OPERATOR_NODES):
            return self._split_children(node, local)
        if isinstance(node, ast.Call):
            handed = [a for a in [*node.args, *(k.value for k in node.keywords)] if isinstance(a, ast.Name)
                      and not self.known(a.id, local) and a.id not in self.data_names]  # fmt: skip
            if handed:  # map(double, xs), sorted(xs, key=double): the program's function runs where it lives
                return self.probe(node)
            if self.callable_in_judge(node.func, local) and not isinstance(node.func, ast.Attribute):
                return self._split_children(node, local)
            func = node.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in self.modules \
                    and self.known(func.value.id, local):  # math.isclose(f(x), 0.5)  # fmt: skip
                return self._split_children(node, local)
            clean = self.clean_call(node, local)
            if clean is not None:
                return clean
            if isinstance(func, ast.Attribute) and func.attr in _METHOD_NAMES and self._value_like(func.value):
                receiver = self.split(func.value, local)
                args = [self.split(a, local) for a in node.args]
                keywords = [ast.keyword(arg=k.arg, value=self.split(k.value, local)) for k in node.keywords]
                return ast.copy_location(
                    ast.Call(func=ast.Attribute(value=receiver, attr=func.attr, ctx=ast.Load()), args=args,
                             keywords=keywords), node)  # fmt: skip
            return self.probe(node)
        if isinstance(node, ast.Subscript):
            if not self.depends(node.value, local) or self._value_like(node.value):
                value = self.split(node.value, local)
                return ast.copy_location(
                    ast.Subscript(value=value, slice=self.split(node.slice, local), ctx=ast.Load()), node)
            return self.probe(node)
        if isinstance(node, ast.Slice):
            parts = {k: (self.split(getattr(node, k), local) if getattr(node, k) is not None else None)
                     for k in ("lower", "upper", "step")}  # fmt: skip
            return ast.copy_location(ast.Slice(**parts), node)
        if isinstance(node, ast.Attribute) and self._value_like(node.value) and not node.attr.startswith("_"):
            return ast.copy_location(ast.Attribute(value=self.split(node.value, local), attr=node.attr,
                                                   ctx=ast.Load()), node)  # fmt: skip
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            split = self.comprehension(node, local) or self.unroll_comprehension(node, local)
            if split is not None:
                return split
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp, ast.Lambda, ast.NamedExpr,
                             ast.Await, ast.Yield, ast.YieldFrom)):
            raise _Inside("a comprehension or lambda that calls the program")
        return self.probe(node)

    def clean_call(self, node: ast.Call, local: frozenset):
        """``re.fullmatch(p, f(x))``, ``np.allclose(f(x), ref)``: a helper of a module the test imported, applied to
        the program's values. Run where the program is, it would be the program's patched copy of the module."""
        func = node.func
        root = func
        while isinstance(root, (ast.Attribute, ast.Call)):  # unittest.TestCase().assertEqual: through the calls too
            root = root.value if isinstance(root, ast.Attribute) else root.func
        if not isinstance(root, ast.Name) or root.id not in self.imported or root.id in local:
            return None
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return None
        if {n for n in _free_names(func)} != {root.id}:
            return None
        args = [self.split(a, local) for a in node.args]
        keywords = [ast.keyword(arg=k.arg, value=self.split(k.value, local)) for k in node.keywords]
        return ast.copy_location(_Clean(imports=self.imported[root.id], func=ast.unparse(func), args=args,
                                        keywords=keywords), node)  # fmt: skip

    def _value_like(self, node) -> bool:
        """Whether ``node`` yields a value the judge may take apart (a call result, not a program object's name).

        ``f(x).split()`` and ``f(x)[0]`` apply a builtin method or an index to what the program returned: the judge
        does that on the decoded value, so a ``str`` subclass with a lying ``split`` has no say. A name or a
        constructor call (``cache.get(1)``, ``Solution().count(3)``) is a program object whose methods are its own.
        """
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            return not name[:1].isupper()
        if isinstance(node, ast.Name):
            return node.id in self.data_names
        return isinstance(node, (ast.Subscript, ast.BinOp, ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set,
                                 ast.JoinedStr))  # fmt: skip

    def _split_children(self, node, local):
        new = type(node)()
        for name, value in ast.iter_fields(node):
            if isinstance(value, list):
                setattr(new, name, [self.split(v, local) if isinstance(v, ast.expr) else
                                    self._split_keyword(v, local) if isinstance(v, ast.keyword) else v
                                    for v in value])  # fmt: skip
            elif isinstance(value, ast.expr):
                setattr(new, name, self.split(value, local))
            else:
                setattr(new, name, value)
        return ast.copy_location(new, node)

    def _split_keyword(self, kw: ast.keyword, local):
        return ast.keyword(arg=kw.arg, value=self.split(kw.value, local))

    # -- statements -------------------------------------------------------------------------------------------
    def sandbox(self, stmt: ast.stmt) -> None:
        if self.in_try:
            raise _Inside("a try block that runs program statements")
        self.release(_free_names(stmt))
        self.sandbox_reads |= _free_names(stmt)
        self.steps.append(("x", ast.unparse(stmt)))

    def judge_stmt(self, stmt: ast.stmt) -> None:
        self.body.append((len(self.steps), stmt))
        self.ever_judge.update(self.judge_values)
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.FunctionDef, ast.Import, ast.ImportFrom)):
            names = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            if isinstance(stmt, ast.FunctionDef):
                names.add(stmt.name)
            try:
                _Interpreter([], budget=_PLAN_BUDGET).stmt(stmt, self.env)
            except Exception:  # noqa: BLE001 - unknown while planning: loops over it stay unrolled no further
                for name in names:
                    self.env.pop(name, None)

    def static_value(self, node, local: frozenset = frozenset()):
        """The value of a judge-only expression while planning, or ``_UNKNOWN``."""
        if self.depends(node, local) or not self.supported(node, local):
            return _UNKNOWN
        free = {n for n in _free_names(node) if n not in _BUILTIN_TABLE and n not in _MODULES}
        if not free <= set(self.env):
            return _UNKNOWN
        try:
            value = _Interpreter([], budget=_PLAN_BUDGET).eval(node, dict(self.env))
            return list(value) if hasattr(value, "__next__") else value  # a generator: once, as a list
        except Exception:  # noqa: BLE001
            return _UNKNOWN

    def bindings(self, target, value) -> dict | None:
        """``{name: ast constant}`` for one loop item, or None when it cannot be written as a literal."""
        if isinstance(target, ast.Name):
            node = _literal_ast(value)
            return None if node is None else {target.id: node}
        if isinstance(target, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in target.elts):
            try:
                items = list(value)
            except TypeError:
                return None
            if len(items) != len(target.elts):
                return None
            out: dict = {}
            for elt, item in zip(target.elts, items):
                sub = self.bindings(elt, item)
                if sub is None:
                    return None
                out.update(sub)
            return out
        return None

    def unroll_items(self, target, iterable) -> list | None:
        """Per item of a loop over a value known while planning, the bindings of its target; None when not."""
        if iterable is _UNKNOWN or isinstance(iterable, (str, bytes)) and len(iterable) > _MAX_UNROLL:
            return None
        try:
            items = list(iterable)
        except TypeError:
            return None
        if len(items) > _MAX_UNROLL:
            return None
        self.unrolled += len(items)
        if self.unrolled > _MAX_UNROLL * 4:
            return None
        out = []
        for item in items:
            bound = self.bindings(target, item)
            if bound is None:
                return None
            out.append(bound)
        return out

    def targets(self, target) -> list[str] | None:
        if isinstance(target, ast.Name):
            return [target.id]
        if isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts):
            return [e.id for e in target.elts]
        return None

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                bound = (alias.asname or alias.name).partition(".")[0]
                one = copy.copy(stmt)
                one.names = [alias]
                self.deferred[bound] = one  # reaches the sandbox only if its code reads the name
                judge_ok = isinstance(stmt, ast.Import) and alias.name in _MODULES and bound not in self.forced
                if isinstance(stmt, ast.ImportFrom) and stmt.module in _MODULES and stmt.level == 0 \
                        and alias.name in (_MODULES[stmt.module] or {}) and bound not in self.forced:  # fmt: skip
                    self.judge_values[bound] = stmt
                    self.judge_funcs.add(bound)
                    self.judge_stmt(ast.copy_location(ast.ImportFrom(module=stmt.module, names=[alias], level=0), stmt))
                elif judge_ok:
                    self.modules.add(bound)
                else:
                    self.modules.discard(bound)
                    self.judge_values.pop(bound, None)
                    self.forced.add(bound)
                    if stmt.level == 0 if isinstance(stmt, ast.ImportFrom) else True:
                        one = copy.copy(stmt)
                        one.names = [alias]
                        self.imported[bound] = ast.unparse(one)
            return
        if isinstance(stmt, ast.Assert):
            test = self.split(stmt.test)
            msg = stmt.msg if stmt.msg is not None and self.supported(stmt.msg) else None
            self.judge_stmt(ast.copy_location(ast.Assert(test=test, msg=msg), stmt))
            return
        if isinstance(stmt, ast.FunctionDef):
            stmt = _DropAnnotations().visit(stmt)  # in place: idempotent, and the tree is this plan's own
            if stmt.name not in self.forced and self.pure_function(stmt):
                self.judge_values[stmt.name] = stmt
                self.judge_funcs.add(stmt.name)
                self.judge_stmt(stmt)
            else:
                # Sent to the sandbox only when its code calls it: a ``check(candidate)`` that the test calls once
                # is inlined instead, and its expected values stay here.
                self.unbind(stmt.name)
                self.deferred[stmt.name] = stmt
            return
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            value = stmt.value
            if value is None:
                return
            names = [self.targets(t) for t in targets]
            if len(targets) == 1 and names[0] and isinstance(value, (ast.Tuple, ast.List)) and \
                    isinstance(targets[0], (ast.Tuple, ast.List)) and len(names[0]) == len(value.elts) and \
                    not any(isinstance(e, ast.Starred) for e in value.elts):  # fmt: skip
                for name, part in zip(names[0], value.elts):  # a, b = (1, [2]): one binding each
                    self.statement(ast.copy_location(
                        ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=part), stmt))
                return
            flat = [n for group in names if group for n in group]
            if all(names) and not self.depends(value) and self.supported(value) and not (set(flat) & self.forced):
                for name in flat:
                    self.judge_values[name] = stmt
                    self.judge_funcs.discard(name)
                if isinstance(value, ast.Lambda) and len(flat) == 1:  # ref = lambda n: 2 * n: a helper like a def
                    self.judge_funcs.add(flat[0])
                self.judge_stmt(stmt)
                return
            if all(names) and self.in_try and not set(flat) & self.forced:  # r = f(x) inside try: judged here
                self.judge_stmt(ast.copy_location(ast.Assign(targets=targets, value=self.split(value)), stmt))
                for name in flat:
                    self.judge_values[name] = stmt
                    self.ever_judge.add(name)
                return
            if all(names):
                for name in flat:
                    self.unbind(name)
                if self._value_like(value):
                    self.data_names.update(flat)
                self.sandbox(stmt)
                return
            # a[0] = ..., obj.attr = ...: where the container lives decides
            bases = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            if bases and all(self.known(b) for b in bases) and self.supported(value):
                self.judge_stmt(stmt)
            else:
                self.sandbox(stmt)
            return
        if isinstance(stmt, ast.AugAssign):
            target = stmt.target
            if isinstance(target, ast.Name) and self.known(target.id) and self.supported(stmt.value):
                self.judge_stmt(stmt)
            else:
                if isinstance(target, ast.Name):
                    self.unbind(target.id)
                self.sandbox(stmt)
            return
        if isinstance(stmt, ast.Expr):
            value = stmt.value
            if isinstance(value, ast.Constant):
                return  # a docstring or a bare constant
            inlined = self.inline(value)
            if inlined is not None:
                self.inlining += 1
                if self.inlining > 8:
                    raise _Inside("helpers nested too deeply to inline")
                for inner in inlined:
                    self.statement(inner)
                self.inlining -= 1
                return
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in self.judge_funcs:
                self.judge_stmt(ast.copy_location(ast.Expr(value=self.split(value)), stmt))
                return
            clean = self.clean_call(value, frozenset()) if isinstance(value, ast.Call) else None
            if clean is not None:  # unittest.TestCase().assertEqual(f(1), 3), np.testing.assert_allclose(...)
                self.judge_stmt(ast.copy_location(ast.Expr(value=clean), stmt))
                return
            if self.depends(value) and self.in_try:  # parse('x') inside try: a probe whose error the judge catches
                self.judge_stmt(ast.copy_location(ast.Expr(value=self.split(value)), stmt))
            elif self.depends(value):
                self.sandbox(stmt)
            elif self.supported(value):
                self.judge_stmt(stmt)
            else:
                raise _Inside("a statement outside the judge's language")
            return
        if isinstance(stmt, ast.Pass):
            return
        if isinstance(stmt, ast.Raise) and self._pure_block(stmt):
            self.judge_stmt(stmt)
            return
        if isinstance(stmt, ast.With):
            stmt = self.raises_as_try(stmt) or stmt
        if isinstance(stmt, ast.Try) and self.plan_try(stmt):
            return
        has_assert = any(isinstance(s, (ast.Assert, ast.Raise)) for s in ast.walk(stmt))
        if isinstance(stmt, (ast.If, ast.For, ast.While)) and not self.depends(stmt) and self._pure_block(stmt):
            self.judge_stmt(stmt)
            return
        if isinstance(stmt, ast.For) and has_assert and self.unroll_loop(stmt):
            return
        if isinstance(stmt, ast.While) and has_assert and self.unroll_while(stmt):
            return
        if isinstance(stmt, ast.If) and has_assert and self.depends(stmt.test) and all(
                self._pure_block(s) for s in (*stmt.body, *stmt.orelse)):  # fmt: skip
            # if f(3) != 9: raise AssertionError(...): the condition's program part is a probe, the rest is ours
            self.judge_stmt(ast.copy_location(ast.If(test=self.split(stmt.test), body=stmt.body,
                                                     orelse=stmt.orelse), stmt))  # fmt: skip
            return
        if isinstance(stmt, ast.If) and has_assert:
            condition = self.static_value(stmt.test)
            if condition is not _UNKNOWN:
                for inner in stmt.body if condition else stmt.orelse:
                    self.statement(inner)
                return
        if has_assert:
            raise _Inside(f"a {type(stmt).__name__.lower()} block with asserts that call the program")
        for name in _bound_in(stmt) | ({stmt.name} if isinstance(stmt, (ast.ClassDef, ast.AsyncFunctionDef)) else set()):
            self.unbind(name)
        self.sandbox(stmt)

    def unroll_loop(self, stmt: ast.For) -> bool:
        """``for x, want in [(2, 4), (3, 9)]: assert f(x) == want`` as one copy of the body per item.

        Only over a value the judge knows while planning (a literal, a range, a binding of its own), with a body
        that neither rebinds the loop's names nor breaks out: then the loop's inputs go to the sandbox inside the
        probes, and its expected values stay here.
        """
        if any(isinstance(n, (ast.Break, ast.Continue, ast.Return, ast.Yield, ast.YieldFrom)) for n in ast.walk(stmt)):
            return False  # (without a break, a for loop's else always runs: it follows the copies)
        targets = {n.id for n in ast.walk(stmt.target) if isinstance(n, ast.Name)}
        assigned = {n.id for s in stmt.body for n in ast.walk(s) if isinstance(n, ast.Name)
                    and isinstance(n.ctx, (ast.Store, ast.Del))}  # fmt: skip
        if targets & assigned:
            return False
        items = self.unroll_items(stmt.target, self.static_value(stmt.iter))
        if items is None:
            return False
        for bound in items:
            for inner in stmt.body:
                self.statement(_Substitute(bound).visit(copy.deepcopy(inner)))
        for inner in stmt.orelse:
            self.statement(inner)
        return True

    def raises_as_try(self, stmt: ast.With) -> ast.Try | None:
        """``with pytest.raises(E): body`` as ``try: body / except E: pass / else: raise AssertionError``."""
        if len(stmt.items) != 1 or stmt.items[0].optional_vars is not None:
            return None
        call = stmt.items[0].context_expr
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "raises"
                and isinstance(call.func.value, ast.Name) and call.func.value.id == "pytest"
                and len(call.args) == 1 and not call.keywords):  # match= would need a regex on the program's text
            return None
        fail = ast.Raise(exc=ast.Call(func=ast.Name(id="AssertionError", ctx=ast.Load()),
                                      args=[ast.Constant("DID NOT RAISE")], keywords=[]), cause=None)
        handler = ast.ExceptHandler(type=call.args[0], name=None, body=[ast.Pass()])
        return ast.copy_location(ast.Try(body=stmt.body, handlers=[handler], orelse=[fail], finalbody=[]), stmt)

    def plan_try(self, stmt: ast.Try) -> bool:
        """``try: f(bad) / except ValueError: pass / else: assert False``: the calls in the body become probes (the
        sandbox records what they raised and goes on), the judge runs the try with the program's exceptions as
        values of the program's class name under its nearest builtin base. Handlers, else and finally must be the
        judge's own code; the body may not run program statements whose effects the sandbox would need."""
        for handler in stmt.handlers:
            if handler.type is not None and not self.supported(handler.type):
                return False
        if not all(self._pure_block(s) for s in (*stmt.orelse, *stmt.finalbody)):
            return False
        for handler in stmt.handlers:  # its name (except E as e) is the judge's own value in its body
            params = [ast.arg(arg=handler.name)] if handler.name else []
            fn = ast.FunctionDef(name="_handler_", args=ast.arguments(posonlyargs=[], args=params, kwonlyargs=[],
                                 kw_defaults=[], defaults=[]), body=handler.body, decorator_list=[], returns=None,
                                 type_params=[])  # fmt: skip
            if not self.pure_function(fn):
                return False
        saved_body, saved_try = self.body, self.in_try
        self.body, self.in_try = [], True
        try:
            for inner in stmt.body:
                self.statement(inner)
            body = [s for _, s in self.body]
        except _Inside:
            self.body, self.in_try = saved_body, saved_try
            raise
        self.body, self.in_try = saved_body, saved_try
        if not body:
            return False
        self.judge_stmt(ast.copy_location(ast.Try(body=body, handlers=stmt.handlers, orelse=stmt.orelse,
                                                  finalbody=stmt.finalbody), stmt))  # fmt: skip
        return True

    def unroll_while(self, stmt: ast.While) -> bool:
        """``x = 1; while x < 4: assert f(x) == x * x; x += 1``: a loop whose condition the judge can follow while
        planning (it reads only the judge's own bindings, which the body updates) is written out pass by pass."""
        if stmt.orelse or any(isinstance(n, (ast.Break, ast.Continue, ast.Return)) for n in ast.walk(stmt)):
            return False
        if self.depends(stmt.test) or self.static_value(stmt.test) is _UNKNOWN:
            return False
        start, steps, env = len(self.body), len(self.steps), dict(self.env)
        snapshot = (set(self.judge_values), set(self.forced), set(self.judge_funcs))
        for _ in range(_MAX_UNROLL):
            condition = self.static_value(stmt.test)
            if condition is _UNKNOWN:
                break
            if not condition:
                return True
            self.unrolled += 1
            if self.unrolled > _MAX_UNROLL * 4:
                break
            for inner in stmt.body:
                # the judge's own names, as this pass sees them, written in (so probes carry values, not names)
                known = {n: _literal_ast(self.env[n]) for n in _free_names(inner) if n in self.env
                         and n in self.judge_values and not isinstance(self.judge_values[n], ast.FunctionDef)}
                if any(v is None for v in known.values()):
                    break
                self.statement(_Substitute(known).visit(copy.deepcopy(inner)))
            else:
                continue
            break
        # Could not follow it to the end: undo what was written out; the loop runs whole inside.
        del self.body[start:]
        del self.steps[steps:]
        self.env = env
        self.judge_values = {k: v for k, v in self.judge_values.items() if k in snapshot[0]}
        self.forced, self.judge_funcs = snapshot[1], snapshot[2]
        return False

    def unroll_comprehension(self, node, local: frozenset) -> ast.expr | None:
        """``all(f(x) == y for x, y in pairs)`` over pairs known while planning: one lazily judged item per pair."""
        if len(node.generators) != 1 or node.generators[0].is_async:
            return None
        gen = node.generators[0]
        items = self.unroll_items(gen.target, self.static_value(gen.iter, local))
        if items is None:
            return None
        parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        unrolled = []
        for bound in items:
            sub = _Substitute(bound)
            conds = [self.split(sub.visit(copy.deepcopy(c)), local) for c in gen.ifs]
            unrolled.append((conds, [self.split(sub.visit(copy.deepcopy(p)), local) for p in parts]))
        kind = {ast.ListComp: "list", ast.SetComp: "set", ast.GeneratorExp: "gen", ast.DictComp: "dict"}[type(node)]
        return ast.copy_location(_Unrolled(kind=kind, items=unrolled), node)

    def inline(self, call) -> list | None:
        """The body of a deferred test helper called as a statement with plain arguments, parameters substituted."""
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in self.deferred):
            return None
        fn = self.deferred[call.func.id]
        if not isinstance(fn, ast.FunctionDef):
            return None
        params = [a.arg for a in fn.args.args]
        if call.keywords or fn.decorator_list or fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs or \
                len(call.args) != len(params) or fn.args.defaults:  # fmt: skip
            return None
        if not all(isinstance(a, (ast.Name, ast.Constant)) for a in call.args):
            return None
        for sub in ast.walk(fn):
            if sub is not fn and isinstance(sub, (ast.Return, ast.FunctionDef, ast.Lambda, ast.Global, ast.Nonlocal,
                                                 ast.Yield, ast.YieldFrom)):  # fmt: skip
                if not (isinstance(sub, ast.Return) and sub.value is None):
                    return None
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store) and sub.id in params:
                return None
        mapping = dict(zip(params, call.args))
        return [_Substitute(mapping).visit(copy.deepcopy(s)) for s in fn.body if not isinstance(s, ast.Return)]

    def release(self, names: set[str]) -> None:
        """Send deferred helper definitions that sandbox code is about to read (and those they read)."""
        todo = [n for n in names if n in self.deferred]
        while todo:
            name = todo.pop()
            fn = self.deferred.pop(name, None)
            if fn is None:
                continue
            self.sandbox_reads |= _free_names(fn)
            self.steps.append(("x", ast.unparse(fn)))
            todo.extend(n for n in _free_names(fn) if n in self.deferred)

    def _pure_block(self, stmt) -> bool:
        fn = ast.FunctionDef(name="_block_", args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                             kw_defaults=[], defaults=[]), body=[stmt], decorator_list=[], returns=None,
                             type_params=[])  # fmt: skip
        return self.pure_function(fn)

    def unbind(self, name: str) -> None:
        self.data_names.discard(name)
        self.judge_values.pop(name, None)
        self.judge_funcs.discard(name)
        self.forced.add(name)


    def comprehension(self, node, local: frozenset) -> ast.expr | None:
        """``[tuple(p) for p in f(x)]``: only the first iterable needs the program; the rest is the judge's."""
        first = node.generators[0]
        inner = local | frozenset(_bound_in(node))
        rest = [first.target, *first.ifs, *node.generators[1:]]
        rest += [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        if any(g.is_async for g in node.generators) or not all(self.supported(r, inner) for r in rest
                                                               if not isinstance(r, ast.comprehension)):
            return None
        if not all(self.supported(g.iter, inner) and all(self.supported(c, inner) for c in g.ifs)
                   for g in node.generators[1:]):
            return None
        new = copy.copy(node)
        new.generators = [ast.comprehension(target=first.target, iter=self.split(first.iter, local), ifs=first.ifs,
                                            is_async=0), *node.generators[1:]]
        return ast.copy_location(new, node)


def _plan(source: str, tree: ast.Module) -> TestPlan:
    forced: set[str] = set()
    for _ in range(8):
        planner = _Planner(set(forced))
        for stmt in tree.body:
            planner.statement(stmt)
        # Judge-side bindings that the sandbox's code reads must live there too: re-plan with them forced there.
        need = {n for n in planner.sandbox_reads if n in planner.ever_judge} - forced
        if not need:
            if not planner.body:
                raise _Inside("no assert to judge")
            return TestPlan(source, True, planner.steps, planner.body)
        forced |= need
    raise _Inside("test bindings shared between the judge and the program")


@functools.lru_cache(maxsize=8192)
def plan_test(source: str) -> TestPlan:
    """Split one test into the program's part (sandbox steps) and the judge's part. Never raises.

    Example:
        >>> plan_test("assert abs(area(2) - 12.566) < 1e-3").steps
        [('p', 'area(2)')]
        >>> plan_test("for i in range(3):\\n    assert f(i) == i").steps
        [('p', 'f(0)'), ('p', 'f(1)'), ('p', 'f(2)')]
        >>> plan_test("for x in f(3):\\n    assert g(x) == x").outside
        False
        >>> plan_test("assert f(").invalid is not None
        True
    """
    try:
        tree = ast.parse(source, "<test>", "exec")
        compile(tree, "<test>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError) as err:
        return TestPlan(source, False, invalid=f"test does not parse: {type(err).__name__}: {err}"[:MAX_MESSAGE])
    try:
        return _plan(source, tree)
    except _Inside as why:
        return TestPlan(source, False, reason=str(why))
    except RecursionError:
        return TestPlan(source, False, reason="test too deeply nested to split")
    finally:
        _FREE_CACHE.clear()


def outside_share(tests: Iterable[str]) -> float:
    """Fraction of ``tests`` whose verdict the judge decides outside the sandbox.

    Example:
        >>> outside_share(["assert f(1) == 2", "for x in f(2):\\n    assert g(x)"])
        0.5
    """
    tests = list(tests)
    return sum(plan_test(t).outside for t in tests) / len(tests) if tests else 1.0


# ---------------------------------------------------------------------------------------------------------------
# The interpreter: the judge's part, evaluated over decoded values.
# ---------------------------------------------------------------------------------------------------------------


class _ProbeFailed(Exception):
    def __init__(self, status: str, message: str, chain: str = "") -> None:
        super().__init__(message)
        self.status, self.message, self.chain = status, message, chain

    def as_exception(self) -> BaseException | None:
        """The exception the program raised, as the judge's ``except`` clauses see it: a class of the program's
        name under its nearest builtin base, carrying its message; None for what no ``except`` catches (a timeout,
        a crash, the sandbox's own verdicts)."""
        if self.status not in ("error", "fail") or not self.chain:
            return None
        own, *bases = self.chain.split(",")
        base = next((_BUILTIN_EXCEPTIONS[b] for b in [own, *bases] if b in _BUILTIN_EXCEPTIONS), Exception)
        if own != base.__name__:
            base = _raised_class(own.rpartition(".")[2], base)
        text = self.message.partition(": ")[2] if ": " in self.message else ""
        try:
            return base(text)
        except Exception:  # noqa: BLE001 - an exception class that wants other arguments
            return base()


_BUILTIN_EXCEPTIONS = {name: obj for name, obj in vars(builtins).items()
                       if isinstance(obj, type) and issubclass(obj, BaseException)}  # fmt: skip


@functools.lru_cache(maxsize=256)
def _raised_class(name: str, base: type) -> type:
    return type(name if name.isidentifier() else "ProgramError", (base,), {})


class _Return(Exception):
    def __init__(self, value) -> None:
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


_BINOPS = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
    ast.Pow: _safe_pow, ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
    ast.BitOr: lambda a, b: a | b, ast.BitXor: lambda a, b: a ^ b, ast.BitAnd: lambda a, b: a & b,
}  # fmt: skip
_CMPOPS = {
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}  # fmt: skip
_SEQUENCES = (str, bytes, list, tuple)


_SINGLETONS = (type(None), bool, type(Ellipsis), type(NotImplemented))


def _same(a, b) -> bool:
    """``is`` between decoded values: identity for singletons and the judge's own objects, else the same type and
    an equal value (two probes never return the same object to the judge, yet ``color() is Color.RED`` holds)."""
    if type(a) in _SINGLETONS or type(b) in _SINGLETONS or callable(a) or callable(b):
        return a is b
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001
        return False


def _guard_binop(op, a, b) -> None:
    if isinstance(op, ast.Mult):
        for seq, n in ((a, b), (b, a)):
            if isinstance(seq, _SEQUENCES) and isinstance(n, int):
                _guard_size(len(seq) * n)
    elif isinstance(op, ast.LShift) and isinstance(b, int) and b > _MAX_BITS:
        raise JudgeLimit("the test shifts an int too far to judge")
    elif isinstance(op, ast.Add) and isinstance(a, _SEQUENCES) and isinstance(b, _SEQUENCES):
        _guard_size(len(a) + len(b))


class _Function:
    """A helper function or lambda the test defines, run by the interpreter (callable by judge builtins too)."""

    def __init__(self, interp: _Interpreter, params: list[str], defaults: list, body, env: dict, expr: bool) -> None:
        self.interp, self.params, self.defaults, self.body, self.env, self.expr = interp, params, defaults, body, env, expr

    def __call__(self, *args, **kwargs):
        if len(args) > len(self.params):
            raise TypeError("too many arguments")
        local = dict(self.env)
        bound = dict(zip(self.params, args))
        for key, value in kwargs.items():
            if key not in self.params or key in bound:
                raise TypeError(f"unexpected argument {key!r}")
            bound[key] = value
        first_default = len(self.params) - len(self.defaults)
        for i, name in enumerate(self.params):
            if name not in bound:
                if i < first_default:
                    raise TypeError(f"missing argument {name!r}")
                bound[name] = self.defaults[i - first_default]
        local.update(bound)
        if self.expr:
            return self.interp.eval(self.body, local)
        try:
            self.interp.block(self.body, local)
        except _Return as ret:
            return ret.value
        return None


class _Interpreter:
    def __init__(self, probes: list, budget: int = _STEP_BUDGET) -> None:
        self.probes = probes
        self.steps = 0
        self.budget = budget
        # Identity in the sandbox of each probe's value: ``f(head) is head.next`` is a question about the program's
        # objects, which two decoded copies cannot answer by themselves.
        self.identity = {id(p[1]): p[2] for p in probes if p[0] == "v" and len(p) > 2}

    def tick(self) -> None:
        self.steps += 1
        if self.steps > self.budget:
            raise JudgeLimit("the test takes too many steps to judge")

    # -- statements -------------------------------------------------------------------------------------------
    def block(self, stmts, env: dict) -> None:
        for stmt in stmts:
            self.stmt(stmt, env)

    def stmt(self, node, env: dict) -> None:
        self.tick()
        t = type(node)
        if t is ast.Assert:
            if not self.eval(node.test, env):
                message = ""
                if node.msg is not None:
                    try:
                        message = str(self.eval(node.msg, env))
                    except Exception:  # noqa: BLE001 - the message itself failed: keep the plain assertion
                        message = ""
                raise AssertionError(message)
        elif t is ast.Expr:
            self.eval(node.value, env)
        elif t is ast.Assign:
            value = self.eval(node.value, env)
            for target in node.targets:
                self.assign(target, value, env)
        elif t is ast.AnnAssign:
            if node.value is not None:
                self.assign(node.target, self.eval(node.value, env), env)
        elif t is ast.AugAssign:
            current = self.eval(_as_load(node.target), env)
            value = self.eval(node.value, env)
            _guard_binop(node.op, current, value)
            self.assign(node.target, _BINOPS[type(node.op)](current, value), env)
        elif t is ast.FunctionDef:
            env[node.name] = self.function(node, env)
        elif t is ast.Return:
            raise _Return(self.eval(node.value, env) if node.value is not None else None)
        elif t is ast.If:
            self.block(node.body if self.eval(node.test, env) else node.orelse, env)
        elif t is ast.For:
            for item in self.eval(node.iter, env):
                self.assign(node.target, item, env)
                if self.loop_body(node, env):
                    break
            else:
                self.block(node.orelse, env)
        elif t is ast.While:
            while self.eval(node.test, env):
                if self.loop_body(node, env):
                    break
            else:
                self.block(node.orelse, env)
        elif t is ast.Break:
            raise _Break()
        elif t is ast.Continue:
            raise _Continue()
        elif t is ast.Pass:
            pass
        elif t is ast.Try:
            self.try_stmt(node, env)
        elif t is ast.Raise:
            exc = self.eval(node.exc, env) if node.exc is not None else AssertionError()
            if isinstance(exc, type) and issubclass(exc, BaseException):
                exc = exc()
            if not isinstance(exc, Exception):
                raise TypeError("exceptions must derive from BaseException")
            raise exc
        elif t in (ast.Import, ast.ImportFrom):
            for alias in node.names:
                if t is ast.Import:
                    env[(alias.asname or alias.name).partition(".")[0]] = _ModuleView(alias.name)
                else:
                    env[alias.asname or alias.name] = _MODULES[node.module][alias.name]
        else:  # pragma: no cover - the planner never hands other statements to the judge
            raise JudgeLimit(f"{t.__name__} is outside the judge's language")

    def try_stmt(self, node: ast.Try, env: dict) -> None:
        try:
            try:
                self.block(node.body, env)
            except (_Return, _Break, _Continue, JudgeLimit, MemoryError, RecursionError):
                raise
            except Exception as err:  # noqa: BLE001 - the program's exceptions and the test's own
                raised = err.as_exception() if isinstance(err, _ProbeFailed) else err
                if raised is None:
                    raise
                for handler in node.handlers:
                    kinds = self.eval(handler.type, env) if handler.type is not None else BaseException
                    if isinstance(raised, kinds):
                        if handler.name:
                            env[handler.name] = raised
                        self.block(handler.body, env)
                        break
                else:
                    raise
            else:
                self.block(node.orelse, env)
        finally:
            self.block(node.finalbody, env)

    def loop_body(self, node, env: dict) -> bool:
        """One pass of a loop's body; True when it breaks out of the loop."""
        self.tick()
        try:
            self.block(node.body, env)
        except _Break:
            return True
        except _Continue:
            pass
        return False

    def function(self, node: ast.FunctionDef, env: dict) -> _Function:
        params = [a.arg for a in node.args.args]
        defaults = [self.eval(d, env) for d in node.args.defaults]
        return _Function(self, params, defaults, node.body, env, expr=False)

    def assign(self, target, value, env: dict) -> None:
        t = type(target)
        if t is ast.Name:
            env[target.id] = value
        elif t in (ast.Tuple, ast.List):
            starred = [i for i, e in enumerate(target.elts) if isinstance(e, ast.Starred)]
            items = list(value)
            if starred:
                i = starred[0]
                after = len(target.elts) - i - 1
                if len(items) < len(target.elts) - 1:
                    raise ValueError("not enough values to unpack")
                parts = items[:i] + [items[i: len(items) - after]] + items[len(items) - after:]
                for elt, part in zip(target.elts, parts):
                    self.assign(elt.value if isinstance(elt, ast.Starred) else elt, part, env)
                return
            if len(items) != len(target.elts):
                raise ValueError(f"cannot unpack {len(items)} values into {len(target.elts)}")
            for elt, item in zip(target.elts, items):
                self.assign(elt, item, env)
        elif t is ast.Subscript:
            container = self.eval(target.value, env)
            _check_data(container)
            container[self.eval(target.slice, env)] = value
        else:
            raise JudgeLimit(f"assignment to {t.__name__} is outside the judge's language")

    # -- expressions ------------------------------------------------------------------------------------------
    def eval(self, node, env: dict):
        self.tick()
        t = type(node)
        if t is ast.Constant:
            return node.value
        if t is ast.Name:
            name = node.id
            if name.startswith(_PROBE):
                entry = self.probes[int(name[len(_PROBE):])]
                if entry[0] == "v":
                    return entry[1]
                raise _ProbeFailed(*entry[1:])
            if name in env:
                return env[name]
            if name in _BUILTIN_TABLE:
                return _BUILTIN_TABLE[name]
            if name in _MODULES:
                return _ModuleView(name)
            raise NameError(f"name {name!r} is not defined")
        if t is ast.Compare:
            left = self.eval(node.left, env)
            for op, comparator in zip(node.ops, node.comparators):
                right = self.eval(comparator, env)
                kind = type(op)
                if kind is ast.Is or kind is ast.IsNot:
                    if self.same(left, right) != (kind is ast.Is):
                        return False
                elif not _CMPOPS[kind](left, right):
                    return False
                left = right
            return True
        if t is ast.BoolOp:
            is_and = type(node.op) is ast.And
            value = None
            for operand in node.values:
                value = self.eval(operand, env)
                if bool(value) != is_and:
                    return value
            return value
        if t is ast.UnaryOp:
            operand = self.eval(node.operand, env)
            op = type(node.op)
            if op is ast.Not:
                return not operand
            if op is ast.USub:
                return -operand
            if op is ast.UAdd:
                return +operand
            return ~operand
        if t is ast.BinOp:
            left, right = self.eval(node.left, env), self.eval(node.right, env)
            _guard_binop(node.op, left, right)
            return _BINOPS[type(node.op)](left, right)
        if t is ast.IfExp:
            return self.eval(node.body if self.eval(node.test, env) else node.orelse, env)
        if t in (ast.Tuple, ast.List, ast.Set):
            items = []
            for elt in node.elts:
                if type(elt) is ast.Starred:
                    items.extend(self.eval(elt.value, env))
                else:
                    items.append(self.eval(elt, env))
            return tuple(items) if t is ast.Tuple else items if t is ast.List else set(items)
        if t is ast.Dict:
            out = {}
            for key, value in zip(node.keys, node.values):
                if key is None:
                    out.update(self.eval(value, env))
                else:
                    out[self.eval(key, env)] = self.eval(value, env)
            return out
        if t is ast.Subscript:
            value = self.eval(node.value, env)
            _check_data(value)
            return value[self.eval(node.slice, env)]
        if t is ast.Slice:
            return slice(*(self.eval(p, env) if p is not None else None for p in (node.lower, node.upper, node.step)))
        if t is ast.Attribute:
            return self.attribute(self.eval(node.value, env), node.attr)
        if t is ast.Call:
            func = self.eval(node.func, env)
            args = []
            for a in node.args:
                if type(a) is ast.Starred:
                    args.extend(self.eval(a.value, env))
                else:
                    args.append(self.eval(a, env))
            if args and type(args[0]) is range and func in _MATERIALISING:
                _guard_size(len(args[0]))
            kwargs = {}
            for kw in node.keywords:
                if kw.arg is None:
                    kwargs.update(self.eval(kw.value, env))
                else:
                    kwargs[kw.arg] = self.eval(kw.value, env)
            return func(*args, **kwargs)
        if t is ast.Lambda:
            params = [a.arg for a in node.args.args]
            defaults = [self.eval(d, env) for d in node.args.defaults]
            return _Function(self, params, defaults, node.body, env, expr=True)
        if t in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
            return self.comprehension(node, env)
        if t is _Unrolled:
            return self.unrolled(node, env)
        if t is _Clean:
            return self.clean_call(node, env)
        if t is ast.JoinedStr:
            return "".join(str(self.eval(v, env)) for v in node.values)
        if t is ast.FormattedValue:
            value = self.eval(node.value, env)
            if node.conversion == ord("r"):
                value = repr(value)
            elif node.conversion == ord("s"):
                value = str(value)
            elif node.conversion == ord("a"):
                value = ascii(value)
            spec = self.eval(node.format_spec, env) if node.format_spec is not None else ""
            return format(value, spec)
        raise JudgeLimit(f"{t.__name__} is outside the judge's language")

    clean = None  # set by judge(): runs a helper call in a process that never ran program code

    def clean_call(self, node: _Clean, env: dict):
        args = [self.eval(a, env) for a in node.args]
        keywords = [(k.arg, self.eval(k.value, env)) for k in node.keywords]
        parts = [_literal_ast(v) for v in args] + [_literal_ast(v) for _, v in keywords]
        if any(p is None for p in parts) or self.clean is None:
            raise JudgeLimit(f"{node.func}() on values that cannot be handed to a clean process")
        call = ast.Call(func=ast.parse(node.func, mode="eval").body, args=parts[: len(args)],
                        keywords=[ast.keyword(arg=k, value=p) for (k, _), p in zip(keywords, parts[len(args):])])
        entry = self.clean(node.imports, ast.unparse(ast.fix_missing_locations(call)))
        if entry[0] == "v":
            return entry[1]
        raise _ProbeFailed(*entry[1:])

    def same(self, a, b) -> bool:
        """``is``: sandbox identities when both sides are probe values, else :func:`_same`."""
        ida, idb = self.identity.get(id(a)), self.identity.get(id(b))
        if ida is not None and idb is not None and type(a) not in _SINGLETONS and type(b) not in _SINGLETONS:
            return ida == idb
        return _same(a, b)

    def unrolled(self, node: _Unrolled, env: dict):
        def items():
            for conds, parts in node.items:
                self.tick()
                if all(self.eval(c, env) for c in conds):
                    yield [self.eval(p, env) for p in parts]

        if node.kind == "gen":  # lazy, as a generator is: all()/any() stop where Python would
            return (parts[0] for parts in items())
        if node.kind == "dict":
            return {k: v for k, v in items()}
        values = [parts[0] for parts in items()]
        return set(values) if node.kind == "set" else values

    def comprehension(self, node, env: dict):
        out_list: list = []
        out_dict: dict = {}
        local = dict(env)

        def loop(i: int) -> None:
            if i == len(node.generators):
                self.tick()
                if type(node) is ast.DictComp:
                    out_dict[self.eval(node.key, local)] = self.eval(node.value, local)
                else:
                    out_list.append(self.eval(node.elt, local))
                return
            gen = node.generators[i]
            for item in self.eval(gen.iter, local):
                self.tick()
                self.assign(gen.target, item, local)
                if all(self.eval(cond, local) for cond in gen.ifs):
                    loop(i + 1)

        loop(0)
        t = type(node)
        if t is ast.DictComp:
            return out_dict
        if t is ast.SetComp:
            return set(out_list)
        if t is ast.GeneratorExp:
            return iter(out_list)
        return out_list

    def attribute(self, value, attr: str):
        if type(value) is _ModuleView:
            return value.get(attr)
        if type(value) is ProgramObject:
            if attr in value.fields:
                return value.fields[attr]
            raise AttributeError(f"{value.name} object has no data attribute {attr!r} (its methods stay in the sandbox)")
        if type(value) is _ProgramType and attr == "__name__":
            return value.__name__
        if isinstance(value, type) and attr == "__name__":
            return value.__name__
        kind = type(value)
        if attr in _METHODS.get(kind, ()):
            method = getattr(value, attr)
            if attr in ("zfill", "center", "ljust", "rjust"):
                return _padding_guard(method)
            if attr in ("replace", "join", "expandtabs"):
                return _result_guard(method)
            return method
        if attr in _ATTRIBUTES.get(kind, ()):
            return getattr(value, attr)
        if isinstance(value, tuple) and attr in getattr(kind, "_fields", ()):  # a named tuple the wire rebuilt
            return getattr(value, attr)
        if isinstance(value, tuple) and attr in ("count", "index"):
            return getattr(value, attr)
        if kind in (dict, collections.Counter) and attr in _METHODS[dict]:
            return getattr(value, attr)
        raise AttributeError(f"{kind.__name__!s} value has no attribute {attr!r} in the judge's language")


def _padding_guard(method):
    def call(width, *rest):
        _guard_size(width)
        return method(width, *rest)

    return call


def _result_guard(method):
    def call(*args):
        result = method(*args)
        _guard_size(len(result))
        return result

    return call


def _check_data(value) -> None:
    if type(value) in (ProgramObject, ForeignObject, CycleRef, _ModuleView):
        raise TypeError(f"{value!r} cannot be indexed by the judge")


class _ModuleView:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def get(self, attr: str):
        table = _MODULES.get(self.name) or {}
        if attr not in table:
            raise AttributeError(f"{self.name}.{attr} is outside the judge's language")
        return table[attr]


def _as_load(target):
    if isinstance(target, ast.Name):
        return ast.Name(id=target.id, ctx=ast.Load())
    if isinstance(target, ast.Subscript):
        return ast.Subscript(value=target.value, slice=target.slice, ctx=ast.Load())
    raise JudgeLimit("augmented assignment to this target is outside the judge's language")


_PROBE_STATUSES = frozenset({"fail", "error", "memory", "timeout", "crash"})


def read_entries(payload: bytes, expected: int) -> list:
    """The probe entries of a report: ``E<n>:`` then ``v<value>`` / ``e<status><message>`` / ``x<status><message>``."""
    if payload[:1] != b"E":
        raise WireError("not a probe report")
    colon = payload.find(b":", 1, 24)
    count = payload[1:colon]
    if colon < 0 or not count.isdigit() or int(count) > expected:
        raise WireError("the report does not match the test's probes")
    pos, out = colon + 1, []
    for _ in range(int(count)):
        tag = payload[pos : pos + 1]
        if tag == b"v":
            semi = payload.find(b";", pos + 1, pos + 20)
            ident = payload[pos + 1 : semi]
            if semi < 0 or not ident or not all(c in b"0123456789abcdef" for c in ident):
                raise WireError("malformed probe identity")
            value, pos = decode_at(payload, semi + 1)
            out.append(("v", value, int(ident, 16)))
        elif tag in (b"e", b"x"):
            status, pos = decode_at(payload, pos + 1)
            message, pos = decode_at(payload, pos)
            chain = ""
            if tag == b"e":
                chain, pos = decode_at(payload, pos)
            if status not in _PROBE_STATUSES or type(message) is not str or type(chain) is not str:
                raise WireError("malformed probe entry")
            out.append((tag.decode(), status, message, chain) if tag == b"e" else ("x", status, message))
        else:
            raise WireError("malformed probe entry")
    if pos != len(payload):
        raise WireError("trailing bytes after the report")
    return out


def encode_entries(entries: list) -> bytes:
    """The sandbox side's report format, for tests and tools: ``[("v", value) | ("e"|"x", status, message)]``.

    A value entry may carry a third item, the value's identity in the sandbox (``is`` compares those).

    Example:
        >>> encode_entries([("v", 4)])
        b'E1:v1;i4;'
    """
    parts = []
    for i, entry in enumerate(entries):
        if entry[0] == "v":
            parts.append(b"v%x;" % (entry[2] if len(entry) > 2 else i + 1) + encode(entry[1]))
        else:
            chain = (encode(entry[3] if len(entry) > 3 else "") if entry[0] == "e" else b"")
            parts.append(entry[0].encode() + encode(entry[1]) + encode(entry[2]) + chain)
    return b"E%d:" % len(parts) + b"".join(parts)


def judge(plan: TestPlan, payload: bytes, *, clean=None) -> tuple[str, str]:
    """The verdict of one split test from what its probes sent back: ``(status, message)``.

    ``payload`` holds one entry per sandbox step that ran (see :func:`encode_entries`): ``("v", value)`` for a
    probe's value, ``("e", status, message)`` for a probe that raised, ``("x", status, message)`` for a set-up
    statement that raised (the sandbox stops there). Anything else is a ``crash``, never a pass.

    Example:
        >>> judge(plan_test("assert f(2) == 4"), encode_entries([("v", 4)]))
        ('pass', '')
        >>> judge(plan_test("assert f(2) == 4"), encode_entries([("e", "error", "ZeroDivisionError: division by zero")]))
        ('error', 'ZeroDivisionError: division by zero')
    """
    try:
        entries = read_entries(payload, len(plan.steps))
    except (WireError, RecursionError, MemoryError) as err:
        return "crash", f"unreadable report from the sandbox ({err})"[:MAX_MESSAGE]
    stopped = next((i for i, e in enumerate(entries) if e[0] == "x"), None)
    if stopped is None and len(entries) != len(plan.steps):
        return "crash", "the sandbox reported fewer values than the test has probes"
    fast = plan.fast
    if fast is not None and stopped is None:  # assert <probe> == <literal>: no interpreter needed
        entry = entries[0]
        if entry[0] != "v":
            return entry[1], entry[2][:MAX_MESSAGE]
        try:
            equal = bool(entry[1] == fast[1])
        except Exception as err:  # noqa: BLE001 - a lying truth value of a decoded object, say
            return "error", f"{type(err).__name__}: {err}"[:MAX_MESSAGE]
        return ("pass", "") if equal == fast[0] else ("fail", "AssertionError")
    interp = _Interpreter(entries)
    interp.clean = clean
    env: dict = {}
    try:
        for position, stmt in plan.body:
            if stopped is not None and position > stopped:
                break
            interp.stmt(stmt, env)
    except _ProbeFailed as failed:
        return failed.status, failed.message[:MAX_MESSAGE]
    except AssertionError as err:
        text = str(err)
        return "fail", ("AssertionError: " + text if text else "AssertionError")[:MAX_MESSAGE]
    except JudgeLimit as err:
        return "error", f"judge: {err}"[:MAX_MESSAGE]
    except MemoryError:
        return "error", "judge: the test needs too much memory"
    except RecursionError:
        return "error", "judge: the test recurses too deeply"
    except (_Return, _Break, _Continue):
        return "error", "SyntaxError: 'return', 'break' or 'continue' outside its block"
    except Exception as err:  # noqa: BLE001 - the test's own operations raise like Python would
        return "error", f"{type(err).__name__}: {err}"[:MAX_MESSAGE]
    if stopped is not None:
        return entries[stopped][1], entries[stopped][2][:MAX_MESSAGE]
    return "pass", ""
