"""Fork server of this checkout against a git revision's, interleaved in one process on the sandbox workload.

Only the fork server differs: both engines are this checkout's in-process engine (its client, planner and judge),
one starting the revision's ``execution/_forkserver`` (``git archive`` into ``.bench-baseline/<rev>/``, bound into
the sandbox at that path) and one this checkout's. Each round times the same workload (``bench_sandbox``'s 120
HumanEval problems x 30 tests) on one, then the other; the figure is the median of the per-round ratios, so drift
of the machine's speed between rounds (large on shared VMs) cancels. Statuses are compared every round.

Also per shape, with one worker: one job of 300 one-probe tests (the cost per test) and 100 jobs of one test (the
cost per program).

Run: ``.venv/bin/python benchmarks/bench_forkserver_ab.py --baseline REV [--rounds 5]``
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_sandbox  # noqa: E402

from evolvecoder_datasets.execution import Job, _engine  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = str(ROOT / "evolvecoder_datasets")


def baseline_package(rev: str) -> str:
    """The revision's package folder, extracted once under ``.bench-baseline/`` (not /tmp: the sandbox hides it)."""
    target = ROOT / ".bench-baseline" / rev
    if not (target / "evolvecoder_datasets").is_dir():
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "evolvecoder_datasets"],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return str(target / "evolvecoder_datasets")


def engine(package: str, mode: str, workers: int) -> _engine.LocalEngine:
    """An in-process engine whose fork servers are started from ``package``'s execution folder."""
    real = _engine.server_command
    _engine.server_command = lambda isolation, python_env=None: [arg.replace(PACKAGE, package)
                                                              for arg in real(isolation, python_env)]
    try:
        box = _engine.LocalEngine(workers=workers, timeout_s=1.0, mode=mode)
        box.start()
    finally:
        _engine.server_command = real
    return box


def interleave(before, after, jobs: list[Job], rounds: int) -> tuple[list[float], list[float], list[int]]:
    n = sum(len(j.tests) for j in jobs)
    rate_before, rate_after, differ = [], [], []
    before.run_many(jobs[:8])
    after.run_many(jobs[:8])
    for _ in range(rounds):
        t = time.perf_counter()
        a = [r.statuses for r in before.run_many(jobs)]
        rate_before.append(n / (time.perf_counter() - t))
        t = time.perf_counter()
        b = [r.statuses for r in after.run_many(jobs)]
        rate_after.append(n / (time.perf_counter() - t))
        differ.append(sum(x != y for x, y in zip(a, b)))
    return rate_before, rate_after, differ


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", required=True, help="git revision whose fork server is the baseline")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    base = baseline_package(args.baseline)
    workload = bench_sandbox.workload(120)
    program = "def f(x):\n    return x * 2\n"
    shapes = {"1 job x 300 tests": [Job(program, tests=[f"assert f({i}) == {2 * i}" for i in range(300)])],
              "100 jobs x 1 test": [Job(program + f"# {k}\n", tests=["assert f(3) == 6"]) for k in range(100)]}
    print(f"baseline {args.baseline} against this checkout; {args.rounds} rounds, interleaved")
    for mode in ("isolated", "fast"):
        before, after = engine(base, mode, bench_sandbox.CORES), engine(PACKAGE, mode, bench_sandbox.CORES)
        try:
            a, b, differ = interleave(before, after, workload, args.rounds)
        finally:
            before.close()
            after.close()
        ratio = statistics.median(y / x for x, y in zip(a, b))
        print(f"{mode:8s} workload ({len(workload)} programs x 30): before {[round(v) for v in a]} after "
              f"{[round(v) for v in b]} executions/s; median after/before {ratio:.3f}; programs whose statuses "
              f"differ {differ}")
        before, after = engine(base, mode, 1), engine(PACKAGE, mode, 1)
        try:
            for name, jobs in shapes.items():
                a, b, _ = interleave(before, after, jobs, max(args.rounds, 7))
                n = sum(len(j.tests) for j in jobs)
                per_a, per_b = 1e6 / statistics.median(a), 1e6 / statistics.median(b)
                print(f"{mode:8s} {name}, 1 worker: before {per_a:.1f} us/test, after {per_b:.1f} us/test "
                      f"(x{per_b / per_a:.3f}; {n} tests a round)")
        finally:
            before.close()
            after.close()


if __name__ == "__main__":
    main()
