"""The search test writer: calls recovered from asserts, typed mutation, values read through verdicts, real sandbox;
its probes under calibrated limits and the usability test it shares with the oracle."""

from __future__ import annotations

import dataclasses
import math

import pytest

from evolvecoder_datasets.errors import ConfigError
from evolvecoder_datasets.execution import Job, Sandbox
from evolvecoder_datasets.limits import SandboxSettings
from evolvecoder_datasets.search.domain import Domain
from evolvecoder_datasets.search.inputs import InputMutator, recover_call
from evolvecoder_datasets.search.probes import ProbeProgram, read_values, run_probe
from evolvecoder_datasets.search.writer import SearchConfig, SearchProblem, probe_timeouts, search_tests

CLAMP = "def clamp(x):\n    return max(0, min(x, 10))\n"
CLAMP_NO_TOP = "def clamp(x):\n    return max(0, x)\n"  # right on the seed, wrong above 10
CLAMP_NO_BOTTOM = "def clamp(x):\n    return min(x, 10)\n"  # right on the seed, wrong below 0
CLAMP_EQUIVALENT = "def clamp(x):\n    return sorted([0, x, 10])[1]\n"


# clamp is defined on every int (its one seed alone shows only positive ones)
INTS = Domain("statement", contract="def precondition(x):\n    return type(x) is int")


@pytest.fixture(scope="module")
def sb():
    with Sandbox(workers=1, mode="fast", timeout_s=1.0, max_consecutive_timeouts=2) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def isolated():
    with Sandbox(workers=1, mode="isolated", timeout_s=1.0) as sandbox:
        yield sandbox


def test_recover_call_finds_the_most_called_function_and_its_literal_arguments():
    tests = [
        "assert f([1, 2], 'a') == 3",
        "assert f([], '') == 0",
        "assert abs(g(1.5) - 2) < 1e-6",
        "assert f(x, 'a') == 1",  # a name, not a literal: not a seed
        "assert f([1, 2], 'a') == 3",  # repeated seed
    ]
    shape = recover_call(tests)
    assert shape.callee == "f" and shape.arity == 2
    assert shape.seeds == (([1, 2], "a"), ([], ""))
    assert recover_call(tests, defined={"g"}).callee == "g"
    assert recover_call(["assert len([1]) == 1", "assert f(k=1) == 2"]) is None  # builtins and keywords only


def test_recover_call_reads_leetcode_method_calls():
    shape = recover_call(["assert Solution().two_sum([2, 7, 11], 9) == [0, 1]"], defined={"Solution"})
    assert shape.callee == "Solution().two_sum" and shape.seeds == (([2, 7, 11], 9),)


def test_mutator_is_reproducible_and_covers_boundaries_and_collection_shapes():
    seeds = [([3, 1, 2], "abc", 4)]
    a, b = InputMutator(seeds, seed=7), InputMutator(seeds, seed=7)
    first = [a.candidate() for _ in range(400)]
    assert first == [b.candidate() for _ in range(400)]
    lists = [c[0] for c in first]
    assert [] in lists and any(len(x) == 1 for x in lists) and any(len(x) >= 20 for x in lists)
    assert any(len(set(x)) < len(x) for x in lists)  # duplicates
    assert any(x == sorted(x) and len(x) > 1 for x in lists)  # order
    texts = [c[1] for c in first]
    assert "" in texts and any(not t.isascii() for t in texts)  # unicode, off the seeds' domain at times
    ints = [c[2] for c in first]
    assert 0 in ints and 1 in ints
    assert all(type(c[0]) is list and type(c[1]) is str and type(c[2]) is int for c in first)  # types kept
    assert sum(i < 0 for i in ints) < len(ints) // 4  # non-negative seeds: negatives only when exploring


def test_read_values_returns_exact_literals_through_verdicts(sb):
    reference = "def f(x):\n    return x\n"
    values = [("É漢😀\n",), ([1, (2, "b"), {"k": None}],), (2.5,), (-(10**30),), (True,), (b"\x00\xff",)]
    probe = ProbeProgram(reference, "f", values)
    read = read_values(sb, probe, range(len(values)))
    assert [text for _, text in read] == [repr(v[0]) for v in values]


def test_usable_rejects_values_a_literal_cannot_hold_and_nondeterminism(sb):
    reference = (
        "import random\n"
        "class Box:\n    pass\n"
        "def f(k):\n"
        "    return [1, float('nan'), set(), Box(), random.random(), [0.5], 'ok', {1, 2}][k]\n"
    )
    probe = ProbeProgram(reference, "f", [(k,) for k in range(8)])
    usable = sb.run(probe.program(), probe.usable_tests()).passed
    # nan, an object, a random value and a float inside a list are not usable (`set()` reads back: it is)
    assert usable == [True, False, True, False, False, False, True, True]


def test_search_kills_survivors_and_every_test_passes_the_reference_in_a_separate_run(sb, isolated):
    pool = [CLAMP_NO_TOP, CLAMP_NO_BOTTOM, CLAMP_EQUIVALENT]
    problem = SearchProblem("T_1", CLAMP, ["assert clamp(5) == 5"], pool, [[True], [True], [True]], domain=INTS)
    [result] = search_tests([problem], SearchConfig(seed=1), sandbox=sb)
    assert result.reason is None and result.survivors == 3
    assert result.killed == 2  # the equivalent program cannot be killed
    assert all(t.startswith("assert clamp(") for t in result.tests)
    assert isolated.run(CLAMP, result.tests).all_passed
    M = isolated.pass_matrix(pool, result.tests)
    assert not M[0].all() and not M[1].all() and M[2].all()


def test_search_is_reproducible_from_its_seed(sb):
    def run(seed):
        problem = SearchProblem("T_2", CLAMP, ["assert clamp(5) == 5"], [CLAMP_NO_TOP, CLAMP_NO_BOTTOM],
                                [[True], [True]])
        return search_tests([problem], SearchConfig(seed=seed), sandbox=sb)[0].tests

    assert run(3) == run(3)


def test_search_splits_programs_the_suite_cannot_tell_apart(sb):
    reference = "def sign(x):\n    return (x > 0) - (x < 0)\n"
    a = "def sign(x):\n    return 1 if x > 0 else 0\n"  # wrong below zero
    b = "def sign(x):\n    return 1 if x >= 0 else -1\n"  # wrong at zero
    tests = ["assert sign(3) == 1", "assert sign(0) == 0", "assert sign(-2) == -1"]
    # a fails the negative test, b the zero test; pretend the suite saw them alike, failing the last test
    problem = SearchProblem("T_3", reference, tests, [a, a + "\n", b], [[True, True, False]] * 3)
    [result] = search_tests([problem], SearchConfig(seed=0, max_tests=2), sandbox=sb)
    assert result.survivors == 0 and result.targets == 3 and result.splits >= 1


def test_problems_the_search_cannot_serve_say_why(sb):
    problems = [
        SearchProblem("N_1", None, ["assert f(1) == 1"], ["def f(x):\n    return x"], [[True]]),
        SearchProblem("N_2", CLAMP, ["x = 4\nassert clamp(x) == 4"], [CLAMP_NO_TOP], [[True]]),
        SearchProblem("N_3", CLAMP, ["assert clamp(5) == 5"], ["def clamp(x):\n    return 0"], [[False]]),
    ]
    reasons = [r.reason for r in search_tests(problems, SearchConfig(), sandbox=sb)]
    assert reasons == ["no_reference", "no_literal_call", "nothing_to_target"]


def test_a_hostile_program_under_test_cannot_plant_a_wrong_expected_value(sb, isolated):
    hostile = (
        "import builtins\n"
        "builtins.repr = lambda value: '0'\n"
        "builtins.max = lambda *a, **k: 0\n"
        "def clamp(x):\n    return max(0, x)\n"
    )
    problem = SearchProblem("T_4", CLAMP, ["assert clamp(5) == 5"], [hostile, CLAMP_NO_TOP], [[True], [True]])
    [result] = search_tests([problem], SearchConfig(seed=0), sandbox=sb)
    assert result.tests and isolated.run(CLAMP, result.tests).all_passed


def test_random_objective_keeps_usable_inputs_within_its_budget(sb):
    problem = SearchProblem("T_5", CLAMP, ["assert clamp(5) == 5"], [CLAMP_NO_TOP] * 4, [[True]] * 4, budget=50)
    [result] = search_tests([problem], SearchConfig(objective="random", max_tests=1000), sandbox=sb)
    assert result.executions <= 50 and len(result.tests) >= 5
    assert sb.run(CLAMP, result.tests).all_passed


def test_config_refuses_bad_values():
    with pytest.raises(ConfigError):
        SearchConfig(budget=0)
    with pytest.raises(ConfigError):
        SearchConfig(objective="greedy")
    with pytest.raises(ConfigError):
        SearchConfig(cpu_s=2.0, sandbox=SandboxSettings(timeout_s=1.0))
    with pytest.raises(ConfigError):
        SearchConfig(sandbox=SandboxSettings(mode="greedy"))


def test_constants_of_the_reference_reach_boundaries_written_inside_strings(sb):
    reference = (
        "def day_ok(s):\n"
        "    month, day = map(int, s.split('-'))\n"
        "    return 1 <= month <= 12 and 1 <= day <= (30 if month in (4, 6, 9, 11) else 31)\n"
    )
    mutant = reference.replace("<= 12", "<= 13")  # wrong only in a 13th month
    problem = SearchProblem("T_6", reference, ["assert day_ok('01-15') == True"], [mutant], [[True]])
    [result] = search_tests([problem], SearchConfig(seed=0), sandbox=sb)
    assert result.killed == 1 and result.tests
    assert not sb.run(mutant, result.tests).all_passed and sb.run(reference, result.tests).all_passed


def test_a_survivor_is_asked_only_until_it_first_disagrees(sb, isolated):
    probe = ProbeProgram(CLAMP, "clamp", [(5,), (20,), (7,), (30,)])
    # fast mode: one process asks in order; after the first disagreement the program is not called again
    assert sb.run(probe.program(CLAMP_NO_TOP), probe.first_tests()).statuses == ["pass", "fail", "error", "error"]
    # a program that raises disagrees (the probe answers False) instead of erroring
    raising = "def clamp(x):\n    if x > 10:\n        raise ValueError(x)\n    return max(0, x)\n"
    assert sb.run(probe.program(raising), probe.first_tests()).statuses == ["pass", "fail", "error", "error"]
    # isolated mode: every question in its own process, so every one is asked
    assert isolated.run(probe.program(CLAMP_NO_TOP), probe.first_tests()).statuses == ["pass", "fail", "pass", "fail"]


def test_an_equivalent_survivor_is_retired_instead_of_eating_the_budget(sb):
    def run(retire_after):
        problem = SearchProblem("T_6", CLAMP, ["assert clamp(5) == 5"], [CLAMP_EQUIVALENT, CLAMP_NO_TOP],
                                [[True], [True]])
        return search_tests([problem], SearchConfig(seed=0, retire_after=retire_after, budget=2000), sandbox=sb)[0]

    quick, patient = run(6), run(1000)
    assert quick.killed == patient.killed == 1
    assert quick.retired == 1 and patient.retired == 0
    # the equivalent program ran on at most retire_after inputs plus one generation; the patient search kept going
    assert quick.executions < patient.executions


# The probes under calibrated limits (issue 22). Right everywhere; on x > 10 it burns 0.3 s of CPU first: within
# the fixed 1 s, not within a calibrated 0.1 s.
CLAMP_SLOW_ABOVE = (
    "import time\n"
    "def clamp(x):\n"
    "    if x > 10:\n"
    "        end = time.process_time() + 0.3\n"
    "        while time.process_time() < end:\n"
    "            pass\n"
    "    return max(0, min(x, 10))\n"
)


class Recorder:
    """A sandbox that remembers the per-test limit of every job it ran."""

    def __init__(self, sandbox):
        # one problem at a time: the sandbox's settings with one worker
        self.sandbox, self.settings, self.limits = sandbox, dataclasses.replace(sandbox.settings, workers=1), []

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
    config = SearchConfig(cpu_s=0.05, sandbox=SandboxSettings(mode="fast", timeout_s=1.0))
    problem = lambda limit: SearchProblem("P", "x = 1", [], [], [], limit=limit)
    assert probe_timeouts(problem(0.1), config) == (0.2, 0.15)
    assert probe_timeouts(problem(2.5), config) == (0.2, 1.0)  # the ceiling
    for missing in (None, math.nan, 0.0):
        assert probe_timeouts(problem(missing), config) == (0.2, 1.0)  # the fixed limit, as the pool's
    assert probe_timeouts(problem(0.1), SearchConfig(cpu_s=0.3, sandbox=SandboxSettings(mode="fast", timeout_s=0.5))) == (0.5, 0.4)


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
