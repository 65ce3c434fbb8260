"""Pure numpy on pass matrices: pass rates, test filters and program selection.

A pass matrix ``M`` is a boolean array of shape ``(solutions, tests)``: ``M[i, j]`` is True when solution ``i``
passes test ``j``. Every function here is pure (no I/O), accepts nested lists as stored in Arrow, and draws
randomness only from the ``numpy.random.Generator`` it is given, so a recorded seed reproduces a round.

Defaults follow the released EvolveCoder code; every threshold is a parameter. Where the released code crashes
or is silent (fewer than five programs to show, no duplicate programs), the selection functions improvise and
say so in :attr:`Selection.notes`, so stages can record it.

Example:
    >>> import numpy as np
    >>> from evolvecoder_datasets import passmatrix
    >>> M = np.array([[1, 1, 0, 0], [1, 1, 0, 1], [1, 1, 0, 1]], dtype=bool)
    >>> passmatrix.test_pass_rates(M).round(2).tolist()
    [1.0, 1.0, 0.0, 0.67]
    >>> passmatrix.hide_tests(M).tolist()           # test 2 nobody passes is hidden
    [0, 1, 3]
    >>> passmatrix.dedupe_tests(M, rng=np.random.default_rng(0)).tolist()   # tests 0 and 1 look the same
    [1, 2, 3]
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import ConfigError, SchemaError

__all__ = [
    "FinalFilterOutcome",
    "Selection",
    "as_pass_matrix",
    "dedupe_tests",
    "final_filter",
    "final_filter_outcome",
    "hamming_distances",
    "hide_tests",
    "select_adversarial",
    "select_similar",
    "solution_pass_rates",
    "test_pass_rates",
]

# Notes a selection can carry (see :class:`Selection`).
RANDOM_FALLBACK = "random_fallback"
FILLED_FROM_REST = "filled_from_rest"
TOO_FEW_SOLUTIONS = "too_few_solutions"
DUPLICATE_GROUP = "duplicate_group"
FILLED_BY_DISTANCE = "filled_by_distance"
NO_DUPLICATES = "no_duplicates"

# Drop reasons of the final filter.
TOO_FEW_TESTS = "too_few_tests"
TOO_MANY_PERFECT = "too_many_perfect"

_INDEX = np.int64


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


@dataclass(frozen=True, eq=False)
class FinalFilterOutcome:
    """What the final filter kept and why a problem was dropped.

    Attributes:
        kept (`numpy.ndarray`): kept test indices (int64), ascending (computed even when the problem is dropped).
        drop_reason (`str` or `None`): ``"too_few_tests"``, ``"too_many_perfect"``, or ``None`` when kept.
        low_rate (`int`): tests removed for a pass rate under ``min_pass_rate``.
        duplicates (`int`): tests removed because their pass vector group already had ``max_per_group``.
        perfect (`int`): solutions that pass every kept test.
    """

    kept: np.ndarray
    drop_reason: str | None
    low_rate: int
    duplicates: int
    perfect: int

    @property
    def dropped(self) -> bool:
        """True when the problem is dropped."""
        return self.drop_reason is not None

    def counts(self) -> dict[str, int]:
        """Plain counters for stage statistics (``dropped_low_rate_tests``, ...)."""
        return {
            "kept_tests": len(self.kept),
            "dropped_low_rate_tests": self.low_rate,
            "dropped_duplicate_tests": self.duplicates,
            "perfect_solutions": self.perfect,
        }


def as_pass_matrix(M: Any) -> np.ndarray:
    """Return ``M`` as a 2-D boolean numpy array.

    Args:
        M (`array-like`): a ``(solutions, tests)`` matrix of booleans or 0/1, e.g. the nested lists of the
            ``pass_matrix`` column. An empty list means no solutions and no tests.

    Returns:
        `numpy.ndarray`: boolean array of shape ``(solutions, tests)``.

    Raises:
        SchemaError: ``M`` is ragged, not two-dimensional, or holds values other than booleans or 0/1.

    Example:
        >>> from evolvecoder_datasets.passmatrix import as_pass_matrix
        >>> as_pass_matrix([[True, False], [1, 1]]).tolist()
        [[True, False], [True, True]]
    """
    if isinstance(M, np.ndarray) and M.dtype == np.bool_ and M.ndim == 2:
        return M
    try:
        arr = np.asarray(M)
    except ValueError as err:  # ragged nested lists
        raise SchemaError(f"pass matrix is ragged: {err}") from err
    if arr.size == 0 and arr.ndim == 1:
        return np.zeros((0, 0), dtype=bool)
    if arr.ndim != 2:
        raise SchemaError(f"pass matrix must be 2-D (solutions x tests), got shape {arr.shape}")
    if arr.dtype == np.bool_:
        return arr
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.number):
        raise SchemaError(f"pass matrix must hold booleans, got dtype {arr.dtype}")
    if arr.size and not np.isin(arr, (0, 1)).all():
        raise SchemaError("pass matrix must hold booleans or 0/1 values")
    return arr.astype(bool)


def _pass_fraction(M: Any, axis: int) -> np.ndarray:
    """Mean of the pass matrix along ``axis`` as float64; zeros when that axis is empty (no evidence)."""
    M = as_pass_matrix(M)
    if M.shape[axis] == 0:
        return np.zeros(M.shape[1 - axis], dtype=np.float64)
    return M.mean(axis=axis, dtype=np.float64)


def test_pass_rates(M: Any) -> np.ndarray:
    """Fraction of solutions that pass each test.

    Args:
        M (`array-like`): pass matrix ``(solutions, tests)``.

    Returns:
        `numpy.ndarray`: float64 array of length ``tests``; all zeros when there are no solutions (a test no
        program was run against has no evidence of being passable).

    Raises:
        SchemaError: ``M`` is not a 2-D boolean matrix.

    Example:
        >>> from evolvecoder_datasets.passmatrix import test_pass_rates
        >>> test_pass_rates([[1, 0], [1, 1]]).tolist()
        [1.0, 0.5]
    """
    return _pass_fraction(M, axis=0)


test_pass_rates.__test__ = False  # keep pytest from collecting it when imported into a test module


def solution_pass_rates(M: Any) -> np.ndarray:
    """Fraction of tests each solution passes.

    Args:
        M (`array-like`): pass matrix ``(solutions, tests)``.

    Returns:
        `numpy.ndarray`: float64 array of length ``solutions``; all zeros when there are no tests (as the
        released code does).

    Raises:
        SchemaError: ``M`` is not a 2-D boolean matrix.

    Example:
        >>> from evolvecoder_datasets.passmatrix import solution_pass_rates
        >>> solution_pass_rates([[1, 0], [1, 1]]).tolist()
        [0.5, 1.0]
    """
    return _pass_fraction(M, axis=1)


def hamming_distances(M: Any) -> np.ndarray:
    """Pairwise Hamming distances between the pass vectors of all solutions.

    Computed with two matrix products on 0/1 arrays (``X @ (1-X).T + (1-X) @ X.T``), exact for up to 2**24
    tests.

    Args:
        M (`array-like`): pass matrix ``(solutions, tests)``.

    Returns:
        `numpy.ndarray`: int64 array ``(solutions, solutions)``, symmetric, zero diagonal.

    Raises:
        SchemaError: ``M`` is not a 2-D boolean matrix.

    Example:
        >>> from evolvecoder_datasets.passmatrix import hamming_distances
        >>> hamming_distances([[1, 0, 1], [0, 0, 1], [0, 1, 0]]).tolist()
        [[0, 1, 3], [1, 0, 2], [3, 2, 0]]
    """
    M = as_pass_matrix(M)
    X = M.astype(np.float32)
    Y = 1.0 - X
    D = X @ Y.T
    D += D.T
    return np.rint(D).astype(np.int64)


def _check_rate(name: str, value: float) -> None:
    if not 0.0 <= float(value) <= 1.0:
        raise ConfigError(f"{name} must lie in [0, 1], got {value!r}")


def _check_count(name: str, value: int, minimum: int = 0) -> None:
    if isinstance(value, bool) or int(value) != value or value < minimum:
        raise ConfigError(f"{name} must be an integer >= {minimum}, got {value!r}")


def _candidates(n_tests: int, among: Any) -> np.ndarray:
    if among is None:
        return np.arange(n_tests, dtype=_INDEX)
    idx = np.asarray(among, dtype=_INDEX).reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= n_tests):
        raise ConfigError(f"test indices in `among` must lie in [0, {n_tests}), got {idx.tolist()}")
    return np.unique(idx)


def hide_tests(M: Any, min_pass_rate: float = 0.1, *, max_pass_rate: float | None = None) -> np.ndarray:
    """Indices of the tests that stay visible in a round's prompt context.

    A test is hidden when its pass rate is under ``min_pass_rate`` (probably wrong, or beyond every model).
    The optional upper cut hides tests whose pass rate exceeds ``max_pass_rate`` (nearly every solution passes
    them; the paper describes this cut, the released code does not use it, so it is off by default).

    Args:
        M (`array-like`): pass matrix ``(solutions, tests)``.
        min_pass_rate (`float`, *optional*, defaults to `0.1`): tests with a rate strictly below are hidden.
        max_pass_rate (`float`, *optional*): tests with a rate strictly above are hidden; `None` disables it.

    Returns:
        `numpy.ndarray`: visible test indices (int64), ascending. With no solutions every rate is 0, so every
        test is hidden unless ``min_pass_rate`` is 0.

    Raises:
        ConfigError: a threshold lies outside [0, 1].
        SchemaError: ``M`` is not a 2-D boolean matrix.

    Example:
        >>> from evolvecoder_datasets.passmatrix import hide_tests
        >>> M = [[1, 0, 1], [1, 0, 0], [1, 0, 0]]
        >>> hide_tests(M).tolist(), hide_tests(M, max_pass_rate=0.9).tolist()
        ([0, 2], [2])
    """
    _check_rate("min_pass_rate", min_pass_rate)
    rates = test_pass_rates(M)
    visible = rates >= min_pass_rate
    if max_pass_rate is not None:
        _check_rate("max_pass_rate", max_pass_rate)
        visible &= rates <= max_pass_rate
    return np.flatnonzero(visible).astype(_INDEX)


def _group_ids(rows: np.ndarray) -> np.ndarray:
    """Group id per row of a 2-D boolean array; equal rows share an id (ids are dense, 0-based)."""
    n = rows.shape[0]
    if n == 0:
        return np.zeros(0, dtype=_INDEX)
    if rows.shape[1] == 0:
        return np.zeros(n, dtype=_INDEX)
    packed = np.packbits(rows, axis=1)
    _, inverse = np.unique(packed, axis=0, return_inverse=True)
    return inverse.reshape(-1).astype(_INDEX)


def _keep_per_group(groups: np.ndarray, keep: int, rng: np.random.Generator) -> np.ndarray:
    """Positions of at most ``keep`` members per group, chosen uniformly at random, ascending."""
    if groups.size == 0:
        return np.zeros(0, dtype=_INDEX)
    order = np.lexsort((rng.random(groups.size), groups))
    sorted_groups = groups[order]
    starts = np.flatnonzero(np.r_[True, sorted_groups[1:] != sorted_groups[:-1]])
    rank = np.arange(groups.size) - np.repeat(starts, np.diff(np.r_[starts, groups.size]))
    return np.sort(order[rank < keep]).astype(_INDEX)


def dedupe_tests(M: Any, *, rng: np.random.Generator, keep: int = 1, among: Any = None) -> np.ndarray:
    """Keep at most ``keep`` tests per group of tests with identical pass vectors.

    Tests with the same column in ``M`` tell the solutions apart in the same way; the representatives of each
    group are drawn uniformly at random with ``rng``. Inside a round ``keep=1`` (the discriminative prompt's
    context); the final filter keeps 5.

    Args:
        M (`array-like`): pass matrix ``(solutions, tests)``.
        rng (`numpy.random.Generator`): source of the random choice of representatives.
        keep (`int`, *optional*, defaults to `1`): representatives kept per group.
        among (`array-like` of `int`, *optional*): consider only these test indices (e.g. the output of
            :func:`hide_tests`); the result is still in the numbering of ``M``.

    Returns:
        `numpy.ndarray`: kept test indices (int64), ascending. With no solutions all tests look the same, so
        ``keep`` of them remain.

    Raises:
        ConfigError: ``keep`` < 1, or ``among`` holds an index out of range.
        SchemaError: ``M`` is not a 2-D boolean matrix.

    Example:
        >>> import numpy as np
        >>> from evolvecoder_datasets.passmatrix import dedupe_tests, hide_tests
        >>> M = np.array([[1, 1, 1, 0], [0, 0, 0, 0]], dtype=bool)
        >>> kept = dedupe_tests(M, rng=np.random.default_rng(0), among=hide_tests(M))
        >>> len(kept)   # one of tests 0, 1, 2; test 3 was hidden
        1
    """
    _check_count("keep", keep, minimum=1)
    M = as_pass_matrix(M)
    idx = _candidates(M.shape[1], among)
    groups = _group_ids(M[:, idx].T)
    return idx[_keep_per_group(groups, keep, rng)]


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

    The rules, as the released EvolveCoder code applies them:

    1. group solutions with identical pass vectors; when some group has two or more members, pick one such
       group with probability proportional to its size (note ``"duplicate_group"``);
    2. a group with ``k`` or more members gives ``k`` of them at random; a smaller group is filled to ``k`` with
       the solutions at the smallest Hamming distance from it, ties at random (note ``"filled_by_distance"``);
    3. with no duplicates, the ``k`` solutions with the smallest total Hamming distance to all others, ties at
       random (note ``"no_duplicates"``);
    4. with ``k`` or fewer solutions, all of them (note ``"too_few_solutions"`` when fewer than ``k``).

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


def final_filter_outcome(
    M: Any,
    *,
    rng: np.random.Generator,
    min_pass_rate: float = 0.1,
    max_per_group: int = 5,
    min_tests: int = 5,
    max_perfect: int = 60,
) -> FinalFilterOutcome:
    """Run the final filter and explain its decision; :func:`final_filter` is the short form.

    Steps: drop tests with a pass rate under ``min_pass_rate``; keep at most ``max_per_group`` tests (chosen at
    random) per group of identical pass vectors; drop the problem when fewer than ``min_tests`` tests remain
    (``"too_few_tests"``), or when more than ``max_perfect`` solutions pass every kept test
    (``"too_many_perfect"``: too easy to teach anything).

    Args:
        M (`array-like`): pass matrix ``(solutions, tests)`` over all tests of the last round.
        rng (`numpy.random.Generator`): source of the choice of representatives.
        min_pass_rate (`float`, *optional*, defaults to `0.1`): tests strictly below are dropped.
        max_per_group (`int`, *optional*, defaults to `5`): tests kept per identical pass vector.
        min_tests (`int`, *optional*, defaults to `5`): fewer kept tests drop the problem.
        max_perfect (`int`, *optional*, defaults to `60`): more perfect solutions drop the problem (the paper
            samples 64 solutions per problem; scale it with your pool size).

    Returns:
        [`FinalFilterOutcome`]: kept tests, drop reason and counters.

    Raises:
        ConfigError: a threshold is out of range.
        SchemaError: ``M`` is not a 2-D boolean matrix.

    Example:
        >>> import numpy as np
        >>> from evolvecoder_datasets.passmatrix import final_filter_outcome
        >>> out = final_filter_outcome(np.ones((64, 8), dtype=bool), rng=np.random.default_rng(0))
        >>> out.drop_reason, len(out.kept), out.duplicates
        ('too_many_perfect', 5, 3)
    """
    _check_rate("min_pass_rate", min_pass_rate)
    _check_count("max_per_group", max_per_group, minimum=1)
    _check_count("min_tests", min_tests)
    _check_count("max_perfect", max_perfect)
    M = as_pass_matrix(M)
    visible = hide_tests(M, min_pass_rate)
    kept = dedupe_tests(M, rng=rng, keep=max_per_group, among=visible)
    perfect = int(M[:, kept].all(axis=1).sum())
    reason = None
    if len(kept) < min_tests:
        reason = TOO_FEW_TESTS
    elif perfect > max_perfect:
        reason = TOO_MANY_PERFECT
    return FinalFilterOutcome(
        kept=kept,
        drop_reason=reason,
        low_rate=int(M.shape[1] - len(visible)),
        duplicates=int(len(visible) - len(kept)),
        perfect=perfect,
    )


def final_filter(
    M: Any,
    *,
    rng: np.random.Generator,
    min_pass_rate: float = 0.1,
    max_per_group: int = 5,
    min_tests: int = 5,
    max_perfect: int = 60,
) -> np.ndarray | None:
    """Kept test indices after the final filter, or `None` when the problem is dropped.

    See :func:`final_filter_outcome` for the rules and for the reason of a drop.

    Args:
        M (`array-like`): pass matrix ``(solutions, tests)`` over all tests of the last round.
        rng (`numpy.random.Generator`): source of the choice of representatives.
        min_pass_rate (`float`, *optional*, defaults to `0.1`): tests strictly below are dropped.
        max_per_group (`int`, *optional*, defaults to `5`): tests kept per identical pass vector.
        min_tests (`int`, *optional*, defaults to `5`): fewer kept tests drop the problem.
        max_perfect (`int`, *optional*, defaults to `60`): more perfect solutions drop the problem.

    Returns:
        `numpy.ndarray` or `None`: kept test indices (int64, ascending), or `None`.

    Raises:
        ConfigError: a threshold is out of range.
        SchemaError: ``M`` is not a 2-D boolean matrix.

    Example:
        >>> import numpy as np
        >>> from evolvecoder_datasets.passmatrix import final_filter
        >>> M = np.eye(8, dtype=bool)   # 8 solutions, each passes one distinct test
        >>> final_filter(M, rng=np.random.default_rng(0)).tolist()
        [0, 1, 2, 3, 4, 5, 6, 7]
    """
    outcome = final_filter_outcome(
        M,
        rng=rng,
        min_pass_rate=min_pass_rate,
        max_per_group=max_per_group,
        min_tests=min_tests,
        max_perfect=max_perfect,
    )
    return None if outcome.dropped else outcome.kept
