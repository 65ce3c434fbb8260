"""Calibrate per-problem time limits from each problem's reference solution, as a ``Dataset.map`` box.

The execute stage calibrates the limits of the problems it runs (see :mod:`evolvecoder_datasets.stages.execute`);
this box does it alone, for a dataset that has references but no pool to run: a dataset about to be used for
training with the rewards, say. Each reference runs once against its problem's tests under the fixed
``timeout_s``; the limit is ``limit_factor x`` its slowest passed test's CPU time, at least ``limit_floor_s``, at
most ``timeout_s`` (see :mod:`evolvecoder_datasets.limits`).

Reads ``tests`` and ``reference_solutions`` (a list of programs; the first that defines a function the tests call
is used) and, when present, ``reference_ok`` (rows where it is false are not calibrated). Writes ``time_limit_s``
(null where there is no usable reference, or it passed no test).

Example:
    >>> from datasets import Dataset
    >>> from evolvecoder_datasets.stages.calibrate import calibrate_dataset
    >>> from evolvecoder_datasets.stages.execute import ExecuteConfig
    >>> ds = Dataset.from_list([{"tests": ["assert sq(3) == 9"], "reference_solutions": ["def sq(x):\\n    return x * x"]},
    ...                         {"tests": ["assert sq(3) == 9"], "reference_solutions": []}])
    >>> list(calibrate_dataset(ds, ExecuteConfig(mode="fast"))["time_limit_s"])
    [0.1, None]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..execution import Job, shared_sandbox
from ..schema import TIME_LIMIT
from ..schema import REFERENCE_OK, REFERENCE_SOLUTIONS, TESTS, check_columns
from .execute import ExecuteConfig, reference_limit
from ..checks import check_list_cells
from ..code_names import reference_for
from .support.stream import Plan, stream_jobs

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["calibrate", "calibrate_dataset"]


def calibrate(batch: dict[str, list], *, config: ExecuteConfig) -> dict[str, list]:
    """Batched ``Dataset.map`` function: each row's calibrated ``time_limit_s`` from its reference's CPU time.

    Args:
        batch (`dict[str, list]`): ``tests`` and ``reference_solutions``; optional ``reference_ok``.
        config (`ExecuteConfig`): the sandbox settings, ``timeout_s`` (the ceiling), ``limit_factor`` and
            ``limit_floor_s``.

    Raises:
        SchemaError: a column is missing or a cell is not a list of strings.

    Example:
        >>> calibrate({"tests": [["assert f() == 1"]], "reference_solutions": [["def f():\\n    return 1"]]},
        ...           config=ExecuteConfig(mode="fast"))
        {'time_limit_s': [0.1]}
    """
    check_columns(batch, [TESTS, REFERENCE_SOLUTIONS], stage="calibrate")
    check_list_cells(batch, TESTS, stage="calibrate")
    check_list_cells(batch, REFERENCE_SOLUTIONS, stage="calibrate")
    n = len(batch[TESTS])
    ok = batch.get(REFERENCE_OK) or [True] * n
    references = []
    for tests, programs, confirmed in zip(batch[TESTS], batch[REFERENCE_SOLUTIONS], ok):
        tests = list(tests or ())
        references.append((reference_for(list(programs or ()), tests) if tests and confirmed else None, tests))
    sandbox = shared_sandbox(config)

    def plan(item: tuple[str | None, list[str]]) -> Plan:
        reference, tests = item
        return Plan(lambda _ref: [Job(reference, tests=tests)] if reference is not None else [])

    limits: list[Any] = []
    for _item, _first, reports in stream_jobs(sandbox, references, plan):
        limits.append(reference_limit(reports[0], config) if reports else None)
    return {TIME_LIMIT: limits}


def calibrate_dataset(ds: Dataset, config: ExecuteConfig | None = None, *, batch_size: int = 64) -> Dataset:
    """``ds`` with a ``time_limit_s`` column calibrated from its references (cached by ``datasets`` like any map).

    Args:
        ds (`datasets.Dataset`): rows with ``tests`` and ``reference_solutions``.
        config (`ExecuteConfig`, *optional*): defaults to ``ExecuteConfig()`` (isolated mode, 1 s ceiling, factor 10,
            floor 0.1 s).
        batch_size (`int`, defaults to 64): rows per ``map`` batch (their references run together).

    Raises:
        SchemaError: a required column is missing.

    Example:
        >>> from evolvecoder_datasets.rewards import make_code_reward
        >>> train = calibrate_dataset(train, ExecuteConfig(mode="fast"))            # doctest: +SKIP
        >>> reward = make_code_reward(mode="fast")   # reads the time_limit_s column  # doctest: +SKIP
    """
    from datasets import Value

    config = config or ExecuteConfig()
    check_columns(ds.column_names, [TESTS, REFERENCE_SOLUTIONS], stage="calibrate")
    features = ds.features.copy()
    features[TIME_LIMIT] = Value("float64")
    return ds.map(calibrate, batched=True, batch_size=batch_size, fn_kwargs={"config": config}, features=features,
                  desc="calibrate time limits")  # fmt: skip
