"""The model's test writers on HumanEval survivors: inputs from the model with values from the reference, against the
paper's whole asserts and the search, side by side in one process.

Run: .venv/bin/python benchmarks/bench_model_writers.py [--problems demo|N] [--num-tests 4] [--model qwen2.5-coder-0.5b]
     [--cache-dir runs/bench-writers] [--json out.json]

For every problem: the pool is the AST mutants of the canonical solution (``mutants.generate_mutants``, at most 40)
and the suite the problem's split asserts; the **survivors** are the mutants that pass it. Each method writes tests
for the same problems:

* **inputs** (``EvolveConfig(test_mode="inputs")``): the model, shown the reference and the first three survivors
  as diffs against it (as the demo's writer is), proposes calls (``prompts.inputs``, JSON Schema enforced by
  llama.cpp); each is valued by the reference in the sandbox (``search.valued``);
* **asserts** (``test_mode="asserts"``, the paper's): the model, shown the first two survivors, the second as a
  diff, writes whole asserts, expected values included;
* **search** (no model): ``search_tests`` with the executions the input mode spent on that problem as its budget.

Per method: tests written, **wrong tests** (asserts the canonical solution fails), survivors killed by the tests the
reference passes, problems with a kill, model tokens (prompt + completion), seconds, and kills per 1,000 tokens.
Both model methods send one request per problem with the same sampling (temperature 0.7, seed per problem); the
answers are cached under ``--cache-dir``, so a rerun measures the rest without the model (its token counts are the
cached ones; seconds then exclude generation and say so).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from evolvecoder_datasets.errors import LLMResponseError
from evolvecoder_datasets.execution import Sandbox
from evolvecoder_datasets.llm import LLMConfig, make_backend
from evolvecoder_datasets.mutants import generate_mutants
from evolvecoder_datasets.prompts import adversarial, inputs
from evolvecoder_datasets.recipe.config import DEMO_HUMANEVAL
from evolvecoder_datasets.search.inputs import recover_call
from evolvecoder_datasets.search.valued import ValueRequest, value_inputs
from evolvecoder_datasets.search.writer import SearchConfig, SearchProblem, search_tests
from evolvecoder_datasets.sources.humaneval import read_humaneval_records, split_check


def load(which: str):
    records = read_humaneval_records()
    if which == "demo":
        records = [records[k] for k in DEMO_HUMANEVAL]
    else:
        records = records[: int(which)]
    problems = []
    for record in records:
        reference = record["prompt"] + record["canonical_solution"]
        tests = split_check(record["test"], record["entry_point"]).tests
        call = recover_call(tests)
        if call is None or not call.seeds:
            continue
        mutants = [m.code for m in generate_mutants(reference, max_mutants=40, seed=0)]
        problems.append({"id": record["task_id"].replace("/", "_"), "question": record["prompt"],
                         "reference": reference, "tests": tests, "mutants": mutants, "call": call})
    return problems


def kills(sb: Sandbox, problem: dict, tests: list[str]) -> tuple[int, int]:
    """(wrong tests, survivors killed by the reference-passing ones)."""
    if not tests:
        return 0, 0
    ok = np.asarray(sb.run(problem["reference"], tests).passed, bool)
    kept = [t for t, good in zip(tests, ok) if good]
    survivors = problem["survivors"]
    if not kept or not survivors:
        return int((~ok).sum()), 0
    M = sb.pass_matrix(survivors, kept)
    return int((~ok).sum()), int((~M.all(axis=1)).sum())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", default="demo", help="'demo' (the demo's 16 HumanEval seeds) or the first N")
    parser.add_argument("--num-tests", type=int, default=4)
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--cache-dir", default="runs/bench-writers")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)

    problems = load(args.problems)
    with Sandbox(workers=2, mode="fast") as sb:
        for p in problems:
            M = sb.pass_matrix(p["mutants"], p["tests"]) if p["mutants"] else np.zeros((0, 0), bool)
            p["survivors"] = [m for m, row in zip(p["mutants"], M) if row.all()]
        problems = [p for p in problems if p["survivors"]]
        print(f"{len(problems)} problems with survivors ({sum(len(p['survivors']) for p in problems)} survivors)")
        requests = {"inputs": [], "asserts": []}
        for k, p in enumerate(problems):
            shown = p["survivors"][:2]
            sampling = {"temperature": 0.7, "max_tokens": 300, "seed": k}
            requests["inputs"].append(inputs.build_request(
                "adversarial", p["question"], p["call"].callee, p["survivors"][:3], p["tests"],
                example=p["call"].seeds[0], num_tests=args.num_tests, reference=p["reference"], **sampling))
            requests["asserts"].append(adversarial.build_request(
                p["question"], shown, p["tests"], [[True] * len(p["tests"])] * len(shown), num_tests=args.num_tests,
                **sampling))
        rows = {}
        config = LLMConfig(backend="llamacpp", model=args.model, cache_dir=args.cache_dir, max_concurrency=4)
        with make_backend(config) as llm:
            for mode in ("inputs", "asserts"):
                start = time.perf_counter()
                answers = llm.generate(requests[mode], return_exceptions=True, desc=mode)
                generation = time.perf_counter() - start
                tokens = sum(a.total_tokens for a in answers if not isinstance(a, BaseException))
                cached = all(getattr(a, "cached", False) for a in answers)
                tests_by_problem = []
                start = time.perf_counter()
                if mode == "inputs":
                    asked = []
                    for p, a in zip(problems, answers):
                        try:
                            if isinstance(a, BaseException):
                                raise LLMResponseError(str(a), reason="llm")
                            found = inputs.parse(a.text, p["call"].callee).inputs
                        except LLMResponseError:
                            found = []
                        asked.append(ValueRequest(p["reference"], p["call"].callee, found))
                    tests_by_problem = [v.tests for v in value_inputs(asked, sb)]
                else:
                    for a in answers:
                        try:
                            if isinstance(a, BaseException):
                                raise LLMResponseError(str(a), reason="llm")
                            tests_by_problem.append(adversarial.parse(a.text).tests)
                        except LLMResponseError:
                            tests_by_problem.append([])
                valued = time.perf_counter() - start
                counts = [kills(sb, p, t) for p, t in zip(problems, tests_by_problem)]
                rows[mode] = {"tests": sum(map(len, tests_by_problem)), "wrong": sum(c[0] for c in counts),
                              "killed": sum(c[1] for c in counts), "problems_killed": sum(c[1] > 0 for c in counts),
                              "tokens": tokens, "seconds": round(generation + valued, 1),
                              "generation_cached": cached}
                if mode == "inputs":
                    budgets = [len(t) * (13 + 8 * 12) + len(p["survivors"]) * len(t) + args.num_tests
                               for p, t in zip(problems, tests_by_problem)]
        start = time.perf_counter()
        found = search_tests([SearchProblem(p["id"], p["reference"], p["tests"], p["survivors"],
                                            np.ones((len(p["survivors"]), len(p["tests"])), bool),
                                            budget=max(1, b))
                              for p, b in zip(problems, budgets)], SearchConfig(max_tests=args.num_tests), sandbox=sb)
        counts = [kills(sb, p, r.tests) for p, r in zip(problems, found)]
        rows["search"] = {"tests": sum(len(r.tests) for r in found), "wrong": sum(c[0] for c in counts),
                          "killed": sum(c[1] for c in counts), "problems_killed": sum(c[1] > 0 for c in counts),
                          "tokens": 0, "seconds": round(time.perf_counter() - start, 1), "generation_cached": None}
    print(f"\n{'method':<8} {'tests':>6} {'wrong':>6} {'killed':>7} {'problems':>9} {'tokens':>8} {'seconds':>8} "
          f"{'kills/1k tok':>13}")
    for mode, r in rows.items():
        per_k = f"{1000 * r['killed'] / r['tokens']:.2f}" if r["tokens"] else "-"
        print(f"{mode:<8} {r['tests']:>6} {r['wrong']:>6} {r['killed']:>7} {r['problems_killed']:>9} "
              f"{r['tokens']:>8} {r['seconds']:>8} {per_k:>13}")
    print(f"(survivors: {sum(len(p['survivors']) for p in problems)}; search budget per problem = the input mode's "
          "reads and pool runs; generation cached: " + str(rows["inputs"]["generation_cached"]) + ")")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
