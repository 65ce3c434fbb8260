"""One definition of cache keys: the request cache, stage checkpoints and stored shards agree on what changes an answer."""

from __future__ import annotations

import pytest
from datasets import Dataset

from evolvecoder_datasets.keys import config_digest
from evolvecoder_datasets.llm import ChatRequest, LLMConfig, make_backend
from evolvecoder_datasets.llm.transformers_backend import Transformers
from evolvecoder_datasets.llm.vllm_backend import VLLM
from evolvecoder_datasets.stages.refine import RefineConfig

REQUEST = ChatRequest("Write add(a, b).", prompt_version="1")


def _request_key(config: LLMConfig) -> str:
    backend = {"vllm": VLLM, "transformers": Transformers}.get(config.backend)
    if backend is None:
        with make_backend(config) as llm:
            return llm.key(REQUEST)
    return backend(config).key(REQUEST)  # both build their model lazily: nothing is loaded here


OPENAI = LLMConfig(model="gpt-4o-mini", base_url="http://127.0.0.1:9/v1")
LOCAL = LLMConfig(backend="vllm", model="Qwen/Qwen3-4B")
CASES = [
    # (name, base, changes, whether the answer can change)
    ("another server", OPENAI, {"base_url": "http://127.0.0.1:10/v1"}, False),
    ("rate limits and retries", OPENAI, {"rpm": 60, "max_retries": 1, "max_concurrency": 2}, False),
    ("cache folder", OPENAI, {"cache_dir": "/tmp/elsewhere"}, False),
    ("model", OPENAI, {"model": "gpt-4o"}, True),
    ("extra_body", OPENAI, {"extra_body": {"top_k": 20}}, True),
    ("reasoning override", OPENAI, {"reasoning": True}, True),
    ("dtype of a remote model", OPENAI, {"dtype": "float16"}, False),
    ("engine setting that changes answers", LOCAL, {"engine_kwargs": {"max_model_len": 2048}}, True),
    ("engine resource setting", LOCAL, {"engine_kwargs": {"gpu_memory_utilization": 0.5}}, False),
    ("dtype of a local model", LOCAL, {"dtype": "float16"}, True),
    ("local batch size", LLMConfig(backend="transformers"), {"batch_size": 2}, False),
]


@pytest.mark.parametrize(("name", "base", "changes", "answers_change"), CASES, ids=[c[0] for c in CASES])
def test_request_cache_and_checkpoint_keys_change_together(name, base, changes, answers_change):
    changed = base.replace(**changes)
    request_changed = _request_key(base) != _request_key(changed)
    checkpoint_changed = config_digest(RefineConfig(llm=base)) != config_digest(RefineConfig(llm=changed))
    assert request_changed == checkpoint_changed == answers_change, name


def test_stored_shards_are_keyed_like_checkpoints():
    from evolvecoder_datasets.distributed.shards import _fingerprint

    ds = Dataset.from_dict({"id": ["A_1"]})

    def stage(batch, config):
        return batch

    def key(config: LLMConfig) -> str:
        return _fingerprint(ds, stage, {"config": RefineConfig(llm=config)}, 64, ["id"])

    assert key(OPENAI) == key(OPENAI.replace(base_url="http://127.0.0.1:10/v1", rpm=5))
    assert key(LOCAL) != key(LOCAL.replace(engine_kwargs={"max_model_len": 2048}))


def test_any_config_that_says_what_decides_its_answers_is_keyed_by_that_alone():
    # keys imports no room above the ground: the rule is the answer_settings() protocol, not a class check
    import dataclasses

    from evolvecoder_datasets.keys import semantic

    @dataclasses.dataclass(frozen=True)
    class Judge:
        model: str
        url: str = "http://a"

        def answer_settings(self) -> dict:
            return {"model": self.model}

    @dataclasses.dataclass(frozen=True)
    class Stage:
        judge: Judge
        version: str = "1"

    assert semantic(Stage(Judge("m", url="http://b"))) == {"judge": {"model": "m"}, "version": "1"}
    assert config_digest(Stage(Judge("m"))) == config_digest(Stage(Judge("m", url="http://b")))
    assert config_digest(Stage(Judge("m"))) != config_digest(Stage(Judge("n")))
    assert semantic(Judge) is Judge  # a class itself is a value, not a config
