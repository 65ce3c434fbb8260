"""The execute stage: every solution against every test in the sandbox, giving the pass matrix.

Reads ``solutions`` (a list of ``{"model", "sample", "code"}`` or of code strings) and ``tests`` (assert strings),
or ``inputs``/``outputs`` for stdin/stdout problems; writes ``pass_matrix`` (solutions x tests, bools) and, when
``config.statuses`` is set, ``statuses`` (the typed outcome of each cell).

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

import dataclasses
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import ConfigError, SandboxCrashed
from ..execution import Job, shared_sandbox
from ..execution.judge import plan_test
from ..execution.sandbox import MODES
from ..schema import INPUTS, JUDGED_INSIDE, OUTPUTS, PASS_MATRIX, SOLUTIONS, STATUSES, TESTS, check_columns
from ._common import check_list_cells

__all__ = ["ExecuteConfig", "execute", "execute_dataset", "solution_codes"]


@dataclass(frozen=True)
class ExecuteConfig:
    """Settings of the execute stage (they enter the ``datasets`` fingerprint).

    Args:
        timeout_s (`float`, defaults to 1.0): CPU seconds per test.
        memory_mb (`int`, defaults to 1024): address-space limit per solution.
        mode (`str`, defaults to ``"isolated"``): ``"isolated"`` (fork per test) or ``"fast"`` (tests in sequence).
        workers (`int`, *optional*): fork servers per process; defaults to the cores, or 1 under ``num_proc``.
        preamble (`str`, *optional*): code run before each solution (e.g. ``"from typing import List"``).
        statuses (`bool`, defaults to True): also write the ``statuses`` column.
        float_tol (`float`, *optional*): numeric tolerance of stdin/stdout output comparison.
        max_consecutive_timeouts (`int`, *optional*): per-solution time budget (see :class:`Sandbox`).
        isolation (`str`, defaults to ``"auto"``): sandbox isolation.
        version (`str`): bump when the semantics change, so cached results are recomputed (``"2"``: verdicts are
            decided by the judge outside the sandbox; some old ones were wrong).
    """

    timeout_s: float = 1.0
    memory_mb: int = 1024
    mode: str = "isolated"
    workers: int | None = None
    preamble: str | None = None
    statuses: bool = True
    float_tol: float | None = None
    max_consecutive_timeouts: int | None = None
    isolation: str = "auto"
    version: str = "2"

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(f"ExecuteConfig.mode must be one of {MODES}, got {self.mode!r}")
        if self.timeout_s <= 0:
            raise ConfigError("ExecuteConfig.timeout_s must be > 0")

    def sandbox_settings(self) -> dict[str, Any]:
        """Keyword arguments for :class:`Sandbox`."""
        settings = asdict(self)
        for key in ("statuses", "float_tol", "version"):
            settings.pop(key)
        return settings


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


def execute(batch: dict[str, list], *, config: ExecuteConfig) -> dict[str, list]:
    """Batched ``Dataset.map`` function: add ``pass_matrix`` (and ``statuses``, ``judged_inside``) to each row.

    ``judged_inside`` flags, per test, the few tests whose verdict the judge could not decide outside the sandbox
    (see :mod:`evolvecoder_datasets.execution.judge`); they ran whole inside, with in-process hardening only.

    All (solution, tests) jobs of the batch run at once over the sandbox's workers. One sandbox per process is
    started on first use and reused for every later batch.

    Args:
        batch (`dict[str, list]`): needs ``solutions`` and either ``tests`` or ``inputs``/``outputs``.
        config (`ExecuteConfig`): sandbox settings.

    Raises:
        SchemaError: ``solutions`` is missing, neither ``tests`` nor ``inputs``/``outputs`` is present, or a cell
            is not a list of strings (a bare string would otherwise run as one test per character).
        SandboxCrashed: a fork server died twice on the same job; nothing of the batch is recorded.

    Example:
        >>> out = execute({"solutions": [["def f():\\n    return 1"]], "tests": [["assert f() == 1"]]},
        ...               config=ExecuteConfig(mode="fast"))
        >>> out["pass_matrix"], out["statuses"], out["judged_inside"]
        ([[[True]]], [[['pass']]], [[False]])
    """
    check_columns(batch, [SOLUTIONS], stage="execute")
    if TESTS not in batch and INPUTS not in batch:
        check_columns(batch, [TESTS], stage="execute")
    check_list_cells(batch, SOLUTIONS, stage="execute", items="solutions")
    for column in (TESTS, INPUTS, OUTPUTS):
        check_list_cells(batch, column, stage="execute")
    sandbox = shared_sandbox(**config.sandbox_settings())

    n_rows = len(batch[SOLUTIONS])
    tests_col = batch.get(TESTS) or [None] * n_rows
    inputs_col = batch.get(INPUTS) or [None] * n_rows
    outputs_col = batch.get(OUTPUTS) or [None] * n_rows
    jobs: list[Job] = []
    shapes: list[tuple[int, int]] = []
    for solutions, tests, inputs, outputs in zip(batch[SOLUTIONS], tests_col, inputs_col, outputs_col):
        codes = solution_codes(solutions)
        if tests:
            jobs.extend(Job(code, tests=list(tests)) for code in codes)
            shapes.append((len(codes), len(tests)))
        elif inputs:
            jobs.extend(Job(code, inputs=list(inputs), outputs=list(outputs or ()), float_tol=config.float_tol)
                        for code in codes)  # fmt: skip
            shapes.append((len(codes), len(inputs)))
        else:
            shapes.append((len(codes), 0))
    reports = sandbox.run_many(jobs)
    broken = [r.infra_error for r in reports if r.infra_error]
    if broken:
        # Cells of a dead sandbox are not the programs' doing: fail the batch (a rerun, or Ray's retry, redoes it)
        # rather than record them as crashes.
        raise SandboxCrashed(f"{len(broken)} of {len(reports)} jobs hit a sandbox failure: {broken[0]}")
    reports = iter(reports)
    matrices, statuses = [], []
    for n_solutions, n_tests in shapes:
        rows = [next(reports) for _ in range(n_solutions)] if n_tests else []
        matrices.append([r.passed for r in rows] if n_tests else [[] for _ in range(n_solutions)])
        statuses.append([list(r.statuses) for r in rows] if n_tests else [[] for _ in range(n_solutions)])
    out = dict(batch)
    out[PASS_MATRIX] = matrices
    if config.statuses:
        out[STATUSES] = statuses
    out[JUDGED_INSIDE] = [[not plan_test(str(t)).outside for t in tests] if tests else [] for tests in tests_col]
    return out


def execute_dataset(ds, config: ExecuteConfig | None = None, *, num_proc: int | None = None, batch_size: int = 8):
    """Run :func:`execute` over a ``datasets.Dataset`` (cached by ``datasets`` like any map).

    Args:
        ds (`datasets.Dataset`): rows with ``solutions`` and ``tests`` (or ``inputs``/``outputs``).
        config (`ExecuteConfig`, *optional*): defaults to ``ExecuteConfig()``.
        num_proc (`int`, *optional*): processes for ``Dataset.map``; each then runs one fork server unless
            ``config.workers`` says otherwise.
        batch_size (`int`, defaults to 8): problems per batch (their jobs run concurrently).

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_list([{"solutions": ["print(input())"], "inputs": ["7\\n"], "outputs": ["7"]}])
        >>> execute_dataset(ds)[0]["statuses"]
        [['pass']]
    """
    config = config or ExecuteConfig()
    if num_proc and num_proc > 1 and config.workers is None:
        # Each map process runs its own sandbox: one fork server each, or the processes oversubscribe the cores.
        config = dataclasses.replace(config, workers=1)
    return ds.map(execute, batched=True, batch_size=batch_size, fn_kwargs={"config": config}, num_proc=num_proc,
                  desc="execute")
