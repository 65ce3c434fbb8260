"""The execute stage: every solution against every test in the sandbox, giving the pass matrix.

Reads ``solutions`` (a list of ``{"model", "sample", "code"}`` or of code strings) and ``tests`` (assert strings),
or ``inputs``/``outputs`` for stdin/stdout problems (with the row's ``language``, ``checker`` and ``float_tol`` where
those columns exist: a C++ pool, a special judge, a tolerance for fractional answers; see
:mod:`evolvecoder_datasets.execution.checkers`); optionally ``reference_solutions``/``reference_ok`` (the refine
stage's confirmed reference) and ``time_limit_s``. Writes ``pass_matrix`` (solutions x tests, bools), ``statuses``
when ``config.statuses`` is set (the typed outcome of each cell), ``judged_inside``, and ``time_limit_s`` when
``config.calibrate`` is set.

**Time limits.** A problem with a confirmed reference gets a calibrated limit (see :mod:`evolvecoder_datasets.
limits`): the reference runs first under the fixed ``timeout_s``, and the pool then runs under ``limit_factor x``
the reference's slowest passed test (at least ``limit_floor_s``, at most ``timeout_s``). The limit is written to
``time_limit_s`` and reused by the evolution rounds and the rewards; a row that already holds one (a contest
problem's stated limit) is not measured again. A stdin/stdout problem's reference (the first of
``reference_solutions``) runs on its cases, judged as the pool is; where ``reference_language`` says it is written
in another language than the pool (a C++ reference of a Python problem) its CPU time says nothing of the pool's,
and the problem runs under ``timeout_s``, as problems without a reference do.

**No batch barrier.** :func:`execute_dataset` streams all the dataset's jobs through the sandbox
(:mod:`~evolvecoder_datasets.stages.support.stream`): a worker takes the next job as soon as it is free, so a
looping program holds back nothing but its own worker, whatever ``batch_size`` is. :func:`execute` (the
``Dataset.map`` function, also what the Ray engine runs per shard) streams the jobs of its batch the same way.

Example:
    >>> from datasets import Dataset
    >>> from evolvecoder_datasets.stages.execute import ExecuteConfig, execute_dataset
    >>> ds = Dataset.from_list([{"id": "T_1", "tests": ["assert f(2) == 4"],
    ...                          "solutions": [{"model": "m", "sample": 0, "code": "def f(x):\\n    return x * x"},
    ...                                        {"model": "m", "sample": 1, "code": "def f(x):\\n    return x + 3"}]}])
    >>> execute_dataset(ds, ExecuteConfig(timeout_s=1.0))[0]["pass_matrix"]
    [[True], [False]]
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..checks import check_list_cells
from ..code_names import reference_for
from ..errors import SandboxCrashed
from ..execution import ExecutionReport, Job, shared_sandbox
from ..execution.checkers import CHECKER_FAILED, Checker
from ..limits import SandboxSettings
from ..schema import (
    CHECKER,
    FLOAT_TOL,
    INPUTS,
    JUDGED_INSIDE,
    LANGUAGE,
    OUTPUTS,
    PASS_MATRIX,
    REFERENCE_LANGUAGE,
    REFERENCE_OK,
    REFERENCE_SOLUTIONS,
    SOLUTIONS,
    STATUSES,
    TESTS,
    TIME_LIMIT,
    check_columns,
)
from .support.stream import Plan, stream_jobs

__all__ = ["READS", "ExecuteConfig", "execute", "execute_dataset", "output_features", "reference_limit", "solution_codes"]

#: Every column the stage reads (those present are needed by an engine that ships only what a stage reads).
READS = (SOLUTIONS, TESTS, INPUTS, OUTPUTS, REFERENCE_SOLUTIONS, REFERENCE_OK, REFERENCE_LANGUAGE, TIME_LIMIT,
         LANGUAGE, CHECKER, FLOAT_TOL)  # fmt: skip
_STREAM_VERSION = "1"  # enters the cache file name of execute_dataset's results


@dataclass(frozen=True)
class ExecuteConfig(SandboxSettings):
    """Settings of the execute stage (they enter the ``datasets`` fingerprint).

    The sandbox fields (``timeout_s``, ``memory_mb``, ``mode``, ``workers``, ``preamble``, ``isolation``,
    ``max_consecutive_timeouts``, ``limit_factor``, ``limit_floor_s``, ``calibrate``, the wall and load limits and
    the caps) are those of :class:`~evolvecoder_datasets.limits.SandboxSettings`, defaults included: the config
    is handed to the sandbox whole (``shared_sandbox(config)``).

    Args:
        statuses (`bool`, defaults to True): also write the ``statuses`` column.
        float_tol (`float`, *optional*): numeric tolerance of stdin/stdout output comparison.
        version (`str`): bump when the semantics change, so cached results are recomputed (``"4"``: stdin/stdout
            problems calibrated too; ``"3"``: calibrated time limits and the shared timeout policy; ``"2"``: verdicts
            decided by the judge outside the sandbox).

    Raises:
        ConfigError: a sandbox setting is out of range.

    Example:
        >>> ExecuteConfig(mode="fast").sandbox_settings()["max_consecutive_timeouts"]
        2
    """

    statuses: bool = True
    float_tol: float | None = None
    version: str = "4"


def solution_codes(solutions: Sequence[Any] | None) -> list[str]:
    """Code strings of a ``solutions`` cell (structs with ``code`` or plain strings).

    Example:
        >>> solution_codes([{"model": "m", "sample": 0, "code": "x = 1"}, "y = 2"])
        ['x = 1', 'y = 2']
    """
    codes = []
    for item in solutions or ():
        codes.append(item.get("code") or "" if isinstance(item, dict) else str(item or ""))
    return codes


@dataclass
class _Row:
    """One problem's inputs to the stage."""

    codes: list[str]
    tests: list[str] | None
    inputs: list[str] | None
    outputs: list[str] | None
    reference: str | None
    limit: float | None
    language: str = "python"
    checker: Any = None
    float_tol: float | None = None


def _rows(columns: dict[str, list]) -> Iterator[_Row]:
    n = len(columns[SOLUTIONS])
    none = [None] * n
    tests_col, inputs_col, outputs_col = (columns.get(c) or none for c in (TESTS, INPUTS, OUTPUTS))
    refs_col = columns.get(REFERENCE_SOLUTIONS) or none
    ok_col = columns.get(REFERENCE_OK) or [True] * n
    limit_col = columns.get(TIME_LIMIT) or none
    language_col, checker_col, tol_col = (columns.get(c) or none for c in (LANGUAGE, CHECKER, FLOAT_TOL))
    ref_language_col = columns.get(REFERENCE_LANGUAGE) or none
    for i in range(n):
        tests = list(tests_col[i]) if tests_col[i] else None
        reference = None
        if refs_col[i] and ok_col[i]:
            if tests:
                reference = reference_for(list(refs_col[i]), tests)
            elif inputs_col[i] and ref_language_col[i] in (None, language_col[i] or "python"):
                reference = next(iter(refs_col[i]))  # a stdin problem's reference, in the pool's language
        yield _Row(solution_codes(columns[SOLUTIONS][i]), tests,
                   list(inputs_col[i]) if inputs_col[i] else None, list(outputs_col[i] or ()),
                   reference, limit_col[i], language_col[i] or "python", Checker.from_value(checker_col[i]),
                   tol_col[i])  # fmt: skip


def _plan(row: _Row, config: ExecuteConfig) -> Plan:
    """The row's jobs; with calibration on and no stored limit, its reference first (at the fixed limit)."""

    def jobs(limit: float | None) -> list[Job]:
        timeout = config.job_timeout(limit)
        if row.tests:
            return [Job(code, tests=row.tests, timeout_s=timeout) for code in row.codes]
        if row.inputs:
            tol = row.float_tol if row.float_tol is not None else config.float_tol
            return [Job(code, inputs=row.inputs, outputs=row.outputs, float_tol=tol, timeout_s=timeout,
                        language=row.language, checker=row.checker) for code in row.codes]  # fmt: skip
        return []

    # A problem with an empty pool is calibrated too: the limit travels with the dataset to the rewards.
    if config.calibrate and row.limit is None and row.reference is not None and (row.tests or row.inputs):
        def calibrated(reference: ExecutionReport | None) -> list[Job]:
            if reference is not None and reference.infra_error:  # the sandbox's failure, not the reference's
                raise SandboxCrashed(f"the reference of a problem hit a sandbox failure: {reference.infra_error}")
            row.limit = reference_limit(reference, config)
            return jobs(row.limit)

        if row.tests:
            first = Job(row.reference, tests=row.tests)
        else:  # judged as the pool is: its checker or the token compare, its language
            first = Job(row.reference, inputs=row.inputs, outputs=row.outputs, language=row.language,
                        checker=row.checker,
                        float_tol=row.float_tol if row.float_tol is not None else config.float_tol)
        return Plan(calibrated, first=first)
    return Plan(lambda _ref: jobs(row.limit))


def reference_limit(reference: ExecutionReport | None, config: SandboxSettings) -> float | None:
    """The calibrated limit from a reference's report: from its CPU time on the tests it passed (``None`` without
    a report, after a sandbox failure, or when it passed nothing).

    Example:
        >>> from evolvecoder_datasets.execution import ExecutionReport
        >>> report = ExecutionReport(["pass", "pass", "timeout"], cpu_s=[0.001, 0.02, 1.0])
        >>> reference_limit(report, ExecuteConfig(limit_factor=10.0, limit_floor_s=0.1))
        0.2
    """
    if reference is None or reference.infra_error:
        return None
    return config.calibrated_limit(c for s, c in zip(reference.statuses, reference.cpu_s) if s == "pass")


def _outputs(rows: Iterator[tuple[_Row, Any, list[ExecutionReport]]], config: ExecuteConfig) -> Iterator[dict]:
    """Each row's new cells, in order; a sandbox failure stops the stage (its cells are not the programs')."""
    for row, _reference, reports in rows:
        # A problem's broken checker is not the sandbox's failure: its cells stay ``unexecuted`` (never a pass).
        broken = [r.infra_error for r in reports if r.infra_error and not r.infra_error.startswith(CHECKER_FAILED)]
        if broken:
            # Cells of a dead sandbox are not the programs' doing: fail the stage (a rerun, or Ray's retry, redoes
            # it) rather than record them as crashes.
            raise SandboxCrashed(f"{len(broken)} of {len(reports)} jobs of a problem hit a sandbox failure: {broken[0]}")
        n_tests = len(row.tests or row.inputs or ())
        out = {
            PASS_MATRIX: [r.passed for r in reports] if n_tests else [[] for _ in row.codes],
            STATUSES: [list(r.statuses) for r in reports] if n_tests else [[] for _ in row.codes],
            JUDGED_INSIDE: _judged_inside(reports, len(row.tests)) if row.tests else [],
        }
        if config.calibrate:
            out[TIME_LIMIT] = row.limit
        yield out


def _judged_inside(reports: list[ExecutionReport], n_tests: int) -> list[bool]:
    """Per test, whether the service judged it inside the sandbox, as its reports say (the planner runs there, never
    here: a test is hostile input). ``False`` where no report says (a row without programs)."""
    for report in reports:
        if len(report.judged) == n_tests:
            return [where == "inside" for where in report.judged]
    return [False] * n_tests


def _new_columns(config: ExecuteConfig) -> list[str]:
    return [PASS_MATRIX] + ([STATUSES] if config.statuses else []) + [JUDGED_INSIDE] + (
        [TIME_LIMIT] if config.calibrate else [])


def _check_batch(batch: Any, stage: str = "execute") -> None:
    check_columns(batch, [SOLUTIONS], stage=stage)
    if TESTS not in batch and INPUTS not in batch:
        check_columns(batch, [TESTS], stage=stage)


def execute(batch: dict[str, list], *, config: ExecuteConfig) -> dict[str, list]:
    """Batched ``Dataset.map`` function: add ``pass_matrix`` (and ``statuses``, ``judged_inside``, ``time_limit_s``)
    to each row.

    ``judged_inside`` flags, per test, the few tests whose verdict the judge could not decide outside the sandbox
    (see :mod:`evolvecoder_datasets.execution.judge`); they ran whole inside, with in-process hardening only.
    ``time_limit_s`` is the row's calibrated limit (null without a confirmed reference; see the module doc).

    The batch's jobs stream over the sandbox's workers (references first where a limit is to be calibrated). One
    sandbox per process is started on first use and reused for every later batch. :func:`execute_dataset` streams
    across batches too.

    Args:
        batch (`dict[str, list]`): needs ``solutions`` and either ``tests`` or ``inputs``/``outputs``; reads
            ``reference_solutions``, ``reference_ok`` and ``time_limit_s`` when present.
        config (`ExecuteConfig`): sandbox settings.

    Raises:
        SchemaError: ``solutions`` is missing, neither ``tests`` nor ``inputs``/``outputs`` is present, or a cell
            is not a list of strings (a bare string would otherwise run as one test per character).
        SandboxCrashed: a fork server died twice on the same job; nothing of the batch is recorded.

    Example:
        >>> out = execute({"solutions": [["def f():\\n    return 1"]], "tests": [["assert f() == 1"]],
        ...                "reference_solutions": [["def f():\\n    return 1"]]},
        ...               config=ExecuteConfig(mode="fast"))
        >>> out["pass_matrix"], out["statuses"], out["judged_inside"], out["time_limit_s"]
        ([[[True]]], [[['pass']]], [[False]], [0.1])
    """
    _check_batch(batch)
    check_list_cells(batch, SOLUTIONS, stage="execute", items="solutions")
    for column in (TESTS, INPUTS, OUTPUTS):
        check_list_cells(batch, column, stage="execute")
    sandbox = shared_sandbox(config)
    rows = stream_jobs(sandbox, _rows(batch), lambda row: _plan(row, config))
    out = dict(batch)
    columns: dict[str, list] = {name: [] for name in _new_columns(config)}
    for cells in _outputs(rows, config):
        for name, values in columns.items():
            values.append(cells[name])
    out.update(columns)
    return out


def _read(ds, columns: list[str], chunk: int) -> Iterator[_Row]:
    """The dataset's rows, read ``chunk`` at a time (only the columns the stage needs)."""
    view = ds.select_columns(columns)
    for start in range(0, len(view), chunk):
        part = view[start : start + chunk]
        for name in (SOLUTIONS, TESTS, INPUTS, OUTPUTS):
            if name in part:
                check_list_cells(part, name, stage="execute", items="solutions" if name == SOLUTIONS else "text")
        yield from _rows(part)


def output_features(config: ExecuteConfig):
    """``datasets.Features`` of the columns the stage writes under ``config`` (``time_limit_s`` is float64, also
    when every row's is null).

    Example:
        >>> list(output_features(ExecuteConfig(statuses=False)))
        ['pass_matrix', 'judged_inside', 'time_limit_s']
    """
    from datasets import Features, List, Value

    from ..schema import solution_features

    pool = solution_features()
    every = {PASS_MATRIX: pool[PASS_MATRIX], STATUSES: pool[STATUSES], JUDGED_INSIDE: List(Value("bool")),
             TIME_LIMIT: Value("float64")}  # fmt: skip
    return Features({name: every[name] for name in _new_columns(config)})


def execute_dataset(ds, config: ExecuteConfig | None = None, *, num_proc: int | None = None, batch_size: int = 8):
    """The execute stage over a whole ``datasets.Dataset``, streamed: no worker waits for another problem's job.

    The new columns are written chunk by chunk to an Arrow file in the dataset's cache folder, named by the
    dataset's fingerprint and ``config`` (a rerun with both unchanged loads it, as ``Dataset.map`` would), and
    attached to ``ds``. An in-memory dataset gets in-memory results.

    Args:
        ds (`datasets.Dataset`): rows with ``solutions`` and ``tests`` (or ``inputs``/``outputs``).
        config (`ExecuteConfig`, *optional*): defaults to ``ExecuteConfig()``.
        num_proc (`int`, *optional*): kept for callers of the batch-wise stage; the stream drives ``config.workers``
            fork servers (default: the cores) from this process, which is what ``num_proc`` processes of one
            server each did.
        batch_size (`int`, defaults to 8): rows read (and results written) at a time. It does not gate
            execution: jobs of later rows start while earlier ones still run.

    Raises:
        SchemaError: a required column is missing or a cell has the wrong type.
        SandboxCrashed: the sandbox failed on a job twice; nothing is recorded.

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_list([{"solutions": ["print(input())"], "inputs": ["7\\n"], "outputs": ["7"]}])
        >>> execute_dataset(ds)[0]["statuses"]
        [['pass']]
    """
    from datasets import Dataset, are_progress_bars_disabled, concatenate_datasets, is_caching_enabled
    from datasets.arrow_writer import ArrowWriter
    from datasets.fingerprint import Hasher

    config = config or ExecuteConfig()
    _check_batch(ds.column_names)
    if num_proc and num_proc > 1 and config.workers is None:
        config = _with_workers(config, max(num_proc, len(os.sched_getaffinity(0))))
    needed = [c for c in READS if c in ds.column_names]
    features = output_features(config)
    names = list(features)
    base = ds.remove_columns([c for c in names if c in ds.column_names])
    path = None
    if ds.cache_files and is_caching_enabled():
        key = Hasher.hash([ds._fingerprint, config, _STREAM_VERSION])
        path = os.path.join(os.path.dirname(ds.cache_files[0]["filename"]), f"cache-execute-{key}.arrow")
        if os.path.exists(path):
            return concatenate_datasets([base, Dataset.from_file(path)], axis=1)

    sandbox = shared_sandbox(config)
    chunk = max(1, int(batch_size))
    rows = stream_jobs(sandbox, _read(ds, needed, chunk), lambda row: _plan(row, config))
    from tqdm.auto import tqdm

    cells = tqdm(_outputs(rows, config), total=len(ds), desc="execute", unit="problem",
                 disable=are_progress_bars_disabled())  # fmt: skip
    if path is None:
        columns: dict[str, list] = {name: [] for name in names}
        for out in cells:
            for name in names:
                columns[name].append(out[name])
        return concatenate_datasets([base, Dataset.from_dict(columns, features=features)], axis=1)
    partial = f"{path}.{os.getpid()}.tmp"
    try:
        with ArrowWriter(features=features, path=partial) as writer:
            pending: dict[str, list] = {name: [] for name in names}
            for out in cells:
                for name in names:
                    pending[name].append(out[name])
                if len(pending[names[0]]) >= chunk:
                    writer.write_batch(pending)
                    pending = {name: [] for name in names}
            if pending[names[0]] or not len(ds):
                writer.write_batch(pending)
            writer.finalize()
        os.replace(partial, path)
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    return concatenate_datasets([base, Dataset.from_file(path)], axis=1)


def _with_workers(config: ExecuteConfig, workers: int) -> ExecuteConfig:
    import dataclasses

    return dataclasses.replace(config, workers=workers)
