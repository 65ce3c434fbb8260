"""The final filter: prune each problem's accumulated tests and drop problems that teach nothing, with reasons.

Per problem, on the pass matrix of the last round (see
:func:`~evolvecoder_datasets.passmatrix.final_filter_outcome`): tests that fewer than ``min_pass_rate`` of the
solutions pass are removed (probably wrong); at most ``max_per_group`` tests (seeded random choice) are kept per
group of tests with identical pass vectors; the problem is dropped with ``drop_reason = "too_few_tests"`` when fewer
than ``min_tests`` remain, or ``"too_many_perfect"`` when more than ``max_perfect`` solutions pass every kept test.
A problem whose pool has no counted solution (none sampled, or only mutants) is dropped as ``"no_solutions"``.

Mutants are adversaries, not attempts at the problem: by default their rows (model ``"mutant"``) are left out of the
pass rates and of the perfect-solution count, but their columns are still pruned with the tests.

Columns read: ``id``, ``tests`` (or ``inputs``/``outputs``), ``pass_matrix``; optional ``test_origin``,
``statuses``, ``solutions`` (for the model names), ``drop_reason`` (already dropped rows pass through),
``reference_ok`` (with ``trust_reference``).
Columns written: ``tests``, ``test_origin``, ``pass_matrix``, ``statuses`` (when present; ``inputs``/``outputs``
for stdin problems), ``drop_reason``, ``final_low_rate_tests``, ``final_duplicate_tests``, ``final_perfect``.
Rows are marked, not removed: :func:`~evolvecoder_datasets.stages.support.drops.without_dropped` removes them.

Example:
    >>> from evolvecoder_datasets.stages.finalize import FinalizeConfig, finalize_dataset
    >>> final = finalize_dataset(last_round, FinalizeConfig(max_perfect=60, seed=0))  # doctest: +SKIP
    >>> sorted(set(final["drop_reason"]) - {None})  # doctest: +SKIP
    ['too_few_tests', 'too_many_perfect']
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import passmatrix, schema
from ..errors import ConfigError, SchemaError
from ..suite import TestSuite
from ..checks import check_fraction, check_list_cells, check_positive
from ..seeding import problem_rng

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["DROP_REASONS", "FinalizeConfig", "finalize", "finalize_dataset"]

NO_SOLUTIONS = "no_solutions"

#: Drop reasons this stage writes.
DROP_REASONS = {
    NO_SOLUTIONS: "no counted solution in the pool (none sampled, or only excluded models): nothing judges the tests",
    passmatrix.TOO_FEW_TESTS: "fewer than min_tests tests survive the final filter",
    passmatrix.TOO_MANY_PERFECT: "more than max_perfect solutions pass every kept test (too easy)",
}


@dataclass(frozen=True)
class FinalizeConfig:
    """Settings of the final filter (they enter the ``datasets`` fingerprint).

    Args:
        min_pass_rate (`float`, defaults to 0.1): tests with a lower pass rate are removed.
        max_per_group (`int`, defaults to 5): tests kept per identical pass vector.
        min_tests (`int`, defaults to 5): problems with fewer kept tests are dropped.
        max_perfect (`int`, defaults to 60): problems with more perfect solutions are dropped (the paper samples
            64 per problem; scale it to your pool).
        exclude_models (`tuple[str, ...]`, defaults to ``("mutant",)``): pool rows of these models do not count in
            pass rates or perfect solutions.
        reduce (`str`, defaults to ``"groups"``): how the tests are reduced: ``"groups"`` (the paper's rule, at most
            ``max_per_group`` per identical pass vector) or ``"cover"`` (the reduced suite: the fewest tests that
            keep every kill of the full suite on the counted pool, greedy set cover padded to ``min_tests``). The
            round statistics report the fidelity of both either way.
        trust_reference (`bool`, defaults to `False`): a problem whose reference was confirmed (``reference_ok``:
            its every test passed the reference check of the stage that wrote it) keeps its tests whatever their pass
            rate (the low-rate rule exists to drop wrong tests; on a pool of near-misses it drops right ones).
        seed (`int`, defaults to 0): seed of the choice of representatives (per problem).
        version (`str`): bump when the semantics change.

    Raises:
        ConfigError: a rate outside [0, 1] or a negative count.

    Example:
        >>> FinalizeConfig(max_perfect=12).min_tests
        5
    """

    min_pass_rate: float = 0.1
    max_per_group: int = 5
    min_tests: int = 5
    max_perfect: int = 60
    exclude_models: tuple[str, ...] = ("mutant",)
    reduce: str = "groups"
    trust_reference: bool = False
    seed: int = 0
    version: str = "finalize-stage-1"

    def __post_init__(self) -> None:
        object.__setattr__(self, "exclude_models", tuple(self.exclude_models))
        check_fraction("min_pass_rate", self.min_pass_rate)
        check_positive("max_per_group", self.max_per_group)
        check_positive("min_tests", self.min_tests, minimum=0)
        check_positive("max_perfect", self.max_perfect, minimum=0)
        if self.reduce not in passmatrix.REDUCE_RULES:
            raise ConfigError(f"FinalizeConfig.reduce must be one of {passmatrix.REDUCE_RULES}, got {self.reduce!r}")

    def replace(self, **changes: Any) -> FinalizeConfig:
        """A copy with ``changes`` applied (validated again)."""
        return dataclasses.replace(self, **changes)


def _counted_rows(solutions: Any, n_rows: int, exclude: tuple[str, ...]) -> np.ndarray:
    if not exclude or not solutions:
        return np.arange(n_rows, dtype=np.int64)
    models = [s.get("model", "") if isinstance(s, dict) else "" for s in solutions]
    return np.asarray([i for i, m in enumerate(models) if m not in exclude], dtype=np.int64)


def _suite(batch: dict[str, list], i: int) -> TestSuite:
    """Row ``i``'s tests with their pool arrays."""
    try:
        return TestSuite.from_row(batch, i)
    except SchemaError as err:
        raise SchemaError(f"problem {batch[schema.ID][i]!r}: {err}") from None


def _write(out: dict[str, list], batch: dict[str, list], i: int, suite: TestSuite, per_test: list[str],
           pool: list[str]) -> None:
    """Append the suite's cells; a column the suite does not carry keeps the row's own cell."""
    cells = suite.row()
    for column in per_test + pool:
        out[column].append(cells[column] if column in cells else batch[column][i])


def _count(out: dict[str, list], low_rate: int, duplicates: int, perfect: int) -> None:
    out[schema.FINAL_LOW_RATE_TESTS].append(low_rate)
    out[schema.FINAL_DUPLICATE_TESTS].append(duplicates)
    out[schema.FINAL_PERFECT].append(perfect)


def finalize(batch: dict[str, list], *, config: FinalizeConfig) -> dict[str, list]:
    """Batched ``Dataset.map`` function: prune tests and mark dropped problems.

    Args:
        batch (`dict[str, list]`): columns ``id``, ``pass_matrix`` and ``tests`` (or ``inputs``/``outputs``);
            optional ``test_origin``, ``statuses``, ``solutions``, ``drop_reason``.
        config (`FinalizeConfig`): thresholds and seed.

    Returns:
        `dict[str, list]`: the pruned per-test columns, ``drop_reason`` and the three counters.

    Raises:
        SchemaError: a required column is missing, a per-test cell is not a list of strings, or a pass matrix
            does not match its tests or solutions.

    Example:
        >>> out = finalize({"id": ["X_1"], "tests": [["assert a", "assert b", "assert c"]],
        ...                 "pass_matrix": [[[True, False, True], [True, False, False]]]},
        ...                config=FinalizeConfig(min_tests=1))
        >>> out["tests"], out["final_low_rate_tests"], out["drop_reason"]
        ([['assert a', 'assert c']], [1], [None])
    """
    schema.check_columns(batch, [schema.ID, schema.PASS_MATRIX], stage="finalize")
    if schema.TESTS not in batch and schema.INPUTS not in batch:
        schema.check_columns(batch, [schema.TESTS], stage="finalize")
    n = len(batch[schema.ID])
    per_test = [c for c in (schema.TESTS, schema.INPUTS, schema.OUTPUTS, schema.TEST_ORIGIN) if c in batch]
    pool = [c for c in (schema.PASS_MATRIX, schema.STATUSES) if c in batch]
    out: dict[str, list] = {c: [] for c in per_test + pool}
    out[schema.DROP_REASON] = []
    out[schema.FINAL_LOW_RATE_TESTS], out[schema.FINAL_DUPLICATE_TESTS], out[schema.FINAL_PERFECT] = [], [], []
    drops = batch.get(schema.DROP_REASON) or [None] * n
    solutions = batch.get(schema.SOLUTIONS) or [None] * n
    trusted = batch.get(schema.REFERENCE_OK) or [False] * n
    live = [i for i in range(n) if not drops[i]]
    for column in (schema.TESTS, schema.INPUTS, schema.OUTPUTS):
        check_list_cells(batch, column, stage="finalize", rows=live)

    for i in range(n):
        if drops[i]:
            for column in per_test + pool:
                out[column].append(batch[column][i])
            out[schema.DROP_REASON].append(drops[i])
            _count(out, 0, 0, 0)
            continue
        suite = _suite(batch, i)
        if solutions[i] is not None and len(solutions[i]) != suite.n_programs:
            raise SchemaError(f"problem {batch[schema.ID][i]!r}: pass matrix has {suite.n_programs} rows for "
                              f"{len(solutions[i])} solutions")
        counted = _counted_rows(solutions[i], suite.n_programs, config.exclude_models)
        if counted.size == 0:  # nothing judges the tests: keep them as they are and say why the problem goes
            _write(out, batch, i, suite, per_test, pool)
            out[schema.DROP_REASON].append(NO_SOLUTIONS)
            _count(out, 0, 0, 0)
            continue
        outcome = passmatrix.final_filter_outcome(
            suite.matrix[counted],
            rng=problem_rng(config.seed, batch[schema.ID][i], "finalize"),
            min_pass_rate=config.min_pass_rate,
            max_per_group=config.max_per_group,
            min_tests=config.min_tests,
            max_perfect=config.max_perfect,
            reduce=config.reduce,
            pool=suite.matrix,
            exempt=np.arange(suite.matrix.shape[1]) if config.trust_reference and trusted[i] else None,
        )
        _write(out, batch, i, suite.select(outcome.kept), per_test, pool)
        out[schema.DROP_REASON].append(outcome.drop_reason)
        _count(out, outcome.low_rate, outcome.duplicates, outcome.perfect)
    return out


def finalize_dataset(ds: Dataset, config: FinalizeConfig | None = None, *, batch_size: int = 64,
                     num_proc: int | None = None) -> Dataset:
    """Apply the final filter to every problem of ``ds`` (a thin wrapper over ``ds.map(finalize, batched=True)``).

    Args:
        ds (`datasets.Dataset`): the last round's problems with their pass matrices.
        config (`FinalizeConfig`, *optional*): defaults to ``FinalizeConfig()``.
        batch_size (`int`, defaults to 64): rows per batch.
        num_proc (`int`, *optional*): processes for ``Dataset.map``.

    Returns:
        `datasets.Dataset`: every row, pruned, with dropped problems marked in ``drop_reason``.

    Raises:
        SchemaError: a required column is missing.

    Example:
        >>> final = finalize_dataset(round3, FinalizeConfig(max_perfect=12))  # doctest: +SKIP
        >>> kept = final.filter(lambda r: r["drop_reason"] is None)  # doctest: +SKIP
    """
    from datasets import Value

    config = config or FinalizeConfig()
    schema.check_columns(ds.column_names, [schema.ID, schema.PASS_MATRIX], stage="finalize")
    features = ds.features.copy()
    features[schema.DROP_REASON] = Value("string")
    for name in (schema.FINAL_LOW_RATE_TESTS, schema.FINAL_DUPLICATE_TESTS, schema.FINAL_PERFECT):
        features[name] = Value("int32")
    if schema.TEST_ORIGIN in features:
        features[schema.TEST_ORIGIN] = schema.problem_features()[schema.TEST_ORIGIN]
    return ds.map(finalize, batched=True, batch_size=batch_size, fn_kwargs={"config": config}, features=features,
                  num_proc=num_proc, desc="finalize")
