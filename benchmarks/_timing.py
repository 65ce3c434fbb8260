"""What the benchmarks share: a wall-clock timer around one call (imported by the scripts in this folder).

Example:
    >>> from _timing import timed  # doctest: +SKIP
    >>> seconds, value = timed(lambda: sum(range(10)))  # doctest: +SKIP
    >>> value  # doctest: +SKIP
    45
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    """``(seconds, result)`` of calling ``fn`` once, timed with ``time.perf_counter``.

    Example:
        >>> seconds, value = timed(lambda: 2 + 2)
        >>> value, seconds >= 0
        (4, True)
    """
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result
