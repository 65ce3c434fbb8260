"""Pass matrices as numpy, their pass rates and Hamming distances, and the argument checks the rules share.

Example:
    >>> from evolvecoder_datasets.passmatrix.rates import solution_pass_rates
    >>> solution_pass_rates([[1, 0], [1, 1]]).tolist()
    [0.5, 1.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ConfigError, SchemaError

__all__ = ["as_pass_matrix", "hamming_distances", "solution_pass_rates", "test_pass_rates"]

_INDEX = np.int64


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
