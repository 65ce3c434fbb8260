"""A small client of the reward service (``POST /score``), standard library only, for trainers' reward hooks.

Example:
    >>> from evolvecoder_datasets.integrations.client import RewardClient
    >>> client = RewardClient("http://127.0.0.1:8765", token="s3cret")            # doctest: +SKIP
    >>> client.score(["```python\\nx = 1\\n```"], tests=[["assert x == 1"]])       # doctest: +SKIP
    [1.0]
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigError, SandboxCrashed, SandboxError, SchemaError

__all__ = ["RewardClient", "ServiceError"]

#: Environment variables a trainer process can set instead of passing ``url``/``token``.
URL_ENV, TOKEN_ENV = "EVOLVECODER_REWARD_URL", "EVOLVECODER_REWARD_TOKEN"


class ServiceError(SandboxError):
    """The reward service could not be reached or answered an error other than a bad request."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class RewardClient:
    """Scores completions on a reward service; an infrastructure failure raises instead of scoring 0.

    Args:
        url (`str`, *optional*): the service's base URL; defaults to ``$EVOLVECODER_REWARD_URL``.
        token (`str`, *optional*): its bearer token; defaults to ``$EVOLVECODER_REWARD_TOKEN``.
        timeout_s (`float`, defaults to 600): seconds one request may take.
        retries (`int`, defaults to 3): attempts for a 429 (queue full) or 503 (sandbox failure, draining).

    Raises:
        ConfigError: no URL was given and the environment has none.

    Example:
        >>> RewardClient("http://127.0.0.1:8765").url
        'http://127.0.0.1:8765'
    """

    def __init__(self, url: str | None = None, *, token: str | None = None, timeout_s: float = 600.0,
                 retries: int = 3) -> None:  # fmt: skip
        url = url or os.environ.get(URL_ENV)
        if not url:
            raise ConfigError(f"no reward service URL: pass url= or set ${URL_ENV}")
        self.url = url.rstrip("/")
        self.token = token if token is not None else os.environ.get(TOKEN_ENV)
        self.timeout_s = timeout_s
        self.retries = max(1, retries)

    def request(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST ``body`` to ``/score`` and return the decoded answer.

        Raises:
            SchemaError: the service answered 400 (the request does not fit).
            ServiceError: any other failure after the retries.
        """
        data = json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        last: Exception | None = None
        for attempt in range(self.retries):
            req = urllib.request.Request(f"{self.url}/score", data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=self.timeout_s) as response:
                    return json.loads(response.read())
            except urllib.error.HTTPError as err:
                message = _error_text(err)
                if err.code == 400:
                    raise SchemaError(f"the reward service refused the request: {message}") from None
                last = ServiceError(f"the reward service answered {err.code}: {message}", status=err.code)
                if err.code not in (429, 503):
                    raise last from None
            except (urllib.error.URLError, OSError, ValueError) as err:
                last = ServiceError(f"the reward service at {self.url} cannot be reached: {err}")
            time.sleep(min(2.0, 0.25 * 2**attempt))
        assert last is not None
        raise last

    def score(self, completions: Sequence[Any], *, tests: Sequence[Any] | None = None,
              ids: Sequence[str] | None = None, time_limit_s: Sequence[float | None] | None = None,
              kind: str | None = None) -> list[float]:  # fmt: skip
        """One reward per completion; raises :class:`~evolvecoder_datasets.errors.SandboxCrashed` where the
        sandbox failed on one (every trainer but TRL has no way to leave a sample out, and a 0 would be a lie).

        Args:
            completions: answer texts (or conversations).
            tests: per completion, its asserts (or ``{"inputs", "outputs"}``); or
            ids: per completion, a row id of the revision the service loaded.
            time_limit_s: per completion, a calibrated CPU limit (or ``None``).
            kind (`str`, *optional*): ``"binary"`` or ``"pass_rate"`` (default: the service's).

        Raises:
            SandboxCrashed: the sandbox failed on a completion, even after the retries.
            SchemaError: the request does not fit.
            ServiceError: the service cannot be reached.

        Example:
            >>> RewardClient("http://127.0.0.1:8765").score(["x = 1"], tests=[["assert x == 1"]])  # doctest: +SKIP
            [1.0]
        """
        body: dict[str, Any] = {"completions": list(completions)}
        if tests is not None:
            body["tests"] = [t if isinstance(t, dict) else list(t) for t in tests]
        if ids is not None:
            body["ids"] = list(ids)
        if time_limit_s is not None:
            body["time_limit_s"] = list(time_limit_s)
        if kind is not None:
            body["kind"] = kind
        for attempt in range(self.retries):
            answer = self.request(body)
            if not any(answer.get("infra", ())):
                return answer["rewards"]
            time.sleep(min(2.0, 0.25 * 2**attempt))
        raise SandboxCrashed(f"the reward service's sandbox failed on {sum(answer['infra'])} completions")

    async def ascore(self, completions: Sequence[Any], **kwargs: Any) -> list[float]:
        """Coroutine form of :meth:`score` (the request runs in a thread)."""
        return await asyncio.to_thread(self.score, completions, **kwargs)


def _error_text(err: urllib.error.HTTPError) -> str:
    try:
        return str(json.loads(err.read()).get("error", ""))[:500]
    except (ValueError, OSError, AttributeError):
        return err.reason if isinstance(err.reason, str) else str(err.code)
