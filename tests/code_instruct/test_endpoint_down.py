"""A failing endpoint stops code_instruct instead of recording ``llm_error`` for seed after seed.

Real parts: the tinytext fixture repository and its virtualenv, the scripted OpenAI server over loopback HTTP.
"""

from __future__ import annotations

import pytest

from evolvecoder_datasets.code_instruct import CodeInstructConfig, SeedConfig, generate_tasks
from evolvecoder_datasets.errors import LLMUnavailableError
from evolvecoder_datasets.llm import LLMConfig
from evolvecoder_datasets.llm.testing import Fault, ScriptedOpenAIServer

from .conftest import answer


def test_a_batch_whose_every_request_fails_stops_the_run_after_one_attempt(tinytext_repo, tinytext_env,
                                                                           venv_backend, tmp_path):
    config = CodeInstructConfig(num_seeds=4, seeds=SeedConfig(seed=3), max_attempts_per_seed=3)
    with ScriptedOpenAIServer(lambda body: Fault.http(500, "down")) as server:
        llm = LLMConfig(model="coder", base_url=server.base_url, cache_dir=str(tmp_path), max_retries=1,
                        backoff_s=0.0)
        with pytest.raises(LLMUnavailableError, match=r"every one of 4 request\(s\) failed; stopping"):
            generate_tasks(tinytext_repo, llm=llm, environment=venv_backend, config=config)
        assert len(server.requests) == 4 * 2  # the first attempt and its one retry; attempts 2 and 3 never sent


def test_a_refused_credential_stops_the_run_even_when_other_requests_succeed(tinytext_repo, tinytext_env,
                                                                             venv_backend, tmp_path):
    config = CodeInstructConfig(num_seeds=3, seeds=SeedConfig(seed=3), max_attempts_per_seed=2)
    calls = []

    def responder(body):
        calls.append(body)
        return Fault.http(401, "bad key") if len(calls) == 1 else answer("tinytext", "good_caption")

    with ScriptedOpenAIServer(responder) as server:
        llm = LLMConfig(model="coder", base_url=server.base_url, cache_dir=str(tmp_path), max_retries=0,
                        max_concurrency=1)
        with pytest.raises(LLMUnavailableError, match="HTTP 401"):
            generate_tasks(tinytext_repo, llm=llm, environment=venv_backend, config=config)
