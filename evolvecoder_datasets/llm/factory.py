"""Build a backend from its configuration: the one place that maps ``config.backend`` to a class.

Example:
    >>> from evolvecoder_datasets.llm import LLMConfig, make_backend
    >>> llm = make_backend(LLMConfig(model="gpt-4o-mini", base_url="http://127.0.0.1:8000/v1"))
    >>> type(llm).__name__, llm.model
    ('OpenAICompatible', 'gpt-4o-mini')
"""

from __future__ import annotations

from .base import Backend
from .config import LLMConfig

__all__ = ["make_backend"]


def make_backend(config: LLMConfig) -> Backend:
    """Instantiate the backend ``config`` describes (heavy imports happen here, not at package import).

    Args:
        config (`LLMConfig`): the configuration, typically received through ``Dataset.map(fn_kwargs=...)``.

    Returns:
        `Backend`: an :class:`OpenAICompatible`, :class:`LlamaCpp`, :class:`Transformers` or :class:`VLLM` backend; close it (or use it
        as a context manager) to release its cache and model.

    Raises:
        ConfigError: the configuration is incomplete (e.g. no model name for ``openai``).
        MissingExtraError: the backend's optional dependency is not installed.

    Example:
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> with make_backend(LLMConfig(model="m", base_url="http://127.0.0.1:8000/v1")) as llm:
        ...     llm.name
        'openai'
    """
    if config.backend == "openai":
        from .openai_compat import OpenAICompatible

        return OpenAICompatible(config)
    if config.backend == "llamacpp":
        from .llamacpp_backend import LlamaCpp

        return LlamaCpp(config)
    if config.backend == "transformers":
        from .transformers_backend import Transformers

        return Transformers(config)
    from .vllm_backend import VLLM

    return VLLM(config)
