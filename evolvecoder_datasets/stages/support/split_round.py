"""A round in two passes: the model writers where the model is, the search where its jobs run.

The search writer's work per problem (drawing candidate inputs, its bookkeeping over the targets, running the new
tests against the pool) is Python that grows with the run. In one pass (:func:`~..evolve.evolve`) it runs wherever
the round's ``Dataset.map`` runs, which on a cluster is the driver. Split, the first pass runs everything but the
assert problems' search (``evolve(..., defer_search=True)``: the model writers, the domains, stdin/stdout problems
whole) and leaves each assert problem's search state in a private column; the second pass
(:func:`evolve_search`) is a batched function of the rows alone, so it can run as shard tasks on the nodes
(:meth:`~evolvecoder_datasets.distributed.executor.Executor.evolve`). The rows that come back are those of one
pass: the search reads the same suite, matrix, domain, callee and references, and seeds itself per problem.

Example:
    >>> from evolvecoder_datasets.stages.support.split_round import SEARCH_STATE
    >>> SEARCH_STATE
    '_search_state'
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ... import schema
from ...schema import TIME_LIMIT
from ...search.domain import Domain
from .round_columns import round_columns
from .round_state import SEARCH_STATE, RoundProblem, round_problem, search_round

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

    from ..evolve import EvolveConfig

__all__ = ["SEARCH_STATE", "evolve_in_two", "evolve_search"]

def _problem(batch: dict[str, list], i: int, state: dict[str, Any], config: EvolveConfig) -> RoundProblem:
    """Row ``i`` as the first pass left it, with its search state: the problem the search would have seen."""
    problem = round_problem(batch, i, seed=config.seed, round_=config.round, reference=state["reference"],
                            search_reference=state["search_reference"], callee=state["callee"])
    if state["domain"]:
        cell = batch[schema.DOMAIN][i]
        problem.domain = Domain.from_row(cell)
        problem.seed_violations = int((cell or {}).get("seed_violations") or 0)
    return problem


def evolve_search(batch: dict[str, list], *, config: EvolveConfig) -> dict[str, list]:
    """Batched ``Dataset.map`` function, the second pass of a split round: the search of every row whose
    :data:`SEARCH_STATE` the first pass filled, its tests appended and logged as one pass would; every other row
    as it came.

    Example:
        >>> from evolvecoder_datasets.stages.evolve import EvolveConfig
        >>> from evolvecoder_datasets.search.writer import SearchConfig
        >>> batch = {"id": ["a"], "question": ["q"], "tests": [[]], "solutions": [[]], "pass_matrix": [[]],
        ...          "test_origin": [[]], "round": [0], "evolve_log": [[]], SEARCH_STATE: [None]}
        >>> evolve_search(batch, config=EvolveConfig(search=SearchConfig(), adversarial=False,
        ...                                          discriminative=False))["tests"]
        [[]]
    """
    n = len(batch[schema.ID])
    problems: list[RoundProblem | None] = [
        None if cell is None else _problem(batch, i, json.loads(cell), config)
        for i, cell in enumerate(batch[SEARCH_STATE])
    ]
    live = [p for p in problems if p is not None]
    if live and config.search is not None:
        search_round(live, config.search, seed=config.seed, round_=config.round, execute=config.execute)
    logs = [list(log or ()) for log in (batch.get(schema.EVOLVE_LOG) or [None] * n)]
    rounds = list(batch.get(schema.ROUND) or [0] * n)
    return round_columns(batch, problems, logs, rounds, batch.get(TIME_LIMIT) or [None] * n, config.round)


def evolve_in_two(ds: Dataset, config: EvolveConfig, *, map_search: Callable[..., Dataset], batch_size: int = 16,
                  num_proc: int | None = None) -> Dataset:
    """One round over ``ds`` in two passes: :func:`~..evolve.evolve_dataset` with the search deferred, then
    ``map_search(first, evolve_search, fn_kwargs=..., features=..., desc=...)`` (``Executor.map``'s shape: on a
    cluster, shard tasks on the nodes). The same rows as ``evolve_dataset(ds, config)``.

    Example:
        >>> from evolvecoder_datasets.distributed.executor import Executor
        >>> round1 = evolve_in_two(round0, config, map_search=Executor().map)  # doctest: +SKIP
    """
    from datasets import Features

    from ..evolve import evolve_dataset

    first = evolve_dataset(ds, config, batch_size=batch_size, num_proc=num_proc, defer_search=True)
    written = [schema.TESTS, schema.TEST_ORIGIN, schema.PASS_MATRIX, schema.ROUND, schema.EVOLVE_LOG, schema.DOMAIN,
               schema.STATUSES, TIME_LIMIT, schema.INPUTS, schema.OUTPUTS]  # fmt: skip
    features = Features({name: first.features[name] for name in written if name in first.features})
    searched = map_search(first, evolve_search, fn_kwargs={"config": config}, features=features,
                          desc=f"evolve round {config.round}: search")  # fmt: skip
    return searched.remove_columns([SEARCH_STATE])
