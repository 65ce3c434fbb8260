"""Pure numpy on pass matrices: pass rates, test filters and program selection.

A pass matrix ``M`` is a boolean array of shape ``(solutions, tests)``: ``M[i, j]`` is True when solution ``i``
passes test ``j``. Every function here is pure (no I/O), accepts nested lists as stored in Arrow, and draws
randomness only from the ``numpy.random.Generator`` it is given, so a recorded seed reproduces a round.

Defaults follow the released EvolveCoder code; every threshold is a parameter. Where the released code crashes
or is silent (fewer than five programs to show, no duplicate programs), the selection functions improvise and
say so in :attr:`.selection.Selection.notes`, so stages can record it.

One module per concern: :mod:`.rates` (matrices, rates, distances), :mod:`.filters` (hiding and grouping tests),
:mod:`.selection` (programs shown to the prompts), :mod:`.final` (the final filter), :mod:`.cover` (the reduced
suite: greedy set cover of the kills).

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

from .cover import cover_tests
from .filters import dedupe_tests, hide_tests
from .final import REDUCE_RULES, TOO_FEW_TESTS, TOO_MANY_PERFECT, final_filter, final_filter_outcome
from .rates import as_pass_matrix, hamming_distances, solution_pass_rates, test_pass_rates
from .selection import (
    DUPLICATE_GROUP,
    FILLED_BY_DISTANCE,
    FILLED_FROM_REST,
    NO_DUPLICATES,
    RANDOM_FALLBACK,
    TOO_FEW_SOLUTIONS,
    select_adversarial,
    select_similar,
)

__all__ = [
    # the notes a selection can carry (its improvisations), compared by callers as passmatrix.RANDOM_FALLBACK etc.
    "DUPLICATE_GROUP",
    "FILLED_BY_DISTANCE",
    "FILLED_FROM_REST",
    "NO_DUPLICATES",
    "RANDOM_FALLBACK",
    "TOO_FEW_SOLUTIONS",
    "REDUCE_RULES",
    "TOO_FEW_TESTS",
    "TOO_MANY_PERFECT",
    "as_pass_matrix",
    "cover_tests",
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

