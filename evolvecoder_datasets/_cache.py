"""Where the package keeps what it computed once and reuses across runs: one root for every kind of cache.

``$EVOLVECODER_CACHE``, else ``~/.cache/evolvecoder_datasets``. Under it: converted and assembled models
(:mod:`~evolvecoder_datasets.llm.embedded`), repository sources and test environments
(:mod:`~evolvecoder_datasets.code_instruct.archives`), and the fidelity oracles
(:mod:`~evolvecoder_datasets.search.oracle_cache`). In memory, :func:`process_shared` keeps the live objects a
process builds once per setting and reuses (the shared sandbox, the stages' LLM backends).

Example:
    >>> from evolvecoder_datasets._cache import cache_root
    >>> cache_root().name == "evolvecoder_datasets" or "EVOLVECODER_CACHE" in __import__("os").environ
    True
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Callable, Hashable, MutableMapping
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["cache_root", "process_shared"]

_T = TypeVar("_T")


def cache_root() -> Path:
    """``$EVOLVECODER_CACHE``, else ``~/.cache/evolvecoder_datasets`` (read at each call, not at import).

    Example:
        >>> from evolvecoder_datasets._cache import cache_root
        >>> isinstance(cache_root(), __import__("pathlib").Path)
        True
    """
    env = os.environ.get("EVOLVECODER_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "evolvecoder_datasets"


def process_shared(
    registry: MutableMapping[tuple[int, Any], Any], lock: threading.Lock, key: Hashable, build: Callable[[], _T]
) -> _T:
    """The object ``registry`` holds for ``key`` in this process, built by ``build()`` on first use.

    The entry is keyed by ``(os.getpid(), key)``, so a forked child builds its own; a new object's ``close`` is
    registered to run at interpreter exit. ``lock`` guards ``registry`` (the caller's, so it can also close and
    clear what it holds).

    Example:
        >>> import threading
        >>> from evolvecoder_datasets._cache import process_shared
        >>> made, lock = {}, threading.Lock()
        >>> first = process_shared(made, lock, "k", lambda: open(__import__("os").devnull))
        >>> first is process_shared(made, lock, "k", lambda: None), len(made)
        (True, 1)
        >>> first.close()
    """
    full = (os.getpid(), key)
    with lock:
        made = registry.get(full)
        if made is None:
            made = registry[full] = build()
            atexit.register(made.close)
        return made
