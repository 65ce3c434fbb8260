"""The sample stage: N models x k samples with their own sampling parameters, code extracted, mutants added."""

from __future__ import annotations

import pytest

from evolvecoder_datasets.errors import ConfigError
from evolvecoder_datasets.llm import LLMConfig
from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
from evolvecoder_datasets.stages.sample import ModelSpec, SampleConfig, sample
from evolvecoder_datasets.stages.support.resources import close_backends

REFERENCE = "def below(xs, t):\n    for x in xs:\n        if x >= t:\n            return False\n    return True\n"


@pytest.fixture(autouse=True)
def _fresh_backends():
    close_backends()
    yield
    close_backends()


def _responder(body):
    if "standard input" in body["messages"][-1]["content"]:
        return "```python\nprint(input())\n```"
    return [f"<think>try {k}</think>\n```python\ndef f():\n    return {k}\n```" for k in range(body.get("n", 1))]


def test_each_model_samples_k_programs_with_its_own_parameters():
    with ScriptedOpenAIServer(_responder) as server:
        base = LLMConfig(model="x", base_url=server.base_url, max_retries=0)
        config = SampleConfig(models=(ModelSpec("a", base.replace(model="a"), n=3, temperature=0.2),
                                      ModelSpec("b", base.replace(model="b"), n=1, temperature=1.0, top_p=0.5)))
        out = sample({"id": ["X_1"], "question": ["Write `def f() -> int`."]}, config=config)
        sent = {body["model"]: body for body in server.requests}
    pool = out["solutions"][0]
    assert [(s["model"], s["sample"]) for s in pool] == [("a", 0), ("a", 1), ("a", 2), ("b", 0)]
    assert [s["code"] for s in pool[:3]] == [f"def f():\n    return {k}" for k in range(3)]
    assert sent["a"]["temperature"] == 0.2 and sent["a"]["n"] == 3
    assert sent["b"]["temperature"] == 1.0 and sent["b"]["top_p"] == 0.5
    assert out["sample_errors"] == [[]]


def test_mutants_join_the_pool_only_for_confirmed_references():
    with ScriptedOpenAIServer(_responder) as server:
        spec = ModelSpec("a", LLMConfig(model="a", base_url=server.base_url), n=1)
        out = sample({"id": ["A", "B"], "question": ["q", "r"], "reference_solutions": [[REFERENCE], [REFERENCE]],
                      "reference_ok": [True, False]}, config=SampleConfig(models=(spec,), mutants=3))
    mutants = [s for s in out["solutions"][0] if s["model"] == "mutant"]
    assert [s["sample"] for s in mutants] == [0, 1, 2] and all(s["code"] != REFERENCE for s in mutants)
    assert [s["model"] for s in out["solutions"][1]] == ["a"]


def test_stdin_problems_are_asked_for_a_script_and_dropped_rows_for_nothing():
    with ScriptedOpenAIServer(_responder) as server:
        spec = ModelSpec("a", LLMConfig(model="a", base_url=server.base_url), n=1)
        out = sample({"id": ["S", "D"], "question": ["Echo the line.", "gone"], "tests": [[], []],
                      "inputs": [["x\n"], []], "drop_reason": [None, "refine_no_json"]},
                     config=SampleConfig(models=(spec,)))
        assert len(server.requests) == 1
    assert out["solutions"] == [[{"model": "a", "sample": 0, "code": "print(input())"}], []]


def test_config_rejects_duplicate_names_and_the_reserved_mutant_name():
    llm = LLMConfig(model="m")
    with pytest.raises(ConfigError):
        SampleConfig(models=(ModelSpec("a", llm), ModelSpec("a", llm)))
    with pytest.raises(ConfigError):
        ModelSpec("mutant", llm)
    with pytest.raises(ConfigError):
        SampleConfig()
