"""The value wire: how results of a program's calls leave the untrusted process and reach the judge.

The untrusted side (:func:`encode`, run inside the sandbox) turns a value into bytes; the trusted side
(:func:`decode`, run by the judge in a process that never executed program code) turns bytes back into plain
data. There is no pickle and no code path on the trusted side that calls anything the bytes name: decoding builds
only ``None``, ``bool``, ``int``, ``float``, ``complex``, ``str``, ``bytes``, ``list``, ``tuple``, ``set``,
``frozenset``, ``dict``, ``range``, ``fractions.Fraction``, ``decimal.Decimal``, ``collections.deque``, a list
iterator (for generators the program returned), and two inert records: :class:`ProgramObject` (an instance of a
class the program defined, as its class name and fields) and :class:`ForeignObject` (a C-implemented value the wire
has no tag for, as its type name and ``repr``). Decoding is iterative and bounded by the input's size; malformed
input raises :class:`WireError`.

Whatever the encoder produces is the program's *claim* about its value: a program can make it claim anything,
exactly as it can return anything. What it cannot do is change what the judge does with the claim.

Format (bytes; counts and lengths are ASCII decimal)::

    N T F                       None, True, False
    i<hex>;                     int (``-`` sign allowed), hex so that huge ints cost linear time
    f<float.hex>;               float          c<re.hex>,<im.hex>;   complex
    s<n>:<utf-8 bytes>          str (surrogates kept with surrogatepass)      b<n>:<bytes>   bytes
    l t S Z Q g  <n>:<items>    list, tuple, set, frozenset, deque, consumed iterator
    d<n>:<k v ...>              dict
    o<n>:<name><k v ...>        ProgramObject with n fields (name and keys are str items)
    p<n>:<name><k v ...>        the same, for a class that defines its own __bool__ or __len__
    C O <n>:<k v ...>           collections.Counter, collections.OrderedDict (their behaviour is the stdlib's)
    W<n>:<factory><k v ...>     collections.defaultdict whose factory is a builtin type, named by a str item
    n<n>:<name><fields><items>  a named tuple: class name, a tuple of field names, then n items
    R<i><i><i>                  range        q<i><i>  Fraction        D<str>   Decimal
    ?<name><repr>               ForeignObject          y<depth>;   a reference back to an enclosing container
    u<name><value>              an instance of a program's subclass of a builtin: the builtin data it holds, and
                                its class name (the judge rebuilds it as a method-less subclass of that name)

This file must stay importable without the package (the fork server imports it by itself).

Example:
    >>> decode(encode([1, "a", (2.5, None), {"k": {3}}]))
    [1, 'a', (2.5, None), {'k': {3}}]
"""

from __future__ import annotations

import builtins
import collections
import collections.abc
import decimal
import fractions
import functools

__all__ = ["encode", "decode", "WireError", "ProgramObject", "ForeignObject", "CycleRef", "MAX_DEPTH"]

MAX_DEPTH = 10_000  # a linked list of 10,000 program nodes still travels; deeper is refused
MAX_RANGE = 1_000_000  # a range is decoded only up to this length: the judge could otherwise be made to walk it
_IMMUTABLE_TYPE_FLAG = 1 << 8  # set on C-defined types, never on classes written in Python


class WireError(ValueError):
    """Bytes that are not a well-formed, in-bounds encoding (a crash of the program's report, never a pass)."""


class TooLarge(ValueError):
    """Raised by :func:`encode` when a value exceeds the byte or depth bound."""


class ProgramObject:
    """An instance of a class the program defined, as data: its class name and its fields.

    Two are equal when they have the same class name and equal fields (structural equality), never equal to a
    builtin value. Its fields are readable as attributes by the judge.

    Example:
        >>> a = ProgramObject("ListNode", (("val", 1), ("next", None)))
        >>> a == ProgramObject("ListNode", (("val", 1), ("next", None))), a == 1, a.fields["val"]
        (True, False, 1)
    """

    __slots__ = ("name", "items", "fields", "own_truth")

    def __init__(self, name: str, items: tuple, own_truth: bool = False) -> None:
        self.name = name
        self.items = items
        self.fields = dict(items)
        self.own_truth = own_truth

    def __bool__(self):
        # An object is true unless its class says otherwise; a class that says so (``__bool__``, ``__len__``)
        # answers with its own code, which could read who is asking, so the judge takes no answer from it.
        if self.own_truth:
            raise TypeError(f"the truth value of a {self.name} object is defined by the program's own code")
        return True

    def __eq__(self, other):
        # Iterative: a linked list of 10,000 nodes compares without recursing 10,000 frames deep.
        pairs = [(self, other)]
        while pairs:
            a, b = pairs.pop()
            if type(b) is not ProgramObject or a.name != b.name or a.fields.keys() != b.fields.keys():
                return False
            for key, value in a.fields.items():
                theirs = b.fields[key]
                if type(value) is ProgramObject:
                    pairs.append((value, theirs))
                elif type(theirs) is ProgramObject or not value == theirs:
                    return False
        return True

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(("ProgramObject", self.name))

    def __repr__(self):
        inner = ", ".join(f"{k}={v!r}" for k, v in self.items)
        return f"<{self.name}({inner})>"[:200]


class ForeignObject:
    """A C-implemented value without a wire tag (``datetime.date``, a numpy array ...): type name and ``repr``.

    Equal to another foreign object of the same type and the same ``repr``; never equal to a builtin value.

    Example:
        >>> ForeignObject("datetime.date", "datetime.date(2020, 1, 1)") == ForeignObject("datetime.date", "datetime.date(2020, 1, 1)")
        True
    """

    __slots__ = ("name", "text")

    def __init__(self, name: str, text: str) -> None:
        self.name, self.text = name, text

    def __eq__(self, other):
        return type(other) is ForeignObject and other.name == self.name and other.text == self.text

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash((self.name, self.text))

    def __repr__(self):
        return self.text[:200]


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
# Encoding (untrusted side). Reads builtin data through the builtin types' own slots, so that a subclass's
# overridden __iter__/__eq__/__str__ has no say in what travels.
# ---------------------------------------------------------------------------------------------------------------

# Builtins as they were at import, before any program ran: a program that rebinds builtins.list or isinstance does
# not change how this module reads values (in the sandbox) or decodes them (in the judge).
globals().update({_k: _v for _k, _v in vars(builtins).items() if not _k.startswith("__")})
_type, _isinstance, _len, _id = type, isinstance, len, id
_list_iter, _tuple_iter, _dict_items = list.__iter__, tuple.__iter__, dict.items
_set_iter, _frozenset_iter = set.__iter__, frozenset.__iter__
_int_index, _float_float, _str_str = int.__index__, float.__float__, str.__str__
_float_hex, _str_encode = float.hex, str.encode
_SEQ_TAGS = {list: b"l", tuple: b"t", set: b"S", frozenset: b"Z", collections.deque: b"Q"}
_object_getattribute = object.__getattribute__
_Mapping = collections.abc.Mapping


def _int_token(value: int) -> bytes:
    return b"i-%x;" % -value if value < 0 else b"i%x;" % value


def _str_token(value: str) -> bytes:
    data = _str_encode(value, "utf-8", "surrogatepass")
    return b"s%d:%b" % (_len(data), data)


def _qualname(t) -> str:
    try:
        module = _object_getattribute(t, "__module__")
        name = type.__dict__["__qualname__"].__get__(t)
    except Exception:  # noqa: BLE001 - a type may refuse
        return "object"
    if _type(module) is not str or _type(name) is not str:
        return "object"
    return name if module in ("builtins", "__main__", "solution") else f"{module}.{name}"


def _fields(value) -> list:
    """``(name, value)`` pairs of a program object's instance dict and slots, read without its own methods."""
    out = []
    try:
        d = _object_getattribute(value, "__dict__")
    except Exception:  # noqa: BLE001
        d = None
    if _isinstance(d, dict):
        out.extend((k, v) for k, v in _dict_items(d) if _type(k) is str)
    for klass in _type(value).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        if _isinstance(slots, str):
            slots = (slots,)
        for name in slots if _isinstance(slots, (tuple, list)) else ():
            if _type(name) is str and name not in ("__dict__", "__weakref__"):
                try:
                    out.append((name, _object_getattribute(value, name)))
                except Exception:  # noqa: BLE001 - an unset slot
                    continue
    return out


def encode(value, max_bytes: int = 4 << 20, max_depth: int = MAX_DEPTH) -> bytes:
    """Encode ``value`` (any object) as wire bytes. Raises :class:`TooLarge` past ``max_bytes``/``max_depth``.

    Example:
        >>> encode([1, "ab", None])
        b'l3:i1;s2:abN'
    """
    t = _type(value)
    if t is list or t is tuple:  # the common shape, a flat sequence of scalars: one pass, no work stack
        parts = [_FLAT_ATOMS[_type(v)](v) if _type(v) in _FLAT_ATOMS else None for v in value]
        if None not in parts:
            data = (b"l%d:" if t is list else b"t%d:") % _len(parts) + b"".join(parts)
            if _len(data) > max_bytes:
                raise TooLarge(f"value too large to compare (over {max_bytes} bytes)")
            return data
    out: list[bytes] = []
    size = 0
    # Work stack of pending items: a value to encode, or raw bytes to emit, or a path marker to pop.
    stack: list = [value]
    path: list[int] = []  # ids of the containers being encoded (cycles)
    pop_marker = _PopMarker
    while stack:
        item = stack.pop()
        if item is pop_marker:
            path.pop()
            continue
        if _type(item) is _Raw:
            chunk = item.data
        else:
            chunk = _atom(item)
            if chunk is None:  # a container or an object
                ident = _id(item)
                if ident in path:
                    chunk = b"y%d;" % (_len(path) - path.index(ident))
                elif _len(path) >= max_depth:
                    raise TooLarge("value too deeply nested to compare")
                else:
                    header, children = _container(item)
                    out.append(header)
                    size += _len(header)
                    path.append(ident)
                    stack.append(pop_marker)
                    stack.extend(reversed(children))
                    if size > max_bytes:
                        raise TooLarge(f"value too large to compare (over {max_bytes} bytes)")
                    continue
        out.append(chunk)
        size += _len(chunk)
        if size > max_bytes:
            raise TooLarge(f"value too large to compare (over {max_bytes} bytes)")
    return b"".join(out)


class _Raw:
    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


_PopMarker = _Raw(b"")


def _atom(value):
    """Bytes of a scalar value, or None for containers and objects."""
    t = _type(value)
    if value is None:
        return b"N"
    if t is bool:
        return b"T" if value else b"F"
    if t is int:
        return _int_token(value)
    if t is str:
        return _str_token(value)
    if t is float:
        return b"f%b;" % _float_hex(value).encode("ascii")
    if t is bytes:
        return b"b%d:%b" % (_len(value), value)
    if t is complex:
        return b"c%b,%b;" % (_float_hex(value.real).encode("ascii"), _float_hex(value.imag).encode("ascii"))
    if t is range:
        return b"R" + _int_token(value.start) + _int_token(value.stop) + _int_token(value.step)
    if t is fractions.Fraction:
        return b"q" + _int_token(int(value.numerator)) + _int_token(int(value.denominator))
    if t is decimal.Decimal:
        return b"D" + _str_token(str(value))
    if t in _SEQ_TAGS or t is dict:
        return None
    # Subclasses of builtins travel as the builtin data they hold (their methods have no say), under their name.
    if not t.__flags__ & _IMMUTABLE_TYPE_FLAG and _isinstance(value, _SUBCLASSABLE) \
            and not hasattr(t, "_fields") and t not in _STDLIB_SUBCLASSES:
        return None
    if _isinstance(value, int):
        return _int_token(_int_index(value))
    if _isinstance(value, float):
        return b"f%b;" % _float_hex(_float_float(value)).encode("ascii")
    if _isinstance(value, str):
        return _str_token(_str_str(value))
    if _isinstance(value, bytes):
        return b"b%d:%b" % (_len(value), bytes.__add__(b"", value))
    if _isinstance(value, complex):
        return _atom(complex(complex.real.__get__(value), complex.imag.__get__(value)))
    return None


_SUBCLASSABLE = (int, float, complex, str, bytes, list, tuple, dict, set, frozenset)
_STDLIB_SUBCLASSES = (collections.Counter, collections.OrderedDict, collections.defaultdict, collections.deque)


def _as_base(value):
    """The plain builtin a subclass instance holds, read through the builtin's own slots."""
    if _isinstance(value, int):
        return _int_index(value)
    if _isinstance(value, float):
        return _float_float(value)
    if _isinstance(value, complex):
        return complex(complex.real.__get__(value), complex.imag.__get__(value))
    if _isinstance(value, str):
        return _str_str(value)
    if _isinstance(value, bytes):
        return bytes.__add__(b"", value)
    if _isinstance(value, list):
        return list(_list_iter(value))
    if _isinstance(value, tuple):
        return tuple(_tuple_iter(value))
    if _isinstance(value, dict):
        return dict(_dict_items(value))
    if _isinstance(value, set):
        return set(_set_iter(value))
    return frozenset(_frozenset_iter(value))


_FACTORIES = {"list": list, "int": int, "set": set, "dict": dict, "str": str, "float": float, "tuple": tuple}


def _mapping_items(value) -> list:
    children = []
    for k, v in _dict_items(value):
        children.append(k)
        children.append(v)
    return children


_FLAT_ATOMS = {int: _int_token, str: _str_token, bool: lambda v: b"T" if v else b"F",
               float: lambda v: b"f%b;" % _float_hex(v).encode("ascii"), type(None): lambda v: b"N"}


def _container(value) -> tuple[bytes, list]:
    """Header bytes and child items of a container, a program object or a foreign value."""
    t = _type(value)
    if not t.__flags__ & _IMMUTABLE_TYPE_FLAG and _isinstance(value, _SUBCLASSABLE) \
            and not hasattr(t, "_fields") and t not in _STDLIB_SUBCLASSES:
        return b"u", [_qualname(t).rpartition(".")[2], _as_base(value)]
    if t is collections.Counter or t is collections.OrderedDict:
        children = _mapping_items(value)
        return (b"C" if t is collections.Counter else b"O") + b"%d:" % (_len(children) // 2), children
    if t is collections.defaultdict:
        factory = value.default_factory
        name = next((k for k, f in _FACTORIES.items() if factory is f), None)
        if name is not None:
            children = _mapping_items(value)
            return b"W%d:" % (_len(children) // 2), [name, *children]
    if _isinstance(value, tuple) and not t.__flags__ & _IMMUTABLE_TYPE_FLAG:
        names = getattr(t, "_fields", None)
        if _type(names) is tuple and all(_type(n) is str for n in names):
            items = list(_tuple_iter(value))
            if _len(items) == _len(names):
                return b"n%d:" % _len(items), [_qualname(t).rpartition(".")[2], names, *items]
    if t is list or (t not in _SEQ_TAGS and _isinstance(value, list)):
        items = list(_list_iter(value))
        return b"l%d:" % _len(items), items
    if t is tuple or (t not in _SEQ_TAGS and _isinstance(value, tuple)):
        items = list(_tuple_iter(value))
        return b"t%d:" % _len(items), items
    if t is dict or _isinstance(value, dict):
        children = []
        for k, v in _dict_items(value):
            children.append(k)
            children.append(v)
        return b"d%d:" % (_len(children) // 2), children
    if t is set or _isinstance(value, set):
        items = list(_set_iter(value))
        return b"S%d:" % _len(items), items
    if t is frozenset or _isinstance(value, frozenset):
        items = list(_frozenset_iter(value))
        return b"Z%d:" % _len(items), items
    if t is collections.deque:
        items = list(value)
        return b"Q%d:" % _len(items), items
    flags = t.__flags__
    if flags & _IMMUTABLE_TYPE_FLAG:
        return _foreign(value, t)
    # A class written in Python (the program's, or a pure-Python library's). A mapping (``os.environ``, a
    # ``UserDict``) travels as the dict it iterates to, an iterator as what it yields: in the sandbox, so whatever
    # code that runs is the program's own claim about its value.
    if _isinstance(value, _Mapping):
        children = []
        for k, v in list(value.items()):
            children.append(k)
            children.append(v)
        return b"d%d:" % (_len(children) // 2), children
    if hasattr(t, "__next__") and hasattr(t, "__iter__"):
        items = list(value)
        return b"g%d:" % _len(items), items
    fields = _fields(value)
    children: list = [_qualname(t)]
    for k, v in fields:
        children.append(k)
        children.append(v)
    own = any("__bool__" in klass.__dict__ or "__len__" in klass.__dict__ for klass in t.__mro__[:-1])
    return (b"p" if own else b"o") + b"%d:" % _len(fields), children


def _foreign(value, t) -> tuple[bytes, list]:
    import sys

    numpy = sys.modules.get("numpy")
    if numpy is not None:
        if _isinstance(value, numpy.generic):  # numpy scalars travel as the Python numbers they hold
            item = value.item()
            atom = _atom(item) if _type(item) in (bool, int, float, complex, str, bytes) else None
            if atom is not None:
                return atom, []
        if t is numpy.ndarray:
            return b"?", ["numpy.ndarray", repr(value.tolist())[: 1 << 20]]
    if hasattr(t, "__next__") and hasattr(t, "__iter__"):  # generators, map/filter/zip objects: consume them
        items = list(value)
        return b"g%d:" % _len(items), items
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001
        text = "<unrepresentable>"
    return b"?", [_qualname(t), text[:4096]]


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
        if kind == b"d":
            return dict(zip(items[0::2], items[1::2]))
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
        if kind in (b"o", b"p"):
            keys = items[0::2]
            if not all(_type(k) is str for k in keys):
                raise WireError("object field names must be text")
            return ProgramObject(frame.name, tuple(zip(keys, items[1::2])), own_truth=kind == b"p")
    except TypeError as err:  # an unhashable item in a set or a dict key
        raise WireError(f"unhashable item: {err}") from err
    raise WireError("unknown container")  # pragma: no cover


@functools.lru_cache(maxsize=256)
def _subclass(name: str, base: type) -> type:
    """A subclass of ``base`` named like the program's, with no methods of its own: ``type(x) is int`` is false
    for it as it was in the program, while ``==``, arithmetic and ``isinstance`` are the builtin's."""
    return type(name if name.isidentifier() else "subclass", (base,), {"__slots__": ()} if base not in (
        int, bytes, tuple) else {})  # fmt: skip


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


def decode_at(data: bytes, pos: int = 0, max_depth: int = MAX_DEPTH):
    """Decode the one value that starts at ``pos``; returns ``(value, position after it)``.

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
        elif tag == b"c":
            stop = data.find(b";", pos)
            comma = data.find(b",", pos, stop)
            if stop < 0 or comma < 0:
                raise WireError("malformed complex")
            value = complex(_read_float_hex(data[pos + 1 : comma]), _read_float_hex(data[comma + 1 : stop]))
            pos = stop + 1
        elif tag == b"s":
            value, pos = _read_str(data, pos)
        elif tag == b"b":
            value, pos = _read_blob(data, pos + 1)
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
        elif tag == b"?":
            name, pos = _read_str(data, pos + 1)
            text, pos = _read_str(data, pos)
            value = ForeignObject(name, text)
        elif tag == b"y":
            depth, pos = _number(data, pos + 1, ord(";"))
            if depth < 1 or depth > _len(stack):
                raise WireError("reference outside the value")
            value = CycleRef(depth)
        elif tag == b"u":
            name, pos = _read_str(data, pos + 1)
            if _len(stack) >= max_depth:
                raise WireError("value too deeply nested")
            stack.append(_Frame(b"u", 1, name))
            continue
        elif tag in (b"l", b"t", b"S", b"Z", b"Q", b"g", b"d", b"o", b"p", b"C", b"O", b"W", b"n"):
            count, pos = _number(data, pos + 1, ord(":"))
            need = count * 2 if tag in (b"d", b"o", b"p", b"C", b"O", b"W") else count
            if need > n - pos:  # every item takes at least one byte
                raise WireError("declared size larger than the data")
            name = ""
            if tag in (b"o", b"p", b"W", b"n"):
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
        if result is not _NOTHING:
            return result, pos
