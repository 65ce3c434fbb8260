"""The value wire's trusted side: :func:`decode` turns the bytes a sandboxed program's values became back into plain
data, and the inert records it builds for what is not plain data (kept in ``_wire_records.py``, re-exported here).
A program's subclass of a builtin whose class defines dunders of its own (``M``) is rebuilt with each of them
refusing (:class:`Unjudged`): what Python would ask of the program's code, the judge does not answer.

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

from ._wire import _FACTORIES, _SUBCLASSABLE, MAX_DEPTH, WireError, _isinstance, _len, _type
from ._wire_records import (
    _UNHASHABLE,
    NO_TEXT,
    CycleRef,
    ForeignObject,
    IteratorPrefix,
    PastThePrefix,
    ProgramObject,
    Unjudged,
    _refuse,
    sent_text,
)

__all__ = [
    "MAX_RANGE",
    "CycleRef",
    "ForeignObject",
    "IteratorPrefix",
    "PastThePrefix",
    "ProgramObject",
    "Unjudged",
    "decode",
    "decode_at",
]  # fmt: skip

# a program object's tag -> (how it compares, whether its class answers its own truth); see ``_wire``'s table
_OBJECT_KINDS = {b"o": ("data", False), b"p": ("data", True), b"j": ("identity", False), b"J": ("identity", True),
                 b"k": ("refused", False), b"K": ("refused", True)}
_CONTAINER_TAGS = frozenset([b"l", b"t", b"S", b"Z", b"Q", b"g", b"G", b"d", b"C", b"O", b"W", b"n", b"X", b"Y",
                            b"I"])
_PAIRED_TAGS = frozenset([b"d", b"C", b"O", b"W", b"I"])  # containers whose items are key, value pairs
MAX_RANGE = 1_000_000  # a range is decoded only up to this length: the judge could otherwise be made to walk it


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
    __slots__ = ("items", "kind", "name", "remaining")

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
        if kind == b"M":
            return _with_own(items[0], *frame.name)
        if kind == b"h":
            value = items[0]
            if _type(value) is not ProgramObject or value.equality != "data" or value.ident is not None:
                raise WireError("an identity for a value that is not a program object compared as data")
            value.ident = frame.name
            return value
    except (TypeError, Unjudged) as err:  # an unhashable item in a set or a dict key, or one only its class compares
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
    if _type(value).__dict__.get("_judge_own") is not None:  # it answers str/repr from what it holds
        value._judge_text, value._judge_shown = text, shown
        return value
    rebuilt = _texted_subclass(_type(value).__name__, base)(base(value))
    rebuilt._judge_text, rebuilt._judge_shown = text, shown
    return rebuilt


@functools.lru_cache(maxsize=256)
def _texted_subclass(name: str, base: type) -> type:
    """:func:`_subclass` whose instances answer ``str``/``repr`` with the texts sent (the base's where none was)."""

    def text(self):
        sent = self._judge_text
        return sent_text(sent, name, "__str__") if sent is not None else base.__str__(self)

    def shown(self):
        sent = self._judge_shown
        return sent_text(sent, name, "__repr__") if sent is not None else base.__repr__(self)

    return type(name, (base,), {"__str__": text, "__repr__": shown, "_judge_text": None, "_judge_shown": None})


@functools.lru_cache(maxsize=256)
def _subclass(name: str, base: type) -> type:
    """A subclass of ``base`` named like the program's, with no methods of its own: ``type(x) is int`` is false
    for it as it was in the program, while ``==``, arithmetic and ``isinstance`` are the builtin's."""
    return type(name if name.isidentifier() else "subclass", (base,), {"__slots__": (), "_judge_made": True} if
                base not in (int, bytes, tuple) else {"_judge_made": True})  # fmt: skip


@functools.lru_cache(maxsize=256)
def _refusing_subclass(name: str, base: type, own: frozenset) -> type:
    """:func:`_subclass` for a program class that defines dunders of its own (``own``): each operation Python would
    answer with one of them is :class:`Unjudged` here (Python's own dispatch finds the refusal where it would find
    the program's method, ``__hash__`` included), ``str``/``repr`` the texts sent."""
    get = object.__getattribute__

    def text(self):
        sent = get(self, "_judge_text")
        return sent_text(sent, name, "__str__") if sent is not None else base.__str__(self)

    def shown(self):
        sent = get(self, "_judge_shown")
        return sent_text(sent, name, "__repr__") if sent is not None else base.__repr__(self)

    def hashed(self):  # its program's own: a number in the judge's process would not match the sandbox's hashes
        if get(self, "_judge_hash") is _UNHASHABLE:
            raise TypeError(f"unhashable type: '{name}'")
        _refuse(name, "__hash__")

    def refuser(dunder):
        return lambda self, *args, **kwargs: _refuse(name, dunder)

    space = {dunder: refuser(dunder) for dunder in own if dunder not in _KEPT}
    if "__class__" in own:  # a class it claims to be: isinstance reads it where the real type does not match
        space["__class__"] = property(refuser("__class__"))
    space.update(__str__=text, __repr__=shown, _judge_made=True, _judge_own=own, _judge_text=None, _judge_shown=None,
                 _judge_hash=None, __hash__=hashed if "__hash__" in own else base.__hash__)
    return type(name if name.isidentifier() else "subclass", (base,), space)


# dunders the rebuilt class keeps as the judge's (texts travel; construction is the judge's own)
_KEPT = frozenset(["__str__", "__repr__", "__hash__", "__new__", "__init__", "__class__", "__dict__", "__slots__",
                   "__weakref__", "__init_subclass__", "__set_name__", "__class_getitem__", "__setattr__",
                   "__delattr__"])


def _with_own(value, own: frozenset, hashed):
    """``value`` (a program object, or a program's subclass of a builtin as rebuilt) whose class defines the dunders
    ``own``, with the hash the sandbox computed (``M``: a program object's sets use it among its kind)."""
    if _type(value) is ProgramObject:
        value.own, value.own_hash = own, hashed
        return value
    if _type(value) is dict:  # a mapping class of the program's, sent as the dict it iterates to
        return _refusing_subclass("mapping", dict, own)(value)
    if _type(value) is _LIST_ITERATOR or _type(value) is IteratorPrefix:  # an iterator class of the program's
        return _refusing_iterator(own)(value)
    base = _type(value).__mro__[1] if _type(value).__dict__.get("_judge_made") else None
    if base not in _SUBCLASSABLE or _type(value).__dict__.get("_judge_own") is not None:
        raise WireError("dunders for a value that is not a program's object")
    rebuilt = _refusing_subclass(_type(value).__name__, base, own)(base(value))
    rebuilt._judge_hash = hashed
    return rebuilt


_LIST_ITERATOR = _type(iter([]))


@functools.lru_cache(maxsize=256)
def _refusing_iterator(own: frozenset) -> type:
    """An iterator of the program's class: what it yielded (sent), and a refusal for every other dunder its class
    defines (``len`` of it, ``in`` ...)."""

    def refuser(dunder):
        return lambda self, *args, **kwargs: _refuse("iterator", dunder)

    space = {dunder: refuser(dunder) for dunder in own if dunder not in _KEPT}
    space.update(__slots__=("_items",), __init__=lambda self, items: object.__setattr__(self, "_items", items),
                 __iter__=lambda self: self,
                 __next__=lambda self: next(self._items), __hash__=object.__hash__)
    return type("iterator", (), space)


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
        if data[pos : pos + 1] in (b"N", b"F"):  # F: the program's text raised or was too long to send
            texts.append(None if data[pos : pos + 1] == b"N" else NO_TEXT)
            pos += 1
        else:
            text, pos = _read_str(data, pos)
            texts.append(text)
    return tuple(texts), pos


def _read_own(data: bytes, pos: int) -> tuple[tuple, int]:
    """The dunders of an ``M`` wrapper at ``pos`` (a str of comma-separated names) and its hash (an int; ``N``:
    unhashable; ``F``: the program's ``__hash__`` raised): ``((names, hash), position after)``."""
    text, pos = _read_str(data, pos)
    own = frozenset(text.split(","))
    if not all(_len(n) > 4 and n[:2] == n[-2:] == "__" and n[2:-2].isidentifier() for n in own):
        raise WireError("malformed dunder names")
    tag = data[pos : pos + 1]
    if tag == b"i":
        hashed, pos = _read_int(data, pos)
    elif tag == b"N" or tag == b"F":
        hashed, pos = _UNHASHABLE if tag == b"N" else None, pos + 1
    else:
        raise WireError("malformed hash")
    return (own, hashed), pos


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
        elif tag == b"P" or tag == b"h" or tag == b"u" or tag == b"M":  # one value wrapped: its texts, identity,
            if tag == b"P":  # subclass name, or the dunders its class defines
                name, pos = _read_texts(data, pos + 1)
            elif tag == b"M":
                name, pos = _read_own(data, pos + 1)
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
