"""Drop records name the stage that dropped a row as data, not by reading the reason string."""

from __future__ import annotations

from datasets import Dataset

from evolvecoder_datasets.stages.support.drops import dropped_records


def test_each_row_is_recorded_once_by_the_stage_whose_output_first_carried_its_reason():
    seeds = Dataset.from_dict({"id": ["A", "B", "C", "D"], "drop_reason": [None, "near_duplicate", None, None]})
    # refine keeps B's mark and drops C and D; D's reason reads like a dedup reason but refine wrote it
    refined = Dataset.from_dict({"id": ["A", "B", "C", "D"],
                                 "drop_reason": [None, "near_duplicate", "refine_no_json", "near_duplicate"]})
    dropped = dropped_records(seeds, stage="dedup")
    dropped += dropped_records(refined, stage="refine", recorded=[d["id"] for d in dropped])
    assert dropped == [
        {"id": "B", "stage": "dedup", "reason": "near_duplicate"},
        {"id": "C", "stage": "refine", "reason": "refine_no_json"},
        {"id": "D", "stage": "refine", "reason": "near_duplicate"},
    ]


def test_a_stage_output_without_a_drop_reason_column_dropped_nothing():
    assert dropped_records(Dataset.from_dict({"id": ["A"], "question": ["q"]}), stage="dedup") == []
    assert dropped_records(Dataset.from_dict({"id": [7], "drop_reason": ["too_few_tests"]}), stage="final") == [
        {"id": "7", "stage": "final", "reason": "too_few_tests"}]
