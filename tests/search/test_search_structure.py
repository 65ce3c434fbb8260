"""The search writer's structure edits (ties, duplicates, boundary sizes, splices) and its float tolerance rule."""

from __future__ import annotations

import ast

from evolvecoder_datasets.execution import Sandbox
from evolvecoder_datasets.search.inputs import InputMutator
from evolvecoder_datasets.search.writer import SearchConfig, SearchProblem, search_tests
from evolvecoder_datasets.tolerance import float_tolerance


def test_structure_edits_cover_ties_duplicates_sizes_and_splices():
    found = InputMutator([([4, 9, 2], "ab"), ([7], "14.5"), ([1, 1], "0")], seed=3).structured(limit=500)
    lists = [args[0] for args in found]
    texts = [args[1] for args in found]
    assert [] in lists and [4] in lists                      # boundary sizes
    assert any(len(v) > 1 and len(set(v)) == 1 for v in lists)  # every element tied
    assert any(len(v) > len(set(v)) > 1 for v in lists)      # one duplicate among distinct values
    assert [4, 9, 2, 9] in lists                             # the largest element tied
    assert "14.50" in texts and "" in texts                  # a splice of two seed values; the empty string


def test_a_survivor_wrong_only_on_ties_is_killed_before_it_would_retire():
    reference = "def count_max(xs):\n    m = max(xs)\n    return sum(1 for x in xs if x == m)\n"
    survivor = "def count_max(xs):\n    return 1\n"
    problem = SearchProblem("T_1", reference, ["assert count_max([1, 2, 3]) == 1", "assert count_max([9, 4]) == 1"],
                            [survivor], [[True, True]])
    with Sandbox(workers=1, mode="fast") as sb:
        for seed in range(3):
            # retire after one agreement: only the structure edits asked before retirement can still kill it
            config = SearchConfig(seed=seed, retire_after=1, generation_size=4, structure_edits=16)
            [result] = search_tests([problem], config, sandbox=sb)
            assert result.killed == 1, result
            assert any(len(set(ast.literal_eval(t.split("count_max(")[1].split(") ==")[0]))) <
                       len(ast.literal_eval(t.split("count_max(")[1].split(") ==")[0])) for t in result.tests)


def test_search_float_asserts_use_the_shared_tolerance():
    reference = "def scale(x):\n    return x * 1000.5\n"
    off = "def scale(x):\n    return x * 1000.5 + 0.001\n"   # inside 1e-6*max(1,|v|) for large v, outside the rule
    problem = SearchProblem("T_2", reference, ["assert scale(2.0) == 2001.0"], [off], [[False]])
    with Sandbox(workers=1, mode="fast") as sb:
        [result] = search_tests([problem], SearchConfig(seed=0, split=False), sandbox=sb)
        for test in result.tests:
            value = float(test.split(" - ")[1].split(")")[0])
            assert test.endswith(f"<= {float_tolerance(value)!r}")
        assert result.tests == [] or not any(sb.run(off, result.tests).passed)


def test_every_probe_execution_and_kill_is_counted_against_where_its_candidate_came_from():
    reference = "def grade(score, cap):\n    return 'pass' if 50 <= score <= cap else 'fail'\n"
    survivors = ["def grade(score, cap):\n    return 'pass' if 51 <= score <= cap else 'fail'\n",
                 "def grade(score, cap):\n    return 'pass' if 50 <= score < cap else 'fail'\n",
                 "def grade(score, cap):\n    return 'pass' if score >= 50 else 'fail'\n"]
    problem = SearchProblem("T_9", reference, ["assert grade(70, 90) == 'pass'", "assert grade(10, 90) == 'fail'"],
                            survivors, [[True, True]] * 3)
    with Sandbox(workers=1, mode="fast") as sb:
        [result] = search_tests([problem], SearchConfig(seed=2, budget=400), sandbox=sb)
    origins = result.by_origin
    assert sum(e for e, _, _ in origins.values()) == result.executions
    assert sum(k for _, k, _ in origins.values()) == result.killed >= 1
    assert sum(c for _, _, c in origins.values()) == result.candidates
    assert set(origins) <= {"sweep", "hot", "structured"} | {o for o in origins if o.startswith("random")}
