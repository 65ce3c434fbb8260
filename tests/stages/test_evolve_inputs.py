"""Input mode: the model proposes calls, the reference values them in the sandbox, nothing the model says is an
expected value. A scripted OpenAI-compatible server on loopback plays the model (its answers are the shapes a small
coder gives, including expected values that are wrong, inputs the reference rejects and calls of other functions).
"""

from __future__ import annotations

import ast
import json

import pytest

from evolvecoder_datasets.llm import LLMConfig
from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
from evolvecoder_datasets.stages.evolve import EvolveConfig, evolve
from evolvecoder_datasets.stages.execute import ExecuteConfig
from evolvecoder_datasets.stages.support.resources import close_backends

REFERENCE = ("def fee(amount, tier):\n"
             "    if amount < 0:\n"
             "        raise ValueError('negative')\n"
             "    rate = {'basic': 0.1, 'gold': 0.05}[tier]\n"
             "    return max(1, round(amount * rate))\n")
PROGRAMS = [
    REFERENCE,
    REFERENCE.replace("max(1, ", "max(0, "),            # wrong only where the fee rounds below 1
    REFERENCE.replace("'gold': 0.05", "'gold': 0.1"),    # wrong for gold
    REFERENCE.replace("round(", "int("),                 # truncates instead of rounding
]
TESTS = ["assert fee(100, 'basic') == 10", "assert fee(200, 'basic') == 20"]


def _batch(*, reference_ok=True):
    return {
        "id": ["P_1"],
        "question": [("Write `def fee(amount: int, tier: str) -> int`: the fee is amount x rate (basic 10%, gold "
                      "5%), rounded, at least 1. Negative amounts raise ValueError.")],
        "tests": [list(TESTS)],
        "test_origin": [[{"round": 0, "method": "seed"}] * 2],
        "solutions": [[{"model": "m", "sample": k, "code": c} for k, c in enumerate(PROGRAMS)]],
        "pass_matrix": [[[True, True]] * 4],
        "reference_solutions": [[REFERENCE]],
        "reference_ok": [reference_ok],
    }


# Every expected value in these answers is wrong on purpose: input mode must never use one.
INPUTS = {"inputs": [
    {"call": "fee(3, 'basic')", "why": "fee below 1 rounds up to the minimum"},
    {"call": "assert fee(100, 'gold') == 999", "why": "gold rate"},
    {"call": "fee(-5, 'basic')", "why": "negative amount"},          # the reference raises: no test
    {"call": "fee(19, 'basic') == 0", "why": "rounding"},
    {"call": "fee(100, 'platinum')", "why": "unknown tier"},          # the reference raises: no test
    {"call": "helper(1)", "why": "not the function"},
    {"call": "fee(10**9, 'basic')", "why": "not a literal"},
]}


@pytest.fixture(autouse=True)
def _fresh_backends():
    close_backends()
    yield
    close_backends()


def _run(batch, answer, **options):
    """One round with a scripted model that gives ``answer`` to every request (the model's domain precondition is
    off here: its own tests are in test_evolve_domains.py)."""
    options.setdefault("domain_from_model", False)
    bodies = []

    def respond(body):
        bodies.append(body)
        return answer

    with ScriptedOpenAIServer(respond) as server:
        config = EvolveConfig(llm=LLMConfig(model="w", base_url=server.base_url, max_retries=0), round=1,
                              discriminative=False, execute=ExecuteConfig(mode="fast", workers=1), **options)
        return evolve(batch, config=config), bodies


def _reference_value(test: str):
    """What the reference returns on the call an assert makes (computed here, outside the code under test)."""
    call = ast.parse(test).body[0].test.left
    namespace: dict = {}
    exec(REFERENCE, namespace)  # noqa: S102 - the test's own fixed reference, not a program under test
    return eval(compile(ast.Expression(call), "<call>", "eval"), namespace)


def test_inputs_are_valued_by_the_reference_and_the_models_values_are_never_used():
    out, bodies = _run(_batch(), json.dumps(INPUTS))
    prompt = bodies[0]["messages"][-1]["content"]
    # the reference is shown as the right program, the current tests only counted, the example call a placeholder
    assert "Program 1 (right):" in prompt and "fee(<arguments>)" in prompt and "fee(100, 'basic')" not in prompt
    assert "a reference solution computes the expected values" in prompt
    new = out["tests"][0][2:]
    assert new == ["assert fee(3, 'basic') == 1", "assert fee(100, 'gold') == 5", "assert fee(19, 'basic') == 2"]
    for test in new:  # each expected value is the reference's, none the model's (999, 0)
        assert ast.literal_eval(ast.parse(test).body[0].test.comparators[0]) == _reference_value(test)
    [entry] = out["evolve_log"][0]
    assert entry["method"] == "adversarial" and entry["parsed"] == 5 and entry["added"] == 3
    assert entry["reference_failed"] == 0
    notes = " | ".join(entry["notes"])
    assert "not_literal 1" in notes and "other_function 1" in notes and "1 inputs the reference does not" in notes
    # fee(-5, ...) lies outside the domain the seeds show (non-negative amounts): never valued, counted by rule
    assert entry["out_of_domain"] == [{"rule": "sign", "count": 1}]
    M = out["pass_matrix"][0]
    # the reference passes everything; each wrong program is killed by the input aimed at it
    assert M[0] == [True] * 5 and M[1][2] is False and M[2][3] is False and M[3][4] is False
    assert [o["method"] for o in out["test_origin"][0][2:]] == ["adversarial"] * 3


def test_a_problem_without_a_confirmed_reference_keeps_the_whole_assert_prompt():
    answer = '{"tests": ["assert fee(3, \'basic\') == 1", "assert fee(100, \'gold\') == 999"]}'
    out, bodies = _run(_batch(reference_ok=False), answer)
    assert "hardening the test suite" in bodies[0]["messages"][-1]["content"]
    [entry] = out["evolve_log"][0]
    assert "asserts: no_reference" in entry["notes"]
    # no reference to check against: both asserts are appended as the model wrote them (the paper's mode)
    assert out["tests"][0][2:] == ["assert fee(3, 'basic') == 1", "assert fee(100, 'gold') == 999"]


def test_the_paper_mode_stays_available_and_its_wrong_values_are_caught_by_the_reference():
    answer = '{"tests": ["assert fee(3, \'basic\') == 1", "assert fee(100, \'gold\') == 999"]}'
    out, bodies = _run(_batch(), answer, test_mode="asserts")
    assert "hardening the test suite" in bodies[0]["messages"][-1]["content"]
    [entry] = out["evolve_log"][0]
    assert out["tests"][0][2:] == ["assert fee(3, 'basic') == 1"] and entry["reference_failed"] == 1


def test_an_answer_with_no_usable_call_is_recorded_not_raised():
    out, _ = _run(_batch(), "I would test large amounts and unknown tiers.")
    [entry] = out["evolve_log"][0]
    assert entry["error"] == "parse: no_inputs" and entry["added"] == 0 and out["tests"][0] == TESTS


def test_a_float_value_is_written_with_the_shared_tolerance():
    ref = "def ratio(a, b):\n    return a / b\n"
    batch = _batch()
    batch.update(question=["Write `def ratio(a: int, b: int) -> float` returning a / b (b != 0)."],
                 tests=[["assert ratio(1, 2) == 0.5"]], test_origin=[[{"round": 0, "method": "seed"}]],
                 solutions=[[{"model": "m", "sample": 0, "code": ref},
                             {"model": "m", "sample": 1, "code": "def ratio(a, b):\n    return a // b\n"}]],
                 pass_matrix=[[[True], [False]]], reference_solutions=[[ref]])
    out, _ = _run(batch, '{"inputs": [{"call": "ratio(1, 3)", "why": "repeating"}, {"call": "ratio(1, 0)"}]}')
    [test] = out["tests"][0][1:]
    assert test.startswith("assert abs(ratio(1, 3) - 0.3333333333333333) <= ")
    tolerance = float(test.rsplit("<= ", 1)[1])
    assert 1e-6 < tolerance < 1.1e-6  # 1e-6 + 1e-7 * |v|, as the search and EvalPlus write it


def test_a_problem_without_a_reference_can_be_skipped_instead_of_asked_for_asserts():
    out, bodies = _run(_batch(reference_ok=False), '{"tests": ["assert fee(1, \'basic\') == 1"]}',
                       without_reference="skip")
    assert bodies == []
    [entry] = out["evolve_log"][0]
    assert "skipped: no_reference" in entry["notes"] and entry["requested"] == 0 and out["tests"][0] == TESTS


def test_a_slow_reference_values_inputs_under_its_problems_calibrated_limit():
    """A reference that needs ~0.2 s of CPU per call (its problem's calibrated limit is 1 s): under the default
    0.1 s it could value nothing; under its own limit it values the model's inputs."""
    slow = ("import time\n"
            "def sq(x):\n"
            "    end = time.process_time() + 0.2\n"
            "    while time.process_time() < end:\n"
            "        pass\n"
            "    return x * x\n")
    batch = {"id": ["S_1"], "question": ["Write `def sq(x: int) -> int` returning x squared."],
             "tests": [["assert sq(2) == 4"]], "test_origin": [[{"round": 0, "method": "seed"}]],
             "solutions": [[{"model": "m", "sample": 0, "code": "def sq(x):\n    return x * 2\n"}]],
             "pass_matrix": [[[True]]], "reference_solutions": [[slow]], "reference_ok": [True],
             "time_limit_s": [1.0]}
    out, _ = _run(batch, '{"inputs": [{"call": "sq(5)", "why": "odd"}]}')
    assert out["tests"][0] == ["assert sq(2) == 4", "assert sq(5) == 25"]
    assert out["pass_matrix"][0] == [[True, False]]


def test_discriminative_inputs_are_valued_and_their_split_is_checked_on_the_programs_shown():
    """Programs 1 and 3 (rounding below the minimum, truncating) pass the same tests: the discriminative prompt in
    input mode shows them side by side, the model's calls are valued by the reference, and the log counts which
    tests split the programs shown."""
    bodies = []

    def respond(body):
        bodies.append(body)
        return '{"inputs": [{"call": "fee(3, \'basic\')", "why": "minimum"}, {"call": "fee(100, \'basic\')"}]}'

    with ScriptedOpenAIServer(respond) as server:
        config = EvolveConfig(llm=LLMConfig(model="w", base_url=server.base_url, max_retries=0), round=1,
                              adversarial=False, n_similar=2, execute=ExecuteConfig(mode="fast", workers=1),
                              domain_from_model=False)
        out = evolve(_batch(), config=config)
    prompt = bodies[0]["messages"][-1]["content"]
    assert "cannot be told apart by the" in prompt and "returns a different value than Program 1" in prompt
    assert "a reference solution computes the expected values" in prompt
    [entry] = out["evolve_log"][0]
    assert entry["method"] == "discriminative" and entry["parsed"] == 2
    new = out["tests"][0][2:]
    assert new == ["assert fee(3, 'basic') == 1"]  # fee(100, 'basic') == 10 is a seed test already
    assert entry["duplicates"] == 1
    shown = entry["programs"]
    column = [row[2] for row in out["pass_matrix"][0]]
    splits = len({column[p] for p in shown}) > 1
    assert entry["split_failed"] == (0 if splits else 1)


def test_several_answers_to_one_prompt_join_their_inputs_each_once():
    """``answers=3``: one request with ``n = 3``; the inputs of every answer that parses join the candidates (an input
    two answers share counts once), an answer that does not parse is noted, not fatal, and the log counts what came
    back."""
    first = {"inputs": [{"call": "fee(3, 'basic')", "why": "minimum"}, {"call": "fee(100, 'gold')", "why": "gold"}]}
    third = {"inputs": [{"call": "fee(100, 'gold')", "why": "again"}, {"call": "fee(19, 'basic')", "why": "round"}]}
    out, bodies = _run(_batch(), [json.dumps(first), "Gold amounts, I think.", json.dumps(third)], answers=3)
    assert len(bodies) == 1 and bodies[0]["n"] == 3
    [entry] = out["evolve_log"][0]
    assert entry["answers"] == 3 and entry["requested"] == 3 * 20 and entry["parsed"] == 3
    assert any(n.startswith("answers: 1 of 3 unread (") for n in entry["notes"]), entry["notes"]
    assert "dropped duplicate 1" in " | ".join(entry["notes"])
    assert out["tests"][0][2:] == ["assert fee(3, 'basic') == 1", "assert fee(100, 'gold') == 5",
                                   "assert fee(19, 'basic') == 2"]


def test_answers_below_one_is_refused():
    from evolvecoder_datasets.errors import ConfigError

    with pytest.raises(ConfigError, match="answers"):
        EvolveConfig(answers=0)
