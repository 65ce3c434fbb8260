"""The backend protocol shared by the HTTP, transformers and vLLM backends.

A backend turns a list of :class:`ChatRequest` into a list of :class:`Completion`, in order. This base class owns
everything that is not about talking to a model: the request cache (hits are answered without a call, each new
answer is stored the moment it arrives), accounting, the progress bar, and the synchronous entry point that stages
call from ``Dataset.map`` (safe inside a running event loop, e.g. Jupyter).

Subclasses implement one coroutine, :meth:`Backend._run`, which answers the cache misses and reports each result
through a callback.

Example:
    >>> from evolvecoder_datasets.llm import LLMConfig, make_backend     # doctest: +SKIP
    >>> with make_backend(LLMConfig(model="gpt-4o-mini", cache_dir="runs/r1")) as llm:  # doctest: +SKIP
    ...     [c.text for c in llm.generate(["Write a haiku about tests."])]
"""

from __future__ import annotations

import abc
import asyncio
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..errors import LLMCacheMissError, LLMError
from .accounting import Progress, UsageLedger
from .cache import RequestCache, request_key
from .config import LLMConfig
from .types import ChatRequest, Completion, as_requests

__all__ = ["Backend", "run_sync", "ResultCallback"]

#: ``callback(index, completion_or_error)``; the index is into the list of requests handed to :meth:`Backend._run`.
ResultCallback = Callable[[int, "Completion | BaseException"], None]


def run_sync(coro_factory: Callable[[], Any]) -> Any:
    """Run the coroutine made by ``coro_factory()`` to completion from synchronous code.

    Outside an event loop this is ``asyncio.run``. Inside one (Jupyter, an async web app) it runs a fresh loop in a
    helper thread and waits for it, so the caller's loop is never re-entered.

    Args:
        coro_factory (`Callable[[], Coroutine]`): makes the coroutine (called in the thread that runs it).

    Example:
        >>> import asyncio
        >>> async def answer():
        ...     return 42
        >>> run_sync(answer)
        42
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro_factory())
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro_factory())
        except BaseException as err:  # re-raised in the caller's thread
            box["error"] = err

    thread = threading.Thread(target=target, name="evolvecoder-llm-sync", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


class Backend(abc.ABC):
    """Base class of chat backends: cache, accounting, progress, sync and async entry points.

    Args:
        config (`LLMConfig`): the configuration; ``config.backend`` names the subclass.

    Attributes:
        name (`str`): backend name, part of the cache key.
        model (`str`): resolved model name, part of the cache key.
        ledger (`UsageLedger`): token and dollar counters per stage.
        cache (`RequestCache` or `None`): the run's request cache.
    """

    name: str = "base"

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self.model = config.resolved_model()
        self.ledger = UsageLedger(config.price_per_mtok)
        self.cache: RequestCache | None = None
        if config.cache_dir is not None and config.cache_mode != "off":
            self.cache = RequestCache(config.cache_dir, read_only=config.cache_mode == "replay")

    # -- what subclasses implement ------------------------------------------------------------------------------

    @abc.abstractmethod
    async def _run(self, requests: Sequence[ChatRequest], on_result: ResultCallback, stop: asyncio.Event) -> None:
        """Answer ``requests`` (all cache misses), calling ``on_result(i, completion_or_error)`` once per request.

        When ``stop`` is set the backend must not start new requests (those already in flight may finish); requests
        never started need no callback.
        """

    # -- public API ---------------------------------------------------------------------------------------------

    def key(self, request: ChatRequest) -> str:
        """The cache key of ``request`` for this backend and model."""
        return request_key(request, backend=self.name, model=self.model, extra_body=self.config.answer_extra())

    async def agenerate(
        self,
        requests: Iterable[ChatRequest | str | Sequence[dict]],
        *,
        return_exceptions: bool = False,
        desc: str = "llm",
    ) -> list[Completion | BaseException]:
        """Answer ``requests`` in order; the async twin of :meth:`generate`.

        Args:
            requests (`Iterable[ChatRequest | str | list[dict]]`): requests, bare prompts or message lists.
            return_exceptions (`bool`, defaults to `False`): put each failed request's error in its slot instead
                of raising. When `False`, the first failure stops new requests from starting; requests in flight
                finish and are cached, then the error is raised.
            desc (`str`, defaults to ``"llm"``): progress-bar label.

        Returns:
            `list[Completion]` (or errors in the failed slots when ``return_exceptions``).

        Raises:
            LLMRequestError: a request failed after all retries.
            LLMRateLimitError: the server kept answering 429.
            LLMCacheMissError: ``cache_mode="replay"`` and a request is not in the cache.
        """
        reqs = as_requests(requests)
        results: list[Completion | BaseException | None] = [None] * len(reqs)
        keys = [self.key(r) for r in reqs]
        pending: dict[str, list[int]] = {}
        hits = (
            self.cache.get_many(keys)
            if self.cache is not None and self.config.cache_mode in ("use", "replay")
            else {}
        )
        progress = Progress(len(reqs), enabled=self.config.progress, desc=desc)
        for i, (req, key) in enumerate(zip(reqs, keys)):
            if key in hits:
                results[i] = hits[key]
                self.ledger.record(req.stage, hits[key])
                progress.update(hits[key])
            else:
                pending.setdefault(key, []).append(i)  # identical requests are sent once
        misses = [reqs[slots[0]] for slots in pending.values()]
        miss_slots = list(pending.values())
        miss_keys = list(pending)
        first_error: list[BaseException] = []
        stop = asyncio.Event()

        if misses and self.config.cache_mode == "replay":
            error = LLMCacheMissError(
                f"{len(misses)} of {len(reqs)} requests are not in the replay cache {self.cache.path!r}"
            )
            if not return_exceptions:
                progress.close()
                raise error
            for slots in miss_slots:
                for i in slots:
                    results[i] = error
            misses = []

        def on_result(j: int, outcome: Completion | BaseException) -> None:
            request = misses[j]
            if isinstance(outcome, BaseException):
                self.ledger.record_failure(request.stage)
                if not first_error:
                    first_error.append(outcome)
                if not return_exceptions:
                    stop.set()
            else:
                if self.cache is not None:
                    self.cache.put(miss_keys[j], request, outcome)
                self.ledger.record(request.stage, outcome)
            for i in miss_slots[j]:
                results[i] = outcome
            progress.update(None if isinstance(outcome, BaseException) else outcome, count=len(miss_slots[j]))

        try:
            if misses:
                await self._run(misses, on_result, stop)
        finally:
            progress.close()
        if first_error and not return_exceptions:
            raise first_error[0]
        missing = [i for i, r in enumerate(results) if r is None]
        if missing:
            raise LLMError(f"backend {self.name!r} returned no result for {len(missing)} request(s)")
        return results  # type: ignore[return-value]

    def generate(
        self,
        requests: Iterable[ChatRequest | str | Sequence[dict]],
        *,
        return_exceptions: bool = False,
        desc: str = "llm",
    ) -> list[Completion | BaseException]:
        """Answer ``requests`` in order, from synchronous code (a ``Dataset.map`` function, a script, Jupyter).

        Cached requests are answered from the run's cache; the others are sent, and each answer is stored as soon
        as it arrives, so a rerun after a crash sends only what is still missing.

        Args:
            requests (`Iterable[ChatRequest | str | list[dict]]`): requests, bare prompts or message lists.
            return_exceptions (`bool`, defaults to `False`): see :meth:`agenerate`.
            desc (`str`, defaults to ``"llm"``): progress-bar label.

        Returns:
            `list[Completion]`, one per request, in order.

        Raises:
            LLMRequestError: a request failed after all retries.
            LLMRateLimitError: the server kept answering 429.
            LLMCacheMissError: ``cache_mode="replay"`` and a request is not in the cache.

        Example:
            >>> from evolvecoder_datasets.llm import ChatRequest, LLMConfig, make_backend   # doctest: +SKIP
            >>> llm = make_backend(LLMConfig(backend="transformers", cache_dir="runs/demo"))  # doctest: +SKIP
            >>> llm.generate([ChatRequest("Write is_even in Python.", max_tokens=64)])[0].text  # doctest: +SKIP
        """
        reqs = as_requests(requests)
        return run_sync(lambda: self.agenerate(reqs, return_exceptions=return_exceptions, desc=desc))

    def close(self) -> None:
        """Release the cache and any model or connection the backend holds."""
        if self.cache is not None:
            self.cache.close()
            self.cache = None

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, cache={self.cache!r})"
