"""What a value's own class answers with: the dunders the judge does not rebuild, sent beside the value (``M``).

The judge rebuilds a program's subclass of a builtin as that builtin, and a program object as its class name and
fields. Any dunder of the program's classes above what it rebuilds (above the builtin; above ``object`` for a
class of its own, so a C base such as ``deque`` counts) answers some operation in Python with the program's code,
which the judge never runs: it refuses those operations instead. Read here through ``type``'s own descriptors, so a
metaclass cannot hide or invent them. Like ``_wire``, importable without the package (the fork server imports it as
a top-level module).

Example:
    >>> class Liar(list):
    ...     def __len__(self):
    ...         return 0
    >>> sorted(own_dunders(Liar([1]), True))
    ['__len__']
"""

from __future__ import annotations

__all__ = ["own_dunders", "own_names"]

_type, _isinstance, _len = type, isinstance, len
_TYPE_DICT = type.__dict__["__dict__"].__get__  # a class's own namespace, whatever its metaclass says
_MRO_OF = type.__dict__["__mro__"].__get__
_TYPE_FLAGS = type.__dict__["__flags__"].__get__
_PROXY_ITEMS = _type(type.__dict__).items
_IMMUTABLE_TYPE_FLAG = 1 << 8  # set on C-defined types, never on classes written in Python
_object_getattribute = object.__getattribute__
_MISSING = object()

# Dunders that answer nothing the judge does with a value (construction, pickling, writes, texts sent on their own)
_QUIET_DUNDERS = frozenset("""__module__ __qualname__ __doc__ __dict__ __weakref__ __slots__ __annotations__ __init__
    __new__ __init_subclass__ __class_getitem__ __firstlineno__ __static_attributes__ __orig_bases__ __parameters__
    __match_args__ __dataclass_fields__ __dataclass_params__ __set_name__ __reduce__ __reduce_ex__ __copy__
    __deepcopy__ __getstate__ __setstate__ __getnewargs__ __getnewargs_ex__ __del__ __setattr__ __delattr__
    __setitem__ __delitem__ __str__ __repr__ __dir__ __sizeof__ __subclasshook__ __abstractmethods__ __post_init__
    __enter__ __exit__ __call__ __type_params__ __annotate__""".split())
# What the judge assumes where a class cannot be read: every operation it might answer is the program's
_ALL_REFUSED = frozenset(["__eq__", "__ne__", "__hash__", "__bool__", "__len__", "__iter__", "__contains__",
                          "__getitem__", "__format__", "__getattribute__", "__class__", "__lt__"])


def below(value, subclass: bool):
    """The class the judge rebuilds for ``value``: the builtin of a program's subclass of one (``subclass``), else
    ``object``."""
    mro = _MRO_OF(_type(value))
    return next(k for k in mro if _TYPE_FLAGS(k) & _IMMUTABLE_TYPE_FLAG) if subclass else object


def own_names(t, stop) -> set:
    """The non-quiet dunders ``t``'s classes above ``stop`` define; one copied from ``stop`` (``IntEnum.__format__``
    is ``int.__format__``) is ``stop``'s."""
    names, kept = set(), _TYPE_DICT(stop)
    for klass in _MRO_OF(t):
        if klass is stop:
            break
        for k, v in _PROXY_ITEMS(_TYPE_DICT(klass)):
            if (_type(k) is str and _len(k) > 4 and k[:2] == k[-2:] == "__" and k not in _QUIET_DUNDERS
                    and k[2:-2].isidentifier() and kept.get(k, _MISSING) is not v):
                names.add(k)
    return names


def shadowed(value, described) -> bool:
    """Whether a data descriptor of ``value``'s classes (a ``property``; their names: ``described``) hides a field
    of its ``__dict__`` from ``value.x``: the judge, which reads the fields, must not answer that read."""
    try:
        d = _object_getattribute(value, "__dict__")
    except Exception:  # noqa: BLE001 - slots only: read as Python reads them
        return False
    return _isinstance(d, dict) and any(dict.__contains__(d, k) for k in described)


def _described(t) -> list:
    return [k for c in _MRO_OF(t)[:-1] for k, v in _PROXY_ITEMS(_TYPE_DICT(c)) if _type(k) is str and _setter(_type(v))]


def _setter(t) -> bool:
    return any("__set__" in _TYPE_DICT(c) or "__delete__" in _TYPE_DICT(c) for c in _MRO_OF(t))


def own_dunders(value, subclass: bool, cache: dict | None = None) -> set:
    """The dunders of ``value``'s classes the judge refuses (``subclass``: a program's subclass of a builtin);
    ``__getattribute__`` also where a field is hidden from attribute reads (:func:`shadowed`). ``cache`` (one per
    value encoded) keeps what was read of each class: a linked list's nodes read their class once."""
    t = _type(value)
    try:
        known = cache.get(t) if cache is not None else None
        if known is None:
            known = (frozenset(own_names(t, below(value, subclass))), [] if subclass else _described(t))
            if cache is not None:
                cache[t] = known
        names = set(known[0])
        if known[1] and shadowed(value, known[1]):
            names.add("__getattribute__")
    except Exception:  # noqa: BLE001 - a class may refuse: then nothing it defines is believed
        names = set(_ALL_REFUSED)
    return names
