"""Stage: which of its tests each problem's reference passes (the trusted tests of the mutation score).

A batched ``Dataset.map`` function; the recipe's round statistics run it here or, when the recipe runs its execution
on Ray, as shard tasks (:func:`evolvecoder_datasets.distributed.map_shards`).

Example:
    >>> from evolvecoder_datasets.stages.references import REFERENCE, REFERENCE_PASSED
    >>> REFERENCE, REFERENCE_PASSED
    ('reference', 'reference_passed')
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from .. import schema
from .resources import get_sandbox, task_cpus

if TYPE_CHECKING:  # pragma: no cover
    from .execute import ExecuteConfig

__all__ = ["REFERENCE", "REFERENCE_PASSED", "reference_verdicts"]

#: Input column: one reference program per row.
REFERENCE = schema.REFERENCE
#: Output column: per row, whether the reference passes each of its tests.
REFERENCE_PASSED = schema.REFERENCE_PASSED


def reference_verdicts(batch: dict[str, list], *, config: ExecuteConfig) -> dict[str, list]:
    """Batched stage: whether each problem's reference passes each of its tests.

    Reads ``reference`` (one program per row) and ``tests``; writes ``reference_passed`` (a list of bools per row).
    On a Ray worker the sandbox gets one fork server per CPU the task reserved.

    Example:
        >>> from evolvecoder_datasets.stages.execute import ExecuteConfig
        >>> from evolvecoder_datasets.stages.references import reference_verdicts
        >>> reference_verdicts({"reference": ["def f():\\n    return 1"], "tests": [["assert f() == 1", "assert f() == 2"]]},
        ...                    config=ExecuteConfig(mode="fast"))["reference_passed"]   # doctest: +SKIP
        [[True, False]]
    """
    if config.workers is None and task_cpus(default=0):
        config = dataclasses.replace(config, workers=task_cpus())
    reports = get_sandbox(config).run_many(list(zip(batch[REFERENCE], batch[schema.TESTS])))
    return {REFERENCE_PASSED: [[bool(p) for p in report.passed] for report in reports]}
