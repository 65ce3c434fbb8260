"""Which programs the test-writing prompts are shown: adversarial (strong and diverse) and similar ones.

Example:
    >>> import numpy as np
    >>> from evolvecoder_datasets.passmatrix.selection import select_similar
    >>> select_similar(np.eye(3, dtype=bool), rng=np.random.default_rng(0), k=3).notes
    ()
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .filters import _group_ids
from .rates import _INDEX, _check_count, _check_rate, as_pass_matrix, hamming_distances, solution_pass_rates

__all__ = [
    "DUPLICATE_GROUP",
    "FILLED_BY_DISTANCE",
    "FILLED_FROM_REST",
    "NO_DUPLICATES",
    "RANDOM_FALLBACK",
    "TOO_FEW_SOLUTIONS",
    "Selection",
    "select_adversarial",
    "select_similar",
]

# Notes a selection can carry (see :class:`Selection`).
RANDOM_FALLBACK = "random_fallback"
FILLED_FROM_REST = "filled_from_rest"
TOO_FEW_SOLUTIONS = "too_few_solutions"
DUPLICATE_GROUP = "duplicate_group"
FILLED_BY_DISTANCE = "filled_by_distance"
NO_DUPLICATES = "no_duplicates"


@dataclass(frozen=True, eq=False)
class Selection:
    """Solutions chosen to show a model, and what the rules had to do to choose them.

    Attributes:
        indices (`numpy.ndarray`): chosen solution indices (int64), ascending.
        notes (`tuple[str, ...]`): what happened, in order. Regular paths: ``"duplicate_group"`` (similar
            selection found identical programs), ``"filled_by_distance"`` (the group was topped up with the
            closest programs), ``"no_duplicates"`` (closest by total Hamming distance). Improvised paths:
            ``"random_fallback"`` (too few programs in the pass-rate band; drawn at random among those above
            the minimum rate), ``"filled_from_rest"`` (too few qualified; topped up from the remaining
            programs, the released code crashes here), ``"too_few_solutions"`` (the matrix holds fewer
            programs than requested; all of them are returned).

    Example:
        >>> import numpy as np
        >>> from evolvecoder_datasets.passmatrix import select_adversarial
        >>> sel = select_adversarial(np.ones((3, 4), dtype=bool), rng=np.random.default_rng(0))
        >>> sel.indices.tolist(), sel.notes
        ([0, 1, 2], ('random_fallback', 'too_few_solutions'))
    """

    indices: np.ndarray
    notes: tuple[str, ...] = field(default=())

    def __len__(self) -> int:
        return len(self.indices)

    @property
    def improvised(self) -> bool:
        """True when a rule had to improvise (fallback, fill, or too few solutions)."""
        return any(n in (RANDOM_FALLBACK, FILLED_FROM_REST, TOO_FEW_SOLUTIONS) for n in self.notes)


def _best_triple(D: np.ndarray) -> tuple[int, int, int]:
    """Exact triple maximising (min pairwise distance, total distance); first in lexicographic order on ties."""
    n = D.shape[0]
    scale = 3 * int(D.max(initial=0)) + 1  # key = min * scale + total orders lexicographically
    best_key, best = -1, (0, 1, 2)
    for i in range(n - 2):
        rest = D[i + 1 :, i + 1 :]
        di = D[i, i + 1 :]
        pair_min = np.minimum(di[:, None], di[None, :])
        key = np.minimum(pair_min, rest) * scale + (di[:, None] + di[None, :] + rest)
        key = np.triu(key + 1, k=1)  # only j < l; +1 so that masked cells (0) never win
        flat = int(np.argmax(key))
        value = int(key.flat[flat]) - 1
        if value > best_key:
            j, l = divmod(flat, key.shape[1])
            best_key, best = value, (i, i + 1 + j, i + 1 + l)
    return best


def _best_subset(D: np.ndarray, k: int) -> tuple[int, ...]:
    """Exact k-subset maximising (min pairwise distance, total distance), for any k; chunked enumeration."""
    n = D.shape[0]
    if k == 3:
        return _best_triple(D)
    if k == 1:
        return (0,)
    pairs = list(itertools.combinations(range(k), 2))
    scale = len(pairs) * int(D.max(initial=0)) + 1
    best_key, best = -1, tuple(range(k))
    combos = itertools.combinations(range(n), k)
    while True:
        chunk = np.fromiter(itertools.chain.from_iterable(itertools.islice(combos, 200_000)), dtype=_INDEX)
        if chunk.size == 0:
            return best
        chunk = chunk.reshape(-1, k)
        dists = np.stack([D[chunk[:, a], chunk[:, b]] for a, b in pairs], axis=1)
        key = dists.min(axis=1) * scale + dists.sum(axis=1)
        pos = int(np.argmax(key))
        if key[pos] > best_key:
            best_key, best = int(key[pos]), tuple(int(x) for x in chunk[pos])


def _fill(
    chosen: list[int], pool: np.ndarray, need: int, priority: np.ndarray, rng: np.random.Generator
) -> list[int]:
    """Add up to ``need`` members of ``pool``, highest ``priority`` first, ties at random."""
    if need <= 0 or pool.size == 0:
        return chosen
    order = np.lexsort((rng.random(pool.size), -priority[pool]))
    return chosen + pool[order[:need]].tolist()


def select_adversarial(
    M: Any,
    *,
    rng: np.random.Generator,
    n_top: int = 2,
    n_diverse: int = 3,
    band: tuple[float, float] = (0.4, 0.9),
    min_rate: float = 0.1,
) -> Selection:
    """Choose the programs shown to the adversarial-test prompt.

    The rules, as the released EvolveCoder code applies them:

    1. the ``n_top`` solutions with the highest pass rate (ties: lower index first);
    2. among the others with ``band[0] <= rate < band[1]``, the ``n_diverse`` solutions that maximise the
       minimum pairwise Hamming distance of their pass vectors (ties: largest total distance, then the first
       subset in lexicographic order). The search is exact and vectorised;
    3. when fewer than ``n_diverse`` lie in the band, ``n_diverse`` drawn at random among the others with
       ``rate > min_rate`` (note ``"random_fallback"``);
    4. when that still leaves fewer than ``n_top + n_diverse``, the rest is filled from the remaining
       solutions, highest pass rate first, ties at random (note ``"filled_from_rest"``; the released code
       crashes here); with fewer solutions than requested, all are returned (note ``"too_few_solutions"``).

    Pass rates are over the tests in ``M``: pass ``M[:, visible]`` to rank on the visible tests only.

    Args:
        M (`array-like`): pass matrix ``(solutions, tests)``.
        rng (`numpy.random.Generator`): source of the random fallback and of fill ties.
        n_top (`int`, *optional*, defaults to `2`): highest-rate solutions always shown.
        n_diverse (`int`, *optional*, defaults to `3`): diverse solutions from the band.
        band (`tuple[float, float]`, *optional*, defaults to `(0.4, 0.9)`): half-open pass-rate band.
        min_rate (`float`, *optional*, defaults to `0.1`): the random fallback draws from ``rate > min_rate``.

    Returns:
        [`Selection`]: ascending solution indices and notes.

    Raises:
        ConfigError: a count is negative, or the band or rate lies outside [0, 1].
        SchemaError: ``M`` is not a 2-D boolean matrix.

    Example:
        >>> import numpy as np
        >>> from evolvecoder_datasets.passmatrix import select_adversarial
        >>> rng = np.random.default_rng(0)
        >>> M = rng.random((16, 20)) < np.linspace(0.05, 0.95, 16)[:, None]
        >>> sel = select_adversarial(M, rng=rng)
        >>> len(sel), sel.notes
        (5, ())
    """
    _check_count("n_top", n_top)
    _check_count("n_diverse", n_diverse)
    _check_rate("band[0]", band[0])
    _check_rate("band[1]", band[1])
    _check_rate("min_rate", min_rate)
    M = as_pass_matrix(M)
    n = M.shape[0]
    rates = solution_pass_rates(M)
    notes: list[str] = []

    top = np.argsort(-rates, kind="stable")[:n_top]
    others = np.setdiff1d(np.arange(n, dtype=_INDEX), top)
    in_band = others[(rates[others] >= band[0]) & (rates[others] < band[1])]
    chosen = top.tolist()
    if n_diverse and len(in_band) >= n_diverse:
        D = hamming_distances(M[in_band])
        chosen += in_band[list(_best_subset(D, n_diverse))].tolist()
    elif n_diverse:
        notes.append(RANDOM_FALLBACK)
        eligible = others[rates[others] > min_rate]
        take = min(n_diverse, len(eligible))
        chosen += rng.choice(eligible, size=take, replace=False).tolist() if take else []

    wanted = n_top + n_diverse
    if len(chosen) < wanted:
        rest = np.setdiff1d(np.arange(n, dtype=_INDEX), chosen)
        if rest.size:
            notes.append(FILLED_FROM_REST)
        chosen = _fill(chosen, rest, wanted - len(chosen), rates, rng)
        if n < wanted:
            notes.append(TOO_FEW_SOLUTIONS)
    return Selection(np.sort(np.asarray(chosen, dtype=_INDEX)), tuple(notes))


def select_similar(M: Any, *, rng: np.random.Generator, k: int = 5) -> Selection:
    """Choose programs that behave alike, for the discriminative-test prompt.

    The rules of the released EvolveCoder code:

    1. group solutions with identical pass vectors; when some group has two or more members, pick one such
       group with probability proportional to its size (note ``"duplicate_group"``);
    2. a group with ``k`` or more members gives ``k`` of them at random; a smaller group is filled to ``k`` with
       the solutions at the smallest Hamming distance from it (note ``"filled_by_distance"``);
    3. with no duplicates, the ``k`` solutions with the smallest total Hamming distance to all others (note
       ``"no_duplicates"``);
    4. with ``k`` or fewer solutions, all of them (note ``"too_few_solutions"`` when fewer than ``k``).

    Ties in distance are where we differ on purpose: the released ``select_closest_programs`` sorts with Python's
    stable ``sorted``, so a tie goes to the lowest solution indices (the first model's first samples); here ties
    are drawn at random from ``rng``, so no program is favoured by its place in the pool and the recorded seed
    still reproduces the choice. Wherever no tie arises the two choose the same programs.

    Args:
        M (`array-like`): pass matrix ``(solutions, tests)``.
        rng (`numpy.random.Generator`): source of the group draw and tie breaks.
        k (`int`, *optional*, defaults to `5`): how many programs to choose.

    Returns:
        [`Selection`]: ascending solution indices and notes.

    Raises:
        ConfigError: ``k`` < 1.
        SchemaError: ``M`` is not a 2-D boolean matrix.

    Example:
        >>> import numpy as np
        >>> from evolvecoder_datasets.passmatrix import select_similar
        >>> M = np.array([[0, 0, 0], [1, 1, 0], [1, 1, 0], [0, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=bool)
        >>> sel = select_similar(M, rng=np.random.default_rng(0), k=3)
        >>> sel.indices.tolist(), sel.notes   # the pair (1, 2) plus one program at distance 1
        ([1, 2, 4], ('duplicate_group', 'filled_by_distance'))
    """
    _check_count("k", k, minimum=1)
    M = as_pass_matrix(M)
    n = M.shape[0]
    if n <= k:
        notes = (TOO_FEW_SOLUTIONS,) if n < k else ()
        return Selection(np.arange(n, dtype=_INDEX), notes)

    groups = _group_ids(M)
    sizes = np.bincount(groups)
    duplicated = np.flatnonzero(sizes >= 2)
    D = hamming_distances(M)
    if duplicated.size == 0:
        total = D.sum(axis=1)
        order = np.lexsort((rng.random(n), total))
        return Selection(np.sort(order[:k]).astype(_INDEX), (NO_DUPLICATES,))

    weights = sizes[duplicated] / sizes[duplicated].sum()
    group = rng.choice(duplicated, p=weights)
    members = np.flatnonzero(groups == group).astype(_INDEX)
    if members.size >= k:
        chosen = rng.choice(members, size=k, replace=False)
        return Selection(np.sort(chosen).astype(_INDEX), (DUPLICATE_GROUP,))
    rest = np.setdiff1d(np.arange(n, dtype=_INDEX), members)
    closeness = -D[members[0], rest].astype(np.float64)  # members are identical: one stands for all
    order = np.lexsort((rng.random(rest.size), -closeness))
    chosen = np.concatenate([members, rest[order[: k - members.size]]])
    return Selection(np.sort(chosen).astype(_INDEX), (DUPLICATE_GROUP, FILLED_BY_DISTANCE))
