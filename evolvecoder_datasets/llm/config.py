"""Backend configuration as data.

Stages receive an :class:`LLMConfig` through ``Dataset.map(fn_kwargs=...)`` and build the backend inside the worker
with :func:`~evolvecoder_datasets.llm.make_backend`; ``datasets`` fingerprints the config, never a live client.
Secrets never enter the config: it names the environment variable that holds the key.

Example:
    >>> from evolvecoder_datasets.llm import LLMConfig
    >>> cfg = LLMConfig(backend="openai", model="gpt-4o-mini", base_url="http://127.0.0.1:8000/v1", rpm=600)
    >>> cfg.resolved_base_url()
    'http://127.0.0.1:8000/v1'
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import ConfigError

__all__ = ["LLMConfig", "BACKENDS", "CACHE_MODES", "is_reasoning_model", "DEFAULT_OPENAI_BASE_URL", "HF_ROUTER_URL"]

BACKENDS = ("openai", "transformers", "vllm", "llamacpp")
CACHE_MODES = ("use", "replay", "refresh", "off")
N_MODES = ("auto", "native", "emulate")
DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
HF_ROUTER_URL = "https://router.huggingface.co/v1"
SMOLLM2 = "smollm2"
#: The ``llamacpp`` backend's default: the embedded Qwen2.5-Coder-0.5B-Instruct (:mod:`.embedded`).
QWEN_CODER = "qwen2.5-coder-0.5b"

# OpenAI reasoning models reject temperature/top_p and take max_completion_tokens: o1, o3-mini, o4-mini, gpt-5...
_REASONING = re.compile(r"^(?:.*/)?(?:o\d+(?:-|$)|gpt-5)", re.IGNORECASE)


def is_reasoning_model(model: str) -> bool:
    """Whether ``model`` is an OpenAI reasoning model (``o1``, ``o3-mini``, ``openai/o4-mini``, ``gpt-5``...).

    Example:
        >>> is_reasoning_model("o3-mini"), is_reasoning_model("openai/o1"), is_reasoning_model("gpt-4o")
        (True, True, False)
    """
    return bool(_REASONING.match(model))


#: Engine settings that decide where and how fast a local model runs, never what it answers (left out of keys).
RESOURCE_SETTINGS = frozenset({"gpu_memory_utilization", "tensor_parallel_size", "pipeline_parallel_size",
                               "swap_space", "enforce_eager", "max_num_seqs", "disable_log_stats", "device",
                               "n_parallel", "n_ctx", "n_threads", "cache_ram_mib"})


@dataclass(frozen=True)
class LLMConfig:
    """How to reach a chat model, how hard to push it, and where to remember its answers.

    Args:
        backend (`str`, defaults to ``"openai"``): ``"openai"`` (any OpenAI-compatible HTTP server: OpenAI, vLLM
            serve, the Hugging Face router), ``"llamacpp"`` (GGUF models through llama.cpp, in process),
            ``"transformers"`` (local generation) or ``"vllm"`` (in-process engine).
        model (`str`, *optional*): model name. For ``openai`` it falls back to ``$OPENAI_MODEL``; for
            ``llamacpp`` to ``"qwen2.5-coder-0.5b"``, the embedded Qwen2.5-Coder-0.5B-Instruct (or a ``.gguf``
            path); for ``transformers`` to ``"smollm2"``, the embedded SmolLM2-135M-Instruct; a local path or Hub id
            also works.
        base_url (`str`, *optional*): server root ending in ``/v1``; falls back to ``$OPENAI_BASE_URL``, then to
            the OpenAI API.
        api_key_env (`str`, *optional*): name of the environment variable holding the key. Unset: ``OPENAI_API_KEY``,
            or ``HF_TOKEN`` when the base URL is the Hugging Face router.
        max_concurrency (`int`, defaults to 16): requests in flight at once.
        rpm (`float`, *optional*): requests-per-minute ceiling.
        tpm (`float`, *optional*): tokens-per-minute ceiling (prompt estimate plus ``max_tokens`` reserved up front,
            corrected by the reported usage).
        timeout_s (`float`, defaults to 300): per-request timeout.
        max_retries (`int`, defaults to 6): retries on 429, 5xx, timeouts and disconnects.
        backoff_s (`float`, defaults to 1.0): first retry delay; doubles each attempt (with jitter) unless the
            server sends ``Retry-After``.
        max_backoff_s (`float`, defaults to 60): cap on one retry delay.
        n_mode (`str`, defaults to ``"auto"``): ``"native"`` sends ``n``; ``"emulate"`` sends ``n`` requests with
            ``n=1``; ``"auto"`` sends ``n`` and falls back to emulation if the server rejects it.
        reasoning (`bool`, *optional*): treat the model as a reasoning model (drop ``temperature``/``top_p``, send
            ``max_completion_tokens``). ``None`` decides from the model name.
        extra_body (`Mapping[str, Any]`, *optional*): extra JSON fields sent with every request (e.g. vLLM's
            ``top_k``); also part of the cache key.
        cache_dir (`str`, *optional*): run directory holding ``llm_cache.sqlite``. ``None`` disables the cache.
        cache_mode (`str`, defaults to ``"use"``): ``"use"`` reads and writes; ``"replay"`` answers only from the
            cache and raises on a miss; ``"refresh"`` ignores stored answers but stores new ones; ``"off"``.
        price_per_mtok (`tuple[float, float]`, *optional*): USD per million (input, output) tokens, for accounting.
        progress (`bool`, defaults to `False`): show a progress bar with throughput.
        batch_size (`int`, defaults to 8): prompts per forward pass for the local backends.
        device (`str`, *optional*): torch device for ``transformers`` (``"cpu"``, ``"cuda"``); ``None`` picks CUDA
            when available.
        dtype (`str`, defaults to ``"auto"``): torch dtype name for the local backends.
        engine_kwargs (`Mapping[str, Any]`, *optional*): extra keyword arguments for ``vllm.LLM(...)`` (e.g.
            ``tensor_parallel_size``, ``gpu_memory_utilization``, ``max_model_len``); for ``llamacpp`` the engine
            settings ``n_parallel``, ``n_ctx`` (per slot), ``n_threads``, ``cache_ram_mib``.
        structured_output (`bool`, defaults to `False`): for ``openai``, send a request's JSON Schema as
            ``response_format`` (servers that support structured outputs: vLLM, OpenAI). ``llamacpp`` and ``vllm``
            always enforce it; ``transformers`` relies on the tolerant reader.

    Raises:
        ConfigError: an unknown backend, cache or ``n`` mode, or a non-positive limit.

    Example:
        >>> cfg = LLMConfig(backend="transformers", cache_dir="runs/demo")
        >>> cfg.resolved_model()
        'smollm2'
        >>> cfg.replace(cache_mode="replay").cache_mode
        'replay'
    """

    backend: str = "openai"
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    max_concurrency: int = 16
    rpm: float | None = None
    tpm: float | None = None
    timeout_s: float = 300.0
    max_retries: int = 6
    backoff_s: float = 1.0
    max_backoff_s: float = 60.0
    n_mode: str = "auto"
    reasoning: bool | None = None
    extra_body: Mapping[str, Any] | None = None
    cache_dir: str | None = None
    cache_mode: str = "use"
    price_per_mtok: tuple[float, float] | None = None
    progress: bool = False
    batch_size: int = 8
    device: str | None = None
    dtype: str = "auto"
    engine_kwargs: Mapping[str, Any] | None = field(default=None)
    structured_output: bool = False

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ConfigError(f"unknown LLM backend {self.backend!r}; expected one of {BACKENDS}")
        if self.cache_mode not in CACHE_MODES:
            raise ConfigError(f"unknown cache_mode {self.cache_mode!r}; expected one of {CACHE_MODES}")
        if self.n_mode not in N_MODES:
            raise ConfigError(f"unknown n_mode {self.n_mode!r}; expected one of {N_MODES}")
        if self.cache_mode == "replay" and self.cache_dir is None:
            raise ConfigError("cache_mode='replay' needs a cache_dir to replay from")
        for name in ("max_concurrency", "batch_size"):
            if int(getattr(self, name)) < 1:
                raise ConfigError(f"{name} must be at least 1; got {getattr(self, name)}")
        for name in ("rpm", "tpm"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ConfigError(f"{name} must be positive when set; got {value}")
        if self.timeout_s <= 0 or self.backoff_s < 0 or self.max_backoff_s < 0 or self.max_retries < 0:
            raise ConfigError("timeout_s must be positive; backoff_s, max_backoff_s and max_retries non-negative")
        if self.price_per_mtok is not None:
            if len(self.price_per_mtok) != 2 or min(self.price_per_mtok) < 0:
                raise ConfigError(f"price_per_mtok is (usd_in, usd_out) per million tokens; got {self.price_per_mtok}")
            object.__setattr__(self, "price_per_mtok", (float(self.price_per_mtok[0]), float(self.price_per_mtok[1])))
        if self.cache_dir is not None:
            object.__setattr__(self, "cache_dir", os.fspath(self.cache_dir))

    def replace(self, **changes: Any) -> LLMConfig:
        """A copy with ``changes`` applied (validated again)."""
        return replace(self, **changes)

    def resolved_model(self) -> str:
        """The model name after environment fallbacks.

        Raises:
            ConfigError: the ``openai`` backend has no model in the config nor in ``$OPENAI_MODEL``.
        """
        if self.model:
            return self.model
        if self.backend == "transformers":
            return SMOLLM2
        if self.backend == "llamacpp":
            return QWEN_CODER
        env = os.environ.get("OPENAI_MODEL")
        if env:
            return env
        raise ConfigError(f"the {self.backend!r} backend needs a model name (config.model or $OPENAI_MODEL)")

    def resolved_base_url(self) -> str:
        """The server root after environment fallbacks, without a trailing slash."""
        return (self.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_OPENAI_BASE_URL).rstrip("/")

    def resolved_api_key(self) -> str | None:
        """The API key read from the environment (``None`` when the variable is unset, fine for local servers)."""
        if self.api_key_env:
            return os.environ.get(self.api_key_env)
        if "router.huggingface.co" in self.resolved_base_url():
            return os.environ.get("HF_TOKEN") or os.environ.get("OPENAI_API_KEY")
        return os.environ.get("OPENAI_API_KEY")

    def is_reasoning(self) -> bool:
        """Whether requests must omit ``temperature``/``top_p`` (explicit setting, else decided by model name)."""
        if self.reasoning is not None:
            return self.reasoning
        return self.backend == "openai" and is_reasoning_model(self.resolved_model())

    def answer_extra(self) -> dict[str, Any] | None:
        """What changes the answers beyond the request, the backend and the model: ``extra_body``; a ``reasoning``
        setting that overrides the model's name (it decides whether sampling parameters are sent); for the local
        backends a non-default ``dtype`` and the ``engine_kwargs`` that are not mere resources
        (:data:`RESOURCE_SETTINGS`). Defaults add nothing, so keys written under them stay valid.

        Example:
            >>> LLMConfig(backend="vllm", model="m", engine_kwargs={"max_model_len": 4096, "tensor_parallel_size": 2}
            ...           ).answer_extra()
            {'__engine__': {'max_model_len': 4096}}
        """
        extra: dict[str, Any] = dict(self.extra_body) if self.extra_body else {}
        if self.backend == "openai":
            if self.is_reasoning() != is_reasoning_model(self.resolved_model()):  # overrides the model's name
                extra["__reasoning__"] = self.is_reasoning()
            if self.structured_output:  # a schema constrains what the server answers
                extra["__structured__"] = True
        else:
            if self.dtype != "auto":
                extra["__dtype__"] = self.dtype
            engine = {k: v for k, v in (self.engine_kwargs or {}).items() if k not in RESOURCE_SETTINGS}
            if engine:
                extra["__engine__"] = engine
        return extra or None

    def answer_settings(self) -> dict[str, Any]:
        """Everything in this configuration that decides what the model answers: the backend, the model as
        resolved and :meth:`answer_extra`. The rest (URL, keys, limits, retries, cache folder) is transport.

        This is the one definition both keys use: the request cache key
        (:func:`~evolvecoder_datasets.llm.cache.request_key`) and the checkpoint and shard keys
        (:func:`evolvecoder_datasets.keys.config_digest`), so a setting that changes one changes the other.

        Example:
            >>> a = LLMConfig(model="m", base_url="http://127.0.0.1:1/v1", rpm=60)
            >>> a.answer_settings() == LLMConfig(model="m").answer_settings()
            True
        """
        try:
            model: str | None = self.resolved_model()
            extra = self.answer_extra()
        except ConfigError:  # no model yet: the key says so; building a backend will refuse it
            model, extra = self.model, None
        return {"backend": self.backend, "model": model, "extra": extra}
