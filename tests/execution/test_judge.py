"""The judge: how a test is split, what the sandbox gets to see of it, and how the judge's part is evaluated.

The planner's promise is that the expected side of a test never leaves the caller's process; the interpreter's is
that it evaluates its part like Python would, within bounds, and never turns malformed input into a pass.
"""

from __future__ import annotations

import time

import pytest

from evolvecoder_datasets.execution import Sandbox
from evolvecoder_datasets.execution._wire import encode
from evolvecoder_datasets.execution.judge import encode_entries, judge, outside_share, plan_test

SECRET = "EXPECTED_d41d8cd9"

# Shapes of tests seen in HumanEval, LeetCode and model-written suites; the expected side holds SECRET.
SHAPES = [
    f"assert f(3) == {SECRET!r}",
    f"assert {SECRET!r} == f(3)",
    f"assert f(3) != {SECRET!r} + 'x'",
    f"assert sorted(f(3)) == sorted([{SECRET!r}, 'a'])",
    f"assert f(3).startswith({SECRET!r})",
    f"assert {SECRET!r} in f(3)",
    f"assert f(3)[0] == {SECRET!r} and len(f(4)) == 2",
    f"assert f(3) == {SECRET!r}, 'message'",
    f"x = 3\nexpected = {SECRET!r}\nassert f(x) == expected",
    f"result = f(3)\nassert result == {SECRET!r}",
    f"for x, want in [(1, {SECRET!r}), (2, 'b')]:\n    assert f(x) == want",
    f"assert all(f(x) == y for x, y in [(1, {SECRET!r})])",
    f"cases = {{1: {SECRET!r}}}\nfor k in cases:\n    assert f(k) == cases[k]",
    f"def check(candidate):\n    assert candidate(3) == {SECRET!r}\n\ncheck(f)",
    f"def run_f(solution_class, n):\n    return solution_class().f(n)\n\ndef assert_f(result, expected):\n"
    f"    assert result == expected\n    return True\n\nn, expected = (3, {SECRET!r})\nresult = run_f(Solution, n)\n"
    f"assert_f(result, expected)",
    f"import math\nassert math.isclose(f(3), float(len({SECRET!r})))",
    f"assert [tuple(p) for p in f(3)] == [({SECRET!r},)]",
    f"assert {{k: v for k, v in f(3).items()}} == {{'k': {SECRET!r}}}",
    f"x = 1\nwhile x < 3:\n    assert f(x) == [{SECRET!r}, 'b'][x - 1]\n    x += 1",
    f"if f(3) != {SECRET!r}:\n    raise AssertionError('wrong')",
    f"ref = lambda n: {SECRET!r} * n\nassert f(2) == ref(2)",
    f"import unittest\nunittest.TestCase().assertEqual(f(3), {SECRET!r})",
    f"try:\n    r = f(3)\nexcept ValueError:\n    r = None\nassert r == {SECRET!r}",
    f"import pytest\nwith pytest.raises(ValueError):\n    f({SECRET[:0]!r})\nassert f(1) == {SECRET!r}",
    f"assert (y := f(3)) == {SECRET!r} and y",
    f"for x in [1, 2]:\n    if f(x) == {SECRET!r}:\n        break\nelse:\n    assert False",
    f"import pytest\nwith pytest.raises(ValueError, match={SECRET!r}):\n    f(-1)",
    f"for v in f(3):\n    assert v == {SECRET!r}",
    f"try:\n    obj = Thing()\n    obj.run()\nexcept ValueError:\n    pass\nassert obj.value() == {SECRET!r}",
    f"import itertools\nfor a, b in itertools.product([1], [{SECRET!r}]):\n    assert f(a) == b",
]


@pytest.mark.parametrize("test", SHAPES)
def test_the_expected_side_never_reaches_the_sandbox(test):
    plan = plan_test(test)
    assert plan.outside, plan.reason
    assert SECRET not in plan.wire, plan.wire


def test_inputs_do_reach_the_sandbox_inside_the_probes():
    plan = plan_test("for x, want in [(17, 289), (23, 529)]:\n    assert square(x) == want")
    assert plan.steps == [("p", "square(17)"), ("p", "square(23)")]


def _suites():
    from evolvecoder_datasets.sources import load_humaneval, load_leetcode

    humaneval = [t for row in load_humaneval() for t in row["tests"]]
    leetcode = [t for row in load_leetcode() for t in row["tests"]]
    assert len(humaneval) > 1000 and len(leetcode) > 20000
    return humaneval, leetcode


def test_humaneval_and_a_leetcode_sample_are_judged_outside_at_least_99_percent():
    humaneval, leetcode = _suites()
    assert outside_share(humaneval) >= 1105 / 1106  # the one left: find_zero's check draws its cases from random
    assert outside_share(leetcode[::9]) >= 0.999  # every 9th case of every problem's list: ~2,500 tests


@pytest.mark.slow
def test_all_of_leetcode_is_judged_outside_at_least_99_percent():
    _, leetcode = _suites()
    assert outside_share(leetcode) >= 0.999  # 22,418 of 22,418 when written


def _values(*values) -> bytes:
    return encode_entries([("v", v) for v in values])


def test_probe_errors_count_only_where_python_would_have_evaluated_them():
    plan = plan_test("assert f(1) == 2 or g(0) == 1")
    boom = encode_entries([("v", 2), ("e", "error", "ZeroDivisionError: division by zero")])
    assert judge(plan, boom) == ("pass", "")
    plan = plan_test("assert f(1) == 3 or g(0) == 1")
    assert judge(plan, boom) == ("error", "ZeroDivisionError: division by zero")


def test_a_failed_setup_statement_ends_the_test_where_it_failed():
    plan = plan_test("assert f(1) == 1\nobj = Thing()\nassert obj.value() == 5")
    entries = encode_entries([("v", 1), ("x", "error", "TypeError: no")])
    assert judge(plan, entries) == ("error", "TypeError: no")
    entries = encode_entries([("v", 2), ("x", "error", "TypeError: no")])
    assert judge(plan, entries) == ("fail", "AssertionError")


@pytest.mark.parametrize("payload", [b"", b"E1:x", b"E1:vi1", encode_entries([("v", 1), ("v", 2)]), b"E1:pi1;",
                                     b"E1:es4:passs0:", encode("pass"), b"E1:vi1;junk", b"E99999999999999999999:",
                                     b"l1:t2:s1:vi1;"])
def test_malformed_reports_are_crashes_never_passes(payload):
    status, _ = judge(plan_test("assert f(1) == 1"), payload)
    assert status == "crash"


@pytest.mark.parametrize("test", [
    "assert f(1) == 2 ** 10 ** 9",
    "assert f(1) == 'x' * 10 ** 12",
    "assert f(1) == [0] * 10 ** 10",
    "assert f(1) == list(range(10 ** 12))",
    "assert f(1) == sum(i for i in range(10 ** 9))",
    "def spin():\n    while True:\n        pass\n\nassert f(1) == spin()",
    "assert f(1) == 'a'.zfill(10 ** 11)",
])
def test_expensive_test_code_is_an_error_within_bounds_not_a_hang(test):
    plan = plan_test(test)
    assert plan.outside
    start = time.monotonic()
    status, message = judge(plan, _values(1))
    assert status == "error" and message, (status, message)
    assert time.monotonic() - start < 30  # containment, not speed


def test_program_objects_compare_by_structure_and_lying_truth_is_refused():
    chain = "class Node:\n    def __init__(self, v, n=None):\n        self.v, self.n = v, n\n" \
            "    def __eq__(self, other):\n        return True\n" \
            "class Liar:\n    def __bool__(self):\n        return True\n" \
            "def build(xs):\n    head = None\n    for x in reversed(xs):\n        head = Node(x, head)\n    return head\n" \
            "def liar():\n    return Liar()\n"  # fmt: skip
    tests = ["assert build([1, 2]) == build([1, 2])", "assert build([1, 2]) == build([1, 3])",
             "assert build([1]) == 1", "assert liar()", "assert build([1]).v == 1"]
    for mode in ("isolated", "fast"):
        with Sandbox(workers=1, mode=mode) as sb:
            report = sb.run(chain, tests)
        # (2 and 3: Node's __eq__ calls equal what differs as data, so the judge has no answer: an error, never the
        # pass Python gives such a class, and never the fail it would give an __eq__ that says "not equal")
        assert report.statuses == ["pass", "error", "error", "error", "pass"], (mode, report.messages)
        assert report.judged == ["outside"] * len(tests)


def test_reports_say_where_each_verdict_was_decided():
    program = "def f(x):\n    return [x, x]\n\ndef g(v):\n    return v\n"
    # a program call per item of what the program returned cannot be written out before the program runs
    tests = ["assert f(1) == [1, 1]", "for v in f(2):\n    assert g(v) == 2", "import re\nassert re.match('a', 'a')"]
    with Sandbox(workers=1) as sb:
        report = sb.run(program, tests)
    assert report.statuses == ["pass", "pass", "pass"]
    assert report.judged == ["outside", "inside", "outside"] and report.judged_inside == 1


def test_module_helpers_a_test_applies_to_program_values_run_in_a_process_that_never_ran_the_program():
    program = ("import re, heapq\nre.fullmatch = lambda *a, **k: True\nheapq.nsmallest = lambda n, xs: [1, 2]\n"
               "def digits(n):\n    return 'none'\ndef smallest(xs):\n    return [9, 8]\ndef good(n):\n    return str(n)\n")
    tests = ["import re\nassert re.fullmatch(r'[0-9]+', digits(5))",
             "import heapq\nassert heapq.nsmallest(2, smallest([5, 1, 2])) == [1, 2]",
             "import re\nassert re.fullmatch(r'[0-9]+', good(5))",
             "import re\nassert re.fullmatch(r'(a+)+$', 'a' * 40 + 'b') is None"]
    for mode in ("isolated", "fast"):
        with Sandbox(workers=1, mode=mode, timeout_s=0.5) as sb:
            report = sb.run(program, tests)
        assert report.statuses[:3] == ["fail", "fail", "pass"], (mode, report.messages)
        assert report.statuses[3] == "timeout"  # a catastrophic pattern costs the clean process, not the caller
        assert "'none'" not in "".join(plan_test(t).wire for t in tests[:1])


def test_try_except_and_pytest_raises_are_judged_outside_with_the_programs_exceptions():
    tests = ["try:\n    parse('x')\nexcept ValueError:\n    pass\nelse:\n    assert False",
             "import pytest\nwith pytest.raises(ValueError):\n    parse('x')",
             "try:\n    r = parse('7')\nexcept Exception:\n    assert False\nassert r == 7",
             "try:\n    parse('x')\n    assert False, 'should raise'\nexcept ValueError as e:\n    assert 'x' in str(e)"]
    assert all(plan_test(t).outside for t in tests)
    subclass = "class BadInput(ValueError):\n    pass\ndef parse(s):\n    if not s.isdigit():\n" \
               "        raise BadInput(s)\n    return int(s)\n"  # fmt: skip
    fake = "class ValueError(Exception):\n    pass\ndef parse(s):\n    if not s.isdigit():\n" \
           "        raise ValueError(s)\n    return int(s)\n"  # fmt: skip
    with Sandbox(workers=1) as sb:
        assert sb.run("def parse(s):\n    return int(s)\n", tests).statuses == ["pass"] * 4
        assert sb.run(subclass, tests).statuses == ["pass"] * 4  # caught by its builtin base, as in Python
        assert sb.run("def parse(s):\n    return 0\n", tests).statuses == ["fail", "fail", "fail", "fail"]
        # a class the program named ValueError is not the builtin one: except ValueError does not catch it
        assert sb.run(fake, tests).statuses[:2] == ["error", "error"]


def test_an_attribute_assignment_a_validator_refuses_is_judged_outside():
    """``with pytest.raises(ValueError): iv.low = 2`` (a code_instruct test of a class with validators): the
    assignment is a probe of the try body; a class without the validator fails, in both modes."""
    right = ("class Interval:\n    def __init__(self, low, high):\n        self.low, self.high = low, high\n"
             "    def __setattr__(self, name, value):\n"
             "        if name == 'low' and hasattr(self, 'high') and value > self.high:\n"
             "            raise ValueError('low above high')\n        object.__setattr__(self, name, value)\n")
    wrong = "class Interval:\n    def __init__(self, low, high):\n        self.low, self.high = low, high\n"
    tests = ["import pytest\niv = Interval(0, 1)\nwith pytest.raises(ValueError):\n    iv.low = 2\nassert iv.low == 0",
             "iv = Interval(0, 1)\ntry:\n    iv.low = 2\n    ok = False\nexcept ValueError:\n    ok = True\nassert ok"]
    assert all(plan_test(t).outside for t in tests)
    for mode in ("isolated", "fast"):
        with Sandbox(workers=1, mode=mode) as sb:
            assert sb.run(right, tests).statuses == ["pass", "pass"], mode
            assert sb.run(wrong, tests).statuses == ["fail", "fail"], mode


# Shapes the planner writes out or runs as loops of its own, each judged against plain Python on programs right
# and wrong: walrus, break/continue/else decided while planning or by the judge at run time, itertools, loops over
# the program's values, pytest.raises with match= and `as`, try bodies that run program statements.
CONTROL_FLOW_SHAPES = [
    "assert (n := len(seq(4))) == 4 and n % 2 == 0",
    "assert [y for x in [1, 2, 3] if (y := double(x)) > 2] == [4, 6]",
    "if (r := double(2)) is not None:\n    assert r == 4\nelse:\n    assert False",
    "assert any((hit := double(k)) == 6 for k in range(5)) and hit == 6",
    "assert any((z := v) > 2 for v in seq(5)) and z == 3",  # the walrus binds the judge's z; the program gives v
    "assert [y := v * 2 for v in seq(3)] == [2, 4, 6] and y == 6",
    "for x in [1, 2, 3, 4]:\n    if double(x) > 5:\n        break\n    assert double(x) < 6\nelse:\n    assert False, 'no break'",
    "for x in range(6):\n    if x % 2:\n        continue\n    assert double(x) == 2 * x",
    "for x in range(5):\n    if double(x) % 4 == 0:\n        continue\n    assert double(x) % 4 == 2",
    "for x in (1, 2):\n    assert double(x) == 2 * x\nelse:\n    assert double(0) == 0",
    "hits = 0\nfor x in range(10):\n    if double(x) >= 8:\n        break\n    hits += 1\nassert hits == 4",
    "found = None\nfor a in range(1, 4):\n    for b in range(1, 4):\n        if add(a, b) == 5:\n            found = (a, b)\n"
    "            break\n    if found:\n        break\nassert found == (2, 3)",
    "import itertools\nfor a, b in itertools.combinations([1, 2, 3], 2):\n    assert add(a, b) == a + b",
    "from itertools import permutations\nassert all(add(*p) == sum(p) for p in permutations([1, 5, 7], 2))",
    "for i, (a, b) in enumerate(zip([1, 2], [3, 4])):\n    assert add(a, b) == [4, 6][i]",
    "import itertools\nfor a, b in itertools.product(range(2), repeat=2):\n    if a == b:\n        continue\n    assert add(a, b) == 1",
    "total = 0\nfor v in seq(3):\n    total += v\nassert total == 6",
    "i = 0\nr = seq(3)\nwhile i < len(r):\n    assert r[i] == i + 1\n    i += 1",
    "assert all(w in joined(['ab', 'cd']) for w in ['ab', 'cd'])",
    "words = ['ab', 'cd']\nresult = joined(words)\nassert all(w in result for w in words)",
    "import pytest\nwith pytest.raises(ValueError, match='negative'):\n    root(-1)",
    "import pytest\nwith pytest.raises(ValueError, match=r'^neg[a-z]+ input$'):\n    root(-1)",
    "import pytest\nwith pytest.raises(ValueError) as info:\n    root(-4)\nassert 'negative' in str(info.value)",
    "try:\n    s = Stack()\n    s.pop()\nexcept IndexError:\n    pass\nelse:\n    assert False\nassert s.size() == 0",
    "try:\n    s = Stack()\n    s.push(1)\n    s.pop()\n    s.pop()\n    s.push(9)\nexcept IndexError:\n    pass\n"
    "assert s.size() == 0",
    "def check(r, n):\n    def ok(x):\n        return x >= 0\n    assert ok(r) and r == n * 2\n    return True\n\n"
    "res = double(3)\ncheck(res, 3)",
    # values the judge's own statements build while planning decide how far a loop is written out
    "xs = []\nxs.append(3)\nfor c in xs:\n    assert double(c) == 6",
    "xs = [1]\nfor i in range(2):\n    xs.append(i + 2)\nfor c in xs:\n    assert double(c) == 2 * c",
    "n = 1\nif n:\n    n = 4\nfor i in range(n):\n    assert double(i) == 2 * i",
]  # fmt: skip

_RIGHT = """
class Stack:
    def __init__(self):
        self.items = []
    def push(self, x):
        self.items.append(x)
    def pop(self):
        return self.items.pop()
    def size(self):
        return len(self.items)
def double(x):
    return 2 * x
def add(a, b):
    return a + b
def seq(n):
    return list(range(1, n + 1))
def joined(ws):
    return '-'.join(ws)
def root(x):
    if x < 0:
        raise ValueError('negative input')
    return int(x ** 0.5)
"""
_WRONG = _RIGHT.replace("return 2 * x", "return 2 * x + (x == 3)").replace("return a + b", "return a + b + (a == 2)") \
    .replace("range(1, n + 1)", "range(n)").replace("'-'.join(ws)", "''.join(ws)[:3]") \
    .replace("raise ValueError('negative input')", "raise ValueError('bad input')") \
    .replace("return self.items.pop()", "return self.items.pop() if self.items else self.items.append(0)")  # fmt: skip
_RAISES = _RIGHT.replace("raise ValueError('negative input')", "raise TypeError('negative input')")


def _python_verdicts(program: str, tests: list[str]) -> list[str]:
    """What plain Python answers for each test, run in a fresh namespace after the program (trusted programs)."""
    out = []
    for test in tests:
        namespace: dict = {}
        try:
            exec(compile(program + "\n" + test, "<test>", "exec"), namespace)  # noqa: S102 - our own programs
        except AssertionError:
            out.append("fail")
        except BaseException as err:  # noqa: BLE001
            out.append("fail" if type(err).__name__ == "Failed" else "error")  # pytest.raises: DID NOT RAISE
        else:
            out.append("pass")
    return out


@pytest.mark.parametrize("program", [_RIGHT, _WRONG, _RAISES], ids=["right", "wrong", "raises_other"])
def test_control_flow_shapes_are_judged_outside_and_agree_with_python(program):
    plans = [plan_test(t) for t in CONTROL_FLOW_SHAPES]
    assert [p.reason for p in plans if not p.outside] == []
    want = _python_verdicts(program, CONTROL_FLOW_SHAPES)
    if program is _RIGHT:
        assert want == ["pass"] * len(CONTROL_FLOW_SHAPES)
    else:  # the wrong programs do fail these shapes (the one raising TypeError fails the three raises shapes)
        assert want.count("pass") <= (len(want) // 2 if program is _WRONG else len(want) - 3), want
    for mode in ("isolated", "fast"):
        with Sandbox(workers=1, mode=mode) as sb:
            report = sb.run(program, CONTROL_FLOW_SHAPES)
        got = ["fail" if s == "fail" else s for s in report.statuses]
        # a failed assert and a DID NOT RAISE are both failures; an exception nobody catches is an error
        assert [g == "pass" for g in got] == [w == "pass" for w in want], (mode, list(zip(got, want,
                                                                                         report.messages)))
        assert report.judged == ["outside"] * len(CONTROL_FLOW_SHAPES)


def _generated_tests(seed: int, n: int) -> list[str]:
    """Tests built at random from loops, branches, jumps, walrus, try and raises over pure program functions (a
    class of shapes, not a list the planner was tuned to)."""
    import random

    rng = random.Random(seed)
    lits = ["[1, 2, 3]", "range(4)", "(0, 5, 2)", "[3, -1, 4]", "zip([1, 2], [2, 4])", "enumerate([2, 0, 1])"]
    conds = ["f({v}) > {k}", "g({v}) % 2 == 0", "(w := f({v})) >= {k}", "h({v}) == {v}", "{v} > {k}"]
    checks = ["assert f({v}) == 2 * {v}", "assert g({v}) - 1 == {v}", "assert (y := f({v})) == 2 * {v} and y % 2 == 0",
              "total += f({v})", "assert h(abs({v})) == abs({v})", "seen.append(g({v}))"]

    def body(v: str, depth: int) -> list[str]:
        out = []
        for _ in range(rng.randint(1, 3)):
            roll = rng.random()
            k = rng.randint(-1, 6)
            if roll < 0.25:
                out.append(f"if {rng.choice(conds).format(v=v, k=k)}:")
                out.append("    " + rng.choice(["break", "continue", "assert g({v}) > {v}".format(v=v)]))
            elif roll < 0.35:
                out.append(f"if {rng.choice(conds).format(v=v, k=k)}:")
                out.append("    " + rng.choice(checks).format(v=v))
                out.append("else:")
                out.append("    " + rng.choice(checks).format(v=v))
            elif roll < 0.45 and depth == 0:
                out.append(f"for u in {rng.choice(lits[:4])}:")
                out.extend("    " + line for line in body("u", 1))
            else:
                out.append(rng.choice(checks).format(v=v))
        return out

    tests = []
    for _ in range(n):
        lines = ["total = 0", "seen = []"]
        lit = rng.choice(lits)
        target = "i, x" if lit.startswith(("zip", "enumerate")) else "x"
        if rng.random() < 0.2:
            lines += ["import itertools", "for x, z in itertools.product([0, 1], [2, 3]):"]
            target = None
        else:
            lines.append(f"for {target} in {lit}:")
        lines += ["    " + line for line in body("x", 0)]
        if rng.random() < 0.4:
            lines += ["else:", "    assert total >= 0"]
        if rng.random() < 0.3:
            v = rng.choice([-2, 3])
            lines += ["try:", f"    h({v})", "except ValueError as e:", "    assert 'neg' in str(e)", "else:",
                      f"    assert {v} >= 0, 'h should have raised'"]  # fmt: skip
        lines.append(rng.choice(["assert total >= 0", "assert len(seen) >= 0", "assert seen == sorted(seen) or True"]))
        tests.append("\n".join(lines))
    return tests


_PURE = "def f(x):\n    return 2 * x\ndef g(x):\n    return x + 1\ndef h(x):\n    if x < 0:\n" \
        "        raise ValueError('neg ' + str(x))\n    return x\n"  # fmt: skip
_PURE_WRONG = [_PURE.replace("return 2 * x", "return 2 * x + (x == 2)"),
               _PURE.replace("return x + 1", "return x + 1 if x != 3 else 5"),
               _PURE.replace("raise ValueError('neg ' + str(x))", "return -x")]  # fmt: skip


@pytest.mark.parametrize("program", [_PURE, *_PURE_WRONG], ids=["right", "wrong_f", "wrong_g", "wrong_h"])
def test_generated_control_flow_is_judged_outside_and_agrees_with_python(program):
    tests = _generated_tests(seed=12, n=60)
    plans = [plan_test(t) for t in tests]
    assert sum(p.outside for p in plans) == len(tests), [(p.reason, t) for p, t in zip(plans, tests) if not p.outside]
    want = _python_verdicts(program, tests)
    assert len(set(want)) > 1 or program is _PURE, want  # the wrong programs do fail some of them
    for mode in ("isolated", "fast"):
        with Sandbox(workers=1, mode=mode) as sb:
            report = sb.run(program, tests)
        wrong = [(t, s, w, m) for t, s, w, m in zip(tests, report.statuses, want, report.messages)
                 if (s == "pass") != (w == "pass")]  # fmt: skip
        assert not wrong, (mode, wrong[:3])


def test_a_match_pattern_is_searched_where_a_catastrophic_one_cannot_hang_the_caller():
    program = "def parse(s):\n    raise ValueError(s)\n"
    tests = ["import pytest\nwith pytest.raises(ValueError, match='aaa'):\n    parse('xaaay')",
             "import pytest\nwith pytest.raises(ValueError, match='zzz'):\n    parse('xaaay')",
             "import pytest\nwith pytest.raises(ValueError, match=r'^x(a+)y$'):\n    parse('xaaay')",
             "import pytest\nwith pytest.raises(ValueError, match=r'(a+)+$'):\n    parse('a' * 40 + 'b')"]  # fmt: skip
    assert all(plan_test(t).outside for t in tests)
    assert "zzz" not in plan_test(tests[1]).wire  # the pattern is the judge's, never the sandbox's
    start = time.monotonic()
    with Sandbox(workers=1, timeout_s=0.5) as sb:
        report = sb.run(program, tests)
    assert report.statuses == ["pass", "fail", "pass", "timeout"], report.messages
    assert time.monotonic() - start < 60  # containment, not speed


# Reference solutions (and wrong ones) for the LeetCode problems whose checkers were judged inside before loops over
# the program's values, comprehensions reading them, helpers ending in `return True` and `re` were handled.
_LEETCODE_RIGHT = {
"LeetCode_451": '''
from collections import Counter
class Solution:
    def frequency_sort(self, s):
        c = Counter(s)
        return "".join(ch * k for ch, k in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))
''',
"LeetCode_478": '''
import math, random
class Solution:
    def __init__(self, radius, x_center, y_center):
        self.r, self.x, self.y = radius, x_center, y_center
    def rand_point(self):
        ang = random.uniform(0, 2 * math.pi)
        d = self.r * math.sqrt(random.uniform(0, 1))
        return [self.x + d * math.cos(ang), self.y + d * math.sin(ang)]
''',
"LeetCode_943": '''
class Solution:
    def shortest_superstring(self, words):
        n = len(words)
        ov = [[0] * n for _ in range(n)]
        for i in range(n):
            for j in range(n):
                if i != j:
                    for k in range(min(len(words[i]), len(words[j])), 0, -1):
                        if words[i].endswith(words[j][:k]):
                            ov[i][j] = k
                            break
        dp = [[-1] * n for _ in range(1 << n)]
        par = [[-1] * n for _ in range(1 << n)]
        for i in range(n):
            dp[1 << i][i] = 0
        for mask in range(1 << n):
            for j in range(n):
                if dp[mask][j] < 0:
                    continue
                for k in range(n):
                    if mask & (1 << k):
                        continue
                    v = dp[mask][j] + ov[j][k]
                    if v > dp[mask | (1 << k)][k]:
                        dp[mask | (1 << k)][k] = v
                        par[mask | (1 << k)][k] = j
        full = (1 << n) - 1
        last = max(range(n), key=lambda j: dp[full][j])
        order, mask = [], full
        while last != -1:
            order.append(last)
            prev = par[mask][last]
            mask ^= 1 << last
            last = prev
        order.reverse()
        out = words[order[0]]
        for a, b in zip(order, order[1:]):
            out += words[b][ov[a][b]:]
        return out
''',
"LeetCode_1092": '''
class Solution:
    def shortest_common_supersequence(self, a, b):
        m, n = len(a), len(b)
        dp = [[""] * (n + 1) for _ in range(m + 1)]
        for i in range(m + 1):
            for j in range(n + 1):
                if i == 0:
                    dp[i][j] = b[:j]
                elif j == 0:
                    dp[i][j] = a[:i]
                elif a[i - 1] == b[j - 1]:
                    dp[i][j] = dp[i - 1][j - 1] + a[i - 1]
                else:
                    x, y = dp[i - 1][j] + a[i - 1], dp[i][j - 1] + b[j - 1]
                    dp[i][j] = x if len(x) <= len(y) else y
        return dp[m][n]
''',
"LeetCode_1405": '''
import heapq
class Solution:
    def longest_happy_string(self, a, b, c):
        heap = [(-k, ch) for k, ch in ((a, "a"), (b, "b"), (c, "c")) if k]
        heapq.heapify(heap)
        res = []
        while heap:
            k, ch = heapq.heappop(heap)
            if len(res) >= 2 and res[-1] == res[-2] == ch:
                if not heap:
                    break
                k2, ch2 = heapq.heappop(heap)
                res.append(ch2)
                if k2 + 1:
                    heapq.heappush(heap, (k2 + 1, ch2))
                heapq.heappush(heap, (k, ch))
            else:
                res.append(ch)
                if k + 1:
                    heapq.heappush(heap, (k + 1, ch))
        return "".join(res)
''',
}
_LEETCODE_WRONG = {
    "LeetCode_451": _LEETCODE_RIGHT["LeetCode_451"].replace("(-kv[1], kv[0])", "(kv[1], kv[0])"),
    "LeetCode_478": _LEETCODE_RIGHT["LeetCode_478"].replace("math.sqrt(random.uniform(0, 1))", "random.uniform(0, 1)"),
    "LeetCode_943": _LEETCODE_RIGHT["LeetCode_943"].replace("return out", "return out[:-1]"),
    "LeetCode_1092": _LEETCODE_RIGHT["LeetCode_1092"].replace("return dp[m][n]", "return dp[m][n] + 'z'"),
    "LeetCode_1405": _LEETCODE_RIGHT["LeetCode_1405"].replace(
        "if not heap:\n                    break", "if not heap:\n                    res.append(ch)\n                    break"),
}


@pytest.mark.slow
def test_leetcode_checkers_now_judged_outside_agree_with_python():
    from evolvecoder_datasets.sources import load_leetcode

    rows = {r["id"]: r for r in load_leetcode() if r["id"] in _LEETCODE_RIGHT}
    assert len(rows) == len(_LEETCODE_RIGHT)
    with Sandbox(workers=1, mode="fast", timeout_s=5) as sb:
        for pid, row in rows.items():
            tests = list(row["tests"])
            assert all(plan_test(t).outside for t in tests), pid
            for program in (_LEETCODE_RIGHT[pid], _LEETCODE_WRONG[pid]):
                want = _python_verdicts(program, tests)
                report = sb.run(program, tests)
                assert [s == "pass" for s in report.statuses] == [w == "pass" for w in want], (pid, report.messages)
            assert want.count("pass") < len(tests), pid  # the wrong solution fails some
