"""The final filter: prune tests by pass rate and pass-vector group, drop problems with too few tests or too
many perfect solutions.

Example:
    >>> import numpy as np
    >>> from evolvecoder_datasets.passmatrix.final import final_filter_outcome
    >>> final_filter_outcome(np.ones((2, 3), dtype=bool), rng=np.random.default_rng(0), min_tests=1).drop_reason
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigError
from .cover import cover_tests
from .filters import dedupe_tests, hide_tests
from .rates import _check_count, _check_rate, as_pass_matrix

__all__ = ["REDUCE_RULES", "TOO_FEW_TESTS", "TOO_MANY_PERFECT", "FinalFilterOutcome", "final_filter", "final_filter_outcome"]

# Drop reasons of the final filter.
TOO_FEW_TESTS = "too_few_tests"
TOO_MANY_PERFECT = "too_many_perfect"

#: How the final filter reduces the tests: ``"groups"`` (the paper: at most ``max_per_group`` random tests per
#: identical pass vector) or ``"cover"`` (the fewest tests that keep every kill of the full suite: greedy set
#: cover, padded to ``min_tests``).
REDUCE_RULES = ("groups", "cover")


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


def final_filter_outcome(
    M: Any,
    *,
    rng: np.random.Generator,
    min_pass_rate: float = 0.1,
    max_per_group: int = 5,
    min_tests: int = 5,
    max_perfect: int = 60,
    reduce: str = "groups",
    pool: Any = None,
    exempt: Any = None,
) -> FinalFilterOutcome:
    """Run the final filter and explain its decision; :func:`final_filter` is the short form.

    Steps: drop tests with a pass rate under ``min_pass_rate``; keep at most ``max_per_group`` tests (chosen at
    random) per group of identical pass vectors (``reduce="cover"``: instead, the fewest tests that still kill every
    program the remaining tests kill, :func:`~evolvecoder_datasets.passmatrix.cover_tests`, padded to
    ``min_tests``); drop the problem when fewer than ``min_tests`` tests remain
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
        reduce (`str`, *optional*, defaults to `"groups"`): one of :data:`REDUCE_RULES`.
        pool (`array-like`, *optional*): the whole pool's matrix ``(programs, tests)`` whose kills ``"cover"`` keeps
            (mutants included where ``M`` counts only model samples); defaults to ``M``.
        exempt (`array-like` of `int`, *optional*): tests never dropped for a low pass rate (tests a confirmed
            reference passes: they are not wrong, and the programs failing them are).

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
        >>> M = np.array([[0, 0, 1, 1], [1, 1, 1, 0], [1, 1, 1, 1]], dtype=bool)
        >>> final_filter_outcome(M, rng=np.random.default_rng(0), min_tests=1, reduce="cover").kept.tolist()
        [0, 3]
    """
    _check_rate("min_pass_rate", min_pass_rate)
    _check_count("max_per_group", max_per_group, minimum=1)
    _check_count("min_tests", min_tests)
    _check_count("max_perfect", max_perfect)
    if reduce not in REDUCE_RULES:
        raise ConfigError(f"reduce must be one of {REDUCE_RULES}, got {reduce!r}")
    M = as_pass_matrix(M)
    visible = hide_tests(M, min_pass_rate)
    if exempt is not None and len(exempt):
        visible = np.union1d(visible, np.asarray(exempt, dtype=np.int64))
    if reduce == "cover":
        whole = M if pool is None else as_pass_matrix(pool)
        kept = cover_tests(whole, among=visible, at_least=min_tests)
    else:
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
