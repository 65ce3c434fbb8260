"""Verification of one candidate: stage A (the test without the solution must fail), then stage B (with it, pass).

:func:`verify_task` judges both stages outside the solution's process where it can: a test the split accepts
(:func:`~.split.split_pytest_module`), and whose tests are exactly the ones pytest collects from it
(:func:`~.collection.collection_mismatch`, against a ``pytest --collect-only`` run in the task's environment), runs
as planned asserts in the sandbox, whose judge decides every verdict, and pytest then runs the module as written
once. Elsewhere both stages are pytest runs in the repository's environment, judged inside (see
docs/threat-model.md), with the reason recorded: their runs must cover every test the separate collection found, and
the test must fail against a decoy ``task_module`` (a test whose pytest verdict does not depend on the solution, a
forged one, is rejected there). A failed verification says why, as a :class:`~.gates.GateResult` reason.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from dataclasses import dataclass

from .backend import EnvironmentBackend, RepoEnvironment
from .collection import collection_mismatch, ids_mismatch
from .exceptions import exception_references, learn_exception_classes
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
        inside_reason (`str`, defaults to ``""``): why a test was judged inside: the split's refusal
            (``"split: fixture"``), a collection that differs from the split (``"collection_mismatch: ..."``), a
            backend whose environments the sandbox cannot reach (``"no_sandbox"``), a test function the judge's
            planner keeps inside (``"planner: ..."``), or rewritten exception checks the judge could not decide where
            the plain split passed (``"exceptions: ..."``); empty when judged outside.
        collection (`PytestRun`, *optional*): the separate ``pytest --collect-only`` run of the module with the
            solution.
    """

    result: GateResult
    stage_a: PytestRun
    stage_b: PytestRun | None = None
    judged: str = "inside"
    inside_reason: str = ""
    collection: PytestRun | None = None


#: The ``task_module.py`` of the decoy run of a test judged inside: every public name imports, nothing works
#: (calling, comparing, iterating or testing one raises an exception no ``pytest.raises(Exception)`` catches; its
#: attributes are decoys too, private ones missing, as pytest's own introspection expects). A test that passes
#: against it does not test the solution, or forges pytest's verdict.
DECOY_SOLUTION = """\
class _DecoyUsed(BaseException):
    pass


class _Decoy:
    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return _Decoy()

    def __call__(self, *args, **kwargs):
        raise _DecoyUsed("call")

    def __eq__(self, other):
        raise _DecoyUsed("==")

    __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __eq__
    __hash__ = __bool__ = __iter__ = __len__ = __contains__ = __getitem__ = __call__


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Decoy()
"""


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

    pytest first collects the module with the solution beside it (``--collect-only``, in the task's environment, as
    every run here is launched). Where the test's shape allows (:func:`~.split.split_pytest_module`), pytest collects
    exactly the split's tests (:func:`~.collection.collection_mismatch`) and the backend's environment can be reached
    by the sandbox (:meth:`~.backend.EnvironmentBackend.sandbox_settings`), both stages are judged outside the
    solution's process: each ``test_*`` function runs as planned asserts in the sandbox, whose programs import the
    repository's environment, and the verdicts are decided by the judge (``Verification.judged == "outside"``).
    pytest then runs the module once with the solution, so the exported test passes as written, and that run must
    collect what the separate collection did. Otherwise both stages are pytest runs, judged inside, and
    ``Verification.inside_reason`` says why (see :func:`_verify_with_pytest` for what such a run must also pass).

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
        ``missing_module``, ``solution_fails_test``, ``no_tests_collected``, ``verify_timeout``,
        ``verify_crashed``, ``collection_mismatch`` or ``test_passes_a_wrong_solution``.

    Example:
        >>> v = verify_task(test, solution, environment=env, backend=VenvBackend())   # doctest: +SKIP
        >>> v.result.ok, v.stage_a.status, v.stage_b.status, v.judged                  # doctest: +SKIP
        (True, 'failed', 'passed', 'outside')
    """
    files = {TEST_FILE: test, SOLUTION_FILE: solution}
    collection = backend.run_pytest(environment, files, test_file=TEST_FILE, timeout_s=timeout_s, collect_only=True)
    settings = backend.sandbox_settings(environment)
    settings = split_settings(settings, test_timeout_s=test_timeout_s) if settings is not None else None
    suite, plain, why = _split_or_reason(test, settings)
    if suite is not None:
        mismatch = collection_mismatch(collection, suite)
        why = "no_sandbox" if settings is None else f"collection_mismatch: {mismatch}" if mismatch else ""
    if suite is None or why:
        return _verify_with_pytest(test, solution, environment=environment, backend=backend, timeout_s=timeout_s,
                                   collection=collection, inside_reason=why)  # fmt: skip
    verification = _verify_split(suite, test, solution, environment=environment, backend=backend, settings=settings,
                                 timeout_s=timeout_s, collection=collection)  # fmt: skip
    if verification.result.ok or plain is None or verification.stage_b is None:
        return verification
    # The rewritten exception checks put a whole test outside, and the judge may hold no answer for another part of
    # it (an order between two program objects): the split as it was, whose planner keeps such a test inside, decides.
    fallback = _verify_split(plain, test, solution, environment=environment, backend=backend, settings=settings,
                             timeout_s=timeout_s, collection=collection)  # fmt: skip
    if not fallback.result.ok:
        return verification
    failure = verification.result.detail.partition(": ")[2][:200]
    return dataclasses.replace(fallback, judged=JUDGED_INSIDE, inside_reason="exceptions: the split with its "
                               f"exception checks rewritten failed where the plain split passed: {failure}")


def _verify_split(suite: SplitSuite, test: str, solution: str, *, environment: RepoEnvironment,
                  backend: EnvironmentBackend, settings, timeout_s: float, collection: PytestRun) -> Verification:
    """Stages A and B of a split test in the sandbox, then pytest once as written (same tests as the collection)."""
    stage_a = _judged_outside(suite, "", settings)
    if stage_a.status in ("timeout", "crashed"):
        return Verification(GateResult.failed("stage_a_no_verdict", stage_a.status), stage_a, collection=collection)
    if not any(o in ("failed", "error") for o in stage_a.tests.values()):
        return Verification(GateResult.failed("test_passes_without_solution", str(stage_a.counts())), stage_a,
                            collection=collection)  # fmt: skip
    stage_b = _judged_outside(suite, suite.program(solution), settings)
    failed = _stage_b_failure(stage_b, f"{stage_b.counts()}: {stage_b.log_tail[:300]}")
    if failed is not None:  # never handed to pytest instead: a solution that forges pytest's verdict would pass
        return Verification(failed, stage_a, stage_b, JUDGED_OUTSIDE, collection=collection)
    files = {TEST_FILE: test, SOLUTION_FILE: solution}
    as_written = backend.run_pytest(environment, files, test_file=TEST_FILE, timeout_s=timeout_s)
    failed = _stage_b_failure(as_written, f"the sandbox passed it, pytest did not: "
                                          f"{as_written.counts() or as_written.collect_errors or as_written.status}")
    if failed is None and (mismatch := ids_mismatch(as_written, collection)):
        failed = GateResult.failed("collection_mismatch", mismatch)
    if failed is not None:
        return Verification(failed, stage_a, as_written, collection=collection)
    if not stage_b.judged_outside:
        return Verification(GateResult.passed(), stage_a, stage_b, JUDGED_INSIDE, "planner: a test runs inside",
                            collection)  # fmt: skip
    return Verification(GateResult.passed(), stage_a, stage_b, JUDGED_OUTSIDE, collection=collection)


_FAILED = {"failed": "solution_fails_test", "no_tests": "no_tests_collected", "timeout": "verify_timeout",
           "crashed": "verify_crashed"}  # fmt: skip


def _split_or_reason(test: str, settings) -> tuple[SplitSuite | None, SplitSuite | None, str]:
    """``(split, the split without rewritten exception checks when it differs, "")``, or ``(None, None, why)``
    (``"split: <reason>"``). Where the sandbox reaches the task's environment, the exception classes the test names
    are learned there first, so its checks on them are split too (:mod:`.exceptions`, :mod:`.raises`)."""
    try:
        plain = split_pytest_module(test, test_file=TEST_FILE)
    except NotSplittable as err:
        return None, None, f"split: {err.reason}"
    references = exception_references(test) if settings is not None else ()
    if not references:
        return plain, None, ""
    classes = learn_exception_classes(references, settings=settings)
    suite = split_pytest_module(test, test_file=TEST_FILE, exceptions=classes)
    return suite, (plain if suite != plain else None), ""


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
    test: str, solution: str, *, environment: RepoEnvironment, backend: EnvironmentBackend, timeout_s: float,
    collection: PytestRun, inside_reason: str,
) -> Verification:
    """Both stages as pytest runs in the repository's environment (judged inside). A pytest verdict is the account
    of a process that ran the test and the solution, hardened (:mod:`._verdict_plugin`) but never proof, so stage B
    must also agree with evidence from other processes: its tests are those the separate collection found (each one
    with a passed outcome, none missing), and a run with :data:`DECOY_SOLUTION` must not pass."""
    def done(result: GateResult, stage_a: PytestRun, stage_b: PytestRun | None = None) -> Verification:
        return Verification(result, stage_a, stage_b, JUDGED_INSIDE, inside_reason, collection)

    stage_a = backend.run_pytest(environment, {TEST_FILE: test}, test_file=TEST_FILE, timeout_s=timeout_s)
    if stage_a.status in ("timeout", "crashed"):
        return done(GateResult.failed("stage_a_no_verdict", stage_a.status), stage_a)
    # Stage A must really fail: a collection error or a failed/errored test. Skips, xfails and "nothing collected"
    # (``pytest.importorskip("task_module")``, a skip marker set when the import fails) prove nothing.
    really_failed = bool(stage_a.collect_errors) or any(o in ("failed", "error") for o in stage_a.tests.values())
    if not really_failed:
        return done(GateResult.failed("test_passes_without_solution", str(stage_a.counts() or stage_a.status)),
                    stage_a)  # fmt: skip
    files = {TEST_FILE: test, SOLUTION_FILE: solution}
    stage_b = backend.run_pytest(environment, files, test_file=TEST_FILE, timeout_s=timeout_s)
    failed = _stage_b_failure(stage_b, str(stage_b.counts() or stage_b.collect_errors or stage_b.status))
    if failed is None and (mismatch := ids_mismatch(stage_b, collection)):
        failed = GateResult.failed("collection_mismatch", mismatch)
    if failed is not None:
        return done(failed, stage_a, stage_b)
    decoy = backend.run_pytest(environment, {TEST_FILE: test, SOLUTION_FILE: DECOY_SOLUTION}, test_file=TEST_FILE,
                               timeout_s=timeout_s)  # fmt: skip
    if decoy.passed:
        return done(GateResult.failed("test_passes_a_wrong_solution", "the test passed against a decoy task_module "
                                      "whose every name raises"), stage_a, stage_b)  # fmt: skip
    return done(GateResult.passed(), stage_a, stage_b)


def _stage_b_failure(run: PytestRun, detail: str) -> GateResult | None:
    """Why a run with the solution does not verify it (``None``: every test passed)."""
    missing = [name for name in run.missing_modules if name.split(".")[0] != "task_module"]
    if run.status == "failed" and missing:
        return GateResult.failed("missing_module", f"no module named {missing}")
    if run.status != "passed":
        return GateResult.failed(_FAILED[run.status], detail)
    return None

