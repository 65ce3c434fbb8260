"""Cache keys, defined once: what a configuration decides, as the request cache, stage checkpoints and stored shards
key it.

A key covers what changes a result and nothing else. Of an :class:`~evolvecoder_datasets.llm.LLMConfig` that is
:meth:`~evolvecoder_datasets.llm.LLMConfig.answer_settings` (backend, resolved model, the extra settings that change
answers, ``engine_kwargs`` included), which is also what the request cache key
(:func:`~evolvecoder_datasets.llm.cache.request_key`) is made of: a run resumed through another server or port
finds its checkpoints, and a changed engine setting is asked again everywhere. Of any other dataclass config,
every field counts (``version`` fields included, so a changed prompt or mutator invalidates old results).

The rule is a protocol, so this ground-floor module imports no room above it: a config that defines
``answer_settings()`` (today :class:`~evolvecoder_datasets.llm.LLMConfig`) is keyed by what that method returns.

Example:
    >>> from evolvecoder_datasets.keys import config_digest
    >>> from evolvecoder_datasets.llm import LLMConfig
    >>> config_digest(LLMConfig(model="a", base_url="http://h:1/v1")) == config_digest(LLMConfig(model="a"))
    True
    >>> config_digest(LLMConfig(backend="vllm", model="a", engine_kwargs={"max_model_len": 2048})) == \\
    ...     config_digest(LLMConfig(backend="vllm", model="a"))
    False
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["chain", "config_digest", "semantic"]


def semantic(value: Any) -> Any:
    """``value`` reduced to what decides a result, as plain JSON-able data (configs nested at any depth).

    An object with an ``answer_settings()`` method is reduced to its result; any other dataclass to all its fields.

    Example:
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> semantic({"llm": LLMConfig(model="m", rpm=10)})
        {'llm': {'backend': 'openai', 'model': 'm', 'extra': None}}
    """
    answer_settings = getattr(value, "answer_settings", None)
    if callable(answer_settings) and not isinstance(value, type):
        return answer_settings()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: semantic(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): semantic(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [semantic(v) for v in value]
    return value


def config_digest(config: Any) -> str:
    """A short, stable hex digest of what a (possibly nested) config decides, for checkpoint and shard keys.

    Example:
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> len(config_digest(LLMConfig(model="a")))
        16
    """
    text = json.dumps(semantic(config), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def chain(*parts: Any) -> str:
    """The key of a step of a run: a short digest of its input's key and what the step adds.

    Example:
        >>> chain("a", 1) == chain("a", 1) != chain("a", 2)
        True
    """
    return hashlib.sha256(json.dumps([str(p) for p in parts]).encode()).hexdigest()[:20]
