"""The reduced suite: the fewest tests that keep every kill of the full suite (greedy set cover).

A test *kills* a program that fails it. Among the tests considered (after the low-pass-rate filter, as the paper's
rule), :func:`cover_tests` picks greedily the test that kills the most programs no chosen test kills yet (ties:
the lowest index), until every program some test kills is killed; then, if asked, adds the tests that kill the
most programs until ``at_least`` are kept (the final filter's ``min_tests``), so a problem is not dropped only for
being covered by few tests. Greedy set cover is within a factor ``ln(programs) + 1`` of the smallest cover.

Example:
    >>> import numpy as np
    >>> from evolvecoder_datasets.passmatrix.cover import cover_tests
    >>> M = np.array([[0, 1, 0], [0, 1, 1], [1, 0, 1], [1, 1, 1]], dtype=bool)   # 4 programs x 3 tests
    >>> cover_tests(M).tolist()   # test 0 kills programs 0 and 1, test 1 kills program 2; program 3 passes all
    [0, 1]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .rates import _check_count, as_pass_matrix

__all__ = ["cover_tests"]


def cover_tests(M: Any, *, among: Any = None, at_least: int = 0) -> np.ndarray:
    """The tests of a greedy set cover of every program the considered tests kill, padded to ``at_least``.

    Args:
        M (`array-like`): pass matrix ``(solutions, tests)``.
        among (`array-like` of `int`, *optional*): consider only these test indices (e.g. :func:`hide_tests`'s
            output); the result is in the numbering of ``M``.
        at_least (`int`, defaults to 0): add the remaining tests that kill the most programs (ties: lowest index)
            until this many are kept, or none are left.

    Returns:
        `numpy.ndarray`: kept test indices (int64), ascending. Every program that fails some considered test fails
        some kept test.

    Raises:
        ConfigError: ``at_least`` is negative.
        SchemaError: ``M`` is not a 2-D boolean matrix.

    Example:
        >>> import numpy as np
        >>> from evolvecoder_datasets.passmatrix import cover_tests
        >>> M = np.array([[0, 0, 1, 1], [1, 1, 1, 0]], dtype=bool)
        >>> cover_tests(M).tolist(), cover_tests(M, at_least=3).tolist()
        ([0, 3], [0, 1, 3])
    """
    _check_count("at_least", at_least)
    M = as_pass_matrix(M)
    considered = np.arange(M.shape[1], dtype=np.int64) if among is None else np.asarray(among, dtype=np.int64)
    kills = ~M[:, considered]  # (programs, considered tests)
    open_ = kills.any(axis=1)
    chosen: list[int] = []
    while open_.any():
        gains = kills[open_].sum(axis=0)
        best = int(np.argmax(gains))  # argmax keeps the first of equals: the lowest index
        chosen.append(best)
        open_ &= ~kills[:, best]
    if len(chosen) < at_least:
        taken = set(chosen)
        order = sorted((j for j in range(len(considered)) if j not in taken), key=lambda j: (-int(kills[:, j].sum()), j))
        chosen += order[: at_least - len(chosen)]
    return np.sort(considered[np.asarray(chosen, dtype=np.int64)]) if chosen else np.zeros(0, dtype=np.int64)
