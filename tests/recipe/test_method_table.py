"""The method table names every method that ran, a method whose answers gave no test included (a row of zeros)."""

from __future__ import annotations

from datasets import Dataset

from evolvecoder_datasets.cards import render_round_card
from evolvecoder_datasets.recipe import stats


def test_a_method_that_ran_and_wrote_nothing_is_a_row_of_zeros():
    ds = Dataset.from_dict({
        "test_origin": [[{"round": 0, "method": "seed"}, {"round": 1, "method": "search"}]],
        "evolve_log": [[{"round": 1, "method": "adversarial", "parsed": 0},
                        {"round": 1, "method": "search", "parsed": 2}]],
        "pass_matrix": [[[True, False], [True, True]]]})
    methods = stats.tests_by_method(ds)
    assert methods["adversarial"]["generated"] == 0 and methods["adversarial"]["retained"] == 0
    assert methods["search"]["generated"] == 2 and methods["search"]["retained"] == 1
    card = render_round_card({"round": 1, "num_problems": 1, "num_tests": 2, "tests_by_method": methods}).content
    assert "| adversarial | 0 | 0 | – |" in card
