"""What the judge's language knows: builtins, modules, methods and attributes it allows, and its size guards.

Everything here is evaluated in the caller's process on decoded values, so each entry is pure and bounded (or
wrapped so that it is): a model-written test cannot make the judge hang or allocate without limit.
"""

from __future__ import annotations

import ast
import builtins
import cmath
import collections
import decimal
import fractions
import functools
import itertools
import json
import math
import statistics
import string

from .._wire_decode import CycleRef, ForeignObject, ProgramObject
from .._wire_records import judge_hash

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
#: Attributes the judge reads on builtin values itself (``f(x).real``); any other of a program's value is a probe.
_BUILTIN_ATTRIBUTES = frozenset().union(*_ATTRIBUTES.values())
for _t in (collections.OrderedDict, collections.defaultdict):
    _METHODS[_t] = _METHODS[dict]
_METHODS[bool] = _METHODS[int]
_METHODS[bytearray] = _METHODS[bytes]  # (none of them changes the value)
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
    table["hash"] = judge_hash  # a program object's own __hash__ gives no number here
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

_MAX_LAZY = 1_000_000  # items one of the judge's itertools iterators yields before it is an error


def _bounded_iterator(fn):
    """An ``itertools`` function whose iterator stops with :class:`JudgeLimit` after ``_MAX_LAZY`` items (``count``,
    ``cycle``, ``permutations(range(20))`` would otherwise run C loops the step budget never sees)."""

    def call(*args, **kwargs):
        for arg in (*args, *kwargs.values()):
            if type(arg) is range:
                _guard_size(len(arg))
        inner = fn(*args, **kwargs)

        def bounded():
            for n, item in enumerate(inner):
                if n >= _MAX_LAZY:
                    raise JudgeLimit(f"the test iterates more than {_MAX_LAZY} items of itertools.{fn.__name__}")
                yield item

        return bounded()

    call.__name__ = fn.__name__
    return call


_MODULES["itertools"] = {name: _bounded_iterator(getattr(itertools, name)) for name in (
    "accumulate", "chain", "combinations", "combinations_with_replacement", "compress", "count", "cycle",
    "dropwhile", "filterfalse", "groupby", "islice", "pairwise", "permutations", "product", "repeat", "starmap",
    "takewhile", "zip_longest")}  # fmt: skip

# ---------------------------------------------------------------------------------------------------------------
# Planning: which parts of a test run where.
# ---------------------------------------------------------------------------------------------------------------


# Operations of the judge's interpreter, with their size guards.

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
