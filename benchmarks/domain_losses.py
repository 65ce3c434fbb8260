"""What keeping tests inside each problem's domain cost the search, problem by problem, and what it removed.

Run (after two runs of ``bench_search.py --no-random --survivors 0 --json``, one on a checkout before problem domains
with ``PYTHONPATH`` pointing at it, one on this one):

    .venv/bin/python benchmarks/domain_losses.py BEFORE.json NOW.json [--inputs 1500] [--workers 2]

1. The tests the earlier search published, judged against the preconditions shipped with HumanEval's statements
   (:mod:`evolvecoder_datasets.sources.statement_domains`), in the sandbox: how many lie outside, per problem.
2. Every mutant the earlier search killed and this one does not: a long differential run inside the domain (a boundary
   sweep of the reference's constants and random edits with wide exploration, every input admitted by the
   precondition, the reference's usable ones compared with the mutant's) looks for an input of the domain on which
   the mutant is wrong. None found: the kill needed an input outside the domain (the mutant is right on everything the
   statement defines, as far as ``--inputs`` inputs show). Found: the search could have kept it and did not.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter

from evolvecoder_datasets.code_names import defined_names
from evolvecoder_datasets.execution import Sandbox
from evolvecoder_datasets.mutants import generate_mutants
from evolvecoder_datasets.search.calls import recover_call
from evolvecoder_datasets.search.inputs import InputMutator, reference_constants
from evolvecoder_datasets.search.probes import ProbeProgram
from evolvecoder_datasets.sources.humaneval import read_humaneval_records, split_check
from evolvecoder_datasets.stages.support.domains import admitted_tests, problem_domain


def killed(figures: dict) -> set[str]:
    return {i for r in figures["rounds"] for i in r["killed_ids"]}


def witness(sb: Sandbox, reference: str, tests: list[str], pid: str, mutant: str, n: int) -> tuple[bool, int]:
    """Whether an input inside the problem's domain tells ``mutant`` from the reference, and how many were usable."""
    call = recover_call(tests, defined=defined_names(reference))
    domain = problem_domain(pid, call.seeds)
    mutator = InputMutator(call.seeds, seed=11, explore=0.5, constants=reference_constants(reference))
    inputs, seen = [], set()
    queue = mutator.sweep(limit=n // 3) + mutator.sweep_pairs(limit=n // 6) + mutator.structured(limit=n // 6)
    for _ in range(20 * n):
        args = queue.pop() if queue else mutator.candidate()
        key = repr(args)
        if key not in seen and len(key) < 1000 and domain.violation(args) is None:
            seen.add(key)
            inputs.append(args)
        if len(inputs) >= n:
            break
    probe = ProbeProgram(reference, call.callee, inputs, cpu_s=0.2, max_chars=5000, precondition=domain.contract)
    usable = sb.run(probe.program(), probe.usable_tests()).passed
    idx = [k for k, ok in enumerate(usable) if ok]
    same = sb.run(probe.program(mutant), probe.same_tests(idx)).passed if idx else []
    return (not all(same)), len(idx)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("now")
    parser.add_argument("--inputs", type=int, default=1500)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    before, now = (json.load(open(p, encoding="utf-8")) for p in (args.before, args.now))
    records = {r["task_id"].replace("/", "_"): r for r in read_humaneval_records()}
    out: dict = {}
    with Sandbox(workers=args.workers, mode="fast", timeout_s=1.0) as sb:
        # 1. the earlier tests against the statements' domains
        work, ids = [], []
        for pid, tests in (before.get("search_tests") or {}).items():
            r = records[pid]
            reference = r["prompt"] + r["canonical_solution"]
            call = recover_call(split_check(r["test"], r["entry_point"]).tests, defined=defined_names(reference))
            work.append((problem_domain(pid, call.seeds if call else ()), call.callee if call else None, tests))
            ids.append(pid)
        gates = admitted_tests(work, sb)
        outside = {pid: sum(not ok for ok in keep) for pid, (keep, _) in zip(ids, gates) if not all(keep)}
        rules = Counter()
        for _, counts in gates:
            rules.update(counts)
        total = sum(len(t) for _, _, t in work)
        out["before_outside"] = {"tests": sum(outside.values()), "of": total, "problems": outside, "rules": dict(rules)}
        print(f"earlier search tests outside the statement domain: {sum(outside.values())} of {total} in "
              f"{len(outside)} problems {outside}")
        # 2. the kills lost, each tried inside the domain
        lost = sorted(killed(before) - killed(now), key=lambda i: (int(i.split("#")[0].split("_")[1]), int(i.split("#")[1])))
        rows: dict[str, dict] = {}
        for item in lost:
            pid, index = item.split("#")
            r = records[pid]
            reference = r["prompt"] + r["canonical_solution"]
            mutant = generate_mutants(reference)[int(index)]
            found, usable = witness(sb, reference, split_check(r["test"], r["entry_point"]).tests, pid, mutant.code,
                                    args.inputs)
            row = rows.setdefault(pid, {"lost": 0, "in_domain_witness": 0, "needed_outside": 0, "mutants": []})
            row["lost"] += 1
            row["in_domain_witness" if found else "needed_outside"] += 1
            row["mutants"].append(f"#{index} {mutant.operator}: {mutant.description} "
                                  f"({'an in-domain input tells it apart' if found else 'right on'} {usable} usable "
                                  f"in-domain inputs)")
        out["lost"] = rows
        out["gained"] = sorted(killed(now) - killed(before))
    for pid, row in rows.items():
        print(f"{pid}: lost {row['lost']}, needed an input outside the domain {row['needed_outside']}, "
              f"in-domain witness {row['in_domain_witness']}")
        for m in row["mutants"]:
            print("    " + m)
    print(f"killed before {len(killed(before))}, now {len(killed(now))}; lost {len(lost)} "
          f"(needed outside {sum(r['needed_outside'] for r in rows.values())}), gained {len(out['gained'])}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(out, handle, indent=2)


if __name__ == "__main__":
    main()
