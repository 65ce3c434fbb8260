"""The search's probes under calibrated limits, and the one usability test the search and the oracle share."""

from __future__ import annotations

import math

import pytest

from evolvecoder_datasets.execution import Job, Sandbox
from evolvecoder_datasets.stages.search import SearchConfig, SearchProblem, probe_timeouts, search_tests
from evolvecoder_datasets.stages.search_probes import ProbeProgram, run_probe

# right everywhere; on x > 10 it burns 0.3 s of CPU first: within the fixed 1 s, not a calibrated 0.1 s
CLAMP = "def clamp(x):\n    return max(0, min(x, 10))\n"
CLAMP_SLOW_ABOVE = (
    "import time\n"
    "def clamp(x):\n"
    "    if x > 10:\n"
    "        end = time.process_time() + 0.3\n"
    "        while time.process_time() < end:\n"
    "            pass\n"
    "    return max(0, min(x, 10))\n"
)


@pytest.fixture(scope="module")
def sb():
    with Sandbox(workers=1, mode="fast", timeout_s=1.0, max_consecutive_timeouts=2) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def isolated():
    with Sandbox(workers=1, mode="isolated", timeout_s=1.0) as sandbox:
        yield sandbox


class Recorder:
    """A sandbox that remembers the per-test limit of every job it ran."""

    def __init__(self, sandbox):
        self.sandbox, self.workers, self.limits = sandbox, 1, []

    def run(self, program, tests):
        self.limits.append(("run", None, tests[0] if tests else ""))
        return self.sandbox.run(program, tests)

    def run_many(self, jobs):
        jobs = [j if isinstance(j, Job) else Job(j[0], tests=list(j[1])) for j in jobs]
        self.limits += [("job", j.timeout_s, (j.tests or [""])[0]) for j in jobs]
        return self.sandbox.run_many(jobs)


def test_an_input_the_reference_never_finishes_is_dropped_by_its_alarm_not_a_timeout(sb):
    looper = "def f(n):\n    while n > 5:\n        pass\n    return n\n"
    probe = ProbeProgram(looper, "f", [(1,), (9,), (8,), (2,), (3,)])
    report = run_probe(sb, probe.program(), probe.usable_tests(), timeout_s=probe.reference_timeout())
    # two loopers in a row would have ended the run as sandbox timeouts; here they are plain "not usable"
    assert report.statuses == ["pass", "fail", "fail", "pass", "pass"]


def test_the_search_lets_the_first_call_decide_the_oracle_the_cheaper_and_only_the_oracle_nests_floats(sb):
    # the first call on an input burns 0.15 s of CPU, the second is instant
    slow_first = (
        "import time\n_seen = set()\n"
        "def f(x):\n"
        "    if x not in _seen:\n"
        "        _seen.add(x)\n"
        "        end = time.process_time() + 0.15\n"
        "        while time.process_time() < end:\n"
        "            pass\n"
        "    return x\n"
    )
    search = ProbeProgram(slow_first, "f", [(1,)], cpu_s=0.1)
    oracle = ProbeProgram(slow_first, "f", [(1,)], cpu_s=0.1, cheaper_call=True)
    assert sb.run(search.program(), search.usable_tests()).statuses == ["fail"]
    assert sb.run(oracle.program(), oracle.usable_tests()).statuses == ["pass"]
    nested = "def g(x):\n    return [x / 4, {'k': 0.5}]\n"
    for nested_floats, expected in ((False, ["fail"]), (True, ["pass"])):
        probe = ProbeProgram(nested, "g", [(1,)], nested_floats=nested_floats)
        assert sb.run(probe.program(), probe.usable_tests()).statuses == expected
    top = ProbeProgram("def h(x):\n    return x / 4\n", "h", [(1,)])
    assert sb.run(top.program(), top.usable_tests()).statuses == ["pass"]  # a top-level float either way


def test_probe_limits_follow_the_calibrated_limit_and_stay_under_the_ceiling():
    config = SearchConfig(cpu_s=0.05, timeout_s=1.0)
    problem = lambda limit: SearchProblem("P", "x = 1", [], [], [], limit=limit)
    assert probe_timeouts(problem(0.1), config) == (0.2, 0.15)
    assert probe_timeouts(problem(2.5), config) == (0.2, 1.0)  # the ceiling
    for missing in (None, math.nan, 0.0):
        assert probe_timeouts(problem(missing), config) == (0.2, 1.0)  # the fixed limit, as the pool's
    assert probe_timeouts(problem(0.1), SearchConfig(cpu_s=0.3, timeout_s=0.5)) == (0.5, 0.4)


def test_a_target_slower_than_the_calibrated_limit_is_killed_as_the_pool_run_will_judge_it(sb, isolated):
    seed = ["assert clamp(5) == 5"]

    def search(limit):
        recorder = Recorder(sb)
        problem = SearchProblem("P_1", CLAMP, seed, [CLAMP_SLOW_ABOVE], [[True]], limit=limit)
        config = SearchConfig(seed=0, budget=200, retire_after=4, structure_edits=0)
        [result] = search_tests([problem], config, sandbox=recorder)
        return result, recorder.limits

    flat, flat_limits = search(None)
    assert flat.killed == 0 and flat.tests == []  # at 1 s it returns the right value: nothing to kill
    timed, limits = search(0.1)
    assert timed.killed == 1 and timed.tests
    # reference-only probes at 4 x cpu_s, the target's under its limit plus the reference's share
    kinds = {(kind, limit, test.split("(")[0]) for kind, limit, test in limits}
    assert ("job", 0.4, "assert _ecd_usable") in kinds and ("job", 0.2, "assert _ecd_first") in kinds
    assert all(limit in (0.4, 0.2) for kind, limit, test in limits if test.startswith("assert _ecd"))
    assert {limit for kind, limit, test in flat_limits if test.startswith("assert _ecd_first")} == {1.0}
    # what the execute stage then sees, under the problem's limit: the reference passes, the slow target does not
    reference, target = isolated.run_many([Job(CLAMP, tests=timed.tests, timeout_s=0.1),
                                           Job(CLAMP_SLOW_ABOVE, tests=timed.tests, timeout_s=0.1)])
    assert all(reference.passed) and "timeout" in target.statuses
