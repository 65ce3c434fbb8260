"""Preconditions read from a statement's ``Constraints:`` block: the forms LeetCode and contest statements use, the
problem's own inputs always admitted, and the evolve box keeping a model's whole asserts inside them."""

from __future__ import annotations

import pytest

from evolvecoder_datasets.search.calls import recover_call
from evolvecoder_datasets.sources.constraints import constraints_precondition, statement_parameters


def _precondition(question, seeds):
    src = constraints_precondition(question, seeds)
    assert src is not None
    namespace: dict = {}
    exec(src, namespace)  # noqa: S102 - built by our templates from a fixed statement (the sandbox runs it elsewhere)
    return namespace["precondition"]


TWO_SUM = """Given an array of integers `nums` and an integer `target`, return indices of the two numbers.

Example 1:
```
Input: nums = [2,7,11,15], target = 9
Output: [0,1]
```

Constraints:
- `2 <= nums.length <= 10<sup>4</sup>`
- `-10^9 <= nums[i] <= 10^9`
- -10^9 <= target <= 10^9
- Only one valid answer exists.

**Follow-up:** can you do better?
"""


def test_bounds_lengths_elements_and_powers_are_enforced():
    pre = _precondition(TWO_SUM, [([2, 7, 11, 15], 9)])
    assert pre([1, 2], 3) and pre([-10**9, 10**9], -5)
    assert not pre([1], 3)                 # 2 <= nums.length
    assert not pre([1, 10**9 + 1], 3)      # an element above its bound
    assert not pre([1, 2], 10**10)         # target above its bound
    assert not pre([1, True], 3) and not pre("ab", 3) and not pre([1, 2], "3")  # types of the problem's own inputs
    src = constraints_precondition(TWO_SUM, [([2, 7, 11, 15], 9)])
    assert "not enforced: Only one valid answer exists" in src


def test_aliases_character_classes_unique_and_sorted():
    question = """Input: words = ["ab","cd"], grid = [[1,2],[3,4]], s = "x"
Constraints:
- n == words.length
- 1 <= n <= 3
- 1 <= words[i].length <= 4
- words[i] consists of lowercase English letters.
- 0 <= grid[i][j] <= 9
- s consists of digits and '+'.
- All the strings of words are unique.
- grid[i] is sorted in ascending order.
"""
    pre = _precondition(question, [(["ab", "cd"], [[1, 2], [3, 4]], "1+2")])
    ok = (["ab", "cd"], [[1, 2], [3, 4]], "1+2")
    assert pre(*ok)
    assert not pre(["ab", "cd", "ef", "gh"], ok[1], ok[2])    # n == words.length, n <= 3
    assert not pre(["abcde"], ok[1], ok[2])                    # a word too long
    assert not pre(["aB"], ok[1], ok[2])                       # an uppercase letter
    assert not pre(["ab", "ab"], ok[1], ok[2])                 # words not unique
    assert not pre(ok[0], [[2, 1]], ok[2])                     # a row out of order
    assert not pre(ok[0], [[1, 10]], ok[2])                    # a cell above 9
    assert not pre(ok[0], ok[1], "1-2")                        # '-' is not allowed
    assert statement_parameters(question) == ["words", "grid", "s"]


def test_a_line_the_problems_own_inputs_break_is_not_enforced():
    question = "Input: s = \"a\"\nConstraints:\n- 1 <= s.length <= 5\n- s consists of uppercase English letters."
    # the tests use '' and lowercase: both lines give way, and nothing is left to enforce
    assert constraints_precondition(question, [("",), ("ab",)]) is None
    # one line broken by the tests, the other kept
    pre = _precondition(question, [("AB",), ("",)])
    assert pre("") and pre("ABCDEFGH") and not pre("ab")
    assert constraints_precondition("no constraints here", [(1,)]) is None
    assert constraints_precondition("Input: a = 1, b = 2\nConstraints:\n- 0 <= a <= 5", [(1,)]) is None  # arity


def test_every_shipped_leetcode_problem_with_a_precondition_admits_its_own_inputs():
    pytest.importorskip("datasets")
    from evolvecoder_datasets.sources import load_leetcode

    rows = load_leetcode()
    made = 0
    for row in rows:
        call = recover_call(row["tests"])
        seeds = call.seeds if call else ()
        src = constraints_precondition(row["question"], seeds)
        if src is None:
            continue
        made += 1
        namespace: dict = {}
        exec(src, namespace)  # noqa: S102 - our templates over the shipped statement
        assert all(namespace["precondition"](*s) is True for s in seeds), row["id"]
    assert made >= 900  # of 1,209


def test_the_evolve_box_keeps_a_models_whole_asserts_inside_the_constraints():
    """A problem without a reference (a LeetCode seed): the model writes whole asserts (the paper's mode) and the
    ones on inputs the Constraints block excludes never join the suite, counted under ``constraints``."""
    from evolvecoder_datasets.llm import LLMConfig
    from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
    from evolvecoder_datasets.stages.evolve import EvolveConfig, evolve
    from evolvecoder_datasets.stages.execute import ExecuteConfig
    from evolvecoder_datasets.stages.support.resources import close_backends

    question = "Return the sum.\nInput: nums = [1,2]\nConstraints:\n- 1 <= nums.length <= 3\n- 0 <= nums[i] <= 9\n"
    program = "class Solution:\n    def total(self, nums):\n        return sum(nums)\n"
    batch = {"id": ["L_1"], "question": [question], "tests": [["assert Solution().total([1, 2]) == 3"]],
             "test_origin": [[{"round": 0, "method": "seed"}]],
             "solutions": [[{"model": "m", "sample": 0, "code": program}]], "pass_matrix": [[[True]]]}
    answer = ('{"tests": ["assert Solution().total([]) == 0", "assert Solution().total([4, 5]) == 9", '
              '"assert Solution().total([1, 2, 3, 4]) == 10", "assert Solution().total([-1, 1]) == 0"]}')
    close_backends()
    try:
        with ScriptedOpenAIServer(lambda body: answer) as server:
            config = EvolveConfig(llm=LLMConfig(model="w", base_url=server.base_url, max_retries=0),
                                  discriminative=False, execute=ExecuteConfig(mode="fast", workers=1))
            out = evolve(batch, config=config)
    finally:
        close_backends()
    assert out["domain"][0]["how"] == "constraints"
    assert out["tests"][0] == ["assert Solution().total([1, 2]) == 3", "assert Solution().total([4, 5]) == 9"]
    entry = next(e for e in out["evolve_log"][0] if e["method"] == "adversarial")
    assert entry["out_of_domain"] == [{"rule": "constraints", "count": 3}]
