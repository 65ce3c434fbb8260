"""Parsers on answers that hold more than one JSON-looking thing: fences inside JSON strings, drafts, format echoes."""

from __future__ import annotations

import pytest

from evolvecoder_datasets.errors import LLMResponseError
from evolvecoder_datasets.prompts import refine
from evolvecoder_datasets.prompts._common import parse_tests_answer
from evolvecoder_datasets.prompts.parsing import extract_json

QUESTION = (
    "Write a function `add(a, b)` that returns the sum.\\n\\nExample:\\n```python\\n>>> add(1, 2)\\n3\\n```\\n"
    "Constraints: a and b are ints."
)
TESTS = '["assert add(1, 2) == 3", "assert add(-1, 1) == 0"]'


@pytest.mark.parametrize("newline", ["\\n", "\n"], ids=["escaped-newlines", "raw-newlines"])
def test_a_fenced_json_answer_whose_question_holds_a_code_fence_keeps_question_and_tests(newline):
    question = QUESTION.replace("\\n", newline)
    answer = f'Here is the refined problem:\n```json\n{{\n  "question": "{question}",\n  "tests": {TESTS}\n}}\n```\n'
    result = refine.parse(answer)
    assert result.tests == ["assert add(1, 2) == 3", "assert add(-1, 1) == 0"]
    assert result.question.endswith("Constraints: a and b are ints.") and "```python" in result.question


def test_a_tests_answer_with_a_fence_inside_a_test_string_keeps_every_test():
    answer = ('```json\n{"tests": ["assert fmt(\'```\') == \'code\'", "assert fmt(\'x\') == \'x\'",'
              ' "assert fmt(\'\') == \'\'"]}\n```')  # fmt: skip
    assert len(parse_tests_answer(answer).tests) == 3


def test_a_corrected_answer_after_a_draft_wins():
    answer = ('Draft:\n```json\n{"tests": ["assert f(1) == 0"]}\n```\nWait, f(1) is 1. Corrected:\n'
              '```json\n{"tests": ["assert f(1) == 1", "assert f(2) == 4"]}\n```')  # fmt: skip
    assert parse_tests_answer(answer).tests == ["assert f(1) == 1", "assert f(2) == 4"]


def test_an_echo_of_the_requested_format_does_not_hide_the_answer():
    for answer in ('I will answer as {"tests": [...]}.\n{"tests": ["assert f(1) == 1"]}',
                   '{"tests": ["assert f(1) == 1"]}\nThat follows the format {"tests": [...]}.'):  # fmt: skip
        assert parse_tests_answer(answer).tests == ["assert f(1) == 1"], answer


def test_an_unrelated_object_before_the_answer_is_passed_over_when_keys_are_given():
    text = 'Config {"verbose": true} is irrelevant. {"question": "Sum two ints.", "tests": ["assert add(1, 1) == 2"]}'
    assert extract_json(text, keys=["question", "tests"])["tests"] == ["assert add(1, 1) == 2"]
    assert extract_json(text) == {"verbose": True}  # without keys: the first complete object, as before


def test_the_outer_object_beats_the_test_objects_it_holds():
    text = '{"question": "Count pairs.", "tests": [{"test": "assert f([]) == 0"}, {"test": "assert f([1]) == 0"}]}'
    result = extract_json(text, keys=["question", "tests", "test"])
    assert set(result) == {"question", "tests"}


def test_a_truncated_answer_still_yields_its_complete_tests():
    answer = '```json\n{"question": "Return the sum of two integers a and b.", "tests": ["assert add(1, 1) == 2", "assert add(2, '
    assert refine.parse(answer).tests == ["assert add(1, 1) == 2"]


@pytest.mark.parametrize("answer", ['Sure, I will answer as {"tests": [...]}.', 'My answer: {"tests": [...]}'])
def test_only_a_format_echo_gives_no_tests(answer):
    with pytest.raises(LLMResponseError) as err:
        parse_tests_answer(answer)
    assert err.value.reason == "no_tests"
