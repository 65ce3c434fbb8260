"""Expected sides never run where the program is (issue 23), and lying subclasses keep their real type.

A test that computes its expected value with code the judge's language does not cover (a stdlib helper such as
``heapq``, a nested ``def``, a class, ``bytearray(...)``, a ``while`` loop, an ``@lru_cache`` helper) used to send
that part to the sandbox as a probe: the program, having patched ``heapq`` or ``sorted`` in its own process, decided
the expected value, while the report said ``judged: outside``. Those parts now run in a fresh sandbox process that
executed only the test's own statements. The liar below patches every such piece in its process and returns a wrong
answer that its patched pieces would agree with; it must fail every test, the right program pass every one, in both
modes, and every report must say ``outside`` (so the check can fail either way).
"""

from __future__ import annotations

import pytest

from evolvecoder_datasets.execution.judge import plan_test

from .conftest import sandbox_per_mode

RIGHT = "def f(n):\n    return sorted([5, 3, 9, 1])[:n]\n"
# Patches what the tests' expected sides use, so that they would all say [42, ...] in this process.
LIAR = """
import builtins, functools, heapq
heapq.nsmallest = lambda n, xs, *a, **k: [42] * n
_sorted = builtins.sorted
builtins.sorted = lambda xs, *a, **k: [42] * 4
class _Any(list):
    def __eq__(self, other): return True
    __hash__ = None
builtins.bytearray = lambda *a: _Any()
_cache = functools.lru_cache
functools.lru_cache = lambda *a, **k: (lambda fn: (lambda n: [42] * n))
def f(n):
    return [42] * n
"""

TESTS = {
    "stdlib_helper": "import heapq\nassert f(2) == heapq.nsmallest(2, [5, 3, 9, 1])",
    "nested_def": ("def ref(n):\n    def inner(k):\n        return sorted([5, 3, 9, 1])[:k]\n    return inner(n)\n"
                   "assert f(2) == ref(2)"),
    "class": "class R:\n    def go(self, n):\n        return sorted([5, 3, 9, 1])[:n]\nassert f(3) == R().go(3)",
    "bytearray": "assert f(2) == list(bytearray(b'\\x01\\x03'))",
    "while_loop": "xs, i = [], 0\nwhile i < 1500:\n    i += 1\nxs = sorted([5, 3, 9, 1])[:2]\nassert f(2) == xs",
    "lru_cache_helper": ("from functools import lru_cache\n@lru_cache(maxsize=None)\ndef ref(n):\n"
                         "    return sorted([5, 3, 9, 1])[:n]\nassert f(2) == ref(2)"),
    "helper_of_a_helper": ("import heapq\ndef low(xs, n):\n    return heapq.nsmallest(n, xs)\n"
                           "def ref(n):\n    return low([5, 3, 9, 1], n)\nassert f(3) == ref(3)"),
}
RIGHT_FAILS: set[str] = set()  # (none: every right answer here passes)


sandbox = sandbox_per_mode(workers=2, timeout_s=2.0)


def test_every_test_here_is_split_and_probes_only_the_programs_call():
    for name, test in TESTS.items():
        plan = plan_test(test)
        assert plan.outside, (name, plan.reason)
        probes = [code for kind, code in plan.steps if kind == "p"]
        assert probes and all(code.startswith("f(") for code in probes), (name, plan.steps)


@pytest.mark.parametrize("name", sorted(TESTS))
def test_an_expected_side_the_judge_cannot_evaluate_is_not_the_programs_to_decide(sandbox, name):
    right = sandbox.run(RIGHT, [TESTS[name]])
    liar = sandbox.run(LIAR, [TESTS[name]])
    assert right.statuses == (["fail"] if name in RIGHT_FAILS else ["pass"]), (name, right)
    assert liar.statuses == ["fail"], (name, liar)
    assert right.judged == liar.judged == ["outside"]


SUBCLASSES = {
    "int_subclass_with_fields": "class I(int):\n    _fields = ('a',)\n    def __eq__(s, o): return True\n"
                                "    __hash__ = int.__hash__\ndef f():\n    return I(3)\n",
    "metaclass_lies_about_flags": "class M(type):\n    @property\n    def __flags__(cls): return int.__flags__\n"
                                  "class I(int, metaclass=M):\n    pass\ndef f():\n    return I(3)\n",
    "str_subclass_with_fields": "class S(str):\n    _fields = ()\ndef f():\n    return S('3')\n",
    "tuple_subclass_with_wrong_fields": "class T(tuple):\n    _fields = 5\ndef f():\n    return T((3,))\n",
}


@pytest.mark.parametrize("name", sorted(SUBCLASSES))
def test_a_lying_subclass_travels_with_its_real_type(sandbox, name):
    base = {"int": "int", "str": "str", "tup": "tuple", "met": "int"}[name[:3]]
    report = sandbox.run(SUBCLASSES[name], [f"assert type(f()) is {base}", f"assert isinstance(f(), {base})"])
    assert report.statuses == ["fail", "pass"], (name, report)


def test_a_named_tuple_is_still_a_named_tuple(sandbox):
    program = "from collections import namedtuple\nP = namedtuple('P', 'x y')\ndef f():\n    return P(1, 2)\n"
    report = sandbox.run(program, ["assert f() == (1, 2)", "assert f().x == 1", "assert f().y == 3"])
    assert report.statuses == ["pass", "pass", "fail"], report
