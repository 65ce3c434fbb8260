"""Who caused a failure: a fork server, or the whole execution service, killed from outside under a job is not the
program's doing.

The judge's fork servers (the processes that fork every solution) can die under a job for reasons the program does
not control: an operator's or a supervisor's kill, the OOM killer. The program runs under a sandbox uid of its own,
so it cannot signal them itself. A right program must then keep its verdict (the job runs again on a restarted
server), and a server that dies again on the second try makes the report an infrastructure failure (``infra_error``:
no verdict, reward ``None``), never a ``pass`` and never a wrong program's ``pass``. The control: a wrong program
under the same kill keeps its own ``fail``. The service process itself, killed mid-request, is started again by the
caller and the request sent once more; killed on both tries, the report is an infrastructure failure (no verdict).
Each test uses a service of its own (its own runtime folder), so the kills touch no other test's processes.
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

# A right program whose only test keeps its fork server busy for about 1.2 s of the program's CPU.
SLOW_RIGHT = "def f(x):\n    import time\n    end = time.process_time() + 1.2\n    while time.process_time() < end:\n" \
             "        pass\n    return x * 2\n"
TESTS = ["assert f(2) == 4"]


@pytest.fixture
def own_service(tmp_path):
    with own_service_folder(tmp_path / "svc"):
        yield


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


def _in_thread(sb: Sandbox, program: str) -> tuple[threading.Thread, list]:
    out: list = []
    thread = threading.Thread(target=lambda: out.append(sb.run(program, TESTS)))
    thread.start()
    return thread, out


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
