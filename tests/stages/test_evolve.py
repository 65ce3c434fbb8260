"""One evolution round: prompts from the start-of-round matrix, the discriminative split checked, tests appended."""

from __future__ import annotations

import pytest

from evolvecoder_datasets.llm import LLMConfig
from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
from evolvecoder_datasets.stages.evolve import EvolveConfig, evolve
from evolvecoder_datasets.stages.execute import ExecuteConfig
from evolvecoder_datasets.stages.support.resources import close_backends

PROGRAMS = [
    "def inc(x):\n    return x + 1",
    "def inc(x):\n    return abs(x) + 1",
    "def inc(x):\n    return x + 1 if x < 100 else x",
    "def inc(x):\n    return x + 2",
]


def _batch():
    return {
        "id": ["X_1"],
        "question": ["Write `def inc(x: int) -> int` returning x + 1."],
        "tests": [["assert inc(1) == 2", "assert inc(2) == 3"]],
        "test_origin": [[{"round": 0, "method": "refine"}] * 2],
        "solutions": [[{"model": "m", "sample": k, "code": code} for k, code in enumerate(PROGRAMS)]],
        "pass_matrix": [[[True, True], [True, True], [True, True], [False, False]]],
        "statuses": [[["pass", "pass"]] * 3 + [["fail", "fail"]]],
        "reference_solutions": [["def inc(x):\n    return x + 1"]],
        "reference_ok": [True],
        # the statement says x: int; the seeds alone show only positive ones
        "domain": [{"how": "statement", "contract": "def precondition(x):\n    return type(x) is int", "shape": None, "seed_violations": 0}],
    }


ANSWERS = {
    "adversarial": '{"tests": ["assert inc(-5) == -4", "assert inc(1) == 2", "assert inc(7) == 9"]}',
    "discriminative": '{"tests": ["assert inc(500) == 501", "assert inc(3) == 4"]}',
}


def _responder(body):
    content = body["messages"][-1]["content"]
    return ANSWERS["adversarial" if "hardening" in content else "discriminative"]


@pytest.fixture(autouse=True)
def _fresh_backends():
    close_backends()
    yield
    close_backends()


def _run(batch, **options):
    """One round in the paper's whole-assert mode (the model writes expected values; input mode has its own tests
    in test_evolve_inputs.py)."""
    options.setdefault("test_mode", "asserts")
    with ScriptedOpenAIServer(_responder) as server:
        config = EvolveConfig(llm=LLMConfig(model="w", base_url=server.base_url, max_retries=0), round=1,
                              execute=ExecuteConfig(mode="fast", workers=1), **options)
        return evolve(batch, config=config), server.requests


def test_round_appends_checked_tests_with_their_origin_and_matrix_columns():
    out, requests = _run(_batch())
    assert len(requests) == 2
    tests = out["tests"][0]
    # the duplicate is skipped, the wrong expectation (inc(7) == 9) is rejected by the reference
    assert tests == ["assert inc(1) == 2", "assert inc(2) == 3", "assert inc(-5) == -4", "assert inc(500) == 501",
                     "assert inc(3) == 4"]
    assert [(o["round"], o["method"]) for o in out["test_origin"][0][2:]] == [(1, "adversarial"),
                                                                             (1, "discriminative"),
                                                                             (1, "discriminative")]
    M = out["pass_matrix"][0]
    assert M[1][2] is False and M[2][3] is False and M[0] == [True] * 5
    assert all(len(row) == 5 for row in out["statuses"][0])
    adversarial, discriminative = out["evolve_log"][0]
    assert adversarial["duplicates"] == 1 and adversarial["reference_failed"] == 1 and adversarial["added"] == 1
    # Fewer than five programs exist, so all four are shown; inc(500) == 501 fails only the capped program (2) and
    # inc(3) == 4 only the one that fails everything (3): both split the shown programs and both are kept.
    assert discriminative["programs"] == [0, 1, 2, 3] and "too_few_solutions" in discriminative["notes"]
    assert discriminative["split_failed"] == 0 and discriminative["added"] == 2
    assert [M[p][3] for p in range(4)] == [True, True, False, False]
    assert [M[p][4] for p in range(4)] == [True, True, True, False]
    assert out["round"] == [1]


def test_tests_that_do_not_split_the_shown_programs_can_be_dropped():
    out, _ = _run(_batch(), drop_failed_split=True, adversarial=False)
    log = out["evolve_log"][0][0]
    M = out["pass_matrix"][0]
    for j in range(2, len(out["tests"][0])):
        assert len({M[p][j] for p in log["programs"]}) == 2
    assert log["added"] + log["split_failed"] == 2


def test_sequential_mode_shows_the_adversarial_tests_to_the_discriminative_prompt():
    _, requests = _run(_batch(), sequential=True)
    discriminative = requests[1]["messages"][-1]["content"]
    assert "assert inc(-5) == -4" in discriminative
    _, requests = _run(_batch())
    assert all("assert inc(-5) == -4" not in body["messages"][-1]["content"] for body in requests)


def test_selection_is_seeded_and_recorded():
    first, _ = _run(_batch(), seed=3)
    again, _ = _run(_batch(), seed=3)
    assert [e["programs"] for e in first["evolve_log"][0]] == [e["programs"] for e in again["evolve_log"][0]]


def test_dropped_and_stdin_rows_pass_through():
    batch = _batch()
    batch = {k: v * 2 for k, v in batch.items()}
    batch["id"] = ["X_1", "X_2"]
    batch["drop_reason"] = ["too_few_tests", None]
    batch["tests"] = [batch["tests"][0], []]
    batch["inputs"] = [[], ["1\n"]]
    batch["pass_matrix"] = [batch["pass_matrix"][0], [[]] * 4]
    out, requests = _run(batch)
    assert requests == []
    assert out["tests"][0] == batch["tests"][0]
    assert out["evolve_log"][1][0]["notes"] == ["stdin_problem"]
