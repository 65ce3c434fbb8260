"""Per-process LLM backends for the stages, and the CPUs a running Ray task reserved for them.

Nothing here captures a live object in a ``Dataset.map`` closure: stages receive frozen configs, and the backend a
config describes is built on first use inside the worker process and reused by later batches. The sandbox a stage's
``ExecuteConfig`` describes is :func:`evolvecoder_datasets.execution.shared_sandbox` (one per process and
settings; this module had a second name for it, ``get_sandbox``).

Example:
    >>> from evolvecoder_datasets.stages.support.resources import task_cpus
    >>> task_cpus(default=2)
    2
"""

from __future__ import annotations

import dataclasses
import json
import sys
import threading
from typing import TYPE_CHECKING

from ..._cache import process_shared

if TYPE_CHECKING:  # pragma: no cover
    from ...llm import Backend
    from ...llm.config import LLMConfig

__all__ = ["close_backends", "get_backend", "task_cpus"]

_backends: dict[tuple[int, str], Backend] = {}
_backends_lock = threading.Lock()


def get_backend(config: LLMConfig) -> Backend:
    """The backend ``config`` describes, built once per process and closed at interpreter exit.

    A local model (``transformers``, ``vllm``) therefore loads once for every batch of every stage that uses the
    same configuration.

    Args:
        config (`LLMConfig`): the backend configuration a stage received.

    Raises:
        ConfigError: the configuration is incomplete.
        MissingExtraError: the backend's optional dependency is not installed.

    Example:
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> backend = get_backend(LLMConfig(model="m", base_url="http://127.0.0.1:8000/v1"))  # doctest: +SKIP
    """
    from ...llm import make_backend

    full = json.dumps(dataclasses.asdict(config), sort_keys=True, default=str)  # transport included
    return process_shared(_backends, _backends_lock, full, lambda: make_backend(config))


def close_backends() -> None:
    """Close every backend this process built (their request caches flush; models are released).

    Example:
        >>> from evolvecoder_datasets.stages.support.resources import close_backends
        >>> close_backends()
    """
    with _backends_lock:
        for backend in _backends.values():
            backend.close()
        _backends.clear()


def task_cpus(default: int = 1) -> int:
    """CPUs the running Ray task reserved (``default`` outside Ray); a stage sizes its sandbox with it.

    Read without importing Ray: a process that never imported it runs no Ray task.

    Example:
        >>> from evolvecoder_datasets.stages.support.resources import task_cpus
        >>> task_cpus(default=3)   # outside a Ray task
        3
    """
    ray = sys.modules.get("ray")  # a process that never imported Ray is not running a Ray task
    if ray is None or not ray.is_initialized():
        return default
    try:
        cpus = ray.get_runtime_context().get_assigned_resources().get("CPU")
    except (AssertionError, AttributeError, RuntimeError):  # the driver, or a Ray without the call
        return default
    return max(1, int(cpus)) if cpus else default
