"""The refine stage against a scripted loopback server and the real sandbox."""

from __future__ import annotations

import json

import pytest

from evolvecoder_datasets.errors import ConfigError
from evolvecoder_datasets.llm import LLMConfig
from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
from evolvecoder_datasets.stages.execute import ExecuteConfig
from evolvecoder_datasets.stages.refine import RefineConfig, refine
from evolvecoder_datasets.code_names import independent_tests
from evolvecoder_datasets.stages.support.resources import close_backends

SQUARE = "Write `def sq(x: int) -> int` returning x squared, for any integer x."


def _answer(tests, question=SQUARE):
    return json.dumps({"question": question, "tests": tests})


@pytest.fixture(autouse=True)
def _fresh_backends():
    close_backends()
    yield
    close_backends()


def _run(responder, batch, **options):
    with ScriptedOpenAIServer(responder) as server:
        config = RefineConfig(llm=LLMConfig(model="writer", base_url=server.base_url, max_retries=0),
                              execute=ExecuteConfig(mode="fast", workers=1), **options)
        return refine(batch, config=config), server.requests


def test_reference_keeps_only_the_tests_it_passes():
    tests = ["assert sq(2) == 4", "assert sq(3) == 10", "assert sq(-1) == 1", "assert sq(0) == 0"]
    out, _ = _run(lambda body: _answer(tests), {"id": ["X_1"], "question": ["square"],
                                                "solutions": [["def sq(x):\n    return x * x"]]}, min_tests=2)
    assert out["tests"] == [["assert sq(2) == 4", "assert sq(-1) == 1", "assert sq(0) == 0"]]
    assert out["reference_failed_tests"] == [1] and out["reference_ok"] == [True]
    assert out["test_origin"][0] == [{"round": 0, "method": "refine"}] * 3


def test_problem_with_too_few_reference_approved_tests_is_dropped_with_a_reason():
    out, _ = _run(lambda body: _answer(["assert sq(2) == 5", "assert sq(3) == 9"]),
                  {"id": ["X_1"], "question": ["square"], "solutions": [["def sq(x):\n    return x * x"]]},
                  min_tests=2)
    assert out["drop_reason"] == ["reference_rejected_tests"]


def test_unparseable_answers_record_the_parser_reason():
    answers = {"a": "I cannot help with that.", "b": '{"question": "short", "tests": ["assert f() == 1"]}'}
    out, _ = _run(lambda body: answers["a" if "AAA" in body["messages"][0]["content"] else "b"],
                  {"id": ["A", "B"], "question": ["AAA problem", "BBB problem"]}, min_tests=1)
    assert out["drop_reason"] == ["refine_no_json", "refine_missing_question"]
    assert out["tests"] == [[], []]


def test_reference_that_defines_other_names_is_not_used_and_says_so():
    out, _ = _run(lambda body: _answer(["assert sq(2) == 4"]),
                  {"id": ["X"], "question": ["q"], "solutions": [["print(int(input()) ** 2)"]]}, min_tests=1)
    assert out["reference_failed_tests"] == [-1] and out["reference_ok"] == [False]
    assert out["drop_reason"] == [None]


def test_rows_already_dropped_cost_no_request():
    out, requests = _run(lambda body: _answer(["assert sq(2) == 4"]),
                         {"id": ["X", "Y"], "question": ["q", "r"], "drop_reason": ["near_duplicate", None]},
                         min_tests=1)
    assert len(requests) == 1
    assert out["drop_reason"] == ["near_duplicate", None]


def test_seed_tests_join_when_they_call_the_refined_function():
    out, _ = _run(lambda body: _answer(["assert sq(2) == 4"]),
                  {"id": ["X"], "question": ["q"], "tests": [["assert sq(5) == 25", "assert other(1) == 1"]]},
                  min_tests=1, include_seed_tests=True)
    assert out["tests"] == [["assert sq(2) == 4", "assert sq(5) == 25"]]
    assert [o["method"] for o in out["test_origin"][0]] == ["refine", "seed"]


def test_tests_that_depend_on_another_test_are_dropped():
    kept, dropped = independent_tests(["xs = [2, 1]\nassert sorted(xs) == [1, 2]", "assert len(xs) == 2",
                                       "assert sq(2) == 4"])
    assert dropped == 1 and kept[-1] == "assert sq(2) == 4"


def test_config_validates_and_carries_the_prompt_version():
    with pytest.raises(ConfigError):
        RefineConfig(reference_check="sometimes")
    with pytest.raises(ConfigError):
        refine({"id": ["X"], "question": ["q"]}, config=RefineConfig())
    assert "refine-1" in RefineConfig().version


def test_fallback_to_seed_keeps_the_seed_tests_when_the_answer_is_unusable():
    """A weak model answers prose: with fallback_to_seed the seed question and its asserts stay (origin ``seed``),
    checked against the reference like refined tests, and the reason is recorded instead of a drop."""
    from evolvecoder_datasets.llm import LLMConfig
    from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
    from evolvecoder_datasets.stages.refine import RefineConfig, refine

    batch = {
        "id": ["S_1", "S_2"],
        "question": ["Add two numbers.", "Square x."],
        "tests": [["assert add(1, 2) == 3", "assert add(2, 2) == 5"], []],
        "solutions": [["def add(a, b):\n    return a + b"], []],
    }
    with ScriptedOpenAIServer(lambda body: "Sure! Addition is when you put numbers together.") as server:
        llm = LLMConfig(model="m", base_url=server.base_url, cache_mode="off")
        strict = refine(batch, config=RefineConfig(llm=llm, min_tests=1))
        lenient = refine(batch, config=RefineConfig(llm=llm, min_tests=1, fallback_to_seed=True))
    assert strict["drop_reason"] == ["refine_no_json", "refine_no_json"]
    assert lenient["drop_reason"] == [None, "refine_no_json"]  # S_2 has no seed asserts to fall back to
    assert lenient["tests"][0] == ["assert add(1, 2) == 3"]  # the wrong seed assert fails the reference check
    assert lenient["test_origin"][0] == [{"round": 0, "method": "seed"}]
    assert lenient["refine_fallback"] == ["refine_no_json", None]
    assert lenient["question"][0] == "Add two numbers."
