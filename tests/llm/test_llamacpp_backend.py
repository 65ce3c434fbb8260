"""The llama.cpp backend with the real embedded Qwen2.5-Coder-0.5B (skipped where the ``llamacpp`` extra is not
installed): answers in order, samples that differ, a JSON Schema the answer follows, the request cache and resume,
stub completion, and the errors a user meets.
"""

from __future__ import annotations

import json

import pytest

from evolvecoder_datasets.errors import ConfigError
from evolvecoder_datasets.llm import ChatRequest, LLMConfig, make_backend
from evolvecoder_datasets.llm.llamacpp_backend import engine_settings
from evolvecoder_datasets.llm.preflight import check_gguf


def _has_qwen() -> bool:
    from evolvecoder_datasets.demo import embedded_demo_model

    return embedded_demo_model() == "qwen"


needs_qwen = pytest.mark.skipif(not _has_qwen(), reason="xllamacpp or the Qwen2.5-Coder-0.5B parts are not installed")


@pytest.fixture(scope="module")
def qwen(tmp_path_factory):
    if not _has_qwen():
        pytest.skip("xllamacpp or the Qwen2.5-Coder-0.5B parts are not installed")
    cache = tmp_path_factory.mktemp("qwen-cache")
    with make_backend(LLMConfig(backend="llamacpp", cache_dir=str(cache), max_concurrency=2,
                                engine_kwargs={"n_ctx": 2048})) as llm:
        yield llm


def test_engine_settings_default_and_refuse_what_they_do_not_know():
    assert engine_settings(LLMConfig(backend="llamacpp"))["n_parallel"] == 4
    with pytest.raises(ConfigError, match="n_gpu"):
        engine_settings(LLMConfig(backend="llamacpp", engine_kwargs={"n_gpu": 1}))
    with pytest.raises(ConfigError, match="positive"):
        engine_settings(LLMConfig(backend="llamacpp", engine_kwargs={"n_threads": 0}))
    # where the model runs never changes what it answers: the engine settings stay out of the cache key
    a = LLMConfig(backend="llamacpp", engine_kwargs={"n_threads": 1, "n_parallel": 2})
    assert a.answer_settings() == LLMConfig(backend="llamacpp").answer_settings()


def test_a_model_that_is_neither_embedded_nor_a_file_fails_before_anything_slow(tmp_path):
    with pytest.raises(ConfigError, match="neither an embedded model"):
        check_gguf(LLMConfig(backend="llamacpp", model=str(tmp_path / "missing.gguf")), role="pool model 'x'")


@needs_qwen
def test_answers_come_back_in_order_with_token_counts_and_samples_differ(qwen):
    requests = [ChatRequest(f"Write a Python function returning {k} + 1. Code only.", max_tokens=40, temperature=0.9,
                            seed=k, n=2) for k in range(3)]
    out = qwen.generate(requests)
    assert len(out) == 3
    for completion in out:
        assert len(completion.texts) == 2 and completion.prompt_tokens > 0
        assert 0 < completion.completion_tokens <= 80
    assert any(c.texts[0] != c.texts[1] for c in out)  # n samples are n seeds, not one answer twice


@needs_qwen
def test_the_samples_of_one_request_process_its_prompt_once(qwen):
    """A request with ``n = 3``: each later sequence finds the prompt in llama.cpp's cache (the engine's
    own usage report says how many prompt tokens it took from there), instead of each processing the whole prompt
    on a slot of its own, as two of them did when the three started together."""
    seen: list[dict] = []
    complete = qwen._complete

    def spy(body):
        answer = complete(body)
        seen.append(answer["usage"])
        return answer

    qwen._complete = spy
    try:
        words = " ".join(f"item{k}" for k in range(150))  # a prompt no other test of this module sends
        [completion] = qwen.generate([ChatRequest(f"Sort these words: {words}. Answer in one line.", max_tokens=8,
                                                  temperature=0.9, seed=3, n=3)])
    finally:
        del qwen._complete
    assert len(completion.texts) == 3 and len(seen) == 3
    prompt = seen[0]["prompt_tokens"]
    assert prompt > 150 and seen[0]["prompt_tokens_details"]["cached_tokens"] < prompt // 2
    assert all(u["prompt_tokens_details"]["cached_tokens"] >= prompt - 2 for u in seen[1:]), [u["prompt_tokens_details"] for u in seen]


@needs_qwen
def test_a_json_schema_is_enforced_and_the_answer_parses(qwen):
    schema = {"type": "object", "properties": {"inputs": {"type": "array", "minItems": 3, "maxItems": 3,
                                                          "items": {"type": "integer"}}},
              "required": ["inputs"]}
    [answer] = qwen.generate([ChatRequest("Give three small prime numbers.", max_tokens=60, temperature=0.7,
                                          seed=1, response_schema=schema)])
    data = json.loads(answer.text)
    assert len(data["inputs"]) == 3 and all(isinstance(v, int) for v in data["inputs"])


@needs_qwen
def test_a_cached_answer_is_replayed_without_the_engine(qwen):
    request = ChatRequest("Say OK.", max_tokens=4, temperature=0.0, seed=0)
    first = qwen.generate([request])[0]
    server, qwen._server = qwen._server, None  # a replay must not need the engine at all
    try:
        again = qwen.generate([request])[0]
    finally:
        qwen._server = server
    assert again.cached and again.text == first.text


@needs_qwen
def test_a_stub_is_continued_and_the_sample_stage_gets_the_whole_function(qwen):
    from evolvecoder_datasets.execution import extract_code, run_tests
    from evolvecoder_datasets.prompts import solve

    stub = 'def add(x: int, y: int) -> int:\n    """Return x + y.\n    >>> add(2, 3)\n    5\n    """\n'
    request = solve.build_request(stub, complete_stub=True, max_tokens=40, temperature=0.0, seed=0)
    [answer] = qwen.generate([request])
    code = extract_code(solve.answer_text(request, answer.text))
    assert code.startswith("def add(x: int, y: int) -> int:")
    assert run_tests(code, ["assert add(2, 3) == 5", "assert add(-1, 1) == 0"]).passed == [True, True]
    assert answer.completion_tokens < 30  # the body only: the stub is not written again


@needs_qwen
def test_a_prompt_over_the_context_is_that_requests_error_not_the_runs(qwen):
    out = qwen.generate([ChatRequest("word " * 5000, max_tokens=4), ChatRequest("Say OK.", max_tokens=4)],
                        return_exceptions=True)
    assert isinstance(out[0], Exception) and "context" in str(out[0])
    assert not isinstance(out[1], Exception)
