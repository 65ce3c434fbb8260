"""The reward service: the sandbox and the judge behind an HTTP endpoint, for trainers that call a reward remotely.

``evolvecoder-datasets serve`` runs :func:`serve`; tests and notebooks start a :class:`RewardServer` in a thread.
Each request is scored by the rewards' own machinery (:meth:`~evolvecoder_datasets.rewards.CodeReward.score_details`:
the same extraction, limits, early stop and result cache as ``code_reward``) in this process's sandbox. Built on
``aiohttp`` (the ``serve`` extra), imported when a server starts.

Endpoints:

- ``POST /score``: our batch shape (see :mod:`~evolvecoder_datasets.integrations.protocol`); answers
  ``{"rewards": [...], "infra": [...]}`` (``null`` reward with ``infra: true``: the sandbox failed, not the
  program), plus ``"outcomes"`` when asked for ``details``.
- ``POST /openrlhf``: OpenRLHF's remote reward (``--remote_rm_url``); answers ``{"rewards", "scores",
  "extra_logs"}``. OpenRLHF sends no headers, so its token rides in the URL (``?token=...``). A sample whose
  sandbox failed answers 503: OpenRLHF retries it (the failure is not cached) and, if the sandbox stays down,
  leaves the sample without a reward instead of training on 0.
- ``GET /health`` (no token): ``{"status": "ok"}``, or 503 ``"draining"`` while shutting down.
- ``GET /metrics``: counters in Prometheus' text format (requests by endpoint and status, completions scored,
  sandbox failures, batches in flight, queued bytes, the reward cache, open files, memory).

Limits: a body over ``max_body_bytes`` answers 413 (by ``Content-Length`` before reading it, or while reading a
chunked one: never more than the limit is read); a text over 1 MiB of characters 413 too (``protocol.MAX_TEXT``);
no token 401, a wrong one 403 (checked before the body is read); a body that does not fit 400 (nothing runs); more
queued request bytes than ``max_queued_bytes`` 429 with ``Retry-After`` (memory stays bounded whatever the clients
do). On SIGTERM or SIGINT the service stops taking batches (503), finishes those in flight for up to
``shutdown_grace_s``, answers the rest 503, then stops its fork servers.

Example:
    >>> from evolvecoder_datasets.integrations.server import RewardServer, ServeConfig
    >>> from evolvecoder_datasets.integrations.client import RewardClient
    >>> with RewardServer(ServeConfig(port=0, token="s3cret")) as server:           # doctest: +SKIP
    ...     RewardClient(server.url, token="s3cret").score(["x = 1"], tests=[["assert x == 1"]])
    [1.0]
"""

from __future__ import annotations

import asyncio
import dataclasses
import hmac
import json
import logging
import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from .. import schema
from .._deps import require
from ..errors import ConfigError, SandboxError, SchemaError
from ..schema import TIME_LIMIT
from ..rewards import CodeReward, RewardConfig, cache_info
from .protocol import Batch, TextTooLarge, parse_openrlhf_request, parse_score_request

logger = logging.getLogger("evolvecoder_datasets.serve")

__all__ = ["RewardServer", "RewardService", "ServeConfig", "load_rows", "serve", "service_token"]

TOKEN_ENV = "EVOLVECODER_REWARD_TOKEN"


def service_token(token_file: str | os.PathLike | None = None) -> tuple[str, bool]:
    """The service's bearer token and whether it was just made: the first line of ``token_file``, else
    ``$EVOLVECODER_REWARD_TOKEN``, else a new random one (the caller prints it once).

    Raises:
        ConfigError: ``token_file`` cannot be read or is empty.

    Example:
        >>> import os
        >>> os.environ["EVOLVECODER_REWARD_TOKEN"] = "s3cret"
        >>> service_token()
        ('s3cret', False)
        >>> del os.environ["EVOLVECODER_REWARD_TOKEN"]
        >>> len(service_token()[0]) >= 32
        True
    """
    import secrets

    if token_file is not None:
        try:
            with open(token_file, encoding="utf-8") as fh:
                text = fh.read().strip().splitlines()
        except OSError as err:
            raise ConfigError(f"cannot read the token file {token_file}: {err.strerror or err}") from err
        if not text or not text[0].strip():
            raise ConfigError(f"the token file {token_file} is empty")
        return text[0].strip(), False
    if os.environ.get(TOKEN_ENV):
        return os.environ[TOKEN_ENV], False
    return secrets.token_urlsafe(32), True


@dataclass(frozen=True)
class ServeConfig:
    """How the reward service listens, what it admits and how it scores.

    Args:
        host (`str`, defaults to ``"127.0.0.1"``): address to bind (``0.0.0.0`` for other machines: then set a
            token).
        port (`int`, defaults to 8765): TCP port; 0 picks a free one.
        token (`str`, *optional*): bearer token every scoring request must carry (``Authorization: Bearer ...``
            or ``?token=...``); ``None`` admits everyone (loopback experiments only).
        reward (`RewardConfig`, *optional*): the reward's settings (``kind``, ``mode``, ``timeout_s``, ...);
            defaults to ``code_reward``'s. A request may ask for the other ``kind`` with the same sandbox.
        dataset (`str`, *optional*): ``REPO@REV`` (a Hub repository or a local store, see
            :func:`~evolvecoder_datasets.rounds.load_round`) whose rows requests may name by id.
        max_body_bytes (`int`, defaults to 16 MiB): the largest request body (413 beyond).
        max_queued_bytes (`int`, defaults to 256 MiB): request bytes admitted and not yet answered (429 beyond).
        max_completions (`int`, defaults to 4096): completions per request (400 beyond).
        concurrency (`int`, defaults to 8): requests scored at once (the sandbox's workers share the cores).
        shutdown_grace_s (`float`, defaults to 30.0): how long a shutdown waits for batches in flight.

    Raises:
        ConfigError: a value is out of range.

    Example:
        >>> ServeConfig(port=0, token="t").reward.kind
        'binary'
    """

    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None
    reward: RewardConfig = field(default_factory=RewardConfig)
    dataset: str | None = None
    max_body_bytes: int = 16 << 20
    max_queued_bytes: int = 256 << 20
    max_completions: int = 4096
    concurrency: int = 8
    shutdown_grace_s: float = 30.0

    def __post_init__(self) -> None:
        if not isinstance(self.reward, RewardConfig):
            raise ConfigError(f"reward must be a RewardConfig, got {type(self.reward).__name__}")
        if not 0 <= self.port < 65536:
            raise ConfigError(f"port must be in 0..65535, got {self.port!r}")
        for name in ("max_body_bytes", "max_queued_bytes", "max_completions", "concurrency"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)!r}")
        if self.max_queued_bytes < self.max_body_bytes:
            raise ConfigError("max_queued_bytes must be >= max_body_bytes (one largest request must fit)")
        if self.token is not None and not self.token:
            raise ConfigError("token must be a non-empty string or None")
        if self.shutdown_grace_s < 0:
            raise ConfigError("shutdown_grace_s must be >= 0")


def load_rows(target: str, *, token: str | None = None) -> dict[str, dict]:
    """The rows of ``REPO@REV`` by id, as the service reads them: ``tests`` (asserts, or stdin/stdout cases) and
    the calibrated ``time_limit_s`` where the revision has it.

    Example:
        >>> rows = load_rows("./my-run@round2")                # doctest: +SKIP
        >>> sorted(rows["HumanEval_0"])                        # doctest: +SKIP
        ['tests', 'time_limit_s']
    """
    from ..rounds import load_round, split_repo_revision

    repo, revision = split_repo_revision(target)
    ds = load_round(repo, revision, token=token)
    columns = ds.column_names
    if schema.ID not in columns or (schema.TESTS not in columns and schema.INPUTS not in columns):
        raise SchemaError(f"{target} has no {schema.ID!r} and {schema.TESTS!r} columns (it has {columns})")
    rows: dict[str, dict] = {}
    for row in ds:
        if schema.TESTS in columns and row[schema.TESTS] is not None:
            tests: Any = row[schema.TESTS]
        else:
            tests = {"inputs": row[schema.INPUTS], "outputs": row[schema.OUTPUTS]}
        rows[row[schema.ID]] = {schema.TESTS: tests, TIME_LIMIT: row.get(TIME_LIMIT)}
    return rows


class RewardService:
    """The scoring side of the server, without the HTTP: admission, scoring in threads, counters, draining.

    Args:
        config (`ServeConfig`): the settings.
        rows (`Mapping[str, dict]`, *optional*): rows by id (default: loaded from ``config.dataset``).

    Example:
        >>> service = RewardService(ServeConfig(reward=RewardConfig(mode="fast", workers=1)))
        >>> service.rewards["pass_rate"].config.kind
        'pass_rate'
    """

    def __init__(self, config: ServeConfig, *, rows: Mapping[str, dict] | None = None) -> None:
        self.config = config
        base = config.reward
        self.rewards = {kind: CodeReward(dataclasses.replace(base, kind=kind), name=f"serve_{kind}")
                        for kind in ("binary", "pass_rate")}  # fmt: skip
        self.default_kind = base.kind
        self.rows = rows if rows is not None else (load_rows(config.dataset) if config.dataset else None)
        self.counts: Counter = Counter()
        self.queued_bytes = 0
        self.in_flight = 0
        self.batch_seconds = 0.0
        self.draining = False
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(config.concurrency, thread_name_prefix="ecd-serve")

    # -- admission -------------------------------------------------------------------------------------------
    def admit(self, nbytes: int) -> bool:
        """Reserve ``nbytes`` of the queue; False when it is full (the caller answers 429)."""
        with self._lock:
            if self.queued_bytes + nbytes > self.config.max_queued_bytes:
                return False
            self.queued_bytes += nbytes
            self.in_flight += 1
            return True

    def release(self, nbytes: int) -> None:
        with self._lock:
            self.queued_bytes -= nbytes
            self.in_flight -= 1

    # -- scoring (in a worker thread) ------------------------------------------------------------------------
    def parse(self, raw: bytes, protocol: str) -> Batch:
        """Decode and check a body; a :class:`SchemaError` means 400 and nothing ran."""
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as err:
            raise SchemaError(f"the body is not JSON: {err}") from None
        except RecursionError:  # nested deeper than the decoder goes: the client's malformed body, not our failure
            raise SchemaError("the body is not JSON this service reads: nested too deeply") from None
        parse = parse_openrlhf_request if protocol == "openrlhf" else parse_score_request
        return parse(body, rows=self.rows, max_completions=self.config.max_completions)

    def score(self, batch: Batch):
        """Score a checked batch with the rewards' own machinery (one ``ScoredCompletion`` per completion)."""
        reward = self.rewards[batch.kind or self.default_kind]
        started = time.perf_counter()
        scored = reward.score_details(batch.completions, **batch.columns)
        with self._lock:
            self.batch_seconds += time.perf_counter() - started
            self.counts["batches"] += 1
            self.counts["completions"] += len(scored)
            self.counts["infra"] += sum(s.infra for s in scored)
        return scored

    async def run(self, raw: bytes, protocol: str):
        """Parse and score ``raw`` off the event loop."""
        loop = asyncio.get_running_loop()
        batch = await loop.run_in_executor(self._executor, self.parse, raw, protocol)
        return batch, await loop.run_in_executor(self._executor, self.score, batch)

    def start(self) -> None:
        """Start the sandbox now (and check it runs a trivial program), so the first batch is not slower."""
        reward = self.rewards[self.default_kind]
        reward.sandbox.start()
        reward.score_details(["pass"], tests=[["assert True"]])  # a cached answer does not start the sandbox

    def close(self) -> None:
        """Stop the worker threads and close the sandbox; the machine's execution service (and its fork servers)
        ends with it unless another caller on the machine still holds it."""
        from ..execution._client import release_service

        self._executor.shutdown(wait=True, cancel_futures=True)
        for reward in self.rewards.values():
            reward.sandbox.close()
        release_service()  # ends the machine's execution service where no other caller holds it

    # -- counters --------------------------------------------------------------------------------------------
    def count(self, endpoint: str, status: int) -> None:
        with self._lock:
            self.counts[("requests", endpoint, status)] += 1

    def metrics_text(self) -> str:
        """The counters in Prometheus' text exposition format."""
        info = cache_info()
        with self._lock:
            counts = dict(self.counts)
            lines = [
                "# TYPE ecd_requests_total counter",
                *(f'ecd_requests_total{{endpoint="{k[1]}",status="{k[2]}"}} {v}'
                  for k, v in sorted(counts.items(), key=str) if isinstance(k, tuple)),  # fmt: skip
                "# TYPE ecd_batches_total counter", f"ecd_batches_total {counts.get('batches', 0)}",
                "# TYPE ecd_completions_total counter", f"ecd_completions_total {counts.get('completions', 0)}",
                "# TYPE ecd_infra_failures_total counter", f"ecd_infra_failures_total {counts.get('infra', 0)}",
                "# TYPE ecd_batch_seconds_total counter", f"ecd_batch_seconds_total {self.batch_seconds:.6f}",
                "# TYPE ecd_requests_in_flight gauge", f"ecd_requests_in_flight {self.in_flight}",
                "# TYPE ecd_queued_bytes gauge", f"ecd_queued_bytes {self.queued_bytes}",
                "# TYPE ecd_draining gauge", f"ecd_draining {int(self.draining)}",
            ]
        lines += [
            "# TYPE ecd_reward_cache_requests_total counter", f"ecd_reward_cache_requests_total {info.requests}",
            "# TYPE ecd_reward_cache_runs_total counter", f"ecd_reward_cache_runs_total {info.runs}",
            "# TYPE ecd_reward_cache_entries gauge", f"ecd_reward_cache_entries {info.size}",
            "# TYPE ecd_fork_servers gauge", f"ecd_fork_servers {len(self.rewards[self.default_kind].sandbox.server_pids)}",
        ]  # fmt: skip
        try:
            lines += ["# TYPE ecd_open_files gauge", f"ecd_open_files {len(os.listdir('/proc/self/fd'))}"]
            with open("/proc/self/statm") as fh:
                rss = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            lines += ["# TYPE ecd_resident_bytes gauge", f"ecd_resident_bytes {rss}"]
        except OSError:  # not Linux
            pass
        return "\n".join(lines) + "\n"


def _app(service: RewardService, web, stopping: asyncio.Event):
    """The aiohttp application: routes, token check, size and queue limits."""
    config = service.config

    def error(status: int, message: str, **headers: str):
        return web.json_response({"error": message}, status=status, headers=headers or None)

    def authorized(request) -> Any:
        if config.token is None:
            return None
        given = None
        header = request.headers.get("Authorization", "")
        if header.lower().startswith("bearer "):
            given = header[7:].strip()
        elif "token" in request.query:
            given = request.query["token"]
        if not given:
            return error(401, "a bearer token is required", **{"WWW-Authenticate": 'Bearer realm="evolvecoder"'})
        if not hmac.compare_digest(given.encode(), config.token.encode()):
            return error(403, "wrong token")
        return None

    async def scoring(request, protocol: str):
        denied = authorized(request)
        if denied is not None:
            return denied
        if service.draining:
            return error(503, "the service is shutting down", Connection="close")
        length = request.content_length
        if length is not None and length > config.max_body_bytes:
            return error(413, f"the body has {length} bytes; the limit is {config.max_body_bytes}")
        reserve = length if length is not None else config.max_body_bytes
        if not service.admit(reserve):
            return error(429, "the queue is full; retry later", **{"Retry-After": "1"})
        try:
            try:
                raw = await request.read()
            except web.HTTPRequestEntityTooLarge:
                return error(413, f"the body is over the limit of {config.max_body_bytes} bytes")
            task = asyncio.ensure_future(service.run(raw, protocol))
            stop = asyncio.ensure_future(stopping.wait())
            done, _ = await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
            if task not in done:
                stop.cancel()
                task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)
                return error(503, "the service shut down before this batch finished; retry it elsewhere")
            stop.cancel()
            try:
                batch, scored = task.result()
            except TextTooLarge as err:
                return error(413, str(err))
            except SchemaError as err:
                return error(400, str(err))
            except SandboxError as err:
                logger.error("the sandbox cannot score: %s", err)
                return error(503, f"the sandbox cannot score: {err}")
        finally:
            service.release(reserve)
        rewards = [s.reward for s in scored]
        if protocol == "openrlhf":
            if any(s.infra for s in scored):
                return error(503, "the sandbox failed on this sample; retry it")
            if any(r is None for r in rewards):
                return error(400, "a label has no tests")
            return web.json_response({"rewards": rewards, "scores": rewards, "extra_logs": {}})
        answer: dict[str, Any] = {"rewards": rewards, "infra": [s.infra for s in scored]}
        if batch.details:
            answer["outcomes"] = [s.outcome for s in scored]
        return web.json_response(answer)

    @web.middleware
    async def counted(request, handler):
        try:
            response = await handler(request)
        except web.HTTPException as exc:
            service.count(request.path, exc.status)
            raise
        service.count(request.path, response.status)
        return response

    async def score(request):
        return await scoring(request, "score")

    async def openrlhf(request):
        return await scoring(request, "openrlhf")

    async def health(request):
        status = "draining" if service.draining else "ok"
        sandbox = service.rewards[service.default_kind].sandbox
        body = {"status": status, "isolation": sandbox.isolation, "workers": sandbox.settings.worker_count,
                "kind": service.default_kind, "mode": config.reward.mode,
                "rows": len(service.rows) if service.rows is not None else None}  # fmt: skip
        return web.json_response(body, status=503 if service.draining else 200)

    async def metrics(request):
        denied = authorized(request)
        if denied is not None:
            return denied
        return web.Response(text=service.metrics_text(), content_type="text/plain")

    app = web.Application(client_max_size=config.max_body_bytes, middlewares=[counted])
    app.router.add_post("/score", score)
    app.router.add_post("/openrlhf", openrlhf)
    app.router.add_get("/health", health)
    app.router.add_get("/metrics", metrics)
    return app


class RewardServer:
    """The reward service on its own event loop in a background thread (tests, notebooks, a trainer's driver).

    Args:
        config (`ServeConfig`, *optional*): the settings; ``port=0`` picks a free port.
        rows (`Mapping[str, dict]`, *optional*): rows by id, instead of loading ``config.dataset``.

    Example:
        >>> with RewardServer(ServeConfig(port=0)) as server:        # doctest: +SKIP
        ...     print(server.url)
        http://127.0.0.1:40123
    """

    def __init__(self, config: ServeConfig | None = None, *, rows: Mapping[str, dict] | None = None) -> None:
        self.config = config or ServeConfig(port=0)
        self.service = RewardService(self.config, rows=rows)
        self.url = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    def start(self) -> RewardServer:
        """Start the sandbox and the HTTP listener; returns once the listener accepts connections."""
        self.service.start()
        self._thread = threading.Thread(target=self._main, name="ecd-reward-server", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error
        return self

    def _main(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as err:  # reported to start()
            self._error = err
            self._ready.set()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        stopping = asyncio.Event()
        runner, self.url = await _start(self.service, stopping)
        self._ready.set()
        await self._stop.wait()
        await _drain(self.service, runner, stopping)

    def stop(self) -> None:
        """Shut down gracefully: finish batches in flight (up to ``shutdown_grace_s``), then stop."""
        if self._loop is not None and self._stop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join()
            self._thread = None
        self.service.close()

    def __enter__(self) -> RewardServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


async def _start(service: RewardService, stopping: asyncio.Event):
    web = require("aiohttp.web", extra="serve", feature="the reward service", package="aiohttp")
    runner = web.AppRunner(_app(service, web, stopping), handle_signals=False, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, service.config.host, service.config.port)
    await site.start()
    host, port = runner.addresses[0][:2]
    host = f"[{host}]" if ":" in host else host
    return runner, f"http://{host}:{port}"


async def _drain(service: RewardService, runner, stopping: asyncio.Event) -> None:
    """Refuse new batches, wait for those in flight up to the grace period, answer the rest 503, close."""
    service.draining = True
    deadline = time.monotonic() + service.config.shutdown_grace_s
    while service.in_flight and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    stopping.set()
    await asyncio.sleep(0)  # let the waiting handlers answer
    await runner.cleanup()


def serve(config: ServeConfig, *, announce=print) -> None:
    """Run the reward service in the foreground until SIGTERM or SIGINT, then shut down gracefully.

    Args:
        config (`ServeConfig`): the settings.
        announce (`Callable[[str], None]`, defaults to ``print``): receives the line saying where it listens.

    Raises:
        MissingExtraError: aiohttp is not installed (``pip install 'evolvecoder-datasets[serve]'``).
        SandboxError: the sandbox cannot run a trivial program with the configured preamble.

    Example:
        >>> serve(ServeConfig(port=8765, token="s3cret"))      # doctest: +SKIP
        serving code_reward (isolated, bwrap) on http://127.0.0.1:8765
    """
    service = RewardService(config)
    service.start()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stop, stopping = asyncio.Event(), asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        runner, url = await _start(service, stopping)
        sandbox = service.rewards[service.default_kind].sandbox
        name = "code_reward" if service.default_kind == "binary" else "pass_rate_reward"
        announce(f"serving {name} ({config.reward.mode}, {sandbox.isolation}) on {url}")
        await stop.wait()
        announce("shutting down: finishing the batches in flight")
        await _drain(service, runner, stopping)

    try:
        asyncio.run(main())
    finally:
        service.close()
