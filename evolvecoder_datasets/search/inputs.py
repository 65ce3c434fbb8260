"""The input side of search-written tests: new arguments for the call a problem's asserts make.

:func:`~evolvecoder_datasets.search.calls.recover_call` (in :mod:`.calls`, importable from here too) reads a
problem's asserts and finds the function they test and the literal argument tuples it is called with.
:class:`InputMutator` turns those seeds into new argument tuples by type-aware mutation: integer and float
boundaries, sign flips, empty, singleton, duplicated, reordered and larger collections, edited and unicode strings,
edits inside nested values, and arguments crossed over from other seeds. As EvoSuite does, the constants of the reference solution
(:func:`reference_constants`) seed the edits too: a day-of-month check against 30 is reached by trying 29, 30 and 31,
also inside strings (``"04-31-2000"``). Everything here is pure Python on literal values; nothing runs a program.

Example:
    >>> from evolvecoder_datasets.search.inputs import InputMutator, recover_call
    >>> call = recover_call(["assert add([1, 2], 3) == [4, 5]", "assert add([], 0) == []"])
    >>> call.callee, call.seeds
    ('add', (([1, 2], 3), ([], 0)))
    >>> mutator = InputMutator(call.seeds, seed=0)
    >>> len({repr(mutator.candidate()) for _ in range(50)}) > 10
    True
"""

from __future__ import annotations

import ast
import functools
import random
import re
from collections.abc import Sequence
from typing import Any

from .calls import CallShape, call_callee, literal_args, recover_call, render_args

# The call's reading lives in calls.py; its names stay importable from here.
__all__ = ["CallShape", "InputMutator", "call_callee", "literal_args", "recover_call", "reference_constants",
           "render_args"]
# Characters a unicode edit inserts: accented, a case-folding oddity, Greek, CJK, an emoji, a combining mark.
_UNICODE = ("é", "ß", "Ω", "漢", "😀", "\u0301", "İ")
_LARGE = (20, 60)  # length range of a grown collection
_DIGITS = re.compile(r"\d+")


def reference_constants(source: str) -> dict[type, list]:
    """The literal numbers and short strings of a program (docstrings left out), by type.

    Example:
        >>> found = reference_constants("def ok(m):\\n    'Doc.'\\n    return 1 <= m <= 12 and m != 2.5 or m == 'x'")
        >>> found[int], found[float], found[str]
        ([1, 12], [2.5], ['x'])
    """
    found = _kept_constants(source) if len(source) <= _KEPT_CHARS else _constants(source)
    return {kind: list(values) for kind, values in found}


_KEPT_CHARS = 20_000  # programs up to this size keep their constants (4,096 of them: at most ~80 MB of text)


def _constants(source: str) -> tuple[tuple[type, tuple], ...]:
    """:func:`reference_constants` of ``source`` as tuples (kept per text by :func:`_kept_constants`: each round's
    search and the oracle read the same pool's programs again)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return ()
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    out: dict[type, list] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or id(node) in docstrings or isinstance(node.value, bool):
            continue
        value = node.value
        if isinstance(value, (int, float)) or (isinstance(value, str) and 0 < len(value) <= 10):
            bucket = out.setdefault(type(value), [])
            if value not in bucket:
                bucket.append(value)
    return tuple((kind, tuple(values)) for kind, values in out.items())


_kept_constants = functools.lru_cache(maxsize=4096)(_constants)


def _splice(head: Any, tail: Any, rng: random.Random) -> Any:
    """The start of ``head`` joined to the end of ``tail`` (both strings or both lists; else ``head``)."""
    if type(head) is not type(tail) or not isinstance(head, (str, list)):
        return head
    return head[: rng.randint(0, len(head))] + tail[rng.randint(0, len(tail)) :]


def _tie(v: list, rng: random.Random) -> list:
    """``v`` with one element set equal to another (two equal elements, apart or side by side)."""
    if len(v) < 2:
        return v + v
    out = list(v)
    i, j = rng.sample(range(len(v)), 2)
    out[j] = out[i]
    return out


def _tie_extreme(v: list, rng: random.Random) -> list:
    """``v`` with its largest or smallest element repeated (a tie for first or last place)."""
    out = list(v)
    out.insert(rng.randrange(len(out) + 1), max(v) if rng.random() < 0.5 else min(v))
    return out


def _tie_arguments(args: list, rng: random.Random) -> None:
    """Make two arguments of one type equal, in place (``f(a, b)`` -> ``f(a, a)``), where two share a type."""
    pairs = [(a, b) for a in range(len(args)) for b in range(len(args))
             if a != b and type(args[a]) is type(args[b])]
    if pairs:
        a, b = rng.choice(pairs)
        args[b] = args[a]


def _structure_edits(value: Any, pos: _Position) -> list[Any]:
    """The structure edits of one value (:meth:`InputMutator.structured`)."""
    out: list[Any] = []
    if isinstance(value, str):
        out += ["", value[:1], value[:1] * 2, value + value[-1:], value[:2]]
        for other in pos.texts:
            if other != value:
                out += [value + other[-1:], value + other, value[: len(value) // 2] + other[len(other) // 2 :],
                        other[:1] + value]
    elif isinstance(value, list):
        out += [[], value[:1], value[:1] * 2, value[:2], value + value[-1:], value[:1] + value]
        if len(value) >= 2:
            out += [[value[0]] * len(value), value[:1] + value[1:-1] + value[:1], value[1:] + value[:1]]
        if value and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
            out += [value + [max(value)], [min(value)] + value, sorted(value), sorted(value, reverse=True)]
        for other in pos.lists:
            if other != value:
                out += [value + other[-1:], value[: len(value) // 2] + other[len(other) // 2 :], value + other]
    elif isinstance(value, tuple) and value:
        out += [tuple(value[:1]) * len(value)]
    elif isinstance(value, dict) and value:
        first = next(iter(value))
        out += [{}, {first: value[first]}]
    elif isinstance(value, int) and not isinstance(value, bool):
        out += [0, 1, value + 1, value - 1] + ([-1, -value] if pos.signed else [])
    return [v for v in out if v != value]


def _atoms(value: Any, out: dict[type, list]) -> None:
    """Collect the scalars nested in ``value`` by type (the bank new elements are drawn from)."""
    if isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            _atoms(item, out)
    elif isinstance(value, dict):
        for key, item in value.items():
            _atoms(key, out)
            _atoms(item, out)
    else:
        out.setdefault(type(value), []).append(value)


def _elements(value: Any, out: list) -> None:
    """Collect the elements of every collection nested in ``value``."""
    if isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            out.append(item)
            _elements(item, out)
    elif isinstance(value, dict):
        for item in value.values():
            _elements(item, out)


class _Position:
    """What the seeds show about one argument position: its values, nested scalars, elements and domain."""

    def __init__(self, values: list[Any]) -> None:
        self.values = values
        self.atoms: dict[type, list] = {}
        self.elements: list[Any] = []
        for value in values:
            _atoms(value, self.atoms)
            _elements(value, self.elements)
        numbers = [v for t in (int, float) for v in self.atoms.get(t, ())]
        self.signed = any(v < 0 for v in numbers)
        self.magnitude = max((abs(v) for v in numbers), default=10)
        texts = self.atoms.get(str, [])
        self.texts = [v for v in values if isinstance(v, str)]
        self.lists = [v for v in values if isinstance(v, list)]
        self.alphabet = sorted({c for t in texts for c in t}) or list("ab")
        self.unicode = any(not t.isascii() for t in texts)


class InputMutator:
    """Type-aware mutation of argument tuples, seeded and reproducible.

    Each candidate starts from a parent (a seed, an input added with :meth:`add_parent`, or a crossover of seeds) and
    gets one to three edits at random argument positions. Edits keep a value's type and follow what the seeds show:
    signs flip freely only where the seeds hold negative numbers, strings gain non-ASCII characters freely only where
    the seeds hold some (otherwise with probability ``explore``), and numbers stay within a few times the seeds'
    largest magnitude.

    Args:
        seeds (`Sequence[tuple]`): argument tuples of one arity (from :func:`recover_call`).
        seed (`int`, defaults to 0): the random seed; the same seeds and seed give the same candidates.
        explore (`float`, defaults to 0.2): probability of an edit that leaves the seeds' observed domain (a sign
            the seeds never show, unicode in ASCII-only strings).
        constants (`dict[type, list]`, *optional*): constants of the reference (:func:`reference_constants`); numbers
            become candidate values (each also +-1), inside strings too, and strings get inserted.

    Example:
        >>> a, b = InputMutator([(3, "abc")], seed=1), InputMutator([(3, "abc")], seed=1)
        >>> [a.candidate() for _ in range(5)] == [b.candidate() for _ in range(5)]
        True
    """

    def __init__(
        self, seeds: Sequence[tuple], *, seed: int = 0, explore: float = 0.2, constants: dict[type, list] | None = None
    ) -> None:
        if not seeds:
            raise ValueError("InputMutator needs at least one seed argument tuple")
        self.seeds = [tuple(s) for s in seeds]
        self.rng = random.Random(seed)
        self.explore = explore
        arity = len(self.seeds[0])
        self.positions = [_Position([s[i] for s in self.seeds if len(s) == arity]) for i in range(arity)]
        self.parents: list[tuple] = list(self.seeds)
        constants = constants or {}
        self.int_constants = [c for c in constants.get(int, []) if abs(c) < 10**6]
        self.float_constants = list(constants.get(float, []))
        self.str_constants = list(constants.get(str, []))
        self.tags: set[str] = set()  # the newer edits (splice, tie, ...) the last candidate() used

    def add_parent(self, args: Sequence[Any]) -> None:
        """Let later candidates start from ``args`` too (e.g. an input that killed a mutant).

        Example:
            >>> m = InputMutator([(1,)])
            >>> m.add_parent((40,))
            >>> m.parents
            [(1,), (40,)]
        """
        self.parents.append(tuple(args))

    def sweep(self, limit: int = 64, *, constants: Sequence[int] | None = None) -> list[tuple]:
        """Boundary-value candidates: each seed with one number (an integer argument, or a number written inside a
        string argument) set to a constant of the reference minus one, itself, or plus one; seeded order, at most
        ``limit``.

        Args:
            limit (`int`, defaults to 64): most candidates returned.
            constants (`Sequence[int]`, *optional*): sweep around these integers instead of the reference's.

        Example:
            >>> sorted(InputMutator([(5, "07-15")], constants={int: [12]}).sweep())[:4]
            [(5, '07-11'), (5, '07-12'), (5, '07-13'), (5, '11-15')]
            >>> sorted(InputMutator([(5,)]).sweep(constants=[40]))
            [(39,), (40,), (41,)]
        """
        out: dict[str, tuple] = {}
        values = [c + d for c in (self.int_constants if constants is None else constants) for d in (-1, 0, 1)]
        for seed in self.seeds[:4]:
            for i, value in enumerate(seed):
                if isinstance(value, int) and not isinstance(value, bool):
                    changed = [v for v in values if v != value]
                elif isinstance(value, str):
                    runs = list(_DIGITS.finditer(value))
                    changed = [value[: r.start()] + str(v).zfill(len(r.group())) + value[r.end() :]
                               for r in runs for v in values if v >= 0]
                else:
                    continue
                for new in changed:
                    args = (*seed[:i], new, *seed[i + 1 :])
                    out.setdefault(repr(args), args)
        found = list(out.values())
        self.rng.shuffle(found)
        return found[:limit]

    def sweep_pairs(self, limit: int = 64, *, constants: Sequence[int] | None = None) -> list[tuple]:
        """Boundary pairs: each of ``limit`` candidates takes a seed and sets two of its numbers (integer arguments or
        numbers written inside string arguments) to constants of the reference, each minus one, itself or plus
        one: where a mistake needs two boundaries at once (a 30-day month and day 31: ``"04-31-2000"``).
        ``constants`` replaces the reference's (as in :meth:`sweep`); the other number then comes from the
        reference's, so a changed constant is met together with the reference's own boundaries.

        Example:
            >>> m = InputMutator([("06-15-2020",)], seed=0, constants={int: [6, 30]})
            >>> ("06-31-2020",) in m.sweep_pairs(400)
            True
        """
        own = [c + d for c in self.int_constants for d in (-1, 0, 1) if c + d >= 0]
        first = own if constants is None else [c + d for c in constants for d in (-1, 0, 1) if c + d >= 0]
        values = sorted(set(first) | set(own))
        slots = []  # (seed index, argument index, digit run or None)
        for s, seed in enumerate(self.seeds[:8]):
            for i, value in enumerate(seed):
                if isinstance(value, int) and not isinstance(value, bool):
                    slots.append((s, i, None))
                elif isinstance(value, str):
                    slots += [(s, i, r) for r in range(len(_DIGITS.findall(value)))]
        by_seed: dict[int, list] = {}
        for slot in slots:
            by_seed.setdefault(slot[0], []).append(slot)
        pairable = [s for s, found in by_seed.items() if len(found) >= 2]
        out: dict[str, tuple] = {}
        if not values or not pairable:
            return []
        for _ in range(limit * 4):
            if len(out) >= limit:
                break
            s = self.rng.choice(pairable)
            args = list(self.seeds[s])
            for pick, (_, i, run) in enumerate(self.rng.sample(by_seed[s], 2)):
                new = self.rng.choice(first if pick == 0 and first else values)
                if run is None:
                    args[i] = new
                else:
                    match = list(_DIGITS.finditer(args[i]))[run]
                    args[i] = args[i][: match.start()] + str(new).zfill(len(match.group())) + args[i][match.end() :]
            out.setdefault(repr(tuple(args)), tuple(args))
        return list(out.values())

    def candidate(self) -> tuple:
        """One new argument tuple (it may repeat an earlier one; callers deduplicate).

        Example:
            >>> type(InputMutator([([1, 2], "x")], seed=0).candidate()[0])
            <class 'list'>
        """
        rng = self.rng
        self.tags = set()
        if len(self.seeds) > 1 and rng.random() < 0.15:
            parent = tuple(rng.choice(self.seeds)[i] for i in range(len(self.positions)))
        else:
            parent = rng.choice(self.parents)
        args = list(parent)
        if not args:
            return ()
        edits = rng.choices((1, 2, 3), weights=(70, 20, 10))[0]
        for _ in range(edits):
            i = rng.randrange(len(args))
            args[i] = self._mutate(args[i], self.positions[i], depth=0)
        if len(args) > 1 and rng.random() < 0.05:  # two arguments of one type made equal (f(a, a))
            _tie_arguments(args, rng)
            self.tags.add("tie_arguments")
        return tuple(args)

    def structured(self, limit: int = 64) -> list[tuple]:
        """Structure edits of the seeds (and of the inputs added with :meth:`add_parent`), seeded order, at most
        ``limit``: for each argument, the boundary sizes (empty, one element, two equal elements), ties (an element
        repeated, two elements made equal, every element equal), the extremes duplicated, and splices with the other
        seeds' values at that position (the head of one string or list joined to the tail of another: ``"14.5"`` +
        ``"0"``); for the call, two arguments of one type made equal. Mistakes about ties, duplicates, empty inputs
        and lengths that none of the seeds has live here.

        Example:
            >>> found = InputMutator([([3, 1],)], seed=0).structured()
            >>> all(x in found for x in [([],), ([3],), ([3, 3],), ([3, 1, 3],), ([3, 1, 1],)])
            True
            >>> ("14.50",) in InputMutator([("14.5",), ("10",)], seed=0).structured()
            True
        """
        rng, out = self.rng, {}

        def add(args: tuple) -> None:
            out.setdefault(repr(args), args)

        for parent in self.parents[:16]:
            for i, value in enumerate(parent):
                pos = self.positions[i]
                for new in _structure_edits(value, pos):
                    add((*parent[:i], new, *parent[i + 1 :]))
            for a in range(len(parent)):
                for b in range(len(parent)):
                    if a != b and type(parent[a]) is type(parent[b]) and parent[a] != parent[b]:
                        args = list(parent)
                        args[b] = parent[a]
                        add(tuple(args))
        for key in [repr(tuple(p)) for p in self.parents]:
            out.pop(key, None)
        found = list(out.values())
        rng.shuffle(found)
        return found[:limit]

    # -- one edit per type -------------------------------------------------------------------------------------

    def _tag(self, name: str, value: Any) -> Any:
        """Record that the last candidate used the edit ``name`` (:attr:`tags`, for cost accounting); ``value``."""
        self.tags.add(name)
        return value

    def _leave_domain(self) -> bool:
        return self.rng.random() < self.explore

    def _mutate(self, value: Any, pos: _Position, depth: int) -> Any:
        if isinstance(value, bool):
            return not value
        if isinstance(value, int):
            return self._int(value, pos)
        if isinstance(value, float):
            return self._float(value, pos)
        if isinstance(value, str):
            return self._str(value, pos)
        if isinstance(value, list):
            return self._list(value, pos, depth)
        if isinstance(value, tuple):
            return tuple(self._list(list(value), pos, depth, keep_length=True))
        if isinstance(value, dict):
            return self._dict(value, pos, depth)
        if isinstance(value, (set, frozenset)):
            return type(value)(self._list(list(value), pos, depth))
        return value

    def _near_constant(self) -> int:
        return self.rng.choice(self.int_constants) + self.rng.choice((-1, 0, 0, 1))

    def _int(self, v: int, pos: _Position) -> int:
        rng, big = self.rng, max(int(pos.magnitude), 10)
        options = [0, 1, v + 1, v - 1, v * 2, v // 2, rng.randint(0, big), big, big * 3 + rng.randint(0, 9)]
        if self.int_constants:
            options += [self._near_constant()] * 3
        if pos.signed or self._leave_domain():
            options += [-1, -v, -rng.randint(0, big)]
        out = rng.choice(options)
        return out if (pos.signed or out >= 0 or self._leave_domain()) else abs(out)

    def _float(self, v: float, pos: _Position) -> float:
        rng, big = self.rng, max(float(pos.magnitude), 1.0)
        options = [0.0, v + 0.5, v - 0.5, v * 1.5, v / 3, round(rng.uniform(0, big), 3), big * 2, 1e-9]
        numbers = self.float_constants + self.int_constants
        options += [float(c) for c in rng.sample(numbers, min(2, len(numbers)))]
        if pos.signed or self._leave_domain():
            options += [-v, -round(rng.uniform(0, big), 3)]
        out = rng.choice(options)
        return out if (pos.signed or out >= 0) else abs(out)

    def _char(self, pos: _Position) -> str:
        if (pos.unicode or self._leave_domain()) and self.rng.random() < 0.5:
            return self.rng.choice(_UNICODE)
        return self.rng.choice(pos.alphabet)

    def _str(self, v: str, pos: _Position) -> str:
        rng = self.rng
        k = rng.randrange(len(v) + 1)
        edits = [
            lambda: "",
            lambda: self._char(pos),
            lambda: v[::-1],
            lambda: v + v,
            lambda: v.swapcase(),
            lambda: v[:k] + self._char(pos) + v[k:],
            lambda: v[:k] + v[k + 1 :],
            lambda: v[:k] + " " + v[k:],
            lambda: "".join(rng.sample(v, len(v))),
            lambda: (v or self._char(pos)) * rng.randint(5, 15),
        ]
        if v:
            edits.append(lambda: v[:k] + rng.choice(v) + v[k:])  # a duplicate character
        if self.str_constants:
            edits.append(lambda: v[:k] + rng.choice(self.str_constants) + v[k:])
        others = pos.texts
        if others:
            edits += [lambda: self._tag("splice", _splice(v, rng.choice(others), rng))] * 2  # a piece of another seed
        if _DIGITS.search(v):
            edits += [lambda: self._digits(v)] * 6
        return rng.choice(edits)()

    def _digits(self, v: str) -> str:
        """Rewrite the numbers written in a string (each with probability 1/2, at least one): +-1, zero, or near a
        constant of the reference, keeping their zero padding (``"04-15-2020"`` -> ``"04-31-2020"``)."""
        runs = list(_DIGITS.finditer(v))
        chosen = {i for i in range(len(runs)) if self.rng.random() < 0.5} or {self.rng.randrange(len(runs))}
        out, end = [], 0
        for i, run in enumerate(runs):
            out.append(v[end : run.start()])
            text = run.group()
            if i in chosen:
                number = int(text)
                options = [number + 1, number - 1, 0]
                if self.int_constants:
                    options += [self._near_constant()] * 6
                text = str(max(0, self.rng.choice(options))).zfill(len(text))
            out.append(text)
            end = run.end()
        out.append(v[end:])
        return "".join(out)

    def _element(self, pos: _Position, like: list) -> Any:
        """A new element: an edited one from ``like``, else one seen in the seeds, else a small integer."""
        pool = like or pos.elements
        if not pool:
            return self.rng.randint(0, 9)
        return self._mutate(self.rng.choice(pool), pos, depth=1) if self.rng.random() < 0.7 else self.rng.choice(pool)

    def _list(self, v: list, pos: _Position, depth: int, keep_length: bool = False) -> list:
        rng = self.rng
        if keep_length:
            if not v:
                return v
            out = list(v)
            i = rng.randrange(len(out))
            out[i] = self._mutate(out[i], pos, depth + 1)
            return out
        k = rng.randrange(len(v) + 1)
        edits = [
            list,
            lambda: [self._element(pos, v)],
            lambda: v[::-1],
            lambda: v[:k] + [self._element(pos, v)] + v[k:],
            lambda: rng.sample(v, len(v)),
            lambda: [*v, *(self._element(pos, v) for _ in range(rng.randint(*_LARGE)))],
        ]
        if v:
            i = rng.randrange(len(v))
            edits += [
                lambda: v[:i] + v[i + 1 :],
                lambda: v[: i + 1] + [v[i]] + v[i + 1 :],  # a duplicate, next to its twin
                lambda: v[:i] + [self._mutate(v[i], pos, depth + 1)] + v[i + 1 :],  # nested edit
                lambda: [v[i]] * rng.randint(2, 6),
            ]
            edits += [lambda: self._tag("tie", _tie(v, rng))] * 2  # two elements made equal (a tie, a duplicate)
            lists = pos.lists
            if lists:
                edits.append(lambda: self._tag("splice", _splice(v, rng.choice(lists), rng)))
            if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
                edits += [lambda: sorted(v), lambda: sorted(v, reverse=True), lambda: self._tag("tie_extreme", _tie_extreme(v, rng))]
                if pos.signed or self._leave_domain():
                    edits.append(lambda: [-x for x in v])
        return rng.choice(edits)()

    def _dict(self, v: dict, pos: _Position, depth: int) -> dict:
        rng = self.rng
        if not v:
            return v
        keys = list(v)
        key = rng.choice(keys)
        edits = [
            dict,
            lambda: {k: x for k, x in v.items() if k != key},
            lambda: {**v, key: self._mutate(v[key], pos, depth + 1)},
            lambda: {**v, self._mutate(key, pos, depth + 1): v[key]},
        ]
        return rng.choice(edits)()
