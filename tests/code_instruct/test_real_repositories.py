"""click and attrs from their PyPI sdists: intake, venv build, seeds, gates and both verification stages.

Marked slow: the first run downloads two sdists and builds two virtualenvs (pip reaches PyPI for the build
backends and pytest); later runs reuse them from the persistent test cache. Skipped when PyPI is unreachable.
"""

from __future__ import annotations

from collections import Counter

import pytest

from evolvecoder_datasets.code_instruct import (
    CodeInstructConfig,
    SeedConfig,
    generate_tasks,
    open_repository,
    sample_snippets,
    verify_task,
)
from evolvecoder_datasets.errors import EnvironmentBuildError
from evolvecoder_datasets.llm import LLMConfig
from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
from evolvecoder_datasets.prompts import code_instruct

from .conftest import answer

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def click_repo(sdists, tmp_path_factory):
    return open_repository(sdists["click"], cache_dir=tmp_path_factory.mktemp("sources"))


@pytest.fixture(scope="module")
def attrs_repo(sdists, tmp_path_factory):
    return open_repository(sdists["attrs"], cache_dir=tmp_path_factory.mktemp("sources"))


def _prepare(backend, repo):
    try:
        return backend.prepare(repo)
    except EnvironmentBuildError as err:
        pytest.skip(f"cannot build the {repo.name} venv (PyPI unreachable?): {str(err)[:200]}")


def test_intake_reads_names_versions_and_symbols(click_repo, attrs_repo):
    assert (click_repo.dist_name, click_repo.version, click_repo.package) == ("click", "8.1.7", "click")
    assert {"echo", "command", "option", "Context", "style", "unstyle"} <= click_repo.public_symbols
    assert (attrs_repo.dist_name, attrs_repo.version) == ("attrs", "23.2.0")
    assert attrs_repo.import_names == ("attr", "attrs")  # the distribution ships two import names
    assert {"define", "field", "asdict", "has", "Factory"} <= attrs_repo.public_symbols


def test_seed_windows_stay_in_the_package_sources(click_repo):
    snippets = sample_snippets(click_repo, 20, config=SeedConfig(seed=1))
    assert all(s is not None and s.path.startswith("src/click/") for s in snippets)
    assert not any(s.path.endswith("__init__.py") for s in snippets)
    assert all(30 <= s.end_line - s.start_line + 1 <= 200 for s in snippets)


def test_click_tasks_verified_in_clicks_own_environment(click_repo, venv_backend):
    env = _prepare(venv_backend, click_repo)
    assert env.versions["click"] == "8.1.7"
    good = code_instruct.parse(answer("click", "good_greeter"))
    verdict = verify_task(good.test, good.solution, environment=env, backend=venv_backend, timeout_s=120)
    assert verdict.result.ok and verdict.stage_a.status == "failed" and verdict.stage_b.counts() == {"passed": 3}
    bad = code_instruct.parse(answer("click", "oracle_fails"))
    verdict = verify_task(bad.test, bad.solution, environment=env, backend=venv_backend, timeout_s=120)
    assert verdict.result.reason == "solution_fails_test"


def test_pipeline_over_click_and_attrs(click_repo, attrs_repo, venv_backend):
    scripts = {
        click_repo.package: [["good_greeter"], ["oracle_fails", "good_unstyle"]],
        attrs_repo.package: [["symbol_collision", "good_public_dict"]],
    }
    for repo in (click_repo, attrs_repo):
        _prepare(venv_backend, repo)
    seeds = SeedConfig(seed=2)
    results = {}
    for repo in (click_repo, attrs_repo):
        script = scripts[repo.package]
        snippets = sample_snippets(repo, len(script), config=seeds)
        by_text = {s.text.rstrip(): answers for s, answers in zip(snippets, script)}
        folder = "click" if repo.package == "click" else "attrs"

        def respond(body, by_text=by_text, folder=folder):
            prompt = body["messages"][-1]["content"]
            shown = max((text for text in by_text if text in prompt), key=len)
            return answer(folder, by_text[shown][body["seed"]])

        config = CodeInstructConfig(num_seeds=len(script), seeds=seeds, verify_timeout_s=120,
                                    decontamination=("humaneval",))  # fmt: skip
        with ScriptedOpenAIServer(respond) as server:
            llm = LLMConfig(model="scripted-coder", base_url=server.base_url, max_retries=0)
            results[repo.package] = generate_tasks(repo, llm=llm, environment=venv_backend, config=config)
    click_run, attrs_run = results["click"], results["attrs"]
    assert [(t.seed_index, t.attempts) for t in click_run.tasks] == [(0, 1), (1, 2)]
    assert click_run.report.skip_reasons == Counter({"solution_fails_test": 1})
    assert [t.attempts for t in attrs_run.tasks] == [2]
    assert attrs_run.report.skip_reasons == Counter({"symbol_collision": 1})
    assert attrs_run.tasks[0].repo == "attrs" and attrs_run.tasks[0].package == "attrs"
    total = click_run.report.merge(attrs_run.report)
    assert (total.attempts, total.emitted) == (5, 3)
