"""Fidelity figures from pass matrices and oracle labels (pure numpy: no sandbox)."""

from __future__ import annotations

import numpy as np
import pytest

from evolvecoder_datasets.errors import SchemaError
from evolvecoder_datasets.metrics.fidelity import (
    Confusion,
    ProblemFidelity,
    accepted_by,
    confusion,
    fidelity_report,
    rate_rows,
)


def _brute(M, labels):
    tp = fn = tn = fp = 0
    for row, label in zip(M, labels):
        accepted = all(row)
        if label == 1:
            tp, fn = tp + accepted, fn + (not accepted)
        elif label == 0:
            tn, fp = tn + (not accepted), fp + accepted
    return tp, fn, tn, fp


def test_confusion_matches_a_program_by_program_count_on_random_matrices():
    rng = np.random.default_rng(7)
    for _ in range(200):
        M = rng.random((rng.integers(0, 12), rng.integers(0, 6))) < 0.8
        labels = rng.integers(-1, 2, size=M.shape[0]).astype(np.int8)
        c = confusion(accepted_by(M), labels)
        assert (c.tp, c.fn, c.tn, c.fp) == _brute(M, labels)
        if c.right:
            assert c.tpr + c.fnr == pytest.approx(1.0)
        if c.wrong:
            assert c.tnr + c.fpr == pytest.approx(1.0)


def test_a_rate_over_no_program_is_none_not_zero():
    c = confusion([True, True], [1, 1])
    assert c.tpr == 1.0 and c.tnr is None and c.fpr is None
    assert Confusion().as_dict()["tpr"] is None


def test_unlabelled_programs_count_nowhere():
    c = confusion([False, True], [-1, -1])
    assert c.right == c.wrong == 0


def test_problems_without_an_oracle_are_counted_apart_and_never_pooled():
    with_oracle = ProblemFidelity("HE_1", np.array([[True], [False]]), [1, 0], kinds=["rewrite", "mutant"],
                                  methods=["seed"])
    leetcode = ProblemFidelity("LC_1", np.array([[True], [True]]), None, reason="no_reference")
    report = fidelity_report([with_oracle, leetcode])
    assert report["problems"] == 1 and report["no_oracle"] == {"no_reference": 1}
    assert report["suite"]["right"] == 1 and report["suite"]["wrong"] == 1
    assert report["suite"]["tpr"] == 1.0 and report["suite"]["tnr"] == 1.0


def test_a_rejected_right_program_is_listed_with_the_timeout_that_rejected_it():
    M = np.array([[True, False], [True, True], [False, True]])
    statuses = np.array([["pass", "timeout"], ["pass", "pass"], ["fail", "pass"]], dtype=object)
    report = fidelity_report([ProblemFidelity("HE_2", M, [1, 1, 0], kinds=["rewrite", "rewrite", "mutant"],
                                              methods=["seed", "search"], statuses=statuses)])
    assert report["rejects_right"]["listed"] == [{"id": "HE_2", "programs": 1, "cause": "timeout"}]
    assert report["by_kind"]["rewrite"]["tpr"] == 0.5
    # a method's row judges its tests alone: the seed test rejects the mutant, the search test does not
    assert report["by_method"]["seed"]["tnr"] == 1.0 and report["by_method"]["search"]["tnr"] == 0.0
    assert report["accepts_wrong"]["problems"] == 0


def test_an_accepted_wrong_program_is_counted_per_problem():
    M = np.ones((3, 2), bool)
    report = fidelity_report([ProblemFidelity("HE_3", M, [0, 0, 1])])
    assert report["accepts_wrong"] == {"problems": 1, "programs": 2, "listed": [{"id": "HE_3", "programs": 2}]}


def test_mismatched_labels_are_a_schema_error():
    with pytest.raises(SchemaError):
        confusion([True, False], [1])
    with pytest.raises(SchemaError):
        accepted_by(np.ones(3, bool))


def test_rate_rows_are_in_round_order_with_the_final_row_last():
    rows = rate_rows({"final": Confusion(tp=1).as_dict(), "10": Confusion(tn=1).as_dict(),
                      "2": Confusion(fp=1).as_dict()})
    assert [r["round"] for r in rows] == [2, 10, "final"]
    assert rows[0]["fpr"] == 1.0 and rows[2]["tnr"] is None
