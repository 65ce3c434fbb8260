"""Stage: generate each problem's AST mutants and score its test suite against them (the mutation score).

A batched ``Dataset.map`` function; :func:`evolvecoder_datasets.distributed.score_mutants_distributed` runs it as
coarse Ray tasks.

Example:
    >>> from evolvecoder_datasets.stages.mutation import MutationConfig, score_mutants
    >>> out = score_mutants({"reference": ["def neg(x):\\n    return -x\\n"], "tests": [["assert neg(2) == -2"]]},
    ...                     config=MutationConfig())  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import schema
from ..errors import ConfigError, SchemaError
from ..mutants import MUTATOR_VERSION, OPERATORS
from .support.resources import task_cpus as _task_cpus

if TYPE_CHECKING:  # pragma: no cover
    from .execute import ExecuteConfig

__all__ = ["MutationConfig", "score_mutants"]


@dataclass(frozen=True)
class MutationConfig:
    """Settings of mutant generation and scoring per problem.

    Args:
        reference_column (`str`, defaults to ``"reference"``): column with a reference solution per problem.
        tests_column (`str`, defaults to ``"tests"``): the suite being scored.
        reference_tests_column (`str`, *optional*): a trusted suite that sets equivalent mutants aside.
        max_mutants (`int`, *optional*, defaults to 32): mutants per problem (seeded sample); None keeps all.
        seed (`int`, defaults to 0): seed of that sample.
        operators (`tuple[str, ...]`): mutation operators (see :data:`evolvecoder_datasets.mutants.OPERATORS`).
        execute (`ExecuteConfig`, *optional*): sandbox settings; defaults to ``ExecuteConfig(mode="fast")``.
        version (`str`): enters the fingerprint of cached and ``results_dir`` results (the stage function is
            hashed by name only); bumped whenever mutant generation or scoring changes, so old scores are
            recomputed rather than reused.

    Raises:
        ConfigError: an unknown operator or a negative ``max_mutants``.

    Example:
        >>> MutationConfig(reference_column="canonical_solution", max_mutants=16).tests_column
        'tests'
    """

    reference_column: str = schema.REFERENCE
    tests_column: str = schema.TESTS
    reference_tests_column: str | None = None
    max_mutants: int | None = 32
    seed: int = 0
    operators: tuple[str, ...] = OPERATORS
    execute: ExecuteConfig | None = None
    version: str = MUTATOR_VERSION  # the mutator decides what is scored

    def __post_init__(self) -> None:
        unknown = set(self.operators) - set(OPERATORS)
        if unknown:
            raise ConfigError(f"unknown mutation operators {sorted(unknown)}; choose from {list(OPERATORS)}")
        if self.max_mutants is not None and (isinstance(self.max_mutants, bool) or self.max_mutants < 0):
            raise ConfigError(f"MutationConfig.max_mutants must be >= 0 or None, got {self.max_mutants!r}")


def score_mutants(batch: dict[str, list], *, config: MutationConfig) -> dict[str, list]:
    """Batched stage: generate each problem's mutants and score its test suite against them.

    Reads ``config.reference_column`` and ``config.tests_column`` (and ``config.reference_tests_column``);
    writes ``mutation_score`` (float, NaN without a usable reference or mutants), ``mutants_killed`` and
    ``mutants_considered`` (ints). A reference that does not parse scores NaN instead of stopping the run.

    Args:
        batch (`dict[str, list]`): problem rows.
        config (`MutationConfig`): columns, sample size and sandbox settings.

    Raises:
        SchemaError: a configured column is missing, a suite cell is not a list of strings (a bare string would
            be scored as one test per character), or a reference is not a string.

    Example:
        >>> from evolvecoder_datasets.stages.mutation import MutationConfig, score_mutants
        >>> out = score_mutants({"reference": ["def is_adult(age):\\n    return age >= 18\\n"],
        ...                      "tests": [["assert is_adult(18)", "assert not is_adult(17)"]]},
        ...                     config=MutationConfig())
        >>> out["mutation_score"]
        [1.0]
    """
    from ..execution import shared_sandbox
    from ..mutants import mutation_score
    from .execute import ExecuteConfig
    from ..checks import check_list_cells

    needed = [config.reference_column, config.tests_column]
    if config.reference_tests_column:
        needed.append(config.reference_tests_column)
    schema.check_columns(batch, needed, stage="score_mutants")
    # A plain-string suite (e.g. HumanEval's `test` block) would be scored as one test per character.
    for column in needed[1:]:
        check_list_cells(batch, column, stage="score_mutants")
    for row, reference in enumerate(batch[config.reference_column]):
        if reference is not None and not isinstance(reference, str):
            raise SchemaError(
                f"stage 'score_mutants': column {config.reference_column!r} must hold one program (a string) per "
                f"row, got {type(reference).__name__} in row {row}"
            )
    execute_config = config.execute or ExecuteConfig(mode="fast")
    if execute_config.workers is None:
        execute_config = dataclasses.replace(
            execute_config, workers=_task_cpus(default=len(os.sched_getaffinity(0)))
        )
    sandbox = shared_sandbox(execute_config)
    extra = (
        batch[config.reference_tests_column]
        if config.reference_tests_column
        else [None] * len(batch[needed[0]])
    )
    scores, killed, considered = [], [], []
    for reference, tests, reference_tests in zip(
        batch[config.reference_column], batch[config.tests_column], extra
    ):
        try:
            result = mutation_score(
                reference or "",
                list(tests or ()),
                reference_tests=list(reference_tests or ()),
                sandbox=sandbox,
                max_mutants=config.max_mutants,
                seed=config.seed,
                operators=config.operators,
            )
        except SchemaError:
            scores.append(float("nan"))
            killed.append(0)
            considered.append(0)
            continue
        scores.append(result.score)
        killed.append(result.killed)
        considered.append(result.considered)
    return {schema.MUTATION_SCORE: scores, schema.MUTANTS_KILLED: killed, schema.MUTANTS_CONSIDERED: considered}
