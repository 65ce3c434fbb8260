"""Requests-per-minute and tokens-per-minute limits with an injectable clock.

Each limit is a generic cell-rate algorithm: a *theoretical arrival time* moves forward by ``cost / rate`` for every
reservation, and a caller waits until it is at most ``burst_s`` ahead of now. Reservations happen before waiting, so
concurrent callers queue fairly without holding a lock while they sleep, and a reservation far larger than the
per-second rate (a 4k-token request under a small TPM) simply waits its turn instead of never fitting a bucket.
Token reservations are corrected with :meth:`RateLimiter.settle` once the server reports the real usage.

Example:
    >>> import asyncio
    >>> from evolvecoder_datasets.llm.rate_limit import FakeClock, RateLimiter
    >>> clock = FakeClock()
    >>> limiter = RateLimiter(rpm=60, burst_s=0.0, clock=clock, sleep=clock.sleep)
    >>> async def five():
    ...     for _ in range(5):
    ...         await limiter.acquire()
    >>> asyncio.run(five())
    >>> clock.now      # one request per second
    4.0
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from ..errors import ConfigError
from .types import ChatRequest

__all__ = ["RateLimiter", "FakeClock", "estimate_tokens"]

_DEFAULT_COMPLETION_RESERVE = 1024


def estimate_tokens(request: ChatRequest) -> int:
    """Tokens to reserve before sending ``request``: ~4 characters per prompt token plus ``max_tokens * n``.

    Example:
        >>> from evolvecoder_datasets.llm.types import ChatRequest
        >>> estimate_tokens(ChatRequest("x" * 400, n=2, max_tokens=100))
        304
    """
    prompt = sum(len(m["content"]) for m in request.messages) // 4 + 4 * len(request.messages)
    completion = (request.max_tokens or _DEFAULT_COMPLETION_RESERVE) * request.n
    return prompt + completion


class _Gcra:
    __slots__ = ("rate", "tolerance", "tat")

    def __init__(self, per_minute: float, burst_s: float) -> None:
        self.rate = per_minute / 60.0
        self.tolerance = burst_s
        self.tat = float("-inf")

    def reserve(self, cost: float, now: float) -> float:
        """Reserve ``cost`` units; return the time at which the caller may go."""
        tat = max(self.tat, now)
        go = max(now, tat - self.tolerance)
        self.tat = tat + cost / self.rate
        return go

    def adjust(self, delta: float) -> None:
        if self.tat != float("-inf"):
            self.tat += delta / self.rate


class RateLimiter:
    """Combined RPM and TPM limiter for one backend.

    Args:
        rpm (`float`, *optional*): requests per minute; ``None`` for no limit.
        tpm (`float`, *optional*): tokens per minute; ``None`` for no limit.
        burst_s (`float`, defaults to 1.0): how far ahead of the steady rate a burst may run, in seconds.
        clock (`Callable[[], float]`, defaults to `time.monotonic`): the clock, injectable for tests.
        sleep (`Callable[[float], Awaitable]`, defaults to `asyncio.sleep`): the sleep matching ``clock``.

    Raises:
        ConfigError: a limit is not positive or ``burst_s`` is negative.

    Example:
        >>> limiter = RateLimiter(rpm=600, tpm=100_000)
        >>> limiter.enabled
        True
    """

    def __init__(
        self,
        rpm: float | None = None,
        tpm: float | None = None,
        *,
        burst_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        if (rpm is not None and rpm <= 0) or (tpm is not None and tpm <= 0) or burst_s < 0:
            raise ConfigError(f"rate limits must be positive and burst_s non-negative; got {rpm=}, {tpm=}, {burst_s=}")
        self._requests = _Gcra(rpm, burst_s) if rpm else None
        self._tokens = _Gcra(tpm, burst_s) if tpm else None
        self._clock = clock
        self._sleep = sleep

    @property
    def enabled(self) -> bool:
        """Whether any limit is set."""
        return self._requests is not None or self._tokens is not None

    async def acquire(self, tokens: int = 0) -> None:
        """Wait until one request carrying ``tokens`` reserved tokens may be sent."""
        if not self.enabled:
            return
        now = self._clock()
        go = now
        if self._requests is not None:
            go = max(go, self._requests.reserve(1.0, now))
        if self._tokens is not None and tokens > 0:
            go = max(go, self._tokens.reserve(float(tokens), now))
        if go > now:
            await self._sleep(go - now)

    def settle(self, reserved: int, actual: int) -> None:
        """Correct a token reservation with the usage the server reported (refunds or charges the difference)."""
        if self._tokens is not None:
            self._tokens.adjust(float(actual - reserved))

    def penalise(self, seconds: float) -> None:
        """Push every limit back by ``seconds`` (used when the server answers 429 with ``Retry-After``)."""
        for gcra in (self._requests, self._tokens):
            if gcra is not None:
                gcra.tat = max(gcra.tat, self._clock() + seconds)


class FakeClock:
    """A manual clock whose :meth:`sleep` advances time instantly, for deterministic rate-limit tests.

    Example:
        >>> import asyncio
        >>> clock = FakeClock()
        >>> asyncio.run(clock.sleep(2.5))
        >>> clock(), clock.sleeps
        (2.5, [2.5])
    """

    def __init__(self, start: float = 0.0) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        """Move the clock to ``now + seconds`` (never backwards) and yield to the event loop once."""
        self.sleeps.append(seconds)
        self.now = max(self.now, self.now + seconds)
        await asyncio.sleep(0)
