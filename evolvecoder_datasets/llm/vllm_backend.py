"""In-process vLLM engine (extra ``vllm``): offline ``LLM.chat`` with per-request sampling parameters.

The engine is built on first use and kept for the backend's lifetime; all cache misses go to vLLM in one call
(vLLM schedules and batches them itself), in chunks of ``config.batch_size * 64`` so that a crash loses at most one
chunk of answers.

Example:
    >>> from evolvecoder_datasets.llm import ChatRequest, LLMConfig, make_backend     # doctest: +SKIP
    >>> cfg = LLMConfig(backend="vllm", model="Qwen/Qwen3-4B", cache_dir="runs/r1",
    ...                 engine_kwargs={"max_model_len": 32768, "gpu_memory_utilization": 0.9})
    >>> with make_backend(cfg) as llm:                                                 # doctest: +SKIP
    ...     out = llm.generate([ChatRequest("Write fib(n).", n=16, temperature=0.6, top_p=0.95, max_tokens=4096)])
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from .._deps import require
from ..errors import LLMError
from .base import Backend, ResultCallback
from .config import LLMConfig
from .types import ChatRequest, Completion

__all__ = ["VLLM"]

_CHUNK_PER_BATCH = 64


def _structured(vllm: Any, schema: Any) -> dict[str, Any]:
    """The ``SamplingParams`` field that makes vLLM's structured decoding follow the JSON Schema ``schema``:
    ``structured_outputs`` in current releases, ``guided_decoding`` in older ones; nothing where neither exists (the
    stage's tolerant reader then reads what comes back)."""
    module = getattr(vllm, "sampling_params", None)
    for class_name, field_name in (("StructuredOutputsParams", "structured_outputs"),
                                   ("GuidedDecodingParams", "guided_decoding")):
        params_class = getattr(module, class_name, None)
        if params_class is not None:
            return {field_name: params_class(json=dict(schema))}
    return {}


class VLLM(Backend):
    """Generation with an in-process ``vllm.LLM`` engine.

    Args:
        config (`LLMConfig`): ``model`` is a Hub id or local path; ``engine_kwargs`` go to ``vllm.LLM`` (e.g.
            ``tensor_parallel_size``, ``gpu_memory_utilization``, ``max_model_len``); ``extra_body`` entries that are
            ``SamplingParams`` fields (e.g. ``top_k``, ``min_p``) are applied to every request. A request's
            ``response_schema`` becomes vLLM's structured decoding (``structured_outputs``, or ``guided_decoding`` in
            older releases).

    Raises:
        MissingExtraError: ``vllm`` is not installed (raised at the first generation).

    Example:
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> VLLM(LLMConfig(backend="vllm", model="Qwen/Qwen3-4B")).name   # builds no engine yet
        'vllm'
    """

    name = "vllm"

    def __init__(self, config: LLMConfig) -> None:
        super().__init__(config)
        self._engine: Any = None

    def _engine_or_load(self) -> Any:
        if self._engine is None:
            vllm = require("vllm", extra="vllm", feature="the in-process vLLM backend")
            kwargs = {"dtype": self.config.dtype, **dict(self.config.engine_kwargs or {})}
            self._engine = vllm.LLM(model=self.model, **kwargs)
        return self._engine

    def _sampling_params(self, request: ChatRequest) -> Any:
        vllm = require("vllm", extra="vllm", feature="the in-process vLLM backend")
        params: dict[str, Any] = {"n": request.n}
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if request.top_p is not None:
            params["top_p"] = request.top_p
        if request.max_tokens is not None:
            params["max_tokens"] = request.max_tokens
        if request.seed is not None:
            params["seed"] = request.seed
        if request.stop:
            params["stop"] = list(request.stop)
        if request.response_schema is not None:
            params.update(_structured(vllm, request.response_schema))
        params.update(dict(self.config.extra_body or {}))
        return vllm.SamplingParams(**params)

    def _generate_chunk(self, chunk: Sequence[ChatRequest]) -> list[Completion]:
        engine = self._engine_or_load()
        outputs = engine.chat(
            [list(r.messages) for r in chunk],
            sampling_params=[self._sampling_params(r) for r in chunk],
            use_tqdm=self.config.progress,
        )
        completions = []
        for output in outputs:
            samples = sorted(output.outputs, key=lambda o: o.index)
            completions.append(
                Completion(
                    texts=tuple(o.text for o in samples),
                    finish_reasons=tuple(str(o.finish_reason or "stop") for o in samples),
                    prompt_tokens=len(output.prompt_token_ids or ()),
                    completion_tokens=sum(len(o.token_ids) for o in samples),
                    model=self.model,
                )
            )
        return completions

    async def _run(self, requests: Sequence[ChatRequest], on_result: ResultCallback, stop: asyncio.Event) -> None:
        size = self.config.batch_size * _CHUNK_PER_BATCH
        for start in range(0, len(requests), size):
            if stop.is_set():
                return
            chunk = requests[start : start + size]
            try:
                completions = await asyncio.to_thread(self._generate_chunk, chunk)
            except ImportError:
                raise
            except Exception as err:  # an engine failure fails its chunk; earlier chunks stay cached
                error = LLMError(f"vLLM generation failed: {type(err).__name__}: {err}")
                error.__cause__ = err
                for j in range(start, start + len(chunk)):
                    on_result(j, error)
                continue
            for offset, completion in enumerate(completions):
                on_result(start + offset, completion)

    def close(self) -> None:
        """Drop the engine and close the cache."""
        self._engine = None
        super().close()
