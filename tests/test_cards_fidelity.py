"""The card's Test fidelity block and the fidelity lines of `inspect` (stats_summary)."""

from __future__ import annotations

from evolvecoder_datasets.cards import render_round_card, stats_summary
from evolvecoder_datasets.metrics.fidelity import Confusion

ROUND0 = Confusion(tp=40, fn=0, tn=170, fp=30).as_dict()
ROUND2 = Confusion(tp=39, fn=1, tn=196, fp=4).as_dict()
STATS = {
    "round": 2, "num_problems": 20, "num_tests": 210,
    "fidelity": {
        "suite": ROUND2,
        "by_round": {"0": ROUND0, "1": Confusion(tp=40, tn=190, fp=10).as_dict(), "2": ROUND2},
        "by_kind": {"mutant": Confusion(tp=3, tn=196, fp=4).as_dict(), "rewrite": Confusion(tp=36, fn=1).as_dict()},
        "by_method": {"seed": ROUND0, "search": Confusion(tp=40, tn=90, fp=110).as_dict()},
        "rejects_right": {"problems": 1, "programs": 1, "listed": [{"id": "HumanEval_7", "programs": 1,
                                                                   "cause": "limit"}]},
        "accepts_wrong": {"problems": 3, "programs": 4, "listed": [{"id": "HumanEval_9", "programs": 2}]},
        "no_oracle": {"no_reference": 4},
        "oracle": {"problems": 16, "inputs_per_problem": {"mean": 61.5, "min": 12, "max": 64},
                   "pool": {"right": 3, "wrong": 200}, "rewrites": {"generated": 40, "right": 37}},
    },
}


def test_the_card_has_a_fidelity_table_per_round_with_the_counts_behind_each_rate():
    card = str(render_round_card(STATS, repo_id="me/evolve"))
    assert "## Test fidelity" in card
    assert "| 0 | 40 | 200 | 1.000 (0.91–1.00) | 0.850 (0.79–0.89) | 0.150 | 0.000 |" in card
    assert "| 2 | 40 | 200 | 0.975 (0.87–1.00) | 0.980 (0.95–0.99) | 0.020 | 0.025 |" in card
    assert "| rewrite | 37 | 0 | 0.973 (0.86–1.00) | – | – | 0.027 |" in card      # no wrong rewrite: no TNR, never 0
    assert "| search | 40 | 200 |" in card
    assert "`HumanEval_7` (1, limit)" in card and "`HumanEval_9` (2) and 2 more" in card
    assert "4 problems have no oracle (no_reference 4)" in card


def test_a_card_without_fidelity_has_no_fidelity_section():
    assert "Test fidelity" not in str(render_round_card({"round": 0, "num_problems": 1, "num_tests": 3}))


def test_the_final_card_shows_the_paper_rule_beside_the_reduced_suite():
    stats = {**STATS, "fidelity": {**STATS["fidelity"], "rules": {
        "published": "groups",
        "groups": {"tests": 180, **Confusion(tp=40, tn=150, fp=50).as_dict()},
        "cover": {"tests": 95, **ROUND2}}}}
    card = str(render_round_card(stats, final=True))
    assert "paper: at most 5 tests per identical pass vector (published) | 180 | 40 | 200 | 1.000 (0.91–1.00) | 0.750 (0.69–0.80)" in card
    assert "reduced: greedy set cover | 95 |" in card


def test_inspect_prints_the_fidelity_tables():
    text = stats_summary(STATS)
    assert "test fidelity by round" in text and "test fidelity by test-writing method" in text
    assert "no_reference 4" in text and "HumanEval_7" in text


def test_the_card_gives_each_rate_its_interval_and_says_how_many_problems_the_oracle_sampled():
    stats = {**STATS, "fidelity": {**STATS["fidelity"], "not_sampled": 30,
                                   "oracle": {**STATS["fidelity"]["oracle"],
                                              "sampled": {"problems": 16, "of": 46, "setting": 16}}}}
    card = str(render_round_card(stats, repo_id="me/evolve"))
    assert "0.980 (0.95–0.99)" in card                              # TNR 196/200 with its Wilson interval
    assert "a seeded sample of 16 of the 46 problems with a reference" in card
    assert "30 problems were not sampled for the oracle (not an error)" in card
    full = {**STATS, "fidelity": {**STATS["fidelity"], "oracle": {**STATS["fidelity"]["oracle"],
                                                                  "sampled": {"problems": 16, "of": 16}}}}
    assert "every one of the 16 problems with a reference" in str(render_round_card(full, repo_id="me/evolve"))
