"""Search-written tests on HumanEval: how many surviving AST mutants one and two search rounds kill, against random
inputs from the same generators given the same executions.

Run: .venv/bin/python benchmarks/bench_search.py [--problems N] [--budget 2000] [--retire-after 24] [--workers 2]
     [--survivors 30] [--json out.json] [--no-random] [--structure-edits 16]

For every HumanEval problem: the pool is every AST mutant of the canonical solution (``mutants.generate_mutants``);
the suite is the problem's split asserts. Per round:

* **search** (``objective="mutants"``) writes up to ``max_tests`` asserts per problem, spending at most ``budget``
  probe executions (reference runs of candidates + surviving-mutant runs of usable candidates, each survivor asked
  until it first disagrees, and retired after ``retire_after`` agreements as probably equivalent);
* the new asserts run against the whole pool (what a round does with every new test; counted as spent);
* **random** (``objective="random"``): same generators, each problem given exactly the executions the search
  spent on it (probes + pool run), usable inputs kept in random order, each costing one pool run.

Kills are counted from the ordinary pass matrix of the new asserts (not from the probes). Afterwards every search
assert runs against the canonical solutions in a fresh isolated-mode sandbox, and a seeded sample of the mutants
still surviving is written with a long random differential run (a witness input where one is found) for hand
classification (``--survivor-file``).
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import os
import random
import time

import numpy as np

from evolvecoder_datasets.execution import Sandbox
from evolvecoder_datasets.mutants import generate_mutants
from evolvecoder_datasets.sources.humaneval import read_humaneval_records, split_check
from evolvecoder_datasets.stages.search import SearchConfig, SearchProblem, search_tests
from evolvecoder_datasets.stages.search_inputs import InputMutator, recover_call, reference_constants
from evolvecoder_datasets.stages.search_probes import ProbeProgram


def load(n: int | None):
    problems = []
    for record in read_humaneval_records()[:n]:
        reference = record["prompt"] + record["canonical_solution"]
        tests = split_check(record["test"], record["entry_point"]).tests
        mutants = generate_mutants(reference)
        problems.append({"id": record["task_id"].replace("/", "_"), "reference": reference, "tests": tests,
                         "mutants": mutants})
    return problems


def matrix(sb: Sandbox, programs: list[str], tests: list[str]) -> np.ndarray:
    if not programs or not tests:
        return np.zeros((len(programs), len(tests)), bool)
    return sb.pass_matrix(programs, tests)


def run_round(sb, problems, suites, config, round_, budgets=None):
    """One search round over all problems; returns results, new-test matrices and executions spent per problem."""
    inputs = []
    for k, p in enumerate(problems):
        inputs.append(SearchProblem(p["id"], p["reference"], suites[k], [m.code for m in p["mutants"]],
                                    p["M"], budget=None if budgets is None else budgets[k]))
    results = search_tests(inputs, config, round=round_, sandbox=sb)
    jobs, owners = [], []
    for k, (p, r) in enumerate(zip(problems, results)):
        for i, m in enumerate(p["mutants"]):
            if r.tests:
                jobs.append((m.code, r.tests))
                owners.append((k, i))
    reports = sb.run_many(jobs)
    new = [np.zeros((len(p["mutants"]), len(r.tests)), bool) for p, r in zip(problems, results)]
    for (k, i), report in zip(owners, reports):
        new[k][i] = report.passed
    spent = [r.executions + len(p["mutants"]) * len(r.tests) for p, r in zip(problems, results)]
    return results, new, spent


def survivors_of(M: np.ndarray) -> np.ndarray:
    return M.all(axis=1) if M.shape[1] else np.ones(M.shape[0], bool)


def witness_search(sb, problem, mutant_code, seed, n=400):
    """A long differential run (a boundary sweep, then random edits with more exploration than the search's): the
    first input where the mutant and the reference disagree, if any."""
    call = recover_call(problem["tests"])
    if call is None:
        return None, 0
    mutator = InputMutator(call.seeds, seed=seed, explore=0.5, constants=reference_constants(problem["reference"]))
    inputs, seen = [], set()
    queue = mutator.sweep(limit=n // 2)
    for _ in range(20 * n):
        args = queue.pop() if queue else mutator.candidate()
        if repr(args) not in seen and len(repr(args)) < 2000:
            seen.add(repr(args))
            inputs.append(args)
        if len(inputs) == n:
            break
    probe = ProbeProgram(problem["reference"], call.callee, inputs, cpu_s=0.2, max_chars=5000)
    usable = sb.run(probe.program(), probe.usable_tests()).passed
    idx = [k for k, ok in enumerate(usable) if ok]
    same = sb.run(probe.program(mutant_code), probe.same_tests(idx)).passed if idx else []
    for k, ok in zip(idx, same):
        if not ok:
            return inputs[k], len(idx)
    return None, len(idx)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=None, help="first N HumanEval problems (default: all 164)")
    parser.add_argument("--budget", type=int, default=2000, help="probe executions per problem and round")
    parser.add_argument("--max-tests", type=int, default=8, help="search tests kept per problem and round")
    parser.add_argument("--retire-after", type=int, default=SearchConfig.retire_after,
                        help="agreements after which a surviving mutant is given up as probably equivalent")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--survivors", type=int, default=30, help="surviving mutants to sample for inspection")
    parser.add_argument("--survivor-file", default="benchmarks/search_survivors.md")
    parser.add_argument("--json", default=None, help="also write the figures here")
    parser.add_argument("--no-random", action="store_true", help="skip the random baseline (search figures only)")
    parser.add_argument("--structure-edits", type=int, default=getattr(SearchConfig, "structure_edits", 0),
                        help="structure edits asked before a survivor retires (0: the search before issue 24)")
    args = parser.parse_args()

    t0 = time.perf_counter()
    load_start = os.getloadavg()
    problems = load(args.problems)
    n_mutants = sum(len(p["mutants"]) for p in problems)
    print(f"{len(problems)} problems, {n_mutants} mutants, {sum(len(p['tests']) for p in problems)} asserts")
    figures: dict = {"problems": len(problems), "mutants": n_mutants, "budget": args.budget,
                     "retire_after": args.retire_after, "rounds": []}
    search_cfg = SearchConfig(budget=args.budget, max_tests=args.max_tests, seed=args.seed, split=False,
                              retire_after=args.retire_after,
                              **({"structure_edits": args.structure_edits}
                                 if "structure_edits" in SearchConfig.__dataclass_fields__ else {}))
    random_cfg = SearchConfig(budget=args.budget, max_tests=10_000, seed=args.seed, objective="random")
    # a mutant that times out twice in a row is stopped (its remaining cells fail): it has failed already
    with Sandbox(workers=args.workers, mode="fast", timeout_s=1.0, max_consecutive_timeouts=2) as sb:
        for p in problems:
            p["M"] = matrix(sb, [m.code for m in p["mutants"]], p["tests"])
        start_survivors = [survivors_of(p["M"]) for p in problems]
        figures["survivors_original"] = int(sum(s.sum() for s in start_survivors))
        figures["killed_original"] = n_mutants - figures["survivors_original"]
        print(f"original asserts: {figures['killed_original']} killed, {figures['survivors_original']} survive "
              f"({time.perf_counter() - t0:.0f} s)")
        suites = [list(p["tests"]) for p in problems]
        search_tests_all: list[list[str]] = [[] for _ in problems]
        for round_ in range(1, args.rounds + 1):
            before = [survivors_of(p["M"]) for p in problems]
            t = time.perf_counter()
            results, new, spent = run_round(sb, problems, suites, search_cfg, round_)
            search_s = time.perf_counter() - t
            killed = sum(int((b & ~survivors_of(n)).sum()) for b, n in zip(before, new))
            t = time.perf_counter()
            if args.no_random:
                r_results, r_new = [], [np.zeros((len(p["mutants"]), 0), bool) for p in problems]
            else:
                r_results, r_new, _r_spent = run_round(sb, problems, suites, random_cfg, round_, budgets=spent)
            random_s = time.perf_counter() - t
            r_killed = 0 if args.no_random else sum(int((b & ~survivors_of(n)).sum()) for b, n in zip(before, r_new))
            row = {
                "round": round_,
                "survivors_before": int(sum(b.sum() for b in before)),
                "search_killed": killed,
                "search_tests": sum(len(r.tests) for r in results),
                "search_probe_executions": sum(r.executions for r in results),
                "search_executions": sum(spent),
                "search_reads": sum(r.reads for r in results),
                "search_rejected": sum(r.rejected for r in results),
                "search_probe_killed": sum(r.killed for r in results),
                "search_retired": sum(r.retired for r in results),
                "search_candidates": sum(r.candidates for r in results),
                "search_seconds": round(search_s, 1),
                "random_killed": r_killed,
                "random_tests": sum(len(r.tests) for r in r_results),
                "random_executions": sum(r_r.executions for r_r in r_results),
                "random_seconds": round(random_s, 1),
                "reasons": {},
                "killed_ids": sorted(f"{p['id']}#{i}" for p, b, n in zip(problems, before, new)
                                     for i in np.flatnonzero(b & ~survivors_of(n)).tolist()),
            }
            for r in results:
                if r.reason:
                    row["reasons"][r.reason] = row["reasons"].get(r.reason, 0) + 1
            per_k = lambda k, e: 1000 * k / e if e else 0.0
            row["search_kills_per_1k"] = round(per_k(killed, row["search_executions"]), 2)
            row["random_kills_per_1k"] = round(per_k(r_killed, row["random_executions"]), 2)
            row["ratio"] = round(row["search_kills_per_1k"] / row["random_kills_per_1k"], 2) \
                if row["random_kills_per_1k"] else None
            figures["rounds"].append(row)
            print(json.dumps({k: v for k, v in row.items() if k != "killed_ids"}))
            for k, (p, r) in enumerate(zip(problems, results)):  # the search's tests join the suite
                suites[k] += r.tests
                search_tests_all[k] += r.tests
                p["M"] = np.hstack([p["M"], new[k]])
    # every search test against the canonical solution, in a separate isolated-mode run
    with Sandbox(workers=args.workers, mode="isolated", timeout_s=1.0) as iso:
        jobs = [(p["reference"], tests) for p, tests in zip(problems, search_tests_all) if tests]
        reports = iso.run_many(jobs)
    total = sum(len(t) for t in search_tests_all)
    passed = sum(sum(r.passed) for r in reports)
    statuses: dict[str, int] = {}
    for r in reports:
        for status, count in r.counts().items():
            statuses[status] = statuses.get(status, 0) + count
    figures["canonical_check"] = {"tests": total, "passed": passed, "statuses": statuses,
                                  "infra_errors": sorted({r.infra_error for r in reports if r.infra_error})}
    print(f"canonical check (isolated mode, separate run): {passed}/{total} search tests pass "
          f"{figures['canonical_check']}")
    figures["survivors_final"] = int(sum(survivors_of(p["M"]).sum() for p in problems))
    # a sample of the mutants still alive, with a long random differential run, for classification by hand
    alive = [(k, i) for k, p in enumerate(problems) for i in np.flatnonzero(survivors_of(p["M"])).tolist()]
    sample = random.Random(args.seed).sample(alive, min(args.survivors, len(alive)))
    lines = ["# Surviving mutants after the search rounds (seeded sample)", ""]
    witnesses = 0
    with Sandbox(workers=1, mode="fast", timeout_s=1.0) as sb:
        for k, i in sorted(sample):
            p, m = problems[k], problems[k]["mutants"][i]
            witness, tried = witness_search(sb, p, m.code, seed=args.seed + 7)
            witnesses += witness is not None
            diff = "\n".join(difflib.unified_diff(ast.unparse(ast.parse(p["reference"])).splitlines(), m.code.splitlines(), lineterm="",
                                                  n=1))
            lines += [f"## {p['id']} mutant {i}: {m.operator} {m.description} (line {m.lineno})", "",
                      f"random differential: {tried} usable inputs, witness: {witness!r}", "", "```diff", diff,
                      "```", ""]
    with open(args.survivor_file, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines))
    figures["survivor_sample"] = {"size": len(sample), "with_witness": witnesses}
    figures["seconds"] = round(time.perf_counter() - t0, 1)
    figures["load_average_start_end"] = [round(load_start[0], 2), round(os.getloadavg()[0], 2)]
    print(f"survivors: {figures['survivors_original']} -> {figures['survivors_final']}; sample of {len(sample)}: "
          f"{witnesses} with a witness input (written to {args.survivor_file}); total {figures['seconds']} s, "
          f"load average at start and end {figures['load_average_start_end']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(figures, handle, indent=2)


if __name__ == "__main__":
    main()
