"""The value wire: how results of a program's calls leave the untrusted process and reach the judge.

The untrusted side (:func:`encode`, run inside the sandbox) turns a value into bytes; the trusted side
(:func:`decode`, run by the judge in a process that never executed program code) turns bytes back into plain
data. There is no pickle and no code path on the trusted side that calls anything the bytes name: decoding builds
only ``None``, ``bool``, ``int``, ``float``, ``complex``, ``str``, ``bytes``, ``bytearray``, ``list``, ``tuple``,
``set``, ``frozenset``, ``dict`` and its three views, ``range``, ``fractions.Fraction``, ``decimal.Decimal``,
``collections.deque``, a list iterator (for generators the program returned; an ``IteratorPrefix`` for one that
went on past ``MAX_ITERATOR_ITEMS``), and two inert records: :class:`ProgramObject` (an instance of a
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
    G<n>:<items>                the first n items of an iterator that went on past ``MAX_ITERATOR_ITEMS``
    d<n>:<k v ...>              dict        I<n>:<k v ...>   a dict's items view        B<n>:<bytes>   bytearray
    X Y <n>:<items>             a dict's keys view, values view (the judge's is a view of a dict of those items)
    o<n>:<name><k v ...>        ProgramObject with n fields (name and keys are str items), of a class with its own
                                __eq__ (compared as data); j: of a class without one (compared by identity, as
                                Python does); k: of a class whose C base defines it (equality refused)
    p J K <n>:<name><k v ...>   the same three, for a class that defines its own __bool__ or __len__
    C O <n>:<k v ...>           collections.Counter, collections.OrderedDict (their behaviour is the stdlib's)
    W<n>:<factory><k v ...>     collections.defaultdict whose factory is a builtin type, named by a str item
    n<n>:<name><fields><items>  a named tuple: class name, a tuple of field names, then n items
    R<i><i><i>                  range        q<i><i>  Fraction        D<str>   Decimal
    ?<name><repr>               ForeignObject (true; ``!`` false, ``~`` its truth unknown: ``bool`` raised)
    y<depth>;                   a reference back to an enclosing container
    u<name><value>              an instance of a program's subclass of a builtin: the builtin data it holds, and
                                its class name (the judge rebuilds it as a method-less subclass of that name)
    P<str|N|F><str|N|F><value>  the ``str`` and ``repr`` the program's class gives a value (a program object or
                                subclass whose class defines ``__str__``/``__repr__``), computed in the sandbox
                                (``F``: it raised or was too long, the judge refuses it)
    M<str><i|N|F><value>        its classes' own dunders (comma-separated; the judge refuses what they answer)
                                and its hash (``N`` unhashable, ``F`` none)
    h<hex>;<value>              a program object whose class defines its own ``__eq__``, with its serial in the
                                test (probed twice, two serials): equal to the judge where the data are equal and
                                that ``__eq__``'s verdicts (``_wire_own``, of the outermost such objects) say so

This file must stay importable without the package (the fork server imports it by itself) and holds the encoding
side only: the decoding side and the records it builds (:class:`ProgramObject`, :class:`ForeignObject`,
:class:`CycleRef`) are in ``_wire_decode.py``, which only the caller loads (the fork server's image, which every
test's fork copies, stays without them, and without ``fractions``/``decimal``).

Example:
    >>> encode([1, "a", (2.5, None), {"k": {3}}])
    b'l4:i1;s1:at2:f0x1.4000000000000p+1;Nd1:s1:kS1:i3;'
"""

from __future__ import annotations

import builtins
import collections
import collections.abc
import sys

try:  # started by the sandbox: the execution folder is on the path, the package is not imported
    import _wire_class
except ImportError:  # imported as part of the package
    from . import _wire_class

__all__ = ["MAX_DEPTH", "TooLarge", "WireError", "encode"]

MAX_DEPTH = 10_000  # a linked list of 10,000 program nodes still travels; deeper is refused
MAX_ITERATOR_ITEMS = 100_000  # items of a returned iterator sent; one that goes on (an infinite one) sends these
_IMMUTABLE_TYPE_FLAG = 1 << 8  # set on C-defined types, never on classes written in Python
_HEAP_TYPE_FLAG = 1 << 9  # set on classes made at run time (a class statement, type(...))


class WireError(ValueError):
    """Bytes that are not a well-formed, in-bounds encoding (a crash of the program's report, never a pass)."""


class TooLarge(ValueError):
    """Raised by :func:`encode` when a value exceeds the byte or depth bound."""


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


def _stdlib_class(module: str, name: str):
    """``module.name`` if ``module`` is loaded (no value of its class can exist otherwise), else None."""
    loaded = sys.modules.get(module)
    return getattr(loaded, name, None) if loaded is not None else None


def _int_token(value: int) -> bytes:
    return b"i-%x;" % -value if value < 0 else b"i%x;" % value


def _str_token(value: str) -> bytes:
    data = _str_encode(value, "utf-8", "surrogatepass")
    return b"s%d:%b" % (_len(data), data)


_TYPE_FLAGS = type.__dict__["__flags__"].__get__  # the type's real flags: a metaclass property cannot answer


def _builtin_data(value, t) -> bool:
    """Whether ``value`` (of type ``t``) travels as the builtin data it is, not as a subclass under its name: a C
    type's instance, a stdlib container, or a named tuple (a tuple subclass whose ``_fields`` name its items). A
    program's ``int`` subclass that sets ``_fields`` is a subclass like any other (``type(v) is int`` stays false)."""
    if _TYPE_FLAGS(t) & _IMMUTABLE_TYPE_FLAG or t in _STDLIB_SUBCLASSES:
        return True
    if not _isinstance(value, tuple):
        return False
    try:
        names = getattr(t, "_fields", None)
    except Exception:  # noqa: BLE001 - a class may refuse
        return False
    return (_type(names) is tuple and all(_type(n) is str for n in names) and _len(names) == tuple.__len__(value)
            and not _wire_class.own_names(t, tuple))  # one with dunders of its own is a subclass, refused where they answer


def _qualname(t) -> str:
    try:
        module = _object_getattribute(t, "__module__")
        name = type.__dict__["__qualname__"].__get__(t)
    except Exception:  # noqa: BLE001 - a type may refuse
        return "object"
    if _type(module) is not str or _type(name) is not str:
        return "object"
    return name if module in ("builtins", "__main__", "solution") else f"{module}.{name}"


_TYPE_DICT = type.__dict__["__dict__"].__get__  # a class's own namespace, whatever its metaclass says
_PROXY_ITEMS = _type(type.__dict__).items


def _class_fields(klass) -> list:
    """A program class as a value: its name, then the data in its own namespace (not dunders, not functions or
    other descriptors, which stay in the sandbox), so ``Registry.plugins`` can be read and two classes differ."""
    out = [("__name__", _qualname(klass))]
    try:
        items = list(_PROXY_ITEMS(_TYPE_DICT(klass)))
    except Exception:  # noqa: BLE001 - a class may refuse
        return out
    for k, v in items:
        if _type(k) is not str or k.startswith("__"):
            continue
        try:
            descriptor = any("__get__" in _TYPE_DICT(c) for c in _type(v).__mro__)
        except Exception:  # noqa: BLE001
            descriptor = True
        if not descriptor:
            out.append((k, v))
    return out


def _fields(value) -> list:
    """``(name, value)`` pairs of a program object's instance dict and slots, read without its own methods (for a
    class, :func:`_class_fields`)."""
    if _isinstance(value, type):
        return _class_fields(value)
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


def encode(value, max_bytes: int = 4 << 20, max_depth: int = MAX_DEPTH, own: list | None = None) -> bytes:
    """Encode ``value`` (any object) as wire bytes. Raises :class:`TooLarge` past ``max_bytes``/``max_depth``.
    With ``own`` (a list, one per test), each program object whose class defines its own ``__eq__`` travels with
    its serial in the test (``h``, its index in ``own``) and is appended to ``own`` as ``(object, outermost)``; the
    sandbox sends the verdicts of their ``__eq__`` beside the values (``_wire_own.OwnVerdicts``).

    Example:
        >>> encode([1, "ab", None])
        b'l3:i1;s2:abN'
    """
    t = _type(value)
    if t in _FLAT_ATOMS:  # a scalar: no work stack (in the sandbox every object made is a page copied)
        data = _FLAT_ATOMS[t](value)
        if _len(data) > max_bytes:
            raise TooLarge(f"value too large to compare (over {max_bytes} bytes)")
        return data
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
    texts_left = _MAX_TEXTS
    pop_marker, own_pop = _PopMarker, _OwnPopMarker
    own_above = 0  # objects with their own __eq__ being encoded around this item
    classes: dict = {}  # what was read of each class's own dunders (``_wire_class.own_dunders``)
    while stack:
        item = stack.pop()
        if item is pop_marker:
            path.pop()
            continue
        if item is own_pop:
            path.pop()
            own_above -= 1
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
                    marker = pop_marker
                    kind = header[:1]
                    if texted := kind in _TEXTED_KINDS:  # its class's own dunders: the judge refuses their answers
                        header = _dunders(item, classes) + header
                    elif kind in _READ_KINDS and _TYPE_FLAGS(_type(item)) & _HEAP_TYPE_FLAG:
                        header = _dunders(item, classes, _READ_DUNDERS) + header  # a mapping or iterator class's
                    if own is not None and kind in _DATA_OBJECT_TAGS and _own_eq(_type(item)):
                        # its serial in the test: one object probed twice is two snapshots, each with verdicts
                        header = b"h%x;" % _len(own) + header
                        own.append((item, not own_above))  # the outermost: Python asks its __eq__; inside it,
                        own_above += 1  # that __eq__ does
                        marker = own_pop
                    if texts_left and _len(path) < _TEXT_DEPTH and texted:
                        texts = _texts(item)
                        texts_left -= _len(texts) > 0
                        header = texts + header
                    out.append(header)
                    size += _len(header)
                    path.append(ident)
                    stack.append(marker)
                    stack.extend(reversed(children))
                    if size > max_bytes:
                        raise TooLarge(f"value too large to compare (over {max_bytes} bytes)")
                    continue
        out.append(chunk)
        size += _len(chunk)
        if size > max_bytes:
            raise TooLarge(f"value too large to compare (over {max_bytes} bytes)")
    return b"".join(out)


_TEXT_DEPTH = 3  # program objects this near the top carry their texts (a linked list's head, not its every node)
_MAX_TEXTS = 64  # objects of one value that carry them
_MAX_TEXT = 1 << 16  # a longer text is not sent
_TEXTED_KINDS = frozenset([b"o", b"p", b"j", b"J", b"k", b"K", b"u"])
_MRO_OF = type.__dict__["__mro__"].__get__


def _texts(value) -> bytes:
    """``P`` and the ``str`` and ``repr`` of ``value`` where its class (below any C base) defines ``__str__`` or
    ``__repr__``, else nothing. They are the program's own code, run here as any of its code runs, and travel as
    its claim, as a returned string does; one that raises or is too long travels as ``F`` (the judge refuses it)."""
    try:
        own, stop = False, _wire_class.below(value, _isinstance(value, _SUBCLASSABLE))
        for klass in _MRO_OF(_type(value)):
            if klass is stop:
                break
            names = _TYPE_DICT(klass)
            if "__str__" in names or "__repr__" in names:
                own = True
                break
    except Exception:  # noqa: BLE001 - a class may refuse
        return b""
    if not own:
        return b""
    parts = [b"P"]
    for show in (str, repr):
        try:
            text = show(value)
            token = _str_token(_str_str(text)) if _isinstance(text, str) and _len(text) <= _MAX_TEXT else b"F"
        except BaseException:  # noqa: BLE001 - the program's __str__ may raise anything
            token = b"F"
        parts.append(token)
    return b"".join(parts)


_READ_KINDS = frozenset([b"d", b"g", b"G"])  # a class of the program's sent as what it iterates to
_READ_DUNDERS = frozenset(["__iter__", "__next__"])  # which the encoding reproduces


def _dunders(value, classes: dict, modelled=frozenset()) -> bytes:
    """``M``, the dunders of ``value``'s classes the judge does not rebuild (``_wire_class.own_dunders``) and its
    hash where ``__hash__`` is one (the program's own code, run here as its ``__str__`` is); or nothing."""
    mro = _MRO_OF(_type(value))
    names = _wire_class.own_dunders(value, _isinstance(value, _SUBCLASSABLE), classes) - modelled
    if not names:
        return b""
    hashed = b"F"  # N: its class sets __hash__ = None (defining __eq__ alone does); F: it raised
    if "__hash__" in names:
        try:
            found = next(_TYPE_DICT(k)["__hash__"] for k in mro if "__hash__" in _TYPE_DICT(k))
            number = None if found is None else hash(value)
            hashed = b"N" if found is None else _int_token(number) if _type(number) is int else b"F"
        except BaseException:  # noqa: BLE001 - the program's __hash__ may raise anything
            hashed = b"F"
    return b"M" + _str_token(",".join(sorted(names))) + hashed


class _Raw:
    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


_PopMarker = _Raw(b"")
_OwnPopMarker = _Raw(b"")  # the end of an object with its own __eq__


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
    if t is bytearray:
        return b"B%d:%b" % (_len(value), bytes(value))
    if t is complex:
        return b"c%b,%b;" % (_float_hex(value.real).encode("ascii"), _float_hex(value.imag).encode("ascii"))
    if t is range:
        return b"R" + _int_token(value.start) + _int_token(value.stop) + _int_token(value.step)
    if t is _stdlib_class("fractions", "Fraction"):  # (looked up, not imported: the server's image stays small)
        return b"q" + _int_token(int(value.numerator)) + _int_token(int(value.denominator))
    if t is _stdlib_class("decimal", "Decimal"):
        return b"D" + _str_token(str(value))
    if t in _SEQ_TAGS or t is dict:
        return None
    # Subclasses of builtins travel as the builtin data they hold (their methods have no say), under their name.
    if _isinstance(value, _SUBCLASSABLE) and not _builtin_data(value, t):
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


_DICT_ITEMS = _type({}.items())
_VIEW_TAGS = {_type({}.keys()): b"X", _type({}.values()): b"Y", _DICT_ITEMS: b"I"}
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
    if _isinstance(value, _SUBCLASSABLE) and not _builtin_data(value, t):
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
    if _isinstance(value, tuple) and not _TYPE_FLAGS(t) & _IMMUTABLE_TYPE_FLAG:
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
    if t in _VIEW_TAGS:  # read by dict's own iteration: a view of a dict subclass still yields its stored items
        items = list(value)
        if t is _DICT_ITEMS:
            items = [part for pair in items for part in pair]
        return _VIEW_TAGS[t] + b"%d:" % (_len(items) // 2 if t is _DICT_ITEMS else _len(items)), items
    flags = _TYPE_FLAGS(t)
    # A class of the program's (``class X: ...``, whose type is ``type`` itself) travels as a program class does
    # under its own metaclass: its name and the data of its namespace (:func:`_class_fields`).
    plain_class = t is type and _TYPE_FLAGS(value) & _HEAP_TYPE_FLAG and not _TYPE_FLAGS(value) & _IMMUTABLE_TYPE_FLAG
    if flags & _IMMUTABLE_TYPE_FLAG and not plain_class:
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
        return _consumed(value)
    fields = _fields(value)
    children: list = [_qualname(t)]
    for k, v in fields:
        children.append(k)
        children.append(v)
    own = any("__bool__" in klass.__dict__ or "__len__" in klass.__dict__ for klass in t.__mro__[:-1])
    return _OBJECT_TAGS[(_equality(t), own)] + b"%d:" % _len(fields), children


# (how its instances compare, whether its class answers its own truth) -> the tag of a program object
_OBJECT_TAGS = {("data", False): b"o", ("data", True): b"p", ("identity", False): b"j", ("identity", True): b"J",
                ("refused", False): b"k", ("refused", True): b"K"}


_DATA_OBJECT_TAGS = (b"o", b"p")


def _own_eq(t: type) -> bool:
    """Whether instances of the program's class ``t`` (compared as data) answer ``==`` with an ``__eq__`` of the
    program's (its own or a dataclass's), not a class sent as a value."""
    return not issubclass(t, type)


def _equality(t: type) -> str:
    """How instances of the program's class ``t`` compare: ``identity`` where no class below ``object`` defines
    ``__eq__`` (Python compares them by identity); ``refused`` where a C-implemented base does (a ``deque``, an
    ``array``: its data is not among the fields sent); else ``data`` (the program's own ``__eq__``, which the judge
    does not run: it compares class names and fields). A class sent as a value (``t`` a metaclass) compares as
    data: its name and namespace stand for the one class object, which every decoded copy of it is."""
    if issubclass(t, type):
        return "data"
    for klass in t.__mro__[:-1]:
        if "__eq__" in klass.__dict__:
            return "data" if _TYPE_FLAGS(klass) & _HEAP_TYPE_FLAG else "refused"
    return "identity"


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
            return _truth(value), ["numpy.ndarray", repr(value.tolist())[: 1 << 20]]
    if hasattr(t, "__next__") and hasattr(t, "__iter__"):  # generators, map/filter/zip objects: consume them
        return _consumed(value)
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001
        text = "<unrepresentable>"
    return _truth(value), [_qualname(t), text[:4096]]


def _consumed(value) -> tuple[bytes, list]:
    """An iterator as what it yields: all of it (``g``), or its first ``MAX_ITERATOR_ITEMS`` items where it yields
    more (``G``: the judge's copy is an error past them, never a shorter end), so an infinite generator travels."""
    items: list = []
    for item in value:
        if _len(items) == MAX_ITERATOR_ITEMS:
            return b"G%d:" % _len(items), items
        items.append(item)
    return b"g%d:" % _len(items), items


def _truth(value) -> bytes:
    """The foreign tag that carries ``value``'s truth, its C type's own: ``?`` true, ``!`` false, ``~`` none to
    give (``bool`` raised, as for a numpy array of several items)."""
    try:
        return b"?" if bool(value) else b"!"
    except Exception:  # noqa: BLE001
        return b"~"
