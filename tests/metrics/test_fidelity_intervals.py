"""The 95% Wilson intervals beside every TPR/TNR, and problems left out of the oracle's sample."""

from __future__ import annotations

import numpy as np
import pytest

from evolvecoder_datasets.metrics.fidelity import (
    NOT_SAMPLED, Confusion, ProblemFidelity, fidelity_report, wilson_interval)

Z2 = 1.959964 ** 2


def test_wilson_matches_the_hand_computed_interval():
    # p = 1 and p = 0 have closed forms: [n / (n + z^2), 1] and [0, z^2 / (n + z^2)]
    assert wilson_interval(20, 20) == pytest.approx([20 / (20 + Z2), 1.0])
    assert wilson_interval(0, 10) == pytest.approx([0.0, Z2 / (10 + Z2)])
    # 5 of 10: centre 0.5, half-width z * sqrt(0.25 / 10 + z^2 / 400) / (1 + z^2 / 10)
    half = 1.959964 * (0.25 / 10 + Z2 / 400) ** 0.5 / (1 + Z2 / 10)
    assert wilson_interval(5, 10) == pytest.approx([0.5 - half, 0.5 + half])
    assert wilson_interval(5, 10) == pytest.approx([0.2366, 0.7634], abs=1e-4)   # the textbook figure
    assert wilson_interval(0, 0) is None


def test_every_rate_of_a_report_carries_its_interval_and_an_undefined_rate_none():
    d = Confusion(tp=39, fn=1, tn=196, fp=4).as_dict()
    assert d["tpr_ci"] == pytest.approx(wilson_interval(39, 40)) and d["tnr_ci"] == pytest.approx(wilson_interval(196, 200))
    assert d["tpr_ci"][0] <= d["tpr"] <= d["tpr_ci"][1]
    p = ProblemFidelity("P_1", np.array([[1, 1], [0, 1], [1, 1]], bool), [1, 1, 0],
                        kinds=["rewrite", "rewrite", "mutant"], methods=["seed", "search"])
    report = fidelity_report([p])
    for entry in [report["suite"], *report["by_kind"].values(), *report["by_method"].values()]:
        assert set(entry) >= {"tpr_ci", "tnr_ci"}
    assert report["by_kind"]["rewrite"]["tnr_ci"] is None            # no wrong rewrite: no rate, no interval


def test_a_problem_left_out_of_the_sample_is_not_an_oracle_error():
    report = fidelity_report([ProblemFidelity("P_1", np.ones((1, 1), bool), [1]),
                              ProblemFidelity("P_2", np.ones((1, 1), bool), None, reason=NOT_SAMPLED),
                              ProblemFidelity("L_1", np.ones((1, 1), bool), None, reason="no_reference")])
    assert report["not_sampled"] == 1 and report["no_oracle"] == {"no_reference": 1} and report["problems"] == 1
