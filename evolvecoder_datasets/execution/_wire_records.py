"""The records the value wire's trusted side builds for what is not plain data (:class:`ProgramObject`,
:class:`ForeignObject`, :class:`CycleRef`, :class:`IteratorPrefix`) and the judge's refusals (:class:`Unjudged`):
split from ``_wire_decode.py``, which re-exports them, so each stays small. Only the caller's judge loads them.

Example:
    >>> ProgramObject("P", (("x", 1),)) == ProgramObject("P", (("x", 1),))
    True
"""

from __future__ import annotations

import threading

from ._wire import _len


class Unjudged(Exception):
    """An operation whose answer, in Python, is the program's own code (a dunder its class defines: ``__ne__``,
    ``__len__``, ``__lt__``, ``__format__``...), which the judge does not run. The verdict is an error: no
    ``except`` of the test catches it (``except TypeError`` would turn the judge's refusal into a pass)."""


def _refuse(name: str, dunder: str):
    raise Unjudged(f"{name}.{dunder} is the program's own code, which the judge does not run")


NO_TEXT = object()  # a text the program's class gives, which did not travel (it raised, or was too long)


def sent_text(text, name: str, dunder: str) -> str:
    """A text the sandbox sent for a value (its class's ``__str__``/``__repr__``); a refusal where it sent none."""
    if text is NO_TEXT:
        _refuse(name, dunder)
    return text


class ProgramObject:
    """An instance of a class the program defined, as data: its class name and its fields.

    Two are equal when they have the same class name and equal fields (structural equality), never equal to a
    builtin value; two of classes that define no ``__eq__`` (``equality="identity"``) only when they are the same
    value, as in Python; one whose C base defines ``__eq__`` (``"refused"``: its data is not sent) cannot be
    compared. The judge's own ``ListNode``/``TreeNode`` compare as data. Its fields are readable as attributes.

    Example:
        >>> a = ProgramObject("ListNode", (("val", 1), ("next", None)))
        >>> a == ProgramObject("ListNode", (("val", 1), ("next", None))), a == 1, a.fields["val"]
        (True, False, 1)
    """

    __slots__ = (
        "equality",
        "fields",
        "ident",
        "items",
        "name",
        "own",
        "own_hash",
        "own_truth",
        "shown",
        "text",
        "verdicts",
        "wire",
    )

    def __init__(
        self, name: str, items: tuple, own_truth: bool = False, equality: str = "data", wire: bool = False
    ) -> None:
        self.name = name
        self.items = items
        self.fields = dict(items)
        self.own_truth = own_truth
        self.equality = equality  # "data", "identity" (no __eq__ in its class: Python's default) or "refused"
        self.text = self.shown = (
            None  # its str and repr as the program's class gave them in the sandbox, if sent
        )
        self.wire = wire  # sent by the sandbox (the judge's own ListNode, made from a test's literal, is not)
        self.ident = None  # its identity in the sandbox, sent where its class defines its own __eq__ (``h``)
        self.verdicts = (
            None  # what that __eq__ said of the pairs of the report's such objects: {(id, id): bool}
        )
        self.own = (
            frozenset()
        )  # the dunders its class defines (``M``): the judge refuses the operations they answer
        self.own_hash = None  # where __hash__ is among them: the sandbox's hash of it (_UNHASHABLE: none)

    @property
    def __class__(self):
        # isinstance reads it where the type does not match: a class of the program's may claim another there
        if "__class__" in self.own:
            _refuse(self.name, "__class__")
        return ProgramObject

    def __bool__(self):
        # An object is true unless its class says otherwise; a class that says so (``__bool__``, ``__len__``)
        # answers with its own code, which could read who is asking, so the judge takes no answer from it.
        if self.own_truth:
            _refuse(self.name, "__bool__")
        return True

    def __eq__(self, other):
        # Iterative: a linked list of 10,000 nodes compares without recursing 10,000 frames deep. Each pair carries
        # its owner: the outermost pair of objects with their own __eq__ it is under (whose verdict, in Python,
        # decides what else is compared), _NESTED inside a comparison an outer owner decides, or None.
        pairs = [(self, other, _NESTED if getattr(_inside_own, "depth", 0) else None)]
        owned = []  # the outermost pairs of objects whose own __eq__ must agree once all the data are equal
        while pairs:
            a, b, owner = pairs.pop()
            if type(b) is not ProgramObject:
                if owner is None and a.wire and a.ident is not None:  # Python asks its __eq__, about a value
                    _refuse(a.name, "__eq__ (asked about a value that is not the program's object)")
                return _differ(owner)
            if "refused" in (a.equality, b.equality):
                _refuse(a.name, "__eq__ (a C base's, whose data the judge does not see)")
            if a.equality == "identity" and b.equality == "identity":
                # two objects of classes without __eq__: Python compares identities (the same decoded value)
                if a is b:
                    continue
                return _differ(owner)
            if owner is None and a.ident is not None and b.ident is not None and a.verdicts is b.verdicts:
                # two snapshots of one report, where Python's answer is that __eq__'s; an object of another
                # process (the test's own class, built by a clean process or by the judge) is compared as data
                owner = (a, b)
                owned.append(owner)
            if a.name != b.name or a.fields.keys() != b.fields.keys():
                return _differ(owner)
            for key, value in a.fields.items():
                theirs = b.fields[key]
                if type(value) is ProgramObject:
                    pairs.append((value, theirs, owner))
                elif type(theirs) is ProgramObject or not _equal_inside(value, theirs, owner is not None):
                    return _differ(owner)
        # Equal data; where the program's class defines __eq__, its verdict (computed in the sandbox) must agree,
        # as that __eq__ decides in Python: data kept outside the instance cannot make two objects equal here.
        return all(_own_verdict(a, b) for a, b in owned)

    def __ne__(self, other):
        if "__ne__" not in self.own and (type(other) is not ProgramObject or "__ne__" not in other.own):
            return not self.__eq__(other)
        # the program's own __ne__ answers, as its verdict in the sandbox says; "not different" only where the
        # data and its __eq__ agree too (two objects whose data differ are never equal to the judge)
        if type(other) is not ProgramObject or None in (self.ident, other.ident) or self.verdicts is not other.verdicts:
            return not self.__eq__(other)  # not two of the sandbox's snapshots: no verdict to ask, the data decide
        verdict = None
        if self.verdicts is not None and self.verdicts is other.verdicts:
            verdict = self.verdicts.get((self.ident, other.ident, "!="))
        if verdict is None or not verdict and not self.__eq__(other):
            _refuse(self.name, "__ne__ (no verdict on this pair)")
        return verdict

    def __hash__(self):
        # Sets and dicts: objects of one class whose program's __hash__ differ (computed in the sandbox) fall apart
        # as in Python, then __eq__ (data and verdict) decides. That number is the sandbox's: where ``hash(x)``
        # shows it to a test it is refused (its hashes of str and tuple are not the judge's process's).
        if "__hash__" not in self.own:
            return hash(("ProgramObject", self.name))
        if self.own_hash is _UNHASHABLE:
            raise TypeError(f"unhashable type: '{self.name}'")
        if self.own_hash is None or getattr(shown_hash, "on", False):
            _refuse(self.name, "__hash__")
        return hash(("ProgramObject", self.name, self.own_hash))

    def __format__(self, spec):
        if "__format__" in self.own:
            _refuse(self.name, "__format__")
        if spec:
            raise TypeError(f"unsupported format string passed to {self.name}.__format__")
        return str(self)

    def __repr__(self):
        if self.shown is not None:
            return sent_text(self.shown, self.name, "__repr__")
        inner = ", ".join(f"{k}={v!r}" for k, v in self.items)
        return f"<{self.name}({inner})>"[:200]

    def __str__(self):
        return sent_text(self.text, self.name, "__str__") if self.text is not None else self.__repr__()


def _guard(dunder: str, binary: bool):
    """A dunder of :class:`ProgramObject`: the judge's refusal where the program's class defines it, else what
    Python does for a class without it (``NotImplemented`` for an operator, a ``TypeError`` otherwise)."""

    def method(self, *args):
        if dunder in self.own:
            _refuse(self.name, dunder)
        if binary:
            return NotImplemented
        raise TypeError(f"{self.name} object does not support {dunder}")

    method.__name__ = dunder
    return method


_BINARY = [
    "lt",
    "le",
    "gt",
    "ge",
    "add",
    "sub",
    "mul",
    "matmul",
    "truediv",
    "floordiv",
    "mod",
    "divmod",
    "pow",
    "lshift",
    "rshift",
    "and",
    "or",
    "xor",
    "radd",
    "rsub",
    "rmul",
    "rmatmul",
    "rtruediv",
    "rfloordiv",
    "rmod",
    "rdivmod",
    "rpow",
    "rlshift",
    "rrshift",
    "rand",
    "ror",
    "rxor",
]
_UNARY = [
    "neg",
    "pos",
    "abs",
    "invert",
    "round",
    "trunc",
    "floor",
    "ceil",
    "int",
    "float",
    "complex",
    "index",
    "len",
    "iter",
    "reversed",
    "contains",
    "getitem",
]
for _name in _BINARY + _UNARY:
    setattr(ProgramObject, f"__{_name}__", _guard(f"__{_name}__", _name in _BINARY))
_UNHASHABLE = object()  # ``own_hash`` of an object whose class sets ``__hash__ = None`` (Python's unhashable)


_inside_own = threading.local()  # .depth: comparisons running inside a pair of objects with their own __eq__
shown_hash = threading.local()  # .on: the judge's hash() is asked for a number the test reads


def judge_hash(value) -> int:
    """``hash(value)`` as a test reads it: a program object whose class has its own ``__hash__`` is refused."""
    shown_hash.on = True
    try:
        return hash(value)
    finally:
        shown_hash.on = False


def _equal_inside(value, theirs, under: bool) -> bool:
    """``value == theirs`` for two fields, where a container's items compared by it (a list of the program's
    objects) know whether they are inside a pair whose own ``__eq__`` decides."""
    if not under:
        return value == theirs
    _inside_own.depth = getattr(_inside_own, "depth", 0) + 1
    try:
        return value == theirs
    finally:
        _inside_own.depth -= 1


def _own_verdict(a: ProgramObject, b: ProgramObject) -> bool:
    """What the program's own ``__eq__`` said of two of its objects in the sandbox (both orders agreeing); refused
    (:class:`Unjudged`) where it sent no such verdict (it raised, the orders disagreed, the pair was past the cap,
    or the report carried none)."""
    verdict = None
    if a.ident is not None and b.ident is not None and a.verdicts is not None and a.verdicts is b.verdicts:
        verdict = a.verdicts.get((a.ident, b.ident))
    if verdict is None:
        _refuse(a.name, "__eq__ (no verdict on this pair)")
    return verdict


_NESTED = ("nested",)  # the owner of pairs compared inside a pair an outer comparison's owner decides


def _differ(owner) -> bool:
    """``False`` for two values whose data differ, where Python would say so too: outside objects with their own
    ``__eq__`` (``owner`` None), inside a pair an outer comparison decides, or where that ``__eq__`` said "not
    equal" in both orders in the sandbox. Where it said "equal" (``Frac(1, 2) == Frac(2, 4)``) or gave no verdict,
    the judge has no answer (an ``__eq__`` that always says yes would pass ``a != b`` otherwise)."""
    if owner is None or owner is _NESTED:
        return False
    if _own_verdict(*owner):
        _refuse(owner[0].name, "__eq__ (it calls equal two objects whose data differ)")
    return False


class ForeignObject:
    """A C-implemented value without a wire tag (``datetime.date``, a numpy array ...): type name and ``repr``.

    Equal to another foreign object of the same type and the same ``repr``; never equal to a builtin value. Its truth
    is its type's own, sent with it (``truth``; ``None`` where ``bool`` raised: then asking for it is a ``TypeError``).

    Example:
        >>> ForeignObject("datetime.date", "datetime.date(2020, 1, 1)") == ForeignObject("datetime.date", "datetime.date(2020, 1, 1)")
        True
    """

    __slots__ = ("name", "text", "truth")

    def __init__(self, name: str, text: str, truth: bool | None = True) -> None:
        self.name, self.text, self.truth = name, text, truth

    def __bool__(self):
        # Its truth is its C type's own (an empty bytearray, a zero timedelta, an empty dict view are false), sent
        # beside its repr; where the type gave none (``bool`` raised), the judge takes none either.
        if self.truth is None:
            raise TypeError(f"the truth value of a {self.name} value is ambiguous")
        return self.truth

    def __eq__(self, other):
        return type(other) is ForeignObject and other.name == self.name and other.text == self.text

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash((self.name, self.text))

    def __repr__(self):
        return self.text[:200]


class PastThePrefix(Unjudged):
    """A test read an iterator past the items the sandbox sent (the judge's verdict is an error, never a pass)."""


class IteratorPrefix:
    """An iterator the program returned that yielded more than the wire sends: its first items, then
    :class:`PastThePrefix` (not ``StopIteration``: its end is not known). Like a generator, it is equal only to
    itself, true, and has no ``len``.

    Example:
        >>> it = IteratorPrefix([0, 1])
        >>> next(it), next(it)
        (0, 1)
        >>> next(it)
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.execution._wire_records.PastThePrefix: the test reads more than the 2 items the program's iterator sent
    """

    __slots__ = ("_items", "_next")

    def __init__(self, items: list) -> None:
        self._items, self._next = items, 0

    def __iter__(self):
        return self

    def __next__(self):
        if self._next < _len(self._items):
            self._next += 1
            return self._items[self._next - 1]
        raise PastThePrefix(
            f"the test reads more than the {_len(self._items)} items the program's iterator sent"
        )

    def __repr__(self):
        return f"<iterator: {_len(self._items)} items sent, more not>"


class CycleRef:
    """A container that contains itself: the reference points ``depth`` levels up."""

    __slots__ = ("depth",)

    def __init__(self, depth: int) -> None:
        self.depth = depth

    def __eq__(self, other):
        return type(other) is CycleRef and other.depth == self.depth

    def __hash__(self):
        return hash(("CycleRef", self.depth))

    def __repr__(self):
        return "[...]"
