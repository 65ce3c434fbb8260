"""Soak: thousands of executions with hostile programs mixed in leave the caller as it was after warm-up.

Zombie and file-descriptor leaks are what practitioners hit most in other harnesses; this checks the caller's open
descriptors, its child processes and its resident memory, and that no process of the sandbox uids survives.
"""

from __future__ import annotations

import gc
import os
import time

import pytest

from evolvecoder_datasets.execution import Sandbox

from .conftest import processes_of_uids

GOOD = "def f(x):\n    return x * 2\n"
WRONG = "def f(x):\n    return x * 2 + (x == 7)\n"
HOSTILE = [
    "import os\ndef f(x):\n    while True:\n        try:\n            os.fork()\n        except OSError:\n            pass\n",
    "def f(x):\n    while True:\n        pass\n",
    "import os\ndef f(x):\n    os._exit(0)\n",
    "def f(x):\n    return bytearray(2 * 1024 ** 3)\n",
    "import os\ndef f(x):\n    if os.fork() == 0:\n        os.setsid()\n        while True: pass\n    return x * 2\n",
    "import os\ndef f(x):\n    os.kill(os.getppid(), 9)\n",
    "import sys\ndef f(x):\n    sys.stdout.write('z' * 10**6)\n    return x * 2\n",
]


def _census() -> tuple[int, int, int]:
    fds = len(os.listdir("/proc/self/fd"))
    children = 0
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/children") as fh:
            children += len(fh.read().split())
    with open("/proc/self/statm") as fh:
        rss_pages = int(fh.read().split()[1])
    return fds, children, rss_pages * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.parametrize("mode", ["isolated", "fast"])
def test_soak_with_hostile_programs_leaks_nothing(mode):
    tests = [f"assert f({i}) == {2 * i}" for i in range(30)]
    programs = []
    for i in range(110):
        programs.append(HOSTILE[i // 16] if i % 16 == 15 else (WRONG if i % 3 == 0 else GOOD))
    with Sandbox(workers=2, timeout_s=0.2, memory_mb=512, mode=mode, max_consecutive_timeouts=2) as sb:
        sb.pass_matrix(programs[:10], tests)  # warm-up
        # In a long test session, sandboxes of earlier tests still wait for the garbage collector; one collected
        # between the two censuses would close its own connection to the shared service and read as a change.
        gc.collect()
        before = _census()
        executed = 0
        for _ in range(2):
            matrix = sb.pass_matrix(programs, tests)
            executed += matrix.size
            assert matrix[1].all() and not matrix[0].all()  # right stays right, wrong stays wrong
        gc.collect()
        after = _census()
        # The service's uids are shared by every sandbox of the machine: wait (boundedly) for processes that are
        # being killed to be gone; one that survives 5 s is a leak.
        deadline = time.monotonic() + 5
        while processes_of_uids(sb.sandbox_uids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert processes_of_uids(sb.sandbox_uids) == []
    assert executed >= 6000
    assert after[0] == before[0], f"file descriptors {before[0]} -> {after[0]}"
    assert after[1] == before[1], f"child processes {before[1]} -> {after[1]}"
    assert after[2] - before[2] < 16 * 1024 * 1024, f"RSS grew by {(after[2] - before[2]) / 2**20:.1f} MiB"


def _rss_anon_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        return int(fh.read().split("RssAnon:")[1].split()[0])


def test_fork_server_memory_stays_bounded_over_many_distinct_tests():
    # Every child is a fork of the server, so whatever the server keeps (its cache of compiled tests) is paid again
    # by each fork and exit. Thousands of distinct tests, as a long run sends, must not grow it without bound.
    program = "def f(x):\n    return x\n"
    with Sandbox(workers=1, mode="fast", isolation="none") as sb:
        sb.run(program, ["assert f(1) == 1"])
        pid = sb.server_pids[0]  # no isolation: the pid is the server itself
        before = _rss_anon_kib(pid)
        for chunk in range(40):
            tests = [f"assert f({k}) == {k} and [{k}] != ['pad']" for k in range(chunk * 200, chunk * 200 + 200)]
            assert all(sb.run(program, tests).passed)
        growth_mib = (_rss_anon_kib(pid) - before) / 1024
    assert growth_mib < 4, f"fork server grew by {growth_mib:.1f} MiB over 8,000 distinct tests"
