"""The scripted loopback server itself: routes, n handling, death after N requests."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from evolvecoder_datasets.llm.testing import Fault, ScriptedOpenAIServer


def _post(url: str, body: dict) -> dict:
    req = urllib.request.Request(url + "/chat/completions", data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=5) as response:
        return json.load(response)


def test_models_route_and_unknown_routes():
    with ScriptedOpenAIServer(model="tiny") as server:
        with urllib.request.urlopen(server.base_url + "/models", timeout=5) as response:
            assert json.load(response)["data"][0]["id"] == "tiny"
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(server.base_url + "/nowhere", timeout=5)
        assert info.value.code == 404


def test_echo_by_default_and_n_choices():
    with ScriptedOpenAIServer() as server:
        answer = _post(server.base_url, {"messages": [{"role": "user", "content": "hi"}], "n": 2})
    assert [c["message"]["content"] for c in answer["choices"]] == ["hi", "hi"]


def test_injected_fault_carries_retry_after_then_service_resumes():
    with ScriptedOpenAIServer(lambda body: "ok") as server:
        server.inject(Fault.http(429, retry_after=3))
        with pytest.raises(urllib.error.HTTPError) as info:
            _post(server.base_url, {"messages": [{"role": "user", "content": "x"}]})
        assert info.value.code == 429 and info.value.headers["Retry-After"] == "3"
        assert _post(server.base_url, {"messages": [{"role": "user", "content": "x"}]})["choices"]


def test_server_refuses_connections_after_dying():
    with ScriptedOpenAIServer(lambda body: "ok", die_after=1) as server:
        url = server.base_url
        _post(url, {"messages": [{"role": "user", "content": "x"}]})
        assert server.dead
        with pytest.raises(urllib.error.URLError):
            _post(url, {"messages": [{"role": "user", "content": "x"}]})


def test_a_responder_bug_becomes_a_500():
    with ScriptedOpenAIServer(lambda body: 1 / 0) as server:
        with pytest.raises(urllib.error.HTTPError) as info:
            _post(server.base_url, {"messages": [{"role": "user", "content": "x"}]})
    assert info.value.code == 500
