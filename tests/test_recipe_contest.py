"""The recipe on contest problems as they are: a folder of problem packages, no model, rounds of the stdin search,
published with what judges them; and the shipped config through the CLI, in a fresh process."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from datasets import Dataset

from evolvecoder_datasets.config import load_config
from evolvecoder_datasets.errors import ConfigError
from evolvecoder_datasets.execution import Sandbox
from evolvecoder_datasets.recipe import run_recipe
from evolvecoder_datasets.recipe.stdin import stdin_only
from evolvecoder_datasets.rounds import load_round
from evolvecoder_datasets.sources import load_problem_packages, merge_sources
from evolvecoder_datasets.sources.problem_package import load_problem_package

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ROOT / "tests" / "data" / "problem_packages"
CONFIG = ROOT / "recipes" / "configs" / "contest_packages.yaml"


def _verdicts_on(published, sb: Sandbox) -> list[tuple[str, str, bool]]:
    """Each labelled submission (not Java) of each published problem, on every published case."""
    out = []
    for row in published:
        package = load_problem_package(PACKAGES / row["id"].removeprefix("Package_"))
        for sub in package["submissions"]:
            if sub["language"] == "java":
                continue
            report = sb.run_stdio(sub["source"], row["inputs"], row["outputs"], language=sub["language"],
                                  checker=row["checker"], float_tol=row["float_tol"])
            out.append((row["id"], sub["verdict"], report.all_passed))
    return out


def test_packages_keep_what_judges_them_through_merge_and_a_mix_is_refused():
    packages = load_problem_packages(PACKAGES)
    merged = merge_sources(packages)
    for name in ("checker", "float_tol", "time_limit_s", "language", "submissions"):
        assert merged[name] == packages[name]
    assert stdin_only(merged)
    functions = Dataset.from_list([{**{k: None for k in ("source", "question", "solutions", "starter_code",
                                                         "entry_point", "difficulty")},
                                    "id": "F_1", "source": "x", "question": "q", "tests": ["assert f() == 1"],
                                    "inputs": [], "outputs": [], "solutions": []}])
    from evolvecoder_datasets.sources import seed_features

    mixed = merge_sources(packages, functions.cast(seed_features()))
    assert mixed["checker"][-1] is None and mixed["submissions"][-1] is None
    with pytest.raises(ConfigError, match="mix"):
        stdin_only(mixed)


def test_the_recipe_evolves_packages_and_publishes_cases_every_accepted_submission_passes(tmp_path):
    kind, config = load_config(CONFIG)
    assert kind == "evolvecoder" and config.models == () and config.evolve.methods == ("search",)
    config = dataclasses.replace(config, output_dir=str(tmp_path / "run"), sources=(str(PACKAGES),), rounds=1,
                                 mutants=8, figures=False, problem_ids=("Package_sumpair", "Package_anyorder"),
                                 fidelity=dataclasses.replace(config.fidelity, inputs=48))
    result = run_recipe(config)
    before, after = result.rounds
    grown = [(len(b["inputs"]), len(a["inputs"])) for b, a in zip(before, after)]
    assert any(n1 > n0 for n0, n1 in grown)
    added = [o for origins in after["test_origin"] for o in origins[:] if o["method"] == "search"]
    assert added and all(o["round"] == 1 for o in added)
    models = {s["model"] for sols in after["solutions"] for s in sols}
    assert "mutant" in models and "submission:accepted" in models and "submission:wrong_answer" in models
    main = load_round(str(tmp_path / "run" / "store"))
    assert {"inputs", "outputs", "checker", "float_tol", "language", "time_limit_s"} <= set(main.column_names)
    with Sandbox(workers=2) as sb:
        verdicts = _verdicts_on(main, sb)
    assert all(ok for _, verdict, ok in verdicts if verdict == "accepted")
    assert not any(ok for _, verdict, ok in verdicts if verdict != "accepted")
    fidelity = [s["fidelity"]["suite"] for s in result.stats]
    assert all(f["tpr"] == 1.0 for f in fidelity) and fidelity[-1]["tnr"] >= fidelity[0]["tnr"]
    # the packages' labelled submissions are their own kind, never counted as model samples (there are none here)
    assert {"submission", "mutant"} <= set(result.stats[0]["fidelity"]["by_kind"])
    assert "sample" not in result.stats[0]["fidelity"]["by_kind"]
    assert all(math.isnan(p) for p in result.pass_at_1())  # no model sample: the submissions do not count as one


@pytest.mark.slow
def test_the_shipped_contest_config_runs_through_the_cli(tmp_path):
    """The config as a user runs it (`evolvecoder-datasets run`), its output folder moved into the test's."""
    config = yaml.safe_load(CONFIG.read_text())
    config["output_dir"] = str(tmp_path / "out")
    config["sources"] = [str(PACKAGES)]
    path = tmp_path / "contest.yaml"
    path.write_text(yaml.safe_dump(config))
    script = Path(sys.executable).with_name("evolvecoder-datasets")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "evolvecoder_datasets.cli"]
    proc = subprocess.run([*command, "run", str(path)], cwd=ROOT, capture_output=True, text=True, timeout=900,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "pushed main" in proc.stdout and "test fidelity (TPR/TNR) by round: 0 1.000/" in proc.stdout
    main = load_round(str(tmp_path / "out" / "store"))
    assert len(main) == 4
    with Sandbox(workers=2) as sb:
        verdicts = _verdicts_on(main, sb)
    assert all(ok for _, verdict, ok in verdicts if verdict == "accepted")
    assert not any(ok for _, verdict, ok in verdicts if verdict != "accepted")
