"""A solution process that lies about its tests' CPU time (isolated mode, where S supervises the tests itself).

In isolated mode the solution process S has run the program's module code before it starts a process per test.
Usually the server supervises those processes itself (S clones each as the server's child; see
test_server_supervised.py). Where the kernel refuses ``CLONE_PARENT`` (a seccomp profile, an unusual kernel), S
forks and supervises them and reports each test's CPU time: a program can reach the harness from there and make S
under-report, so that a test that ran far past its limit is judged on its values. The server checks S's reports
against what the kernel counted for S's reaped children (and reaps what S left behind): hidden time turns the
tests into timeouts.

The fork servers here are started with ``CLONE_PARENT`` reported as refused (their bootstrap sets
``_forkserver.server._clone_parent_works`` to a function that says no, before ``main``), through the in-process
engine so the changed command reaches them; everything else is the real server. The same attacks against a
server whose check is switched off get passes: that is what the check stops.
"""

from __future__ import annotations

import pytest

from evolvecoder_datasets.execution import Job, Sandbox
from evolvecoder_datasets.execution import _engine

# 0.3 s of CPU per call by the clock (a fixed loop count runs 4x faster on some machines than on others).
BURN = "import time\ndef f(x):\n    start = time.process_time()\n    while time.process_time() - start < 0.3:\n        pass\n    return x\n"

# Three ways S can hide a test process's time once the program owns it: report less than it measured (two
# figures), or never reap the test's process.
_MISREPORT = """
import sys
fs = sys.modules.get("_forkserver.solution")  # where S's loop over its tests lives
if fs is not None:
    real = fs.wait_with_limits
    def lying(pid, cpu_limit, wall_limit, output=None):
        status, cpu, killed = real(pid, 100.0, 100.0, output)
        return status, {reported}, None
    fs._fork_per_case.__globals__["wait_with_limits"] = lying
"""
UNDER_REPORT = _MISREPORT.format(reported="0.0")
SCALED_REPORT = _MISREPORT.format(reported="cpu / 50")

NEVER_REAPED = """
import os, sys
fs = sys.modules.get("_forkserver.solution")
if fs is not None:
    def unreaped(pid, cpu_limit, wall_limit, output=None):
        # Wait for the test to end without reaping it (its time is then nobody's), and report nothing used.
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        return 0, 0.0, None
    fs._fork_per_case.__globals__["wait_with_limits"] = unreaped
    fs._fork_per_case.__globals__["_children"] = lambda pid: []  # and never sweep them either
"""


ATTACKS = {"under_report": UNDER_REPORT, "scaled_report": SCALED_REPORT, "never_reaped": NEVER_REAPED}
TESTS = ["assert f(1) == 1", "assert f(2) == 2", "assert f(3) == 3"]


def _where_s_supervises(monkeypatch, *, check: bool = True) -> _engine.LocalEngine:
    """An engine whose fork servers find ``CLONE_PARENT`` refused (S supervises its tests), with the server's
    accounting check on or, to show what it stops, off."""
    real = _engine.server_command
    patch = "import _forkserver.server as _s; _s._clone_parent_works = lambda: False; "
    if not check:
        patch += "import _forkserver.watch as _w; _w._Watch._check_accounting = lambda *a, **k: None; "

    def command(isolation: str, python_env: str | None = None) -> list[str]:
        return [arg.replace("_forkserver.main()", patch + "_forkserver.main()") for arg in real(isolation, python_env)]

    monkeypatch.setattr(_engine, "server_command", command)
    return _engine.LocalEngine(workers=1, timeout_s=2.0, mode="isolated")


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_hidden_cpu_time_is_a_timeout(monkeypatch, attack):
    with _where_s_supervises(monkeypatch) as box:
        honest = box.run_many([Job(BURN, tests=TESTS, timeout_s=0.05)])[0]
        attacked = box.run_many([Job(ATTACKS[attack] + BURN, tests=TESTS, timeout_s=0.05)])[0]
        generous = box.run_many([Job(ATTACKS[attack] + BURN, tests=TESTS)])[0]
    assert honest.statuses == ["timeout", "timeout", "unexecuted"]  # two timeouts in a row end the run
    assert "pass" not in attacked.statuses and set(attacked.statuses) <= {"timeout", "crash", "unexecuted"}
    # The check costs honest programs nothing: under a limit the work fits in, the same program passes.
    assert generous.statuses == ["pass"] * 3


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_without_the_check_the_same_attacks_pass(monkeypatch, attack):
    """The attacks are live where S supervises: with the server's check switched off they pass tests that time out
    honestly. (Were S not the supervisor here, or the attack inert, this would fail.)"""
    with _where_s_supervises(monkeypatch, check=False) as box:
        attacked = box.run_many([Job(ATTACKS[attack] + BURN, tests=TESTS, timeout_s=0.05)])[0]
    assert "pass" in attacked.statuses, attacked


@pytest.mark.parametrize("supervisor", ["server", "solution process"])
def test_a_test_that_spawns_processes_is_not_flagged(monkeypatch, supervisor):
    """Escapees are swept before the test's end is taken; what they used stays under the allowance."""
    program = ("import subprocess, sys\n"
               "def f(x):\n"
               "    subprocess.Popen([sys.executable, '-c', 'while True: pass'])\n"
               "    return x\n")
    jobs = [Job(program, tests=["assert f(1) == 1", "assert f(2) == 2"], timeout_s=1.0)]
    if supervisor == "server":
        with Sandbox(workers=1, timeout_s=1.0, mode="isolated") as sb:
            report = sb.run_many(jobs)[0]
    else:
        with _where_s_supervises(monkeypatch) as box:
            report = box.run_many(jobs)[0]
    assert report.statuses == ["pass", "pass"], report.messages
