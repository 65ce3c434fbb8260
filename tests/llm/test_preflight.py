"""The preflight and the retry lines, against real loopback servers (the scripted OpenAI server, a closed port)."""

from __future__ import annotations

import logging
import socket

import pytest

from evolvecoder_datasets.errors import LLMRequestError, LLMUnavailableError
from evolvecoder_datasets.llm import ChatRequest, LLMConfig, make_backend
from evolvecoder_datasets.llm.preflight import check_credential, preflight
from evolvecoder_datasets.llm.testing import Fault, ScriptedOpenAIServer


def _closed_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def test_a_missing_key_for_a_host_that_needs_one_fails_without_network(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with pytest.raises(LLMUnavailableError, match=r"'m' at https://router.huggingface.co/v1: no API key \(set HF_TOKEN\)"):
        check_credential(LLMConfig(model="m", base_url="https://router.huggingface.co/v1"))
    check_credential(LLMConfig(model="m", base_url="http://10.0.0.5:8000/v1"))  # a private vLLM server needs none


def test_every_credential_is_checked_before_any_endpoint_is_probed(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    closed = LLMConfig(model="pool", base_url=_closed_url())
    keyless = LLMConfig(model="writer")  # the OpenAI API, no key
    with pytest.raises(LLMUnavailableError, match="no API key") as info:
        preflight([("pool model", closed), ("test writer", keyless)])
    assert info.value.model == "writer" and isinstance(info.value, LLMRequestError)


def test_a_closed_port_is_named_with_its_role_model_and_url():
    url = _closed_url()
    with pytest.raises(LLMUnavailableError) as info:
        preflight([("pool model 'qwen'", LLMConfig(model="Qwen/Qwen3-4B", base_url=url))])
    message = str(info.value)
    assert message.startswith(f"pool model 'qwen' model 'Qwen/Qwen3-4B' at {url}: cannot connect")
    assert "\n" not in message and info.value.url == url


def test_a_server_that_answers_is_probed_once_however_many_roles_share_it():
    with ScriptedOpenAIServer(lambda body: "ok") as server:
        cfg = LLMConfig(model="m", base_url=server.base_url)
        assert preflight([("a", cfg), ("b", cfg.replace(model="other")), ("c", cfg)]) == 1
        assert server.requests == []  # no chat request: nothing paid


def test_local_and_replayed_backends_are_not_probed(tmp_path):
    replay = LLMConfig(model="m", base_url=_closed_url(), cache_dir=str(tmp_path), cache_mode="replay")
    assert preflight([("writer", replay), ("pool", LLMConfig(backend="transformers"))]) == 0


def test_each_retry_is_one_warning_line_naming_the_url_and_the_reason(caplog):
    with ScriptedOpenAIServer(lambda body: "fine") as server:
        server.inject(Fault.http(503, "overloaded"), times=2)
        cfg = LLMConfig(model="m", base_url=server.base_url, max_retries=3, backoff_s=0.0)
        with caplog.at_level(logging.WARNING, logger="evolvecoder_datasets.llm.openai_compat"), \
                make_backend(cfg) as llm:
            assert llm.generate([ChatRequest("hi", max_tokens=4)])[0].text == "fine"
    lines = [r.getMessage() for r in caplog.records if r.name == "evolvecoder_datasets.llm.openai_compat"]
    assert len(lines) == 2
    assert all(server.base_url in line and "HTTP 503: overloaded" in line for line in lines)
    assert "attempt 1 of 4" in lines[0] and "attempt 2 of 4" in lines[1]
