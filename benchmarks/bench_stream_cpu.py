"""Driver CPU per job on the streamed path against the batched path, side by side in one process (issue 41).

Workload: HumanEval's split asserts (problems whose tests need ``check()`` whole are left out), each problem's
canonical solution and up to ``--mutants`` mutants of it, every program against its own asserts: the pool of a
round. The same jobs run, one after the other and ``--repeats`` times interleaved, through:

* ``batched``: one ``Sandbox.run_many`` over every job (what the search, the oracle and the rounds' rewrites send);
* ``streamed, one job a request``: :func:`~evolvecoder_datasets.stages.support.stream.stream_jobs` with
  ``chunk=1``, one request per job, as the stream sent before issue 41 (round-0 execute, the rounds' new tests);
* ``streamed, chunked``: ``stream_jobs`` with its default chunks (:func:`~evolvecoder_datasets.stages.support.
  stream.stream_shape`).

Each problem is one item of the stream with its reference as the first job (as the execute stage calibrates) and
its pool after it. Driver CPU is this process's user + system time (``getrusage(RUSAGE_SELF)``, every thread: the
stream's senders, and Ray's own threads with ``--ray``); the service's CPU is not in it. Verdicts must be identical
on the three paths. Printed: driver CPU per job and per execution, requests sent per path (counted at the client's
``Connections.run``; one Ray actor call per chunk with ``--ray``), wall, and the ratio streamed / batched.

With ``--ray`` the same runs inside :func:`~evolvecoder_datasets.distributed.execute_on_ray_nodes` on a private
local Ray instance (its one node is this machine; the jobs go through the node's actor to the same service).

Run: ``PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_stream_cpu.py [--problems 164] [--mutants 5]
[--mode fast] [--repeats 3] [--ray]``
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import statistics
import time

from evolvecoder_datasets.execution import Job, Sandbox, _client
from evolvecoder_datasets.stages.support.stream import Plan, stream_jobs, stream_shape

CORES = len(os.sched_getaffinity(0))


def workload(n_problems: int, n_mutants: int) -> list[tuple[Job, list[Job]]]:
    """Per problem: its reference's job and its pool's jobs (the reference and its mutants)."""
    from evolvecoder_datasets.mutants import generate_mutants
    from evolvecoder_datasets.sources import load_humaneval

    ds = load_humaneval()
    problems = []
    for row in ds.select(range(min(n_problems, len(ds)))):
        tests = list(row["tests"])
        if not tests or any("def check" in t for t in tests):
            continue
        reference = row["solutions"][0]
        pool = [reference] + [m.code for m in generate_mutants(reference, max_mutants=n_mutants, seed=1)]
        problems.append((Job(reference, tests=tests), [Job(code, tests=tests) for code in pool]))
    return problems


def driver_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


REQUESTS = [0]


def _count_requests() -> None:
    """Count the requests this process sends to a service (wrapping the real client; under Ray the actors' calls
    are counted by the router's chunks instead)."""
    original = _client.Connections.run

    def run(self, *args, **kwargs):
        REQUESTS[0] += 1
        return original(self, *args, **kwargs)

    _client.Connections.run = run


def batched(sandbox: Sandbox, problems) -> list:
    jobs = [job for first, pool in problems for job in [first, *pool]]
    reports = sandbox.run_many(jobs)
    out, i = [], 0
    for _first, pool in problems:
        out.append([r.statuses for r in reports[i : i + 1 + len(pool)]])
        i += 1 + len(pool)
    return out


def streamed(sandbox: Sandbox, problems, chunk: int | None) -> list:
    plan = lambda p: Plan(lambda _ref: p[1], first=p[0])
    return [[first.statuses] + [r.statuses for r in reports]
            for _p, first, reports in stream_jobs(sandbox, problems, plan, chunk=chunk)]  # fmt: skip


def measure(run) -> tuple[float, float, int, list]:
    """(driver CPU s, wall s, requests, statuses) of ``run()``."""
    requests0, cpu, wall = REQUESTS[0], driver_cpu(), time.perf_counter()
    out = run()
    return driver_cpu() - cpu, time.perf_counter() - wall, REQUESTS[0] - requests0, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problems", type=int, default=164)
    parser.add_argument("--mutants", type=int, default=5)
    parser.add_argument("--mode", default="fast", choices=["fast", "isolated"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ray", action="store_true", help="route the jobs through a local Ray node's actor")
    args = parser.parse_args()
    problems = workload(args.problems, args.mutants)
    jobs = sum(1 + len(pool) for _first, pool in problems)
    executions = sum(first.size + sum(j.size for j in pool) for first, pool in problems)
    print(f"workload: {len(problems)} problems, {jobs} jobs, {executions} executions (HumanEval split asserts, "
          f"reference + up to {args.mutants} mutants); mode {args.mode}; {CORES} cores; load average "
          f"{os.getloadavg()[0]:.1f}; stream shape (requests in flight, jobs a request) "
          f"{stream_shape(CORES)}")  # fmt: skip
    _count_requests()
    router = None
    with contextlib.ExitStack() as stack:
        if args.ray:
            from evolvecoder_datasets.distributed import DistributedConfig
            from evolvecoder_datasets.distributed.nodes import execute_on_ray_nodes

            router = stack.enter_context(execute_on_ray_nodes(DistributedConfig(num_cpus=CORES)))
        sandbox = stack.enter_context(Sandbox(workers=CORES, timeout_s=1.0, mode=args.mode))
        batched(sandbox, problems[:5])  # warm: servers started, modules imported, Ray joined
        paths = {"batched": lambda: batched(sandbox, problems),
                 "streamed, one job a request": lambda: streamed(sandbox, problems, 1),
                 "streamed, chunked": lambda: streamed(sandbox, problems, None)}  # fmt: skip
        runs: dict[str, list] = {name: [] for name in paths}
        calls: dict[str, list] = {name: [] for name in paths}
        for _ in range(args.repeats):
            for name, run in paths.items():
                chunks0 = _actor_calls(router)
                runs[name].append(measure(run))
                calls[name].append(_actor_calls(router) - chunks0 if router else runs[name][-1][2])
    verdicts = {name: r[0][3] for name, r in runs.items()}
    same = len({repr(v) for v in verdicts.values()}) == 1
    names = list(verdicts)
    differ = [i for i in range(len(problems)) if len({repr(verdicts[n][i]) for n in names}) > 1]
    print(f"\nverdicts identical on the three paths: {same} (problems that differ: {len(differ)})")
    for i in differ[:3]:
        print("  problem", i, *(f"\n    {n}: {verdicts[n][i]}" for n in names))
    per_job = {}
    for name, rs in runs.items():
        cpu = statistics.median(r[0] for r in rs)
        wall = statistics.median(r[1] for r in rs)
        per_job[name] = cpu / jobs * 1e6
        unit = "Ray actor calls" if router else "requests"
        print(f"  {name:28s} driver {per_job[name]:8.1f} us/job {cpu / executions * 1e6:7.2f} us/exec   "
              f"{statistics.median(calls[name]):6.0f} {unit}   wall {wall:6.2f} s   "
              f"(CPU s per repeat: {', '.join(f'{r[0]:.2f}' for r in rs)})")  # fmt: skip
    print(f"  driver CPU per job, streamed / batched: one job a request "
          f"{per_job['streamed, one job a request'] / per_job['batched']:.1f}x, chunked "
          f"{per_job['streamed, chunked'] / per_job['batched']:.2f}x (target: <= 2x)")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    if not same:
        raise SystemExit("verdicts differ between the paths")


def _actor_calls(router) -> int:
    """Actor calls the router has made so far (one per chunk); 0 without a router."""
    return getattr(router, "calls", 0) if router is not None else 0


if __name__ == "__main__":
    main()
