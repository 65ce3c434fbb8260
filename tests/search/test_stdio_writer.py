"""The stdin/stdout search writer on the real sandbox: a reference values its candidates (Python or C++), wrong
programs that pass every case are killed, right programs written independently pass every new case, a checker
judges where the problem has one, and a shipped validator has the last word on what an input may be."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from evolvecoder_datasets.errors import ConfigError
from evolvecoder_datasets.execution import Job, Sandbox
from evolvecoder_datasets.search.stdio_writer import StdioProblem, search_stdio_tests
from evolvecoder_datasets.search.text_inputs import statement_bounds
from evolvecoder_datasets.search.text_shape import check, infer_shape
from evolvecoder_datasets.search.writer import SearchConfig
from evolvecoder_datasets.sources.problem_package import load_problem_package

PACKAGES = Path(__file__).parent.parent / "data" / "problem_packages"

STATEMENT = r"""Given $n$ integers, print the largest sum of a non-empty run of consecutive ones.
Input: $n$ ($1 \le n \le 100$), then $a_1 \ldots a_n$ ($|a_i| \le 1000$)."""
KADANE = """n = int(input())
best = cur = None
for x in map(int, input().split()):
    cur = x if cur is None or cur < 0 else cur + x
    best = cur if best is None else max(best, cur)
print(best)
"""
BRUTE = """n = int(input())
a = list(map(int, input().split()))
print(max(sum(a[i:j]) for i in range(n) for j in range(i + 1, n + 1)))
"""
KADANE_CPP = """#include <bits/stdc++.h>
int main() { int n; std::cin >> n; long long best = LLONG_MIN, cur = 0;
  for (int i = 0; i < n; ++i) { long long x; std::cin >> x; cur = std::max(x, cur + x); best = std::max(best, cur); }
  std::cout << best << "\\n"; }
"""
EMPTY_ALLOWED = """n = int(input())
best = cur = 0
for x in map(int, input().split()):
    cur = max(0, cur + x)
    best = max(best, cur)
print(best)
"""  # wrong when every number is negative
FIRST_TWO = """n = int(input())
a = list(map(int, input().split()))
print(max(a) if n <= 2 else max(sum(a[i:j]) for i in range(n) for j in range(i + 1, n + 1)) if n < 5 else sum(a))
"""  # wrong on long mixed inputs
SEEDS = ["3\n1 -2 3\n", "4\n2 3 -1 2\n", "2\n5 1\n"]
ANSWERS = ["3\n", "6\n", "6\n"]


@pytest.fixture(scope="module")
def sb():
    with Sandbox(workers=2, timeout_s=1.0, max_consecutive_timeouts=2) as sandbox:
        yield sandbox


def problem(reference=KADANE, language="python", programs=(EMPTY_ALLOWED, FIRST_TWO, BRUTE), **kw):
    return StdioProblem("MaxRun", reference, list(SEEDS), list(ANSWERS), list(programs),
                        [[True] * len(SEEDS) for _ in programs], question=STATEMENT, language=language, **kw)


def test_a_valuing_job_returns_what_the_program_printed_and_nothing_for_a_failed_case(sb):
    report = sb.value_stdio("x = int(input())\nprint(x // (x - 1))", ["3\n", "1\n", "7\n"])
    assert report.statuses == ["pass", "error", "pass"]
    assert report.outputs == ["1\n", None, "1\n"]
    cpp = sb.value_stdio(KADANE_CPP, SEEDS, language="cpp")
    assert cpp.outputs == ANSWERS
    garbled = sb.value_stdio("import sys\nsys.stdout.buffer.write(b'\\xff\\xfe ok\\n')", ["\n"])
    assert garbled.statuses == ["pass"] and "\ufffd" in garbled.outputs[0]
    with pytest.raises(ConfigError):
        Job("print(1)", inputs=["\n"], checker={"source": "x", "language": "python", "contract": "kattis"})


def test_wrong_survivors_are_killed_and_an_independent_right_program_passes_every_new_case(sb):
    [found] = search_stdio_tests([problem()], SearchConfig(seed=3), sandbox=sb)
    assert found.reason is None and found.survivors == 3 and found.killed == 2
    assert found.inputs and len(found.inputs) == len(found.outputs) and found.rejected == 0
    shape = infer_shape(SEEDS, statement_bounds(STATEMENT))
    assert all(check(shape, text) is None for text in found.inputs)
    assert sb.run_stdio(BRUTE, found.inputs, found.outputs).all_passed  # the right program: never rejected
    assert not sb.run_stdio(EMPTY_ALLOWED, found.inputs, found.outputs).all_passed
    assert not sb.run_stdio(FIRST_TWO, found.inputs, found.outputs).all_passed


def test_a_cpp_reference_values_the_inputs(sb):
    [found] = search_stdio_tests([problem(KADANE_CPP, "cpp", programs=(EMPTY_ALLOWED,))], SearchConfig(seed=1),
                                 sandbox=sb)
    assert found.killed == 1
    assert sb.run_stdio(KADANE, found.inputs, found.outputs).all_passed


def test_a_shipped_validator_refusing_a_seed_stops_the_problem_and_otherwise_filters_every_candidate(sb):
    odd_only = "import sys\nn, *a = map(int, sys.stdin.read().split())\nsys.exit(0 if all(x % 2 for x in a) else 1)\n"
    [refused] = search_stdio_tests([problem(validator={"source": odd_only, "language": "python"})],
                                   SearchConfig(seed=0), sandbox=sb)
    assert refused.reason == "validator_refuses_seeds" and not refused.inputs
    odd_seeds = ["3\n1 -3 3\n", "4\n3 3 -1 5\n", "2\n5 1\n"]
    positive = StdioProblem("MaxRunOdd", KADANE, odd_seeds, ["3\n", "10\n", "6\n"], [EMPTY_ALLOWED],
                            [[True] * 3], question=STATEMENT,
                            validator={"source": odd_only, "language": "python"})
    [found] = search_stdio_tests([positive], SearchConfig(seed=0), sandbox=sb)
    assert found.invalid > 0 and found.killed == 1
    assert all(all(int(x) % 2 for x in text.split()[1:]) for text in found.inputs)


def test_a_checker_judges_the_targets_and_the_final_check(sb):
    row = load_problem_package(PACKAGES / "anyorder")
    accepted = [s for s in row["submissions"] if s["verdict"] == "accepted" and s["language"] == "python"]
    ties_by_input_order = accepted[0]["source"]
    # a wrong program the package's cases do not reject: every score from 10^8 up ties (they are all 10^9 there)
    capped = ties_by_input_order.replace("-int(team[1])", "-min(int(team[1]), 10**8)")
    assert capped != ties_by_input_order
    assert sb.run_stdio(capped, row["inputs"], row["outputs"], checker=row["checker"]).all_passed
    p = StdioProblem(row["id"], ties_by_input_order, row["inputs"], row["outputs"], [capped],
                     [[True] * len(row["inputs"])], question=row["question"], checker=row["checker"])
    [found] = search_stdio_tests([p], SearchConfig(seed=0), sandbox=sb)
    assert found.killed == 1 and found.rejected == 0
    # the other accepted submission (C++, another tie order) passes every new case under the checker
    other = next(s for s in row["submissions"] if s["verdict"] == "accepted" and s["language"] == "cpp")
    assert sb.run_stdio(other["source"], found.inputs, found.outputs, language="cpp",
                        checker=row["checker"]).all_passed


def test_problems_without_what_the_search_needs_say_why():
    found = search_stdio_tests([
        StdioProblem("A", None, SEEDS, ANSWERS, [KADANE], [[True] * 3]),
        StdioProblem("B", KADANE, [], [], [KADANE], [[]]),
        StdioProblem("C", KADANE, SEEDS, ANSWERS, [EMPTY_ALLOWED], [[True, False, True]]),
    ])
    assert [f.reason for f in found] == ["no_reference", "no_seed_inputs", "nothing_to_target"]


def test_a_kattis_input_validator_is_honoured_in_python_and_a_compiled_one_stops_the_search(sb):
    odd_kattis = ("import sys\nn, *a = map(int, sys.stdin.read().split())\n"
                  "sys.exit(42 if all(x % 2 for x in a) else 43)\n")
    odd_seeds = ["3\n1 -3 3\n", "4\n3 3 -1 5\n", "2\n5 1\n"]
    p = StdioProblem("MaxRunOdd", KADANE, odd_seeds, ["3\n", "10\n", "6\n"], [EMPTY_ALLOWED], [[True] * 3],
                     question=STATEMENT, validator={"source": odd_kattis, "language": "python", "contract": "kattis"})
    [found] = search_stdio_tests([p], SearchConfig(seed=2), sandbox=sb)
    assert found.invalid > 0 and found.inputs
    assert all(all(int(x) % 2 for x in text.split()[1:]) for text in found.inputs)
    compiled = dataclasses.replace(p, validator={"source": "int main() { return 42; }", "language": "cpp",
                                                 "contract": "kattis"})
    [stopped] = search_stdio_tests([compiled], SearchConfig(seed=2), sandbox=sb)
    assert stopped.reason == "validator_unsupported" and not stopped.inputs


def test_programs_known_right_are_never_targets():
    reference = "print(sum(map(int, input().split())))"
    slower = "a, b = map(int, input().split())\nprint(b + a)"
    problem = StdioProblem("R_1", reference, ["1 2\n", "3 4\n"], ["3\n", "7\n"], [slower], [[True, True]],
                           question="$0 \\le a, b \\le 100$", right=[0])
    [result] = search_stdio_tests([problem])
    assert result.reason == "nothing_to_target" and result.targets == 0 and result.inputs == []
    [unlabelled] = search_stdio_tests([dataclasses.replace(problem, right=None)], SearchConfig(budget=60))
    assert unlabelled.targets == 1  # the same program, not known right: a survivor the search tries to kill
