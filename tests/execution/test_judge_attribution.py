"""Who caused a failure: a judge process killed from outside under a job is not the program's doing.

A judge process of the service, SIGKILLed by someone else mid-job (an operator, the OOM killer, a supervisor), gave
a right program ``crash`` with no infrastructure flag: reward 0 instead of ``None``. Now the job runs once more on
a fresh judge; a second such death is an infrastructure failure. The control: a wrong program under the same kill
keeps its own verdict (``fail``: neither a pass nor ``None``). Each test uses a service of its own (its own runtime
folder), so killing its judges touches no other test's service.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from evolvecoder_datasets.execution import Sandbox, _client

from .conftest import own_service as own_service_folder

# A right program whose only test keeps its judge busy for about 1.5 s of the program's CPU (the judge waits).
SLOW_RIGHT = "def f(x):\n    import time\n    end = time.process_time() + 1.2\n    while time.process_time() < end:\n" \
             "        pass\n    return x * 2\n"
TESTS = ["assert f(2) == 4"]


@pytest.fixture
def own_service(tmp_path):
    with own_service_folder(tmp_path / "svc"):
        yield


def _judges() -> set[int]:
    """The pids of this folder's judge processes (the service's children running ``_judge_process``)."""
    service = _client._started[-1].pid if _client._started else None
    assert service is not None, "the service was not started by this process"
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                command = fh.read()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == service and b"_judge_process" in command:
            found.add(int(entry))
    return found


def _kill_judges_while(busy: threading.Thread, *, times: int) -> int:
    """SIGKILL the judge processes running while ``busy`` runs, up to ``times`` rounds (each after the job has had
    0.4 s on a judge); the number of rounds done."""
    done = 0
    while busy.is_alive() and done < times:
        time.sleep(0.4)
        judges = _judges()
        for pid in judges:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        done += bool(judges)
    return done


def _in_thread(sb: Sandbox, program: str) -> tuple[threading.Thread, list]:
    out: list = []
    thread = threading.Thread(target=lambda: out.append(sb.run(program, TESTS)))
    thread.start()
    return thread, out


@pytest.mark.parametrize("mode", ["fast", "isolated"])
def test_a_judge_killed_once_from_outside_is_replaced_and_the_program_keeps_its_verdict(own_service, mode):
    with Sandbox(workers=1, mode=mode, timeout_s=4.0) as sb:
        assert sb.run("def f(x):\n    return x * 2\n", TESTS).statuses == ["pass"]  # warm: a judge is up
        busy, out = _in_thread(sb, SLOW_RIGHT)
        assert _kill_judges_while(busy, times=1) == 1
        busy.join(timeout=60)
        [report] = out
        assert report.statuses == ["pass"] and report.infra_error is None
        # the control: a wrong program under the same kill keeps its own verdict, not a pass and not None
        busy, out = _in_thread(sb, SLOW_RIGHT.replace("x * 2", "x * 3"))
        _kill_judges_while(busy, times=1)
        busy.join(timeout=60)
        assert out[0].statuses == ["fail"] and out[0].infra_error is None


def test_a_judge_killed_from_outside_on_both_tries_is_an_infrastructure_failure_not_a_crash(own_service):
    with Sandbox(workers=1, mode="fast", timeout_s=4.0) as sb:
        assert sb.run("def f(x):\n    return x * 2\n", TESTS).statuses == ["pass"]
        busy, out = _in_thread(sb, SLOW_RIGHT)
        assert _kill_judges_while(busy, times=6) >= 2
        busy.join(timeout=60)
        [report] = out
        assert report.infra_error is not None and "killed from outside" in report.infra_error
        assert "pass" not in report.statuses
