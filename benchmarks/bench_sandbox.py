"""Sandbox throughput and verdict stability, side by side with the baselines, in one run.

Workload: HumanEval canonical solutions and one mutant each (so some are wrong), every program against its asserts
cycled to 30 tests. Measured in this process, one after the other:

* fork floor: fork + immediate exit of a small Python (a fresh ``python -I -S``), one forking process per core;
* fork-per-test floor: the same workload through the smallest fork-per-test harness (load each program once, fork
  a child per test that runs the assert and writes one line, wait), one process per core, nothing else;
* fork-per-program floor: the smallest harness that forks a child per program, which loads it and runs its tests
  in sequence (one line each), one process per core: fast mode's floor;
* ours, isolated mode (fork per test from the loaded solution) and fast mode (tests in sequence);
* AceCoder-style harness: a fresh interpreter per solution, asserts exec'd in shared globals under an in-process
  alarm (what the released EvolveCoder/AceCoder evaluation does);
* HF ``evaluate`` code_eval-style: a ``multiprocessing.Process`` per (program, test) reporting through a Manager
  list, as ``code_eval``'s ``check_correctness`` does (the metric itself cannot load offline here).

Then verdict stability: CPU-bound tests at concurrency 1 versus oversubscribed concurrency, for our CPU-time judge
and for a wall-clock judge.

Run: ``.venv/bin/python benchmarks/bench_sandbox.py [--quick]``
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from evolvecoder_datasets.execution import Job, Sandbox
from evolvecoder_datasets.mutants import generate_mutants
from evolvecoder_datasets.sources import load_humaneval

CORES = len(os.sched_getaffinity(0))


def workload(n_problems: int, n_tests: int = 30) -> list[Job]:
    """Canonical solutions and one mutant each, asserts cycled to ``n_tests``; programs that time out anywhere are
    left out (a looping mutant measures the time limit, not the executor: see the stability section)."""
    ds = load_humaneval()
    jobs = []
    for row in ds.select(range(min(n_problems, len(ds)))):
        tests = [row["tests"][i % len(row["tests"])] for i in range(n_tests)]
        if any("def check" in t for t in tests):
            continue
        jobs.append(Job(row["solutions"][0], tests=tests))
        mutants = generate_mutants(row["solutions"][0], max_mutants=1, seed=1)
        if mutants:
            jobs.append(Job(mutants[0].code, tests=tests))
    with Sandbox(workers=CORES, timeout_s=1.0, mode="fast", max_consecutive_timeouts=1) as sb:
        reports = sb.run_many(jobs)
    return [j for j, r in zip(jobs, reports) if "timeout" not in r.statuses and "unexecuted" not in r.statuses]


# --- fork floor -------------------------------------------------------------------------------------------------
_FORK_LOOP = """
import os, sys, time
n = int(sys.argv[1])
t = time.perf_counter()
for _ in range(n):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
print(time.perf_counter() - t)
"""


def fork_floor(n_per_core: int, *, site: bool = True) -> float:
    """Forks/s of a small Python, one forking process per core: ``python -I`` (~13 MB, the design's reference) or,
    with ``site=False``, ``python -I -S`` (~8 MB, the smallest interpreter)."""
    flags = ["-I"] if site else ["-I", "-S"]
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, *flags, "-c", _FORK_LOOP, str(n_per_core)], stdout=subprocess.PIPE)
             for _ in range(CORES)]  # fmt: skip
    for p in procs:
        p.communicate()
    return n_per_core * CORES / (time.perf_counter() - start)


# The per-test fork floor on the real workload: what any fork-per-test harness must pay. One process per core
# loads each of its programs once and forks a child per test that runs the assert and writes one line; the parent
# waits and reads. No isolation, limits, CPU judging or value hardening: only the fork, the test and the exit.
_FORK_PER_TEST = r"""
import json, os, sys, time
jobs = json.loads(sys.stdin.read())
r, w = os.pipe()
t = time.perf_counter()
for program, tests in jobs:
    g = {}
    try:
        exec(program, g)
    except BaseException:
        continue
    codes = [compile(test, "<test>", "exec") for test in tests]
    for code in codes:
        pid = os.fork()
        if pid == 0:
            try:
                exec(code, g)
                os.write(w, b"pass\n")
            except BaseException:
                os.write(w, b"fail\n")
            os._exit(0)
        os.waitpid(pid, 0)
        os.read(r, 64)
print(time.perf_counter() - t)
"""


def fork_per_test_floor(jobs: list[Job]) -> float:
    """Executions/s of the minimal fork-per-test harness above over ``jobs``, one process per core."""
    return _harness_rate(_FORK_PER_TEST, jobs)


def _harness_rate(script: str, jobs: list[Job]) -> float:
    """Executions/s of a floor harness ``script`` over ``jobs``: one process per core, each fed its share as JSON."""
    shares = [[(j.program, list(j.tests)) for j in jobs[i::CORES]] for i in range(CORES)]
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-I", "-S", "-c", script], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True) for _ in shares]  # fmt: skip
    for proc, share in zip(procs, shares):
        proc.stdin.write(json.dumps(share))
        proc.stdin.close()
    for proc in procs:
        proc.wait()
    return sum(len(j.tests) for j in jobs) / (time.perf_counter() - start)


# The per-program fork floor: the smallest harness that forks one child per program, which loads it and runs its
# tests in sequence (one line each), while the parent waits. What fast mode must be measured against.
_FORK_PER_PROGRAM = r"""
import json, os, sys, time
jobs = json.loads(sys.stdin.read())
r, w = os.pipe()
os.set_blocking(r, False)
t = time.perf_counter()
for program, tests in jobs:
    codes = [compile(test, "<test>", "exec") for test in tests]
    pid = os.fork()
    if pid == 0:
        g = {}
        try:
            exec(program, g)
        except BaseException:
            os._exit(0)
        for code in codes:
            try:
                exec(code, g)
                os.write(w, b"pass\n")
            except BaseException:
                os.write(w, b"fail\n")
        os._exit(0)
    os.waitpid(pid, 0)
    try:
        os.read(r, 1 << 16)
    except BlockingIOError:
        pass
print(time.perf_counter() - t)
"""


def fork_per_program_floor(jobs: list[Job]) -> float:
    """Executions/s of the minimal fork-per-program harness above over ``jobs``, one process per core."""
    return _harness_rate(_FORK_PER_PROGRAM, jobs)


# --- AceCoder-style baseline ------------------------------------------------------------------------------------
_ACECODER_HARNESS = r"""
import json, signal, sys
payload = json.loads(sys.stdin.read())
class _T(Exception):
    pass
def _alarm(*_):
    raise _T()
signal.signal(signal.SIGALRM, _alarm)
g = {}
results = []
try:
    exec(payload["program"], g)
    ok_load = True
except BaseException:
    ok_load = False
for test in payload["tests"]:
    if not ok_load:
        results.append(False)
        continue
    signal.setitimer(signal.ITIMER_REAL, payload["timeout"])
    try:
        exec(test, g)
        results.append(True)
    except BaseException:
        results.append(False)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
print(json.dumps(results))
"""


def acecoder_style(jobs: list[Job], timeout: float, concurrency: int = CORES) -> list[list[bool]]:
    def one(job: Job) -> list[bool]:
        proc = subprocess.run([sys.executable, "-c", _ACECODER_HARNESS], capture_output=True, text=True,
                              input=json.dumps({"program": job.program, "tests": list(job.tests), "timeout": timeout}),
                              timeout=timeout * len(job.tests) + 10)  # fmt: skip
        try:
            return json.loads(proc.stdout.strip().splitlines()[-1])
        except (IndexError, ValueError):
            return [False] * len(job.tests)

    with ThreadPoolExecutor(concurrency) as pool:
        return list(pool.map(one, jobs))


# --- code_eval-style baseline -----------------------------------------------------------------------------------
def _unsafe_execute(program: str, test: str, result) -> None:
    try:
        exec(program + "\n" + test, {})
        result.append("passed")
    except BaseException as err:  # noqa: BLE001
        result.append(f"failed: {err}")


def _check_correctness(program: str, test: str, timeout: float) -> bool:
    manager = multiprocessing.Manager()
    result = manager.list()
    proc = multiprocessing.Process(target=_unsafe_execute, args=(program, test, result))
    proc.start()
    proc.join(timeout=timeout + 1)
    if proc.is_alive():
        proc.kill()
    ok = bool(result) and result[0] == "passed"
    manager.shutdown()
    return ok


def code_eval_style(pairs: list[tuple[str, str]], timeout: float) -> list[bool]:
    with ThreadPoolExecutor(CORES) as pool:
        return list(pool.map(lambda pt: _check_correctness(pt[0], pt[1], timeout), pairs))


# --- verdict stability ------------------------------------------------------------------------------------------
def cpu_bound_jobs(n_programs: int, n_tests: int, cpu_per_test: float) -> list[Job]:
    program = "def work(n):\n    s = 0\n    for i in range(n):\n        s += i * i\n    return s\n"
    with Sandbox(workers=1, timeout_s=10) as sb:
        per_million = sb.run(program, ["assert work(10**6) >= 0"]).cpu_s[0]
    n = int(10**6 * cpu_per_test / max(per_million, 1e-3))
    return [Job(program, tests=[f"assert work({n}) >= 0"] * n_tests) for _ in range(n_programs)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller workload")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    multiprocessing.set_start_method("fork", force=True)
    jobs = workload(40 if args.quick else 120)
    n_exec = sum(len(j.tests) for j in jobs)
    print(f"workload: {len(jobs)} programs x 30 tests = {n_exec} executions; {CORES} cores; python {sys.version.split()[0]}")
    rates: dict[str, list[float]] = {"fork floor (python -I)": [], "fork floor (python -I -S)": [],
                                     "fork-per-test floor": [], "fork-per-program floor": [],
                                     "ours isolated": [], "ours fast": [], "AceCoder-style": [],
                                     "code_eval-style per test": []}  # fmt: skip
    verdicts = {}
    code_eval_pairs = [(j.program, t) for j in jobs[:12] for t in j.tests[:10]]
    with Sandbox(workers=CORES, timeout_s=1.0, mode="isolated") as iso, Sandbox(workers=CORES, timeout_s=1.0,
                                                                                 mode="fast") as fast:
        iso.run_many(jobs[:4])
        fast.run_many(jobs[:4])
        for _ in range(args.rounds):
            rates["fork floor (python -I)"].append(fork_floor(2000))
            rates["fork floor (python -I -S)"].append(fork_floor(2000, site=False))
            rates["fork-per-test floor"].append(fork_per_test_floor(jobs))
            rates["fork-per-program floor"].append(fork_per_program_floor(jobs))
            t = time.perf_counter()
            verdicts["isolated"] = [r.passed for r in iso.run_many(jobs)]
            rates["ours isolated"].append(n_exec / (time.perf_counter() - t))
            t = time.perf_counter()
            verdicts["fast"] = [r.passed for r in fast.run_many(jobs)]
            rates["ours fast"].append(n_exec / (time.perf_counter() - t))
            t = time.perf_counter()
            verdicts["acecoder"] = acecoder_style(jobs, timeout=1.0)
            rates["AceCoder-style"].append(n_exec / (time.perf_counter() - t))
            t = time.perf_counter()
            code_eval_style(code_eval_pairs, timeout=1.0)
            rates["code_eval-style per test"].append(len(code_eval_pairs) / (time.perf_counter() - t))
    med = {k: sorted(v)[len(v) // 2] for k, v in rates.items()}
    print("\nthroughput (executions/s, median of rounds):")
    for k, v in med.items():
        print(f"  {k:28s} {v:8.0f}")
    agree = sum(a == b for a, b in zip(verdicts["isolated"], verdicts["fast"]))
    agree_ace = sum(a == b for a, b in zip(verdicts["isolated"], verdicts["acecoder"]))
    print(f"\nverdicts: isolated vs fast identical on {agree}/{len(jobs)} programs; vs AceCoder-style {agree_ace}/{len(jobs)}")
    print("ratios:")
    print(f"  isolated / fork floor -I     {med['ours isolated'] / med['fork floor (python -I)']:.2f}   (target >= 0.7)")
    print(f"  isolated / fork floor -I -S  {med['ours isolated'] / med['fork floor (python -I -S)']:.2f}")
    print(f"  isolated / fork-per-test     {med['ours isolated'] / med['fork-per-test floor']:.2f}   (target >= 0.7)")
    print(f"  isolated / code_eval-style   {med['ours isolated'] / med['code_eval-style per test']:.1f}   (target >= 10)")
    print(f"  fast / AceCoder-style        {med['ours fast'] / med['AceCoder-style']:.1f}   (target >= 1.5)")
    print(f"  fast / fork-per-program      {med['ours fast'] / med['fork-per-program floor']:.2f}   (target >= 0.7)")

    # Verdict stability under load: CPU-bound tests needing ~0.25 s of CPU with a 0.5 s limit.
    cpu_jobs = cpu_bound_jobs(8, 4, 0.25)
    print("\nverdict stability, CPU-bound tests (~0.25 s CPU each, limit 0.5 s):")
    base = None
    for workers in (1, CORES, 4 * CORES):
        with Sandbox(workers=workers, timeout_s=0.5, wall_timeout_s=30) as sb:
            got = [s for r in sb.run_many(cpu_jobs) for s in r.statuses]
        base = base or got
        changes = sum(a != b for a, b in zip(base, got))
        print(f"  ours, {workers:2d} concurrent programs: {got.count('timeout'):2d} timeouts, {changes} verdict changes vs 1")
    for concurrency in (1, 4 * CORES):
        got = acecoder_style(cpu_jobs, timeout=0.5, concurrency=concurrency)
        flat = [v for row in got for v in row]
        print(f"  wall-clock judge, {concurrency:2d} concurrent: {flat.count(False):2d} false timeouts of {len(flat)}")


if __name__ == "__main__":
    main()
