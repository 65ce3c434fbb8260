"""Values: what a program's result *is*, independent of the methods its class defines.

``canonical`` rebuilds a value from builtin base data (program-defined objects become :class:`Opaque`),
``hardened_compare`` compares on it and ``strip_value`` reduces a program's subclass of a builtin to the builtin:
the hardening of tests judged inside this server (a split test's values go to the caller's judge through
``_wire``). Stdin/stdout outputs are compared by the caller's judge (``execution/checkers.py``).
"""

from __future__ import annotations

import collections
import enum
import sys

from .pristine import _isinstance, _type, pin_builtins

try:  # started by the sandbox: the execution folder is on the path, the package is not imported
    import _wire
except ImportError:  # imported as part of the package (tests, tools)
    from .. import _wire

pin_builtins(globals())

_IMMUTABLE_TYPE_FLAG = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: set on C-defined types, never on Python classes


class Opaque:
    """Stands for a value built from a Python-defined class; equal only to itself."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name} object>"

    def __reduce__(self):
        return (Opaque, (self.name,))


_ATOMS = (int, bool, float, complex, str, bytes, type(None))
_DEPTH_LIMIT = 200


def canonical(value, *, _depth: int = 0):
    """Rebuild ``value`` from builtin base data, replacing Python-defined objects by :class:`Opaque`.

    Subclasses of builtins are read through the builtin's own slots (``int.__index__``, ``dict.items`` ...), so an
    overridden ``__eq__``/``__iter__``/``__str__`` has no say; numpy scalars become Python numbers. Used by the
    hardening of tests judged inside (the judge reads values through ``_wire`` instead).
    """
    t = _type(value)
    if t in _ATOMS:
        return value
    if _depth > _DEPTH_LIMIT:
        return Opaque("too deeply nested value")
    d = _depth + 1
    if t is list:
        return [canonical(v, _depth=d) for v in value]
    if t is tuple:
        return tuple(canonical(v, _depth=d) for v in value)
    if t is dict:
        return {canonical(k, _depth=d): canonical(v, _depth=d)
                for k, v in value.items()}  # fmt: skip
    if t is set:
        return {canonical(v, _depth=d) for v in value}
    if t is frozenset:
        return frozenset(canonical(v, _depth=d) for v in value)
    if t is _wire._stdlib_class("fractions", "Fraction") or t is _wire._stdlib_class("decimal", "Decimal"):
        return value
    if t is collections.deque:
        return collections.deque(canonical(v, _depth=d) for v in value)
    # Subclasses of builtins: read the builtin's data, ignore the subclass's methods.
    if _isinstance(value, bool):  # pragma: no cover - bool cannot be subclassed
        return bool(value)
    if _isinstance(value, int):
        return int.__index__(value)
    if _isinstance(value, float):
        return float.__float__(value)
    if _isinstance(value, str):
        return str.__str__(value)
    if _isinstance(value, bytes):
        return bytes.__add__(b"", value)
    if _isinstance(value, complex):
        return complex(complex.real.__get__(value), complex.imag.__get__(value))
    if _isinstance(value, list):
        return [canonical(v, _depth=d) for v in list.__iter__(value)]
    if _isinstance(value, tuple):
        return tuple(canonical(v, _depth=d) for v in tuple.__iter__(value))
    if _isinstance(value, dict):
        return {canonical(k, _depth=d): canonical(v, _depth=d)
                for k, v in dict.items(value)}  # fmt: skip
    if _isinstance(value, (set, frozenset)):
        items = [canonical(v, _depth=d) for v in set.__iter__(value)] if _isinstance(
            value, set) else [canonical(v, _depth=d) for v in frozenset.__iter__(value)]
        return set(items) if _isinstance(value, set) else frozenset(items)
    if t.__flags__ & _IMMUTABLE_TYPE_FLAG:
        # Implemented in C: its methods are what its library wrote, not what the program wrote.
        numpy = sys.modules.get("numpy")
        if numpy is not None and _isinstance(value, numpy.generic):
            return canonical(value.item(), _depth=d)
        return value
    return Opaque(getattr(t, "__qualname__", "object"))


def _has_opaque(value, _depth: int = 0) -> bool:
    t = _type(value)
    if t is Opaque:
        return True
    if _depth > _DEPTH_LIMIT:
        return True
    if t in (list, tuple, set, frozenset, collections.deque):
        return any(_has_opaque(v, _depth + 1) for v in value)
    if t is dict:
        return any(_has_opaque(k, _depth + 1) or _has_opaque(v, _depth + 1) for k, v in value.items())
    return False


def _compare(op: str, left, right) -> bool:
    if op == "eq":
        return left == right
    if op == "ne":
        return left != right
    if op == "lt":
        return left < right
    if op == "le":
        return left <= right
    if op == "gt":
        return left > right
    if op == "ge":
        return left >= right
    if op == "in":
        return left in right
    if op == "notin":
        return left not in right
    raise ValueError(op)


def hardened_compare(op: str, left, right) -> bool:
    """Compare as Python would, but on canonical values when exactly one side holds program-defined objects.

    When both sides contain Python-defined objects (a ``ListNode`` against a ``ListNode``) there is nothing
    trusted to compare against, and Python's own semantics apply.
    """
    cl, cr = canonical(left), canonical(right)
    if _has_opaque(cl) and _has_opaque(cr):
        return bool(_compare(op, left, right))
    return bool(_compare(op, cl, cr))


_VALUE_BASES = (int, float, complex, str, bytes)
_CONTAINER_BASES = ((list, list), (dict, dict), (set, set), (frozenset, frozenset))
# Standard-library classes that subclass builtins for good reasons and whose behaviour tests may rely on.
_TRUSTED_SUBCLASSES = frozenset({collections.Counter, collections.OrderedDict, collections.defaultdict})


def strip_value(value):
    """What a program-defined subclass of a builtin really holds, as the plain builtin (shallow).

    Applied to every call result inside a test, so a ``float`` subclass whose ``__sub__`` answers 0.0, or a list
    subclass with a lying ``__len__``, meets the test's arithmetic and builtins as the plain value it is. Objects of
    program classes, enums, named tuples and the standard library's own subclasses pass through unchanged.
    """
    t = _type(value)
    if t in _ATOMS or t in (list, tuple, dict, set, frozenset) or t.__flags__ & _IMMUTABLE_TYPE_FLAG:
        return value
    if t in _TRUSTED_SUBCLASSES or _isinstance(value, enum.Enum):
        return value
    if _isinstance(value, _VALUE_BASES):
        return canonical(value)
    if _isinstance(value, list):
        return list(list.__iter__(value))
    if _isinstance(value, dict):
        return dict(dict.items(value))
    if _isinstance(value, set):
        return set(set.__iter__(value))
    if _isinstance(value, frozenset):
        return frozenset(frozenset.__iter__(value))
    return value
