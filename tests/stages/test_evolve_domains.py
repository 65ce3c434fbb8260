"""The evolve box keeps every test inside the problem's domain: a model-written precondition checked in the sandbox
before use, the problem's own asserts outside the domain dropped and reported, the domain recorded and reused, every
writer's tests gated. A scripted OpenAI-compatible server on loopback is the model; the sandbox is real."""

from __future__ import annotations

import pytest

from evolvecoder_datasets.llm import LLMConfig
from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
from evolvecoder_datasets.search.writer import SearchConfig
from evolvecoder_datasets.stages.evolve import EvolveConfig, evolve
from evolvecoder_datasets.stages.execute import ExecuteConfig
from evolvecoder_datasets.stages.support.resources import close_backends

# 1-indexed: steps(n) for n >= 1; steps(0) is not defined by the statement (the reference happens to return 0)
REFERENCE = "def steps(n):\n    return n * (n + 1) // 2\n"
PROGRAMS = [REFERENCE, "def steps(n):\n    return n * (n + 1) // 2 if n > 0 else 5\n",
            "def steps(n):\n    return n * (n + 1) // 2 if n < 50 else 0\n"]
QUESTION = "Write `def steps(n: int) -> int`: the n-th triangular number, for n >= 1 (1-indexed)."
PRECONDITION = "```python\ndef precondition(n):\n    return type(n) is int and n >= 1\n```"
INPUTS = '{"inputs": [{"call": "steps(0)", "why": "zero"}, {"call": "steps(-4)"}, {"call": "steps(60)"}, ' \
         '{"call": "steps(7)"}]}'


def _batch(tests=("assert steps(2) == 3", "assert steps(3) == 6")):
    return {
        "id": ["T_1"], "question": [QUESTION], "tests": [list(tests)],
        "test_origin": [[{"round": 0, "method": "seed"}] * len(tests)],
        "solutions": [[{"model": "m", "sample": k, "code": c} for k, c in enumerate(PROGRAMS)]],
        "pass_matrix": [[[True] * len(tests)] * len(PROGRAMS)],
        "reference_solutions": [[REFERENCE]], "reference_ok": [True],
    }


@pytest.fixture(autouse=True)
def _fresh_backends():
    close_backends()
    yield
    close_backends()


def _run(batch, precondition_answer, **options):
    asked = []

    def respond(body):
        text = body["messages"][-1]["content"]
        if "def precondition(" in text:
            asked.append(text)
            return precondition_answer
        return INPUTS

    with ScriptedOpenAIServer(respond) as server:
        options.setdefault("round", 1)
        config = EvolveConfig(llm=LLMConfig(model="w", base_url=server.base_url, max_retries=0),
                              discriminative=False, execute=ExecuteConfig(mode="fast", workers=1), **options)
        return evolve(batch, config=config), asked


def _domain_entry(out):
    return [e for e in out["evolve_log"][0] if e["method"] == "domain"]


def test_a_checked_model_precondition_keeps_every_input_inside_the_statement():
    out, asked = _run(_batch(), PRECONDITION)
    assert len(asked) == 1 and "steps(2)" in asked[0]  # the seeds are shown
    cell = out["domain"][0]
    assert cell["how"] == "model" and "n >= 1" in cell["contract"] and cell["seed_violations"] == 0
    new = out["tests"][0][2:]
    assert new == ["assert steps(60) == 1830", "assert steps(7) == 28"]  # steps(0), steps(-4): outside
    adversarial = next(e for e in out["evolve_log"][0] if e["method"] == "adversarial")
    assert adversarial["out_of_domain"] == [{"rule": "model", "count": 2}]


@pytest.mark.parametrize("answer, why", [
    ("```python\ndef precondition(n):\n    return True\n```", "rejects_nothing"),
    ("```python\ndef precondition(n):\n    return n > 2\n```", "rejects_a_seed"),
    ("```python\ndef precondition(n):\n    while True:\n        pass\n```", "rejects_a_seed"),
    ("```python\ndef precondition(n):\n    import os\n    os._exit(0)\n```", "rejects_a_seed"),
    ("I cannot write that.", None),
])
def test_a_model_precondition_that_fails_its_checks_leaves_the_inferred_domain(answer, why):
    out, _ = _run(_batch(), answer)
    assert out["domain"][0]["how"] == "inferred"
    [entry] = _domain_entry(out)
    if why is None:
        assert entry["error"] == "parse: no_precondition"
    else:
        assert any(why in note for note in entry["notes"])
    # the inferred domain (positive ints, as the seeds show) still keeps steps(0) and steps(-4) out
    assert out["tests"][0][2:] == ["assert steps(60) == 1830", "assert steps(7) == 28"]


def test_the_recorded_domain_is_reused_and_the_model_is_not_asked_again():
    out, asked = _run(_batch(), PRECONDITION)
    batch = _batch()
    batch.update(tests=[out["tests"][0]], test_origin=[out["test_origin"][0]], pass_matrix=[out["pass_matrix"][0]],
                 domain=out["domain"], evolve_log=out["evolve_log"])
    again, asked_again = _run(batch, "```python\ndef precondition(n):\n    return True\n```", round=2)
    assert asked_again == [] and again["domain"][0] == out["domain"][0]


def test_own_asserts_outside_the_domain_are_dropped_and_reported():
    batch = _batch(tests=("assert steps(2) == 3", "assert steps(3) == 6", "assert steps(0) == 0"))
    batch["domain"] = [{"how": "statement", "contract": "def precondition(n):\n    return type(n) is int and n >= 1",
                        "shape": None, "seed_violations": 0}]
    out, asked = _run(batch, PRECONDITION, adversarial=False, search=SearchConfig(budget=300))
    assert asked == []  # a declared domain: nothing to ask
    assert "assert steps(0) == 0" not in out["tests"][0] and out["domain"][0]["seed_violations"] == 1
    [entry] = _domain_entry(out)
    assert entry["out_of_domain"] == [{"rule": "statement", "count": 1}] and "steps(0)" in entry["notes"][0]


def test_without_a_model_the_search_stays_inside_the_inferred_domain():
    config = EvolveConfig(adversarial=False, discriminative=False, search=SearchConfig(budget=400, seed=2),
                          execute=ExecuteConfig(mode="fast", workers=1))
    out = evolve(_batch(), config=config)
    assert out["domain"][0]["how"] == "inferred"
    from evolvecoder_datasets.stages.support.domains import calls_in

    calls = [args for t in out["tests"][0] for args in calls_in(t, "steps")]
    assert len(calls) > 2 and all(type(n) is int and n >= 1 for (n,) in calls)
    search = next(e for e in out["evolve_log"][0] if e["method"] == "search")
    assert sum(c["count"] for c in search["out_of_domain"]) > 0
