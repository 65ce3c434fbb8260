"""Refine with ``ask=False``: the seeds' own questions and asserts, reference-checked, and no model at all."""

from __future__ import annotations

from datasets import Dataset

from evolvecoder_datasets.stages.execute import ExecuteConfig
from evolvecoder_datasets.stages.refine import RefineConfig, refine, refine_dataset


def _batch():
    return {
        "id": ["S_1", "S_2", "S_3"],
        "question": ["Square x.", "Add one.", "No tests here."],
        "solutions": [["def sq(x):\n    return x * x"], [], ["def f():\n    return 1"]],
        "tests": [["assert sq(2) == 4", "assert sq(3) == 10"], ["assert inc(1) == 2"], []],
    }


def test_refine_off_keeps_seed_asserts_checked_by_the_reference_without_a_model():
    config = RefineConfig(ask=False, min_tests=1, execute=ExecuteConfig(mode="fast", workers=1))
    assert config.llm is None
    out = refine(_batch(), config=config)
    assert out["tests"] == [["assert sq(2) == 4"], ["assert inc(1) == 2"], []]  # the wrong seed assert is dropped
    assert out["test_origin"][0] == [{"round": 0, "method": "seed"}]
    assert out["question"][:2] == ["Square x.", "Add one."]
    assert out["reference_ok"] == [True, False, False]  # no reference: kept unchecked
    assert out["refine_fallback"][:2] == ["refine_off", "refine_off"]
    assert out["drop_reason"] == [None, None, "refine_no_tests"]


def test_refine_dataset_runs_without_a_model_when_it_does_not_ask():
    ds = Dataset.from_dict(_batch())
    out = refine_dataset(ds, RefineConfig(ask=False, min_tests=1, execute=ExecuteConfig(mode="fast", workers=1)))
    assert out["reference_failed_tests"][0] == 1 and "solutions" not in out.column_names
