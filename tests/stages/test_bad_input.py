"""Bad input to the stages: a typed error naming the column before any paid request, or a recorded drop reason."""

from __future__ import annotations

import pytest
from datasets import Dataset

from evolvecoder_datasets.errors import SchemaError
from evolvecoder_datasets.keys import config_digest
from evolvecoder_datasets.llm import LLMConfig
from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
from evolvecoder_datasets.stages.evolve import EvolveConfig, evolve
from evolvecoder_datasets.stages.execute import ExecuteConfig, execute, execute_dataset
from evolvecoder_datasets.stages.finalize import FinalizeConfig, finalize
from evolvecoder_datasets.stages.refine import DROP_REASONS, RefineConfig, refine
from evolvecoder_datasets.stages.sample import ModelSpec, SampleConfig, sample
from evolvecoder_datasets.stages.support.resources import close_backends

FAST = ExecuteConfig(mode="fast", timeout_s=1.0, workers=1)
SQUARE = "def sq(x):\n    return x * x"
REFINED = '{"question": "Write `def sq(x: int) -> int` returning x squared.", "tests": ["assert sq(2) == 4"]}'


@pytest.fixture(autouse=True)
def _fresh_backends():
    close_backends()
    yield
    close_backends()


@pytest.mark.parametrize(
    ("column", "cells"),
    [
        ("tests", ["assert sq(2) == 4"]),  # a bare string: would run as one test per character
        ("tests", [[None, "assert sq(2) == 4"]]),  # a None test: would count as a pass
        ("tests", [[4]]),
        ("solutions", [SQUARE]),  # a bare string: would run as one program per character
    ],
)
def test_execute_refuses_cells_of_the_wrong_type_naming_the_column(column, cells):
    batch = {"id": ["X_1"], "solutions": [[SQUARE]], "tests": [["assert sq(2) == 4"]]}
    batch[column] = cells
    with pytest.raises(SchemaError, match=f"'{column}'.*'X_1'"):
        execute(batch, config=FAST)


def test_execute_dataset_with_a_string_tests_column_raises_a_schema_error():
    ds = Dataset.from_dict({"id": ["X_1"], "solutions": [[SQUARE]], "tests": ["assert sq(2) == 4"]})
    with pytest.raises(SchemaError, match="'tests'"):
        execute_dataset(ds, FAST)


def test_execute_keeps_empty_tests_and_empty_pools_well_shaped():
    out = execute({"solutions": [[SQUARE], []], "tests": [[], ["assert sq(2) == 4"]]}, config=FAST)
    assert out["pass_matrix"] == [[[]], []]


@pytest.mark.parametrize("column", ["solutions", "tests"])
def test_refine_refuses_a_string_seed_column_before_any_request(column):
    batch = {"id": ["X_1"], "question": ["Square x."], "solutions": [[SQUARE]], "tests": [["assert sq(2) == 4"]]}
    batch[column] = [SQUARE if column == "solutions" else "assert sq(2) == 4"]
    with ScriptedOpenAIServer(lambda body: REFINED) as server:
        cfg = RefineConfig(llm=LLMConfig(model="m", base_url=server.base_url, max_retries=0), min_tests=1,
                           execute=FAST)
        with pytest.raises(SchemaError, match=f"'{column}'"):
            refine(batch, config=cfg)
        assert server.requests == []


def test_refine_records_a_seed_without_question_and_sends_no_request_for_it():
    batch = {"id": ["X_1", "X_2", "X_3"], "question": [None, "   ", "Square x."]}
    with ScriptedOpenAIServer(lambda body: REFINED) as server:
        cfg = RefineConfig(llm=LLMConfig(model="m", base_url=server.base_url, max_retries=0), min_tests=1)
        out = refine(batch, config=cfg)
        assert len(server.requests) == 1
    assert out["drop_reason"] == ["seed_no_question", "seed_no_question", None]
    assert "seed_no_question" in DROP_REASONS


def test_sample_refuses_a_live_row_without_question_before_any_request():
    batch = {"id": ["X_1", "X_2"], "question": ["Write sq(x).", None], "drop_reason": [None, None]}
    with ScriptedOpenAIServer(lambda body: f"```python\n{SQUARE}\n```") as server:
        spec = ModelSpec("m", LLMConfig(model="m", base_url=server.base_url, max_retries=0), n=1)
        with pytest.raises(SchemaError, match="'question'.*'X_2'"):
            sample(batch, config=SampleConfig(models=(spec,)))
        assert server.requests == []
        batch["drop_reason"] = [None, "refine_no_json"]  # a dropped row is not asked about, so it may be empty
        out = sample(batch, config=SampleConfig(models=(spec,)))
    assert [len(p) for p in out["solutions"]] == [1, 0]


def test_evolve_refuses_a_string_tests_cell_before_any_request():
    batch = {"id": ["X_1"], "question": ["Write sq(x)."], "tests": ["assert sq(2) == 4"],
             "solutions": [[{"model": "m", "sample": 0, "code": SQUARE}]], "pass_matrix": [[[True]]]}
    with ScriptedOpenAIServer(lambda body: '{"tests": ["assert sq(3) == 9"]}') as server:
        cfg = EvolveConfig(llm=LLMConfig(model="m", base_url=server.base_url, max_retries=0), execute=FAST)
        with pytest.raises(SchemaError, match="'tests'"):
            evolve(batch, config=cfg)
        assert server.requests == []


def test_finalize_drops_a_problem_with_an_empty_pool_with_a_reason():
    # execute writes [] for a problem without solutions, whatever its number of tests
    out = finalize({"id": ["X_1"], "tests": [["assert sq(2) == 4", "assert sq(3) == 9"]], "pass_matrix": [[]],
                    "solutions": [[]]}, config=FinalizeConfig(min_tests=1))
    assert out["drop_reason"] == ["no_solutions"]
    assert out["tests"] == [["assert sq(2) == 4", "assert sq(3) == 9"]]


def test_finalize_drops_a_pool_of_only_mutants_as_no_solutions():
    out = finalize({"id": ["X_1"], "tests": [["assert sq(2) == 4"]], "pass_matrix": [[[True], [False]]],
                    "solutions": [[{"model": "mutant", "sample": 0, "code": ""},
                                   {"model": "mutant", "sample": 1, "code": ""}]]},
                   config=FinalizeConfig(min_tests=1))
    assert out["drop_reason"] == ["no_solutions"] and out["final_low_rate_tests"] == [0]


def test_finalize_refuses_a_matrix_that_does_not_match_the_pool():
    with pytest.raises(SchemaError, match="1 rows for 2 solutions"):
        finalize({"id": ["X_1"], "tests": [["assert sq(2) == 4"]], "pass_matrix": [[[True]]],
                  "solutions": [[{"model": "m", "sample": 0, "code": ""}, {"model": "m", "sample": 1, "code": ""}]]},
                 config=FinalizeConfig(min_tests=1))


def test_a_model_taken_from_the_environment_enters_the_checkpoint_key(monkeypatch):
    monkeypatch.setenv("OPENAI_MODEL", "gpt-4o-mini")
    first = config_digest(RefineConfig(llm=LLMConfig()))
    monkeypatch.setenv("OPENAI_MODEL", "gpt-4o")
    assert config_digest(RefineConfig(llm=LLMConfig())) != first
    assert config_digest(RefineConfig(llm=LLMConfig(model="gpt-4o"))) == config_digest(RefineConfig(llm=LLMConfig()))
