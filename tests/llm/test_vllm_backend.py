"""The in-process vLLM backend; runs only where a CUDA device and vllm exist."""

from __future__ import annotations

import pytest

from evolvecoder_datasets.llm import ChatRequest, LLMConfig, make_backend


def test_vllm_backend_is_importable_without_vllm():
    llm = make_backend(LLMConfig(backend="vllm", model="HuggingFaceTB/SmolLM2-135M-Instruct"))
    assert llm.name == "vllm"
    llm.close()


@pytest.mark.gpu
@pytest.mark.slow
def test_vllm_generates_n_samples_and_caches_them(tmp_path):
    pytest.importorskip("vllm")
    from evolvecoder_datasets.llm.transformers_backend import smollm2_path

    cfg = LLMConfig(
        backend="vllm", model=smollm2_path(str(tmp_path / "models")), cache_dir=str(tmp_path / "run"),
        engine_kwargs={"gpu_memory_utilization": 0.3, "max_model_len": 2048},
    )
    requests = [ChatRequest("Write add(a, b) in Python.", n=4, temperature=0.8, seed=1, max_tokens=64)]
    with make_backend(cfg) as llm:
        first = llm.generate(requests)
        second = llm.generate(requests)
    assert len(first[0].texts) == 4 and all(t.strip() for t in first[0].texts)
    assert second == first and second[0].cached


@pytest.mark.parametrize(("class_name", "field_name"), [("StructuredOutputsParams", "structured_outputs"),
                                                        ("GuidedDecodingParams", "guided_decoding")])
def test_a_response_schema_becomes_vllms_structured_decoding(monkeypatch, class_name, field_name):
    """vLLM cannot run here (no GPU): a stand-in ``vllm`` module with the two names vLLM has used for structured
    decoding records what the backend hands it; the real engine is exercised by the gpu test above."""
    import sys
    import types

    recorded = {}

    class Params:
        def __init__(self, **kwargs):
            recorded["sampling"] = kwargs

    class Structured:
        def __init__(self, json):
            self.json = json

    fake = types.ModuleType("vllm")
    fake.SamplingParams = Params
    fake.sampling_params = types.SimpleNamespace(**{class_name: Structured})
    monkeypatch.setitem(sys.modules, "vllm", fake)
    schema = {"type": "object", "properties": {"inputs": {"type": "array"}}}
    llm = make_backend(LLMConfig(backend="vllm", model="m"))
    llm._sampling_params(ChatRequest("x", max_tokens=8, response_schema=schema))
    assert recorded["sampling"][field_name].json == schema
    llm._sampling_params(ChatRequest("x", max_tokens=8))
    assert field_name not in recorded["sampling"]  # no schema: the request is what it was
    llm.close()
