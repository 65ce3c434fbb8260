"""Behaviour of the sandbox on honest programs: verdicts, modes, limits, stdio, time judging, lifecycle."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from evolvecoder_datasets.errors import ConfigError, SandboxUnavailable
from evolvecoder_datasets.execution import Job, Sandbox, run_tests
from evolvecoder_datasets.execution._forkserver.prepared import prepare_test
from evolvecoder_datasets.execution._forkserver.values import canonical, hardened_compare
from evolvecoder_datasets.execution.checkers import outputs_match
from evolvecoder_datasets.execution._inside import inside_spec
from evolvecoder_datasets.schema import STATUS_NAMES

SORT = "def sort_desc(xs):\n    return sorted(xs, reverse=True)\n"


def test_typed_outcomes_for_each_kind_of_failure(sandbox):
    program = (
        "def f(x):\n"
        "    if x == 0:\n        raise ValueError('zero')\n"
        "    if x == 1:\n        return [0] * (10 ** 10)\n"
        "    if x == 2:\n        while True:\n            pass\n"
        "    return x\n"
    )
    tests = ["assert f(5) == 5", "assert f(5) == 6", "assert f(0) == 0", "assert f(1) == 1", "assert f(2) == 2",
             "assert undefined_name(3) == 3", "assert (", "assert f(7) == 7"]  # fmt: skip
    report = sandbox.run(program, tests)
    assert report.statuses == ["pass", "fail", "error", "memory", "timeout", "error", "error", "pass"]
    assert "ValueError: zero" in report.messages[2]
    assert "NameError" in report.messages[5]
    assert "does not parse" in report.messages[6]
    assert report.cpu_s[4] > 0.1  # CPU limit, or the wall backstop on a heavily loaded machine


def test_isolated_mode_gives_each_test_a_fresh_copy_and_fast_mode_shares_state():
    program = "STATE = []\ndef push(x):\n    STATE.append(x)\n    return len(STATE)\n"
    tests = ["assert push(1) == 1", "assert push(2) == 1"]
    with Sandbox(workers=1, mode="isolated") as sb:
        assert sb.run(program, tests).statuses == ["pass", "pass"]
    with Sandbox(workers=1, mode="fast") as sb:
        assert sb.run(program, tests).statuses == ["pass", "fail"]


def test_fast_mode_continues_after_a_test_that_kills_the_process():
    program = "import os\ndef f(x):\n    if x == 1:\n        os._exit(3)\n    if x == 2:\n        while True: pass\n    return x\n"
    tests = ["assert f(0) == 0", "assert f(1) == 1", "assert f(3) == 3", "assert f(2) == 2", "assert f(4) == 4"]
    with Sandbox(workers=1, mode="fast", timeout_s=0.3) as sb:
        report = sb.run(program, tests)
    assert report.statuses == ["pass", "crash", "pass", "timeout", "pass"]


def test_timeout_is_judged_by_cpu_time_not_wall_clock():
    # Four workers on two cores plus two busy loops: each test gets about a third of a core. A test that needs
    # ~0.2 s of CPU takes ~0.6 s or more of wall time, yet must not be judged a timeout with a 0.6 s CPU limit.
    program = "def work(n):\n    s = 0\n    for i in range(n):\n        s += i * i\n    return s\n"
    with Sandbox(workers=1, mode="isolated", timeout_s=5) as sb:  # calibrate n to ~0.2 s of CPU on this machine
        per_million = sb.run(program, ["assert work(10**6) >= 0"]).cpu_s[0]
    n = max(10**5, int(10**6 * 0.2 / max(per_million, 1e-3)))
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        with Sandbox(workers=4, mode="isolated", timeout_s=0.6, wall_timeout_s=10) as sb:
            reports = sb.run_many([(program, [f"assert work({n}) >= 0"] * 3)] * 8)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    statuses = [s for r in reports for s in r.statuses]
    assert statuses == ["pass"] * 24, statuses
    walls = [c for r in reports for c in r.cpu_s]
    assert max(walls) < 0.6


def test_sleeping_program_hits_the_wall_clock_backstop_quickly():
    with Sandbox(workers=1, timeout_s=0.2, wall_timeout_s=0.5) as sb:
        start = time.monotonic()
        report = sb.run("import time\ndef f():\n    time.sleep(30)\n", ["assert f() is None"])
        assert report.statuses == ["timeout"]
        assert "wall-clock" in report.messages[0]
        assert time.monotonic() - start < 5


def test_consecutive_timeout_budget_marks_the_rest_unexecuted(sandbox):
    program = "def f(x):\n    while x > 0:\n        pass\n    return 0\n"
    tests = ["assert f(0) == 0"] + ["assert f(1) == 0"] * 6
    with Sandbox(workers=1, mode=sandbox.settings.mode, timeout_s=0.2, max_consecutive_timeouts=2) as sb:
        report = sb.run(program, tests)
    assert report.statuses == ["pass", "timeout", "timeout"] + ["unexecuted"] * 4


def test_timeouts_separated_by_finished_tests_are_not_consecutive(sandbox):
    # A slow input every few tests must not use up the budget: only an unbroken run of timeouts does. Both modes
    # agree (fast mode once counted every restart of its child as one more timeout in a row).
    program = "def f(x):\n    while x < 0:\n        pass\n    return x\n"
    slow, quick = "assert f(-1) == 1", [f"assert f({i}) == {i}" for i in range(1, 4)]
    tests = [slow, *quick, slow, *quick, slow, slow, *quick]
    with Sandbox(workers=1, mode=sandbox.settings.mode, timeout_s=0.2, max_consecutive_timeouts=2) as sb:
        report = sb.run(program, tests)
    assert report.statuses == ["timeout", *["pass"] * 3, "timeout", *["pass"] * 3, "timeout", "timeout",
                               *["unexecuted"] * 3]  # fmt: skip


def test_preamble_supplies_forgotten_imports():
    program = "def total(xs: List[int]) -> int:\n    return sum(xs)\n"
    with Sandbox(workers=1) as sb:
        assert sb.run(program, ["assert total([1, 2]) == 3"]).statuses == ["error"]
    with Sandbox(workers=1, preamble="from typing import List") as sb:
        assert sb.run(program, ["assert total([1, 2]) == 3"]).statuses == ["pass"]


def test_pass_matrix_and_status_matrix_shapes_and_values(sandbox):
    programs = [SORT, "def sort_desc(xs):\n    return sorted(xs)\n", "def sort_desc(xs:\n", ""]
    tests = ["assert sort_desc([1, 3, 2]) == [3, 2, 1]", "assert sort_desc([]) == []", "assert sort_desc([5]) == [5]"]
    matrix = sandbox.pass_matrix(programs, tests)
    assert matrix.dtype == bool and matrix.shape == (4, 3)
    assert matrix.tolist() == [[True, True, True], [False, True, True], [False] * 3, [False] * 3]
    codes = sandbox.status_matrix(programs, tests)
    assert [STATUS_NAMES[c] for c in codes[2]] == ["syntax_error"] * 3
    assert [STATUS_NAMES[c] for c in codes[3]] == ["error"] * 3  # NameError: nothing defined


def test_results_do_not_depend_on_worker_count():
    rng = np.random.default_rng(7)
    programs = [f"def f(x):\n    return x * {k} + {int(rng.integers(0, 2))}\n" for k in range(12)]
    tests = [f"assert f({i}) == {i * 3}" for i in range(10)]
    with Sandbox(workers=1, mode="isolated") as one, Sandbox(workers=3, mode="fast") as three:
        assert (one.pass_matrix(programs, tests) == three.pass_matrix(programs, tests)).all()


def test_stdio_programs_are_compared_token_by_token_with_optional_float_tolerance(sandbox):
    program = "import sys\nn = int(sys.stdin.readline())\nvals = list(map(float, sys.stdin.read().split()))\n" \
              "print(f'{sum(vals) / n:.7f}')\n"
    inputs = ["2\n1 2\n", "3\n1 1 2\n", "1\n5\n"]
    outputs = ["1.5000000", "1.333333", "6"]
    assert sandbox.run_stdio(program, inputs, outputs).statuses == ["pass", "fail", "fail"]
    assert sandbox.run_stdio(program, inputs, outputs, float_tol=1e-5).statuses == ["pass", "pass", "fail"]


def test_stdio_handles_exit_calls_errors_and_loops(sandbox):
    cases = {
        "import sys\nprint(input()[::-1])\nsys.exit(0)\n": "pass",
        "print(input()[::-1])\nexit()\n": "pass",
        "import sys\nprint(input()[::-1])\nsys.exit(3)\n": "error",
        "raise RuntimeError('x')": "error",
        "while True:\n    pass\n": "timeout",
        "import os\nprint(input()[::-1], flush=True)\nos._exit(0)\n": "pass",
        "print('nope'": "syntax_error",
        "data = open(0).read().split()\nprint(data[0][::-1])\n": "pass",
    }
    jobs = [Job(p, inputs=["abc\n"], outputs=["cba\n"]) for p in cases]
    got = [r.statuses[0] for r in sandbox.run_many(jobs)]
    assert got == list(cases.values())


def test_async_api_runs_jobs_concurrently():
    async def main(sb):
        return await asyncio.gather(sb.arun(SORT, ["assert sort_desc([1, 2]) == [2, 1]"]),
                                    sb.arun_many([(SORT, ["assert sort_desc([1]) == [2]"])]))  # fmt: skip

    with Sandbox(workers=2) as sb:
        single, many = asyncio.run(main(sb))
    assert single.statuses == ["pass"] and many[0].statuses == ["fail"]


def test_run_tests_convenience_reuses_a_shared_sandbox():
    first = run_tests(SORT, ["assert sort_desc([2, 9]) == [9, 2]"])
    second = run_tests(SORT, ["assert sort_desc([2, 9]) == [2, 9]"])
    assert (first.statuses, second.statuses) == (["pass"], ["fail"])


def test_a_killed_fork_server_is_restarted_transparently():
    with Sandbox(workers=1) as sb:
        assert sb.run(SORT, ["assert sort_desc([1]) == [1]"]).statuses == ["pass"]
        old = sb.server_pids[0]
        os.killpg(old, 9)
        time.sleep(0.1)
        report = sb.run(SORT, ["assert sort_desc([1]) == [1]"])
        assert report.statuses == ["pass"] and report.infra_error is None
        assert sb.server_pids[0] != old


def test_empty_test_list_and_bad_configuration():
    with Sandbox(workers=1) as sb:
        assert sb.run(SORT, []).statuses == []
    with pytest.raises(ConfigError):
        Sandbox(mode="turbo")
    with pytest.raises(ValueError):  # ConfigError is also a ValueError
        Sandbox(timeout_s=0)


def test_unknown_or_unavailable_isolation_raises(tmp_path, monkeypatch):
    with pytest.raises(ConfigError):
        Sandbox(isolation="docker").start()
    from evolvecoder_datasets.execution.isolation import isolation_available

    # A machine without bubblewrap or unshare, wherever this runs: nothing on PATH (the probe's cached answer for
    # this machine is dropped before and after, so other tests see the real one).
    monkeypatch.setenv("PATH", str(tmp_path))
    isolation_available.cache_clear()
    try:
        for isolation in ("bwrap", "unshare"):
            with pytest.raises(SandboxUnavailable, match=isolation):
                Sandbox(isolation=isolation).start()
    finally:
        monkeypatch.undo()
        isolation_available.cache_clear()


@pytest.mark.parametrize("isolation", ["unshare", "none"])
def test_fallback_isolations_still_judge_correctly(isolation):
    import warnings

    from evolvecoder_datasets.execution.isolation import isolation_available

    if not isolation_available(isolation):
        pytest.skip(f"{isolation} cannot run here")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Sandbox(workers=1, isolation=isolation, timeout_s=0.3) as sb:
            report = sb.run(SORT + "def spin():\n    while True: pass\n",
                            ["assert sort_desc([1, 2]) == [2, 1]", "assert spin() is None", "assert sort_desc([]) == [0]"])
            assert report.statuses == ["pass", "timeout", "fail"]
            assert report.isolation == isolation


# --- the trusted pieces, directly ----------------------------------------------------------------------------


def test_the_server_receives_only_probes_never_the_expected_side():
    from evolvecoder_datasets.execution.judge import plan_test

    plan = plan_test("assert f(1, [2]) == {'a': (1, 2)}")
    assert plan.outside and plan.steps == [("p", "f(1, [2])")]
    assert "'a'" not in plan.wire and prepare_test(plan.wire).kind == "plan"
    inside = plan_test("for x in f(3):\n    assert g(x) == x")
    assert not inside.outside and prepare_test(inside_spec(inside.wire)).kind == "stmt"
    # The server compiles no whole test itself (it never imports ast): a raw one is refused, not run.
    assert prepare_test(inside.wire).kind == "invalid" and inside.wire.startswith("T")
    assert prepare_test("M" + "bm90IGNvZGU=").kind == "invalid"
    assert prepare_test(plan_test("def broken(:").wire).kind == "invalid"
    assert prepare_test("Pq1 +").kind == "invalid" and prepare_test("?").kind == "invalid"


def test_canonical_values_ignore_overridden_methods():
    class Sneaky(int):
        def __eq__(self, other):
            return True

        __hash__ = int.__hash__

    class Weird(list):
        def __iter__(self):
            return iter([99])

    assert type(canonical(Sneaky(4))) is int and canonical(Sneaky(4)) == 4
    assert canonical(Weird([1, 2])) == [1, 2]
    assert canonical({"k": (Sneaky(1),)}) == {"k": (1,)}
    assert not hardened_compare("eq", Sneaky(4), 5)
    assert hardened_compare("eq", Sneaky(5), 5)
    assert hardened_compare("lt", 1, 2) and not hardened_compare("in", 3, [1, 2])


def test_outputs_match_rules():
    assert outputs_match("1 2 3\n", " 1  2\n3 ")
    assert not outputs_match("1 2", "1 2 3")
    assert outputs_match("1.0000001", "1.0", float_tol=1e-6)
    assert not outputs_match("1.1", "1.0", float_tol=1e-6)
    assert not outputs_match("abc", "abd", float_tol=1.0)


def test_solutions_can_import_the_stdlib_and_installed_packages(sandbox):
    program = ("import fractions, json, decimal, statistics\nimport numpy as np\n"
               "def mean(xs):\n    return float(np.mean(xs))\n"
               "def half():\n    return fractions.Fraction(1, 2)\n")  # fmt: skip
    report = sandbox.run(program, ["assert mean([1, 2, 3]) == 2.0", "assert half() == 0.5", "assert exit is not None"])
    assert report.statuses == ["pass", "pass", "pass"], report.messages


def test_the_sandbox_own_modules_are_not_importable_by_solutions(sandbox):
    # The server is imported from the package's execution folder; that folder must not stay on sys.path, or a
    # solution's `import report` or `import extract` would get our modules instead of its own or an ImportError.
    program = "import importlib.util\ndef probe(name):\n    spec = importlib.util.find_spec(name)\n" \
              "    return spec.origin if spec else 'missing'\n"
    tests = [f"assert probe({name!r}) == 'missing'" for name in ("report", "extract", "isolation")]
    report = sandbox.run(program, tests)
    assert report.statuses == ["pass"] * 3, report.messages


def test_a_forked_copy_of_the_caller_cannot_use_or_close_the_parents_servers():
    from evolvecoder_datasets.errors import SandboxError

    with Sandbox(workers=1) as sb:
        pid = os.fork()
        if pid == 0:  # the child: using the inherited sandbox must fail loudly, closing it must not touch servers
            code = 0
            try:
                sb.run(SORT, ["assert sort_desc([1]) == [1]"])
                code = 3
            except SandboxError:
                pass
            sb._finalizer()  # what exit would run
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 0
        assert sb.run(SORT, ["assert sort_desc([1]) == [1]"]).statuses == ["pass"]


def test_hardening_keeps_legitimate_values_and_objects_working(sandbox):
    """Plain values, stdlib subclasses, named tuples, enums and program classes behave as in plain Python."""
    program = (
        "import collections, enum, math\n"
        "from collections import Counter, namedtuple, OrderedDict, defaultdict\n"
        "Point = namedtuple('Point', 'x y')\n"
        "class Color(enum.IntEnum):\n    RED = 1\n    BLUE = 2\n"
        "class ListNode:\n    def __init__(self, val, nxt=None):\n        self.val, self.next = val, nxt\n"
        "    def __eq__(self, other):\n        return isinstance(other, ListNode) and (self.val, self.next) == (other.val, other.next)\n"
        "class Solution:\n    def reverse(self, head):\n        prev = None\n        while head:\n"
        "            head.next, prev, head = prev, head, head.next\n        return prev\n"
        "def counts(s):\n    return Counter(s)\n"
        "def point():\n    return Point(1, 2)\n"
        "def color():\n    return Color.RED\n"
        "def od():\n    return OrderedDict(a=1)\n"
        "def dd():\n    d = defaultdict(list)\n    d['k'].append(1)\n    return d\n"
        "def root(x):\n    return math.sqrt(x)\n"
    )  # fmt: skip
    tests = [
        "assert counts('aab')['z'] == 0",
        "assert counts('aab') == {'a': 2, 'b': 1}",
        "assert point().x == 1 and point() == (1, 2)",
        "assert color() is Color.RED and color() == 1",
        "assert od() == {'a': 1} and list(od()) == ['a']",
        "assert dd()['missing'] == [] and dd()['k'] == [1]",
        "assert abs(root(2) - 1.41421356) < 1e-6",
        "assert math.isclose(root(16), 4.0)",
        "assert Solution().reverse(ListNode(1, ListNode(2))) == ListNode(2, ListNode(1))",
        "assert Solution().reverse(None) is None",
    ]
    report = sandbox.run(program, tests)
    assert report.statuses == ["pass"] * len(tests), list(zip(report.statuses, report.messages))


def test_a_checkout_under_tmp_stays_visible_inside_bubblewrap(tmp_path, monkeypatch):
    """CI clones may live under /tmp, which bubblewrap replaces by a private tmpfs: the interpreter and package
    folders there must be bound back in (read-only), with readable folders leading to them."""
    from evolvecoder_datasets.execution import isolation

    checkout = tmp_path / "clone" / ".venv"
    checkout.mkdir(parents=True)
    monkeypatch.setattr(isolation, "_python_roots", lambda: [str(checkout)])
    cmd = isolation.bwrap_command(["python3"])
    binds = [cmd[i + 1] for i, arg in enumerate(cmd) if arg == "--ro-bind"]
    assert str(checkout) in binds
    assert cmd.index("--tmpfs") < cmd.index(str(checkout))  # bound after /tmp is replaced
    made = [cmd[i + 1] for i, arg in enumerate(cmd) if arg == "--dir"]
    assert str(checkout.parent) in made


def test_a_caller_started_from_tmp_still_gets_a_private_tmp(monkeypatch):
    """A script run from /tmp has /tmp on sys.path; the sandbox must not bind the host's /tmp back in."""
    import sys

    from evolvecoder_datasets.execution import isolation

    monkeypatch.setattr(sys, "path", ["/tmp", *sys.path])
    cmd = isolation.bwrap_command(["python3"])
    assert "/tmp" not in [cmd[i + 1] for i, arg in enumerate(cmd) if arg == "--ro-bind"]
    with Sandbox(workers=1) as sb:
        assert sb.run("import os\ndef f():\n    return os.getcwd()", ["assert f().startswith('/tmp/')"]).statuses == ["pass"]


def test_the_servers_folder_removal_never_follows_a_link(tmp_path):
    """The server empties work folders a program wrote into (as root, after the job); a link the program planted,
    the folder itself included, is removed as a link and what it points to stays."""
    from evolvecoder_datasets.execution._forkserver.traces import _rmtree

    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "keep.txt").write_text("x")
    work = tmp_path / "work"
    (work / "a" / "b").mkdir(parents=True)
    (work / "a" / "b" / "f.txt").write_text("y")
    (work / "a" / "to_outside").symlink_to(outside)
    (work / "file_link").symlink_to(outside / "deep" / "keep.txt")
    _rmtree(str(work))
    assert not work.exists() and (outside / "deep" / "keep.txt").read_text() == "x"
    swapped = tmp_path / "swapped"
    swapped.symlink_to(outside)
    _rmtree(str(swapped))
    assert not swapped.is_symlink() and (outside / "deep" / "keep.txt").exists()
