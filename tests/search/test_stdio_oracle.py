"""The stdin/stdout fidelity oracle's labels: right only where every own and oracle case passes; a program the run
already saw fail one of the problem's own cases is wrong without being run again (a time-limit submission used to
cost the limit on every labelling)."""

from __future__ import annotations

import pytest

from evolvecoder_datasets.execution import Sandbox
from evolvecoder_datasets.search.stdio_oracle import label_stdio_programs
from evolvecoder_datasets.search.stdio_writer import StdioProblem

REF = "n = int(input())\nprint(max(map(int, input().split())))\n"
FIRST = "n = int(input())\nprint(input().split()[0])\n"  # right on the own cases below, wrong in general
CASES, ANSWERS = ["2\n5 1\n", "3\n9 2 4\n"], ["5\n", "9\n"]
QUESTION = "$1 \\le n \\le 9$, $1 \\le a_i \\le 9$"


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(workers=1, mode="fast") as sb:
        yield sb


def _problem(matrix) -> StdioProblem:
    return StdioProblem("Max", REF, list(CASES), list(ANSWERS), [REF, FIRST, REF], matrix, question=QUESTION)


def test_a_program_the_run_saw_fail_an_own_case_is_wrong_and_the_others_are_judged_by_the_oracle(sandbox):
    # the third program is the reference itself, recorded as failing an own case (say, a timeout on a busy
    # machine): the recorded verdict stands, as it does in the suite's own figures
    [labels] = label_stdio_programs([_problem([[True, True], [True, True], [True, False]])], sandbox, inputs=40)
    assert labels == [1, 0, 0]


@pytest.mark.parametrize("matrix", [[], [[True, True]], [[True], [True], [True]]], ids=["none", "rows", "cols"])
def test_a_matrix_of_another_shape_is_ignored_and_every_program_runs(sandbox, matrix):
    [labels] = label_stdio_programs([_problem(matrix)], sandbox, inputs=40)
    assert labels == [1, 0, 1]
