"""pass@k: the unbiased estimator, the released code's "any of the first k", and the counts they start from.

Example:
    >>> from evolvecoder_datasets.metrics.passk import pass_at_k
    >>> pass_at_k(n=[4], c=[2], k=1).tolist()
    [0.5]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..errors import ConfigError

__all__ = ["DEFAULT_KS", "any_of_first_k", "pass_at_k", "solution_counts"]

DEFAULT_KS = (1, 4, 8)


def _check_k(k: Any) -> int:
    """``k`` as an int >= 1 (an integral float or numpy integer is accepted); anything else is a ConfigError."""
    try:
        integral = not isinstance(k, bool | str | bytes) and float(k) == int(k)
    except (TypeError, ValueError, OverflowError):  # None, text, nan, inf
        integral = False
    if not integral or int(k) < 1:
        raise ConfigError(f"k must be an integer >= 1, got {k!r}")
    return int(k)


def _counts(values: Any, name: str) -> np.ndarray:
    """Sample counts as int64, refusing what a cast would silently change (2.5 samples, text, None)."""
    raw = np.asarray(values)
    try:
        as_int = raw.astype(np.int64)
    except (TypeError, ValueError, OverflowError) as err:
        raise ConfigError(f"pass_at_k: {name} must hold whole numbers, got {raw.dtype} values") from err
    if raw.dtype.kind not in "biu" and not np.array_equal(raw, as_int):
        raise ConfigError(f"pass_at_k: {name} must hold whole numbers, got {raw.dtype} values")
    return as_int


def pass_at_k(n: Any, c: Any, k: int) -> np.ndarray:
    """Unbiased pass@k per problem, from ``n`` samples of which ``c`` are correct.

    ``1 - C(n-c, k) / C(n, k)``, computed as ``1 - prod_{i=n-c+1}^{n} (1 - k/i)`` with cumulative log sums, so
    it is accurate to ~1e-12 for any ``n`` and vectorised over problems (pass@1 is exactly ``c / n``).

    Edge cases (defined so that averages over problems stay meaningful):
    - ``c == 0``: 0.0; ``n - c < k``: 1.0 (every draw of k holds a correct sample);
    - ``n < k``: k is clamped to n, i.e. the chance that one of all n samples is correct: 1.0 when ``c > 0``,
      else 0.0 (the naive formula, as in the HumanEval code, returns 1.0 even for ``c == 0``);
    - ``n == 0``: ``nan`` (no evidence); use ``numpy.nanmean`` to average.

    Args:
        n (`int` or array-like of `int`): samples per problem.
        c (`int` or array-like of `int`): correct samples per problem; broadcast against ``n``.
        k (`int`): the k of pass@k, >= 1.

    Returns:
        `numpy.ndarray`: float64 array of the broadcast shape of ``n`` and ``c``.

    Raises:
        ConfigError: ``k`` is not an integer >= 1, ``n`` or ``c`` is not whole numbers, some ``c`` is negative or
            larger than its ``n``, or ``n`` and ``c`` do not broadcast.

    Example:
        >>> from evolvecoder_datasets.metrics import pass_at_k
        >>> float(pass_at_k(64, 8, 1))
        0.125
        >>> pass_at_k([0, 2, 2], [0, 0, 1], 8).tolist()
        [nan, 0.0, 1.0]
    """
    k = _check_k(k)
    n_counts, c_counts = _counts(n, "n"), _counts(c, "c")
    try:
        n_arr, c_arr = np.broadcast_arrays(n_counts, c_counts)
    except ValueError as err:
        raise ConfigError(f"pass_at_k: n and c do not match in shape ({err})") from err
    if np.any(c_arr < 0) or np.any(c_arr > n_arr):
        raise ConfigError("pass_at_k needs 0 <= c <= n for every problem")
    out = np.where(c_arr > 0, 1.0, 0.0)
    out[n_arr == 0] = np.nan
    general = (c_arr > 0) & (n_arr - c_arr >= k)
    if general.any() and k == 1:
        out[general] = c_arr[general] / n_arr[general]  # exact: pass@1 is the fraction correct
    elif general.any():
        ng, cg = n_arr[general], c_arr[general]
        i = np.arange(1, int(ng.max()) + 1, dtype=np.float64)
        terms = np.where(i > k, np.log1p(-k / np.maximum(i, k + 1)), 0.0)
        cumulative = np.concatenate([[0.0], np.cumsum(terms)])
        out[general] = -np.expm1(cumulative[ng] - cumulative[ng - cg])
    return out


def any_of_first_k(correct: Sequence[Sequence[bool]] | np.ndarray, k: int) -> np.ndarray:
    """1.0 when one of the first ``k`` samples of a problem is correct, else 0.0 (the released code's pass@k).

    This depends on the order of the samples and has a higher variance than :func:`pass_at_k`; it is provided
    to compare with the numbers of the released EvolveCoder statistics, not as the default.

    Args:
        correct (`Sequence[Sequence[bool]]` or `numpy.ndarray`): per problem, per sample, whether the sample is
            correct; rows may differ in length. A row shorter than ``k`` uses all its samples.
        k (`int`): how many leading samples count, >= 1.

    Returns:
        `numpy.ndarray`: float64 per problem; ``nan`` for a problem with no samples.

    Raises:
        ConfigError: ``k`` < 1.

    Example:
        >>> from evolvecoder_datasets.metrics import any_of_first_k
        >>> any_of_first_k([[0, 0, 1], [1, 0, 0], []], k=2).tolist()
        [0.0, 1.0, nan]
    """
    k = _check_k(k)
    if isinstance(correct, np.ndarray) and correct.ndim == 2:
        out = correct[:, :k].any(axis=1).astype(np.float64)
        if correct.shape[1] == 0:
            out[:] = np.nan
        return out
    return np.array([float(any(row[:k])) if len(row) else np.nan for row in correct], dtype=np.float64)


def solution_counts(pass_matrices: Iterable[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Samples ``n`` and perfect samples ``c`` (pass every test) per problem.

    Args:
        pass_matrices (`Iterable[array-like]`): one ``(solutions, tests)`` boolean matrix per problem, e.g. the
            ``pass_matrix`` column. A problem without tests has no perfect solution (no evidence).

    Returns:
        `tuple[numpy.ndarray, numpy.ndarray]`: int64 arrays ``n`` and ``c``.

    Raises:
        SchemaError: a matrix is not 2-D boolean.

    Example:
        >>> from evolvecoder_datasets.metrics import solution_counts
        >>> n, c = solution_counts([[[1, 1], [1, 0]], [[0, 1]]])
        >>> n.tolist(), c.tolist()
        ([2, 1], [1, 0])
    """
    from ..passmatrix import as_pass_matrix

    ns, cs = [], []
    for matrix in pass_matrices:
        M = as_pass_matrix(matrix)
        ns.append(M.shape[0])
        cs.append(int(M.all(axis=1).sum()) if M.shape[1] else 0)
    return np.asarray(ns, dtype=np.int64), np.asarray(cs, dtype=np.int64)


def _mean_pass_at(n: np.ndarray, c: np.ndarray, ks: Sequence[int]) -> dict[str, float]:
    out = {}
    for k in ks:
        values = pass_at_k(n, c, k) if len(n) else np.zeros(0)
        out[f"pass@{k}"] = float(np.nanmean(values)) if np.isfinite(values).any() else float("nan")
    return out
