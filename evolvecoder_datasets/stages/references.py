"""Stage: which of its tests each problem's reference passes (the trusted tests of the mutation score).

A batched ``Dataset.map`` function; the recipe's round statistics run it here or, when the recipe runs its execution
on Ray, as shard tasks (:func:`evolvecoder_datasets.distributed.map_shards`).

Example:
    >>> from evolvecoder_datasets import schema
    >>> schema.REFERENCE, schema.REFERENCE_PASSED      # the column it reads and the column it writes
    ('reference', 'reference_passed')
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from .. import schema
from ..execution import shared_sandbox
from .support.resources import task_cpus

if TYPE_CHECKING:  # pragma: no cover
    from .execute import ExecuteConfig

__all__ = ["reference_verdicts"]


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
    reports = shared_sandbox(config).run_many(list(zip(batch[schema.REFERENCE], batch[schema.TESTS])))
    return {schema.REFERENCE_PASSED: [[bool(p) for p in report.passed] for report in reports]}
