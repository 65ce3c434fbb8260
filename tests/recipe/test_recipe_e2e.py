"""The whole recipe on ten HumanEval problems: scripted LLM over loopback HTTP, real sandbox, real round store."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math

import pytest

from evolvecoder_datasets.errors import LLMRequestError
from evolvecoder_datasets.llm import LLMConfig
from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
from evolvecoder_datasets.recipe import RecipeConfig, run_recipe
from evolvecoder_datasets.rounds import list_rounds, load_round
from evolvecoder_datasets.stages.evolve import EvolveConfig
from evolvecoder_datasets.stages.execute import ExecuteConfig
from evolvecoder_datasets.stages.finalize import FinalizeConfig
from evolvecoder_datasets.stages.refine import RefineConfig
from evolvecoder_datasets.stages.sample import ModelSpec
from evolvecoder_datasets.stages.support.resources import close_backends

from ..scripted_llm import PROBLEM_IDS, ScriptedResponder


def _config(base_url: str, output_dir, **changes) -> RecipeConfig:
    writer = LLMConfig(model="writer", base_url=base_url, max_retries=0, timeout_s=30)
    values = {
        "output_dir": str(output_dir),
        "sources": ("humaneval",),
        "problem_ids": PROBLEM_IDS,
        "dedup": False,
        "rounds": 2,
        "seed": 0,
        "llm": writer,
        "models": (ModelSpec("alpha", writer.replace(model="alpha"), n=2),
                ModelSpec("beta", writer.replace(model="beta"), n=2)),
        "mutants": 6,
        "refine": RefineConfig(num_tests=8, min_tests=4),
        # the scripted answers are whole asserts with wrong values on purpose: the paper's mode, end to end (input
        # mode is covered by tests/stages/test_evolve_inputs.py and the demo's newcomer run)
        "evolve": EvolveConfig(num_tests=3, test_mode="asserts"),
        "finalize": FinalizeConfig(min_tests=3, max_perfect=3),
        "execute": ExecuteConfig(mode="fast", timeout_s=1.0, workers=2),
        "figures": True,
    }
    values.update(changes)
    return RecipeConfig(**values)


def _request_key(body: dict) -> str:
    return hashlib.sha256(json.dumps([body["model"], body["messages"]], sort_keys=True).encode()).hexdigest()


@pytest.fixture(autouse=True)
def _fresh_backends():
    close_backends()
    yield
    close_backends()


def test_two_rounds_harden_the_tests_and_every_drop_has_a_reason(tmp_path):
    with ScriptedOpenAIServer(ScriptedResponder()) as server:
        result = run_recipe(_config(server.base_url, tmp_path / "run"))

    pass_at_1 = result.pass_at_1()
    mutation = result.mutation_scores()
    assert len(pass_at_1) == 3 and len(mutation) == 3
    assert pass_at_1[0] > pass_at_1[1] >= pass_at_1[2]
    assert mutation[0] < mutation[1] <= mutation[2] <= 1.0

    # every problem that left has a reason: prose instead of JSON, wrong tests the reference rejects, final filter
    assert result.seeds == 10
    assert result.drop_reasons["refine_no_json"] == 1
    assert result.drop_reasons["reference_rejected_tests"] == 1
    assert sum(result.drop_reasons.values()) == 10 - len(result.final)
    assert len(result.final) >= 4

    round0 = result.rounds[0]
    assert len(round0) == 8
    by_id = {row["id"]: row for row in round0}
    # the truncated answer kept its complete tests; the wrong one was rejected by the reference
    below_zero = by_id["HumanEval_3"]
    assert "assert below_zero([1, -1]) == True" not in below_zero["tests"]
    assert below_zero["reference_failed_tests"] == 1
    # duplicates and the bare comparison were cleaned up
    assert len(set(by_id["HumanEval_7"]["tests"])) == len(by_id["HumanEval_7"]["tests"])
    assert "assert below_threshold([3], 4) == True" in by_id["HumanEval_52"]["tests"]
    # the pool: 2 models x 2 samples plus mutants, sampled once and reused by every round
    pool = by_id["HumanEval_13"]["solutions"]
    assert [(s["model"], s["sample"]) for s in pool[:4]] == [("alpha", 0), ("alpha", 1), ("beta", 0), ("beta", 1)]
    assert {s["model"] for s in pool[4:]} == {"mutant"}
    assert result.rounds[2][1]["solutions"] == result.rounds[0][1]["solutions"]

    # tests accumulate with their origin; the pass matrix stays aligned
    last = result.rounds[-1]
    for row in last:
        assert len(row["test_origin"]) == len(row["tests"])
        assert all(len(cells) == len(row["tests"]) for cells in row["pass_matrix"])
        methods = {(o["round"], o["method"]) for o in row["test_origin"]}
        assert (0, "refine") in methods
    origins = {(o["round"], o["method"]) for row in last for o in row["test_origin"]}
    assert {(1, "adversarial"), (1, "discriminative"), (2, "adversarial")} <= origins
    logs = [entry for row in last for entry in row["evolve_log"]]
    assert {entry["round"] for entry in logs} == {1, 2}
    assert any(entry["reference_failed"] for entry in logs)  # fib(90) times out in the recursive reference
    assert any(entry["duplicates"] for entry in logs)
    assert all(entry["split_failed"] >= 0 for entry in logs if entry["method"] == "discriminative")

    # the final rows: published columns, pruned tests, a reason for each removed problem
    assert set(result.final.column_names) >= {"id", "question", "tests"}
    assert all(len(t) >= 3 for t in result.final["tests"])

    # the round store has every round and the final dataset, with cards and statistics
    store = str(tmp_path / "run" / "store")
    revisions = [info.revision for info in list_rounds(store)]
    assert {"round0", "round1", "round2", "main"} <= set(revisions)
    published = load_round(store)
    assert sorted(published["id"]) == sorted(result.final["id"])
    # keep_source is off by default; the calibrated limit the tests were verified under travels with them
    assert published.column_names == ["id", "question", "tests", "time_limit_s"]
    assert published["time_limit_s"] == [result.final["time_limit_s"][list(result.final["id"]).index(i)]
                                         for i in published["id"]]

    # why each problem left is published beside the rows, and returned
    assert len(result.dropped) == sum(result.drop_reasons.values())
    assert {(d["id"], d["stage"], d["reason"]) for d in result.dropped if d["stage"] == "refine"} == {
        (d["id"], "refine", d["reason"]) for d in result.dropped if d["reason"] in ("refine_no_json",
                                                                                   "reference_rejected_tests")}
    assert {d["stage"] for d in result.dropped} <= {"refine", "final"}
    dropped_main = load_round(store, config="dropped")
    assert dropped_main.column_names == ["id", "stage", "reason"]
    assert sorted(dropped_main["id"]) == sorted(d["id"] for d in result.dropped)
    assert not set(dropped_main["id"]) & set(published["id"])
    dropped_round0 = load_round(store, round=0, config="dropped")
    assert set(dropped_round0["stage"]) == {"refine"} and len(dropped_round0) == 10 - len(round0)
    solutions = load_round(store, round=2, config="solutions")
    assert len(solutions) == len(last)
    stats = result.stats[-1]
    assert stats["drop_reasons"] == result.drop_reasons
    assert stats["provenance"]["seeds"] == {"seed": 0}
    assert not math.isnan(stats["pass_at_k"]["2"]["1"])


def test_an_interrupted_run_resumes_without_repeating_a_request(tmp_path):
    output = tmp_path / "run"
    responder = ScriptedResponder()
    with ScriptedOpenAIServer(responder, die_after=25) as server:
        with pytest.raises(LLMRequestError):
            run_recipe(_config(server.base_url, output))
        answered = {_request_key(body) for body in server.requests[:25]}
    close_backends()

    with ScriptedOpenAIServer(responder) as server:
        first = run_recipe(_config(server.base_url, output))
        resent = [body for body in server.requests if _request_key(body) in answered]
        assert server.requests and not resent
    close_backends()

    with ScriptedOpenAIServer(responder) as server:
        again = run_recipe(_config(server.base_url, output))
        assert server.requests == []
    assert again.final["tests"] == first.final["tests"]
    assert again.commits == []  # every revision already holds this run's key


def _is_evolve(body: dict) -> bool:
    return body.get("model") == "writer" and "Seed problem:" not in body["messages"][-1]["content"]


@pytest.mark.slow
@pytest.mark.parametrize("evolve_answers_before_death", [3, 13])
def test_a_run_killed_inside_an_evolution_round_resumes_to_the_uninterrupted_result(tmp_path,
                                                                                       evolve_answers_before_death):
    with ScriptedOpenAIServer(ScriptedResponder()) as server:
        whole = run_recipe(_config(server.base_url, tmp_path / "whole"))
        before_evolve = sum(1 for body in server.requests if not _is_evolve(body))
    close_backends()

    output = tmp_path / "killed"
    responder = ScriptedResponder()
    die_after = before_evolve + evolve_answers_before_death
    with ScriptedOpenAIServer(responder, die_after=die_after) as server:
        with pytest.raises(LLMRequestError):
            run_recipe(_config(server.base_url, output))
        answered = {_request_key(body) for body in server.requests[:die_after]}
        assert sum(_is_evolve(body) for body in server.requests[:die_after]) == evolve_answers_before_death
    close_backends()

    with ScriptedOpenAIServer(responder) as server:
        resumed = run_recipe(_config(server.base_url, output, store="none"))
        assert server.requests and not [body for body in server.requests if _request_key(body) in answered]
        assert all(_is_evolve(body) for body in server.requests)  # refine and sample came from their checkpoints
    for a, b in zip(whole.rounds, resumed.rounds, strict=True):
        for column in ("id", "tests", "test_origin", "pass_matrix"):
            assert a[column] == b[column]
    assert resumed.final["tests"] == whole.final["tests"]
    assert resumed.drop_reasons == whole.drop_reasons


def test_a_changed_temperature_or_model_is_asked_again_not_replayed_from_the_old_run(tmp_path):
    output = tmp_path / "run"
    responder = ScriptedResponder()
    with ScriptedOpenAIServer(responder) as server:
        run_recipe(_config(server.base_url, output, rounds=0, store="none"))
        first = len(server.requests)
    close_backends()

    with ScriptedOpenAIServer(responder) as server:
        cfg = _config(server.base_url, output, rounds=0, store="none")
        run_recipe(dataclasses.replace(cfg, refine=cfg.refine.replace(temperature=0.2)))
        refine_asked = [b for b in server.requests if "Seed problem:" in b["messages"][-1]["content"]]
        assert len(refine_asked) == len(PROBLEM_IDS) and {b["temperature"] for b in refine_asked} == {0.2}
    close_backends()

    with ScriptedOpenAIServer(responder) as server:
        cfg = _config(server.base_url, output, rounds=0, store="none")
        alpha, beta = cfg.models
        changed = dataclasses.replace(cfg, refine=cfg.refine.replace(temperature=0.2),
                                      models=(dataclasses.replace(alpha, temperature=0.9), beta))
        run_recipe(changed)
        assert {b["model"] for b in server.requests} == {"alpha"}  # beta and the writer are unchanged: replayed
        assert {b["temperature"] for b in server.requests} == {0.9}
    assert first > 0


def test_a_recorded_failed_request_is_asked_again_by_the_next_run(tmp_path):
    from evolvecoder_datasets.llm.testing import Fault

    responder = ScriptedResponder()

    def outage(body):  # HumanEval_0's refine request fails; everything else is answered
        content = body["messages"][-1]["content"]
        return Fault.http(503) if "Seed problem:" in content and "has_close_elements" in content else responder(body)

    output = tmp_path / "run"
    with ScriptedOpenAIServer(outage) as server:
        cfg = _config(server.base_url, output, rounds=0, store="none")
        first = run_recipe(dataclasses.replace(cfg, refine=cfg.refine.replace(on_llm_error="record")))
    close_backends()
    assert first.drop_reasons.get("refine_llm_error") == 1

    with ScriptedOpenAIServer(responder) as server:
        cfg = _config(server.base_url, output, rounds=0, store="none")
        again = run_recipe(dataclasses.replace(cfg, refine=cfg.refine.replace(on_llm_error="record")))
        contents = [b["messages"][-1]["content"] for b in server.requests]
        assert contents and all("has_close_elements" in c for c in contents)  # only the failed problem is asked
    with ScriptedOpenAIServer(ScriptedResponder()) as server:
        cfg = _config(server.base_url, tmp_path / "whole", rounds=0, store="none")
        whole = run_recipe(dataclasses.replace(cfg, refine=cfg.refine.replace(on_llm_error="record")))
    assert "refine_llm_error" not in again.drop_reasons
    assert again.final["tests"] == whole.final["tests"] and again.rounds[0]["id"] == whole.rounds[0]["id"]


def test_llm_rounds_asks_the_test_writer_in_the_first_rounds_only_and_later_rounds_grow_by_search(tmp_path):
    from evolvecoder_datasets.errors import ConfigError
    from evolvecoder_datasets.search.writer import SearchConfig

    with pytest.raises(ConfigError, match="evolve.search"):
        _config("http://127.0.0.1:9", tmp_path / "bad", llm_rounds=1)  # round 2 would have no method
    with pytest.raises(ConfigError, match="llm_rounds"):
        _config("http://127.0.0.1:9", tmp_path / "bad", llm_rounds=-1)
    evolve = EvolveConfig(num_tests=3, test_mode="asserts", search=SearchConfig(budget=200, max_tests=2))
    with ScriptedOpenAIServer(ScriptedResponder()) as server:
        result = run_recipe(_config(server.base_url, tmp_path / "run", evolve=evolve, llm_rounds=1))
        prompts = [" ".join(m["content"] for m in body["messages"]) for body in server.requests]

    logs = [entry for row in result.rounds[-1] for entry in row["evolve_log"]]
    assert {e["method"] for e in logs if e["round"] == 1} >= {"adversarial", "discriminative"}
    assert {e["method"] for e in logs if e["round"] == 2} == {"search"}
    origins = {(o["round"], o["method"]) for row in result.rounds[-1] for o in row["test_origin"]}
    assert not {m for r, m in origins if r == 2} - {"search"}
    # the server saw one adversarial and one discriminative prompt per problem, all of round 1
    writers = ("You are hardening the test suite", "You are making the test suite of a programming problem more")
    asked = sum(1 for p in prompts if p.startswith(writers))
    assert asked == sum(1 for e in logs if e["method"] != "search") == 2 * len(result.rounds[1])
