"""Every parser against a corpus of messy, real-looking model answers in tests/data/llm_responses/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evolvecoder_datasets.errors import LLMResponseError
from evolvecoder_datasets.prompts import adversarial, code_instruct, discriminative, refine
from evolvecoder_datasets.prompts.parsing import REASONS

CORPUS = Path(__file__).parent.parent / "data" / "llm_responses"
CASES = json.loads((CORPUS / "expected.json").read_text())
PARSERS = {"refine": refine, "adversarial": adversarial, "discriminative": discriminative, "code_instruct": code_instruct}


def test_corpus_has_at_least_forty_answers_covering_every_parser():
    assert len(CASES) >= 40
    assert {case["parser"] for case in CASES} == set(PARSERS)


@pytest.mark.parametrize("case", CASES, ids=[c["file"] for c in CASES])
def test_parser_returns_the_expected_value_or_reason(case):
    text = (CORPUS / case["file"]).read_text()
    parse = PARSERS[case["parser"]].parse
    if "reason" in case:
        with pytest.raises(LLMResponseError) as info:
            parse(text)
        assert info.value.reason == case["reason"]
        assert info.value.reason in REASONS
        return
    result = parse(text)
    if "tests" in case:
        assert result.tests == case["tests"]
    if "dropped" in case:
        assert result.dropped_tests == case["dropped"]
    if "from_json" in case:
        assert result.from_json is case["from_json"]
    if "question_contains" in case:
        assert case["question_contains"] in result.question
    if "problem_contains" in case:
        assert case["problem_contains"] in result.problem
    if "test_startswith" in case:
        assert result.test.startswith(case["test_startswith"])
    if "solution_startswith" in case:
        assert result.solution.startswith(case["solution_startswith"])
