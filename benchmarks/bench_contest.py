"""Contest judging throughput: C++ and checked problems beside Python with the token compare, in one process.

Every figure comes from the same sandbox, one after the other, on the same problem (the sum of n numbers, read from
stdin) and the same cases:

- ``python / compare``: a Python program, the default token compare (the baseline);
- ``cpp / compare``: the same program in C++ (its binary compiled once, then cached: the steady state of a pass
  matrix or a GRPO group, where one source meets many cases);
- ``python / kattis (python)`` and ``python / testlib (cpp)``: the Python program judged by a checker, a Python
  Kattis output validator or a compiled testlib checker (the checker's run per case on top of the program's);
- ``compile``: CPU-less wall seconds per fresh C++ source (each source unique, so nothing is cached), and a testlib
  checker's compile.

Run:
    .venv/bin/python benchmarks/bench_contest.py                       # 48 programs x 8 cases, 2 workers
    .venv/bin/python benchmarks/bench_contest.py --programs 16 --cases 4 --compiles 2
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time

from evolvecoder_datasets.execution import Job, Sandbox
from evolvecoder_datasets.execution.checkers import Checker

PY = "import sys\nn, *v = map(int, sys.stdin.read().split())\nprint(sum(v))\n"
CPP = """#include <bits/stdc++.h>
int main() { int n; std::cin >> n; long long s = 0, x; for (int i = 0; i < n; ++i) { std::cin >> x; s += x; }
  std::cout << s << "\\n"; }
"""
KATTIS = """import sys
given = open(sys.argv[2]).read().split()
said = sys.stdin.read().split()
sys.exit(42 if said == given else 43)
"""
TESTLIB = """#include "testlib.h"
int main(int argc, char* argv[]) {
    registerTestlibCmd(argc, argv);
    long long want = ans.readLong(), got = ouf.readLong();
    if (want != got) quitf(_wa, "expected %lld, found %lld", want, got);
    quitf(_ok, "ok");
}
"""


def cases(n: int, seed: int = 0) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    inputs, outputs = [], []
    for _ in range(n):
        values = [rng.randint(-10**9, 10**9) for _ in range(rng.randint(1, 200))]
        inputs.append(f"{len(values)} {' '.join(map(str, values))}\n")
        outputs.append(f"{sum(values)}\n")
    return inputs, outputs


def timed(sb: Sandbox, jobs: list[Job]) -> tuple[float, list]:
    start = time.perf_counter()
    reports = sb.run_many(jobs)
    return time.perf_counter() - start, reports


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--programs", type=int, default=48)
    parser.add_argument("--cases", type=int, default=8)
    parser.add_argument("--compiles", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", help="write the figures here too")
    args = parser.parse_args()
    if shutil.which("g++") is None:
        sys.exit("bench_contest: no g++ on this machine")
    inputs, outputs = cases(args.cases)
    kattis = Checker(KATTIS, language="python", contract="kattis")
    testlib = Checker(TESTLIB)
    variants = {
        "python / compare": dict(language="python", checker=None, program=PY),
        "cpp / compare": dict(language="cpp", checker=None, program=CPP),
        "python / kattis (python)": dict(language="python", checker=kattis, program=PY),
        "python / testlib (cpp)": dict(language="python", checker=testlib, program=PY),
    }
    figures: dict[str, dict] = {}
    with Sandbox(workers=args.workers, timeout_s=2.0, memory_mb=1024) as sb:
        # Warm: the service, every judge's pools, the binaries and checkers compiled (steady state below).
        warm = [Job(v["program"], inputs=inputs[:1], outputs=outputs[:1], language=v["language"], checker=v["checker"])
                for v in variants.values() for _ in range(2 * args.workers)]  # fmt: skip
        sb.run_many(warm)
        for name, v in variants.items():
            jobs = [Job(v["program"], inputs=inputs, outputs=outputs, language=v["language"], checker=v["checker"])
                    for _ in range(args.programs)]  # fmt: skip
            seconds, reports = timed(sb, jobs)
            passed = sum(all(r.passed) for r in reports)
            figures[name] = {"seconds": round(seconds, 3), "cases_per_s": round(len(jobs) * len(inputs) / seconds, 1),
                             "all_passed": passed == len(jobs)}  # fmt: skip
        base = figures["python / compare"]["cases_per_s"]
        for row in figures.values():
            row["vs_python_compare"] = round(row["cases_per_s"] / base, 3)
        # Compiles: each source unique (a comment), so none is cached.
        walls = []
        for i in range(args.compiles):
            source = CPP + f"// {os.getpid()} {time.time_ns()} {i}\n"
            seconds, _ = timed(sb, [Job(source, inputs=inputs[:1], outputs=outputs[:1], language="cpp")])
            walls.append(seconds)
        checker_source = TESTLIB + f"// {time.time_ns()}\n"
        seconds, reports = timed(sb, [Job(PY, inputs=inputs[:1], outputs=outputs[:1],
                                          checker=Checker(checker_source))])  # fmt: skip
        figures["compile"] = {"cpp_program_s": round(sorted(walls)[len(walls) // 2], 3), "testlib_checker_s":
                              round(seconds, 3), "checker_ok": reports[0].passed == [True]}  # fmt: skip
    print(f"contest judging, {args.programs} programs x {args.cases} cases, {args.workers} workers")
    for name, row in figures.items():
        print(f"  {name:<28} {json.dumps(row)}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(figures, fh, indent=1)


if __name__ == "__main__":
    main()
