"""The whole pipeline on the tinytext fixture, driven by scripted answers over the real HTTP client path.

Six seeds, three attempts each. The script gives every seed a story: a task accepted at once; tasks accepted after
rejected attempts; a seed whose three answers fail three different gates (the last one's asserts never reach
``task_module``); a seed whose answers fail verification three ways (the oracle fails its own test, the test
passes without the oracle through an ``except ImportError`` fallback, the oracle calls ``os._exit(0)``); a twin of
an accepted task caught by dedup in the same batch.
"""

from __future__ import annotations

from collections import Counter

import pytest

from evolvecoder_datasets.code_instruct import (
    CodeInstructConfig,
    SeedConfig,
    generate_tasks,
    sample_snippets,
    tasks_to_dataset,
)
from evolvecoder_datasets.code_instruct.export import ROW_COLUMNS
from evolvecoder_datasets.llm import LLMConfig
from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer

from .conftest import answer

SCRIPT = [
    ["good_caption"],
    ["contaminated", "not_anchored", "good_slugs"],
    ["no_task_import", "symbol_collision", "passes_without_oracle"],
    ["oracle_fails", "fallback_without_oracle", "exit_zero"],
    ["duplicate_of_caption", "errors_without_raises", "annotation_only"],
    ["missing_section", "syntax_error", "good_top_words"],
]
SEEDS = SeedConfig(seed=3)


class ScriptedRepoModel:
    """Answers by (which seed window the prompt shows, which attempt's sampling seed it carries)."""

    def __init__(self, snippets, script, llm_seed=0):
        self.by_text = {s.text.rstrip(): answers for s, answers in zip(snippets, script)}
        self.llm_seed = llm_seed
        self.calls = Counter()

    def __call__(self, body):
        prompt = body["messages"][-1]["content"]
        shown = max((text for text in self.by_text if text in prompt), key=len)
        attempt = body["seed"] - self.llm_seed
        self.calls[shown] += 1
        return answer("tinytext", self.by_text[shown][attempt])


@pytest.fixture(scope="module")
def pipeline_run(tinytext_repo, tinytext_env, venv_backend, tmp_path_factory):
    snippets = sample_snippets(tinytext_repo, len(SCRIPT), config=SEEDS)
    assert len({s.text for s in snippets}) == len(SCRIPT)
    model = ScriptedRepoModel(snippets, SCRIPT)
    config = CodeInstructConfig(num_seeds=len(SCRIPT), seeds=SEEDS, verify_timeout_s=60)
    cache = tmp_path_factory.mktemp("llm-cache")
    with ScriptedOpenAIServer(model) as server:
        llm = LLMConfig(model="scripted-coder", base_url=server.base_url, cache_dir=str(cache), max_retries=0)
        run = generate_tasks(tinytext_repo, llm=llm, environment=venv_backend, config=config)
        requests = list(server.requests)
    return run, requests, llm, config


def test_accepted_tasks_and_their_attempts(pipeline_run):
    run, _, _, _ = pipeline_run
    assert [(t.seed_index, t.attempts) for t in run.tasks] == [(0, 1), (1, 3), (5, 3)]
    assert [t.id for t in run.tasks] == ["tiny_textkit_0", "tiny_textkit_1", "tiny_textkit_5"]
    caption = run.tasks[0]
    assert "def caption_lines" in caption.solution and "from task_module import caption_lines" in caption.test
    assert set(caption.stage_b.values()) == {"passed"} and len(caption.stage_b) == 3
    # Judged outside: without task_module every split test's calls fail (pytest would fail at collection).
    assert set(caption.stage_a.values()) == {"error"} and len(caption.stage_a) == 3
    assert [t.judged for t in run.tasks] == ["outside"] * 3


def test_yield_report_counts_every_call_and_reason(pipeline_run):
    run, requests, _, _ = pipeline_run
    report = run.report
    assert report.seeds_sampled == 6 and report.seeds_without_window == 0
    assert report.attempts == len(requests) == 16
    assert report.emitted == 3
    assert report.skip_reasons == Counter({
        "contaminated": 1, "not_anchored": 2, "test_not_importing_task_module": 1, "symbol_collision": 1,
        "oracle_unreached": 1, "weak_test": 1, "solution_fails_test": 1, "test_passes_without_solution": 1, "verify_crashed": 1,
        "duplicate": 1, "missing_section": 1, "syntax_error": 1,
    })  # fmt: skip
    assert sum(report.skip_reasons.values()) + report.emitted == report.attempts
    assert report.seed_outcomes == Counter({"emitted": 3, "oracle_unreached": 1, "verify_crashed": 1,
                                            "not_anchored": 1})
    # Verified: attempt 1 (caption, oracle_fails, duplicate twin), 2 (fallback_without_oracle), 3 (slugs, exit, top).
    assert report.verified == 7
    assert "emitted              3" in str(report) and report.to_dict()["yield_rate"] == round(3 / 16, 4)


def test_each_attempt_sends_a_new_sampling_seed_with_the_configured_sampling(pipeline_run):
    _, requests, _, _ = pipeline_run
    assert Counter(body["seed"] for body in requests) == Counter({0: 6, 1: 5, 2: 5})
    assert {body["temperature"] for body in requests} == {0.7}
    assert {body["max_tokens"] for body in requests} == {2048}
    assert all("tiny-textkit==0.3.1" in body["messages"][-1]["content"] for body in requests)
    assert all("`tinytext`" in body["messages"][-1]["content"] for body in requests)


def test_rejected_candidates_keep_their_sections_for_inspection(pipeline_run):
    run, _, _, _ = pipeline_run
    crashed = [r for r in run.rejected if r["reason"] == "verify_crashed"]
    assert len(crashed) == 1 and "os._exit(0)" in crashed[0]["solution"]
    assert {r["reason"] for r in run.rejected if "solution" not in r} == {"missing_section", "syntax_error"}


def test_rows_carry_instruction_contract_and_provenance(pipeline_run):
    run, _, _, _ = pipeline_run
    ds = tasks_to_dataset(run.tasks, include_judged_inside=True)
    assert ds.column_names == list(ROW_COLUMNS)
    row = ds[0]
    assert row["question"].startswith(run.tasks[0].problem)
    assert "`task_module.py`" in row["question"] and "tiny-textkit 0.3.1" in row["question"]
    assert row["tests"] == [run.tasks[0].test]
    assert (row["repo"], row["repo_version"], row["package"]) == ("tiny-textkit", "0.3.1", "tinytext")
    assert row["path"].startswith("src/tinytext/") and row["start_line"] <= row["end_line"]
    assert (row["model"], row["attempts"], row["source"]) == ("scripted-coder", 1, "code_instruct")
    assert row["environment"] == f"venv:{run.environment.key}"


def test_rerun_is_answered_from_the_request_cache(pipeline_run, tinytext_repo, venv_backend):
    run, _, llm, config = pipeline_run
    with ScriptedOpenAIServer(lambda body: "unused") as server:
        again = generate_tasks(tinytext_repo, llm=llm.replace(base_url=server.base_url), environment=venv_backend,
                               config=config)  # fmt: skip
        assert server.requests == []
    assert [t.solution for t in again.tasks] == [t.solution for t in run.tasks]
    assert again.report.skip_reasons == run.report.skip_reasons


def test_rows_push_as_a_round(pipeline_run, tmp_path):
    from evolvecoder_datasets.rounds import load_round, push_round

    run, _, _, config = pipeline_run
    ds = tasks_to_dataset(run.tasks, include_judged_inside=True)
    stats = {"num_problems": len(ds), "drop_reasons": dict(run.report.skip_reasons)}
    commit = push_round(ds, tmp_path / "store", round=0, stats=stats, config=config.to_dict())
    assert commit.revision == "round0"
    loaded = load_round(tmp_path / "store", 0)
    assert sorted(loaded["id"]) == sorted(ds["id"]) and loaded[0]["tests"] == ds[0]["tests"]
