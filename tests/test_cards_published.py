"""The cards a run publishes, read back from the store: a search-only run and a model run.

Real parts: the recipe end to end (the no-LLM search config shrunk to 4 seeds; the ten-problem model run of
``tests/recipe/test_recipe_e2e.py`` with its scripted OpenAI server over loopback HTTP), the real sandbox and a real
local store. Each card is the ``README.md`` committed on its revision.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from pathlib import Path

import pytest

from evolvecoder_datasets.config import load_config
from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
from evolvecoder_datasets.recipe import run_recipe
from evolvecoder_datasets.recipe.stats import method_rows
from evolvecoder_datasets.rounds import load_round, round_folder
from evolvecoder_datasets.stages.support.resources import close_backends

from .recipe.test_recipe_e2e import _config
from .scripted_llm import ScriptedResponder

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("matplotlib")


def _card(store: Path, revision: str, cache: Path) -> tuple[str, dict, list[str], object]:
    folder = Path(round_folder(store, revision, cache_dir=str(cache)))
    figures = sorted(p.name for p in (folder / "figures").glob("*.png"))
    rows = load_round(store, revision, cache_dir=str(cache))
    return (folder / "README.md").read_text(), json.loads((folder / "stats.json").read_text()), figures, rows


def _check_common(card: str, stats: dict, revision: str, run_name: str, host_paths: list[str], folder_rows) -> None:
    body = card.split("\n---\n", 1)[1]
    # what the rows are, from the run folder's name (not the folder 'store', never its host path)
    sources = sorted(stats["problems_by_source"])
    title = re.search(r"^# (.*)$", body, re.M).group(1).split(" — round ")[0]
    assert title.endswith(f"(EvolveCoder run {run_name})") and all(s in title for s in sources), title
    assert f"pretty_name: {title}" in card
    for path in host_paths:
        assert path not in card, path
    assert "site-packages" not in card and "/.venv" not in card
    assert not re.search(r"\bnan\b", body, re.I)
    snippet = re.search(r"```python\n(.*?)```", body, re.S).group(1)
    if revision == "main":
        assert "round=" not in snippet and "solutions" not in snippet  # main has no pool
    else:
        assert f"round={revision.removeprefix('round')})" in snippet
    headline = re.search(r"^\*\*\d+ problems?, [\d,]+ tests?\.\*\*(.*)$", body, re.M).group(1)
    assert headline.startswith(" Pool pass@1") and "mutation score" in headline
    pool = stats["pool_pass_at_1"]
    assert f"{pool['0']:.3f}" in headline
    table = re.search(r"## Tests generated and retained by method\n(.*?)\n\n(\|.*?)\n\n", body, re.S).group(2)
    header = table.splitlines()[0]
    assert header.count("|") == table.splitlines()[2].count("|"), "every column of the rows has a header"
    assert "kills no other method made" in header
    for method, counts in stats["tests_by_method"].items():
        assert f"| {method} | {counts['generated']:,} | {counts['retained']:,} |" in table
        # the kills no other method made, as stats.json counts them (a card of a run before the column: a dash)
        alone = counts.get("unique_kills")
        row = next(line for line in table.splitlines() if line.startswith(f"| {method} |"))
        assert row.rstrip(" |").endswith("–" if alone is None else f"{alone:,}")
    _check_structure_and_sources(body, card, stats, revision, folder_rows)


def _check_structure_and_sources(body: str, card: str, stats: dict, revision: str, rows) -> None:
    """The "Dataset structure" lists every column of the revision's rows and shows its first row; the sources'
    licences are those of the sources the rows come from; main's mutation table ends with main's own score."""
    fields = re.search(r"## Dataset structure\n(.*?)\n```json\n(.*?)\n```", body, re.S)
    for column in rows.column_names:
        assert f"| `{column}` |" in fields.group(1), column
    example = json.loads(fields.group(2))
    assert example["id"] == rows[0]["id"] and set(example) == set(rows.column_names)
    assert "## How the tests were verified" in body
    licences = re.search(r"## Sources and licences\n\n.*?\n\n(\|.*?)\n\n", body + "\n\n", re.S).group(1)
    for source in stats["problems_by_source"]:
        assert re.search(rf"^\| {source} \| {stats['problems_by_source'][source]['problems']} \|", licences, re.M)
    if set(stats["problems_by_source"]) == {"HumanEval"}:  # MIT, as the PyPI package and the Hub dataset state
        assert "license: mit" in card and "source_datasets:\n- openai/openai_humaneval" in card
    else:  # each source's licence from its row of the table is in the metadata
        for licence in {line.split(" | ")[3] for line in licences.splitlines()[2:]}:
            assert licence in card.split("\n---\n", 1)[0], licence
    if revision == "main" and "main" in stats["mutation_score"]:
        mutation = body.split("## Mutation score", 1)[1].split("\n## ", 1)[0]
        assert f"| main | – | {stats['mutation_score']['main']:.3f} |" in mutation


def test_the_cards_of_a_search_only_run_say_what_ran_and_what_moved(tmp_path):
    _, config = load_config(ROOT / "recipes" / "configs" / "search_only.yaml")
    run = tmp_path / "search-run"
    # four problems, two where the search kills mutants with inputs inside the statements' domains (HumanEval/0's
    # one survivor needs an exact tie, found by chance or not)
    result = run_recipe(dataclasses.replace(config, output_dir=str(run), rounds=2, sources=("humaneval",),
                                            problem_ids=("HumanEval_0", "HumanEval_2", "HumanEval_10", "HumanEval_40")))
    store = run / "store"
    hosts = [str(tmp_path), sys.prefix]
    for revision in ("round0", "round2", "main"):
        card, stats, figures, rows = _card(store, revision, tmp_path / "cache")
        _check_common(card, stats, revision, "search-run", hosts, rows)
        assert "test_writer" not in card and "prompt_versions" not in card  # no model ran
        assert "per_model.png" not in figures and "## pass@k across rounds" not in card  # no samples: no chart
        assert "search |" in card
    # the figure and the table count the same things: per round and method, summed
    rows = method_rows(result.rounds[-1], result.final)
    totals = {}
    for row in rows:
        entry = totals.setdefault(row["method"], [0, 0])
        entry[0] += row["generated"]
        entry[1] += row["retained"]
    assert {m: [v["generated"], v["retained"]] for m, v in stats["tests_by_method"].items()} == totals
    pool = stats["pool_pass_at_1"]
    assert pool["2"] < pool["0"]  # the search kills mutants: fewer of the pool pass every test


def test_the_cards_of_a_model_run_name_its_models_and_prompts(tmp_path):
    close_backends()
    run = tmp_path / "model-run"
    try:
        with ScriptedOpenAIServer(ScriptedResponder()) as server:
            run_recipe(_config(server.base_url, run))
    finally:
        close_backends()
    for revision in ("round1", "main"):
        card, stats, figures, rows = _card(run / "store", revision, tmp_path / "cache")
        _check_common(card, stats, revision, "model-run", [str(tmp_path), sys.prefix], rows)
        assert "| test_writer | writer |" in card
        assert "prompt_versions.refine" in card and "prompt_versions.solve" in card
        assert "prompt_versions.code_instruct" not in card  # a prompt this recipe never sends
        if revision != "main":
            solved = any(v > 0 for row in stats["pass_at_k_by_model"].values() for v in row.values())
            assert ("per_model.png" in figures) == solved
