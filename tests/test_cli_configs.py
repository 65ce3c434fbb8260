"""The path a user types: `evolvecoder-datasets run` on every shipped config, and one whole recipe through the CLI.

Each command runs in a fresh process, as from a shell, so nothing this test session imported can hide an import
or annotation problem (the shipped configs once stopped with ``NameError: name 'LLMConfig' is not defined``).
"""

from __future__ import annotations

import ast
import subprocess
import sys
import typing
from pathlib import Path

import pytest
import yaml

from evolvecoder_datasets.config import load_config, recipe_kind, resolve_store
from evolvecoder_datasets.errors import ConfigError
from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
from evolvecoder_datasets.rounds import list_rounds, load_round

from .scripted_llm import PROBLEM_IDS, ScriptedResponder

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "recipes" / "configs").glob("*.yaml"))


def _cli(*args: str, cwd: Path = ROOT, timeout: float = 300) -> subprocess.CompletedProcess:
    script = Path(sys.executable).with_name("evolvecoder-datasets")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "evolvecoder_datasets.cli"]
    return subprocess.run([*command, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.mark.parametrize("config", CONFIGS, ids=[c.name for c in CONFIGS])
def test_every_shipped_config_checks_through_the_cli_without_a_traceback(config):
    proc = _cli("run", str(config.relative_to(ROOT)), "--check")
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    kind = recipe_kind(yaml.safe_load(config.read_text()))
    if kind == "grpo":  # TRL's parser reads these: the CLI says where to go, in one line
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1
        assert f"python recipes/grpo_train.py --config recipes/configs/{config.name}" in proc.stderr
    else:
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith(f"recipes/configs/{config.name}: valid {kind} recipe")
        # the resolved settings as YAML (was a 2,500-character repr): every key of the file with its value
        resolved = yaml.safe_load(proc.stdout.split("\n", 1)[1])
        given = yaml.safe_load(config.read_text())
        for key in ("output_dir", "rounds"):
            if key in given:
                assert resolved[key] == given[key], key


def test_stage_configs_resolve_their_type_hints():
    from evolvecoder_datasets.stages.evolve import EvolveConfig
    from evolvecoder_datasets.stages.refine import RefineConfig

    for cls in (RefineConfig, EvolveConfig):
        assert "llm" in typing.get_type_hints(cls)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("llm: {model: m}\nmutants: 2\nrefine: {num_test: 3}\n",
         "bad.yaml.refine: unknown key 'num_test' (did you mean 'num_tests'?)"),
        ("llm: {model: m}\nmutants: 2\nmodels: [{name: a, llm: {model: a}, n: many}]\n",
         "bad.yaml.models[0].n: expected an integer, got 'many'"),
        ("llm: {model: m}\nmutants: 2\nrounds: -1\n", "bad.yaml: rounds must be >= 0"),
        ("recipe: evolvecoders\n", "recipe: 'evolvecoders' is not a recipe (did you mean 'evolvecoder'?)"),
        ("repos: []\n", "bad.yaml: repos: list at least one repository"),
    ],
)
def test_a_bad_config_is_one_error_line_naming_the_key(tmp_path, text, message):
    (tmp_path / "bad.yaml").write_text(text)
    proc = _cli("run", "bad.yaml", "--check", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert message in proc.stderr


def test_publishing_nowhere_has_one_spelling_and_the_old_one_warns(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text(f"output_dir: {tmp_path}\nstore: none\nllm: {{model: m}}\nmutants: 2\n")
    assert load_config(path)[1].store_location() is None
    assert resolve_store("NONE") == "none" and resolve_store("./none") == "./none"
    path.write_text(f"output_dir: {tmp_path}\nstore: ''\nllm: {{model: m}}\nmutants: 2\n")
    with pytest.warns(FutureWarning, match="write `store: none`"):
        assert load_config(path)[1].store_location() is None
    with pytest.raises(ConfigError, match="store"):
        resolve_store(3)  # type: ignore[arg-type]


def test_a_distributed_section_says_where_the_heavy_work_runs(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text(f"output_dir: {tmp_path}\nllm: {{model: m}}\nmutants: 2\n"
                    "distributed: {engine: ray, address: 'ray://head:10001', cpus_per_task: 4}\n")
    config = load_config(path)[1]
    assert config.on_ray().address == "ray://head:10001"
    assert config.on_ray().results_dir == str(tmp_path / "shards")
    path.write_text(f"output_dir: {tmp_path}\nllm: {{model: m}}\nmutants: 2\ndistributed: {{engine: local}}\n")
    assert load_config(path)[1].on_ray() is None
    path.write_text(f"output_dir: {tmp_path}\nllm: {{model: m}}\nmutants: 2\ndistributed: {{engin: ray}}\n")
    with pytest.raises(ConfigError, match=r"run.yaml.distributed: unknown key 'engin' \(did you mean 'engine'\?\)"):
        load_config(path)


def test_search_and_fidelity_sandbox_settings_read_nested_and_in_the_old_flat_form(tmp_path):
    """``search:`` and ``fidelity:`` hold their sandbox settings in ``sandbox:`` (a ``SandboxSettings``); YAML written
    before that (``search: {mode: ..., timeout_s: ...}``) reads the same (``config.nest_flat_keys``)."""
    from evolvecoder_datasets.limits import SandboxSettings

    head = f"output_dir: {tmp_path}\nllm: {{model: m}}\nmutants: 2\n"
    path = tmp_path / "run.yaml"
    path.write_text(head + "evolve: {search: {budget: 10, sandbox: {mode: isolated, timeout_s: 2.0}}}\n"
                    "fidelity: {sandbox: {timeout_s: 3.0}}\n")
    nested = load_config(path)[1]
    path.write_text(head + "evolve: {search: {budget: 10, mode: isolated, timeout_s: 2.0}}\nfidelity: {timeout_s: 3.0}\n")
    flat = load_config(path)[1]
    assert nested == flat
    assert flat.evolve.search.sandbox == SandboxSettings(mode="isolated", timeout_s=2.0)
    assert flat.fidelity.sandbox == SandboxSettings(mode="fast", timeout_s=3.0)  # the rest at the fidelity's default
    path.write_text(head + "evolve: {search: {}}\n")
    default = load_config(path)[1]
    assert default.evolve.search.sandbox == default.fidelity.sandbox == SandboxSettings(mode="fast")
    path.write_text(head + "evolve: {search: {timeout_s: 2.0, sandbox: {timeout_s: 3.0}}}\n")
    with pytest.raises(ConfigError, match=r"run.yaml.evolve.search: timeout_s is given both flat and under sandbox"):
        load_config(path)
    path.write_text(head + "evolve: {search: {sandbox: {mode: quick}}}\n")
    with pytest.raises(ConfigError, match=r"run.yaml.evolve.search.sandbox: mode must be one of"):
        load_config(path)


def test_no_module_imports_the_cli():
    importers = []
    for path in [*(ROOT / "evolvecoder_datasets").rglob("*.py"), *(ROOT / "recipes").glob("*.py")]:
        if path.name == "cli.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
                if node.level and node.module is None:
                    names = [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            if any(n == "cli" or n.endswith(".cli") or n == "evolvecoder_datasets.cli" for n in names):
                importers.append(str(path.relative_to(ROOT)))
    assert importers == []


def test_a_whole_recipe_runs_through_the_cli_against_a_loopback_server(tmp_path):
    responder = ScriptedResponder()
    with ScriptedOpenAIServer(responder) as server:
        writer = {"model": "writer", "base_url": server.base_url, "max_retries": 0, "timeout_s": 30}
        config = {
            "output_dir": str(tmp_path / "run"),
            "sources": ["humaneval"],
            "problem_ids": list(PROBLEM_IDS),
            "dedup": False,
            "rounds": 1,
            "llm": writer,
            "models": [{"name": name, "llm": {**writer, "model": name}, "n": 2} for name in ("alpha", "beta")],
            "mutants": 6,
            "refine": {"num_tests": 8, "min_tests": 4},
            "evolve": {"num_tests": 3},
            "finalize": {"min_tests": 3, "max_perfect": 3},
            "execute": {"mode": "fast", "timeout_s": 1.0, "workers": 2},
            "figures": False,
        }
        (tmp_path / "recipe.yaml").write_text(yaml.safe_dump(config))
        proc = _cli("run", "recipe.yaml", cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert proc.stdout.startswith(f"EvolveCoder run in {tmp_path / 'run'}: 10 seeds -> 8 problems after round 0")
    assert "pushed main of" in proc.stdout and "dropped: refine_no_json 1" in proc.stdout
    store = tmp_path / "run" / "store"
    assert [info.revision for info in list_rounds(store)] == ["round0", "round1", "main"]
    main = load_round(store)
    assert main.column_names == ["id", "question", "tests", "time_limit_s"] and len(main) >= 4
    dropped = load_round(store, config="dropped")
    assert len(dropped) + len(main) == 10 and "refine_no_json" in dropped["reason"]
    proc = _cli("inspect", f"{store}@main", "--dropped")
    assert proc.returncode == 0, proc.stderr
    assert "drop reasons" in proc.stdout and f"dropped problems: {len(dropped)}" in proc.stdout
    for row in dropped:
        assert any(line.split() == [row["id"], row["stage"], row["reason"]] for line in proc.stdout.splitlines())

    # the same file again: every stage and revision is stored, nothing is asked or pushed again
    asked = len(server.requests)
    with ScriptedOpenAIServer(responder) as again:
        config["llm"]["base_url"] = again.base_url
        (tmp_path / "recipe.yaml").write_text(yaml.safe_dump(config))
        proc = _cli("run", "recipe.yaml", cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert again.requests == [] and asked > 0 and "pushed" not in proc.stdout
