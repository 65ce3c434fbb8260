"""A service stopped from outside (SIGSTOP by an operator, a tracer, another process of the user) is nobody's verdict
and never a hang.

Before, a caller waited on a stopped service for ever: the request had no deadline (a batch may rightly take
minutes), and the stopped process still held the folder's socket, so every later caller waited too. Now a caller
whose service is found stopped for ``STOPPED_LIMIT_S`` in a row kills it (it runs as the caller's uid, checked at
connect) and sends the request once more to a service started afresh: the program keeps its own verdict, right or
wrong. Stopped on both tries, the request is an infrastructure failure (a flagged report or a ``SandboxError``),
and the next call is judged. Each test has a service of its own (its own runtime folder).
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from evolvecoder_datasets.errors import SandboxError
from evolvecoder_datasets.execution import Sandbox, _client

from .test_judge_attribution import SLOW_RIGHT, TESTS, own_service  # noqa: F401 - own_service is a fixture

RIGHT = "def f(x):\n    return x * 2\n"


@pytest.fixture
def short_limit(monkeypatch):
    monkeypatch.setattr(_client, "STOPPED_LIMIT_S", 1.5, raising=False)


def _stop_service_while(busy: threading.Thread, stopped: list[int], *, times: int) -> None:
    """SIGSTOP this folder's service (the newest this process started) while ``busy`` runs, once per service, up to
    ``times`` services, adding each pid to ``stopped``."""
    while busy.is_alive() and len(stopped) < times:
        time.sleep(0.4)
        pid = _client._started[-1].pid if _client._started else None
        if pid is None or pid in stopped or _client._started[-1].poll() is not None:
            continue
        try:
            os.kill(pid, signal.SIGSTOP)
        except ProcessLookupError:
            continue
        stopped.append(pid)


def _call(sb: Sandbox, program: str) -> tuple[threading.Thread, list]:
    out: list = []

    def run() -> None:
        try:
            out.append(sb.run(program, TESTS))
        except SandboxError as err:
            out.append(err)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


@pytest.fixture
def stopped():
    """The services the test stopped; killed at the end whatever happened (a stopped process waits for ever)."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _gone(pids: list[int]) -> bool:
    """Whether every pid is dead or a zombie (killed, not left stopped)."""
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                if fh.read().rsplit(b")", 1)[1].split()[0] != b"Z":
                    return False
        except OSError:
            continue
    return True


def test_a_service_stopped_mid_request_is_replaced_and_the_verdicts_stand(
        own_service, short_limit, stopped):  # noqa: F811
    with Sandbox(workers=1, mode="fast", timeout_s=4.0) as sb:
        assert sb.run(RIGHT, TESTS).statuses == ["pass"]
        for program, verdict in ((SLOW_RIGHT, "pass"), (SLOW_RIGHT.replace("x * 2", "x * 3"), "fail")):
            busy, out = _call(sb, program)
            before = len(stopped)
            _stop_service_while(busy, stopped, times=before + 1)
            busy.join(timeout=120)
            assert not busy.is_alive(), "the caller hung on a stopped service"
            [report] = out
            assert len(stopped) == before + 1 and _gone(stopped)
            assert not isinstance(report, Exception), report
            assert report.statuses == [verdict] and report.infra_error is None


def test_a_service_stopped_on_both_tries_is_an_infrastructure_failure(own_service, short_limit, stopped):  # noqa: F811
    with Sandbox(workers=1, mode="fast", timeout_s=4.0) as sb:
        assert sb.run(RIGHT, TESTS).statuses == ["pass"]
        busy, out = _call(sb, SLOW_RIGHT)
        _stop_service_while(busy, stopped, times=2)
        busy.join(timeout=120)
        assert not busy.is_alive(), "the caller hung on a stopped service"
        [result] = out  # a typed error or a report flagged as infrastructure: never the program's verdict
        assert len(stopped) == 2 and _gone(stopped)
        assert isinstance(result, SandboxError) or (result.infra_error is not None and "pass" not in result.statuses)
        assert sb.run(SLOW_RIGHT, TESTS).statuses == ["pass"]
