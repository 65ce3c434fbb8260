"""code_instruct benchmark: the price and the payoff of sandboxed, nonce-checked verification, and gate throughput.

Part 1, verification, side by side in one process on the tinytext fixture's virtualenv:

* baseline (Repo2RLEnv style): ``<venv>/bin/python -m pytest`` in a temporary folder, no isolation, the verdict
  read from the exit code and the log (``"passed"`` in the summary, no ``"failed"``/``"error"``);
* ours: :meth:`VenvBackend.run_pytest` (bubblewrap, rlimits, uid drop, launcher, verdict plugin, nonce).

Each side runs the same good task (stage B) ``--runs`` times, alternating; the median wall time per run and the
ratio are reported. Then both judge four hostile or broken solutions; a verdict is correct when only the honest
solution passes.

Part 2, static gates: candidates per second through :func:`run_gates` (all six gates, with the HumanEval +
LeetCode n-gram index), and the index build time.

Run:
    .venv/bin/python benchmarks/bench_code_instruct.py [--runs 10]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evolvecoder_datasets.code_instruct import (
    DecontaminationIndex,
    Deduplicator,
    VenvBackend,
    open_repository,
    run_gates,
)
from evolvecoder_datasets.prompts import code_instruct

ANSWERS = ROOT / "tests" / "data" / "code_instruct" / "answers" / "tinytext"
HOSTILE = {
    "honest": None,
    "os._exit(0) at import": "import os\nos._exit(0)\n",
    "sys.exit(0) at import": "import sys\nsys.exit(0)\n",
    "prints a fake summary, then os._exit(0)": "import os\nprint('3 passed in 0.01s')\nos._exit(0)\n",
    "wrong answer": "import tinytext\n\ndef caption_lines(text, width, prefix='> '):\n    return []\n",
}


def baseline_run(python: str, files: dict[str, str], timeout_s: float = 60.0) -> bool:
    """Plain pytest in a temporary folder; pass = exit code 0 and a summary with passes and no failures."""
    work = Path(tempfile.mkdtemp(prefix="bench-baseline-"))
    try:
        for name, text in files.items():
            (work / name).write_text(text)
        proc = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_task.py"], cwd=work,
                              capture_output=True, text=True, timeout=timeout_s, check=False)  # fmt: skip
        log = proc.stdout + proc.stderr
        return proc.returncode == 0 and "failed" not in log and "error" not in log.lower().replace("0 errors", "")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def part_verification(runs: int) -> None:
    backend = VenvBackend()
    repo = open_repository(ROOT / "tests" / "data" / "code_instruct" / "tinytext")
    env = backend.prepare(repo)
    task = code_instruct.parse((ANSWERS / "good_caption.txt").read_text())
    files = {"test_task.py": task.test, "task_module.py": task.solution}
    print(f"isolation: {backend.isolation}; python: {env.python}")
    baseline_run(env.python, files)
    backend.run_pytest(env, files)  # warm both paths (page cache, bwrap probe)
    plain = VenvBackend(isolation="none", uid=None)
    sides = {
        "baseline (plain pytest, exit code + log)": lambda: baseline_run(env.python, files),
        "ours without isolation (launcher + plugin)": lambda: plain.run_pytest(env, files).passed,
        f"ours ({backend.isolation} + limits + uid + plugin)": lambda: backend.run_pytest(env, files).passed,
    }
    times: dict[str, list[float]] = {side: [] for side in sides}
    for _ in range(runs):
        for side, call in sides.items():  # interleaved, so that load spikes hit every side alike
            started = time.perf_counter()
            assert call()
            times[side].append(time.perf_counter() - started)
    base = statistics.median(next(iter(times.values())))
    print(f"\nstage B run of one task, median wall time of {runs} interleaved runs:")
    for side, values in times.items():
        median = statistics.median(values)
        print(f"  {side:<48} {median * 1000:7.0f} ms  {median / base:5.2f}x baseline")
    print("\nverdicts on hostile or broken solutions (pass?):")
    print(f"  {'solution':<42} {'baseline':>9} {'ours':>6}")
    correct = {"baseline": 0, "ours": 0}
    for name, solution in HOSTILE.items():
        candidate = dict(files, **({} if solution is None else {"task_module.py": solution}))
        b = baseline_run(env.python, candidate)
        o = backend.run_pytest(env, candidate).passed
        expected = solution is None
        correct["baseline"] += b == expected
        correct["ours"] += o == expected
        print(f"  {name:<42} {b!s:>9} {o!s:>6}")
    print(f"  correct verdicts: baseline {correct['baseline']}/{len(HOSTILE)}, ours {correct['ours']}/{len(HOSTILE)}")


def part_gates() -> None:
    started = time.perf_counter()
    index = DecontaminationIndex.from_benchmarks(["humaneval", "leetcode"])
    build = time.perf_counter() - started
    repo = open_repository(ROOT / "tests" / "data" / "code_instruct" / "tinytext")
    parsed = []
    for path in sorted(ANSWERS.glob("*.txt")):
        try:
            parsed.append(code_instruct.parse(path.read_text()))
        except ValueError:
            continue
    rounds = 200
    started = time.perf_counter()
    for _ in range(rounds):
        dedup = Deduplicator()
        for task in parsed:
            result = run_gates(task.problem, task.test, task.solution, import_names=repo.import_names,
                               public_symbols=repo.public_symbols, index=index, dedup=dedup)  # fmt: skip
            if result.ok:
                dedup.add(task.problem, task.solution)
    elapsed = time.perf_counter() - started
    n = rounds * len(parsed)
    print(f"\nstatic gates: {n} candidates in {elapsed:.2f} s = {n / elapsed:,.0f} candidates/s "
          f"(index of {len(index):,} n-grams built in {build:.2f} s)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    part_verification(args.runs)
    part_gates()


if __name__ == "__main__":
    main()
