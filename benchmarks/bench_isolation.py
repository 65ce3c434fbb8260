"""Start-up cost of each isolation level: a bare interpreter, bubblewrap and ``unshare`` (with its bootstrap).

Each round starts ``python -I -S -c pass`` once per case, cases interleaved so that a loaded machine slows them all
alike; medians of wall time, and of the CPU of the waited process tree where it rolls up (not through bubblewrap).
``--against REV`` adds the bwrap and unshare command lines of ``evolvecoder_datasets/execution/isolation.py`` at a
git revision, for a before/after in the same run. A level this machine cannot run is skipped. Paid once per fork
server start, not per job (docs/threat-model.md, "Cost").

Run: ``.venv/bin/python benchmarks/bench_isolation.py [--rounds 40] [--against bc82367]``
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evolvecoder_datasets.execution import isolation


def _module_at(rev: str):
    """``isolation.py`` as it was at ``rev``, loaded under the package so its relative imports work."""
    text = subprocess.run(["git", "show", f"{rev}:evolvecoder_datasets/execution/isolation.py"], cwd=ROOT,
                          capture_output=True, text=True, check=True).stdout  # fmt: skip
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(text)
    name = "evolvecoder_datasets.execution._isolation_at_rev"
    spec = importlib.util.spec_from_file_location(name, fh.name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    os.unlink(fh.name)
    # It locates the package from its own file (an isolation.py older than the fork server package names it
    # SERVER_SCRIPT, the file ``_forkserver.py``: its folder is the same).
    module.SERVER_SCRIPT = module.SERVER_PACKAGE = isolation.SERVER_PACKAGE
    return module


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--against", help="a git revision whose isolation.py to compare with")
    opts = parser.parse_args()
    args = [os.path.realpath(sys.executable), "-I", "-S", "-c", "pass"]
    cases = {"bare": args}
    for level in ("bwrap", "unshare"):
        if isolation.isolation_available(level):
            build = isolation.bwrap_command if level == "bwrap" else isolation.unshare_command
            cases[level] = build(args)
            if opts.against:
                old = _module_at(opts.against)
                cases[f"{level} @ {opts.against}"] = (old.bwrap_command if level == "bwrap" else old.unshare_command)(args)
        else:
            print(f"{level}: cannot run here, skipped")
    wall: dict[str, list[float]] = {name: [] for name in cases}
    cpu: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(opts.rounds):
        for name, cmd in cases.items():
            before, started = _children_cpu(), time.perf_counter()
            done = subprocess.run(cmd, env=isolation.BASE_ENV, capture_output=True, check=False)
            wall[name].append(time.perf_counter() - started)
            cpu[name].append(_children_cpu() - before)
            if done.returncode != 0:
                raise SystemExit(f"{name} failed: {done.stderr.decode(errors='replace')[-500:]}")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores, {opts.rounds} interleaved rounds")
    for name, cmd in cases.items():
        shown = "" if name.startswith("bwrap") else f"   cpu {1000 * statistics.median(cpu[name]):6.1f} ms"
        print(f"{name:24s} wall {1000 * statistics.median(wall[name]):6.1f} ms{shown}   ({len(cmd)} arguments)")


if __name__ == "__main__":
    main()
