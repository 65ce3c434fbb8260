"""Isolated mode's tests are supervised by the trusted server, not by the solution process.

The solution process S loads the program, so it has run untrusted code. Since it forks each test's process with
``CLONE_PARENT``, that process is the *server's* child: the server waits for it, reads its CPU time from the kernel
and kills it at its limit. S only starts a test when the server names it. These tests check that wiring, that a
program that leaves a thread running is still supervised by the server (S runs the at-fork repairs around the
clone itself; S supervises its own tests only where the kernel refuses ``CLONE_PARENT``, see
test_cpu_accounting.py), and what a program that owns S can do against it: start no test, start it as its own
child instead, or start a decoy while its own child does the work. None of these gets ``pass``, and none holds a
job past its limits.
"""

from __future__ import annotations

import time

import pytest

from evolvecoder_datasets.execution import Job, Sandbox

PARENT = "import os\ndef f():\n    return os.getppid()\n"
ADD = "def add(a, b):\n    return a + b\n"
BURN = "def f(x):\n    n = 0\n    for i in range(3_000_000):\n        n += i\n    return x\n"


def test_each_test_process_is_a_child_of_the_server():
    """``isolation="none"`` so that the servers' pids, seen from the caller, are the ones the test sees (the
    service has one server per core: the test's parent is one of them, never the solution process)."""
    with Sandbox(workers=1, timeout_s=2.0, mode="isolated", isolation="none") as sb:
        sb.start()
        servers = set(sb.server_pids)
        report = sb.run(PARENT, [f"assert f() in {servers}"] * 3)
    assert report.statuses == ["pass"] * 3, report.messages


def test_a_program_that_leaves_a_thread_running_is_still_supervised_by_the_server():
    """The mode is the server's decision, not something the program can switch off by starting a thread: S runs the
    interpreter's at-fork repairs around the clone itself (as ``os.fork`` does), and the test's process is still the
    server's child, and a test can start threads of its own."""
    threaded = "import _thread, time\n_thread.start_new_thread(time.sleep, (30,))\n"
    uses_threads = ("def g():\n    out, done = [], _thread.allocate_lock()\n    done.acquire()\n"
                    "    _thread.start_new_thread(lambda: (out.append(7), done.release()), ())\n"
                    "    done.acquire()\n    return out\n")
    with Sandbox(workers=1, timeout_s=2.0, mode="isolated", isolation="none") as sb:
        sb.start()
        servers = set(sb.server_pids)
        moved = sb.run(threaded + PARENT, [f"assert f() in {servers}", f"assert f() not in {servers}"])
        add = sb.run(threaded + ADD, ["assert add(1, 2) == 3", "assert add(1, 2) == 4", "assert add(2, 2) == 4"])
        threads = sb.run(threaded + uses_threads, ["assert g() == [7]", "assert g() == [8]"])
    assert moved.statuses == ["pass", "fail"], moved.messages
    assert add.statuses == ["pass", "fail", "pass"], add.messages
    assert threads.statuses == ["pass", "fail"], threads.messages


def test_a_process_the_program_left_at_load_is_gone_before_the_first_test():
    """What the program forked while loading would otherwise act during the tests (here: write a file)."""
    program = ("import os, time\n"
               "if os.fork() == 0:\n"
               "    time.sleep(0.3)\n"
               "    open('leak', 'w').close()\n"
               "    os._exit(0)\n"
               "def f():\n"
               "    time.sleep(0.6)\n"
               "    return os.path.exists('leak')\n")
    with Sandbox(workers=1, timeout_s=2.0, wall_timeout_s=5.0, mode="isolated") as sb:
        report = sb.run(program, ["assert f() is False", "assert f() is False"])
    assert report.statuses == ["pass", "pass"], report.messages


# What a program that owns S can make it do instead of starting each test as the server's child.
_OWN = """
import os, sys
fs = sys.modules.get("_forkserver.libc")  # the clone system call S starts each test's process with
if fs is not None:
    g = vars(fs)
    real = g["_SYSCALL"]
{body}
"""
NO_TEST = _OWN.format(body="    g['_SYSCALL'] = lambda *args: 4242  # says it started the test, started nothing")
OWN_CHILD = _OWN.format(body="    g['_SYSCALL'] = lambda *args: os.fork()  # the test runs as S's child")
DECOY = _OWN.format(body="""\
    import time
    def decoy(*args):
        if os.fork() == 0:          # S's own child runs the test, out of the server's sight
            return 0
        pid = real(*args)           # the server's child ends as soon as the line is written
        if pid == 0:
            time.sleep(0.4)
            os._exit(0)
        return pid
    g['_SYSCALL'] = decoy""")


_HONEST = ["timeout", "timeout", "unexecuted"]


@pytest.mark.parametrize(("attack", "outcome"), [(NO_TEST, ["crash"] * 3), (OWN_CHILD, ["crash"] * 3),
                                                 (DECOY, _HONEST)], ids=["no_test", "own_child", "decoy"])
def test_a_solution_process_that_hides_its_tests_gets_no_pass(attack, outcome):
    """Without a process of its own the server sees no test start (a crash at the wall limit); a decoy's time is
    small, but what S's hidden worker used while the test ran is the test's (the server reads S's whole process
    tree), so it gets what the honest program gets: timeouts, then the rest skipped."""
    tests = ["assert f(1) == 1", "assert f(2) == 2", "assert f(3) == 3"]
    with Sandbox(workers=1, timeout_s=2.0, wall_timeout_s=2.0, mode="isolated") as sb:
        honest = sb.run_many([Job(BURN, tests=tests, timeout_s=0.05)])[0]
        start = time.monotonic()
        attacked = sb.run_many([Job(attack + BURN, tests=tests, timeout_s=0.05)])[0]
        took = time.monotonic() - start
        generous = sb.run_many([Job(attack.replace("fs is not None", "False") + BURN, tests=tests)])[0]
    assert honest.statuses == _HONEST
    assert attacked.statuses == outcome, attacked
    assert took < 3 * 2.0 + 5, took  # each attempt ends at the wall limit at worst
    assert generous.statuses == ["pass"] * 3  # the same program, left alone, passes where its work fits


def test_a_test_that_ends_the_result_pipe_is_still_supervised_to_its_end():
    """The test's process kills S and closes its own end of the result pipe, so the pipe ends while the process
    runs on. The server still holds it to its limits (a timeout, not a verdict and not a hang), then runs the rest
    of the tests in a fresh solution process."""
    program = ("import os, signal, time\n"
               "def f(x):\n"
               "    if x == 1:\n"
               "        me = os.getpid()\n"
               "        for pid in [int(p) for p in os.listdir('/proc') if p.isdigit()]:\n"
               "            try:\n"
               "                if pid != me and os.stat(f'/proc/{pid}').st_uid == os.getuid():\n"
               "                    os.kill(pid, signal.SIGKILL)\n"
               "            except OSError:\n"
               "                pass\n"
               "        os.closerange(3, 1024)\n"
               "        time.sleep(30)\n"
               "    return x\n")
    tests = ["assert f(0) == 0", "assert f(1) == 1", "assert f(2) == 2", "assert f(3) == 3"]
    with Sandbox(workers=1, timeout_s=1.0, wall_timeout_s=1.5, mode="isolated") as sb:
        start = time.monotonic()
        report = sb.run(program, tests)
        took = time.monotonic() - start
    assert report.statuses[:2] == ["pass", "timeout"], report
    assert "pass" in report.statuses[2:], report  # the rest ran on in a fresh solution process
    assert took < 1.5 + 10, took


# A one-probe test's value travels raw after its line (no base64 in the test's process): bytes that look like
# line ends, like the protocol's own lines, or a value far larger than the pipe holds must still come through whole.
TRICKY = ("def f(kind):\n"
          "    if kind == 'lines':\n"
          "        return 'a\\nb\\n\\n' + ' R 0 pass = - 0\\n' * 50\n"
          "    if kind == 'big':\n"
          "        return 'x\\n' * 600_000\n"
          "    if kind == 'bytes':\n"
          "        return bytes(range(256)) * 300\n"
          "    return [kind] * 3\n")


@pytest.mark.parametrize("mode", ["isolated", "fast"])
def test_values_whose_bytes_look_like_lines_or_overflow_the_pipe_come_through_whole(mode):
    tests = ["assert f('lines') == 'a\\nb\\n\\n' + ' R 0 pass = - 0\\n' * 50",
             "assert f('lines') == 'a\\nb\\n\\n'",
             "assert f('big') == 'x\\n' * 600_000",
             "assert f('big') == 'x\\n' * 599_999",
             "assert f('bytes') == bytes(range(256)) * 300",
             "assert f('bytes') == bytes(range(256)) * 299",
             "assert f(7) == [7, 7, 7]"]
    with Sandbox(workers=1, timeout_s=5.0, mode=mode) as sb:
        report = sb.run(TRICKY, tests)
    assert report.statuses == ["pass", "fail", "pass", "fail", "pass", "fail", "pass"], report.messages


# The test's process writes frames of its own on the result pipe (the fd is reachable from its frames), then ends.
FORGED = """
import os, sys
def f(x):
    frame = sys._getframe(1)
    while frame is not None:
        obj = frame.f_locals.get("report")
        if type(obj).__name__ == "_Reporter":
            head = b"%b V %d %x %d\\n" % (obj.bprefix, {idx}, id(x), {claimed})
            os.write(obj.fd, head + b"i1;")
            os._exit(0)
        frame = frame.f_back
    return -1
"""


@pytest.mark.parametrize("claimed", [1000, 1, -3, 0])
def test_a_forged_value_frame_is_no_pass(claimed):
    """A byte count longer than what follows leaves the frame unfinished (the test ends with no value); a shorter
    one cuts the value short (an unreadable report), a negative one is no frame; a frame for another test counts
    for nothing. (A frame whose count is right is the program's claim about its value, as a return would be.)"""
    with Sandbox(workers=1, timeout_s=2.0, mode="isolated") as sb:
        own = sb.run(FORGED.format(idx=0, claimed=claimed), ["assert f(5) == 1"])
        other = sb.run(FORGED.format(idx=1, claimed=claimed), ["assert f(5) == 1", "assert f(1) == 1"])
    assert own.statuses == ["crash"], own
    assert other.statuses == ["crash", "crash"], other  # (test 1 forges a broken frame of its own)


@pytest.mark.parametrize("supervisor", ["server", "solution_process"])
def test_an_unfinished_frame_does_not_swallow_the_next_tests_report(supervisor):
    """A test's process writes a value frame whose byte count it never fills, then ends: the next test, honest,
    still gets its own verdict (where the server supervises, the unfinished frame is dropped with its test; where
    S does, value frames are not part of the protocol and the line is no line)."""
    threaded = "import _thread, time\n_thread.start_new_thread(time.sleep, (60,))\n"
    program = (threaded if supervisor == "solution_process" else "") + FORGED.format(idx=0, claimed=100_000) \
        + "def g():\n    return 2\n"
    with Sandbox(workers=1, timeout_s=2.0, mode="isolated") as sb:
        report = sb.run(program, ["assert f(5) == 1", "assert g() == 2", "assert g() == 3"])
    assert report.statuses == ["crash", "pass", "fail"], report


def test_the_server_binds_symbols_at_start_and_its_programs_do_not_inherit_the_setting():
    """``LD_BIND_NOW`` is the server's (its tests' processes would otherwise each resolve the functions only tests
    call): the server was started with it, and a program's environment is the children's own, without it."""
    program = "import os\ndef env():\n    return sorted(os.environ)\n"
    with Sandbox(workers=1, timeout_s=2.0, mode="isolated", isolation="none") as sb:
        sb.start()
        with open(f"/proc/{sb.server_pids[0]}/environ", "rb") as fh:
            server_env = fh.read().split(b"\0")
        report = sb.run(program, ["assert 'LD_BIND_NOW' not in env()", "assert 'PATH' in env()"])
    assert b"LD_BIND_NOW=1" in server_env
    assert report.statuses == ["pass", "pass"], report.messages
