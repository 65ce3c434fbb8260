"""The oracle: reference-valued inputs kept apart from the suite, labelling programs right or wrong in the sandbox."""

from __future__ import annotations

import pytest

from evolvecoder_datasets.errors import ConfigError
from evolvecoder_datasets.execution import Sandbox
from evolvecoder_datasets.limits import SandboxSettings
from evolvecoder_datasets.search.domain import Domain, infer_domain
from evolvecoder_datasets.search.inputs import InputMutator
from evolvecoder_datasets.search.oracle import (
    FidelityConfig,
    OracleProblem,
    _scaled,
    build_oracles,
    label_programs,
)

REF = "def count_max(xs):\n    m = max(xs)\n    return sum(1 for x in xs if x == m)\n"
TESTS = ["assert count_max([1, 2, 3]) == 1", "assert count_max([5, 4]) == 1"]
# the statement's domain: a non-empty list of ints (the two seeds alone show only positive ones)
LIST_OF_INTS = Domain("statement", contract="def precondition(xs):\n"
                      "    return type(xs) is list and len(xs) > 0 and all(type(x) is int for x in xs)")


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(workers=2, mode="fast", timeout_s=1.0) as sb:
        yield sb


def test_the_oracle_finds_what_the_seed_asserts_miss_ties_and_long_lists(sandbox):
    [oracle] = build_oracles([OracleProblem("P_1", REF, TESTS, domain=LIST_OF_INTS)],
                             FidelityConfig(inputs=60, candidates=150, cheap_bytes=0), sandbox=sandbox)
    assert oracle.reason is None and 20 <= len(oracle.tests) <= 60
    assert all(t.startswith("assert count_max(") for t in oracle.tests)
    programs = [
        REF,
        "def count_max(xs):\n    return 1\n",                               # wrong only on ties
        "def count_max(xs):\n    return xs.count(max(xs))\n",               # right, another shape
        "def count_max(xs):\n    return xs[:6].count(max(xs))\n",          # wrong past six elements
    ]
    [labels] = label_programs([oracle], [programs], sandbox=sandbox)
    assert labels.tolist() == [1, 0, 1, 0]


def test_a_program_whose_value_claims_to_equal_everything_is_wrong(sandbox):
    [oracle] = build_oracles([OracleProblem("P_2", REF, TESTS)], FidelityConfig(inputs=20, candidates=60),
                             sandbox=sandbox)
    liar = ("class Any:\n    def __eq__(self, other):\n        return True\n    __hash__ = None\n"
            "def count_max(xs):\n    return Any()\n")
    looper = "def count_max(xs):\n    while True:\n        pass\n"
    limited = FidelityConfig(sandbox=SandboxSettings(mode="fast", timeout_s=0.5), cpu_s=0.1)
    [labels] = label_programs([oracle], [[liar, looper]], limited, sandbox=sandbox)
    assert labels.tolist() == [0, 0]


def test_floats_are_valued_with_the_shared_tolerance(sandbox):
    ref = "def mean(xs):\n    return sum(xs) / len(xs)\n"
    [oracle] = build_oracles([OracleProblem("P_3", ref, ["assert mean([1.0, 2.0, 4.5]) == 2.5"])],
                             FidelityConfig(inputs=30, candidates=80), sandbox=sandbox)
    assert any("<= " in t for t in oracle.tests)
    close = "import math\ndef mean(xs):\n    return math.fsum(xs) / len(xs)\n"   # another summation order
    off = "def mean(xs):\n    return sum(xs) / len(xs) * (1 + 1e-5)\n"
    [labels] = label_programs([oracle], [[close, off]], sandbox=sandbox)
    assert labels.tolist() == [1, 0]


def test_no_reference_or_no_literal_call_means_no_oracle_and_no_labels(sandbox):
    oracles = build_oracles([OracleProblem("LeetCode_1", None, ["assert Solution().f(1) == 1"]),
                             OracleProblem("P_4", REF, ["assert check(count_max)"])], sandbox=sandbox)
    assert [o.reason for o in oracles] == ["no_reference", "no_literal_call"]
    assert label_programs(oracles, [["x = 1"], ["x = 1"]], sandbox=sandbox) == [None, None]


def test_the_oracle_draws_from_its_own_random_stream_not_the_searchs():
    from evolvecoder_datasets.search.inputs import recover_call
    from evolvecoder_datasets.search.oracle import _candidates

    call = recover_call(TESTS)
    domain = infer_domain(call.seeds)
    a = [x for g in _candidates(OracleProblem("P_1", REF, TESTS), call, FidelityConfig(seed=1), domain) for x in g]
    b = [x for g in _candidates(OracleProblem("P_1", REF, TESTS), call, FidelityConfig(seed=2), domain) for x in g]
    assert a != b and len(a) == len(set(map(repr, a)))
    search = InputMutator(call.seeds, seed=0)
    assert [search.candidate() for _ in range(20)] != a[len(call.seeds):len(call.seeds) + 20]


def test_bad_settings_are_config_errors():
    with pytest.raises(ConfigError):
        FidelityConfig(inputs=0)
    with pytest.raises(ConfigError):
        FidelityConfig(cpu_s=2.0, sandbox=SandboxSettings(timeout_s=1.0))
    with pytest.raises(ConfigError):
        FidelityConfig(sandbox={"timeout_s": 1.0})   # a mapping is for YAML (config_from_dict), not Python


def test_lists_of_floats_get_an_oracle_compared_exactly(sandbox):
    ref = "def halves(xs):\n    return [x / 2 for x in xs]\n"
    [oracle] = build_oracles([OracleProblem("P_5", ref, ["assert halves([1.0, 3.0]) == [0.5, 1.5]"])],
                             FidelityConfig(inputs=30, candidates=80), sandbox=sandbox)
    assert oracle.reason is None and len(oracle.tests) >= 10
    [labels] = label_programs([oracle], [["def halves(xs):\n    return [x * 0.5 for x in xs]\n",
                                          "def halves(xs):\n    return [x // 2 for x in xs]\n"]], sandbox=sandbox)
    assert labels.tolist() == [1, 0]


# the reference never ends for n <= 0 (p stays 0, or swings between 1 and -1): many random candidates hang it
POWERS = ("def steps(x, n):\n    if n == 1:\n        return -1\n    p, k = 1, 0\n    while p < x:\n"
          "        p *= n\n        k += 1\n    return k\n")


def test_candidates_that_hang_the_reference_do_not_end_the_oracle_and_a_hang_elsewhere_is_wrong(sandbox):
    """Each hang costs the reference's own CPU alarm, not the sandbox's timeouts (two in a row would leave every
    later candidate unexecuted): most candidates stay usable, and the mutant that loops for n == 1 is wrong."""
    tests = ["assert steps(16, 2) == 4", "assert steps(10, 3) == 3", "assert steps(1, 5) == 0"]
    [oracle] = build_oracles([OracleProblem("P_6", POWERS, tests)], FidelityConfig(inputs=80, candidates=200),
                             sandbox=sandbox)
    assert oracle.reason is None and oracle.usable > oracle.candidates // 2
    hangs_at_one = POWERS.replace("if n == 1:", "if n == 0:")
    limited = FidelityConfig(sandbox=SandboxSettings(mode="fast", timeout_s=0.5))
    [labels] = label_programs([oracle], [[POWERS, hangs_at_one]], limited, sandbox=sandbox)
    assert labels.tolist() == [1, 0]


def test_cheap_values_keep_every_usable_input_and_costly_ones_keep_the_budget(sandbox):
    ref = "def is_even(n):\n    return n % 2 == 0\n"
    problem = OracleProblem("P_7", ref, ["assert is_even(4) == True", "assert is_even(7) == False"])
    [cheap] = build_oracles([problem], FidelityConfig(inputs=20, candidates=120), sandbox=sandbox)
    [budget] = build_oracles([problem], FidelityConfig(inputs=20, candidates=120, cheap_bytes=0), sandbox=sandbox)
    assert len(budget.tests) <= 20 < len(cheap.tests) and len(cheap.tests) == cheap.usable
    [tight] = build_oracles([problem], FidelityConfig(inputs=20, candidates=120, cheap_bytes=4), sandbox=sandbox)
    assert len(tight.tests) <= 20                                   # more than 4 compressed bytes: the budget


def test_scaled_seeds_reach_lengths_and_magnitudes_the_seeds_do_not():
    found = _scaled([((-1, 1), (0, 4)), ([2, 3], "ab7", True)], limit=100)
    assert ((-9, 9), (0, 36)) in found                              # an overlap of 9, where the seed's is 1
    assert ([10, 15], "ab7", True) in found                         # digits in strings and booleans stay
    assert len(_scaled([((-1, 1), (0, 4))], limit=3)) == 3
