"""The input-mode prompts: short, shaped by one example, programs as diffs; answers read however a small model writes.

The answers below are the shapes a 0.5B coder really gave (JSON objects with a reason, bare lists, asserts where a
call was asked, calls of helper functions, prose), plus hostile ones (an argument that runs code, a call nested past
the parser's recursion, a megabyte of text).
"""

from __future__ import annotations

import json

import pytest

from evolvecoder_datasets.errors import LLMResponseError
from evolvecoder_datasets.prompts import inputs

QUESTION = "Write `def clamp(x: int, lo: int, hi: int) -> int` returning x limited to [lo, hi]."
REF = "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n"
MUTANT = "def clamp(x, lo, hi):\n    return max(lo, min(x, hi - 1))\n"


def test_the_prompt_puts_the_problem_first_and_shows_one_example_call_of_the_real_function():
    a = inputs.build_messages("adversarial", QUESTION, "clamp", [REF], ["assert clamp(5, 0, 10) == 5"],
                              example=(5, 0, 10))
    d = inputs.build_messages("discriminative", QUESTION, "clamp", [REF, MUTANT], ["assert clamp(5, 0, 10) == 5"],
                              example=(5, 0, 10))
    assert a[0] == d[0]  # one system line for every request
    head = "Problem:\n<<<\n" + QUESTION
    assert a[1]["content"].startswith(head) and d[1]["content"].startswith(head)  # a shared prefix per problem
    shape = json.loads(a[1]["content"].rsplit("\n", 1)[-1])
    # the statement shows the signature: the example is a placeholder (a small model repeats a real call), the
    # reason first (it then writes a call for the edge it named)
    assert list(shape["inputs"][0]) == ["why", "call"] and shape["inputs"][0]["call"] == "clamp(<arguments>)"
    plain = inputs.build_messages("adversarial", "Clamp x to [lo, hi].", "clamp", [REF], [], example=(5, 0, 10))
    assert json.loads(plain[1]["content"].rsplit("\n", 1)[-1])["inputs"][0]["call"] == "clamp(5, 0, 10)"
    for messages in (a, d):
        text = messages[1]["content"].lower()
        assert "a reference solution computes the expected values" in text and "assert" not in text.split("current")[0]


DOCTESTED = (
    'def clamp(x: int, lo: int, hi: int) -> int:\n    """Limit x to [lo, hi].\n    >>> clamp(12, 0, 10)\n    10\n'
    '    Example:\n        clamp(-3, 0, 10) == 0\n\n    lo <= hi always.\n    """\n'
)


def test_the_statement_is_shown_without_its_worked_examples_but_with_its_signature_and_rules():
    """A 0.5B coder shown ``clamp(12, 0, 10)`` in the statement answered with that very call (the seed's own test)."""
    content = inputs.build_messages("adversarial", DOCTESTED, "clamp", [MUTANT], [], example=(12, 0, 10),
                                    reference=REF)[1]["content"]
    head = content.split(">>>\n", 1)[0]
    assert "def clamp(x: int, lo: int, hi: int) -> int:" in head and "lo <= hi always." in head
    assert "clamp(12, 0, 10)" not in content and "clamp(-3, 0, 10)" not in content and ">>> clamp" not in content
    # nothing but examples: the statement stays whole rather than vanish
    assert inputs.statement_without_examples(">>> clamp(1, 0, 2)\n1", "clamp") == ">>> clamp(1, 0, 2)\n1"


def test_with_a_reference_it_is_program_1_and_the_others_are_told_apart_from_it():
    twin = REF.replace("\n", "\n\n")  # the reference again, formatted otherwise: not worth a place in the prompt
    content = inputs.build_messages("adversarial", QUESTION, "clamp", [twin, MUTANT],
                                    ["assert clamp(5, 0, 10) == 5", "assert clamp(-1, 0, 3) == 0"], example=(5, 0, 10),
                                    reference=REF)[1]["content"]
    assert "Program 1 (right):\n```python\ndef clamp(x, lo, hi):" in content
    assert "Program 2 (the lines where it differs from Program 1):" in content and "Program 3" not in content
    assert "+    return max(lo, min(x, hi - 1))" in content
    assert "Program 2 passes all 2 current tests, but may be wrong." in content
    assert "clamp(-1, 0, 3)" not in content  # the tests are counted, not listed: a small model copies them
    many = inputs.build_messages("discriminative", QUESTION, "clamp", [MUTANT, MUTANT.replace("hi - 1", "hi + 1")],
                                 [], example=(5, 0, 10), reference=REF)[1]["content"]
    assert "Programs 2 to 3 cannot be told apart by the 0 current tests" in many and "on which one of them returns" in many


def test_programs_are_shown_without_their_docstrings():
    program = 'def clamp(x, lo, hi):\n    """Limit x to [lo, hi].\n\n    >>> clamp(5, 0, 3)\n    3\n    """\n    return max(lo, min(x, hi))\n'
    shown = inputs.render_programs_as_diffs([program])
    assert "Limit x" not in shown and "return max(lo, min(x, hi))" in shown


def test_mutants_of_one_program_are_shown_as_a_diff_and_unrelated_programs_in_full():
    shown = inputs.render_programs_as_diffs([REF, MUTANT, "def clamp(a, b, c):\n    import os\n    return sorted([a, b, c])[1]"])
    assert "-    return max(lo, min(x, hi))\n+    return max(lo, min(x, hi - 1))" in shown
    assert shown.count("def clamp(x, lo, hi)") == 1  # the mutant's unchanged lines are not repeated
    assert "Program 3:\n```python\ndef clamp(a, b, c):" in shown


def test_the_request_carries_a_schema_that_bounds_the_answer():
    request = inputs.build_request("adversarial", QUESTION, "clamp", [REF], [], example=(1, 0, 2), num_tests=3,
                                   temperature=0.7, max_tokens=100, seed=4)
    schema = request.response_schema
    assert schema["required"] == ["inputs"]
    assert schema["properties"]["inputs"]["maxItems"] == 3
    assert list(schema["properties"]["inputs"]["items"]["properties"]) == ["why", "call"]  # llama.cpp keeps the order
    assert request.prompt_version == inputs.VERSION and request.stage == "adversarial"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ('{"inputs": [{"call": "clamp(-1, 0, 10)", "why": "below"}, {"call": "clamp(11, 0, 10)", "why": "above"}]}',
         [(-1, 0, 10), (11, 0, 10)]),
        ('```json\n["clamp(0, 0, 0)", "clamp(3, 5, 5)"]\n```', [(0, 0, 0), (3, 5, 5)]),
        ('{"inputs": ["assert clamp(10, 0, 10) == 10", "clamp(2, 1, 3) == 999"]}', [(10, 0, 10), (2, 1, 3)]),
        ("Here are inputs:\n1. clamp(7, 7, 7)\n2. clamp(-5, -3, -1)  # negatives", [(7, 7, 7), (-5, -3, -1)]),
        ('{"inputs": [{"call": "clamp([1, 2], 0, 1)"}]}', [([1, 2], 0, 1)]),
    ],
)
def test_calls_are_read_from_every_shape_a_small_model_writes(answer, expected):
    assert inputs.parse(answer, "clamp").inputs == expected


def test_what_is_not_a_literal_call_of_the_function_is_dropped_with_a_reason():
    answer = json.dumps({"inputs": [
        {"call": "clamp(__import__('os').system('id'), 0, 1)"},  # code, not a literal
        {"call": "clamp(x, 0, 1)"},
        {"call": "helper(1, 2, 3)"},
        {"call": "the empty list"},
        {"call": "clamp(1, 0, 2)", "why": "a"},
        {"call": "clamp(1, 0, 2)", "why": "again"},
        {"call": 12},
    ]})
    result = inputs.parse(answer, "clamp")
    assert result.inputs == [(1, 0, 2)] and result.reasons == ["a"]
    assert result.dropped == {"not_literal": 2, "other_function": 1, "not_a_call": 2, "duplicate": 1}


def test_a_method_callee_is_matched_whole():
    answer = '{"inputs": [{"call": "Solution().two_sum([3, 3], 6)"}, {"call": "two_sum([1], 1)"}]}'
    assert inputs.parse(answer, "Solution().two_sum").inputs == [([3, 3], 6)]


@pytest.mark.parametrize("answer", ["", "   ", "I cannot help with that.", '{"inputs": []}',
                                    '{"inputs": [{"call": "other(1)"}]}'])
def test_an_answer_without_a_usable_call_is_a_typed_error(answer):
    with pytest.raises(LLMResponseError) as info:
        inputs.parse(answer, "clamp")
    assert info.value.reason in ("empty", "no_inputs")


def test_hostile_answers_are_bounded_not_a_crash():
    deep = "clamp(" + "[" * 5000 + "]" * 5000 + ", 0, 1)"
    huge = "clamp(" + "1" * 2_000 + ", 0, 1)"
    flood = json.dumps({"inputs": [{"call": "clamp(1, 0, 2)"}] + [{"call": deep}, {"call": huge}]})
    result = inputs.parse(flood, "clamp")
    assert result.inputs == [(1, 0, 2)]
    assert sum(result.dropped.values()) == 2


def test_free_text_calls_of_a_short_name_are_not_read_inside_longer_names():
    assert inputs.parse("half(3)\nself.f(4)\n- f(5) is an edge", "f").inputs == [(5,)]
