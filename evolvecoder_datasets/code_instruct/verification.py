"""Verification of one candidate: stage A (the test without the solution must fail), then stage B (with it, pass).

:func:`verify_task` judges both stages outside the solution's process where it can: a test the split accepts
(:func:`~.split.split_pytest_module`) runs as planned asserts in the sandbox, whose judge decides every verdict, and
pytest then runs the module as written once. Elsewhere both stages are pytest runs in the repository's environment,
judged inside (see docs/threat-model.md). A failed verification says why, as a :class:`~.gates.GateResult` reason.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from .backend import EnvironmentBackend, RepoEnvironment
from .gates import GateResult
from .split import TEST_TIMEOUT_S, NotSplittable, SplitSuite, split_pytest_module, split_settings
from .tasks import JUDGED_INSIDE, JUDGED_OUTSIDE, SOLUTION_FILE, TEST_FILE
from .verdict import PytestRun

logger = logging.getLogger(__name__)

__all__ = ["Verification", "verify_task"]


@dataclass(frozen=True)
class Verification:
    """The two stages of one candidate.

    Args:
        result (`GateResult`): passed, or the reason it failed.
        stage_a (`PytestRun`): the run without ``task_module.py``.
        stage_b (`PytestRun` or `None`): the run with it (not run when stage A already disqualified the task).
        judged (`str`, defaults to ``"inside"``): ``"outside"`` where the sandbox's judge decided both stages'
            verdicts (the test was split into planned asserts), ``"inside"`` where pytest did.
    """

    result: GateResult
    stage_a: PytestRun
    stage_b: PytestRun | None = None
    judged: str = "inside"



def verify_task(
    test: str,
    solution: str,
    *,
    environment: RepoEnvironment,
    backend: EnvironmentBackend,
    timeout_s: float = 180.0,
    test_timeout_s: float = TEST_TIMEOUT_S,
) -> Verification:
    """Stage A (the test without ``task_module.py`` must fail) then stage B (with it, every test must pass).

    Where the test's shape allows (:func:`~.split.split_pytest_module`) and the backend's environment can be reached
    by the sandbox (:meth:`~.backend.EnvironmentBackend.sandbox_settings`), both stages are judged outside the
    solution's process: each ``test_*`` function runs as planned asserts in the sandbox, whose programs import the
    repository's environment, and the verdicts are decided by the judge (``Verification.judged == "outside"``).
    pytest then runs the module once with the solution, so the exported test passes as written. Otherwise both
    stages are pytest runs, judged inside (a solution there can reach the verdict plugin; see docs/threat-model.md).

    Stage A counts as failing only on a collection error or a failed or errored test; a run where every test
    passed, skipped or xfailed, or where nothing was collected, is ``test_passes_without_solution``.

    Args:
        test (`str`): the pytest module.
        solution (`str`): the reference ``task_module`` source.
        environment (`RepoEnvironment`): from ``backend.prepare(repo)``.
        backend (`EnvironmentBackend`): runs the stages.
        timeout_s (`float`, defaults to 180): wall-clock limit per pytest stage.
        test_timeout_s (`float`, defaults to 10): CPU limit per test function where the test is judged outside
            (loading the solution and its imports gets three times as much).

    Returns:
        `Verification`: passed, or failed with ``test_passes_without_solution``, ``stage_a_no_verdict``,
        ``missing_module``, ``solution_fails_test``, ``no_tests_collected``, ``verify_timeout`` or ``verify_crashed``.

    Example:
        >>> v = verify_task(test, solution, environment=env, backend=VenvBackend())   # doctest: +SKIP
        >>> v.result.ok, v.stage_a.status, v.stage_b.status, v.judged                  # doctest: +SKIP
        (True, 'failed', 'passed', 'outside')
    """
    suite = _split_or_none(test)
    settings = backend.sandbox_settings(environment) if suite is not None else None
    if suite is None or settings is None:
        return _verify_with_pytest(test, solution, environment=environment, backend=backend, timeout_s=timeout_s)
    settings = split_settings(settings, test_timeout_s=test_timeout_s)
    stage_a = _judged_outside(suite, "", settings)
    if stage_a.status in ("timeout", "crashed"):
        return Verification(GateResult.failed("stage_a_no_verdict", stage_a.status), stage_a)
    if not any(o in ("failed", "error") for o in stage_a.tests.values()):
        return Verification(GateResult.failed("test_passes_without_solution", str(stage_a.counts())), stage_a)
    stage_b = _judged_outside(suite, suite.program(solution), settings)
    failed = _stage_b_failure(stage_b, f"{stage_b.counts()}: {stage_b.log_tail[:300]}")
    if failed is not None:  # never handed to pytest instead: a solution that forges pytest's verdict would pass
        return Verification(failed, stage_a, stage_b, JUDGED_OUTSIDE)
    as_written = backend.run_pytest(environment, {TEST_FILE: test, SOLUTION_FILE: solution}, test_file=TEST_FILE,
                                    timeout_s=timeout_s)  # fmt: skip
    failed = _stage_b_failure(as_written, f"the sandbox passed it, pytest did not: "
                                          f"{as_written.counts() or as_written.collect_errors or as_written.status}")
    if failed is not None:
        return Verification(failed, stage_a, as_written)
    judged = JUDGED_OUTSIDE if stage_b.judged_outside else JUDGED_INSIDE
    return Verification(GateResult.passed(), stage_a, stage_b, judged)


_FAILED = {"failed": "solution_fails_test", "no_tests": "no_tests_collected", "timeout": "verify_timeout",
           "crashed": "verify_crashed"}  # fmt: skip


def _split_or_none(test: str) -> SplitSuite | None:
    try:
        return split_pytest_module(test, test_file=TEST_FILE)
    except NotSplittable:
        return None


def _judged_outside(suite, program: str, settings) -> PytestRun:
    """One stage in the sandbox: ``program`` against the suite's tests, as a :class:`PytestRun` (outcomes per
    pytest id; ``judged_outside`` says whether the judge decided every one). A failure of the sandbox itself is
    ``crashed`` (the candidate is not verified), never a reason to let pytest decide: where solutions keep the
    server's uid, a program can bring its fork server down, and pytest is where a forgery passes."""
    from ..execution import shared_sandbox

    report = shared_sandbox(settings).run(program, list(suite.tests))
    if report.infra_error is not None:
        logger.warning("the sandbox failed on a split test (the candidate is not verified): %s", report.infra_error)
        return PytestRun("crashed", log_tail=str(report.infra_error)[:4000])
    words = {"pass": "passed", "fail": "failed"}
    tests = {name: words.get(status, "error") for name, status in zip(suite.names, report.statuses)}
    seen = set(report.statuses)
    if seen == {"pass"}:
        status = "passed"
    elif seen & {"fail", "error"}:
        status = "failed"
    elif "timeout" in seen:
        status = "timeout"
    else:  # the program's process died (``os._exit``, a signal) before a test's verdict
        status = "crashed"
    log = "\n".join(f"{name}: {status} {message}".rstrip()
                     for name, status, message in zip(suite.names, report.statuses, report.messages))  # fmt: skip
    missing = tuple(dict.fromkeys(m.group(1) for m in map(_NO_MODULE.search, report.messages) if m))
    return PytestRun(status, tests, duration_s=sum(report.cpu_s), log_tail=log[-4000:], missing_modules=missing,
                     judged_outside=all(j == "outside" for j in report.judged))  # fmt: skip


_NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")


def _verify_with_pytest(
    test: str, solution: str, *, environment: RepoEnvironment, backend: EnvironmentBackend, timeout_s: float
) -> Verification:
    """Both stages as pytest runs in the repository's environment (judged inside)."""
    stage_a = backend.run_pytest(environment, {TEST_FILE: test}, test_file=TEST_FILE, timeout_s=timeout_s)
    if stage_a.status in ("timeout", "crashed"):
        return Verification(GateResult.failed("stage_a_no_verdict", stage_a.status), stage_a)
    # Stage A must really fail: a collection error or a failed/errored test. Skips, xfails and "nothing collected"
    # (``pytest.importorskip("task_module")``, a skip marker set when the import fails) prove nothing.
    really_failed = bool(stage_a.collect_errors) or any(o in ("failed", "error") for o in stage_a.tests.values())
    if not really_failed:
        detail = str(stage_a.counts() or stage_a.status)
        return Verification(GateResult.failed("test_passes_without_solution", detail), stage_a)
    files = {TEST_FILE: test, SOLUTION_FILE: solution}
    stage_b = backend.run_pytest(environment, files, test_file=TEST_FILE, timeout_s=timeout_s)
    failed = _stage_b_failure(stage_b, str(stage_b.counts() or stage_b.collect_errors or stage_b.status))
    return Verification(failed or GateResult.passed(), stage_a, stage_b)


def _stage_b_failure(run: PytestRun, detail: str) -> GateResult | None:
    """Why a run with the solution does not verify it (``None``: every test passed)."""
    missing = [name for name in run.missing_modules if name.split(".")[0] != "task_module"]
    if run.status == "failed" and missing:
        return GateResult.failed("missing_module", f"no module named {missing}")
    if run.status != "passed":
        return GateResult.failed(_FAILED[run.status], detail)
    return None

