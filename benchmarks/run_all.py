"""Run every benchmark once with a small, quick configuration (what ``make bench`` calls).

Run:
    .venv/bin/python benchmarks/run_all.py              # every benchmark, quick sizes, one after the other
    .venv/bin/python benchmarks/run_all.py --list       # what would run, with its arguments
    .venv/bin/python benchmarks/run_all.py --only sandbox reward
    .venv/bin/python benchmarks/run_all.py --full       # each benchmark's own default sizes (the RESULTS.md runs)

Quick sizes show that each benchmark runs and what it prints; the figures in ``RESULTS.md`` come from the full
sizes named there, on an otherwise idle machine. Each benchmark runs in its own process (they set their own
cache folders and environment); its output streams through. A benchmark whose optional dependency is missing
(Ray, sentence-transformers) fails with its own message and the others still run. The summary at the end lists
each one's exit status and wall time; the exit status is 1 when any failed.

Every ``bench_*.py`` in this folder must be listed in :data:`BENCHMARKS` (``tests/test_bench_runner.py`` checks),
so a new benchmark is not silently left out of ``make bench``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRATCH = Path(tempfile.gettempdir()) / "ecd-run-all"

#: name -> (script, quick arguments). The quick arguments keep each run to seconds or a few minutes on 2 cores.
BENCHMARKS: dict[str, tuple[str, list[str]]] = {
    "passmatrix": ("bench_passmatrix.py", []),
    "rounds": ("bench_rounds.py", ["--rows", "2000", "--repeats", "1"]),
    "llm_client": ("bench_llm_client.py", ["--requests", "300", "--rounds", "1"]),
    "sandbox": ("bench_sandbox.py", ["--quick", "--rounds", "1"]),
    "isolation": ("bench_isolation.py", ["--rounds", "5"]),
    "forkserver_ab": ("bench_forkserver_ab.py", ["--baseline", "HEAD", "--rounds", "1"]),
    "reward": ("bench_reward.py", ["--repeats", "1", "--modes", "fast"]),
    "reward_http": ("bench_reward_http.py", ["--repeats", "1", "--mode", "fast"]),
    "caller_cpu": ("bench_caller_cpu.py", ["--problems", "16", "--mutants", "2"]),
    "stream_cpu": ("bench_stream_cpu.py", ["--problems", "16", "--mutants", "2", "--repeats", "1"]),
    "execute_stage": ("bench_execute_stage.py", ["--problems", "16", "--mutants", "3"]),
    "checkpoint_disk": ("bench_checkpoint_disk.py", ["--problems", "8", "--rounds", "1"]),
    "dedup": ("bench_dedup.py", ["--n", "5000", "--rounds", "1", "--skip-real"]),
    "distributed": ("bench_distributed.py", ["--problems", "16", "--rounds", "1"]),
    "recipe_ray": ("bench_recipe_ray.py", ["--problems", "8", "--mutants", "3", "--rounds", "1", "--no-ray-data"]),
    "search": ("bench_search.py", ["--problems", "4", "--budget", "200", "--rounds", "1", "--survivors", "0",
                                   "--survivor-file", str(SCRATCH / "search_survivors.md")]),
    "code_instruct": ("bench_code_instruct.py", ["--runs", "2"]),
    "contest": ("bench_contest.py", ["--programs", "8", "--cases", "4", "--compiles", "1"]),
    "stdio_search": ("bench_stdio_search.py", ["--mutants", "12", "--oracle", "60"]),
    "fidelity": ("bench_fidelity.py", ["--problems", "4", "--rounds", "1", "--inputs", "32", "--candidates", "96"]),
    "scale": ("bench_scale.py", ["--sizes", "4", "8"]),
    "model_writers": ("bench_model_writers.py", ["--problems", "6", "--num-tests", "2",
                                                 "--cache-dir", str(SCRATCH / "model-writers")]),
}


def unlisted() -> list[str]:
    """``bench_*.py`` files of this folder that :data:`BENCHMARKS` does not list.

    Example:
        >>> unlisted()
        []
    """
    listed = {script for script, _ in BENCHMARKS.values()}
    return sorted(p.name for p in HERE.glob("bench_*.py") if p.name not in listed)


def command(name: str, *, full: bool = False) -> list[str]:
    """The command line that runs benchmark ``name`` (quick arguments unless ``full``).

    Example:
        >>> command("rounds")[-4:]
        ['--rows', '2000', '--repeats', '1']
    """
    script, quick = BENCHMARKS[name]
    return [sys.executable, str(HERE / script), *([] if full else quick)]


def run(names: list[str], *, full: bool = False, timeout_s: float | None = None) -> list[tuple[str, int, float]]:
    """Run the benchmarks ``names`` one after the other; ``(name, exit status, seconds)`` for each.

    A benchmark that runs past ``timeout_s`` is stopped and reported with status 124.

    Example:
        >>> run(["rounds"], timeout_s=600)  # doctest: +SKIP
        [('rounds', 0, 4.2)]
    """
    SCRATCH.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE.parent), os.environ.get("PYTHONPATH")]))}
    results = []
    for name in names:
        cmd = command(name, full=full)
        print(f"\n=== {name}: {' '.join(cmd[1:])}", flush=True)
        started = time.monotonic()
        try:
            status = subprocess.run(cmd, cwd=HERE.parent, env=env, timeout=timeout_s, check=False).returncode
        except subprocess.TimeoutExpired:
            status = 124
        results.append((name, status, time.monotonic() - started))
    return results


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv``, run, print the summary; the exit status is 1 when a benchmark failed.

    Example:
        >>> main(["--list"])  # doctest: +ELLIPSIS
        passmatrix: ...
        0
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=sorted(BENCHMARKS), help="run these benchmarks only")
    parser.add_argument("--full", action="store_true", help="each benchmark's own default sizes")
    parser.add_argument("--timeout", type=float, default=None, help="seconds allowed per benchmark")
    parser.add_argument("--list", action="store_true", help="print what would run and exit")
    args = parser.parse_args(argv)
    names = args.only or list(BENCHMARKS)
    missing = unlisted()
    if missing:
        print(f"warning: not in benchmarks/run_all.py BENCHMARKS, so not run: {', '.join(missing)}", file=sys.stderr)
    if args.list:
        for name in names:
            print(f"{name}: {' '.join(command(name, full=args.full)[1:])}")
        return 0
    results = run(names, full=args.full, timeout_s=args.timeout)
    print("\n=== summary")
    for name, status, seconds in results:
        print(f"{name:<16} {'ok' if status == 0 else f'FAILED ({status})':<12} {seconds:8.1f} s")
    return 0 if all(status == 0 for _, status, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
