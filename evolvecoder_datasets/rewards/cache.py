"""Results shared by every reward function of a process: a bounded cache of execution outcomes.

Identical ``(program, tests, limit)`` jobs run once: within a batch, across reward functions that share settings,
and across steps. A binary reward's run stops at the first test that does not pass; its outcome answers later
binary rewards but not a pass-rate reward, which reruns the job in full (a full run answers both).

Example:
    >>> from evolvecoder_datasets import rewards
    >>> rewards.clear_cache()
    >>> rewards.cache_info().runs
    0
"""

from __future__ import annotations

import hashlib
import sys
import threading
from collections import OrderedDict, namedtuple
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass

from ..execution import Job

__all__ = ["RewardCacheInfo", "cache_info", "clear_cache"]



@dataclass(frozen=True)
class _Outcome:
    """What a reward needs from one execution: per-test statuses, the first failure, or the sandbox's failure.

    ``complete`` is False for a run stopped at its first failing test (the tests after it are ``unexecuted``): it
    gives a binary reward its value but not a pass rate.
    """

    statuses: tuple[str, ...]
    first_problem: str = ""
    infra_error: str | None = None
    complete: bool = True

    @classmethod
    def from_report(cls, report, *, stopped_early: bool = False) -> _Outcome:
        problem = next((f"{s}: {m}" if m else s for s, m in zip(report.statuses, report.messages) if s != "pass"), "")
        # Interned: a kept outcome then costs one pointer per test, not one string.
        statuses = tuple(sys.intern(s) for s in report.statuses)
        complete = not stopped_early or all(s == "pass" for s in statuses)  # all passed: the same as a full run
        return cls(statuses, problem[:200], report.infra_error, complete)


class _Run(Future):
    """A run in flight; ``complete`` says whether it runs every test (a pass-rate reward can wait on it)."""

    def __init__(self, complete: bool) -> None:
        super().__init__()
        self.complete = complete


class _OutcomeCache:
    """Bounded LRU of execution outcomes by job digest; a run in flight is a future that concurrent callers share.

    A caller :meth:`claim`s the digests it needs: it gets an outcome or a future for each, and runs the jobs whose
    futures it created, then :meth:`settle`s them. Every caller runs its own claims before waiting on anyone
    else's, so waiting never forms a cycle. A caller that needs complete runs (a pass rate) does not take a
    stopped-early outcome: it claims the digest again and its full run replaces the partial one.
    """

    def __init__(self) -> None:
        self._entries: OrderedDict[bytes, _Run | _Outcome] = OrderedDict()
        self._lock = threading.Lock()
        self.requests = 0
        self.runs = 0

    def claim(self, digests: Sequence[bytes], max_size: int, *, complete: bool = True,
              ) -> tuple[dict[bytes, _Run | _Outcome], list[bytes]]:  # fmt: skip
        """Outcomes or runs for ``digests``, and the digests the caller must run itself (``complete``: its runs
        execute every test; a caller that needs every test's status only takes complete outcomes)."""
        futures: dict[bytes, _Run | _Outcome] = {}
        mine: list[bytes] = []
        with self._lock:
            self.requests += len(digests)
            for digest in digests:
                if digest in futures:
                    continue
                entry = self._entries.get(digest)
                if entry is None or (complete and not entry.complete):
                    entry = _Run(complete)
                    mine.append(digest)
                    if max_size:
                        self._entries[digest] = entry
                        self._entries.move_to_end(digest)
                else:
                    self._entries.move_to_end(digest)
                futures[digest] = entry
            while len(self._entries) > max_size:
                oldest, entry = next(iter(self._entries.items()))
                if isinstance(entry, Future):  # never evict a run in flight: a waiter may be about to look it up
                    break
                del self._entries[oldest]
            self.runs += len(mine)
        return futures, mine

    def settle(self, digest: bytes, future: Future, outcome: _Outcome) -> None:
        """Resolve a claimed run; the cache keeps the bare outcome (a future costs ~1 KB more)."""
        future.set_result(outcome)
        with self._lock:
            if self._entries.get(digest) is future:
                self._entries[digest] = outcome

    def forget(self, digests: Sequence[bytes]) -> None:
        """Drop entries that must be recomputed next time (sandbox failures)."""
        with self._lock:
            for digest in digests:
                self._entries.pop(digest, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.requests = self.runs = 0


_OUTCOMES = _OutcomeCache()

RewardCacheInfo = namedtuple("RewardCacheInfo", ["requests", "runs", "size"])


def cache_info() -> RewardCacheInfo:
    """How many completions this process scored, how many programs actually ran, and how many results are kept.

    ``requests - runs`` completions were answered by an earlier identical ``(program, tests)`` run: a duplicate in
    the batch, the same batch scored by another reward function, or a completion seen in an earlier step.

    Example:
        >>> from evolvecoder_datasets import rewards
        >>> rewards.clear_cache()
        >>> rewards.code_reward(completions=["x = 1", "x = 1"], tests=[["assert x == 1"]] * 2)
        [1.0, 1.0]
        >>> rewards.cache_info()
        RewardCacheInfo(requests=2, runs=1, size=1)
    """
    with _OUTCOMES._lock:
        return RewardCacheInfo(_OUTCOMES.requests, _OUTCOMES.runs, len(_OUTCOMES._entries))


def clear_cache() -> None:
    """Forget every kept result and reset :func:`cache_info`'s counters (e.g. after changing the tests in place).

    Example:
        >>> from evolvecoder_datasets import rewards
        >>> rewards.clear_cache()
        >>> rewards.cache_info().size
        0
    """
    _OUTCOMES.clear()


def _digest(settings_key: str, job: Job) -> bytes:
    """Identity of an execution: the sandbox settings, the job's time limit, the program and what it runs against
    (not whether it stops at its first failure: the cache tells complete runs from stopped ones)."""
    h = hashlib.blake2b(digest_size=20)

    def put(text: str) -> None:
        data = text.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)

    put(settings_key)
    put(repr(job.timeout_s))
    put(job.kind)
    put(job.program)
    if job.kind == "stdio":
        put(repr(job.float_tol))
        put(job.language)
        put(repr(job.checker.as_tuple() if job.checker is not None else None))
        for pair in zip(job.inputs or (), job.outputs or ()):
            put(pair[0])
            put(pair[1])
    else:
        for test in job.tests or ():
            put(test)
    return h.digest()

