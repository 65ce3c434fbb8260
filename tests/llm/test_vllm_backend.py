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
