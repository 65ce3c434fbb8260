"""The stdin/stdout search writer against wrong programs that survive a problem's own cases.

For each problem (the four contest problem packages of ``tests/data/problem_packages`` and eight classic stdin
problems written here, each with a statement that states its bounds, two or three sample inputs and a reference):

1. the pool is the reference's mutants (``mutants.generate_mutants``, seeded); the survivors are those passing every
   sample case;
2. an **independent oracle** labels each survivor: 300 random valid inputs from a generator written by hand for the
   problem (not the search's mutator), valued by the reference; a survivor failing any is *wrong*, the others are
   counted as probably equivalent;
3. the search writer runs once (``SearchConfig()`` defaults, seed 0) and adds cases;
4. reported: wrong survivors, how many of them the new cases kill, **wrong tests** (new cases that the reference or
   an independent right program of the problem fails: must be 0), and new cases outside the statement's domain
   (by the hand generator's own validity check: must be 0), executions and seconds.

With ``--rounds R`` it measures the rounds instead: each problem as a dataset row (the pool: the mutants and the
independent right program; the reference confirmed), the execute stage, then ``R`` evolve rounds with the search
alone; after each round, over all problems, the **TPR** (independent right programs that pass every case of the
suite), the **TNR** (mutants the oracle or a sample case shows wrong that fail some case), the mutants neither shows
wrong that the suite rejects (each such rejection is a valid input, reference-valued, on which the mutant answers
otherwise: a wrong program the oracle missed), and cases outside the statement's domain (the hand check).

Run:
    .venv/bin/python benchmarks/bench_stdio_search.py
    .venv/bin/python benchmarks/bench_stdio_search.py --mutants 20 --oracle 100   # quicker
    .venv/bin/python benchmarks/bench_stdio_search.py --rounds 2
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from evolvecoder_datasets.execution import Job, Sandbox
from evolvecoder_datasets.mutants.generate import generate_mutants
from evolvecoder_datasets.search.stdio_writer import StdioProblem, search_stdio_tests
from evolvecoder_datasets.search.writer import SearchConfig
from evolvecoder_datasets.sources.problem_package import load_problem_package

PACKAGES = Path(__file__).resolve().parent.parent / "tests" / "data" / "problem_packages"


@dataclass
class Case:
    name: str
    statement: str
    reference: str
    right: str  # an independent right program
    seeds: list[str]
    generate: Callable[[random.Random], str]  # one random valid input
    valid: Callable[[str], bool]  # the statement's domain, checked by hand
    checker: object = None
    float_tol: float | None = None
    validator: dict | None = None  # a package's own input validator


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split()]


def _array_valid(lo: int, hi: int, n_max: int) -> Callable[[str], bool]:
    def valid(text: str) -> bool:
        lines = text.split("\n")
        n = int(lines[0])
        a = _ints(lines[1])
        return 1 <= n <= n_max and len(a) == n and all(lo <= x <= hi for x in a)
    return valid


def _array(lo: int, hi: int, n_max: int) -> Callable[[random.Random], str]:
    def gen(rng: random.Random) -> str:
        n = rng.choice([1, 2, 3, rng.randint(1, n_max)])
        a = [rng.choice([lo, hi, 0 if lo <= 0 <= hi else lo, rng.randint(lo, hi), rng.randint(lo, min(hi, lo + 3))])
             for _ in range(n)]
        return f"{n}\n{' '.join(map(str, a))}\n"
    return gen


CLASSIC = [
    Case("max_run", r"Print the largest sum of a non-empty run of consecutive numbers. $1 \le n \le 50$, $|a_i| \le 100$.",
         "n = int(input())\nbest = cur = None\nfor x in map(int, input().split()):\n"
         "    cur = x if cur is None or cur < 0 else cur + x\n    best = cur if best is None else max(best, cur)\nprint(best)\n",
         "n = int(input())\na = list(map(int, input().split()))\n"
         "print(max(sum(a[i:j]) for i in range(n) for j in range(i + 1, n + 1)))\n",
         ["3\n1 -2 3\n", "4\n2 3 -1 2\n"], _array(-100, 100, 50), _array_valid(-100, 100, 50)),
    Case("distinct", r"Print how many distinct values the $n$ numbers hold. $1 \le n \le 60$, $1 \le a_i \le 20$.",
         "input()\nprint(len(set(input().split())))\n",
         "n = int(input())\na = sorted(map(int, input().split()))\nprint(1 + sum(a[i] != a[i - 1] for i in range(1, n)))\n",
         ["4\n1 2 2 3\n", "2\n5 5\n", "3\n7 1 4\n"], _array(1, 20, 60), _array_valid(1, 20, 60)),
    Case("second_max", r"Print the second largest of $n$ distinct... or the largest when all are equal. "
         r"$2 \le n \le 40$, $0 \le a_i \le 1000$.",
         "input()\na = sorted(set(map(int, input().split())))\nprint(a[-2] if len(a) > 1 else a[-1])\n",
         "input()\na = list(map(int, input().split()))\nm = max(a)\nrest = [x for x in a if x != m]\n"
         "print(max(rest) if rest else m)\n",
         ["3\n5 9 2\n", "4\n1 1 3 3\n"], _array(0, 1000, 40), lambda t: _array_valid(0, 1000, 40)(t) and int(t.split()[0]) >= 2),
    Case("inversions", r"Count the pairs $i < j$ with $a_i > a_j$. $1 \le n \le 40$, $1 \le a_i \le 10^9$.",
         "n = int(input())\na = list(map(int, input().split()))\n"
         "print(sum(1 for i in range(n) for j in range(i + 1, n) if a[i] > a[j]))\n",
         "import bisect\nn = int(input())\na = list(map(int, input().split()))\nseen, c = [], 0\n"
         "for x in a:\n    c += len(seen) - bisect.bisect_right(seen, x)\n    bisect.insort(seen, x)\nprint(c)\n",
         ["3\n3 1 2\n", "4\n1 2 3 4\n"], _array(1, 10**9, 40), _array_valid(1, 10**9, 40)),
    Case("range_sums", r"The first line holds $n$ and $q$ ($1 \le n, q \le 30$), the second $n$ numbers "
         r"($|a_i| \le 10^6$); each of the next $q$ lines holds $l$ and $r$ ($1 \le l \le r \le n$). "
         "Print the sum of a_l..a_r for each.",
         "n, q = map(int, input().split())\na = list(map(int, input().split()))\np = [0]\n"
         "for x in a:\n    p.append(p[-1] + x)\nfor _ in range(q):\n    l, r = map(int, input().split())\n"
         "    print(p[r] - p[l - 1])\n",
         "n, q = map(int, input().split())\na = list(map(int, input().split()))\n"
         "for _ in range(q):\n    l, r = map(int, input().split())\n    print(sum(a[l - 1:r]))\n",
         ["3 2\n1 2 3\n1 2\n2 3\n", "4 3\n5 -1 0 2\n1 4\n3 3\n2 4\n"],
         lambda rng: (lambda n, q: f"{n} {q}\n{' '.join(str(rng.randint(-10**6, 10**6)) for _ in range(n))}\n" + "".join(
             (lambda l: f"{l} {rng.randint(l, n)}\n")(rng.randint(1, n)) for _ in range(q)))(rng.randint(1, 30), rng.randint(1, 30)),
         lambda t: (lambda L: (lambda n, q: 1 <= n <= 30 and 1 <= q <= 30 and len(L) == 2 + q
                                and len(_ints(L[1])) == n and all(abs(x) <= 10**6 for x in _ints(L[1]))
                                and all(1 <= _ints(x)[0] <= _ints(x)[1] <= n for x in L[2:2 + q]))(*_ints(L[0])))(
             t.rstrip("\n").split("\n"))),
    Case("palindromes", r"The first line holds $t$ ($1 \le t \le 10$); each of the next $t$ lines a word of 1 to 8 "
         "lowercase letters. Print YES or NO for each: is it a palindrome?",
         "for _ in range(int(input())):\n    s = input().strip()\n    print('YES' if s == s[::-1] else 'NO')\n",
         "t = int(input())\nfor _ in range(t):\n    s = input().strip()\n"
         "    print('YES' if all(s[i] == s[len(s) - 1 - i] for i in range(len(s) // 2)) else 'NO')\n",
         ["3\nabba\nabc\nx\n", "2\nzz\nzy\n"],
         lambda rng: (lambda t: f"{t}\n" + "".join(
             (lambda w: (w + w[::-1][rng.randint(0, 1):] if rng.random() < 0.5 else w) + "\n")(
                 "".join(rng.choice("ab") for _ in range(rng.randint(1, 4)))) for _ in range(t)))(rng.randint(1, 10)),
         lambda t: (lambda L: 1 <= int(L[0]) <= 10 and len(L) == 1 + int(L[0])
                    and all(1 <= len(w) <= 8 and w.isalpha() and w.islower() for w in L[1:]))(t.rstrip("\n").split("\n"))),
    Case("gcd_all", r"Print the greatest common divisor of $n$ numbers. $1 \le n \le 30$, $1 \le a_i \le 10^6$.",
         "import math\ninput()\ng = 0\nfor x in map(int, input().split()):\n    g = math.gcd(g, x)\nprint(g)\n",
         "input()\na = list(map(int, input().split()))\nd = min(a)\nwhile any(x % d for x in a):\n    d -= 1\nprint(d)\n",
         ["3\n4 6 8\n", "2\n7 7\n"],
         lambda rng: (lambda n, k: f"{n}\n{' '.join(str(k * rng.randint(1, 10**6 // k)) for _ in range(n))}\n")(
             rng.randint(1, 30), rng.choice([1, 2, 3, 6, 7, 1000, 999983])),
         _array_valid(1, 10**6, 30)),
    Case("stairs", r"A staircase has $n$ steps ($1 \le n \le 40$); you climb 1 or 2 steps at a time. "
         "Print the number of ways to reach the top.",
         "n = int(input())\na, b = 1, 1\nfor _ in range(n):\n    a, b = b, a + b\nprint(a)\n",
         "from functools import lru_cache\n@lru_cache(None)\ndef w(n):\n    return 1 if n <= 1 else w(n - 1) + w(n - 2)\n"
         "print(w(int(input())))\n",
         ["1\n", "3\n", "5\n"], lambda rng: f"{rng.randint(1, 40)}\n",
         lambda t: t.strip().isdigit() and 1 <= int(t) <= 40),
]


def _sumpair(rng: random.Random) -> str:
    n, span = rng.randint(1, 12), rng.choice([2, 5, 10**9])
    a = [rng.randint(-span, span) for _ in range(n)]
    k = rng.choice([a[0] + a[-1], 0, rng.randint(-2 * span, 2 * span)])
    return f"{n} {k}\n{' '.join(map(str, a))}\n"


def _anypath(rng: random.Random) -> str:
    n = rng.randint(1, 8)
    pairs = [(u, v) for u in range(1, n + 1) for v in range(u + 1, n + 1)]
    roads = rng.sample(pairs, rng.randint(0, len(pairs)))
    roads = [(v, u) if rng.random() < 0.5 else (u, v) for u, v in roads]
    return f"{n} {len(roads)}\n" + "".join(f"{u} {v}\n" for u, v in roads)


def _anyorder(rng: random.Random) -> str:
    n = rng.randint(1, 8)
    names = rng.sample([a + b for a in "abcdefgh" for b in ("", "x", "yz")], n)
    return f"{n}\n" + "".join(f"{name} {rng.choice([0, 1, 5, 10**9, rng.randint(0, 10**9)])}\n" for name in names)


def _circle(rng: random.Random) -> str:
    return f"{rng.choice([0.001, 1000.0, rng.uniform(0.001, 1000.0), rng.uniform(0.001, 2)]):.3f}\n"


# the packages' hand generators (the statement's domain, small sizes) and validity checks
PACKAGE_ORACLES = {
    "sumpair": (_sumpair, lambda t: (lambda L: 1 <= int(L[0].split()[0]) == len(L[1].split()))(t.split("\n"))),
    "anypath": (_anypath, lambda t: (lambda L: all(x[0] != x[1] and max(x) <= int(L[0].split()[0])
                                                   for x in (tuple(map(int, y.split())) for y in L[1:] if y)))(
        t.split("\n"))),
    "anyorder": (_anyorder, lambda t: (lambda L: len({y.split()[0] for y in L[1:] if y}) == int(L[0]))(t.split("\n"))),
    "circle": (_circle, lambda t: 0 < float(t) <= 1000),
}


def package_case(name: str) -> Case:
    row = load_problem_package(PACKAGES / name)
    accepted = [s for s in row["submissions"] if s["verdict"] == "accepted" and s["language"] == "python"]
    right = [s for s in row["submissions"] if s["verdict"] == "accepted" and s["language"] == "cpp"]
    generate, valid = PACKAGE_ORACLES[name]
    case = Case(row["id"], row["question"], accepted[0]["source"], right[0]["source"] if right else "",
                list(row["inputs"]), generate, valid, row["checker"], row["float_tol"])
    case.right_language = "cpp" if right else "python"  # type: ignore[attr-defined]
    case.validator = row["validator"]
    return case


def run_case(case: Case, sb: Sandbox, mutants: int, oracle: int) -> dict:
    started = time.perf_counter()
    rng = random.Random(0)
    pool = [m.code for m in generate_mutants(case.reference, max_mutants=mutants, seed=0)]
    seed_out = sb.value_stdio(case.reference, case.seeds).outputs
    assert seed_out is not None and all(o is not None for o in seed_out), case.name
    judged = sb.run_many([Job(p, inputs=case.seeds, outputs=seed_out, checker=case.checker, float_tol=case.float_tol)
                          for p in pool])
    matrix = [r.passed for r in judged]
    survivors = [k for k, row in enumerate(matrix) if all(row)]
    # the independent oracle: hand-drawn valid inputs, valued by the reference
    drawn = list(dict.fromkeys(case.generate(rng) for _ in range(oracle)))
    valued = sb.value_stdio(case.reference, drawn)
    o_in = [t for t, out in zip(drawn, valued.outputs or []) if out is not None]
    o_out = [out for out in valued.outputs or [] if out is not None]
    labels = sb.run_many([Job(pool[k], inputs=o_in, outputs=o_out, checker=case.checker, float_tol=case.float_tol)
                          for k in survivors])
    wrong = [k for k, report in zip(survivors, labels) if not report.all_passed]
    problem = StdioProblem(case.name, case.reference, list(case.seeds), list(seed_out), pool, matrix,
                           question=case.statement, checker=case.checker, float_tol=case.float_tol, limit=1.0,
                           validator=case.validator)
    [found] = search_stdio_tests([problem], SearchConfig(seed=0), sandbox=sb)
    killed = []
    if found.inputs:
        runs = sb.run_many([Job(pool[k], inputs=found.inputs, outputs=found.outputs, checker=case.checker,
                                float_tol=case.float_tol) for k in wrong])
        killed = [k for k, report in zip(wrong, runs) if not report.all_passed]
    wrong_tests = 0
    if found.inputs:
        for program, language in ((case.reference, "python"),
                                  (case.right, getattr(case, "right_language", "python"))):
            if program:
                report = sb.run_stdio(program, found.inputs, found.outputs, language=language, checker=case.checker,
                                      float_tol=case.float_tol)
                wrong_tests += sum(not ok for ok in report.passed)
    outside = sum(not case.valid(text) for text in found.inputs)
    return {"problem": case.name, "mutants": len(pool), "survivors": len(survivors), "wrong_survivors": len(wrong),
            "killed_wrong": len(killed), "new_cases": len(found.inputs), "wrong_tests": wrong_tests,
            "outside_domain": outside, "oracle_inputs": len(o_in), "executions": found.executions,
            "reason": found.reason, "seconds": round(time.perf_counter() - started, 1)}


def oracle_labels(case: Case, programs: list[str], languages: list[str], sb: Sandbox, n: int) -> list[bool]:
    """Per program, right (passes every independent oracle input) or wrong."""
    rng = random.Random(1)
    drawn = list(dict.fromkeys(case.generate(rng) for _ in range(n)))
    valued = sb.value_stdio(case.reference, drawn)
    o_in = [t for t, out in zip(drawn, valued.outputs or []) if out is not None]
    o_out = [out for out in valued.outputs or [] if out is not None]
    reports = sb.run_many([Job(p, inputs=o_in, outputs=o_out, checker=case.checker, float_tol=case.float_tol,
                               language=lang) for p, lang in zip(programs, languages)])
    return [r.all_passed for r in reports]


def rounds(cases: list[Case], sb: Sandbox, n_rounds: int, mutants: int, oracle: int) -> dict:
    """TPR over the independent right programs, TNR over the mutants the oracle (or a seed case) shows wrong, per
    round; mutants neither shows wrong are reported apart (killed ones with the validity of the killing cases)."""
    from datasets import Dataset

    from evolvecoder_datasets.stages.evolve import EvolveConfig, evolve_dataset
    from evolvecoder_datasets.stages.execute import ExecuteConfig, execute_dataset

    rows, labels, valid = [], {}, {}
    for case in cases:
        seed_out = sb.value_stdio(case.reference, case.seeds).outputs
        programs = [m.code for m in generate_mutants(case.reference, max_mutants=mutants, seed=0)]
        kinds = ["mutant"] * len(programs)
        if case.right and getattr(case, "right_language", "python") == "python":
            programs.append(case.right)
            kinds.append("right")
        on_oracle = oracle_labels(case, programs, ["python"] * len(programs), sb, oracle)
        on_seeds = [r.all_passed for r in sb.run_many([
            Job(p, inputs=case.seeds, outputs=seed_out, checker=case.checker, float_tol=case.float_tol)
            for p in programs])]
        labels[case.name] = ["right" if k == "right" else "wrong" if not (a and b) else "unknown"
                             for k, a, b in zip(kinds, on_oracle, on_seeds)]
        valid[case.name] = case.valid
        rows.append({"id": case.name, "question": case.statement, "tests": [], "inputs": case.seeds,
                     "outputs": seed_out, "checker": case.checker, "float_tol": case.float_tol, "language": "python",
                     "reference_solutions": [case.reference], "reference_ok": True,
                     "solutions": [{"model": "pool", "sample": k, "code": c} for k, c in enumerate(programs)]})
    execute = ExecuteConfig(workers=2)
    ds = execute_dataset(Dataset.from_list(rows), execute)
    figures = []

    def measure(ds, r: int) -> None:
        count = {"right": 0, "wrong": 0, "unknown": 0}
        accepted = {"right": 0, "wrong": 0, "unknown": 0}
        invalid = 0
        for row in ds:
            invalid += sum(not valid[row["id"]](text) for text in row["inputs"])
            for label, passed in zip(labels[row["id"]], row["pass_matrix"]):
                count[label] += 1
                accepted[label] += all(passed)
        figures.append({
            "round": r, "cases": sum(len(row["inputs"]) for row in ds), "cases_outside_domain": invalid,
            "right": count["right"], "tpr": round(accepted["right"] / count["right"], 3) if count["right"] else None,
            "wrong": count["wrong"], "tnr": round(1 - accepted["wrong"] / count["wrong"], 3) if count["wrong"] else None,
            "unlabelled": count["unknown"], "unlabelled_rejected": count["unknown"] - accepted["unknown"]})
        print(json.dumps(figures[-1]), file=sys.stderr)

    measure(ds, 0)
    for r in range(1, n_rounds + 1):
        started = time.perf_counter()
        ds = evolve_dataset(ds, EvolveConfig(adversarial=False, discriminative=False, search=SearchConfig(), round=r,
                                             execute=execute))
        figures.append({})
        figures.pop()
        measure(ds, r)
        figures[-1]["seconds"] = round(time.perf_counter() - started, 1)
    return {"rounds": figures}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mutants", type=int, default=40)
    parser.add_argument("--oracle", type=int, default=300)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=0)
    args = parser.parse_args()
    if args.rounds:
        with Sandbox(workers=args.workers, timeout_s=1.0, max_consecutive_timeouts=2) as sb:
            cases = [package_case(n) for n in ("sumpair", "anypath", "anyorder", "circle")] + CLASSIC
            print(json.dumps(rounds(cases, sb, args.rounds, args.mutants, args.oracle), indent=1))
        return
    rows = []
    with Sandbox(workers=args.workers, timeout_s=1.0, max_consecutive_timeouts=2) as sb:
        for case in [package_case(n) for n in ("sumpair", "anypath", "anyorder", "circle")] + CLASSIC:
            rows.append(run_case(case, sb, args.mutants, args.oracle))
            print(json.dumps(rows[-1]), file=sys.stderr)
    wrong = sum(r["wrong_survivors"] for r in rows)
    killed = sum(r["killed_wrong"] for r in rows)
    summary = {"problems": len(rows), "wrong_survivors": wrong, "killed_wrong": killed,
               "kill_rate": round(killed / wrong, 3) if wrong else None,
               "wrong_tests": sum(r["wrong_tests"] for r in rows),
               "outside_domain": sum(r["outside_domain"] for r in rows),
               "new_cases": sum(r["new_cases"] for r in rows), "seconds": round(sum(r["seconds"] for r in rows), 1)}
    print(json.dumps({"rows": rows, "summary": summary}, indent=1))


if __name__ == "__main__":
    main()
