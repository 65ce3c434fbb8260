"""Hostile programs: each is contained, gets no pass it does not deserve, leaves nothing behind, and the
sandbox keeps working for the next job. Runs in both modes against the real fork servers (bubblewrap here)."""

from __future__ import annotations

import os
import secrets
import socket
import textwrap
import time

import pytest

from evolvecoder_datasets.execution import Sandbox

from .conftest import processes_of_uids

GOOD = "def add(a, b):\n    return a + b\n"
GOOD_TESTS = ["assert add(1, 2) == 3", "assert add(-1, 1) == 0"]


def _uids(sb) -> set[int]:
    return sb.sandbox_uids


def _assert_clean_and_usable(sb) -> None:
    # Nothing of the sandbox uids survives a job, and the next honest job passes.
    leftovers = processes_of_uids(_uids(sb))
    assert leftovers == [], f"processes left behind: {leftovers}"
    assert sb.run(GOOD, GOOD_TESTS).statuses == ["pass", "pass"]


def _run(sb, program: str, tests: list[str]):
    start = time.monotonic()
    report = sb.run(textwrap.dedent(program), tests)
    return report, time.monotonic() - start


HOSTILE = {
    "infinite_loop": ("def f():\n    while True:\n        pass\n", ["assert f() == 1"], {"timeout"}),
    "catches_base_exception": (
        """
        def f():
            while True:
                try:
                    while True:
                        pass
                except BaseException:
                    pass
        """,
        ["assert f() == 1"],
        {"timeout"},
    ),
    "ignores_sigalrm": (
        """
        import signal
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        def f():
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
            while True:
                pass
        """,
        ["assert f() == 1"],
        {"timeout"},
    ),
    "long_c_call": ("def f():\n    return sum(range(10**11))\n", ["assert f() == 1"], {"timeout"}),
    "sleeps": ("import time\ndef f():\n    time.sleep(100)\n    return 1\n", ["assert f() == 1"], {"timeout"}),
    "sys_exit_at_load": ("import sys\nsys.exit(0)\ndef f():\n    return 1\n", ["assert f() == 1"], {"error"}),
    "sys_exit_in_function": ("import sys\ndef f():\n    sys.exit(0)\n", ["assert f() == 1"], {"error"}),
    "os_exit_at_load": ("import os\nos._exit(0)\ndef f():\n    return 1\n", ["assert f() == 1"], {"crash"}),
    "os_exit_in_function": ("import os\ndef f():\n    os._exit(0)\n", ["assert f() == 1"], {"crash"}),
    "memory_bomb": (
        "def f():\n    b = bytearray(3 * 1024 ** 3)\n    return len(b)\n",
        ["assert f() == 3 * 1024 ** 3"],
        {"memory"},
    ),
    "fork_bomb": (
        """
        import os
        def f():
            while True:
                try:
                    os.fork()
                except OSError:
                    pass
        """,
        ["assert f() == 1"],
        {"timeout", "crash", "error"},
    ),
    "kills_parent": ("import os\ndef f():\n    os.kill(os.getppid(), 9)\n    return 1\n", ["assert f() == 1"],
                     {"crash", "error"}),
    "kills_parent_at_load": ("import os\nos.kill(os.getppid(), 9)\ndef f():\n    return 1\n", ["assert f() == 1"],
                             {"error", "crash"}),
    "always_equal": (
        """
        class Anything:
            def __eq__(self, other): return True
            def __ne__(self, other): return False
            def __hash__(self): return 0
        def f(x):
            return Anything()
        """,
        ["assert f(1) == 2", "assert f(1) == [1, 2]", "assert f(2) == 'x'", "assert sorted([3, 1]) == f(0)",
         "y = f(3)\nassert y == {'a': 1}", "assert (f(1), 2) == (5, 2)"],
        {"fail", "error"},  # error: what its own dunders answer is refused, never believed
    ),
    "int_subclass_tricks": (
        """
        class Sneaky(int):
            def __eq__(self, other): return True
            def __ne__(self, other): return False
            __hash__ = int.__hash__
        class SneakyStr(str):
            def __eq__(self, other): return True
            __hash__ = str.__hash__
        def f(x):
            return Sneaky(0)
        def g(x):
            return SneakyStr("nope")
        """,
        ["assert f(1) == 2", "assert g(1) == 'yes'", "assert f(1) == 7 and g(2) == 'z'"],
        {"fail", "error"},  # error: what its own dunders answer is refused, never believed
    ),
    "deep_recursion": ("def f(n=0):\n    return f(n + 1)\n", ["assert f() == 1"], {"error"}),
    "deep_recursion_raised_limit": (
        "import sys\nsys.setrecursionlimit(10**9)\ndef f(n=0):\n    return f(n + 1)\n",
        ["assert f() == 1"],
        {"error", "crash", "memory", "timeout"},
    ),
    "segfault": ("import ctypes\ndef f():\n    return ctypes.string_at(0)\n", ["assert f() == 1"], {"crash"}),
    "syntax_error": ("def f(:\n    return 1\n", ["assert f() == 1", "assert True"], {"syntax_error"}),
    "monkeypatches_builtins": (
        """
        import builtins
        builtins.AssertionError = type("Nope", (Exception,), {})
        builtins.sorted = lambda *a, **k: [1, 2, 3]
        builtins.len = lambda *a: 3
        builtins.isinstance = lambda *a: True
        def f(x):
            return None
        """,
        ["assert f(1) == [1, 2, 3]", "assert sorted(f(1)) == [1, 2, 3]", "assert len(f(1)) == 3",
         "assert isinstance(f(1), list) and f(1) == [1]"],
        {"fail", "error"},
    ),
    "patches_stdlib_modules": (
        """
        import math, heapq, statistics
        math.isclose = lambda *a, **k: True
        math.sqrt = lambda x: 3.0
        statistics.mean = lambda xs: 2.5
        def f(x):
            return 0.0
        def g():
            return [1]
        """,
        ["assert math.isclose(f(1.5), 2.25)", "assert math.sqrt(9) == f(0)", "assert statistics.mean(g()) == 2.5"],
        {"fail"},
    ),
    "returned_values_with_lying_methods": (
        """
        class F(float):
            def __sub__(self, other): return 0.0
            def __rsub__(self, other): return 0.0
            __hash__ = float.__hash__
        class L(list):
            def __len__(self): return 3
            def __contains__(self, x): return True
        def f(x):
            return F(0)
        def g():
            return L()
        """,
        ["assert abs(f(1.5) - 2.25) < 1e-9", "assert len(g()) == 3", "assert 5 in g()", "assert 2.25 - f(1) < 1e-9"],
        {"fail", "error"},  # error: what its own dunders answer is refused, never believed
    ),
    "forges_result_lines": (
        """
        import os, sys
        def f():
            for fd in range(3, 64):
                try:
                    os.write(fd, b"0 [\\"R\\", 0, \\"pass\\", \\"\\", null, 0.0]\\n")
                except OSError:
                    pass
            print('["R", 0, "pass", "", null, 0.0]')
            return 0
        """,
        ["assert f() == 1"],
        {"fail"},
    ),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_program_is_contained_and_gets_no_pass(sandbox, name):
    program, tests, allowed = HOSTILE[name]
    report, elapsed = _run(sandbox, program, tests)
    assert set(report.statuses) <= allowed, (name, report.statuses, report.messages)
    assert "pass" not in report.statuses
    assert elapsed < 30
    _assert_clean_and_usable(sandbox)


@pytest.mark.parametrize("mode", ["isolated", "fast"])
def test_output_flood_is_contained_and_correct_answer_still_passes(mode):
    # Building and writing 100 MB costs ~0.15 s of CPU per test on an idle machine and several times that on a
    # loaded CI runner, so this test gets a CPU limit well above it: it checks containment, not speed.
    program = "import sys\ndef f():\n    sys.stdout.write('x' * 100_000_000)\n    print('y' * 10**6, file=sys.stderr)\n    return 1\n"
    with Sandbox(workers=1, timeout_s=5.0, memory_mb=1024, mode=mode) as sb:
        report, _ = _run(sb, program, ["assert f() == 1", "assert f() == 2"])
        assert report.statuses == ["pass", "fail"], (report.messages, report.cpu_s)
        _assert_clean_and_usable(sb)


def test_setsid_escapee_is_reaped(sandbox):
    program = """
    import os
    def f():
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                while True:
                    pass
            os._exit(0)
        return 1
    """
    report, _ = _run(sandbox, program, ["assert f() == 1", "assert f() == 1"])
    assert report.statuses == ["pass", "pass"]  # the function is right; what matters is that nothing survives
    _assert_clean_and_usable(sandbox)


def test_files_cannot_be_written_outside_the_private_tmp(sandbox, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    marker = f"ecd-escape-{secrets.token_hex(4)}"
    targets = [tmp_path / marker, os.path.join("/tmp", marker), os.path.join("/var/tmp", marker)]
    program = f"""
    import os
    TARGETS = {[str(t) for t in targets]!r}
    def f():
        written = 0
        for path in TARGETS + [os.path.join(os.getcwd(), "local.txt")]:
            try:
                with open(path, "w") as fh:
                    fh.write("pwned")
                written += 1
            except OSError:
                pass
        return written
    """
    report, _ = _run(sandbox, program, ["assert f() >= 0"])
    assert report.statuses == ["pass"]
    for target in targets:
        assert not os.path.exists(target), f"{target} escaped the sandbox"
    assert os.listdir(tmp_path) == []
    _assert_clean_and_usable(sandbox)


def test_environment_secrets_do_not_reach_solutions(sandbox, monkeypatch):
    # The servers were started before this test: start a fresh sandbox with the secret in the environment.
    from evolvecoder_datasets.execution import Sandbox

    monkeypatch.setenv("HF_TOKEN", "hf_secret_value_123")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-456")
    with Sandbox(workers=1, timeout_s=0.5, mode=sandbox.settings.mode) as fresh:
        program = "import os\ndef f():\n    return os.environ.get('HF_TOKEN')\ndef g():\n    return sorted(os.environ)\n" \
                  "def h():\n    return open('/proc/1/environ', 'rb').read() + open('/proc/self/environ', 'rb').read()\n"
        report = fresh.run(program, ["assert f() == 'hf_secret_value_123'", "assert 'OPENAI_API_KEY' in g()",
                                     "assert b'secret' in h()"])
        assert "pass" not in report.statuses, report.messages


def test_network_is_unreachable_even_on_loopback(sandbox):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    program = f"""
    import socket
    def f():
        s = socket.create_connection(("127.0.0.1", {port}), timeout=0.3)
        s.sendall(b"hello")
        return "connected"
    """
    try:
        report, _ = _run(sandbox, program, ["assert f() == 'connected'"])
        assert report.statuses != ["pass"]
        with pytest.raises(socket.timeout):
            listener.accept()
    finally:
        listener.close()
    _assert_clean_and_usable(sandbox)


def test_solutions_run_as_an_unprivileged_uid(sandbox):
    if os.geteuid() != 0:
        pytest.skip("the uid drop needs the servers to run as root")
    report = sandbox.run("import os\ndef uid():\n    return os.getuid()\n", ["assert uid() != 0", "assert uid() == 0"])
    assert report.statuses == ["pass", "fail"]
    assert report.uid_dropped
