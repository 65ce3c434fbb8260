"""Red-team round: new members of the four attack classes (verdict flips, own failure as infrastructure, limits and
cross-job effects, text caps and malformed shapes), each beside an honest control.

Attacks that got through are ``xfail(strict=True, reason="FINDING: ...")``: the test states what *should* hold, so
it fails today and this file passes; when the gap is closed the xfail turns into an XPASS error and must be removed.
Attacks that were stopped, and the findings closed since (non-``str`` programs and tests, falsy C values, deeply
nested JSON), are plain tests. The open findings and the CPU hog run in CI only (``slow``).

"What Python says" is the reference for a verdict: each program and test is also run as plain Python in a fresh
interpreter (``_python_verdict``); the programs here are ours, small and harmless.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request

import pytest

from evolvecoder_datasets.errors import ConfigError
from evolvecoder_datasets.execution import Job, Sandbox, run_tests
from evolvecoder_datasets.execution.checkers import Checker
from evolvecoder_datasets.rewards import make_code_reward

from .conftest import sandbox_per_mode

sb = sandbox_per_mode(workers=1, timeout_s=1.0, memory_mb=512)

FENCE = "```python\n{}\n```"


def _p(src: str) -> str:
    return textwrap.dedent(src).lstrip("\n")


def _python_verdict(program: str, test: str) -> str:
    """``pass``/``fail``/``error`` of ``test`` run after ``program`` in a fresh plain interpreter."""
    driver = _p('''
        import sys
        ns = {"__name__": "__main__"}
        exec(compile(sys.argv[1], "<solution>", "exec"), ns)
        try:
            exec(compile(sys.argv[2], "<test>", "exec"), ns)
        except AssertionError:
            print("fail")
        except BaseException:
            print("error")
        else:
            print("pass")
    ''')
    out = subprocess.run([sys.executable, "-c", driver, program, test], capture_output=True, text=True, timeout=60,
                         check=False)
    return out.stdout.strip().splitlines()[-1] if out.stdout.strip() else "error"


def _agree(sandbox, program: str, tests: list[str]) -> tuple[list[str], list[str]]:
    """(sandbox statuses, Python's verdicts) of the same program and tests."""
    report = sandbox.run(program, tests)
    assert report.infra_error is None, report
    return report.statuses, [_python_verdict(program, t) for t in tests]


def _only(statuses: list[str]) -> list[str]:
    """Statuses as pass / not pass (the judge says ``error`` where Python says ``fail`` and the other way round)."""
    return ["pass" if s == "pass" else "no" for s in statuses]


# ==================================================================================================================
# Class 1: a wrong program gets pass, a right program gets a failure.
# ==================================================================================================================

# --- 1a. Falsy C-implemented values are truthy to the judge -------------------------------------------------------

FALSY_C_VALUES = {
    "empty_bytearray": "def is_valid(x):\n    return bytearray()\n",
    "empty_dict_keys": "def is_valid(x):\n    return {}.keys()\n",
    "zero_timedelta": "import datetime\ndef is_valid(x):\n    return datetime.timedelta(0)\n",
    "empty_memoryview": "def is_valid(x):\n    return memoryview(b'')\n",
    "numpy_zero_array": "import numpy as np\ndef is_valid(x):\n    return np.array([0])\n",
}
TRUTH_TEST = "assert is_valid(3)"


@pytest.mark.parametrize("name", sorted(FALSY_C_VALUES))
def test_a_falsy_c_value_does_not_pass_a_truth_assert(sb, name):
    statuses, python = _agree(sb, FALSY_C_VALUES[name], [TRUTH_TEST])
    assert python == ["fail"]
    assert statuses != ["pass"]


TRUTHY_C_VALUES = {
    "a_match": "import re\ndef is_valid(x):\n    return re.match('a', 'a')\n",
    "a_date": "import datetime\ndef is_valid(x):\n    return datetime.date(2020, 1, 1)\n",
    "a_full_bytearray": "def is_valid(x):\n    return bytearray(b'x')\n",
    "dict_keys": "def is_valid(x):\n    return {x: 1}.keys()\n",
}


@pytest.mark.parametrize("name", sorted(TRUTHY_C_VALUES))
def test_control_a_true_c_value_passes_a_truth_assert(sb, name):
    """The fix sends each C value's truth, its own type's, beside its repr: true ones still pass."""
    statuses, python = _agree(sb, TRUTHY_C_VALUES[name], [TRUTH_TEST, "assert not is_valid(3)"])
    assert python == ["pass", "fail"] and statuses == ["pass", "fail"]


def test_a_c_value_without_a_truth_gets_none_from_the_judge(sb):
    """A numpy array of several items has no truth (``bool`` raises): the judge takes none either, so the test
    errors as in Python and never passes."""
    program = "import numpy as np\ndef is_valid(x):\n    return np.array([0, 1])\n"
    statuses, python = _agree(sb, program, [TRUTH_TEST, "assert not is_valid(3)"])
    assert python == ["error", "error"] and "pass" not in statuses


@pytest.mark.parametrize("value", ["[]", "0", "False", "''", "None", "set()"])
def test_control_falsy_builtin_values_fail_a_truth_assert(sb, value):
    assert sb.run(f"def is_valid(x):\n    return {value}\n", [TRUTH_TEST]).statuses == ["fail"]


# --- 1b. Program objects compared by their visible fields, not by their class's equality ---------------------------

HIDDEN_STATE = {
    "drops_its_arguments": _p('''
        class Point:
            def __init__(self, x, y):
                pass
        def midpoint(a, b):
            return Point(0, 0)
    '''),
    "keeps_its_state_outside_the_instance": _p('''
        class Point:
            _state = {}
            def __init__(self, x, y):
                Point._state[id(self)] = (x, y)
            def __eq__(self, other):
                return Point._state[id(self)] == Point._state[id(other)]
            __hash__ = object.__hash__
        def midpoint(a, b):
            return Point(7, 7)
    '''),
    "keeps_its_state_in_a_c_base": _p('''
        import collections
        class Point(collections.deque):
            def __init__(self, x, y):
                super().__init__([x, y])
        def midpoint(a, b):
            return Point(7, 7)
    '''),
}
MIDPOINT_TEST = "assert midpoint(Point(0, 0), Point(2, 2)) == Point(1, 1)"


@pytest.mark.parametrize("name", sorted(HIDDEN_STATE))
def test_a_class_that_hides_its_state_does_not_pass_an_equality_test(sb, name):
    """Fixed for classes without their own ``__eq__`` (compared by identity, as Python does: ``Point(0, 0) ==
    Point(1, 1)`` is false whatever their fields), for a class whose C base defines it (``deque``: its data is not
    sent, so the comparison is refused and the test errors), and for a class with its own ``__eq__`` that reads
    state outside the instance: two such objects are equal to the judge only where their data are equal **and** the
    verdict of that ``__eq__``, computed in the sandbox on the pairs of them, says so (``_wire_own.OwnVerdicts``)."""
    statuses, python = _agree(sb, HIDDEN_STATE[name], [MIDPOINT_TEST])
    assert python == ["fail"]
    assert statuses != ["pass"]


def test_control_objects_without_eq_compare_as_python_does(sb):
    """Identity, as in Python: two objects made apart are never equal; a dataclass (its own generated ``__eq__``)
    compares its fields, and the judge's own ``ListNode`` still compares with the program's as data. A value
    compared with itself (``b == b``) is one object to the judge too (the sandbox sent the same identity in the
    same state twice)."""
    program = _p('''
        import dataclasses
        class Box:
            def __init__(self, v):
                self.v = v
        @dataclasses.dataclass
        class Pair:
            a: int
            b: int
        class ListNode:
            def __init__(self, val=0, next=None):
                self.val, self.next = val, next
        def make(v):
            return Box(v)
        def pair(a, b):
            return Pair(a, b)
        def two():
            return ListNode(1, ListNode(2))
    ''')
    tests = ["b = make(1)\nassert b == b", "assert make(1) == make(1)", "assert make(1) != make(1)",
             "assert pair(1, 2) == Pair(1, 2)", "assert pair(1, 2) != Pair(2, 1)",
             "assert two() == ListNode(1, ListNode(2))", "assert [make(1)] == [make(1)]"]
    statuses, python = _agree(sb, program, tests)
    assert python == ["pass", "fail", "pass", "pass", "pass", "fail", "fail"]
    # the judge's ListNode is its own, compared as data: the one place it is more lenient than Python, on purpose
    assert statuses == ["pass", "fail", "pass", "pass", "pass", "pass", "fail"]


def test_control_an_honest_point_with_a_wrong_answer_fails(sb):
    program = _p('''
        class Point:
            def __init__(self, x, y):
                self.x, self.y = x, y
        def midpoint(a, b):
            return Point(7, 7)
    ''')
    assert sb.run(program, [MIDPOINT_TEST]).statuses == ["fail"]


# --- 1c. Right programs the judge fails ---------------------------------------------------------------------------

RIGHT_BUT_FAILED = {
    "own_eq_defines_equality": (_p('''
        class Frac:
            def __init__(self, a, b):
                self.a, self.b = a, b
            def __eq__(self, other):
                return self.a * other.b == other.a * self.b
            __hash__ = None
    '''), ["assert Frac(1, 2) == Frac(2, 4)"]),
    "numpy_array_returned": ("import numpy as np\ndef scale(x):\n    return np.array([1.0, 2.0]) * x\n",
                             ["import numpy as np\nassert np.allclose(scale(1), [1.0, 2.0])",
                              "assert list(scale(1)) == [1.0, 2.0]"]),
}


@pytest.mark.parametrize("name", sorted(RIGHT_BUT_FAILED))
@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="FINDING: the judge's value model differs from Python's (a program's own "
                                       "__eq__ is not run in the judge; a numpy array is an opaque foreign value): "
                                       "right programs fail")
def test_a_right_program_passes_what_python_passes(sb, name):
    program, tests = RIGHT_BUT_FAILED[name]
    statuses, python = _agree(sb, program, tests)
    assert python == ["pass"] * len(tests)
    assert statuses == python


# Closed since: the shapes a right program met, each beside a wrong program of the same shape, are in
# ``test_redteam_closed_values.py``.


# --- 1d. Stopped: tricks that did not flip a verdict --------------------------------------------------------------

STOPPED_LIES = {
    # A long exception message: match= and `in str(e)` read beyond the 300 characters the messages keep.
    "exception_message_past_300_characters_right": (
        "def f(x):\n    raise ValueError('a' * 400 + ' invalid input')\n",
        ["import pytest\nwith pytest.raises(ValueError, match='invalid input'):\n    f(1)",
         "try:\n    f(1)\nexcept ValueError as e:\n    assert 'invalid' in str(e)\nelse:\n    assert False"],
        ["pass", "pass"]),
    "exception_message_anchored_past_300_characters_wrong": (
        "def f(x):\n    raise ValueError('a' * 300 + 'X')\n",
        ["import pytest\nwith pytest.raises(ValueError, match=r'^a+$'):\n    f(1)",
         "try:\n    f(1)\nexcept ValueError as e:\n    assert str(e) == 'a' * 300\nelse:\n    assert False"],
        ["no", "no"]),
    "keyboard_interrupt_is_not_caught_as_an_exception": (
        "def f():\n    raise KeyboardInterrupt\n",
        ["import pytest\nwith pytest.raises(ValueError):\n    f()", "try:\n    f()\nexcept Exception:\n    pass"],
        ["no", "no"]),
    "deep_tuple_hashed_and_deep_list_printed_by_the_judge": (
        "def f():\n    x = 1\n    for _ in range(9990):\n        x = (x,)\n    return x\n",
        ["assert f() in {1, 2}", "assert hash(f()) == 1", "assert str(f()) == '1'"], ["no", "no", "no"]),
    "cpu_burnt_while_the_encoder_consumes_a_generator": (
        ("def f():\n    def g():\n        x = 0\n        for i in range(200_000_000):\n            x += i\n"
        "        yield 1\n    return g()\n"),
        ["assert list(f()) == [1]"], ["no"]),
    "thread_left_spinning_after_a_test": (
        ("import threading\ndef spin():\n    while True:\n        pass\ndef f():\n"
        "    threading.Thread(target=spin, daemon=True).start()\n    return 1\ndef g():\n    return 3\n"),
        ["assert f() == 1", "assert g() == 2"], ["pass", "no"]),
}


@pytest.mark.parametrize("name", sorted(STOPPED_LIES))
def test_stopped_lie(sb, name):
    program, tests, expected = STOPPED_LIES[name]
    report = sb.run(program, tests)
    assert report.infra_error is None
    assert _only(report.statuses) == expected, report


# ==================================================================================================================
# Class 2: a program's own failure must stay its verdict (never None).
# ==================================================================================================================

TESTLIB_BETTER_THAN_JURY = r'''
#include "testlib.h"
int main(int argc, char* argv[]) {
    registerTestlibCmd(argc, argv);
    long long jury = ans.readLong();
    long long part = ouf.readLong();
    if (part < jury) quitf(_wa, "worse than the jury");
    if (part > jury) quitf(_fail, "participant has a better answer than the jury");
    quitf(_ok, "ok");
}
'''
KATTIS_PARSES_INT = "import sys\nans = int(open(sys.argv[2]).read())\nout = int(sys.stdin.read())\n" \
                    "sys.exit(42 if out == ans else 43)\n"
CODEFORCES_PARSES_INT = "import sys\nans = int(open(sys.argv[2]).read())\nout = int(open(sys.argv[3]).read())\n" \
                        "print(1 if out == ans else 0)\n"
DOUBLE_RIGHT = "print(int(input()) * 2)"
DOUBLE_WRONG = "print(int(input()) * 2 - 1)"
CHECKER_POISON = {
    # (checker source, language, contract, a wrong program that makes the checker fail)
    "testlib_fail_on_a_better_than_jury_answer": (TESTLIB_BETTER_THAN_JURY, "cpp", "testlib",
                                                  "print(int(input()) * 2 + 1)"),
    "kattis_python_validator_crashes_on_garbage": (KATTIS_PARSES_INT, "python", "kattis", "print('garbage')"),
    "codeforces_checker_crashes_on_invalid_utf8": (CODEFORCES_PARSES_INT, "python", "codeforces",
                                                   "import sys\nsys.stdout.buffer.write(b'\\xff\\xfe\\n')"),
}


def _checker_rewards(name: str) -> list:
    source, lang, contract, poison = CHECKER_POISON[name]
    tests = {"inputs": ["3\n", "4\n"], "outputs": ["6\n", "8\n"],
             "checker": {"source": source, "language": lang, "contract": contract}}
    reward = make_code_reward(mode="fast", timeout_s=1.0, workers=1, cache_size=0)
    try:
        return reward(completions=[FENCE.format(p) for p in (DOUBLE_RIGHT, DOUBLE_WRONG, poison)], tests=[tests] * 3)
    finally:
        getattr(reward, "close", lambda: None)()


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if "testlib" in n else n
                                  for n in sorted(CHECKER_POISON)])  # (testlib compiles C++: CI)
def test_a_wrong_program_cannot_turn_its_checked_output_into_none(name):
    """Fixed: where the checker fails on a program's output, it is run once more with the jury's own answer as the
    output; if it accepts that, the checker works on the case and the failure is the program's (``fail``, reward
    0). A checker that fails on the jury's answer too stays nobody's verdict (``tests/execution/
    test_contest_judging.py``)."""
    right, wrong, poison = _checker_rewards(name)
    assert (right, wrong) == (1.0, 0.0)  # the honest control
    assert poison == 0.0


def test_cases_the_checker_never_reached_after_the_programs_own_failure_are_not_the_programs_fails():
    """The checker stops at its first failure; when that failure is the program's (the checker accepts the jury's
    answer there), the cases it never reached are ``unexecuted`` with no infrastructure flag: not ``fail`` (they
    were never judged: here they are right) and not ``None`` (the program stopped the checking)."""
    checker = Checker(KATTIS_PARSES_INT, language="python", contract="kattis")
    program = "x = int(input())\nprint('garbage' if x == 1 else x * 2)"
    with Sandbox(workers=1, mode="fast", timeout_s=1.0) as box:
        report = box.run_stdio(program, ["1\n", "2\n", "3\n"], ["2\n", "4\n", "6\n"], checker=checker)
        control = box.run_stdio(program, ["2\n", "3\n"], ["4\n", "6\n"], checker=checker)
    assert report.statuses == ["fail", "unexecuted", "unexecuted"] and report.infra_error is None, report
    assert control.statuses == ["pass", "pass"] and control.infra_error is None


def test_control_checker_rewards_right_and_wrong():
    right, wrong, _poison = _checker_rewards("kattis_python_validator_crashes_on_garbage")
    assert (right, wrong) == (1.0, 0.0)


RIGHT = "def f(x):\n    return x + 1\n"
WRONG = "def f(x):\n    return x\n"
TESTS = ["assert f(1) == 2", "assert f(5) == 6"]
SELF_HARM = {
    "exhausts_its_fds_while_loading": "import os\nfds = []\ntry:\n    while True:\n"
                                      "        fds.append(os.open('/dev/null', os.O_RDONLY))\nexcept OSError:\n    pass\n"
                                      "def f(x):\n    return x\n",
    "exhausts_its_fds_in_a_call": "import os\nfds = []\ndef f(x):\n    try:\n        while True:\n"
                                  "            fds.append(os.open('/dev/null', os.O_RDONLY))\n    except OSError:\n"
                                  "        pass\n    return x\n",
    "closes_every_fd_while_loading": "import os\nos.closerange(0, 4096)\ndef f(x):\n    return x + 1\n",
    "dup2s_dev_null_over_every_fd": "import os\ndef f(x):\n    n = os.open('/dev/null', os.O_WRONLY)\n"
                                    "    for fd in range(256):\n        if fd != n:\n            try:\n"
                                    "                os.dup2(n, fd)\n            except OSError:\n                pass\n"
                                    "    return x + 1\n",
    "stops_itself": "import os, signal\ndef f(x):\n    os.kill(os.getpid(), signal.SIGSTOP)\n    return x + 1\n",
    "lowers_its_own_limits": "import resource\ndef f(x):\n    resource.setrlimit(resource.RLIMIT_NOFILE, (3, 3))\n"
                             "    resource.setrlimit(resource.RLIMIT_CPU, (0, 0))\n    return x\n",
    "sends_itself_sigxcpu": "import os, signal\ndef f(x):\n    os.kill(os.getpid(), signal.SIGXCPU)\n    return x + 1\n",
    "kills_its_process_group": "import os, signal\ndef f(x):\n    os.killpg(0, signal.SIGKILL)\n    return x + 1\n",
    "kills_every_process_it_can": "import os, signal\ndef f(x):\n    try:\n        os.kill(-1, signal.SIGKILL)\n"
                                  "    except OSError:\n        pass\n    return x\n",
    "floods_stderr_with_invalid_utf8": "import sys\ndef f(x):\n    sys.stderr.buffer.write(b'\\xff\\xfe' * 4_000_000)\n"
                                       "    return x\n",
}


@pytest.mark.parametrize("mode", ["fast", "isolated"])
def test_self_harm_is_the_programs_verdict_never_none(mode):
    reward = make_code_reward(mode=mode, timeout_s=0.5, wall_timeout_s=1.5, workers=1, memory_mb=512, cache_size=0)
    names = sorted(SELF_HARM)
    completions = []
    for name in names:
        completions += [FENCE.format(SELF_HARM[name]), FENCE.format(RIGHT), FENCE.format(WRONG)]
    try:
        rewards = reward(completions=completions, tests=[TESTS] * len(completions))
    finally:
        getattr(reward, "close", lambda: None)()
    got = {name: tuple(rewards[3 * i: 3 * i + 3]) for i, name in enumerate(names)}
    bad = {k: v for k, v in got.items() if v != (0.0, 1.0, 0.0)}
    assert not bad, bad


# ==================================================================================================================
# Class 3: limits and other jobs.
# ==================================================================================================================


@pytest.mark.slow
def test_a_cpu_hog_beside_an_honest_job_changes_nothing():
    hog = _p('''
        import os, threading
        def spin():
            while True:
                pass
        for _ in range(4):
            threading.Thread(target=spin, daemon=True).start()
        for _ in range(4):
            if os.fork() == 0:
                spin()
        def f(x):
            spin()
    ''')
    honest = _p('''
        def f(x):
            s = 0
            for i in range(2_000_000):
                s += i
            return x + 1
    ''')
    with Sandbox(workers=2, timeout_s=1.0, memory_mb=512, mode="isolated") as box:
        reports = box.run_many([Job(hog, tests=TESTS), Job(honest, tests=TESTS), Job(WRONG, tests=TESTS)])
    assert [r.infra_error for r in reports] == [None] * 3
    assert reports[0].statuses != ["pass", "pass"]
    assert reports[1].statuses == ["pass", "pass"], reports[1]
    assert reports[2].statuses == ["fail", "fail"]


# ==================================================================================================================
# Class 4: shapes and caps.
# ==================================================================================================================

NON_STRING_TESTS = {
    "bytes": [b"assert f(1) == 2"],
    "nested_list": [["assert f(1) == 2"]],
    "none": [None],
    "int": [1],
}


@pytest.mark.parametrize("entry", ["run", "run_many", "run_tests"])
@pytest.mark.parametrize("shape", sorted(NON_STRING_TESTS))
def test_a_test_that_is_not_a_string_is_refused_or_fails_a_wrong_program(sb, entry, shape):
    """Fixed: every job's program, tests, inputs and answers are checked to be ``str`` where the job is made (a
    ``ConfigError`` naming the field), and one ``str`` given for the sequence is refused, not split into characters."""
    tests = NON_STRING_TESTS[shape]
    with pytest.raises(ConfigError, match="must be a str"):
        if entry == "run":
            sb.run(WRONG, tests)
        elif entry == "run_many":
            sb.run_many([Job(WRONG, tests=tests)])
        else:
            run_tests(WRONG, tests, mode=sb.settings.mode, timeout_s=1.0)
    with pytest.raises(ConfigError, match="sequence of str"):
        sb.run(WRONG, "assert f(1) == 2")
    assert sb.run(WRONG, ["assert f(1) == 2"]).statuses == ["fail"]  # control: the same test as a str


def test_control_rewards_refuse_tests_that_are_not_strings():
    reward = make_code_reward(mode="fast", timeout_s=0.5, workers=1, cache_size=0)
    for tests in NON_STRING_TESTS.values():
        with pytest.raises(ValueError):
            reward(completions=[FENCE.format(WRONG)], tests=[tests])


def test_a_program_that_is_not_a_string_is_a_typed_error(sb):
    for program in (None, b"def f(x):\n    return x + 1\n"):
        with pytest.raises(ConfigError, match="program must be a str"):
            sb.run(program, TESTS)


def _post(url: str, token: str, data: bytes, path: str) -> tuple[int, bytes]:
    req = urllib.request.Request(url + path, data=data, method="POST",
                                 headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


@pytest.fixture(scope="module")
def reward_server():
    pytest.importorskip("aiohttp")
    from evolvecoder_datasets.integrations.server import RewardServer, ServeConfig
    from evolvecoder_datasets.rewards import RewardConfig

    token = "redteam-token-5e1b"
    config = ServeConfig(port=0, token=token, reward=RewardConfig(mode="fast", timeout_s=0.5, workers=1))
    with RewardServer(config) as server:
        yield server, token


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("where", ["body", "openrlhf_label"])
def test_deeply_nested_json_answers_400(reward_server, where):
    server, token = reward_server
    if where == "body":
        data, path = b'{"completions": ["x = 1"], "tests": ' + DEEP.encode() + b"}", "/score"
    else:
        data, path = json.dumps({"query": ["x = 1"], "prompts": [""], "labels": [DEEP]}).encode(), "/openrlhf"
    assert _post(server.url, token, data, path)[0] == 400


def test_the_reward_server_keeps_scoring_after_malformed_bodies(reward_server):
    server, token = reward_server
    bodies = [b'{"completions": ["x = 1"], "tests": ' + DEEP.encode() + b"}",
              b'{"completions": ["x=1"], "tests": [["assert x == 1"]], "time_limit_s": [' + b"1" * 5000 + b"]}",
              b'{"completions": ["x=1\xff"], "tests": [["assert x == 1"]]}',
              b'{"completions": ["x = 1"], "tests": [[null]]}',
              b'{"completions": ["x = \'\\ud800\'"], "tests": [["assert x"]]}']
    codes = [_post(server.url, token, body, "/score")[0] for body in bodies]
    assert all(code in (200, 400, 413, 500) for code in codes), codes
    assert codes[1:4] == [400, 400, 400]
    status, answer = _post(server.url, token, json.dumps({"completions": ["x = 1", "x = 2"],
                                                          "tests": [["assert x == 1"]] * 2}).encode(), "/score")
    assert status == 200 and json.loads(answer)["rewards"] == [1.0, 0.0]
