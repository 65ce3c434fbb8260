"""The domain box: each problem's precondition recorded, and its own asserts outside it dropped, before round 0.

A problem whose statement gives a precondition (shipped with its source:
:mod:`~evolvecoder_datasets.sources.statement_domains`; read from its ``Constraints:`` block:
:mod:`~evolvecoder_datasets.sources.constraints`; or declared by the row's own ``domain`` cell) has it recorded in
the ``domain`` column here, and its own asserts whose inputs the precondition does not admit are dropped (judged in
the sandbox) and counted in ``seed_violations``: round 0 publishes no test outside the statement, and the rounds
build on a suite that holds none. A problem whose domain can only be inferred from its asserts keeps an empty cell:
no assert of its own can lie outside the shape they show, and the evolve box derives it at round 1 (asking the
test-writer model for a precondition where one is configured).

Columns read: ``id``, ``tests``, optional ``question``, ``test_origin``, ``drop_reason``, ``reference_solutions``,
``reference_ok``, ``domain``. Columns written: ``tests``, ``test_origin`` (when present), ``domain``.

Example:
    >>> from evolvecoder_datasets.stages.domains import domains
    >>> batch = {"id": ["HumanEval_39"], "tests": [["assert prime_fib(1) == 2", "assert prime_fib(0) == 1"]]}
    >>> out = domains(batch)
    >>> out["tests"], out["domain"][0]["how"], out["domain"][0]["seed_violations"]
    ([['assert prime_fib(1) == 2']], 'statement', 1)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import schema
from ..search.domain import Domain
from .execute import ExecuteConfig
from .support.domains import admitted_tests, derive_domain

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["domains", "domains_dataset"]

#: Domains that can exclude a problem's own asserts (an inferred shape is read off them).
PRECONDITIONS = ("statement", "constraints", "model")


def domains(batch: dict[str, list], *, config: ExecuteConfig | None = None) -> dict[str, list]:
    """Batched ``Dataset.map`` function: record each problem's precondition and drop its own asserts outside it.

    Args:
        batch (`dict[str, list]`): columns ``id``, ``tests`` and the optional ones of the module docstring.
        config (`ExecuteConfig`, *optional*): the sandbox settings the preconditions run under (fast mode).

    Returns:
        `dict[str, list]`: ``tests``, ``domain`` and (when the batch has it) ``test_origin``.
    """
    schema.check_columns(batch, [schema.ID, schema.TESTS], stage="domains")
    n = len(batch[schema.ID])
    drops = batch.get(schema.DROP_REASON) or [None] * n
    origins = batch.get(schema.TEST_ORIGIN)
    cells = batch.get(schema.DOMAIN) or [None] * n
    questions = batch.get(schema.QUESTION) or [None] * n
    refs = batch.get(schema.REFERENCE_SOLUTIONS) or [None] * n
    oks = batch.get(schema.REFERENCE_OK) or [False] * n
    tests = [list(t or ()) for t in batch[schema.TESTS]]
    out_cells: list[dict[str, Any] | None] = list(cells)
    work, rows = [], []
    for i in range(n):
        if drops[i] or not tests[i]:
            continue
        methods = [str((o or {}).get("method", "seed")) for o in (origins[i] or ())] if origins else []
        reference = refs[i][0] if oks[i] and refs[i] else None
        derived, call = derive_domain(str(batch[schema.ID][i]), tests[i], methods or ["seed"] * len(tests[i]),
                                      reference, questions[i])
        domain = Domain.from_row(cells[i]) or derived
        if domain.how not in PRECONDITIONS and cells[i] is None:
            continue  # inferred: nothing of its own lies outside; the evolve box derives it at round 1
        work.append((domain, call.callee if call else None, tests[i]))
        rows.append((i, domain))
    if work:
        from ..execution import shared_sandbox

        sandbox = shared_sandbox(config or ExecuteConfig(), mode="fast")
        for (i, domain), (keep, _) in zip(rows, admitted_tests(work, sandbox, require_literal=False)):
            previous = int((cells[i] or {}).get("seed_violations") or 0)
            out_cells[i] = domain.to_row(seed_violations=previous + keep.count(False))
            tests[i] = [t for t, ok in zip(tests[i], keep) if ok]
            if origins:
                origins[i] = [o for o, ok in zip(origins[i] or (), keep) if ok]
    out: dict[str, list] = {schema.TESTS: tests, schema.DOMAIN: out_cells}
    if origins is not None:
        out[schema.TEST_ORIGIN] = list(origins)
    return out


def domains_dataset(ds: Dataset, config: ExecuteConfig | None = None, *, batch_size: int = 64,
                    num_proc: int | None = None) -> Dataset:
    """Run :func:`domains` over ``ds`` (a thin wrapper over ``ds.map(domains, batched=True)``), before the pool is
    executed.

    Example:
        >>> refined = domains_dataset(refined, ExecuteConfig())   # doctest: +SKIP
    """
    from datasets import Features

    features = dict(ds.features)
    features[schema.DOMAIN] = schema.domain_feature()
    return ds.map(domains, batched=True, batch_size=batch_size, fn_kwargs={"config": config},
                  features=Features(features), num_proc=num_proc, desc="domains")
