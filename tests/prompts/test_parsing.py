"""Shared parsing helpers: think blocks, fences, JSON repair, test cleaning, sections."""

from __future__ import annotations

import json

import pytest

from evolvecoder_datasets.errors import LLMResponseError
from evolvecoder_datasets.prompts.parsing import (
    clean_tests,
    extract_json,
    repair_json,
    split_sections,
    strip_fences,
)


def test_strip_fences_prefers_python_blocks_over_longer_others():
    text = "```text\nlong long long long explanation\n```\n```python\nx = 1\n```"
    assert strip_fences(text) == "x = 1"


@pytest.mark.parametrize("cut", range(20, 120, 7))
def test_repair_keeps_only_complete_tests_of_a_truncated_answer(cut):
    full = json.dumps({"question": "Q" * 10, "tests": [f"assert f({i}) == {i}" for i in range(6)]})
    repaired = json.loads(repair_json(full[:cut]))
    assert set(repaired) <= {"question", "tests"}
    for test in repaired.get("tests", []):
        assert test in json.loads(full)["tests"]


def test_extract_json_reports_no_json_and_invalid_json_distinctly():
    with pytest.raises(LLMResponseError) as info:
        extract_json("no braces here")
    assert info.value.reason == "no_json"
    with pytest.raises(LLMResponseError) as info:
        extract_json("{this is : not [ json or python")
    assert info.value.reason in ("invalid_json", "no_json")


def test_extract_json_skips_a_list_when_an_object_is_expected():
    assert extract_json('[1, 2] then {"a": [3]}') == {"a": [3]}


def test_clean_tests_splits_multi_assert_items_and_counts_every_drop():
    result = clean_tests(["assert a() == 1\nassert b() == 2", "", "def helper(): pass", "assert (", 7])
    assert result.tests == ["assert a() == 1", "assert b() == 2"]
    assert result.dropped == {"empty": 1, "not_assert": 2, "syntax_error": 1}


def test_split_sections_takes_only_known_names_and_keeps_code_text():
    text = "intro\n[Problem Description]\nP\n[Notes]\nstays in P\n[Solution]\ncode"
    assert split_sections(text, ["Problem Description", "Solution"]) == {
        "Problem Description": "P\n[Notes]\nstays in P",
        "Solution": "code",
    }
