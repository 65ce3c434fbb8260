"""The OpenAI-compatible client against a real loopback server with scripted answers and faults."""

from __future__ import annotations

import asyncio

import pytest

from evolvecoder_datasets.errors import LLMCacheMissError, LLMRateLimitError, LLMRequestError
from evolvecoder_datasets.llm import ChatRequest, LLMConfig, make_backend
from evolvecoder_datasets.llm.openai_compat import OpenAICompatible
from evolvecoder_datasets.llm.rate_limit import FakeClock
from evolvecoder_datasets.llm.testing import Fault, ScriptedOpenAIServer


def _answer_from_prompt(body: dict) -> str:
    """Deterministic answer that depends on the prompt and the seed, so rows can be compared across runs."""
    return f"def solve():\n    return {body['messages'][-1]['content']!r}  # seed={body.get('seed')}"


def _requests(count: int, **params) -> list[ChatRequest]:
    return [ChatRequest(f"problem {i}", max_tokens=64, **params) for i in range(count)]


class _RecordingSleep:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)
        await asyncio.sleep(0)


def _config(server: ScriptedOpenAIServer, **changes) -> LLMConfig:
    base = {"model": "m", "base_url": server.base_url, "max_retries": 3, "backoff_s": 0.01, "timeout_s": 5.0}
    return LLMConfig(**{**base, **changes})


def test_answers_come_back_in_request_order_with_usage():
    with ScriptedOpenAIServer(_answer_from_prompt) as server:
        with make_backend(_config(server, max_concurrency=8)) as llm:
            out = llm.generate(_requests(20))
    assert [c.text for c in out] == [_answer_from_prompt({"messages": [{"content": f"problem {i}"}]}) for i in range(20)]
    assert all(c.finish_reasons == ("stop",) for c in out)
    assert all(c.prompt_tokens == 3 and c.completion_tokens > 0 and c.model == "m" for c in out)
    assert len(server.requests) == 20


def test_concurrency_never_exceeds_max_concurrency():
    with ScriptedOpenAIServer(lambda body: Fault.slow(0.2, "ok")) as server:
        with make_backend(_config(server, max_concurrency=4)) as llm:
            llm.generate(_requests(16))
    assert 1 < server.max_in_flight <= 4


def test_rpm_limit_spaces_requests_on_the_injected_clock():
    clock = FakeClock()
    with ScriptedOpenAIServer(lambda body: "ok") as server:
        llm = OpenAICompatible(_config(server, rpm=60, max_concurrency=5), clock=clock, sleep=clock.sleep)
        llm.generate(_requests(5))
    # a one-second burst lets two requests go at t=0, then one per second: the fifth leaves at t=3
    assert clock.now == 3.0
    assert len(server.requests) == 5


def test_tpm_limit_reserves_max_tokens_before_sending():
    clock = FakeClock()
    with ScriptedOpenAIServer(lambda body: "ok") as server:
        # 600 tokens/minute = 10/s; each request reserves 100 (max_tokens) + 4 prompt tokens up front
        llm = OpenAICompatible(_config(server, tpm=600, max_concurrency=4), clock=clock, sleep=clock.sleep)
        llm.generate([ChatRequest(f"p{i}", max_tokens=100) for i in range(4)])
    assert clock.now >= 104 / 10 - 1.0  # the second request waited for the first reservation (minus the burst)


def test_tpm_reservations_are_refunded_by_the_reported_usage():
    clock = FakeClock()
    with ScriptedOpenAIServer(lambda body: "ok") as server:
        # one at a time: each answer reports ~4 tokens, so the 104 reserved are refunded before the next request
        llm = OpenAICompatible(_config(server, tpm=600, max_concurrency=1), clock=clock, sleep=clock.sleep)
        llm.generate([ChatRequest(f"p{i}", max_tokens=100) for i in range(4)])
    assert clock.now < 2.0


def test_failed_attempts_give_their_token_reservation_back():
    clock = FakeClock()
    with ScriptedOpenAIServer(lambda body: "ok") as server:
        server.inject(Fault.http(500), times=3)
        # 10 tokens/s: were the three failed attempts' 104-token reservations kept, the next request would wait ~30 s
        llm = OpenAICompatible(_config(server, tpm=600, max_concurrency=1), clock=clock, sleep=clock.sleep)
        llm.generate([ChatRequest(f"p{i}", max_tokens=100) for i in range(2)])
    assert len(server.requests) == 5
    assert clock.now < 3.0


def test_429_is_retried_after_exactly_the_retry_after_delay():
    sleep = _RecordingSleep()
    with ScriptedOpenAIServer(lambda body: "ok") as server:
        server.inject(Fault.http(429, "slow down", retry_after=0.25), times=2)
        llm = OpenAICompatible(_config(server, max_concurrency=1), sleep=sleep)
        out = llm.generate(_requests(1))
    assert out[0].text == "ok"
    assert sleep.calls == [0.25, 0.25]
    assert len(server.requests) == 3


def test_server_errors_and_disconnects_are_retried_with_growing_backoff():
    sleep = _RecordingSleep()
    with ScriptedOpenAIServer(lambda body: "ok") as server:
        server.inject(Fault.http(500))
        server.inject(Fault.disconnect())
        server.inject(Fault.http(503))
        llm = OpenAICompatible(_config(server, max_concurrency=1, backoff_s=0.1, max_backoff_s=10), sleep=sleep)
        out = llm.generate(_requests(1))
    assert out[0].text == "ok"
    assert len(sleep.calls) == 3
    for attempt, delay in enumerate(sleep.calls):  # jittered exponential: [0.5, 1] x 0.1 x 2^attempt
        assert 0.05 * 2**attempt <= delay <= 0.1 * 2**attempt


def test_a_slow_answer_times_out_and_the_retry_succeeds():
    with ScriptedOpenAIServer(lambda body: "ok") as server:
        server.inject(Fault.slow(4.0, "too late"))
        with make_backend(_config(server, timeout_s=1.0, max_concurrency=1)) as llm:
            out = llm.generate(_requests(1))
    assert out[0].text == "ok"
    assert len(server.requests) == 2


def test_persistent_429_raises_rate_limit_error_after_all_retries():
    with ScriptedOpenAIServer(lambda body: Fault.http(429, retry_after=0)) as server:
        with make_backend(_config(server, max_retries=2)) as llm:
            with pytest.raises(LLMRateLimitError) as info:
                llm.generate(_requests(1))
    assert info.value.status == 429
    assert len(server.requests) == 3


def test_a_rejected_request_is_not_retried():
    with ScriptedOpenAIServer(lambda body: Fault.http(401, "bad key")) as server:
        with make_backend(_config(server)) as llm:
            with pytest.raises(LLMRequestError, match="bad key") as info:
                llm.generate(_requests(1))
    assert info.value.status == 401
    assert len(server.requests) == 1


def test_return_exceptions_keeps_failures_in_their_slots():
    def responder(body):
        return Fault.http(400, "no") if body["messages"][-1]["content"] == "problem 1" else "ok"

    with ScriptedOpenAIServer(responder) as server:
        with make_backend(_config(server)) as llm:
            out = llm.generate(_requests(3), return_exceptions=True)
            usage = llm.ledger.total()
    assert out[0].text == "ok" and out[2].text == "ok"
    assert isinstance(out[1], LLMRequestError)
    assert (usage.requests, usage.failed) == (2, 1)


def test_native_n_returns_n_samples_from_one_call():
    with ScriptedOpenAIServer(lambda body: [f"sample {i}" for i in range(body.get("n", 1))]) as server:
        with make_backend(_config(server)) as llm:
            out = llm.generate([ChatRequest("p", n=3, temperature=0.8, max_tokens=16)])
    assert out[0].texts == ("sample 0", "sample 1", "sample 2")
    assert [r.get("n") for r in server.requests] == [3]


def test_n_is_emulated_with_shifted_seeds_when_the_server_rejects_it():
    with ScriptedOpenAIServer(_answer_from_prompt, n_support="reject") as server:
        with make_backend(_config(server)) as llm:
            first = llm.generate([ChatRequest("p", n=3, seed=7, max_tokens=16)])
            llm.generate([ChatRequest("q", n=2, seed=1, max_tokens=16)])
    assert [r.get("seed") for r in server.requests[1:4]] == [7, 8, 9]
    assert len(set(first[0].texts)) == 3
    # remembered: the second request went straight to n=1 calls
    assert [r.get("n", 1) for r in server.requests[4:]] == [1, 1]
    assert first[0].prompt_tokens == 3 * 2  # each emulated call is billed its prompt


def test_missing_choices_are_topped_up_when_the_server_ignores_n():
    with ScriptedOpenAIServer(_answer_from_prompt, n_support="ignore") as server:
        with make_backend(_config(server)) as llm:
            out = llm.generate([ChatRequest("p", n=3, seed=0, max_tokens=16)])
    assert len(out[0].texts) == 3
    assert len(server.requests) == 3  # one n=3 call answered once, then two n=1 calls


def test_reasoning_models_get_no_sampling_params_and_max_completion_tokens():
    with ScriptedOpenAIServer(lambda body: "ok", reject_sampling_params=True) as server:
        with make_backend(_config(server, model="o3-mini")) as llm:
            out = llm.generate([ChatRequest("p", temperature=0.7, top_p=0.9, max_tokens=50)])
    assert out[0].text == "ok"
    (body,) = server.requests
    assert "temperature" not in body and "top_p" not in body and body["max_completion_tokens"] == 50


def test_a_server_rejecting_temperature_switches_to_reasoning_params():
    with ScriptedOpenAIServer(lambda body: "ok", reject_sampling_params=True) as server:
        with make_backend(_config(server, model="some-new-reasoner", max_concurrency=1)) as llm:
            llm.generate([ChatRequest("p", temperature=0.7, max_tokens=50)] + _requests(2, temperature=0.5))
    assert "temperature" in server.requests[0]
    assert all("temperature" not in body for body in server.requests[1:])
    assert len(server.requests) == 4  # one rejected attempt, then three good calls


def test_identical_requests_in_one_batch_are_sent_once():
    with ScriptedOpenAIServer(_answer_from_prompt) as server:
        with make_backend(_config(server)) as llm:
            out = llm.generate(_requests(2) * 3)
    assert len(server.requests) == 2
    assert [c.text for c in out[:2]] * 3 == [c.text for c in out]


def test_crash_resume_sends_only_the_missing_requests_and_yields_identical_rows(tmp_path):
    requests = _requests(30, seed=3, temperature=0.7)
    with ScriptedOpenAIServer(_answer_from_prompt) as server:
        with make_backend(_config(server, cache_dir=str(tmp_path / "reference"))) as llm:
            reference = llm.generate(requests)

    run_dir = str(tmp_path / "run")
    with ScriptedOpenAIServer(_answer_from_prompt, die_after=11) as dying:
        cfg = _config(dying, cache_dir=run_dir, max_concurrency=4, max_retries=1)
        with make_backend(cfg) as llm:
            with pytest.raises(LLMRequestError):
                llm.generate(requests)
            answered_before_crash = len(llm.cache)
    assert dying.dead and answered_before_crash == 11

    with ScriptedOpenAIServer(_answer_from_prompt) as healthy:
        with make_backend(_config(healthy, cache_dir=run_dir)) as llm:
            resumed = llm.generate(requests)
            usage = llm.ledger.total()
    assert len(healthy.requests) == 30 - 11
    assert {b["messages"][0]["content"] for b in healthy.requests}.isdisjoint(
        {b["messages"][0]["content"] for b in dying.requests[:11]}
    )
    assert resumed == reference
    assert (usage.cached, usage.requests) == (11, 30)


def test_replay_answers_from_the_cache_without_any_server(tmp_path):
    with ScriptedOpenAIServer(_answer_from_prompt) as server:
        cfg = _config(server, cache_dir=str(tmp_path))
        with make_backend(cfg) as llm:
            original = llm.generate(_requests(5))
    replay_cfg = cfg.replace(base_url="http://127.0.0.1:9/v1", cache_mode="replay")  # nothing listens there
    with make_backend(replay_cfg) as llm:
        assert llm.generate(_requests(5)) == original
        assert all(c.cached for c in llm.generate(_requests(5)))
        with pytest.raises(LLMCacheMissError):
            llm.generate(_requests(6))


def test_a_prompt_version_change_is_not_served_from_the_cache(tmp_path):
    with ScriptedOpenAIServer(_answer_from_prompt) as server:
        with make_backend(_config(server, cache_dir=str(tmp_path))) as llm:
            llm.generate(_requests(3, prompt_version="refine-1"))
            llm.generate(_requests(3, prompt_version="refine-1"))
            llm.generate(_requests(3, prompt_version="refine-2"))
    assert len(server.requests) == 6


def test_generate_works_inside_a_running_event_loop():
    async def notebook_cell(llm):
        return llm.generate(_requests(3))  # sync call from async code, as in Jupyter

    with ScriptedOpenAIServer(lambda body: "ok") as server:
        with make_backend(_config(server)) as llm:
            out = asyncio.run(notebook_cell(llm))
    assert [c.text for c in out] == ["ok"] * 3


def test_accounting_counts_tokens_per_stage_and_prices_only_billed_calls(tmp_path):
    with ScriptedOpenAIServer(lambda body: "one two three four") as server:
        cfg = _config(server, cache_dir=str(tmp_path), price_per_mtok=(1.0, 2.0))
        with make_backend(cfg) as llm:
            llm.generate([ChatRequest(f"a b {i}", stage="refine") for i in range(4)])
            llm.generate([ChatRequest(f"a b {i}", stage="refine") for i in range(4)])  # all cached
            llm.generate([ChatRequest("x", n=2, stage="sample")])
            stages = llm.ledger.by_stage()
    refine, sample = stages["refine"], stages["sample"]
    assert (refine.requests, refine.cached, refine.prompt_tokens, refine.completion_tokens) == (8, 4, 32, 32)
    assert refine.billed_prompt_tokens == 16 and refine.usd == pytest.approx((16 * 1.0 + 16 * 2.0) / 1e6)
    assert (sample.requests, sample.completion_tokens) == (1, 8)


def test_api_key_from_the_environment_is_sent_as_a_bearer_token(monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-test")
    with ScriptedOpenAIServer(lambda body: "ok") as server:
        with make_backend(_config(server, api_key_env="MY_KEY")) as llm:
            llm.generate(_requests(1))
    assert server.request_headers[0]["authorization"] == "Bearer sk-test"


def test_an_explicit_reasoning_setting_is_asked_again_not_replayed_from_the_cache(tmp_path):
    # `reasoning` decides whether temperature/top_p are sent at all, so an answer given without them must not be
    # replayed for a run that sends them (and the other way round); the default (None) keeps the old keys.
    prompts = _requests(3, temperature=0.7)
    sent = []
    with ScriptedOpenAIServer(_answer_from_prompt) as server:
        for reasoning in (None, None, True, True, False):  # model "m" is no reasoning model by its name
            before = len(server.requests)
            with make_backend(_config(server, cache_dir=str(tmp_path), reasoning=reasoning)) as llm:
                llm.generate(prompts)
            sent.append(len(server.requests) - before)
        with_temperature = ["temperature" in body for body in server.requests]
    # reasoning=False sends what the default sent for "m", so the default's answers replay.
    assert sent == [3, 0, 3, 0, 0]
    assert with_temperature == [True] * 3 + [False] * 3


def test_local_backend_keys_follow_dtype_and_answer_changing_engine_settings():
    from evolvecoder_datasets.llm.base import Backend

    class Probe(Backend):
        name = "vllm"

        async def _run(self, requests, on_result, stop):  # pragma: no cover - never called
            raise AssertionError

    request = ChatRequest("p", max_tokens=8)
    key = lambda **changes: Probe(LLMConfig(backend="vllm", model="m", **changes)).key(request)  # noqa: E731
    base = key()
    assert key(dtype="bfloat16") != base
    assert key(engine_kwargs={"quantization": "awq"}) != base
    assert key(engine_kwargs={"gpu_memory_utilization": 0.5, "tensor_parallel_size": 2}) == base


def test_progress_reaches_its_total_when_a_batch_repeats_requests(capsys):
    # Identical requests are sent once; the bar must still count every slot they fill.
    with ScriptedOpenAIServer(lambda body: "ok") as server:
        with make_backend(_config(server, progress=True)) as llm:
            llm.generate(["same", "same", "same", "other"], desc="probe")
        assert len(server.requests) == 2
    assert "probe: 100%" in capsys.readouterr().err


def test_a_response_schema_reaches_the_server_only_with_structured_output():
    """Servers differ in what they accept: by default the body is exactly what it was before schemas existed; with
    ``structured_output`` the schema goes as OpenAI's ``response_format`` (what vLLM serve and OpenAI read)."""
    schema = {"type": "object", "properties": {"inputs": {"type": "array"}}, "required": ["inputs"]}
    request = ChatRequest("Give inputs.", max_tokens=8, response_schema=schema, stage="adversarial")
    with ScriptedOpenAIServer(lambda body: '{"inputs": []}') as server:
        for structured in (False, True):
            cfg = LLMConfig(model="m", base_url=server.base_url, structured_output=structured)
            with make_backend(cfg) as llm:
                llm.generate([request])
        plain, constrained = server.requests[-2:]
    assert "response_format" not in plain
    assert sorted(plain) == sorted(OpenAICompatible(LLMConfig(model="m")).request_body(
        ChatRequest("Give inputs.", max_tokens=8)))
    assert constrained["response_format"] == {"type": "json_schema",
                                              "json_schema": {"name": "adversarial", "schema": schema}}
    # the two answer differently, so they never share a cache entry
    assert LLMConfig(model="m", structured_output=True).answer_settings() != LLMConfig(model="m").answer_settings()
