"""A program cannot read its tests before they run (issue 23): S is cloned from a zygote that never held a job.

The attack: at load time, under the load limit (2 s here), the program searches its process for its own test
expressions (every object the garbage collector tracks, and the frames of the harness that loaded it), computes
the answers of those it finds, and then answers each test from its table. Each honest answer takes 0.25 s of CPU
against a 0.1 s limit, so an honest run times out on every test: a pass is time the program took from outside its
tests. Where the fork server held the job (or an earlier job of the same problem, in its cache of prepared tests)
when it forked S, the table filled and every test passed.

Run on one worker, so the second job meets a server whose cache holds the first job's tests, in both modes and
through every ``Sandbox`` entry point the rewards use (``run`` and ``run_many``, with and without the early stop).
"""

from __future__ import annotations

import pytest

from evolvecoder_datasets.execution import Job, _engine

from .conftest import sandbox_per_mode

KEYS = (3, 5, 8, 13, 21)
TESTS = [f"assert heavy({k}) == {7 * k}" for k in KEYS]

_WORK = '''
import time

def _work(k):
    start = time.process_time()
    while time.process_time() - start < 0.25:
        pass
    return 7 * k
'''

#: Where the program looks for its tests' arguments at load time.
SEARCHES = {
    "tracked_objects": '''
import gc, re
_found = set()
for _o in gc.get_objects():
    try:
        _items = list(_o.keys()) + list(_o.values()) if isinstance(_o, dict) else list(_o) if isinstance(_o, (list, tuple)) else ()
    except Exception:
        continue
    for _s in _items:
        if isinstance(_s, str) and "heavy(" in _s:
            _found.update(int(m) for m in re.findall(r"heavy\\((\\d+)\\)", _s))
''',
    "harness_frames": '''
import re, sys
_found = set()
def _walk(value, depth=0):
    if depth > 4:
        return
    if isinstance(value, str):
        if "heavy(" in value:
            _found.update(int(m) for m in re.findall(r"heavy\\((\\d+)\\)", value))
    elif isinstance(value, dict):
        for v in list(value.values())[:10000]:
            _walk(v, depth + 1)
    elif isinstance(value, (list, tuple)):
        for v in list(value)[:10000]:
            _walk(v, depth + 1)
    else:
        for name in getattr(type(value), "__slots__", ()):
            _walk(getattr(value, name, None), depth + 1)
_f = sys._getframe()
while _f is not None:
    for _v in list(_f.f_locals.values()):
        _walk(_v)
    _f = _f.f_back
''',
}

_ANSWER = '''
_table = {k: _work(k) for k in sorted(_found)}

def heavy(k):
    return _table[k] if k in _table else _work(k)
'''

LIMITS = {"workers": 1, "timeout_s": 0.1, "load_timeout_s": 2.0, "wall_timeout_s": 2.0}


one_worker = sandbox_per_mode(**LIMITS)


@pytest.mark.parametrize("search", sorted(SEARCHES))
def test_a_program_finds_none_of_its_tests_while_it_loads(one_worker, search):
    program = _WORK + SEARCHES[search] + _ANSWER
    first = one_worker.run(program, TESTS)  # also leaves this job's tests in the server's cache
    again = one_worker.run_many([Job(program, tests=TESTS), Job(program, tests=TESTS, stop_on_failure=True)])
    for result in (first, *again):
        assert "pass" not in result.statuses, (search, result)
        assert result.infra_error is None, (search, result)


def test_the_control_a_table_built_at_load_time_passes(one_worker):
    """The same program told its keys in its own source passes every test: the checks above can fail, and a table
    the program builds at load time under the load limit is still allowed."""
    program = _WORK + f"_found = set({list(KEYS)!r})\n" + _ANSWER
    result = one_worker.run(program, TESTS)
    assert result.statuses == ["pass"] * len(TESTS), result


def _zygotes(root: int) -> list[int]:
    """The pids of the zygotes of the fork servers below ``root``: a fork server process whose parent is a fork
    server too and that holds a socket (a solution process waiting for its job holds pipes only)."""
    import os

    def read(pid: int, name: str) -> bytes:
        try:
            with open(f"/proc/{pid}/{name}", "rb") as fh:
                return fh.read()
        except OSError:
            return b""

    def children(pid: int) -> list[int]:  # of every thread: a worker restarted from a thread is that thread's child
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            return []
        return [int(c) for task in tasks for c in read(pid, f"task/{task}/children").split()]

    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        kids = children(pid)
        todo.extend(kids)
        if b"_forkserver.main()" in read(pid, "cmdline"):
            parent = int(read(pid, "stat").rsplit(b")", 1)[1].split()[1])
            if b"_forkserver.main()" in read(parent, "cmdline") and _holds_socket(pid):
                found.append(pid)
    return found


def _engine_zygotes(box) -> list[int]:
    """The zygotes of this engine's own fork servers (not of a service this test process may have started)."""
    return [pid for worker in box._pool.workers if worker.proc is not None for pid in _zygotes(worker.proc.pid)]


def _holds_socket(pid: int) -> bool:
    import os

    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:") for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return False


@pytest.mark.parametrize("mode", ["isolated", "fast"])
def test_a_worker_whose_zygote_is_gone_restarts_and_the_job_gets_its_verdicts(mode):
    """A zygote killed between jobs (what a program could do where S keeps the server's uid) costs a restart of
    that worker, never a verdict: the next job is retried on a fresh server and judged as usual. Through the
    in-process engine, so that the zygotes killed are this test's own (the service's servers are shared, and may
    be this test process's descendants too)."""
    import os
    import signal

    program = "def add(a, b):\n    return a + b\n"
    tests = ["assert add(1, 2) == 3", "assert add(2, 2) == 5"]
    with _engine.LocalEngine(mode=mode, workers=1, timeout_s=1.0) as box:  # its servers are this process's
        assert box.run_many([Job(program, tests=tests)])[0].statuses == ["pass", "fail"]
        before = _engine_zygotes(box)
        assert before, "each fork server should have a zygote where CLONE_PARENT works"
        killed = 0
        for pid in before:
            try:  # on a loaded machine a process listed a moment ago may be gone already (a slow exit)
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        assert killed, before
        again = box.run_many([Job(program, tests=tests)])[0]
        assert again.statuses == ["pass", "fail"], again
        assert again.infra_error is None, again
        after = _engine_zygotes(box)
        assert after and set(after).isdisjoint(before)
