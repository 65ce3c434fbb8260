"""A judge process stopped from outside (SIGSTOP) under a job is not the program's doing, as one killed is not.

Measured with the previous code: a judge SIGSTOPped while it judged a right program overran its job's wall
deadline (79 s here), was killed, and the job was answered ``crash`` with no infrastructure flag: reward 0 for a
right program, and no second try. No job can stop its judge (no program runs in it or, as root, as its uid; under
a namespace the judge is not in the program's pid namespace), so a judge found stopped for ``JUDGE_STOPPED_S``
(5 s) under a job counts as stopped from outside: the job runs once more on a fresh judge, and a second stop is an
infrastructure failure. (At first the stop was only seen at the job's wall deadline, over 40 s: 200 s for this file.)

Slow: about 8 s a test (a job of 1.2 s of CPU, 5 s stopped, the rerun).
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from evolvecoder_datasets.execution import Sandbox

from .conftest import own_service as own_service_folder
from .test_judge_attribution import SLOW_RIGHT, TESTS, _in_thread, _judges

# The shortest deadline SLOW_RIGHT fits: the judge's wall for a job of one test is 3 * load + 40 + 1.5 * wall + 2 s.
LIMITS = {"timeout_s": 2.0, "wall_timeout_s": 3.0, "load_timeout_s": 1.0}


@pytest.fixture
def own_service(tmp_path):
    """A service of its own: stopping its judges touches no other test's."""
    with own_service_folder(tmp_path / "svc"):
        yield


def _stop_new_judges_while(busy: threading.Thread, *, times: int) -> set[int]:
    """SIGSTOP every judge process not stopped yet while ``busy`` runs, up to ``times`` rounds (each round once a
    judge has had the job for 0.4 s); the pids stopped."""
    stopped: set[int] = set()
    rounds = 0
    while busy.is_alive() and rounds < times:
        time.sleep(0.4)
        fresh = _judges() - stopped
        for pid in fresh:
            try:
                os.kill(pid, signal.SIGSTOP)
                stopped.add(pid)
            except ProcessLookupError:
                pass
        rounds += bool(fresh)
    return stopped


def _resume(pids: set[int]) -> None:
    for pid in pids:  # those still alive (the one under the job was killed at its deadline)
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["fast", "isolated"])
def test_a_judge_stopped_once_from_outside_is_replaced_and_the_program_keeps_its_verdict(own_service, mode):
    with Sandbox(workers=1, mode=mode, **LIMITS) as sb:
        assert sb.run("def f(x):\n    return x * 2\n", TESTS).statuses == ["pass"]  # warm
        busy, out = _in_thread(sb, SLOW_RIGHT)
        stopped = _stop_new_judges_while(busy, times=1)
        try:
            busy.join(timeout=300)
        finally:
            _resume(stopped)
        assert stopped and not busy.is_alive()
        [report] = out
        assert report.statuses == ["pass"] and report.infra_error is None, report  # before: crash, reward 0
        assert sb.run("def f(x):\n    return x * 3\n", TESTS).statuses == ["fail"]  # and the sandbox judges on


@pytest.mark.slow
def test_a_judge_stopped_on_both_tries_is_an_infrastructure_failure_not_a_crash(own_service):
    with Sandbox(workers=1, mode="fast", **LIMITS) as sb:
        assert sb.run("def f(x):\n    return x * 2\n", TESTS).statuses == ["pass"]
        busy, out = _in_thread(sb, SLOW_RIGHT)
        stopped = _stop_new_judges_while(busy, times=2)
        try:
            busy.join(timeout=400)
        finally:
            _resume(stopped)
        [report] = out
        assert report.infra_error is not None and "stopped" in report.infra_error, report
        assert "pass" not in report.statuses
        assert sb.run("def f(x):\n    return x * 2\n", TESTS).statuses == ["pass"]
