"""Chat backends with a request cache, rate limits, retries and accounting.

Stages receive an :class:`LLMConfig` and call ``make_backend(config).generate(requests)``; the backend answers
cached requests from ``<cache_dir>/llm_cache.sqlite`` and sends the rest. Backends:

* ``openai``: any OpenAI-compatible server (OpenAI, ``vllm serve``, the Hugging Face router), async over ``aiohttp``;
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
from .config import LLMConfig, is_reasoning_model
from .types import ChatRequest, Completion

__all__ = [
    "LLMConfig",
    "ChatRequest",
    "Completion",
    "Backend",
    "make_backend",
    "is_reasoning_model",
    "RequestCache",
    "request_key",
    "RateLimiter",
    "UsageLedger",
    "StageUsage",
    "OpenAICompatible",
    "Transformers",
    "VLLM",
    "ScriptedOpenAIServer",
    "Fault",
    "run_sync",
    "preflight",
]

_LAZY = {
    "Backend": "base",
    "run_sync": "base",
    "make_backend": "factory",
    "RequestCache": "cache",
    "request_key": "cache",
    "RateLimiter": "rate_limit",
    "UsageLedger": "accounting",
    "StageUsage": "accounting",
    "OpenAICompatible": "openai_compat",
    "Transformers": "transformers_backend",
    "VLLM": "vllm_backend",
    "ScriptedOpenAIServer": "testing",
    "Fault": "testing",
    "preflight": "preflight",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)


if TYPE_CHECKING:  # pragma: no cover
    from .accounting import StageUsage, UsageLedger  # noqa: F401
    from .base import Backend, run_sync  # noqa: F401
    from .cache import RequestCache, request_key  # noqa: F401
    from .factory import make_backend  # noqa: F401
    from .openai_compat import OpenAICompatible  # noqa: F401
    from .preflight import preflight  # noqa: F401
    from .rate_limit import RateLimiter  # noqa: F401
    from .testing import Fault, ScriptedOpenAIServer  # noqa: F401
    from .transformers_backend import Transformers  # noqa: F401
    from .vllm_backend import VLLM  # noqa: F401
