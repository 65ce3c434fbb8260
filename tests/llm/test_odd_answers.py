"""The OpenAI-compatible client on answers real servers send that are not the textbook chat completion.

Every case goes through the real loopback server (``Fault.raw`` / ``Fault.cut`` send exact bytes), so the client's
whole path runs: aiohttp, retries, the cache and the per-slot error handling.
"""

from __future__ import annotations

import pytest

from evolvecoder_datasets.errors import LLMRequestError
from evolvecoder_datasets.llm import ChatRequest, LLMConfig, make_backend
from evolvecoder_datasets.llm.cache import RequestCache
from evolvecoder_datasets.llm.testing import Fault, ScriptedOpenAIServer


def _config(server: ScriptedOpenAIServer, **changes) -> LLMConfig:
    base = {"model": "m", "base_url": server.base_url, "max_retries": 2, "backoff_s": 0.01, "timeout_s": 5.0}
    return LLMConfig(**{**base, **changes})


def _answer(content, finish_reason="stop", **extra) -> dict:
    choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}
    return {"choices": [choice], **extra}


def _generate_one(fault: Fault, *, times: int = 1, **config):
    with ScriptedOpenAIServer(lambda body: "fallback") as server:
        server.inject(fault, times)
        with make_backend(_config(server, **config)) as llm:
            out = llm.generate([ChatRequest("hi", max_tokens=16)], return_exceptions=True)
        return out[0], len(server.requests)


def test_content_given_as_a_list_of_parts_becomes_its_text(tmp_path):
    parts = [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "def f():\n"},
             {"type": "text", "text": "    return 1"}]  # fmt: skip
    result, calls = _generate_one(Fault.raw(200, _answer(parts)), cache_dir=str(tmp_path))
    assert result.texts == ("def f():\n    return 1",) and calls == 1
    with RequestCache(tmp_path) as cache:  # what was stored is a string too, so a replay gives the same
        [(_, stored)] = list(cache.items())
    assert stored.texts == ("def f():\n    return 1",)


def test_null_content_of_a_tool_call_or_refusal_is_an_empty_text_with_its_finish_reason():
    result, _ = _generate_one(Fault.raw(200, _answer(None, "tool_calls")))
    assert result.texts == ("",) and result.finish_reasons == ("tool_calls",)


def test_missing_or_odd_usage_does_not_fail_a_good_answer():
    for usage in ({}, {"usage": None}, {"usage": "n/a"}, {"usage": {"prompt_tokens": "n/a", "completion_tokens": 4}}):
        result, calls = _generate_one(Fault.raw(200, _answer("ok", **usage)), tpm=1_000_000)
        assert not isinstance(result, BaseException), (usage, result)
        assert result.texts == ("ok",) and calls == 1
    assert result.completion_tokens == 4 and result.prompt_tokens == 0


def test_a_truncated_answer_keeps_finish_reason_length():
    result, _ = _generate_one(Fault.raw(200, _answer("def f(", "length")))
    assert result.texts == ("def f(",) and result.finish_reasons == ("length",)


@pytest.mark.parametrize("body", ["[1, 2]", "null", '"busy"', "<html>502 Bad Gateway</html>"])
def test_a_200_answer_that_is_not_a_json_object_is_retried(body):
    result, calls = _generate_one(Fault.raw(200, body))
    assert not isinstance(result, BaseException), result
    assert result.texts == ("fallback",) and calls == 2


@pytest.mark.parametrize("choices", ["none", [None], [1, 2]])
def test_malformed_choices_fail_only_their_slot(choices):
    with ScriptedOpenAIServer(lambda body: "fine") as server:
        server.inject(Fault.raw(200, {"choices": choices}))
        with make_backend(_config(server, max_concurrency=1)) as llm:
            out = llm.generate([ChatRequest("a", max_tokens=8), ChatRequest("b", max_tokens=8)],
                               return_exceptions=True)  # fmt: skip
    assert isinstance(out[0], LLMRequestError) and "malformed" in str(out[0])
    assert out[1].texts == ("fine",)


def test_a_server_closing_mid_answer_is_retried():
    result, calls = _generate_one(Fault.cut(_answer("never seen")))
    assert result.texts == ("fallback",) and calls == 2


def test_a_server_always_closing_mid_answer_gives_a_request_error_in_the_slot():
    result, calls = _generate_one(Fault.cut(_answer("never seen")), times=10)
    assert isinstance(result, LLMRequestError) and calls == 3


@pytest.mark.parametrize("headers", [{}, {"Retry-After": "0.01"}, {"Retry-After": "soon"}])
def test_5xx_and_429_with_non_json_bodies_are_retried(headers):
    for status in (429, 503):
        result, calls = _generate_one(Fault.raw(status, "<html>busy</html>", headers=headers))
        assert result.texts == ("fallback",) and calls == 2


def test_a_4xx_with_a_plain_text_body_is_reported_with_that_text():
    result, calls = _generate_one(Fault.raw(401, "invalid api key"))
    assert isinstance(result, LLMRequestError) and "invalid api key" in str(result) and calls == 1


def test_an_exhausted_quota_429_is_not_retried_but_a_rate_limit_429_is():
    quota = {"error": {"message": "You exceeded your current quota.", "type": "insufficient_quota",
                       "code": "insufficient_quota"}}  # fmt: skip
    result, calls = _generate_one(Fault.raw(429, quota, headers={"Retry-After": "0.01"}), times=10)
    assert isinstance(result, LLMRequestError) and result.status == 429 and "quota" in str(result) and calls == 1
    limited = {"error": {"message": "Rate limit reached.", "type": "requests", "code": "rate_limit_exceeded"}}
    result, calls = _generate_one(Fault.raw(429, limited, headers={"Retry-After": "0.01"}))
    assert result.texts == ("fallback",) and calls == 2
