"""Request cache keys and persistence, the rate limiter on a fake clock, and configuration fallbacks."""

from __future__ import annotations

import asyncio

import pytest

from evolvecoder_datasets.errors import ConfigError
from evolvecoder_datasets.llm import ChatRequest, Completion, LLMConfig
from evolvecoder_datasets.llm.cache import RequestCache, request_key
from evolvecoder_datasets.llm.rate_limit import FakeClock, RateLimiter

BASE = ChatRequest("p", n=2, temperature=0.5, max_tokens=8, seed=1, prompt_version="v1")


@pytest.mark.parametrize(
    "changed",
    [
        ChatRequest("q", n=2, temperature=0.5, max_tokens=8, seed=1, prompt_version="v1"),
        ChatRequest("p", n=3, temperature=0.5, max_tokens=8, seed=1, prompt_version="v1"),
        ChatRequest("p", n=2, temperature=0.6, max_tokens=8, seed=1, prompt_version="v1"),
        ChatRequest("p", n=2, temperature=0.5, max_tokens=9, seed=1, prompt_version="v1"),
        ChatRequest("p", n=2, temperature=0.5, max_tokens=8, seed=2, prompt_version="v1"),
        ChatRequest("p", n=2, temperature=0.5, max_tokens=8, seed=1, prompt_version="v2"),
    ],
)
def test_every_part_of_the_request_changes_the_key(changed):
    assert request_key(changed, backend="openai", model="m") != request_key(BASE, backend="openai", model="m")


def test_backend_and_model_change_the_key_but_the_stage_does_not():
    key = request_key(BASE, backend="openai", model="m")
    assert key != request_key(BASE, backend="vllm", model="m")
    assert key != request_key(BASE, backend="openai", model="m2")
    relabelled = ChatRequest(BASE.messages, n=2, temperature=0.5, max_tokens=8, seed=1, prompt_version="v1",
                             stage="other")
    assert key == request_key(relabelled, backend="openai", model="m")


def test_cached_answers_survive_reopening_and_replay_in_order(tmp_path):
    completion = Completion(("a", "b"), ("stop", "length"), 4, 6, "m")
    with RequestCache(tmp_path) as cache:
        cache.put("k1", BASE, completion)
    with RequestCache(tmp_path, read_only=True) as cache:
        assert cache.get("k1") == completion and cache.get("k1").cached
        cache.put("k2", BASE, completion)  # ignored: read-only
        assert len(cache) == 1
        assert list(cache.items()) == [(BASE, completion)]


def test_rpm_limiter_spaces_requests_after_the_burst():
    clock = FakeClock()
    limiter = RateLimiter(rpm=120, burst_s=1.0, clock=clock, sleep=clock.sleep)
    times = []

    async def go():
        for _ in range(6):
            await limiter.acquire()
            times.append(clock.now)

    asyncio.run(go())
    assert times == [0.0, 0.0, 0.0, 0.5, 1.0, 1.5]


def test_a_token_reservation_larger_than_a_seconds_rate_waits_its_turn():
    clock = FakeClock()
    limiter = RateLimiter(tpm=600, burst_s=0.0, clock=clock, sleep=clock.sleep)

    async def go():
        await limiter.acquire(100)  # 10 s worth of tokens
        await limiter.acquire(100)

    asyncio.run(go())
    assert clock.now == pytest.approx(10.0)


def test_settling_refunds_unused_tokens_and_penalise_pushes_back():
    clock = FakeClock()
    limiter = RateLimiter(tpm=600, burst_s=0.0, clock=clock, sleep=clock.sleep)

    async def go():
        await limiter.acquire(100)
        limiter.settle(100, 10)  # only 10 used: the next may go after 1 s
        await limiter.acquire(10)
        limiter.penalise(5.0)
        await limiter.acquire(1)

    asyncio.run(go())
    assert clock.now == pytest.approx(1.0 + 5.0)


def test_config_reads_urls_and_keys_from_the_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://vllm.local:8000/v1/")
    monkeypatch.setenv("OPENAI_MODEL", "Qwen/Qwen3-4B")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    monkeypatch.setenv("HF_TOKEN", "hf_router")
    cfg = LLMConfig()
    assert (cfg.resolved_base_url(), cfg.resolved_model(), cfg.resolved_api_key()) == (
        "http://vllm.local:8000/v1", "Qwen/Qwen3-4B", "sk-openai"
    )
    router = LLMConfig(base_url="https://router.huggingface.co/v1", model="openai/gpt-oss-20b")
    assert router.resolved_api_key() == "hf_router"
    assert "sk-openai" not in repr(cfg)  # secrets never enter the config (or a dataset fingerprint)


@pytest.mark.parametrize(
    "kwargs",
    [{"backend": "llama"}, {"cache_mode": "sometimes"}, {"max_concurrency": 0}, {"rpm": -1},
     {"cache_mode": "replay"}, {"price_per_mtok": (1.0,)}],
)
def test_invalid_configs_are_rejected(kwargs):
    with pytest.raises(ConfigError):
        LLMConfig(model="m", **kwargs)


@pytest.mark.parametrize(("model", "reasoning"), [("o1", True), ("o3-mini", True), ("openai/o4-mini", True),
                                                   ("gpt-5-mini", True), ("gpt-4o", False), ("Qwen3-4B", False)])
def test_reasoning_models_are_recognised_by_name(model, reasoning):
    assert LLMConfig(model=model).is_reasoning() is reasoning
