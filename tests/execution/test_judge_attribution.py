"""Who caused a failure: a judge process, a fork server or the whole service killed from outside under a job is not
the program's doing.

A judge process of the service, SIGKILLed by someone else mid-job (an operator, the OOM killer, a supervisor), gave
a right program ``crash`` with no infrastructure flag: reward 0 instead of ``None``. Now the job runs once more on
a fresh judge; a second such death is an infrastructure failure. The control: a wrong program under the same kill
keeps its own verdict (``fail``: neither a pass nor ``None``). Each test uses a service of its own (its own runtime
folder), so killing its judges touches no other test's service.

One level down, the fork servers (which fork every solution) can die the same way: the program runs under a sandbox
uid of its own and cannot signal them, so a right program keeps its verdict (the job runs again on a restarted
server) and a second death makes the report an infrastructure failure. The service process itself, killed
mid-request, is started again by the caller and the request sent once more; killed on both tries, the report is an
infrastructure failure too (no verdict, never a hang).
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from evolvecoder_datasets.errors import SandboxError
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


# -- the fork servers and the service ------------------------------------------------------------------------------
def _kill_servers_while(sb: Sandbox, busy: threading.Thread, *, times: int) -> int:
    """SIGKILL the service's fork servers while ``busy`` runs, up to ``times`` rounds (each after the job has had
    0.4 s on a server); the number of rounds that killed something."""
    done = 0
    while busy.is_alive() and done < times:
        time.sleep(0.4)
        killed = False
        for pid in sb.server_pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed = True
            except ProcessLookupError:
                pass
        done += killed
    return done


@pytest.mark.parametrize("mode", ["fast", "isolated"])
def test_a_fork_server_killed_once_from_outside_is_restarted_and_the_program_keeps_its_verdict(own_service, mode):
    with Sandbox(workers=1, mode=mode, timeout_s=4.0) as sb:
        assert sb.run("def f(x):\n    return x * 2\n", TESTS).statuses == ["pass"]  # warm: a server is up
        before = set(sb.server_pids)
        busy, out = _in_thread(sb, SLOW_RIGHT)
        assert _kill_servers_while(sb, busy, times=1) == 1
        busy.join(timeout=60)
        [report] = out
        assert report.statuses == ["pass"] and report.infra_error is None
        assert set(sb.server_pids).isdisjoint(before)  # the killed server was replaced, not reused
        # the control: a wrong program under the same kill keeps its own verdict, not a pass and not None
        busy, out = _in_thread(sb, SLOW_RIGHT.replace("x * 2", "x * 3"))
        _kill_servers_while(sb, busy, times=1)
        busy.join(timeout=60)
        assert out[0].statuses == ["fail"] and out[0].infra_error is None


def test_a_fork_server_killed_on_both_tries_is_an_infrastructure_failure_not_a_verdict(own_service):
    with Sandbox(workers=1, mode="fast", timeout_s=4.0) as sb:
        assert sb.run("def f(x):\n    return x * 2\n", TESTS).statuses == ["pass"]
        for program in (SLOW_RIGHT, SLOW_RIGHT.replace("x * 2", "x * 3")):  # right or wrong: nobody's verdict
            busy, out = _in_thread(sb, program)
            assert _kill_servers_while(sb, busy, times=6) >= 2
            busy.join(timeout=60)
            [report] = out
            assert report.infra_error is not None and "pass" not in report.statuses
        # and the sandbox still judges afterwards
        assert sb.run("def f(x):\n    return x * 2\n", TESTS).statuses == ["pass"]


def _kill_service_while(busy: threading.Thread, *, times: int) -> int:
    """SIGKILL this folder's execution service while ``busy`` runs, up to ``times`` rounds (0.4 s apart)."""
    done, killed = 0, set()
    while busy.is_alive() and done < times:
        time.sleep(0.4)
        pid = _client._started[-1].pid if _client._started else None
        if pid is None or pid in killed:
            continue
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
        killed.add(pid)
        done += 1
    return done


def test_a_service_killed_mid_request_is_started_again_and_the_verdicts_stand(own_service):
    with Sandbox(workers=1, mode="fast", timeout_s=4.0) as sb:
        assert sb.run("def f(x):\n    return x * 2\n", TESTS).statuses == ["pass"]
        for program, verdict in ((SLOW_RIGHT, "pass"), (SLOW_RIGHT.replace("x * 2", "x * 3"), "fail")):
            first = _client._started[-1].pid
            busy, out = _in_thread(sb, program)
            assert _kill_service_while(busy, times=1) == 1
            busy.join(timeout=60)
            [report] = out
            assert report.statuses == [verdict] and report.infra_error is None
            assert _client._started[-1].pid != first  # a new service answered


def test_a_service_killed_on_both_tries_is_an_infrastructure_failure_and_the_next_call_is_judged(own_service):
    with Sandbox(workers=1, mode="fast", timeout_s=4.0) as sb:
        assert sb.run("def f(x):\n    return x * 2\n", TESTS).statuses == ["pass"]
        out: list = []

        def call() -> None:
            try:
                out.append(sb.run(SLOW_RIGHT, TESTS))
            except SandboxError as err:
                out.append(err)

        busy = threading.Thread(target=call)
        busy.start()
        assert _kill_service_while(busy, times=2) == 2
        busy.join(timeout=60)
        [result] = out  # never a hang, never the program's verdict: a typed error or a report flagged as infrastructure
        assert isinstance(result, SandboxError) or (result.infra_error is not None and "pass" not in result.statuses)
        assert sb.run(SLOW_RIGHT, TESTS).statuses == ["pass"]
