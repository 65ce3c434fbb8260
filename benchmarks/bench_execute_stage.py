"""The recipe's execute stage at 120 HumanEval problems with AST mutants: batch barrier, streaming, calibrated limits.

Run: ``.venv/bin/python benchmarks/bench_execute_stage.py [--problems 120] [--mutants 15] [--batch-size 8]
[--repeats 1]``

The workload is what the recipe's round 0 executes: HumanEval problems (their seed asserts) with a pool of the
reference plus AST mutants (the recipe's sample stage with ``mutants``, no LLM), isolated mode, 1 s fixed limit.
Some mutants loop (a loop counter mutated the wrong way), which is where the time went before issue 15.

Timed on the same dataset, in this one process, one sandbox (``CORES`` fork servers):

1. **before**: what ``execute_dataset`` did before issue 15: ``Sandbox.run_many`` per ``Dataset.map`` batch of
   ``--batch-size`` problems (each batch waits for its slowest job), fixed limit, every test of a looper run
   (``max_consecutive_timeouts=None``, the execute stage's old default);
2. **one run, fixed**: the same jobs as one ``run_many`` (the throughput a barrier-free stage should reach);
3. **stage, fixed**: ``execute_dataset(calibrate=False)`` now (streamed, shared timeout policy of 2 in a row);
4. **stage, calibrated**: ``execute_dataset()`` now: references first, pool under the calibrated limit;
5. **one run, calibrated**: the same jobs as 4 (references, then the pool with the limits 4 wrote) as one
   ``run_many`` each.

Runs 2-5 are interleaved ``--repeats`` times (median), so a change of load hits both sides of a ratio alike.

Reported: wall time, executions per second, the stage's throughput against its one-run twin (target >= 0.9x),
timeouts and the CPU time they were allowed (each timeout costs its limit), and the verdict check: on every program
whose every test finished within its problem's calibrated limit in the fixed-limit run (CPU time measured there),
the statuses under the calibrated limit must be identical to the fixed-limit ones (target: 0 differences).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = tempfile.mkdtemp(prefix="ecd-bench-execute-")
os.environ.setdefault("HF_HOME", ROOT)
os.environ["HF_DATASETS_CACHE"] = os.path.join(ROOT, "datasets")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from datasets import Dataset, disable_caching, disable_progress_bars

from evolvecoder_datasets.execution import Job, shared_sandbox
from evolvecoder_datasets.llm import LLMConfig
from evolvecoder_datasets.recipe import RecipeConfig, load_seeds
from evolvecoder_datasets.schema import TIME_LIMIT
from evolvecoder_datasets.stages.execute import ExecuteConfig, execute_dataset, solution_codes
from evolvecoder_datasets.stages.sample import SampleConfig, sample_dataset

CORES = len(os.sched_getaffinity(0))


def pool(problems: int, mutants: int) -> Dataset:
    """HumanEval seeds with the recipe's pool (reference + AST mutants), with the confirmed reference kept."""
    config = RecipeConfig(sources=("humaneval",), limit_per_source=problems, mutants=mutants, dedup=False,
                          llm=LLMConfig(model="unused"))  # fmt: skip
    seeds = load_seeds(config)
    seeds = seeds.add_column("reference_solutions", seeds["solutions"]).add_column("reference_ok", [True] * len(seeds))
    pooled = sample_dataset(seeds.remove_columns(["solutions"]), SampleConfig(mutants=mutants, seed=0))
    keep = ["id", "tests", "solutions", "reference_solutions", "reference_ok"]
    path = os.path.join(ROOT, "pool")
    Dataset.from_list(pooled.select_columns(keep).to_list()).save_to_disk(path)
    return Dataset.load_from_disk(path)  # on disk, as the recipe's checkpoints are: the stage caches to a file


def jobs_of(ds: Dataset, limits: list[float | None] | None = None) -> tuple[list[Job], list[int]]:
    """Every (program, tests) job of the pool, with the row's limit when given; and the row of each job."""
    jobs, owners = [], []
    for i, (solutions, tests) in enumerate(zip(ds["solutions"], ds["tests"])):
        limit = limits[i] if limits is not None else None
        for code in solution_codes(solutions):
            jobs.append(Job(code, tests=list(tests), timeout_s=limit))
            owners.append(i)
    return jobs, owners


def timeouts_of(statuses: list[list[str]], limits: list[float]) -> tuple[int, float]:
    """Number of timeout cells, and the CPU seconds they were allowed (each costs its job's limit)."""
    count = [sum(s == "timeout" for s in row) for row in statuses]
    return sum(count), sum(c * limit for c, limit in zip(count, limits))


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--problems", type=int, default=120)
    parser.add_argument("--mutants", type=int, default=15)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=1, help="rounds of the four runs at equal limits (median)")
    args = parser.parse_args()
    disable_progress_bars()
    disable_caching()  # every repeat of the stage computes (its results then stay in memory)
    load_start = os.getloadavg()[0]
    ds = pool(args.problems, args.mutants)
    fixed = ExecuteConfig(mode="isolated", timeout_s=1.0, calibrate=False)
    before = dataclasses.replace(fixed, max_consecutive_timeouts=None)
    calibrated = ExecuteConfig(mode="isolated", timeout_s=1.0)
    jobs, owners = jobs_of(ds)
    executions = sum(job.size for job in jobs)
    results: list[tuple[str, float, int, float]] = []

    # 1. before: one run_many per batch of problems, every test of a looper run
    sandbox = shared_sandbox(**before.sandbox_settings())
    sandbox.start()
    bounds = [(start, min(start + args.batch_size, len(ds))) for start in range(0, len(ds), args.batch_size)]

    first_job = [0] * (len(ds) + 1)  # jobs of row i are jobs[first_job[i]:first_job[i + 1]]
    for i in owners:
        first_job[i + 1] += 1
    for i in range(len(ds)):
        first_job[i + 1] += first_job[i]

    def batchwise():
        reports = []
        for start, stop in bounds:
            reports += sandbox.run_many(jobs[first_job[start] : first_job[stop]])
        return reports

    seconds, reports = timed(batchwise)
    n = sum(r.statuses.count("timeout") for r in reports)
    allowed = n * 1.0
    results.append((f"before: run_many per batch of {args.batch_size} problems, fixed 1 s, no timeout policy",
                    seconds, n, allowed))  # fmt: skip
    print(f"before: {seconds:.1f} s", flush=True)
    seconds, reports_one = timed(lambda: sandbox.run_many(jobs))
    n = sum(r.statuses.count("timeout") for r in reports_one)
    results.append(("same jobs as one run_many, fixed 1 s, no timeout policy", seconds, n, n * 1.0))

    # 2-5. the stage and its one-run twin at equal limits, interleaved, median of --repeats
    fixed_box = shared_sandbox(**fixed.sandbox_settings())
    cal_box = shared_sandbox(**calibrated.sandbox_settings())
    references = [Job(refs[0], tests=list(tests)) for refs, tests in zip(ds["reference_solutions"], ds["tests"])]
    times: dict[str, list[float]] = {"one_fixed": [], "stage_fixed": [], "stage_cal": [], "one_cal": []}
    for _ in range(args.repeats):
        seconds, fixed_reports = timed(lambda: fixed_box.run_many(jobs))
        times["one_fixed"].append(seconds)
        seconds, stage_fixed = timed(lambda: execute_dataset(ds, fixed, batch_size=args.batch_size))
        times["stage_fixed"].append(seconds)
        seconds, stage_cal = timed(lambda: execute_dataset(ds, calibrated, batch_size=args.batch_size))
        times["stage_cal"].append(seconds)
        limits = list(stage_cal[TIME_LIMIT])
        limited, _ = jobs_of(ds, limits)
        seconds, _ = timed(lambda: (cal_box.run_many(references), cal_box.run_many(limited)))  # noqa: B023
        times["one_cal"].append(seconds)
        print({k: round(v[-1], 1) for k, v in times.items()}, flush=True)
    median = {k: statistics.median(v) for k, v in times.items()}
    one_fixed, stage_fixed_s, stage_cal_s, one_cal = (median[k] for k in ("one_fixed", "stage_fixed", "stage_cal",
                                                                          "one_cal"))  # fmt: skip
    n = sum(r.statuses.count("timeout") for r in fixed_reports)
    results.append(("same jobs as one run_many, fixed 1 s, 2 timeouts in a row stop a program", one_fixed, n, n * 1.0))
    n, allowed = timeouts_of([s for row in stage_fixed["statuses"] for s in row], [1.0] * len(jobs))
    results.append((f"execute_dataset, fixed 1 s (streamed, batch_size {args.batch_size})", stage_fixed_s, n, allowed))
    cal_statuses = [s for row in stage_cal["statuses"] for s in row]
    job_limits = [min(limits[i] or 1.0, 1.0) for i in owners]
    n_cal, allowed_cal = timeouts_of(cal_statuses, job_limits)
    results.append((f"execute_dataset, calibrated limits (streamed, batch_size {args.batch_size})", stage_cal_s, n_cal,
                    allowed_cal))  # fmt: skip
    results.append(("same jobs as one run_many each (references, then the pool), calibrated", one_cal, n_cal,
                    allowed_cal))  # fmt: skip

    # verdicts: programs that finished every test within their calibrated limit in the fixed-limit run
    checked = differ = 0
    for i, (job_report, cal) in enumerate(zip(fixed_reports, cal_statuses)):
        limit = job_limits[i]
        if "timeout" in job_report.statuses or "unexecuted" in job_report.statuses:
            continue
        if any(c >= limit for c in job_report.cpu_s):
            continue
        checked += 1
        differ += list(job_report.statuses) != list(cal)
    unchanged_matrix = sum(a != b for a, b in zip(stage_fixed["pass_matrix"], stage_cal["pass_matrix"]))

    print(f"workload: {len(ds)} HumanEval problems x (reference + up to {args.mutants} mutants) = {len(jobs)} programs, "
          f"{executions:,} isolated executions, {CORES} cores; load average {load_start:.1f} at start, "
          f"{os.getloadavg()[0]:.1f} at end")  # fmt: skip
    print(f"calibrated limits: {sum(x is not None for x in limits)} of {len(limits)} problems, "
          f"{sorted({x for x in limits if x is not None})} s\n")
    print("| run | wall | executions/s | timeouts | CPU s the timeouts were allowed |")
    print("|---|---:|---:|---:|---:|")
    for label, seconds, n, allowed in results:
        print(f"| {label} | {seconds:.1f} s | {executions / seconds:,.0f} | {n} | {allowed:.1f} |")
    print(f"\nstage vs one run at equal limits: fixed {one_fixed / stage_fixed_s:.2f}x, calibrated "
          f"{one_cal / stage_cal_s:.2f}x throughput (target >= 0.9x)")
    print(f"timeout time, before -> calibrated: {results[0][3]:.1f} -> {allowed_cal:.1f} CPU s "
          f"({results[0][3] / max(allowed_cal, 1e-9):.1f}x less; target >= 5x)")
    print(f"verdicts: {checked} programs finished every test within the calibrated limit in the fixed run; "
          f"{differ} of them changed under calibrated limits (target 0). Problems whose pass matrix differs between "
          f"fixed and calibrated: {unchanged_matrix} (programs over the calibrated limit)")


if __name__ == "__main__":
    main()
