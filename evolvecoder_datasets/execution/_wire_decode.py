"""The value wire's trusted side: :func:`decode` turns the bytes a sandboxed program's values became back into plain
data, and the inert records it builds for what is not plain data.

Only the caller's judge loads this module (the format is described in ``_wire.py``, whose encoder runs inside the
sandbox). There is no pickle and no code path here that calls anything the bytes name; decoding is iterative and
bounded by the input's size, and malformed input raises :class:`~._wire.WireError`.

Example:
    >>> from evolvecoder_datasets.execution._wire import encode
    >>> decode(encode([1, "a", (2.5, None), {"k": {3}}]))
    [1, 'a', (2.5, None), {'k': {3}}]
"""

from __future__ import annotations

import collections
import decimal
import fractions
import functools
import threading

from ._wire import _FACTORIES, _SUBCLASSABLE, MAX_DEPTH, WireError, _isinstance, _len, _type

__all__ = ["decode", "decode_at", "ProgramObject", "ForeignObject", "CycleRef", "IteratorPrefix", "PastThePrefix",
           "MAX_RANGE"]

# a program object's tag -> (how it compares, whether its class answers its own truth); see ``_wire``'s table
_OBJECT_KINDS = {b"o": ("data", False), b"p": ("data", True), b"j": ("identity", False), b"J": ("identity", True),
                 b"k": ("refused", False), b"K": ("refused", True)}
_CONTAINER_TAGS = frozenset([b"l", b"t", b"S", b"Z", b"Q", b"g", b"G", b"d", b"C", b"O", b"W", b"n", b"X", b"Y",
                            b"I"])
_PAIRED_TAGS = frozenset([b"d", b"C", b"O", b"W", b"I"])  # containers whose items are key, value pairs
MAX_RANGE = 1_000_000  # a range is decoded only up to this length: the judge could otherwise be made to walk it


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

    __slots__ = ("name", "items", "fields", "own_truth", "equality", "text", "shown", "wire", "ident", "verdicts")

    def __init__(self, name: str, items: tuple, own_truth: bool = False, equality: str = "data",
                 wire: bool = False) -> None:
        self.name = name
        self.items = items
        self.fields = dict(items)
        self.own_truth = own_truth
        self.equality = equality  # "data", "identity" (no __eq__ in its class: Python's default) or "refused"
        self.text = self.shown = None  # its str and repr as the program's class gave them in the sandbox, if sent
        self.wire = wire  # sent by the sandbox (the judge's own ListNode, made from a test's literal, is not)
        self.ident = None  # its identity in the sandbox, sent where its class defines its own __eq__ (``h``)
        self.verdicts = None  # what that __eq__ said of the pairs of the report's such objects: {(id, id): bool}

    def __bool__(self):
        # An object is true unless its class says otherwise; a class that says so (``__bool__``, ``__len__``)
        # answers with its own code, which could read who is asking, so the judge takes no answer from it.
        if self.own_truth:
            raise TypeError(f"the truth value of a {self.name} object is defined by the program's own code")
        return True

    def __eq__(self, other):
        # Iterative: a linked list of 10,000 nodes compares without recursing 10,000 frames deep. A pair is "under"
        # a pair of objects with their own __eq__ (whose verdict, in Python, decides what else is compared).
        pairs = [(self, other, bool(getattr(_inside_own, "depth", 0)))]
        owned = []  # the outermost pairs of objects whose own __eq__ must agree once all the data are equal
        while pairs:
            a, b, under = pairs.pop()
            if type(b) is not ProgramObject:
                return False
            if "refused" in (a.equality, b.equality):
                raise TypeError(f"{a.name} objects compare by a C base's data, which the judge does not see")
            if a.equality == "identity" and b.equality == "identity":
                # two objects of classes without __eq__: Python compares identities (the same decoded value)
                if a is b:
                    continue
                return False
            if a.name != b.name or a.fields.keys() != b.fields.keys():
                return False
            own = a.wire and b.wire and (a.ident is not None or b.ident is not None)
            if own and not under:
                owned.append((a, b))
            under = under or own
            for key, value in a.fields.items():
                theirs = b.fields[key]
                if type(value) is ProgramObject:
                    pairs.append((value, theirs, under))
                elif type(theirs) is ProgramObject or not _equal_inside(value, theirs, under):
                    return False
        # Equal data; where the program's class defines __eq__, its verdict (computed in the sandbox) must agree,
        # as that __eq__ decides in Python: data kept outside the instance cannot make two objects equal here.
        return all(_own_verdict(a, b) for a, b in owned)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(("ProgramObject", self.name))

    def __repr__(self):
        if self.shown is not None:
            return self.shown
        inner = ", ".join(f"{k}={v!r}" for k, v in self.items)
        return f"<{self.name}({inner})>"[:200]

    def __str__(self):
        return self.text if self.text is not None else self.__repr__()


_inside_own = threading.local()  # .depth: comparisons running inside a pair of objects with their own __eq__


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
    """What the program's own ``__eq__`` said of two of its objects in the sandbox (both orders); a ``TypeError``
    where it sent no such verdict (it raised, the pair was past the cap, or the report carried none)."""
    verdict = None
    if a.ident is not None and b.ident is not None and a.verdicts is not None and a.verdicts is b.verdicts:
        verdict = a.verdicts.get((a.ident, b.ident))
    if verdict is None:
        raise TypeError(f"{a.name} objects compare by the program's own __eq__, which gave no verdict on this pair")
    return verdict


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


class PastThePrefix(Exception):
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
        evolvecoder_datasets.execution._wire_decode.PastThePrefix: the test reads more than the 2 items the program's iterator sent
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
        raise PastThePrefix(f"the test reads more than the {_len(self._items)} items the program's iterator sent")

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


# ---------------------------------------------------------------------------------------------------------------
# Decoding (trusted side).
# ---------------------------------------------------------------------------------------------------------------


def _number(data: bytes, pos: int, end_char: int) -> tuple[int, int]:
    stop = data.find(end_char, pos)
    if stop < 0 or stop == pos or stop - pos > 20:
        raise WireError("malformed count")
    text = data[pos:stop]
    if not text.isdigit():
        raise WireError("malformed count")
    return int(text), stop + 1


def _read_int(data: bytes, pos: int) -> tuple[int, int]:
    if data[pos : pos + 1] != b"i":
        raise WireError("expected an int")
    stop = data.find(b";", pos)
    if stop < 0:
        raise WireError("unterminated int")
    text = data[pos + 1 : stop]
    digits = text[1:] if text[:1] == b"-" else text
    if not digits or not all(c in b"0123456789abcdef" for c in digits[:64]) or not digits.isalnum():
        raise WireError("malformed int")
    try:
        value = int(digits, 16)
    except ValueError as err:
        raise WireError("malformed int") from err
    return (-value if text[:1] == b"-" else value), stop + 1


def _read_float_hex(text: bytes) -> float:
    if _len(text) > 40:
        raise WireError("malformed float")
    try:
        return float.fromhex(text.decode("ascii"))
    except (ValueError, UnicodeDecodeError) as err:
        raise WireError("malformed float") from err


def _read_blob(data: bytes, pos: int) -> tuple[bytes, int]:
    n, pos = _number(data, pos, ord(":"))
    if pos + n > _len(data):
        raise WireError("truncated text")
    return data[pos : pos + n], pos + n


def _read_str(data: bytes, pos: int) -> tuple[str, int]:
    if data[pos : pos + 1] != b"s":
        raise WireError("expected a str")
    blob, pos = _read_blob(data, pos + 1)
    try:
        return blob.decode("utf-8", "surrogatepass"), pos
    except UnicodeDecodeError as err:
        raise WireError("malformed text") from err


class _Frame:
    __slots__ = ("kind", "remaining", "items", "name")

    def __init__(self, kind: bytes, remaining: int, name: str = "") -> None:
        self.kind, self.remaining, self.items, self.name = kind, remaining, [], name


def _close(frame: _Frame):
    kind, items = frame.kind, frame.items
    try:
        if kind == b"l":
            return items
        if kind == b"t":
            return tuple(items)
        if kind == b"S":
            return set(items)
        if kind == b"Z":
            return frozenset(items)
        if kind == b"Q":
            return collections.deque(items)
        if kind == b"g":
            return iter(items)
        if kind == b"G":
            return IteratorPrefix(items)
        if kind == b"d":
            return dict(zip(items[0::2], items[1::2]))
        if kind == b"X":
            return dict.fromkeys(items).keys()
        if kind == b"Y":
            return dict(enumerate(items)).values()
        if kind == b"I":
            return dict(zip(items[0::2], items[1::2])).items()
        if kind == b"u":
            base = items[0]
            if _type(base) not in _SUBCLASSABLE:
                raise WireError("a subclass of something that is not a builtin")
            return _subclass(frame.name, _type(base))(base)
        if kind == b"C":
            return collections.Counter(dict(zip(items[0::2], items[1::2])))
        if kind == b"O":
            return collections.OrderedDict(zip(items[0::2], items[1::2]))
        if kind == b"W":
            return collections.defaultdict(_FACTORIES[frame.name], zip(items[0::2], items[1::2]))
        if kind == b"n":
            return _named_tuple(frame.name, items[0])(*items[1:])
        if kind == b"P":
            return _with_texts(items[0], *frame.name)
        if kind in _OBJECT_KINDS:
            keys = items[0::2]
            if not all(_type(k) is str for k in keys):
                raise WireError("object field names must be text")
            equality, own_truth = _OBJECT_KINDS[kind]
            return ProgramObject(frame.name, tuple(zip(keys, items[1::2])), own_truth=own_truth, equality=equality,
                                 wire=True)  # fmt: skip
        if kind == b"h":
            value = items[0]
            if _type(value) is not ProgramObject or value.equality != "data" or value.ident is not None:
                raise WireError("an identity for a value that is not a program object compared as data")
            value.ident = frame.name
            return value
    except TypeError as err:  # an unhashable item in a set or a dict key
        raise WireError(f"unhashable item: {err}") from err
    raise WireError("unknown container")  # pragma: no cover


def _with_texts(value, text: str | None, shown: str | None):
    """``value`` (a program object, or a program's subclass of a builtin as rebuilt) answering ``str``/``repr``
    with the texts its class gave it in the sandbox."""
    if _type(value) is ProgramObject:
        value.text, value.shown = text, shown
        return value
    base = _type(value).__mro__[1] if _type(value).__dict__.get("_judge_made") else None
    if base not in _SUBCLASSABLE:
        raise WireError("texts for a value that is not a program's object")
    rebuilt = _texted_subclass(_type(value).__name__, base)(base(value))
    rebuilt._judge_text, rebuilt._judge_shown = text, shown
    return rebuilt


@functools.lru_cache(maxsize=256)
def _texted_subclass(name: str, base: type) -> type:
    """:func:`_subclass` whose instances answer ``str``/``repr`` with the texts sent (the base's where none was)."""

    def text(self):
        return self._judge_text if self._judge_text is not None else base.__str__(self)

    def shown(self):
        return self._judge_shown if self._judge_shown is not None else base.__repr__(self)

    return type(name, (base,), {"__str__": text, "__repr__": shown, "_judge_text": None, "_judge_shown": None})


@functools.lru_cache(maxsize=256)
def _subclass(name: str, base: type) -> type:
    """A subclass of ``base`` named like the program's, with no methods of its own: ``type(x) is int`` is false
    for it as it was in the program, while ``==``, arithmetic and ``isinstance`` are the builtin's."""
    return type(name if name.isidentifier() else "subclass", (base,), {"__slots__": (), "_judge_made": True} if
                base not in (int, bytes, tuple) else {"_judge_made": True})  # fmt: skip


@functools.lru_cache(maxsize=256)
def _named_tuple(name: str, fields: tuple):
    if type(fields) is not tuple or not all(type(f) is str for f in fields):
        raise WireError("malformed named tuple")
    try:
        return collections.namedtuple(name if name.isidentifier() else "namedtuple", fields)
    except (ValueError, TypeError) as err:
        raise WireError(f"malformed named tuple: {err}") from err


def decode(data: bytes, max_depth: int = MAX_DEPTH):
    """Decode wire bytes into plain data (see the module docstring). Raises :class:`WireError` on bad input.

    Work and memory are linear in ``len(data)``: every container declares its size, and a declared size larger
    than the bytes that remain is refused before anything is allocated.

    Example:
        >>> decode(b"d1:s1:kl2:i1;TN") is None
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.execution._wire.WireError: trailing bytes after the value
    """
    if not _isinstance(data, bytes):
        raise WireError("wire data must be bytes")
    value, pos = decode_at(data, 0, max_depth)
    if pos != _len(data):
        raise WireError("trailing bytes after the value")
    return value


_RARE_ATOMS = frozenset([b"c", b"R", b"q", b"D", b"?", b"!", b"~"])


def _rare_atom(tag: bytes, data: bytes, pos: int):
    """A complex, range, Fraction, Decimal or foreign value at ``pos``: ``(value, position after it)``."""
    if tag == b"c":
        stop = data.find(b";", pos)
        comma = data.find(b",", pos, stop)
        if stop < 0 or comma < 0:
            raise WireError("malformed complex")
        value = complex(_read_float_hex(data[pos + 1 : comma]), _read_float_hex(data[comma + 1 : stop]))
        pos = stop + 1
    elif tag == b"R":
        start, pos = _read_int(data, pos + 1)
        stop_, pos = _read_int(data, pos)
        step, pos = _read_int(data, pos)
        if step == 0:
            raise WireError("range step 0")
        value = range(start, stop_, step)
        if _len(value) > MAX_RANGE:  # 15 bytes must not stand for 10**18 items the judge might walk
            raise WireError(f"a range of more than {MAX_RANGE} items")
    elif tag == b"q":
        num, pos = _read_int(data, pos + 1)
        den, pos = _read_int(data, pos)
        if den <= 0:
            raise WireError("malformed fraction")
        value = fractions.Fraction(num, den)
    elif tag == b"D":
        text, pos = _read_str(data, pos + 1)
        if _len(text) > 4096:
            raise WireError("decimal too long")
        try:
            value = decimal.Decimal(text)
        except (decimal.InvalidOperation, ValueError) as err:
            raise WireError("malformed decimal") from err
    else:
        name, pos = _read_str(data, pos + 1)
        text, pos = _read_str(data, pos)
        value = ForeignObject(name, text, {b"?": True, b"!": False}.get(tag))
    return value, pos


def _read_texts(data: bytes, pos: int) -> tuple[tuple, int]:
    """The two texts of a ``P`` wrapper at ``pos`` (a str or ``N`` each): ``((str, repr), position after)``."""
    texts = []
    for _ in range(2):
        if data[pos : pos + 1] == b"N":
            texts.append(None)
            pos += 1
        else:
            text, pos = _read_str(data, pos)
            texts.append(text)
    return tuple(texts), pos


def read_identity(data: bytes, pos: int, end: bytes = b";") -> tuple[int, int]:
    """An object's identity in the sandbox at ``pos``: lower-case hex up to ``end`` (at most 16 digits); returns
    ``(identity, position after the end byte)``.

    Example:
        >>> read_identity(b"v7f3a;", 1)
        (32570, 6)
    """
    stop = data.find(end, pos, pos + 17)
    digits = data[pos:stop]
    if stop < 0 or not digits or not all(c in b"0123456789abcdef" for c in digits):
        raise WireError("malformed object identity")
    return int(digits, 16), stop + 1


def decode_at(data: bytes, pos: int = 0, max_depth: int = MAX_DEPTH, owned: list | None = None):
    """Decode the one value that starts at ``pos``; returns ``(value, position after it)``. ``owned`` (a list)
    collects the program objects sent with their identity (``h``), for the verdicts of their ``__eq__``.

    Example:
        >>> decode_at(b"i2a;N", 0)
        (42, 4)
    """
    n = _len(data)
    stack: list[_Frame] = []
    result = _NOTHING = object()
    while True:
        if pos >= n:
            raise WireError("truncated value")
        tag = data[pos : pos + 1]
        value = _NOTHING
        if tag == b"N":
            value, pos = None, pos + 1
        elif tag == b"T":
            value, pos = True, pos + 1
        elif tag == b"F":
            value, pos = False, pos + 1
        elif tag == b"i":
            value, pos = _read_int(data, pos)
        elif tag == b"f":
            stop = data.find(b";", pos)
            if stop < 0:
                raise WireError("unterminated float")
            value, pos = _read_float_hex(data[pos + 1 : stop]), stop + 1
        elif tag == b"s":
            value, pos = _read_str(data, pos)
        elif tag == b"b" or tag == b"B":
            value, pos = _read_blob(data, pos + 1)
            value = value if tag == b"b" else bytearray(value)
        elif tag in _RARE_ATOMS:
            value, pos = _rare_atom(tag, data, pos)
        elif tag == b"y":
            depth, pos = _number(data, pos + 1, ord(";"))
            if depth < 1 or depth > _len(stack):
                raise WireError("reference outside the value")
            value = CycleRef(depth)
        elif tag == b"P" or tag == b"h" or tag == b"u":  # one value wrapped: its texts, identity, subclass name
            if tag == b"P":
                name, pos = _read_texts(data, pos + 1)
            elif tag == b"h":
                name, pos = read_identity(data, pos + 1)
            else:
                name, pos = _read_str(data, pos + 1)
            if _len(stack) >= max_depth:
                raise WireError("value too deeply nested")
            stack.append(_Frame(tag, 1, name))
            continue
        elif tag in _CONTAINER_TAGS or tag in _OBJECT_KINDS:
            count, pos = _number(data, pos + 1, ord(":"))
            need = count * 2 if tag in _PAIRED_TAGS or tag in _OBJECT_KINDS else count
            if need > n - pos:  # every item takes at least one byte
                raise WireError("declared size larger than the data")
            name = ""
            if tag in (b"W", b"n") or tag in _OBJECT_KINDS:
                name, pos = _read_str(data, pos)
            if tag == b"W" and name not in _FACTORIES:
                raise WireError("unknown defaultdict factory")
            if tag == b"n":
                need += 1  # the field names, a tuple of str, come first
            if _len(stack) >= max_depth:
                raise WireError("value too deeply nested")
            frame = _Frame(tag, need, name)
            if need:
                stack.append(frame)
                continue
            value = _close(frame)
        else:
            raise WireError(f"unknown tag {tag!r}")
        # Deliver the finished value to its container(s).
        while True:
            if not stack:
                result = value
                break
            top = stack[-1]
            top.items.append(value)
            top.remaining -= 1
            if top.remaining:
                break
            stack.pop()
            value = _close(top)
            if top.kind == b"h" and owned is not None:
                owned.append(value)
        if result is not _NOTHING:
            return result, pos
