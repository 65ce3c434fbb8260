"""Running a round's new tests: each problem's confirmed reference first, then its whole pool.

The reference runs at the fixed limit and judges every new test (tests the shared timeout policy left
``unexecuted`` after two reference timeouts in a row are run again one job each). The pool then runs under the
problem's calibrated limit (``time_limit_s``), raised to cover what the reference needed on the new tests; a
problem without a stored limit stays at the fixed one. All problems are streamed through one sandbox together
(:func:`~evolvecoder_datasets.stages.support.stream.stream_jobs`).

Example:
    >>> from dataclasses import dataclass
    >>> from evolvecoder_datasets.execution import Sandbox
    >>> from evolvecoder_datasets.stages.execute import ExecuteConfig
    >>> from evolvecoder_datasets.stages.support.new_tests import run_new_tests
    >>> @dataclass
    ... class P:
    ...     codes: list
    ...     reference: str | None = "x = 1"
    ...     limit: float | None = None
    >>> with Sandbox(workers=1, mode="fast") as sb:
    ...     [(ref, rows)] = run_new_tests(sb, [(P(["x = 1", "x = 2"]), ["assert x == 1"])], ExecuteConfig())
    >>> ref.passed, [r.passed for r in rows]
    ([True], [[True], [False]])
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol, TypeVar

from ...execution import ExecutionReport, Job
from ..execute import ExecuteConfig, reference_limit
from .stream import Plan, stream_jobs

__all__ = ["PoolProblem", "run_new_tests"]


class PoolProblem(Protocol):
    """What :func:`run_new_tests` needs of a problem: its pool, its confirmed reference and its calibrated limit
    (updated in place when the reference needs more on the new tests)."""

    codes: list[str]
    reference: str | None
    limit: float | None


P = TypeVar("P", bound=PoolProblem)


def run_new_tests(
    sandbox: Any, work: list[tuple[P, list[str]]], settings: ExecuteConfig
) -> list[tuple[ExecutionReport | None, list[ExecutionReport]]]:
    """Run each problem's new tests against its reference and its whole pool.

    Args:
        sandbox (`Sandbox`): the sandbox every job runs in.
        work (`list[tuple[PoolProblem, list[str]]]`): each problem with its new tests (a non-empty list).
        settings (`ExecuteConfig`): the sandbox settings; they give the pool's time limit per job.

    Returns:
        `list[tuple[ExecutionReport | None, list[ExecutionReport]]]`: per item of ``work``, in its order, the
        reference's report (``None`` without a reference; no test of it left ``unexecuted``) and one report per
        program of the pool.
    """
    done = []
    for (problem, tests), ref_report, rows in stream_jobs(sandbox, work, lambda item: _jobs(*item, settings)):
        if ref_report is not None and "unexecuted" in ref_report.statuses:
            ref_report = _each_alone(sandbox, problem.reference, tests, ref_report)
        done.append((ref_report, rows))
    return done


def _jobs(problem: PoolProblem, tests: list[str], settings: ExecuteConfig) -> Plan:
    """The reference (at the fixed limit) first, then the pool under the problem's calibrated limit, raised to
    cover what the reference needed on the new tests. A problem without a stored limit stays at the fixed one."""

    def pool(reference: ExecutionReport | None) -> list[Job]:
        if problem.limit is not None and reference is not None and not reference.infra_error:
            problem.limit = max(problem.limit, reference_limit(reference, settings) or 0.0)
        timeout = settings.job_timeout(problem.limit)
        return [Job(code, tests=tests, timeout_s=timeout) for code in problem.codes]

    first = Job(problem.reference, tests=tests) if problem.reference is not None else None
    return Plan(pool, first=first)


def _each_alone(sandbox: Any, program: str, tests: list[str], report: ExecutionReport) -> ExecutionReport:
    """``report`` with the tests the timeout policy left ``unexecuted`` run one job each: the reference check judges
    every new test, even after the reference timed out on two in a row (rare, so run here, after the stream)."""
    left = [i for i, status in enumerate(report.statuses) if status == "unexecuted"]
    statuses = list(report.statuses)
    for i, alone in zip(left, sandbox.run_many([Job(program, tests=[tests[i]]) for i in left])):
        statuses[i] = alone.statuses[0]
    return dataclasses.replace(report, statuses=statuses)
