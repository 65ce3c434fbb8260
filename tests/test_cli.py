"""The `evolvecoder-datasets` command: each command over a real local store, and clear errors."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import types
from pathlib import Path

import pytest
from datasets import Dataset

from evolvecoder_datasets.cli import config_from_dict, main
from evolvecoder_datasets.errors import ConfigError, MissingExtraError
from evolvecoder_datasets.rounds import push_round


@pytest.fixture
def store(tmp_path):
    rows = Dataset.from_dict({"id": ["A_1", "A_2"], "question": ["q1", "q2"], "tests": [["assert 1"], ["assert 2"]]})
    path = tmp_path / "store"
    push_round(rows, path, 0, stats={"num_problems": 2, "num_tests": 2, "pass_at_k": {"1": 0.5}})
    push_round(rows.select([0]), path, 1, stats={"num_problems": 1, "num_tests": 1, "pass_at_k": {"1": 0.25}})
    return path


def test_rounds_lists_revisions_with_headline_numbers(store, capsys):
    assert main(["rounds", str(store)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["revision", "commit", "tags", "problems", "tests", "mean", "tests", "pass@1",
                                "mutation"]
    assert lines[1].split()[0] == "round0" and lines[1].split()[2:6] == ["round0-v1", "2", "2", "1.00"]
    assert lines[2].split()[-2] == "0.250" and lines[3].startswith("main")


def test_inspect_prints_statistics_with_deltas(store, capsys):
    assert main(["inspect", f"{store}@1"]) == 0
    out = capsys.readouterr().out
    assert "round 1: 1 problems, 1 tests" in out and "pass@1: 0.500 → 0.250" in out


def test_card_rerenders_to_a_file_and_pushes(store, tmp_path, capsys):
    target = tmp_path / "README.md"
    assert main(["card", f"{store}@round1", "-o", str(target)]) == 0
    name = Path(store).parent.name  # the run the store belongs to, not the folder name "store"
    text = target.read_text()
    assert "config_name: default" in text and f"(EvolveCoder run {name}) — round 1" in text
    assert main(["card", f"{store}@round1", "--push"]) == 0


def test_missing_revision_exits_1_with_one_error_line(store, capsys):
    assert main(["inspect", f"{store}@9"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: revision 'round9' not found") and err.count("\n") == 1


@dataclasses.dataclass(frozen=True)
class Inner:
    threshold: float = 0.1


@dataclasses.dataclass(frozen=True)
class RecipeConfig:
    repo_id: str
    rounds: int = 4
    models: list[str] = dataclasses.field(default_factory=list)
    filters: Inner = Inner()
    mode: str | None = None

    def __post_init__(self):
        if self.rounds < 1:
            raise ValueError("rounds must be >= 1")


@pytest.fixture
def recipe(monkeypatch):
    module = types.ModuleType("evolvecoder_datasets.recipe")
    module.RecipeConfig = RecipeConfig
    module.calls = []

    def run(config):
        module.calls.append(config)
        if config.repo_id == "needs/extra":
            raise MissingExtraError("vllm", "vllm", "sampling")
        return f"ran {config.rounds} rounds"

    module.run = run
    monkeypatch.setitem(sys.modules, "evolvecoder_datasets.recipe", module)
    return module


def test_run_validates_the_yaml_and_calls_the_recipe(recipe, tmp_path, capsys):
    cfg = tmp_path / "run.yaml"
    cfg.write_text("repo_id: ./out\nrounds: 2\nmodels: [a, b]\nfilters: {threshold: 1}\n")
    assert main(["run", str(cfg)]) == 0
    assert recipe.calls == [RecipeConfig("./out", 2, ["a", "b"], Inner(1.0))]
    assert capsys.readouterr().out.strip() == "ran 2 rounds"
    assert main(["run", str(cfg), "--check"]) == 0 and len(recipe.calls) == 1


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        ("repo_id: x\nround: 2\n", "unknown key 'round' (did you mean 'rounds'?)"),
        ("repo_id: x\nrounds: two\n", "run.yaml.rounds: expected an integer, got 'two'"),
        ("repo_id: x\nfilters: {treshold: 1}\n", "unknown key 'treshold'"),
        ("rounds: 2\n", "missing required key(s) ['repo_id']"),
        ("repo_id: x\nrounds: 0\n", "rounds must be >= 1"),
        ("repo_id: [x\n", "is not valid YAML"),
        ("- a\n- b\n", "expected a mapping"),
    ],
)
def test_bad_configs_exit_2_with_a_clear_message(recipe, tmp_path, capsys, yaml_text, message):
    cfg = tmp_path / "run.yaml"
    cfg.write_text(yaml_text)
    assert main(["run", str(cfg)]) == 2
    assert message in capsys.readouterr().err
    assert recipe.calls == []


def test_missing_extra_exits_1_naming_the_pip_install(recipe, tmp_path, capsys):
    cfg = tmp_path / "run.yaml"
    cfg.write_text("repo_id: needs/extra\n")
    assert main(["run", str(cfg)]) == 1
    assert "pip install 'evolvecoder-datasets[vllm]'" in capsys.readouterr().err


def test_run_without_a_recipe_module_says_so(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "evolvecoder_datasets.recipe", None)
    cfg = tmp_path / "run.yaml"
    cfg.write_text("repo_id: x\n")
    assert main(["run", str(cfg)]) == 2
    assert "no recipe runner" in capsys.readouterr().err


def test_config_from_dict_checks_nested_types():
    with pytest.raises(ConfigError, match=r"filters.threshold: expected a number"):
        config_from_dict(RecipeConfig, {"repo_id": "x", "filters": {"threshold": "high"}})
    assert config_from_dict(RecipeConfig, {"repo_id": "x", "mode": None}).mode is None


def test_the_module_runs_as_a_command():
    proc = subprocess.run([sys.executable, "-m", "evolvecoder_datasets.cli", "--help"], capture_output=True,
                          text=True)
    assert proc.returncode == 0 and all(c in proc.stdout for c in ("run", "card", "inspect", "rounds"))


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_an_unreachable_hub_is_one_error_line_not_a_traceback(capsys):
    # The test session runs with HF_HUB_OFFLINE=1: huggingface_hub raises OfflineModeIsEnabled (an OSError).
    assert main(["rounds", "org/evolve-run"]) == 1
    assert "'org/evolve-run'" in _one_error_line(capsys)
    assert main(["inspect", "org/evolve-run@2"]) == 1
    _one_error_line(capsys)


def test_an_invalid_repository_id_exits_2_with_one_error_line(capsys):
    assert main(["inspect", "@1"]) == 2
    assert "neither a Hub dataset repository id nor a local store path" in _one_error_line(capsys)


def test_an_unwritable_card_output_exits_2_with_one_error_line(store, tmp_path, capsys):
    assert main(["card", f"{store}@1", "-o", str(tmp_path / "no" / "such" / "README.md")]) == 2
    assert "cannot write the card" in _one_error_line(capsys)
    assert main(["card", f"{store}@1", "-o", str(tmp_path)]) == 2
    _one_error_line(capsys)


def test_a_broken_card_template_exits_2_naming_the_line(store, tmp_path, capsys):
    template = tmp_path / "mine.md.jinja"
    template.write_text("---\n{{ card_data }}\n---\n{% if round %}\nno endif\n")
    assert main(["card", f"{store}@1", "--template", str(template)]) == 2
    assert "mine.md.jinja, line" in _one_error_line(capsys)


def test_a_binary_config_file_exits_2_with_one_error_line(recipe, tmp_path, capsys):
    cfg = tmp_path / "run.yaml"
    cfg.write_bytes(b"\xff\xfe\x00r\x00o")
    assert main(["run", str(cfg)]) == 2
    assert "not a UTF-8 text file" in _one_error_line(capsys)


def test_a_yaml_syntax_error_is_one_line_with_its_position(recipe, tmp_path, capsys):
    cfg = tmp_path / "run.yaml"
    cfg.write_text("repo_id: x\nmodels: [a,\n")
    assert main(["run", str(cfg)]) == 2
    assert "run.yaml is not valid YAML: line 3, column 1" in _one_error_line(capsys)


def test_run_options_set_keys_over_the_files_and_a_key_the_recipe_lacks_is_one_line(recipe, tmp_path, capsys):
    cfg = tmp_path / "run.yaml"
    cfg.write_text("repo_id: ./out\nrounds: 2\n")
    assert main(["run", str(cfg), "--rounds", "3"]) == 0
    assert recipe.calls[-1] == RecipeConfig("./out", 3)
    assert capsys.readouterr().out.strip() == "ran 3 rounds"
    # this recipe has no output_dir: the same error as a typo in the file, naming the key
    assert main(["run", str(cfg), "--output-dir", str(tmp_path / "x")]) == 2
    assert "unknown key 'output_dir'" in capsys.readouterr().err
    assert main(["run", str(cfg), "--rounds", "0"]) == 2 and "rounds must be >= 1" in capsys.readouterr().err
