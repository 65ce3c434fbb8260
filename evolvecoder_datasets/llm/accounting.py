"""Token and dollar accounting per stage, and a progress bar that shows throughput.

Every backend owns a :class:`UsageLedger`. Cached answers are counted apart: they cost nothing now, but their
tokens still describe the dataset, so both figures are kept.

Example:
    >>> from evolvecoder_datasets.llm.accounting import UsageLedger
    >>> from evolvecoder_datasets.llm.types import Completion
    >>> ledger = UsageLedger(price_per_mtok=(0.15, 0.60))
    >>> ledger.record("refine", Completion(("x",), ("stop",), 1000, 500, "m"))
    >>> ledger.record("refine", Completion(("x",), ("stop",), 1000, 500, "m", cached=True))
    >>> usage = ledger.by_stage()["refine"]
    >>> usage.requests, usage.cached, usage.prompt_tokens, round(usage.usd, 6)
    (2, 1, 2000, 0.00045)
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass

from .types import Completion

__all__ = ["StageUsage", "UsageLedger", "Progress"]


@dataclass
class StageUsage:
    """Counters of one stage.

    Args:
        requests (`int`): answered requests, cached or not.
        cached (`int`): of which answered from the request cache.
        failed (`int`): requests that failed after all retries.
        prompt_tokens (`int`): prompt tokens over all answered requests.
        completion_tokens (`int`): completion tokens over all answered requests.
        billed_prompt_tokens (`int`): prompt tokens of requests actually sent this run.
        billed_completion_tokens (`int`): completion tokens of requests actually sent this run.
        usd (`float`): price of the billed tokens (0 without a price table).
    """

    requests: int = 0
    cached: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    billed_prompt_tokens: int = 0
    billed_completion_tokens: int = 0
    usd: float = 0.0

    def as_dict(self) -> dict[str, float]:
        """The counters as a plain dict (for cards and logs)."""
        return asdict(self)


class UsageLedger:
    """Thread-safe per-stage usage counters.

    Args:
        price_per_mtok (`tuple[float, float]`, *optional*): USD per million (input, output) tokens.

    Example:
        >>> UsageLedger().total().requests
        0
    """

    def __init__(self, price_per_mtok: tuple[float, float] | None = None) -> None:
        self.price_per_mtok = price_per_mtok
        self._stages: dict[str, StageUsage] = {}
        self._lock = threading.Lock()

    def record(self, stage: str, completion: Completion) -> None:
        """Count one answered request of ``stage``."""
        with self._lock:
            usage = self._stages.setdefault(stage or "default", StageUsage())
            usage.requests += 1
            usage.prompt_tokens += completion.prompt_tokens
            usage.completion_tokens += completion.completion_tokens
            if completion.cached:
                usage.cached += 1
                return
            usage.billed_prompt_tokens += completion.prompt_tokens
            usage.billed_completion_tokens += completion.completion_tokens
            if self.price_per_mtok is not None:
                usd_in, usd_out = self.price_per_mtok
                usage.usd += (completion.prompt_tokens * usd_in + completion.completion_tokens * usd_out) / 1e6

    def record_failure(self, stage: str) -> None:
        """Count one request of ``stage`` that failed for good."""
        with self._lock:
            self._stages.setdefault(stage or "default", StageUsage()).failed += 1

    def by_stage(self) -> dict[str, StageUsage]:
        """A snapshot of the counters, by stage name."""
        with self._lock:
            return {name: StageUsage(**asdict(u)) for name, u in self._stages.items()}

    def total(self) -> StageUsage:
        """All stages summed."""
        total = StageUsage()
        for usage in self.by_stage().values():
            for name, value in asdict(usage).items():
                setattr(total, name, getattr(total, name) + value)
        return total


class Progress:
    """A tqdm bar over requests whose postfix shows generated tokens per second and cache hits.

    Disabled bars cost one attribute check per update.

    Args:
        total (`int`): number of requests.
        enabled (`bool`): show the bar.
        desc (`str`, defaults to ``"llm"``): bar label.
    """

    def __init__(self, total: int, *, enabled: bool, desc: str = "llm") -> None:
        self._bar = None
        self._tokens = 0
        self._cached = 0
        self._start = time.monotonic()
        self._last_postfix = 0.0
        if enabled and total:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc=desc, unit="req", dynamic_ncols=True)

    def update(self, completion: Completion | None, count: int = 1) -> None:
        """Advance by ``count`` finished requests that share one answer (identical requests are sent once)."""
        if self._bar is None:
            return
        if completion is not None:
            self._tokens += completion.completion_tokens
            self._cached += completion.cached
        self._bar.update(count)
        now = time.monotonic()
        if now - self._last_postfix > 0.5:
            self._last_postfix = now
            rate = self._tokens / max(now - self._start, 1e-9)
            self._bar.set_postfix(tok_s=f"{rate:,.0f}", cached=self._cached, refresh=False)

    def close(self) -> None:
        """Close the bar."""
        if self._bar is not None:
            self._bar.close()
