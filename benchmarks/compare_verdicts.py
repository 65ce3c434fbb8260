"""Verdicts of HumanEval canonical solutions and AST mutants, both modes, dumped for comparing two versions.

Run once per version and diff the dumps (the checkout that is imported decides the version):

    PYTHONPATH=/tmp/oldtree .venv/bin/python benchmarks/compare_verdicts.py /tmp/v_old.json
    .venv/bin/python benchmarks/compare_verdicts.py /tmp/v_new.json --against /tmp/v_old.json
"""

from __future__ import annotations

import argparse
import json
import time

from evolvecoder_datasets.execution import Job, Sandbox
from evolvecoder_datasets.mutants import generate_mutants
from evolvecoder_datasets.sources import load_humaneval


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--against", help="an earlier dump to compare with, cell by cell")
    parser.add_argument("--mutants", type=int, default=4)
    args = parser.parse_args()
    jobs, keys = [], []
    for row in load_humaneval():
        programs = [row["solutions"][0]] + [m.code for m in generate_mutants(row["solutions"][0],
                                                                             max_mutants=args.mutants, seed=1)]
        for k, program in enumerate(programs):
            jobs.append(Job(program, tests=list(row["tests"])))
            keys.append(f"{row['id']}#{k}")
    out: dict = {"n_jobs": len(jobs)}
    for mode in ("isolated", "fast"):
        with Sandbox(workers=2, timeout_s=1.0, mode=mode, max_consecutive_timeouts=2) as sb:
            start = time.perf_counter()
            reports = sb.run_many(jobs)
            out[mode + "_s"] = time.perf_counter() - start
        out[mode] = {k: r.statuses for k, r in zip(keys, reports)}
    with open(args.out, "w") as fh:
        json.dump(out, fh)
    print(f"{len(jobs)} programs, {sum(len(j.tests) for j in jobs)} executions per mode")
    if args.against:
        with open(args.against) as fh:
            before = json.load(fh)
        for mode in ("isolated", "fast"):
            changed = [k for k in out[mode] if out[mode][k] != before[mode].get(k)]
            passes = [sum(s == "pass" for v in d[mode].values() for s in v) for d in (before, out)]
            print(f"{mode}: {len(changed)} programs changed a status; passes {passes[0]} -> {passes[1]}")
            for k in changed[:20]:
                print("  ", k, before[mode].get(k), "->", out[mode][k])


if __name__ == "__main__":
    main()
