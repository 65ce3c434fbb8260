"""The execute stage on the local engine and on Ray, same workload, same cores, side by side in one process.

Run: .venv/bin/python benchmarks/bench_distributed.py [--problems 96] [--solutions 8] [--tests 10] [--rounds 3]
     [--shard-size 8] [--cpus-per-task 1]

- local: ``execute_dataset`` (``Dataset.map`` in this process, one sandbox with one fork server per core);
- ray: ``execute_distributed`` on a private local Ray instance with as many CPUs, one fork server per task CPU,
  measured warm (instance started and its workers used once) and reported with the cold start on the side;
- floor: the bare sandbox (``Sandbox.run_many`` over every job at once), i.e. what no engine can beat.

Every round checks that both engines return the same pass matrices. Throughput counts test executions
(solutions x tests).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = tempfile.mkdtemp(prefix="ecd-bench-distributed-")
os.environ.setdefault("HF_HOME", ROOT)
os.environ["HF_DATASETS_CACHE"] = os.path.join(ROOT, "datasets")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _timing import timed
from datasets import Dataset, disable_progress_bars

from evolvecoder_datasets.distributed import DistributedConfig, execute_distributed, init_ray
from evolvecoder_datasets.execution import Job, Sandbox
from evolvecoder_datasets.stages.execute import ExecuteConfig, execute_dataset, solution_codes


def workload(problems: int, solutions: int, tests: int) -> Dataset:
    """In-memory problems (so ``datasets`` never answers from its cache): light asserts, as most real ones are."""
    rows = []
    for i in range(problems):
        codes = [
            f"def f(xs):\n    out = sorted(xs)\n    return out if len(xs) != {(s + i) % tests} else out[::-1]\n"
            for s in range(solutions)
        ]
        cases = [f"assert f({list(range(k, 0, -1))}) == {list(range(1, k + 1))}" for k in range(tests)]
        rows.append({"id": f"B_{i}", "question": f"Sort a list ({i}).", "solutions": codes, "tests": cases})
    return Dataset.from_list(rows)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--problems", type=int, default=96)
    parser.add_argument("--solutions", type=int, default=8)
    parser.add_argument("--tests", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--shard-size", type=int, default=8)
    parser.add_argument("--cpus-per-task", type=int, default=1)
    args = parser.parse_args()
    disable_progress_bars()
    cores = len(os.sched_getaffinity(0))
    ds = workload(args.problems, args.solutions, args.tests)
    executions = args.problems * args.solutions * args.tests
    config = ExecuteConfig(timeout_s=1.0, workers=None, statuses=False)
    distributed = DistributedConfig(num_cpus=cores, cpus_per_task=args.cpus_per_task, shard_size=args.shard_size, progress=False)

    cold_start, _ = timed(lambda: init_ray(distributed))
    first_run, _ = timed(lambda: execute_distributed(ds, config, distributed=distributed))

    jobs = [Job(code, tests=list(row["tests"])) for row in ds for code in solution_codes(row["solutions"])]
    times: dict[str, list[float]] = {"floor": [], "local": [], "ray": []}
    with Sandbox(workers=cores, timeout_s=1.0) as sandbox:
        sandbox.run_many(jobs[:cores])
        for _ in range(args.rounds):
            floor, _ = timed(lambda: sandbox.run_many(jobs))
            local_s, local = timed(lambda: execute_dataset(ds, config, batch_size=args.shard_size))
            ray_s, remote = timed(lambda: execute_distributed(ds, config, distributed=distributed))
            assert remote["pass_matrix"] == local["pass_matrix"], "engines disagree"
            times["floor"].append(floor)
            times["local"].append(local_s)
            times["ray"].append(ray_s)

    median = {name: statistics.median(values) for name, values in times.items()}
    print(f"workload: {args.problems} problems x {args.solutions} solutions x {args.tests} tests = "
          f"{executions:,} executions, {cores} cores, shard_size {args.shard_size}, cpus_per_task {args.cpus_per_task}, "
          f"median of {args.rounds}")  # fmt: skip
    print(f"ray cold start {cold_start:.1f} s; first ray run (workers and fork servers start) {first_run:.1f} s")
    print("| engine | median | executions/s | per core | vs local |")
    print("|---|---|---|---|---|")
    for name in ("floor", "local", "ray"):
        rate = executions / median[name]
        print(f"| {name} | {median[name]:.2f} s | {rate:,.0f} | {rate / cores:,.0f} | "
              f"{median[name] / median['local']:.2f}x time |")  # fmt: skip


if __name__ == "__main__":
    main()
