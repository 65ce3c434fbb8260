"""Caller CPU per execution: the execution service's client against today's in-process engine, in one run.

Workload: HumanEval's split asserts (problems whose tests need ``check()`` whole are left out), each problem's
canonical solution and up to ``--mutants`` mutants of it, every program against its own asserts. For each mode,
one after the other, the same jobs through:

* ``in-process``: the engine the service's judge processes run (``execution._engine.LocalEngine``), in this process,
  as ``Sandbox`` was before the service: planning, framing and judging on this process's threads;
* ``service``: the public ``Sandbox.run_many`` (one request for the whole batch; the judge is in the service).

Caller CPU is this process's own user + system time (``getrusage(RUSAGE_SELF)``, every thread); the service's is
read from ``/proc`` for the service and its judge processes (not the fork servers, which both paths share). Verdicts
must be identical. Also shown: one ``Sandbox.run`` per job (one round trip each, as ``stages/support/stream.py``
sent before issue 41; ``benchmarks/bench_stream_cpu.py`` measures the stream's chunks).

Run: ``flock /tmp/ecd-heavy.lock .venv/bin/python benchmarks/bench_caller_cpu.py [--problems N] [--mutants K]``
"""

from __future__ import annotations

import argparse
import os
import resource
import time

from evolvecoder_datasets.execution import Job, Sandbox
from evolvecoder_datasets.execution._engine import LocalEngine
from evolvecoder_datasets.mutants import generate_mutants
from evolvecoder_datasets.sources import load_humaneval

CORES = len(os.sched_getaffinity(0))
TICK = os.sysconf("SC_CLK_TCK")


def workload(n_problems: int, n_mutants: int) -> list[Job]:
    ds = load_humaneval()
    jobs = []
    for row in ds.select(range(min(n_problems, len(ds)))):
        tests = list(row["tests"])
        if not tests or any("def check" in t for t in tests):
            continue
        jobs.append(Job(row["solutions"][0], tests=tests))
        jobs += [Job(m.code, tests=tests) for m in generate_mutants(row["solutions"][0], max_mutants=n_mutants, seed=1)]
    return jobs


def caller_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _proc_cpu(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def service_cpu(service_pid: int) -> float:
    """CPU of the service and of its judge processes (its direct children)."""
    total = _proc_cpu(service_pid)
    try:
        for task in os.listdir(f"/proc/{service_pid}/task"):
            with open(f"/proc/{service_pid}/task/{task}/children") as fh:
                total += sum(_proc_cpu(int(p)) for p in fh.read().split())
    except OSError:
        pass
    return total


def measure(run, jobs: list[Job], service_pid: int | None) -> tuple[float, float, float, list]:
    """(caller CPU s, service CPU s, wall s, statuses) of ``run(jobs)``."""
    service_before = service_cpu(service_pid) if service_pid else 0.0
    cpu, wall = caller_cpu(), time.perf_counter()
    reports = run(jobs)
    wall, cpu = time.perf_counter() - wall, caller_cpu() - cpu
    service = service_cpu(service_pid) - service_before if service_pid else 0.0
    return cpu, service, wall, [r.statuses for r in reports]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problems", type=int, default=164)
    parser.add_argument("--mutants", type=int, default=5)
    parser.add_argument("--modes", nargs="+", default=["fast", "isolated"])
    args = parser.parse_args()
    jobs = workload(args.problems, args.mutants)
    executions = sum(j.size for j in jobs)
    print(f"workload: {len(jobs)} programs, {executions} executions (HumanEval split asserts + mutants); "
          f"{CORES} cores; load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    from evolvecoder_datasets.execution._client import Connections

    service_pid = Connections().request(("ping",))[1]
    failed = False
    for mode in args.modes:
        settings = {"workers": CORES, "timeout_s": 1.0, "mode": mode}
        with LocalEngine(**settings) as engine, Sandbox(**settings) as sandbox:
            engine.run_many(jobs[:20])  # warm: servers started, modules imported
            sandbox.run_many(jobs[:20])
            local = measure(engine.run_many, jobs, None)
            served = measure(sandbox.run_many, jobs, service_pid)
            per_job = measure(lambda js: [sandbox.run(j.program, j.tests) for j in js], jobs, service_pid)
        same = local[3] == served[3] == per_job[3]
        differ = [i for i in range(len(jobs)) if not local[3][i] == served[3][i] == per_job[3][i]]
        print(f"\n{mode} mode (verdicts identical: {same}; programs that differ: {len(differ)})")
        for i in differ[:3]:
            print(f"  program {i}: in-process {local[3][i]}\n    service {served[3][i]}\n    per job {per_job[3][i]}")
        for name, (cpu, svc, wall, _) in (("in-process engine", local), ("service, run_many", served),
                                          ("service, one run per job", per_job)):  # fmt: skip
            print(f"  {name:26s} caller {cpu / executions * 1e6:7.2f} us/exec   service {svc / executions * 1e6:7.2f}"
                  f" us/exec   wall {wall:6.2f} s")  # fmt: skip
        print(f"  caller CPU, in-process / service run_many: {local[0] / max(served[0], 1e-9):6.1f}x   "
              f"(target: service <= 5 us/exec)")  # fmt: skip
        failed = failed or not same
    if failed:
        raise SystemExit("verdicts differ between the in-process engine and the service")


if __name__ == "__main__":
    main()
