"""Stdin/stdout problems in the evolution round: contest problem packages executed, then grown by the search with
cases the reference values, judged for the whole pool (Python and C++, token compare and checkers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from datasets import Dataset

from evolvecoder_datasets.execution import Sandbox
from evolvecoder_datasets.mutants.generate import generate_mutants
from evolvecoder_datasets.search.writer import SearchConfig
from evolvecoder_datasets.sources.problem_package import load_problem_package
from evolvecoder_datasets.stages.evolve import EvolveConfig, evolve_dataset
from evolvecoder_datasets.stages.execute import ExecuteConfig, execute_dataset

PACKAGES = Path(__file__).parent.parent / "data" / "problem_packages"


def _row(name: str, language: str = "python") -> dict:
    """A package as a round-0 row: an accepted submission as the reference, its mutants as the pool."""
    package = load_problem_package(PACKAGES / name)
    accepted = [s for s in package["submissions"] if s["verdict"] == "accepted" and s["language"] == "python"]
    reference = accepted[0]["source"]
    pool = [m.code for m in generate_mutants(reference, max_mutants=12, seed=1)]
    return {"id": package["id"], "question": package["question"], "tests": [], "inputs": package["inputs"],
            "outputs": package["outputs"], "checker": package["checker"], "float_tol": package["float_tol"],
            "language": language, "reference_solutions": [reference], "reference_ok": True,
            "solutions": [{"model": "mutant", "sample": k, "code": code} for k, code in enumerate(pool)]}


@pytest.fixture(scope="module")
def executed():
    ds = Dataset.from_list([_row("sumpair"), _row("anyorder")])
    return execute_dataset(ds, ExecuteConfig(statuses=True, workers=2))


def test_the_search_grows_stdin_problems_and_every_new_case_is_right_about_the_reference(executed):
    config = EvolveConfig(adversarial=False, discriminative=False, search=SearchConfig(budget=600), round=1,
                          execute=ExecuteConfig(statuses=True, workers=2))
    out = evolve_dataset(executed, config)
    grew = 0
    with Sandbox(workers=2) as sb:
        for before, after in zip(executed, out):
            n0, n1 = len(before["inputs"]), len(after["inputs"])
            assert after["tests"] == [] and len(after["outputs"]) == n1
            assert after["inputs"][:n0] == before["inputs"] and after["outputs"][:n0] == before["outputs"]
            assert after["test_origin"][n0:] == [{"round": 1, "method": "search"}] * (n1 - n0)
            assert all(len(row) == n1 for row in after["pass_matrix"])
            assert all(len(row) == n1 for row in after["statuses"])
            assert [e["method"] for e in after["evolve_log"]] == ["search"]
            assert after["evolve_log"][0]["added"] == n1 - n0
            grew += n1 > n0
            if n1 == n0:
                continue
            new_in, new_out = after["inputs"][n0:], after["outputs"][n0:]
            # the reference and every accepted submission (another language, another tie order) pass every new case
            package = load_problem_package(PACKAGES / after["id"].removeprefix("Package_"))
            for sub in (s for s in package["submissions"] if s["verdict"] == "accepted" and s["language"] != "java"):
                report = sb.run_stdio(sub["source"], new_in, new_out, language=sub["language"],
                                      checker=after["checker"], float_tol=after["float_tol"])
                assert report.all_passed, (after["id"], sub["path"], report.statuses)
            # the new columns are the pool's verdicts on the new cases
            rerun = sb.run_stdio(after["solutions"][0]["code"], new_in, new_out, checker=after["checker"])
            assert rerun.passed == after["pass_matrix"][0][n0:]
    assert grew >= 1


def test_in_the_whole_assert_mode_without_the_search_a_stdin_problem_passes_through(executed):
    from evolvecoder_datasets.llm import LLMConfig
    from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer

    with ScriptedOpenAIServer(lambda body: '{"tests": []}') as server:
        config = EvolveConfig(llm=LLMConfig(model="m", base_url=server.base_url), discriminative=False, round=1,
                              test_mode="asserts")
        out = evolve_dataset(executed, config)
    for before, after in zip(executed, out):
        assert after["inputs"] == before["inputs"] and after["pass_matrix"] == before["pass_matrix"]
        assert after["evolve_log"][-1]["notes"] == ["stdin_problem"]


def test_the_model_writes_stdin_texts_and_only_valid_valued_new_ones_become_cases(executed):
    """A scripted model (a real HTTP server on loopback) proposes texts for sumpair: a valid new one, one whose count
    disagrees with its row (recounted in the sandbox: it becomes a case), one outside the stated bounds (a count
    rewritten cannot save it), one already among the cases, and prose."""
    from evolvecoder_datasets.llm import LLMConfig
    from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer

    sumpair = next(r for r in executed if r["id"] == "Package_sumpair")
    answer = {"inputs": [{"stdin": "3 0\n-5 5 0\n", "why": "zero sum"},
                         {"stdin": "4 1\n1 2\n", "why": "short row"},
                         {"stdin": "2 1\n1 10000000000\n", "why": "huge"},
                         {"stdin": sumpair["inputs"][0], "why": "seen"},
                         {"stdin": "", "why": "nothing"}]}
    import json

    with ScriptedOpenAIServer(lambda body: json.dumps(answer)) as server:
        config = EvolveConfig(llm=LLMConfig(model="m", base_url=server.base_url), discriminative=False, round=1,
                              num_tests=5, execute=ExecuteConfig(statuses=True, workers=2))
        out = evolve_dataset(executed.filter(lambda r: r["id"] == "Package_sumpair"), config)
    [after] = list(out)
    n0 = len(sumpair["inputs"])
    assert after["inputs"][n0:] == ["3 0\n-5 5 0\n", "2 1\n1 2\n"]
    with Sandbox(workers=1) as sb:
        valued = sb.value_stdio(sumpair["reference_solutions"][0], after["inputs"][n0:])
    assert after["outputs"][n0:] == valued.outputs and after["outputs"][n0] == "1\n"
    assert after["test_origin"][n0:] == [{"round": 1, "method": "adversarial"}] * 2
    [entry] = [e for e in after["evolve_log"] if e["method"] == "adversarial"]
    assert entry["parsed"] == 4 and entry["added"] == 2 and entry["reference_failed"] == 0
    assert "1 recounted, 2 invalid or seen" in " ".join(entry["notes"])
    assert all(len(row) == n0 + 2 for row in after["pass_matrix"])


def test_two_answers_to_a_stdin_prompt_join_their_texts_each_once(executed):
    """``answers=2`` on a stdin problem: one request with ``n = 2``; the texts of both answers are valued together,
    the one they share once."""
    import json

    from evolvecoder_datasets.llm import LLMConfig
    from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer

    sumpair = next(r for r in executed if r["id"] == "Package_sumpair")
    first = {"inputs": [{"stdin": "3 0\n-5 5 0\n", "why": "zero sum"}]}
    second = {"inputs": [{"stdin": "3 0\n-5 5 0\n", "why": "zero sum"}, {"stdin": "2 7\n3 4\n", "why": "pair"}]}
    bodies: list = []

    def respond(body):
        bodies.append(body)
        return [json.dumps(first), json.dumps(second)]

    with ScriptedOpenAIServer(respond) as server:
        config = EvolveConfig(llm=LLMConfig(model="m", base_url=server.base_url), discriminative=False, round=1,
                              num_tests=2, answers=2, execute=ExecuteConfig(statuses=True, workers=2))
        out = evolve_dataset(executed.filter(lambda r: r["id"] == "Package_sumpair"), config)
    [after] = list(out)
    assert [b["n"] for b in bodies] == [2]
    [entry] = [e for e in after["evolve_log"] if e["method"] == "adversarial"]
    assert entry["answers"] == 2 and entry["parsed"] == 2 and entry["requested"] == 4
    assert after["inputs"][len(sumpair["inputs"]):] == ["3 0\n-5 5 0\n", "2 7\n3 4\n"]


_BURN = """import time
s = input().strip()
start = time.process_time()
while s == "big" and time.process_time() - start < {cpu}:
    pass
print(len(s))
"""


def test_a_stdin_problem_gets_a_calibrated_limit_unless_its_reference_runs_another_language():
    rows = Dataset.from_list([
        {"id": "S_1", "solutions": ["print(len(input().strip()))"], "inputs": ["ab\n"], "outputs": ["2"],
         "reference_solutions": ["print(len(input()))"], "reference_ok": True, "reference_language": None,
         "language": "python"},
        {"id": "S_2", "solutions": ["print(len(input().strip()))"], "inputs": ["ab\n"], "outputs": ["2"],
         "reference_solutions": ["int main() { return 0; }"], "reference_ok": True, "reference_language": "cpp",
         "language": "python"},
    ])
    out = execute_dataset(rows, ExecuteConfig(workers=2, limit_floor_s=0.1))
    assert out["time_limit_s"][0] == 0.1  # the floor: the reference needs microseconds
    assert out["time_limit_s"][1] is None  # a C++ reference's CPU time says nothing of a Python pool's
    assert out["pass_matrix"] == [[[True]], [[True]]]


def test_new_cases_raise_a_calibrated_limit_to_cover_the_reference_so_a_right_slower_program_passes():
    """The reference needs 0.05 s of CPU on the new case, half the problem's calibrated 0.1 s; a right program three
    times slower than it passes the case because the limit grew to ten times the reference's need first."""
    import numpy as np

    from evolvecoder_datasets.stages.support.round_state import log_entry
    from evolvecoder_datasets.stages.support.stdio_round import StdioRoundProblem, append_cases
    from evolvecoder_datasets.suite import TestSuite

    slow_right, wrong = _BURN.format(cpu=0.15), "print(0)"
    problem = StdioRoundProblem(
        id="S_1", question="Print the length of the word.", codes=[slow_right, wrong],
        suite=TestSuite((), ({"round": 0, "method": "seed"},), np.array([[True], [True]]), None,
                        {"inputs": ("a\n",), "outputs": ("1\n",)}),
        reference=_BURN.format(cpu=0.05), limit=0.1)
    execute = ExecuteConfig(workers=2, limit_floor_s=0.1)
    entry = log_entry(1, "search", notes=[], requested=1)
    append_cases([problem], "search", [(["big\n"], ["3\n"])], [entry], round_=1, execute=execute,
                 check_reference=False)
    assert problem.limit >= 0.5
    assert problem.inputs == ["a\n", "big\n"] and problem.suite.matrix[:, 1].tolist() == [True, False]


def test_a_new_case_an_accepted_program_fails_is_not_published_whatever_the_reference_printed():
    """Two readings of a silent statement: the reference prints the first maximum's position, the accepted submission
    the last; a case with a tie would make the accepted program wrong, so it is left out; a case without one is kept
    (it kills the mutant)."""
    import numpy as np

    from evolvecoder_datasets.stages.support.round_state import log_entry
    from evolvecoder_datasets.stages.support.stdio_round import StdioRoundProblem, append_cases
    from evolvecoder_datasets.suite import TestSuite

    first = "a = input().split()\nprint(a.index(max(a, key=int)) + 1)\n"
    last = "a = input().split()\nprint(len(a) - a[::-1].index(max(a, key=int)))\n"
    mutant = "a = input().split()\nprint(1)\n"
    problem = StdioRoundProblem(
        id="T_1", question="Print the position of the largest value.", codes=[last, mutant],
        suite=TestSuite((), ({"round": 0, "method": "seed"},), np.array([[True], [True]]), None,
                        {"inputs": ("5 1\n",), "outputs": ("1\n",)}),
        reference=first, models=["submission:accepted", "mutant"])
    entry = log_entry(1, "search", notes=[], requested=2)
    append_cases([problem], "search", [(["1 7\n", "7 7\n"], ["2\n", "1\n"])], [entry], round_=1,
                 execute=ExecuteConfig(workers=2), check_reference=False)
    assert problem.inputs == ["5 1\n", "1 7\n"] and problem.suite.matrix[:, 1].tolist() == [True, False]
    assert entry["added"] == 1 and entry["accepted_failed"] == 1
