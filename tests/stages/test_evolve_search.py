"""Search as a method of the evolution round: alone without any model, and after the prompts' tests."""

from __future__ import annotations

import pytest

from evolvecoder_datasets.errors import ConfigError
from evolvecoder_datasets.execution import Sandbox
from evolvecoder_datasets.llm import LLMConfig
from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
from evolvecoder_datasets.search.writer import SearchConfig
from evolvecoder_datasets.stages.evolve import EvolveConfig, evolve
from evolvecoder_datasets.stages.execute import ExecuteConfig
from evolvecoder_datasets.stages.support.resources import close_backends

REFERENCE = "def clamp(x):\n    return max(0, min(x, 10))"
POOL = [
    REFERENCE,
    "def clamp(x):\n    return max(0, x)",  # passes the seed tests, wrong above 10
    "def clamp(x):\n    return min(x, 10)",  # passes the seed tests, wrong below 0
    "def clamp(x):\n    return 5",  # fails a seed test
]


INT_DOMAIN = {"how": "statement", "contract": "def precondition(x):\n    return type(x) is int", "shape": None, "seed_violations": 0}


def _batch(reference_ok=True):
    return {
        "id": ["C_1", "C_2"],
        "question": ["Clamp x to [0, 10].", "Clamp x to [0, 10] (no reference)."],
        "tests": [["assert clamp(5) == 5", "assert clamp(7) == 7"]] * 2,
        "test_origin": [[{"round": 0, "method": "refine"}] * 2] * 2,
        "solutions": [[{"model": "m", "sample": k, "code": c} for k, c in enumerate(POOL)]] * 2,
        "pass_matrix": [[[True, True], [True, True], [True, True], [True, False]]] * 2,
        "reference_solutions": [[REFERENCE], [REFERENCE]],
        "reference_ok": [reference_ok, False],
        # the statement's domain, declared by the row: every int (the seeds alone show only positive ones)
        "domain": [INT_DOMAIN] * 2,
    }


@pytest.fixture(autouse=True)
def _fresh_backends():
    close_backends()
    yield
    close_backends()


def test_search_alone_needs_no_model_and_appends_checked_tests_with_their_origin():
    config = EvolveConfig(adversarial=False, discriminative=False, search=SearchConfig(), round=2, seed=3,
                          execute=ExecuteConfig(mode="fast", workers=1))
    assert config.methods == ("search",) and config.llm is None
    out = evolve(_batch(), config=config)
    tests, origins, M = out["tests"][0], out["test_origin"][0], out["pass_matrix"][0]
    new = tests[2:]
    assert new and all(t.startswith("assert clamp(") for t in new)
    assert origins[2:] == [{"round": 2, "method": "search"}] * len(new)
    assert len(M) == len(POOL) and all(len(row) == len(tests) for row in M)
    assert all(M[0]) and not all(M[1]) and not all(M[2])  # the reference passes all; both survivors are killed
    with Sandbox(workers=1, mode="isolated") as sb:
        assert sb.pass_matrix(POOL, new).tolist() == [row[2:] for row in M]  # columns are the real verdicts
    [entry] = out["evolve_log"][0]
    assert entry["method"] == "search" and entry["added"] == len(new) and entry["error"] is None
    # the problem without a confirmed reference is left as it was, and says why
    assert out["tests"][1] == _batch()["tests"][1]
    assert out["evolve_log"][1][0]["notes"][0] == "no_reference"


def test_search_is_reproducible_from_the_round_seed():
    config = EvolveConfig(adversarial=False, discriminative=False, search=SearchConfig(), seed=5,
                          execute=ExecuteConfig(mode="fast", workers=1))
    assert evolve(_batch(), config=config)["tests"] == evolve(_batch(), config=config)["tests"]


def test_search_runs_after_the_prompts_and_targets_what_they_left():
    answer = '{"tests": ["assert clamp(50) == 10"]}'  # kills the first survivor only
    with ScriptedOpenAIServer(lambda body: answer) as server:
        config = EvolveConfig(llm=LLMConfig(model="w", base_url=server.base_url, max_retries=0),
                              discriminative=False, search=SearchConfig(),
                              execute=ExecuteConfig(mode="fast", workers=1))
        out = evolve(_batch(), config=config)
    methods = [o["method"] for o in out["test_origin"][0]]
    assert methods[:3] == ["refine", "refine", "adversarial"]
    assert "search" in methods[3:]
    log = {e["method"]: e for e in out["evolve_log"][0]}
    # the search saw what the prompt left: the reference (it cannot be killed) and the program wrong below 0
    assert log["search"]["notes"][-1].startswith("survivors 2, killed 1,")


def test_a_round_with_no_method_or_prompts_without_a_model_is_refused():
    with pytest.raises(ConfigError):
        EvolveConfig(adversarial=False, discriminative=False)
    with pytest.raises(ConfigError):
        evolve(_batch(), config=EvolveConfig(search=SearchConfig()))  # prompts on, no llm
