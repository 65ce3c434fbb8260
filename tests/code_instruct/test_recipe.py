"""recipes/code_instruct.py end to end on the fixture repository, with scripted answers over HTTP."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
import yaml

from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer

from .conftest import TINYTEXT, answer, env_cache

RECIPES = Path(__file__).resolve().parents[2] / "recipes"


@pytest.fixture(scope="module")
def recipe():
    spec = importlib.util.spec_from_file_location("code_instruct_recipe", RECIPES / "code_instruct.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def test_shipped_configs_validate(recipe):
    from evolvecoder_datasets.cli import load_recipe_config

    remote = load_recipe_config(RECIPES / "configs" / "code_instruct.yaml", recipe.CodeInstructRecipe)
    assert len(remote.repos) == 5 and remote.pipeline.max_attempts_per_seed == 3
    assert remote.pipeline.seeds.max_lines == 200 and remote.pipeline.verify_timeout_s == 180
    local = load_recipe_config(RECIPES / "configs" / "code_instruct_local.yaml", recipe.CodeInstructRecipe)
    assert local.llm.backend == "transformers" and local.store == "none"


def test_recipe_pushes_rows_exports_folders_and_writes_the_report(recipe, tinytext_env, tmp_path, capsys):
    good = answer("tinytext", "good_caption")
    config = {
        "output_dir": str(tmp_path / "run"),
        "repos": [{"source": str(TINYTEXT), "label": "fixtures/tinytext"}],
        "llm": {"model": "scripted", "base_url": "http://127.0.0.1:9/v1", "max_retries": 0},
        # The default export: the task is judged outside (its test splits), so it is exported without asking.
        "pipeline": {"num_seeds": 2, "max_attempts_per_seed": 1, "decontamination": ["humaneval"]},
        "env_cache_dir": str(env_cache()),
    }
    with ScriptedOpenAIServer(lambda body: good) as server:
        config["llm"]["base_url"] = server.base_url
        path = tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump(config))
        assert recipe.main([str(path)]) == 0
        assert "judged outside the solution's process: 1, inside: 0" in capsys.readouterr().out
        assert all("fixtures/tinytext" in body["messages"][-1]["content"] for body in server.requests)
    run = tmp_path / "run"
    report = json.loads((run / "yield.json").read_text())
    # Both seeds got the same good answer: the first is emitted, the second is its duplicate.
    assert (report["attempts"], report["emitted"], report["skip_reasons"]) == (2, 1, {"duplicate": 1})
    assert [p.name for p in (run / "tasks").iterdir()] == ["tiny_textkit_0"]
    folder = run / "tasks" / "tiny_textkit_0"
    assert (folder / "environment" / "Dockerfile").is_file() and (folder / "solution" / "patch.diff").is_file()
    assert (folder / "tests" / "ecd_judge.zip").is_file() and not (folder / "tests" / "ecd_verdict.py").exists()
    assert len((run / "rejected.jsonl").read_text().splitlines()) == 1
    from evolvecoder_datasets.rounds import load_round

    assert load_round(run / "store", 0)["id"] == ["tiny_textkit_0"]


def test_bad_configuration_exits_with_status_2(recipe, tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text("repos: []\n")
    assert recipe.main([str(path)]) == 2
    assert "repos" in capsys.readouterr().err


def test_unknown_verification_environment_exits_with_status_2(recipe, tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text(f"repos: [{{source: {TINYTEXT}}}]\nenvironment: docker\n")
    assert recipe.main([str(path)]) == 2
    assert "environment must be 'venv' or 'container'" in capsys.readouterr().err
