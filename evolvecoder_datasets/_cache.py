"""Where the package keeps what it computed once and reuses across runs: one root for every kind of cache.

``$EVOLVECODER_CACHE``, else ``~/.cache/evolvecoder_datasets``. Under it: converted and assembled models
(:mod:`~evolvecoder_datasets.llm.embedded`), repository sources and test environments
(:mod:`~evolvecoder_datasets.code_instruct.archives`), and the fidelity oracles
(:mod:`~evolvecoder_datasets.search.oracle_cache`).

Example:
    >>> from evolvecoder_datasets._cache import cache_root
    >>> cache_root().name == "evolvecoder_datasets" or "EVOLVECODER_CACHE" in __import__("os").environ
    True
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_root"]


def cache_root() -> Path:
    """``$EVOLVECODER_CACHE``, else ``~/.cache/evolvecoder_datasets`` (read at each call, not at import).

    Example:
        >>> from evolvecoder_datasets._cache import cache_root
        >>> isinstance(cache_root(), __import__("pathlib").Path)
        True
    """
    env = os.environ.get("EVOLVECODER_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "evolvecoder_datasets"
