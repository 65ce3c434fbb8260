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
from evolvecoder_datasets.rounds import load_round, load_round_stats
from evolvecoder_datasets.sources import load_problem_packages, merge_sources
from evolvecoder_datasets.sources.problem_package import load_problem_package

ROOT = Path(__file__).resolve().parents[2]
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
    """The config as a user runs it (`evolvecoder-datasets run CONFIG --output-dir DIR`), in a fresh process."""
    script = Path(sys.executable).with_name("evolvecoder-datasets")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "evolvecoder_datasets.cli"]
    proc = subprocess.run([*command, "run", str(CONFIG), "--output-dir", str(tmp_path / "out")], cwd=ROOT,
                          capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "pushed main" in proc.stdout and "test fidelity (TPR/TNR) by round: 0 1.000/" in proc.stdout
    main = load_round(str(tmp_path / "out" / "store"))
    assert sorted(main["id"]) == ["CodeContests_0", "Package_anyorder", "Package_anypath", "Package_circle",
                                  "Package_sumpair", "TACO_0", "TACO_1", "TACO_2"]
    # each round adds cases (at most 3 per problem a round, so the suite grows round by round)
    counts = [load_round_stats(str(tmp_path / "out" / "store"), r)["num_tests"] for r in (0, 1, 2)]
    assert counts[0] < counts[1] < counts[2], counts
    with Sandbox(workers=2) as sb:
        verdicts = _verdicts_on(main.filter(lambda row: row["id"].startswith("Package_")), sb)
    assert all(ok for _, verdict, ok in verdicts if verdict == "accepted")
    assert not any(ok for _, verdict, ok in verdicts if verdict != "accepted")


ROWS = ROOT / "tests" / "data" / "contest_rows"


def test_taco_and_code_contests_files_evolve_with_a_cpp_reference_and_no_refine_writer(tmp_path):
    """Contest rows as users download them (a TACO JSONL, a CodeContests JSONL whose only accepted solution is C++):
    the recipe reads their layouts, the C++ solution values the inputs of the Python pool, the incorrect Python
    solutions that survive the problem's own cases are killed, and the refine writer (an address nothing listens
    on) is never asked."""
    from evolvecoder_datasets.llm import LLMConfig

    _, config = load_config(CONFIG)
    config = dataclasses.replace(
        config, output_dir=str(tmp_path / "run"), rounds=1, mutants=8, figures=False,
        sources=(str(ROWS / "taco_stdin.jsonl"), str(ROWS / "code_contests_cpp.jsonl")),
        llm=LLMConfig(model="m", base_url="http://127.0.0.1:9/v1", max_retries=0),
        fidelity=dataclasses.replace(config.fidelity, inputs=48))
    result = run_recipe(config)
    before, after = result.rounds
    assert after["id"] == ["TACO_0", "TACO_1", "TACO_2", "CodeContests_0"]
    contest = after[3]
    assert contest["reference_language"] == "cpp" and after["reference_language"][:3] == [None] * 3
    assert contest["language"] == "python" and len(contest["inputs"]) > len(before[3]["inputs"])
    rejected = [s for s in contest["solutions"] if s["model"] == "submission:rejected"]
    assert len(rejected) == 3  # the Python ones; the C++ incorrect solution is not in a Python pool
    survived = [all(row) for s, row in zip(before[3]["solutions"], before[3]["pass_matrix"])
                if s["model"] == "submission:rejected"]
    assert any(survived)  # the problem's own cases let some through
    main = load_round(str(tmp_path / "run" / "store"))
    raw = {r["id"]: r for r in main}
    cc = load_problem_rows(ROWS / "code_contests_cpp.jsonl")[0]
    taco = load_problem_rows(ROWS / "taco_stdin.jsonl")
    with Sandbox(workers=2) as sb:
        for sub in cc["submissions"]:
            report = sb.run_stdio(sub["source"], raw["CodeContests_0"]["inputs"], raw["CodeContests_0"]["outputs"],
                                  language=sub["language"])
            assert report.all_passed == (sub["verdict"] == "accepted"), sub
        for row in taco:
            for code in row["solutions"]:
                assert sb.run_stdio(code, raw[row["id"]]["inputs"], raw[row["id"]]["outputs"]).all_passed
    # the reward scores the published rows as TRL hands them over (every column, one row per completion)
    from evolvecoder_datasets.rewards import code_reward

    scored = [(raw[row["id"]], code) for row in taco for code in row["solutions"]]
    scored += [(raw["CodeContests_0"], s["source"]) for s in cc["submissions"] if s["language"] == "python"]
    columns = {name: [r[name] for r, _ in scored] for name in main.column_names}
    rewards = code_reward(completions=[f"```python\n{code}```" for _, code in scored], **columns)
    assert rewards == [1.0] * 6 + [0.0] * 3
    fidelity = [s["fidelity"]["suite"] for s in result.stats]
    # the TACO rows' accepted solutions are the right programs (a CodeContests pool here has only wrong ones)
    assert fidelity[0]["right"] == 6 and all(f["tpr"] == 1.0 for f in fidelity)
    assert fidelity[-1]["tnr"] > fidelity[0]["tnr"]
    taco_pool = [s["model"] for s in after[0]["solutions"]]
    assert taco_pool.count("submission:accepted") == 2


def load_problem_rows(path: Path):
    from evolvecoder_datasets.sources import adapt_layout

    return adapt_layout(Dataset.from_json(str(path)))


def test_a_local_file_of_function_problems_still_checks_the_refine_writer_first(tmp_path):
    from evolvecoder_datasets.errors import LLMUnavailableError
    from evolvecoder_datasets.llm import LLMConfig
    from evolvecoder_datasets.sources import seed_features

    rows = Dataset.from_list([{"id": "F_1", "source": "x", "question": "Write f() returning 1.",
                               "tests": ["assert f() == 1"], "inputs": [], "outputs": [], "solutions": [],
                               "starter_code": "", "entry_point": "f", "difficulty": None}]).cast(seed_features())
    rows.to_json(tmp_path / "functions.jsonl")
    _, config = load_config(CONFIG)
    config = dataclasses.replace(config, output_dir=str(tmp_path / "run"), sources=(str(tmp_path / "functions.jsonl"),),
                                 llm=LLMConfig(model="m", base_url="http://127.0.0.1:9/v1", max_retries=0))
    with pytest.raises(LLMUnavailableError, match="refine"):
        run_recipe(config)
    assert not (tmp_path / "run" / "stages" / "01_refine").exists()


def test_run_check_reads_the_local_sources_without_loading_them(tmp_path, capsys):
    """`run --check` on the shipped config is valid; a seed file that is missing, or whose columns fit no layout,
    is one error line naming it (exit 2), before anything runs."""
    from evolvecoder_datasets.cli import main

    assert main(["run", str(CONFIG), "--check"]) == 0
    assert "valid evolvecoder recipe" in capsys.readouterr().out
    config = yaml.safe_load(CONFIG.read_text())
    (tmp_path / "odd.jsonl").write_text('{"prompt_text": "x", "answer": "y"}\n')
    for source, message in ((str(tmp_path / "none.jsonl"), "does not exist"),
                            (str(tmp_path / "odd.jsonl"), "fit no known seed layout")):
        path = tmp_path / "c.yaml"
        path.write_text(yaml.safe_dump({**config, "sources": [source]}))
        assert main(["run", str(path), "--check"]) == 2
        err = capsys.readouterr().err
        assert message in err and source in err and err.count("\n") == 1


def test_a_source_holding_both_kinds_runs_one_kind_at_a_time():
    """TACO holds stdin and function problems: a run of both is refused naming `problem_kind`, and each kind loads
    alone (the LLM is never asked: only the seeds are read)."""
    from evolvecoder_datasets.llm import LLMConfig
    from evolvecoder_datasets.recipe import RecipeConfig
    from evolvecoder_datasets.recipe.seeds import load_seeds

    taco = str(ROOT / "tests" / "data" / "sources" / "taco.jsonl")
    base = RecipeConfig(llm=LLMConfig(model="m"), mutants=4, sources=(taco,), dedup=False)
    with pytest.raises(ConfigError, match="problem_kind: stdin"):
        stdin_only(load_seeds(base))
    stdin = load_seeds(dataclasses.replace(base, problem_kind="stdin"))
    functions = load_seeds(dataclasses.replace(base, problem_kind="function", limit_per_source=1))
    assert stdin["id"] == ["TACO_0"] and stdin_only(stdin)
    assert functions["id"] == ["TACO_1"] and not stdin_only(functions)
    with pytest.raises(ConfigError, match="problem_kind"):
        dataclasses.replace(base, problem_kind="both")
