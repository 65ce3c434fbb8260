"""Test fidelity per round on HumanEval: TPR/TNR of each round's suite against an oracle, over the AST mutants and
the semantics-preserving rewrites of every canonical solution.

Run: .venv/bin/python benchmarks/bench_fidelity.py [--problems N] [--ids HumanEval_124 ...] [--rounds 2]
     [--inputs 300] [--cheap-bytes 1024] [--workers 2] [--json out.json]

Per HumanEval problem: the pool is every AST mutant of the canonical solution (``mutants.generate_mutants``) plus
its rewrites (``mutants.rewrites.rewrite_program``); the oracle (``search.oracle``, its own seed, never used to
choose a test) labels each right or wrong; rewrites the oracle calls wrong are left out and counted. Round 0's suite
is the problem's split asserts; each later round adds the search writer's tests (the configuration of
``bench_search.py``: budget 2000, 8 tests, no splits), written against the mutants only. Every suite runs under
the problem's calibrated time limit (10x the reference's slowest test, at least 0.1 s, at most 1 s), as a recipe's
rounds do, in fast mode. Printed per round: right/wrong programs and TPR, TNR, FPR, FNR, overall, per kind
(mutant, rewrite) and per method (seed, search); then the final filter's two rules on the last round (the paper's
at most 5 per identical pass vector, and the greedy set cover), with their test counts, each with the low-pass-rate
rule as the paper has it and with ``trust_reference`` (tests the reference passes are never dropped for a low pass
rate). The final filter counts the whole pool (mutants and rewrites) as solutions, as the demo does
(``exclude_models: []``); no problem is dropped for perfect solutions here (the pool has no model samples).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from evolvecoder_datasets import passmatrix
from evolvecoder_datasets.execution import Job, Sandbox
from evolvecoder_datasets.limits import SandboxSettings
from evolvecoder_datasets.metrics.fidelity import ProblemFidelity, fidelity_report
from evolvecoder_datasets.mutants import generate_mutants
from evolvecoder_datasets.mutants.rewrites import rewrite_program
from evolvecoder_datasets.search.oracle import FidelityConfig, OracleProblem, build_oracles, label_programs
from evolvecoder_datasets.search.writer import SearchConfig, SearchProblem, search_tests
from evolvecoder_datasets.sources.humaneval import read_humaneval_records, split_check


def load(n: int | None, ids: list[str] | None = None) -> list[dict]:
    problems = []
    for record in read_humaneval_records()[:n]:
        if ids and record["task_id"].replace("/", "_") not in ids:
            continue
        reference = record["prompt"] + record["canonical_solution"]
        tests = split_check(record["test"], record["entry_point"]).tests
        problems.append({"id": record["task_id"].replace("/", "_"), "reference": reference, "tests": tests,
                         "mutants": [m.code for m in generate_mutants(reference)],
                         "rewrites": rewrite_program(reference)})
    return problems


def run_suite(sb: Sandbox, programs: list[str], tests: list[str], limit: float | None) -> tuple[np.ndarray, np.ndarray]:
    if not programs or not tests:
        return np.zeros((len(programs), len(tests)), bool), np.zeros((len(programs), len(tests)), object)
    reports = sb.run_many([Job(p, tests=tests, timeout_s=limit) for p in programs])
    S = np.array([r.statuses for r in reports], dtype=object).reshape(len(programs), len(tests))
    return S == "pass", S


def fidelity_rows(problems: list[dict], columns: list[np.ndarray] | None = None) -> dict:
    rows = []
    for k, p in enumerate(problems):
        if p["labels"] is None:
            rows.append(ProblemFidelity(p["id"], np.zeros((0, 0), bool), None, reason=p["reason"]))
            continue
        M, S, methods = p["M"], p["S"], p["methods"]
        if columns is not None:
            M, S, methods = M[:, columns[k]], S[:, columns[k]], [methods[c] for c in columns[k]]
        rows.append(ProblemFidelity(p["id"], M, p["labels"], kinds=p["kinds"], methods=methods, statuses=S))
    return fidelity_report(rows, max_listed=30)


def show(name: str, report: dict) -> None:
    def line(label: str, e: dict) -> str:
        rate = lambda v: "    -" if v is None else f"{v:.3f}"
        return (f"  {label:<22} right {e['right']:>5}  wrong {e['wrong']:>5}  TPR {rate(e['tpr'])}  "
                f"TNR {rate(e['tnr'])}  FPR {rate(e['fpr'])}  FNR {rate(e['fnr'])}")

    print(f"{name}: {report['problems']} problems with an oracle, without: {report['no_oracle'] or 0}")
    print(line("suite", report["suite"]))
    for kind, e in report["by_kind"].items():
        print(line(f"kind {kind}", e))
    for method, e in report["by_method"].items():
        print(line(f"method {method}", e))
    print(f"  rejects a right program: {report['rejects_right']['problems']} problems "
          f"{[(r['id'], r['programs'], r['cause']) for r in report['rejects_right']['listed']]}")
    print(f"  accepts a wrong program: {report['accepts_wrong']['problems']} problems, "
          f"{report['accepts_wrong']['programs']} programs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=None, help="first N HumanEval problems (default: all 164)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--inputs", type=int, default=FidelityConfig.inputs, help="oracle inputs per problem")
    parser.add_argument("--candidates", type=int, default=FidelityConfig.candidates)
    parser.add_argument("--cheap-bytes", type=int, default=FidelityConfig.cheap_bytes,
                        help="keep every usable input where their compressed values fit in this (0: --inputs only)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ids", nargs="*", default=None, help="only these problems (e.g. HumanEval_124)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    t0 = time.perf_counter()
    load_start = os.getloadavg()
    problems = load(args.problems, args.ids)
    fid = FidelityConfig(inputs=args.inputs, candidates=args.candidates, cheap_bytes=args.cheap_bytes)
    out: dict = {"problems": len(problems), "mutants": sum(len(p["mutants"]) for p in problems), "rounds": []}
    settings = SandboxSettings()
    with Sandbox(workers=args.workers, mode="fast", timeout_s=1.0, max_consecutive_timeouts=2) as sb:
        t = time.perf_counter()
        oracles = build_oracles([OracleProblem(p["id"], p["reference"], p["tests"], p["mutants"]) for p in problems], fid,
                                sandbox=sb)
        out["oracle_build_s"] = round(time.perf_counter() - t, 1)
        t = time.perf_counter()
        labels = label_programs(oracles, [p["mutants"] + [r.code for r in p["rewrites"]] for p in problems], fid,
                                sandbox=sb)
        out["label_s"] = round(time.perf_counter() - t, 1)
        sizes = [len(o.tests) for o in oracles if o.available]
        out["oracle"] = {"problems": len(sizes), "inputs_mean": round(float(np.mean(sizes)), 1),
                         "inputs_min": min(sizes), "reads": sum(o.reads for o in oracles),
                         "candidates": sum(o.candidates for o in oracles),
                         "no_oracle": {o.id: o.reason for o in oracles if not o.available}}
        rewrites_total = rewrites_right = 0
        wrong_rewrites = []
        for p, oracle, lab in zip(problems, oracles, labels):
            p["reason"] = oracle.reason
            if lab is None:
                p["labels"] = None
                continue
            m = len(p["mutants"])
            keep = [r for r, ok in zip(p["rewrites"], lab[m:]) if ok == 1]
            wrong_rewrites += [(p["id"], r.kind) for r, ok in zip(p["rewrites"], lab[m:]) if ok != 1]
            rewrites_total += len(p["rewrites"])
            rewrites_right += len(keep)
            p["programs"] = p["mutants"] + [r.code for r in keep]
            p["kinds"] = ["mutant"] * m + ["rewrite"] * len(keep)
            p["labels"] = np.concatenate([lab[:m], np.ones(len(keep), np.int8)])
        out["rewrites"] = {"generated": rewrites_total, "right": rewrites_right, "wrong": wrong_rewrites}
        out["pool"] = {"right_mutants": int(sum(int((p["labels"][: len(p["mutants"])] == 1).sum())
                                                for p in problems if p["labels"] is not None)),
                       "wrong_mutants": int(sum(int((p["labels"][: len(p["mutants"])] == 0).sum())
                                                for p in problems if p["labels"] is not None))}
        print(f"{len(problems)} problems; oracle: {out['oracle']['problems']} problems, {out['oracle']['inputs_mean']} "
              f"inputs each (min {out['oracle']['inputs_min']}), built in {out['oracle_build_s']} s, labels in "
              f"{out['label_s']} s; mutants right/wrong {out['pool']}; rewrites right {rewrites_right}/{rewrites_total}"
              f" (wrong: {wrong_rewrites})")
        # round 0: the split asserts, under calibrated limits
        refs = sb.run_many([(p["reference"], p["tests"]) for p in problems])
        for p, rep in zip(problems, refs):
            cpus = [c for c, ok in zip(rep.cpu_s, rep.passed) if ok]
            p["limit"] = settings.calibrated_limit(cpus)
            p.setdefault("programs", p["mutants"])
            p.setdefault("kinds", ["mutant"] * len(p["mutants"]))
            p["suite"] = list(p["tests"])
            p["methods"] = ["seed"] * len(p["tests"])
            p["M"], p["S"] = run_suite(sb, p["programs"], p["suite"], p["limit"])
        report = fidelity_rows(problems)
        show("round 0", report)
        out["rounds"].append({"round": 0, **report})
        search_cfg = SearchConfig(budget=2000, max_tests=8, seed=args.seed, split=False)
        for r in range(1, args.rounds + 1):
            t = time.perf_counter()
            mutant_rows = [len(p["mutants"]) for p in problems]
            results = search_tests([SearchProblem(p["id"], p["reference"], p["suite"], p["mutants"],
                                                  p["M"][: mutant_rows[k]]) for k, p in enumerate(problems)],
                                   search_cfg, round=r, sandbox=sb)
            for p, res in zip(problems, results):
                if res.tests:
                    M, S = run_suite(sb, p["programs"], res.tests, p["limit"])
                    p["M"], p["S"] = np.hstack([p["M"], M]), np.hstack([p["S"], S])
                    p["suite"] += res.tests
                    p["methods"] += ["search"] * len(res.tests)
            report = fidelity_rows(problems)
            report["search_tests"] = sum(len(res.tests) for res in results)
            report["seconds"] = round(time.perf_counter() - t, 1)
            show(f"round {r} (+{report['search_tests']} search tests)", report)
            out["rounds"].append({"round": r, **report})
        # the final filter's two rules on the last round (the pool counted whole, as the demo does)
        rules = {}
        for trusted in (False, True):
            for rule in passmatrix.REDUCE_RULES:
                columns, tests, too_few = [], 0, 0
                for p in problems:
                    outcome = passmatrix.final_filter_outcome(
                        p["M"], rng=np.random.default_rng(args.seed), reduce=rule, max_perfect=10**6,
                        exempt=np.arange(p["M"].shape[1]) if trusted else None)
                    columns.append(outcome.kept)
                    tests += len(outcome.kept)
                    too_few += outcome.drop_reason == passmatrix.TOO_FEW_TESTS
                report = fidelity_rows(problems, columns)
                name = f"{rule}{' trust_reference' if trusted else ''}"
                rules[name] = {"tests": tests, "too_few_tests": too_few, **report}
                show(f"final, rule {name} ({tests} tests; {too_few} problems under 5 tests)", report)
        out["final"] = rules
        # the right programs the last round rejects, with the first test that rejects each (what the oracle missed)
        out["rejected_right"] = [
            {"id": p["id"], "program": int(i), "kind": p["kinds"][i], "limit": p["limit"], "code": p["programs"][i],
             "test": p["suite"][int(np.argmax(~p["M"][i]))], "status": p["S"][i][int(np.argmax(~p["M"][i]))]}
            for p in problems if p["labels"] is not None
            for i in np.flatnonzero((p["labels"] == 1) & ~p["M"].all(axis=1))]
        # a timeout under the calibrated limit: re-run under the oracle's own 1 s to tell a limit too tight for a
        # slower right program ("pass") from a hang on an input the oracle lacks ("timeout": an oracle miss)
        slow = [r for r in out["rejected_right"] if r["status"] == "timeout"]
        for r, rep in zip(slow, sb.run_many([Job(r["code"], tests=[r["test"]], timeout_s=1.0) for r in slow])):
            r["status_at_1s"] = rep.statuses[0]
        for r in out["rejected_right"]:
            print(f"  rejected right: {r['id']} #{r['program']} ({r['kind']}, {r['status']} under {r['limit']} s): "
                  f"{r['test'][:160]}" + (f" (at 1 s: {r['status_at_1s']})" if "status_at_1s" in r else ""))
    out["seconds"] = round(time.perf_counter() - t0, 1)
    out["load_average_start_end"] = [round(load_start[0], 2), round(os.getloadavg()[0], 2)]
    print(f"total {out['seconds']} s, load average at start and end {out['load_average_start_end']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(out, handle, indent=2, default=str)


if __name__ == "__main__":
    main()
