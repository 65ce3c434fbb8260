"""What a program's own ``__eq__`` says of its objects, asked in the sandbox (the wire's ``h`` objects).

The judge compares the program's objects as data and runs no program code. Where a class defines its own ``__eq__``,
Python asks that ``__eq__``, which may read more than the fields the wire carries (state kept outside the instance).
So the solution process, which runs the program anyway, asks it here, as each probe's value is encoded, about the
pairs of the outermost such snapshots that the judge may find equal as data, and sends the verdicts after the
values; the judge calls two such objects equal only where the data are equal and the verdict says so.

Like ``_wire``, importable without the package (the fork server imports it as a top-level module). Example:
:class:`OwnVerdicts`.
"""

from __future__ import annotations

try:  # started by the sandbox: the execution folder is on the path, the package is not imported
    import _wire
except ImportError:  # imported as part of the package (tests, tools)
    from . import _wire

_type, _id, _len, _isinstance, _dict_items = _wire._type, _wire._id, _wire._len, _wire._isinstance, _wire._dict_items
_equality, _fields, _qualname, _TYPE_FLAGS = _wire._equality, _wire._fields, _wire._qualname, _wire._TYPE_FLAGS
_HEAP_TYPE_FLAG, _SUBCLASSABLE = _wire._HEAP_TYPE_FLAG, _wire._SUBCLASSABLE
_TYPE_DICT, _MRO_OF, _IMMUTABLE = _wire._TYPE_DICT, _wire._MRO_OF, _wire._IMMUTABLE_TYPE_FLAG

__all__ = ["MAX_OWN_OBJECTS", "MAX_OWN_PAIRS", "OwnVerdicts"]

MAX_OWN_OBJECTS = 256  # snapshots of one group (class and data key) with verdicts in one test; past them, none
MAX_OWN_PAIRS = 1 << 16  # verdicts one test sends at most (~1 MiB); a pair past them has none
MAX_CROSS = 32  # snapshots of one class asked about each other's data-different pairs too (528 pairs at most)


def _verdict(a, b, op: str = "==") -> bytes:
    """``T`` where the program's ``__eq__`` (``__ne__``) says true in both orders, ``F`` where it says false in
    both, ``M`` where the orders disagree, ``R`` where it raised (or its answer had no truth): only T and F count."""
    try:
        ab, ba = (bool(a == b), bool(b == a)) if op == "==" else (bool(a != b), bool(b != a))
    except BaseException:  # noqa: BLE001 - the program's __eq__ may raise anything: no verdict
        return b"R"
    return b"T" if ab and ba else b"F" if not (ab or ba) else b"M"


class OwnVerdicts:
    """What the program's own ``__eq__`` says of the pairs of a test's snapshots (``own``, filled by
    ``_wire.encode``: ``(object, outermost)`` per ``h`` object, its index its serial) that the judge may find equal
    as data: one class and one :func:`_data_key`, the diagonal too, in both orders (``a == b`` and ``b == a``).
    Asked after each probe (:meth:`ask`), about the snapshots it added against all before, so each verdict reads the
    objects as they are when that probe's value is taken, as the assert that compares them would in Python.
    :meth:`trailer` is ``=<n>:`` then ``<serial>,<serial>,<T|F|M|R>;`` per pair (:func:`_verdict`; in lower case,
    the verdict of ``!=`` where the class defines its own ``__ne__``), or nothing. Runs the program's code: only in the sandbox, under the test's limits.

    Example:
        >>> class P:
        ...     def __init__(self, x):
        ...         self.x = x
        ...     def __eq__(self, other):
        ...         return self.x == other.x
        >>> own = [(P(1), True), (P(1.0), True), (P(2), True)]
        >>> verdicts = OwnVerdicts()
        >>> verdicts.ask(own)
        >>> verdicts.trailer().count(b";")  # 0-0, 0-1, 1-1, 2-2; and 0-2, 1-2, whose data differ (one class)
        6
    """

    def __init__(self) -> None:
        self.groups: dict = {}  # (class, data key) -> [(serial, object)]
        self.classes: dict = {}  # class -> [(serial, group key)] of its first MAX_CROSS snapshots
        self.own_ne: dict = {}  # class -> whether it defines its own __ne__ (then its verdicts are asked too)
        self.parts: list[bytes] = []
        self.seen = 0  # entries of ``own`` already asked about

    def ask(self, own: list) -> None:
        """Verdicts for the snapshots ``own`` gained since the last call, against every earlier one of their group,
        and, among the first :data:`MAX_CROSS` snapshots of a class, against those of its other groups (the judge
        answers "not equal" for two objects whose data differ only where their ``__eq__`` says so too)."""
        for serial in range(self.seen, _len(own)):
            obj, outermost = own[serial]
            if not outermost:
                continue
            try:
                key = _data_key(obj, [_KEY_ITEMS])
            except (_KeyBudget, RecursionError):
                key = _WILD
            group = self.groups.setdefault((_type(obj), key), [])
            if _len(group) >= MAX_OWN_OBJECTS:
                continue
            group.append((serial, obj))
            for other, b in group:
                if _len(self.parts) >= MAX_OWN_PAIRS:
                    break
                self._add(other, serial, obj, b)
            kin = self.classes.setdefault(_type(obj), [])
            if _len(kin) < MAX_CROSS:
                for other, b, their_key in kin:
                    if their_key != key and _len(self.parts) < MAX_OWN_PAIRS // 2:
                        self._add(other, serial, obj, b)
                kin.append((serial, obj, key))
        self.seen = _len(own)

    def _add(self, first: int, second: int, a, b) -> None:
        """The verdict of ``a == b``, and of ``a != b`` (lower case) where the class defines its own ``__ne__``."""
        self.parts.append(b"%x,%x,%b;" % (first, second, _verdict(a, b)))
        t = _type(a)
        if t not in self.own_ne:
            self.own_ne[t] = any("__ne__" in _TYPE_DICT(k) for k in _MRO_OF(t) if not _TYPE_FLAGS(k) & _IMMUTABLE)
        if self.own_ne[t]:
            self.parts.append(b"%x,%x,%b;" % (first, second, _verdict(a, b, "!=").lower()))

    def trailer(self) -> bytes:
        """The verdicts asked so far, as the report's last part (nothing without any)."""
        return b"=%d:" % _len(self.parts) + b"".join(self.parts) if self.parts else b""


_WILD = ("?",)  # a key for any value: values under it share a group (more verdicts asked, none missing)
_KEY_ITEMS = 10_000  # items one object's key reads; past them it is _WILD
_PLAIN = frozenset([bool, int, float, complex, str, bytes])  # their == and hash are the judge's (1 == 1.0 == True)


class _KeyBudget(Exception):
    pass


def _data_key(value, budget: list):
    """A hashable key equal for any two values the judge's data comparison may call equal: it may put values the
    judge tells apart under one key (:data:`_WILD` for anything it does not read), never two the judge could call
    equal under two, so no pair the judge asks about goes without a verdict."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _KeyBudget
    t = _type(value)
    if value is None or t in _PLAIN:
        return value
    if t is list or t is tuple:
        return (t is list, tuple([_data_key(v, budget) for v in value]))
    if t is dict:
        return ("d", frozenset([(_data_key(k, budget), _data_key(v, budget)) for k, v in _dict_items(value)]))
    if t is set or t is frozenset:
        return ("s", frozenset([_data_key(v, budget) for v in value]))
    if _TYPE_FLAGS(t) & _HEAP_TYPE_FLAG and not _isinstance(value, _SUBCLASSABLE) and not _isinstance(value, type):
        mode = _equality(t)
        if mode == "identity":
            return ("j", _id(value))
        if mode == "data":
            return ("o", _qualname(t), frozenset([(k, _data_key(v, budget)) for k, v in _fields(value)]))
    return _WILD
