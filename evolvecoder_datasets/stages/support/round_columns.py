"""The evolve stage's output columns: each live problem's grown suite and log, each passed-through row as it was.

Example:
    >>> from evolvecoder_datasets.stages.support.round_columns import round_columns
    >>> out = round_columns({"tests": [["assert f() == 1"]], "pass_matrix": [[[True]]]}, [None], [[]], [0], [None], 1)
    >>> out["tests"], out["round"]
    ([['assert f() == 1']], [0])
"""

from __future__ import annotations

from typing import Any

from ... import schema
from ...schema import TIME_LIMIT
from ...suite import as_origin_list
from .stdio_round import stdio_rows

__all__ = ["round_columns"]


def round_columns(batch: dict[str, list], problems: list[Any], logs: list[list[dict[str, Any]]], rounds: list[int],
                  limits: list[Any], round_: int, stdio: dict[int, Any] | None = None) -> dict[str, list]:
    """The round's columns from the batch and its problems (an assert problem's state, or ``None`` for a row passed
    through or, with its index in ``stdio``, a stdin/stdout problem's state): the grown suites and logs of the live
    ones, the cells of the others as they were, and ``inputs``/``outputs`` where the batch has them."""
    n = len(problems)
    stdio = stdio or {}
    origins_col = batch.get(schema.TEST_ORIGIN) or [None] * n
    statuses_col = batch.get(schema.STATUSES)
    out: dict[str, list] = {
        schema.TESTS: [],
        schema.TEST_ORIGIN: [],
        schema.PASS_MATRIX: [],
        schema.ROUND: [],
        schema.EVOLVE_LOG: [],
    }
    if statuses_col is not None:
        out[schema.STATUSES] = []
    if TIME_LIMIT in batch:
        out[TIME_LIMIT] = [stdio[i].limit if i in stdio else limits[i] if p is None else p.limit
                           for i, p in enumerate(problems)]
    old_domains = batch.get(schema.DOMAIN) or [None] * n
    out[schema.DOMAIN] = [old_domains[i] if p is None or p.domain is None else p.domain.to_row(p.seed_violations)
                          for i, p in enumerate(problems)]
    if schema.INPUTS in batch:  # a stdin problem's cases grow; every other row's stay as they were
        outputs = batch.get(schema.OUTPUTS) or [None] * n
        out[schema.INPUTS] = [stdio[i].inputs if i in stdio else batch[schema.INPUTS][i] for i in range(n)]
        out[schema.OUTPUTS] = [stdio[i].outputs if i in stdio else outputs[i] for i in range(n)]
    for i, problem in enumerate(problems):
        if i in stdio:
            stdio_rows(out, stdio[i], logs[i], round_, None if statuses_col is None else statuses_col[i])
            continue
        if problem is None:
            out[schema.TESTS].append(list(batch[schema.TESTS][i] or ()))
            out[schema.TEST_ORIGIN].append(as_origin_list(origins_col[i]))
            out[schema.PASS_MATRIX].append(batch[schema.PASS_MATRIX][i])
            out[schema.ROUND].append(rounds[i])
            out[schema.EVOLVE_LOG].append(logs[i])
            if statuses_col is not None:
                out[schema.STATUSES].append(statuses_col[i])
            continue
        cells = problem.suite.row()
        out[schema.TESTS].append(cells[schema.TESTS])
        out[schema.TEST_ORIGIN].append(cells[schema.TEST_ORIGIN])
        out[schema.PASS_MATRIX].append(cells[schema.PASS_MATRIX])
        out[schema.ROUND].append(round_)
        out[schema.EVOLVE_LOG].append(logs[i] + problem.log)
        if statuses_col is not None:
            out[schema.STATUSES].append(cells.get(schema.STATUSES, statuses_col[i]))
    return out
