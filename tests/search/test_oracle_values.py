"""The oracle's reads of the reference (which candidates are usable, their values): many to a stdin case."""

from __future__ import annotations

import pytest

from evolvecoder_datasets.execution import Sandbox
from evolvecoder_datasets.limits import SandboxSettings
from evolvecoder_datasets.search.oracle_values import read_reference_values, read_usable
from evolvecoder_datasets.search.probes import ProbeProgram


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(workers=2, mode="fast", timeout_s=1.0) as sb:
        yield sb


def test_values_come_back_in_order_many_to_a_case(sandbox):
    probe = ProbeProgram("def f(x):\n    return [x, str(x) * 2, x / 4]\n", "f", [(k,) for k in range(150)])
    lines, cases = read_reference_values(sandbox, probe, list(range(150)), max_chars=100)
    assert lines == [repr([k, str(k) * 2, k / 4]) for k in range(150)]
    assert cases == 3                                                # 64 a case, not ~8 verdicts a byte


def test_what_the_reference_prints_itself_never_becomes_a_value(sandbox):
    ref = "print('loading')\ndef f(x):\n    print('noise', x)\n    return x + 1\n"
    probe = ProbeProgram(ref, "f", [(1,), (2,)])
    assert read_reference_values(sandbox, probe, [0, 1], max_chars=20)[0] == ["2", "3"]


def test_a_slow_reference_is_read_over_more_cases_not_lost(sandbox):
    ref = "def f(x):\n    s = 0\n    for i in range(300000):\n        s += i\n    return x\n"   # ~20-50 ms a call
    probe = ProbeProgram(ref, "f", [(k,) for k in range(40)])
    lines, cases = read_reference_values(sandbox, probe, list(range(40)), max_chars=10, timeout_s=0.5)
    assert lines == [str(k) for k in range(40)] and cases >= 2      # each case stops at half its CPU limit


def test_a_value_the_reference_cannot_give_fails_the_read(sandbox):
    probe = ProbeProgram("def f(x):\n    return 1 // x\n", "f", [(1,), (0,)])
    assert read_reference_values(sandbox, probe, [0, 1], max_chars=10)[0] is None
    assert read_reference_values(sandbox, probe, [0], max_chars=10)[0] == ["1"]
    long = ProbeProgram("def f(x):\n    return 'a' * x\n", "f", [(50,)])
    assert read_reference_values(sandbox, long, [0], max_chars=10)[0] is None   # longer than max_chars


def test_usable_inputs_are_those_the_reference_answers_plainly_and_quickly(sandbox):
    ref = ("def f(x):\n    if x == 3:\n        while True:\n            pass\n    if x == 4:\n        return object()\n"
           "    return 1 // x\n")
    probe = ProbeProgram(ref, "f", [(k,) for k in range(6)], cpu_s=0.05, cheaper_call=True)
    usable, cases = read_usable(sandbox, probe, 6)
    assert sorted(usable) == [1, 2, 5] and cases >= 1                # 0 raises, 3 hangs (its own alarm), 4 not data
    assert all(0 <= seconds < 0.05 for seconds in usable.values())  # the reference's CPU on each, measured


def test_oracle_asserts_join_into_groups_within_the_references_cpu():
    from evolvecoder_datasets.search.oracle import FidelityConfig, _chunks, _joined

    config = FidelityConfig(batch=3, cpu_s=0.1)
    assert _chunks([0.0] * 7, 7, config) == [[0, 1, 2], [3, 4, 5], [6]]           # at most batch a group
    assert _chunks([0.06, 0.06, 0.01, 0.2], 4, config) == [[0], [1, 2], [3]]       # within cpu_s of the reference
    assert _chunks([], 2, config) == [[0], [1]]                                    # unknown cost: alone
    assert _joined(["assert f(1) == 2", "assert abs(g() - 0.5) <= 1e-06"], [0, 1]) == \
        "assert (f(1) == 2) and (abs(g() - 0.5) <= 1e-06)"


def test_grouped_labels_are_the_labels_of_one_assert_a_test(sandbox):
    """The same oracle labels the same programs whether its asserts are judged one a test or 32 a test (the judge
    decides every group outside), at a fraction of the tests."""
    from evolvecoder_datasets.execution.sandbox import local_counts
    from evolvecoder_datasets.search.oracle import FidelityConfig, OracleProblem, build_oracles, label_programs

    ref = "def clip(xs, lo):\n    return [x if x >= lo else lo for x in xs]\n"
    programs = [ref, ref.replace("x >= lo", "x > lo + 1"), ref.replace("else lo", "else lo + 1"),
                "def clip(xs, lo):\n    return [max(x, lo) for x in xs]\n",
                "def clip(xs, lo):\n    while len(xs) > 3:\n        pass\n    return [max(x, lo) for x in xs]\n"]
    [oracle] = build_oracles([OracleProblem("P_9", ref, ["assert clip([1, 5, 3], 2) == [2, 5, 3]"])],
                             FidelityConfig(inputs=80, candidates=200), sandbox=sandbox)
    assert oracle.available and len(oracle.cpu) == len(oracle.tests)
    before = local_counts()["tests"]
    limited = SandboxSettings(mode="fast", timeout_s=0.5)
    grouped = label_programs([oracle], [programs], FidelityConfig(sandbox=limited), sandbox=sandbox)[0]
    middle = local_counts()["tests"]
    single = label_programs([oracle], [programs], FidelityConfig(sandbox=limited, batch=1), sandbox=sandbox)[0]
    after = local_counts()["tests"]
    assert grouped.tolist() == single.tolist() == [1, 0, 0, 1, 0]
    assert (middle - before) * 8 < after - middle


def test_a_reference_spending_its_time_in_the_kernel_is_cut_by_its_own_alarm_not_the_case_limit(sandbox):
    """The usability alarm counts system time too, as the sandbox's limit does. Seen on HumanEval/55: ``fib(120)``'s
    recursion hovered at a boundary of CPython's frame stack chunks and spent 1.5 s in the kernel (a chunk mapped
    and unmapped per call) under a 0.3 s user-time alarm, so its whole stdin case timed out, every later index was
    asked one a case, and that one oracle took 27 s. Here the reference's slow inputs ask the kernel for random
    bytes without end (nearly all system time)."""
    ref = "import os\ndef f(x):\n    while x > 2:\n        os.urandom(1 << 16)\n    return x\n"
    probe = ProbeProgram(ref, "f", [(k,) for k in range(8)], cpu_s=0.05, cheaper_call=True)
    usable, cases = read_usable(sandbox, probe, 8)
    assert sorted(usable) == [0, 1, 2]
    assert cases <= 2  # the slow inputs cost their alarms inside the case; no case timed out and was asked again
