"""Chat backends with a request cache, rate limits, retries and accounting.

Stages receive an :class:`LLMConfig` and call ``make_backend(config).generate(requests)``; the backend answers
cached requests from ``<cache_dir>/llm_cache.sqlite`` and sends the rest. Backends:

* ``openai``: any OpenAI-compatible server (OpenAI, ``vllm serve``, the Hugging Face router), async over ``aiohttp``;
* ``llamacpp``: GGUF models through llama.cpp in process (default model: the embedded Qwen2.5-Coder-0.5B-Instruct);
* ``transformers``: local batched generation (default model: the embedded SmolLM2-135M-Instruct);
* ``vllm``: an in-process vLLM engine (extra ``vllm``).

Importing this package imports neither torch, transformers nor aiohttp.

Example:
    >>> from evolvecoder_datasets.llm import ChatRequest, LLMConfig, make_backend
    >>> from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
    >>> with ScriptedOpenAIServer(lambda body: "assert f(1) == 2") as server:
    ...     cfg = LLMConfig(model="m", base_url=server.base_url, max_concurrency=8)
    ...     with make_backend(cfg) as llm:
    ...         [c.text for c in llm.generate([ChatRequest("Write a test.", max_tokens=32)] * 2)]
    ['assert f(1) == 2', 'assert f(1) == 2']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports
from .config import LLMConfig
from .types import ChatRequest, Completion

__all__ = [
    "LLMConfig",
    "ChatRequest",
    "Completion",
    "Backend",
    "make_backend",
]

_LAZY = {
    "Backend": "base",
    "make_backend": "factory",
}


# ``llm.preflight`` is the module (its check is ``llm.preflight.preflight``): a lazily exported function of the same
# name was the function on first access and the module after.
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__, submodules=("preflight",))


if TYPE_CHECKING:  # pragma: no cover
    from .base import Backend  # noqa: F401
    from .factory import make_backend  # noqa: F401
