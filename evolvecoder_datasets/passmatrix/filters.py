"""Test filters: hide tests by pass rate, keep a few tests per identical pass vector.

Example:
    >>> import numpy as np
    >>> from evolvecoder_datasets.passmatrix.filters import hide_tests
    >>> hide_tests(np.array([[1, 0], [1, 0]], dtype=bool)).tolist()
    [0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .rates import _INDEX, _candidates, _check_count, _check_rate, as_pass_matrix, test_pass_rates

__all__ = ["dedupe_tests", "hide_tests"]


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
