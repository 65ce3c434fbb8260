"""A solution process that lies about its tests' CPU time (isolated mode, where S supervises the tests itself).

In isolated mode the solution process S has run the program's module code before it forks a process per test.
Where it supervises them (a program that leaves a thread running; see test_server_supervised.py for the usual
case, where the server does) it reports each test's CPU time. A program can reach the harness from there and make S under-report, so that a
test that ran far past its limit is judged on its values. The server checks S's reports against what the kernel
counted for S's reaped children (and reaps what S left behind): hidden time turns the tests into timeouts.
"""

from __future__ import annotations

import pytest

from evolvecoder_datasets.execution import Job, Sandbox

BURN = "def f(x):\n    n = 0\n    for i in range(3_000_000):\n        n += i\n    return x\n"

# Three ways S can hide a grandchild's time once the program owns it: report less than it measured (two figures),
# or never reap the test's process.
# Each attack leaves a thread running, so that S supervises the tests (a clone would skip the at-fork repairs).
_S_SUPERVISES = "import _thread, time\n_thread.start_new_thread(time.sleep, (60,))\n"
_MISREPORT = _S_SUPERVISES + """
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

NEVER_REAPED = _S_SUPERVISES + """
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


@pytest.mark.parametrize("attack", [UNDER_REPORT, SCALED_REPORT, NEVER_REAPED],
                         ids=["under_report", "scaled_report", "never_reaped"])
def test_hidden_cpu_time_is_a_timeout(attack):
    tests = ["assert f(1) == 1", "assert f(2) == 2", "assert f(3) == 3"]
    with Sandbox(workers=1, timeout_s=2.0, mode="isolated") as sb:
        honest = sb.run_many([Job(BURN, tests=tests, timeout_s=0.05)])[0]
        attacked = sb.run_many([Job(attack + BURN, tests=tests, timeout_s=0.05)])[0]
        generous = sb.run_many([Job(attack + BURN, tests=tests)])[0]
    assert honest.statuses == ["timeout", "timeout", "unexecuted"]  # two timeouts in a row end the run
    assert "pass" not in attacked.statuses and set(attacked.statuses) <= {"timeout", "crash", "unexecuted"}
    # The check costs honest programs nothing: under a limit the work fits in, the same program passes.
    assert generous.statuses == ["pass"] * 3


def test_a_test_that_spawns_processes_is_not_flagged():
    """Escapees are swept before the test's end is taken; what they used stays under the allowance."""
    program = ("import subprocess, sys\n"
               "def f(x):\n"
               "    subprocess.Popen([sys.executable, '-c', 'while True: pass'])\n"
               "    return x\n")
    with Sandbox(workers=1, timeout_s=1.0, mode="isolated") as sb:
        report = sb.run_many([Job(program, tests=["assert f(1) == 1", "assert f(2) == 2"])])[0]
    assert report.statuses == ["pass", "pass"], report.messages
