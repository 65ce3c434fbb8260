"""Reward latency for one GRPO batch: 64 completions x 35 tests, ours against an AceCoder-style harness.

The batch is 4 problems x 16 samples: per problem 10 right answers, 5 wrong ones (off by one, wrong on some
inputs) and 1 that loops (on every input for two problems, on some inputs for the other two), each a distinct
completion with prose around a fenced block, as a policy writes them. Every variant is timed on the same batch in this one process:

* ours, isolated mode: ``make_code_reward()`` (a fresh fork of the loaded program per test);
* ours, fast mode: ``make_code_reward(mode="fast")`` (tests in sequence in the solution's process);
* AceCoder-style: per completion a fresh interpreter (``python -I -S``, the cheapest start there is) that execs
  the program, then each assert in the same globals under a 1 s ``setitimer`` alarm, the whole process capped at
  ``min(15, n) + 2`` s, run ``CORES`` at a time: what the released EvolveCoder/AceCoder evaluation does.

Both sides use 1 s per test and must agree on every completion's binary reward before anything is reported.
Ours is timed warm (the sandbox is started once per trainer process and reused) with its result cache cleared
before every repeat, so every repeat really executes the 64 programs; the cold first call and a cached repeat
are reported on their own lines.

Run: ``.venv/bin/python benchmarks/bench_reward.py [--repeats 5] [--timeouts 1.0 0.25]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from evolvecoder_datasets import rewards
from evolvecoder_datasets.rewards import make_code_reward

CORES = len(os.sched_getaffinity(0))
N_TESTS = 35

# --- the batch ---------------------------------------------------------------------------------------------------


def _sum_squares(n):
    return sum(i * i for i in range(1, n + 1))


def _running_max(xs):
    out, best = [], None
    for x in xs:
        best = x if best is None or x > best else best
        out.append(best)
    return out


def _is_prime(n):
    return n > 1 and all(n % d for d in range(2, int(n**0.5) + 1))


def _count_vowels(s):
    return sum(c in "aeiouAEIOU" for c in s)


def _problems(rng: random.Random) -> list[dict]:
    words = ["alpha", "Echo", "sky", "queue", "rhythm", "AEIOU", "banana", "", "x", "Onomatopoeia"]
    cases = {
        "sum_squares": [rng.randint(0, 3000) for _ in range(N_TESTS)],
        "running_max": [[rng.randint(-50, 50) for _ in range(rng.randint(0, 12))] for _ in range(N_TESTS)],
        "is_prime": [rng.randint(0, 10**6) for _ in range(N_TESTS)],
        "count_vowels": [" ".join(rng.choice(words) for _ in range(rng.randint(0, 6))) for _ in range(N_TESTS)],
    }
    refs = {"sum_squares": _sum_squares, "running_max": _running_max, "is_prime": _is_prime,
            "count_vowels": _count_vowels}  # fmt: skip
    right = {
        "sum_squares": ["def sum_squares(n):\n    return n * (n + 1) * (2 * n + 1) // 6",
                        ("def sum_squares(n):\n    total = 0\n    for i in range(1, n + 1):\n        total += i * i\n"
                         "    return total")],
        "running_max": [("def running_max(xs):\n    out = []\n    for x in xs:\n        out.append(x if not out else "
                         "max(out[-1], x))\n    return out"),
                        "from itertools import accumulate\ndef running_max(xs):\n    return list(accumulate(xs, max))"],
        "is_prime": [("def is_prime(n):\n    if n < 2:\n        return False\n    i = 2\n    while i * i <= n:\n"
                      "        if n % i == 0:\n            return False\n        i += 1\n    return True"),
                     "import math\ndef is_prime(n):\n    return n > 1 and all(n % d for d in range(2, math.isqrt(n) + 1))"],
        "count_vowels": ["def count_vowels(s):\n    return sum(c in 'aeiouAEIOU' for c in s)",
                         "def count_vowels(s):\n    return len([c for c in s.lower() if c in 'aeiou'])"],
    }  # fmt: skip
    wrong = {
        "sum_squares": ["def sum_squares(n):\n    return n * (n + 1) * (2 * n + 1) // 6 + (n > 2000)",
                        "def sum_squares(n):\n    return sum(i * i for i in range(n))"],
        "running_max": ["def running_max(xs):\n    return sorted(xs)", "def running_max(xs):\n    return list(xs)"],
        "is_prime": ["def is_prime(n):\n    return n % 2 == 1", "def is_prime(n):\n    return all(n % d for d in range(2, n))"],
        "count_vowels": ["def count_vowels(s):\n    return sum(c in 'aeiou' for c in s)",
                         "def count_vowels(s):\n    return len(s) // 3"],
    }  # fmt: skip
    guards = {"sum_squares": "n > 2900", "running_max": "len(xs) > 11", "is_prime": "n > 900000",
              "count_vowels": "s.count('sky') > 1"}  # fmt: skip
    # Right on most inputs, an endless loop on the others.
    loops_sometimes = {
        name: right[name][0].replace(":\n", f":\n    while {guard}:\n        pass\n", 1) for name, guard in guards.items()
    }
    problems = []
    for name, inputs in cases.items():
        tests = [f"assert {name}({arg!r}) == {refs[name](arg)!r}" for arg in inputs]
        programs = [right[name][k % 2] for k in range(10)] + [wrong[name][k % 2] for k in range(5)]
        # A few looping programs in the batch: one per problem, on every input for two problems, on some
        # inputs for the other two.
        if len(problems) < 2:
            programs.append(f"def {name}(*args):\n    while True:\n        pass")
        else:
            programs.append(loops_sometimes[name])
        problems.append({"name": name, "tests": tests, "programs": programs})
    return problems


def batch(seed: int = 0) -> tuple[list[str], list[list[str]]]:
    """64 distinct completions and their rows' tests."""
    rng = random.Random(seed)
    completions, tests = [], []
    for problem in _problems(rng):
        for k, program in enumerate(problem["programs"]):
            completions.append(
                f"<think>I need {problem['name']}. Sample {k}.</think>\nHere is my solution:\n\n"
                f"```python\n# sample {k}\n{program}\n```\n\nIt handles the edge cases."
            )
            tests.append(problem["tests"])
    return completions, tests


# --- AceCoder-style baseline -----------------------------------------------------------------------------------

_HARNESS = r"""
import json, signal, sys
class _Timeout(Exception):
    pass
def _alarm(*_):
    raise _Timeout()
signal.signal(signal.SIGALRM, _alarm)
job = json.loads(sys.stdin.read())
namespace, results = {}, []
def _timed(code):
    signal.setitimer(signal.ITIMER_REAL, job["timeout"])
    try:
        exec(code, namespace)
        return True
    except BaseException:
        return False
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
loaded = _timed(job["program"])
for test in job["tests"]:
    results.append(loaded and _timed(test))
sys.__stdout__.write("\n" + json.dumps(results) + "\n")
"""

_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def _acecoder_extract(completion: str) -> str:
    # verl-tool's AceCoder reward: drop the thinking, take the last ```python block.
    completion = completion.split("</think>")[-1]
    blocks = _BLOCK.findall(completion)
    return blocks[-1] if blocks else ""


def _acecoder_one(completion: str, tests: list[str], timeout: float) -> float:
    program = _acecoder_extract(completion)
    if not program:
        return 0.0
    job = json.dumps({"program": program, "tests": tests, "timeout": timeout})
    try:
        proc = subprocess.run([sys.executable, "-I", "-S", "-c", _HARNESS], input=job, capture_output=True,
                              text=True, timeout=min(15, len(tests)) + 2, check=False)  # fmt: skip
        results = json.loads(proc.stdout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, ValueError, IndexError):
        return 0.0
    return 1.0 if results and all(results) else 0.0


def acecoder_reward(completions: list[str], tests: list[list[str]], timeout: float) -> list[float]:
    with ThreadPoolExecutor(CORES) as pool:
        return list(pool.map(_acecoder_one, completions, tests, [timeout] * len(completions)))


# --- measurement -------------------------------------------------------------------------------------------------


def _timed(fn, repeats: int, before=None) -> tuple[float, list]:
    times, out = [], None
    for _ in range(repeats):
        if before is not None:
            before()
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def measure(completions, tests, timeout: float, repeats: int) -> None:
    """Print one markdown table for ``timeout`` seconds per test."""
    rows, verdicts, timeouts = [], {}, 0
    for mode in ("isolated", "fast"):
        reward = make_code_reward(mode=mode, timeout_s=timeout)
        rewards.clear_cache()
        details: dict[str, list] = {}
        start = time.perf_counter()
        reward(completions=completions, tests=tests, log_extra=details.__setitem__)
        cold = time.perf_counter() - start
        timeouts = sum(int(m.group(1)) for o in next(iter(details.values()))
                       if (m := re.search(r"timeout (\d+)", o)))  # fmt: skip
        warm, out = _timed(lambda r=reward: r(completions=completions, tests=tests), repeats, rewards.clear_cache)
        cached, _ = _timed(lambda r=reward: r(completions=completions, tests=tests), repeats)
        verdicts[mode] = out
        rows.append((f"ours, {mode} mode (warm sandbox)", warm))
        rows.append((f"ours, {mode} mode, first call (starts the sandbox)", cold))
        rows.append((f"ours, {mode} mode, same batch again (cached: a 2nd reward function)", cached))

    base, base_out = _timed(lambda: acecoder_reward(completions, tests, timeout), max(1, repeats // 2))
    for mode in ("isolated", "fast"):
        disagree = [i for i, (a, b) in enumerate(zip(verdicts[mode], base_out)) if a != b]
        if disagree:
            raise SystemExit(f"{mode} disagrees with the baseline on completions {disagree}")
    solved = sum(v == 1.0 for v in base_out)
    floor = timeouts * timeout / CORES
    print(f"\n### {timeout:g} s per test\n")
    print(f"Verdicts agree on all {len(base_out)} completions ({solved} rewarded 1.0). The looping programs burn "
          f"{timeouts} timeouts x {timeout:g} s of CPU before they are stopped: a floor of {floor:.2f} s on "
          f"{CORES} cores for any harness that judges by CPU time.\n")
    print("| variant | wall time per batch | speed-up vs AceCoder-style |")
    print("|---|---:|---:|")
    print(f"| AceCoder-style harness (fresh interpreter per completion, {CORES} at a time) | {base:.2f} s | 1.0x |")
    for label, seconds in rows:
        print(f"| {label} | {seconds:.3f} s | {base / seconds:.1f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--timeouts", type=float, nargs="+", default=[1.0, 0.25],
                        help="CPU (ours) / alarm (baseline) seconds per test; one table each")  # fmt: skip
    parser.add_argument("--without-loopers", action="store_true",
                        help="drop the 4 looping completions: measures execution alone, not the timeouts")  # fmt: skip
    args = parser.parse_args()
    completions, tests = batch()
    if args.without_loopers:
        keep = [i for i in range(len(completions)) if i % 16 != 15]
        completions, tests = [completions[i] for i in keep], [tests[i] for i in keep]
    load = os.getloadavg()[0]
    print(f"batch: {len(completions)} completions x {N_TESTS} tests, {CORES} cores, load average {load:.1f}")
    for timeout in args.timeouts:
        measure(completions, tests, timeout, args.repeats)


if __name__ == "__main__":
    main()
