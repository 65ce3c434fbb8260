"""Async client for OpenAI-compatible chat-completions servers (OpenAI, ``vllm serve``, the Hugging Face router).

One ``aiohttp`` session per :meth:`generate` call with a keep-alive pool of ``max_concurrency`` connections; a fixed
set of workers pulls requests from a queue (no task per request waiting on a semaphore). Each HTTP call passes the
rate limiter first, and is retried on 429, 5xx, timeouts and disconnects with exponential backoff and jitter, or
exactly as long as the server's ``Retry-After`` says; each retry is one ``WARNING`` line of this module's logger
(URL, model, attempt, reason, delay), so a retrying run is never silent.

Server quirks handled without configuration:

* a server that rejects ``n`` (or silently returns fewer choices) gets the missing samples as ``n=1`` requests,
  with ``seed + i`` when a seed is set, and is remembered as n-less for the rest of the run;
* reasoning models (``o1``, ``o3-mini``, ``gpt-5``...) get no ``temperature``/``top_p`` and ``max_completion_tokens``
  instead of ``max_tokens``; a 400 naming one of those parameters switches the same behaviour on for other models.

Example:
    >>> from evolvecoder_datasets.llm import ChatRequest, LLMConfig, make_backend
    >>> from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
    >>> with ScriptedOpenAIServer(lambda body: "def f():\\n    return 1") as server:
    ...     llm = make_backend(LLMConfig(model="m", base_url=server.base_url))
    ...     out = llm.generate([ChatRequest("Write f.", n=2, max_tokens=32)])
    >>> out[0].texts
    ('def f():\\n    return 1', 'def f():\\n    return 1')
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from .._deps import require
from ..chat import content_text
from ..errors import LLMRateLimitError, LLMRequestError
from .base import Backend, ResultCallback
from .config import LLMConfig
from .rate_limit import RateLimiter, estimate_tokens
from .types import ChatRequest, Completion

__all__ = ["OpenAICompatible", "parse_retry_after", "RETRY_STATUSES"]

logger = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_MAX_RETRY_AFTER_S = 600.0


def parse_retry_after(headers: Any, *, now: float | None = None) -> float | None:
    """Seconds to wait according to ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date), or ``None``.

    Example:
        >>> parse_retry_after({"Retry-After": "2"}), parse_retry_after({"retry-after-ms": "150"})
        (2.0, 0.15)
        >>> parse_retry_after({}) is None
        True
    """
    lowered = {str(k).lower(): v for k, v in dict(headers).items()}
    try:
        if "retry-after-ms" in lowered:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000.0)
        value = lowered.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - (time.time() if now is None else now))
    except (TypeError, ValueError, OverflowError):
        return None


class _Retryable(Exception):
    """An attempt failed in a way worth retrying."""

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class _Rejected(Exception):
    """The server rejected the request body (4xx); ``message`` holds its explanation."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class _NUnsupported(Exception):
    """The server rejected ``n > 1``; the caller emulates it."""


class OpenAICompatible(Backend):
    """Chat backend for any server speaking OpenAI's ``POST /v1/chat/completions``.

    Args:
        config (`LLMConfig`): connection, limits, retries, cache. ``config.backend`` must be ``"openai"``.
        session_factory (`Callable[[], aiohttp.ClientSession]`, *optional*): builds the HTTP session (inject a
            custom connector or transport); by default a keep-alive pool of ``max_concurrency`` connections.
        clock (`Callable[[], float]`, *optional*): monotonic clock for the rate limiter (tests pass a fake one).
        sleep (`Callable[[float], Awaitable]`, *optional*): sleep used for rate limiting and backoff.

    Raises:
        MissingExtraError: ``aiohttp`` is not installed.
        ConfigError: no model name in the config or ``$OPENAI_MODEL``.

    Example:
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> llm = OpenAICompatible(LLMConfig(model="o3-mini", base_url="http://127.0.0.1:9/v1"))
        >>> sorted(llm.request_body(ChatRequest("hi", temperature=0.7, max_tokens=9)))
        ['max_completion_tokens', 'messages', 'model']
    """

    name = "openai"

    def __init__(
        self,
        config: LLMConfig,
        *,
        session_factory: Callable[[], Any] | None = None,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], Any] | None = None,
    ) -> None:
        require("aiohttp", extra="llm", feature="the OpenAI-compatible backend")
        super().__init__(config)
        self.url = config.resolved_base_url() + "/chat/completions"
        self._session_factory = session_factory
        self._sleep = sleep or asyncio.sleep
        limiter_kwargs: dict[str, Any] = {"sleep": self._sleep}
        if clock is not None:
            limiter_kwargs["clock"] = clock
        self.limiter = RateLimiter(config.rpm, config.tpm, **limiter_kwargs)
        self._reasoning = config.is_reasoning()
        self._native_n = config.n_mode != "emulate"
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        api_key = config.resolved_api_key()
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self.http_calls = 0

    # -- request bodies -----------------------------------------------------------------------------------------

    def request_body(self, request: ChatRequest, *, n: int | None = None, seed: int | None = None) -> dict:
        """The JSON body sent for ``request`` (with ``n``/``seed`` overridden when emulating ``n``)."""
        n = request.n if n is None else n
        seed = request.seed if seed is None else seed
        body: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in request.messages]}
        if n != 1:
            body["n"] = n
        if not self._reasoning:
            if request.temperature is not None:
                body["temperature"] = request.temperature
            if request.top_p is not None:
                body["top_p"] = request.top_p
        if request.max_tokens is not None:
            body["max_completion_tokens" if self._reasoning else "max_tokens"] = request.max_tokens
        if seed is not None:
            body["seed"] = seed
        if request.stop:
            body["stop"] = list(request.stop)
        if request.response_schema is not None and self.config.structured_output:
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": request.stage or "answer",
                                                       "schema": dict(request.response_schema)}}
        if self.config.extra_body:
            body.update(self.config.extra_body)
        return body

    # -- transport ----------------------------------------------------------------------------------------------

    def _new_session(self) -> Any:
        if self._session_factory is not None:
            return self._session_factory()
        aiohttp = require("aiohttp", extra="llm", feature="the OpenAI-compatible backend")
        connector = aiohttp.TCPConnector(limit=self.config.max_concurrency, limit_per_host=0, ttl_dns_cache=300)
        return aiohttp.ClientSession(connector=connector, headers=self._headers, raise_for_status=False)

    async def _post_once(self, session: Any, body: dict) -> dict:
        aiohttp = require("aiohttp", extra="llm")
        self.http_calls += 1
        try:
            async with session.post(
                self.url,
                data=json.dumps(body, ensure_ascii=False),
                timeout=aiohttp.ClientTimeout(total=self.config.timeout_s),
            ) as response:
                raw = await response.read()
                status = response.status
                headers = response.headers
        except asyncio.TimeoutError as err:
            raise _Retryable(f"timed out after {self.config.timeout_s:g} s") from err
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as err:
            raise _Retryable(f"connection failed: {type(err).__name__}: {err}") from err
        if status == 200:
            try:
                data = json.loads(raw)
            except ValueError as err:
                raise _Retryable(f"invalid JSON in a 200 answer: {raw[:200]!r}", status=status) from err
            if not isinstance(data, dict):  # a proxy's or a broken server's answer, never a chat completion
                raise _Retryable(f"a 200 answer that is not a JSON object: {raw[:200]!r}", status=status)
            return data
        message = _error_message(raw)
        if status == 429 and _is_quota_exhausted(raw):  # OpenAI's "insufficient_quota": no wait will fix it
            raise _Rejected(f"HTTP {status}: {message}", status)
        if status in RETRY_STATUSES or status >= 500:
            raise _Retryable(f"HTTP {status}: {message}", status=status, retry_after=parse_retry_after(headers))
        raise _Rejected(f"HTTP {status}: {message}", status)

    async def _post(self, session: Any, request: ChatRequest, *, n: int, seed: int | None) -> dict:
        """POST with rate limiting, retries and parameter fallbacks; returns the decoded answer."""
        attempt = 0
        adapted: set[str] = set()
        while True:
            body = self.request_body(request, n=n, seed=seed)
            reserved = estimate_tokens(request) if self.limiter.enabled else 0
            await self.limiter.acquire(reserved)
            try:
                data = await self._post_once(session, body)
            except _Rejected as err:
                self.limiter.settle(reserved, 0)  # a refused attempt used none of the minute's tokens
                fix = self._adapt_to_rejection(str(err), body, adapted)
                if fix is None:
                    raise LLMRequestError(f"{self.url} rejected the request: {err}", status=err.status) from err
                if fix == "n":
                    raise _NUnsupported(str(err)) from err
                adapted.add(fix)
                continue
            except _Retryable as err:
                self.limiter.settle(reserved, 0)  # nor did a failed one (errors and rate-limit refusals are not billed)
                if attempt >= self.config.max_retries:
                    cls = LLMRateLimitError if err.status == 429 else LLMRequestError
                    raise cls(
                        f"{self.url} failed after {attempt + 1} attempt(s): {err}", status=err.status
                    ) from err
                if err.retry_after is not None:
                    delay = min(err.retry_after, _MAX_RETRY_AFTER_S)
                    if err.status == 429:
                        self.limiter.penalise(delay)
                else:
                    delay = min(self.config.backoff_s * 2**attempt, self.config.max_backoff_s)
                    delay *= random.uniform(0.5, 1.0)
                attempt += 1
                # one WARNING line per retry: with no logging set up, Python's last-resort handler prints it to
                # stderr, so a run that is retrying never looks like a run that hangs
                logger.warning("%s (model %s): attempt %d of %d failed (%s); retrying in %.1f s", self.url,
                               self.model, attempt, self.config.max_retries + 1, err, delay)
                await self._sleep(delay)
                continue
            if self.limiter.enabled:
                actual = sum(_usage_tokens(data))
                if actual:
                    self.limiter.settle(reserved, actual)
            return data

    def _adapt_to_rejection(self, message: str, body: dict, adapted: set[str]) -> str | None:
        """Switch a behaviour the server's 400 complains about; return its name, or ``None`` if nothing helps."""
        text = message.lower()
        # a body built before another request switched the mode may also land here: retrying it is right too
        if "reasoning" not in adapted and (
            ("temperature" in text and "temperature" in body)
            or ("top_p" in text and "top_p" in body)
            or ("max_tokens" in text and "max_tokens" in body)
        ):
            self._reasoning = True
            return "reasoning"
        if "n" not in adapted and body.get("n", 1) != 1 and _mentions_n(text):
            self._native_n = False
            return "n"
        return None

    async def _complete(self, session: Any, request: ChatRequest) -> Completion:
        """One logical request: native ``n``, topped up with ``n=1`` calls when the server returns fewer."""
        choices: list[dict] = []
        prompt_tokens = completion_tokens = 0
        model = self.model
        if self._native_n or request.n == 1:
            try:
                data = await self._post(session, request, n=request.n, seed=None)
            except _NUnsupported:
                pass  # remembered in self._native_n; every sample is requested with n=1 below
            else:
                choices.extend(sorted(_choices(data, self.url), key=_choice_index))
                used_prompt, used_completion = _usage_tokens(data)
                prompt_tokens += used_prompt
                completion_tokens += used_completion
                model = data.get("model") or model
        missing = request.n - len(choices)
        if missing > 0:
            start = len(choices)
            base_seed = request.seed
            answers = await asyncio.gather(
                *(
                    self._post(session, request, n=1, seed=None if base_seed is None else base_seed + start + k)
                    for k in range(missing)
                )
            )
            for data in answers:
                choices.extend(_choices(data, self.url)[:1])
                used_prompt, used_completion = _usage_tokens(data)
                prompt_tokens += used_prompt
                completion_tokens += used_completion
                model = data.get("model") or model
        choices = choices[: request.n]
        if len(choices) < request.n:
            raise LLMRequestError(f"{self.url} returned {len(choices)} choice(s) for n={request.n}")
        return Completion(
            texts=tuple(_choice_text(c) for c in choices),
            finish_reasons=tuple(str(c.get("finish_reason") or "stop") for c in choices),
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            model=str(model),
        )

    async def _run(self, requests: Sequence[ChatRequest], on_result: ResultCallback, stop: asyncio.Event) -> None:
        queue = list(range(len(requests)))
        queue.reverse()
        session = self._new_session()

        async def worker() -> None:
            while queue and not stop.is_set():
                j = queue.pop()
                try:
                    completion = await self._complete(session, requests[j])
                except (LLMRequestError, ValueError, KeyError, TypeError, AttributeError) as err:
                    if not isinstance(err, LLMRequestError):
                        err = LLMRequestError(f"malformed answer from {self.url}: {type(err).__name__}: {err}")
                    on_result(j, err)
                else:
                    on_result(j, completion)

        try:
            workers = min(self.config.max_concurrency, len(requests))
            await asyncio.gather(*(worker() for _ in range(workers)))
        finally:
            await session.close()


def _choices(data: dict, url: str) -> list[dict]:
    """The answer's choices; a ``choices`` field of the wrong shape is a malformed answer, not a crash."""
    choices = data.get("choices") or []
    if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
        raise LLMRequestError(f"malformed answer from {url}: choices is {str(choices)[:200]}")
    return choices


def _choice_index(choice: dict) -> int:
    index = choice.get("index", 0)
    return index if isinstance(index, int) else 0


def _usage_tokens(data: dict) -> tuple[int, int]:
    """``(prompt_tokens, completion_tokens)`` of an answer; 0 for what is missing or unreadable.

    Servers omit ``usage``, send ``null`` or put odd values there; the answer is still good, so counting must not
    fail it (a paid call would then be lost and sent again).

    Example:
        >>> _usage_tokens({"usage": {"prompt_tokens": 7, "completion_tokens": "3"}}), _usage_tokens({"usage": None})
        ((7, 3), (0, 0))
    """
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return 0, 0

    def count(name: str) -> int:
        try:
            return max(0, int(usage.get(name) or 0))
        except (TypeError, ValueError, OverflowError):
            return 0

    return count("prompt_tokens"), count("completion_tokens")


def _choice_text(choice: dict) -> str:
    message = choice.get("message")
    if isinstance(message, dict):
        return content_text(message.get("content"))
    return content_text(choice.get("text"))


def _error_message(raw: bytes) -> str:
    try:
        data = json.loads(raw)
    except ValueError:
        return raw[:300].decode("utf-8", "replace")
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            return str(error.get("message") or error)
        return str(error)
    return str(data)[:300]


def _is_quota_exhausted(raw: bytes) -> bool:
    """Whether a 429 body says the account is out of quota (not a rate limit that passes).

    Example:
        >>> _is_quota_exhausted(b'{"error": {"code": "insufficient_quota", "type": "insufficient_quota"}}')
        True
        >>> _is_quota_exhausted(b'{"error": {"code": "rate_limit_exceeded"}}')
        False
    """
    try:
        data = json.loads(raw)
    except ValueError:
        return False
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        return False
    return "insufficient_quota" in (str(error.get("code")), str(error.get("type")))


def _mentions_n(text: str) -> bool:
    markers = ("'n'", '"n"', " n ", "n must", "n=", "n >", "n>", "n should", "parameter n", "`n`", "only supports n")
    return any(m in text for m in markers)
