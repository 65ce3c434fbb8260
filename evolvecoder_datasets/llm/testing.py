"""A real OpenAI-compatible chat server on loopback with scripted answers and injectable faults.

Tests, demos and end-to-end runs point any client (ours, the ``openai`` SDK, ``curl``) at ``server.base_url`` and
script what the "model" says with a responder ``(request_json) -> answer``. The server speaks HTTP/1.1 with
keep-alive on a raw asyncio socket in a background thread, needs only the standard library, and can misbehave on
purpose: HTTP errors with ``Retry-After``, slow answers, dropped connections, answers cut off mid-body, any raw
status and body (non-JSON, no ``usage``, ``content: null``), ignoring or rejecting ``n``, and dying for good after
N requests (the crash-resume scenario).

A responder returns one of:

* a ``str``: the text of every choice;
* a ``list[str]``: one text per choice (fewer than ``n`` imitates a server that ignores ``n``);
* a :class:`Fault`: an error, a delay or a disconnect instead of (or before) an answer.

A request with ``"stream": true`` gets the answer as server-sent chunks (``data: {...}`` lines, then
``data: [DONE]``), the usage last when ``stream_options.include_usage`` asks for it.

Example:
    >>> import json, urllib.request
    >>> from evolvecoder_datasets.llm.testing import Fault, ScriptedOpenAIServer
    >>> def responder(body):
    ...     return "pong" if body["messages"][-1]["content"] == "ping" else Fault.http(400, "say ping")
    >>> with ScriptedOpenAIServer(responder) as server:
    ...     req = urllib.request.Request(server.base_url + "/chat/completions", method="POST",
    ...         data=json.dumps({"model": "m", "messages": [{"role": "user", "content": "ping"}]}).encode())
    ...     answer = json.load(urllib.request.urlopen(req))
    ...     n_logged = len(server.requests)
    >>> answer["choices"][0]["message"]["content"], n_logged
    ('pong', 1)

Run it standalone (prints the base URL, serves until interrupted)::

    python -m evolvecoder_datasets.llm.testing --answer "def f(): return 1"
"""

from __future__ import annotations

import argparse
import asyncio
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Union

__all__ = ["Fault", "ScriptedOpenAIServer", "Answer", "Responder"]


@dataclass(frozen=True)
class Fault:
    """A misbehaviour of the scripted server for one request.

    Build one with :meth:`http`, :meth:`disconnect`, :meth:`slow`, :meth:`raw` or :meth:`cut`.

    Args:
        kind (`str`): ``"http"``, ``"disconnect"``, ``"slow"``, ``"raw"`` or ``"cut"``.
        status (`int`, defaults to 500): HTTP status for ``"http"``.
        message (`str`, defaults to ``""``): error message in the JSON body for ``"http"``.
        retry_after (`float`, *optional*): ``Retry-After`` header value in seconds for ``"http"``.
        delay_s (`float`, defaults to 0): wait before acting (``"slow"``: before answering ``then``).
        then (`str | list[str]`, *optional*): the answer sent after a ``"slow"`` delay.
        body (`bytes`, *optional*): the exact response body for ``"raw"`` and ``"cut"``.
        headers (`tuple`, *optional*): extra ``(name, value)`` response headers for ``"raw"``.

    Example:
        >>> Fault.http(429, retry_after=0.05).status
        429
    """

    kind: str
    status: int = 500
    message: str = ""
    retry_after: float | None = None
    delay_s: float = 0.0
    then: Any = None
    body: bytes | None = None
    headers: tuple = ()

    @classmethod
    def http(cls, status: int, message: str = "", *, retry_after: float | None = None) -> Fault:
        """Answer with HTTP ``status`` and an OpenAI-style error body (and ``Retry-After`` when given)."""
        return cls("http", status=status, message=message or f"scripted error {status}", retry_after=retry_after)

    @classmethod
    def disconnect(cls, *, delay_s: float = 0.0) -> Fault:
        """Close the connection without answering (after ``delay_s``)."""
        return cls("disconnect", delay_s=delay_s)

    @classmethod
    def slow(cls, delay_s: float, then: Any) -> Fault:
        """Wait ``delay_s`` seconds, then answer ``then`` (a text or list of texts)."""
        return cls("slow", delay_s=delay_s, then=then)

    @classmethod
    def raw(cls, status: int, body: bytes | str | dict, *, headers: dict | None = None) -> Fault:
        """Answer with exactly this status and body (a ``dict`` is sent as JSON): malformed or unusual answers.

        Example:
            >>> Fault.raw(200, {"choices": [{"message": {"content": None}}]}).body
            b'{"choices": [{"message": {"content": null}}]}'
        """
        data = json.dumps(body).encode() if isinstance(body, dict) else body.encode() if isinstance(body, str) else body
        return cls("raw", status=status, body=bytes(data), headers=tuple((headers or {}).items()))

    @classmethod
    def cut(cls, body: bytes | str | dict, *, keep: int | None = None) -> Fault:
        """Start a 200 answer announcing all of ``body``, send only its first ``keep`` bytes, then drop the line.

        Example:
            >>> len(Fault.cut("0123456789", keep=4).body[:4])
            4
        """
        data = json.dumps(body).encode() if isinstance(body, dict) else body.encode() if isinstance(body, str) else body
        return cls("cut", status=200, body=bytes(data), delay_s=0.0, then=len(data) // 2 if keep is None else keep)


Answer = Union[str, list, Fault]
Responder = Callable[[dict], Answer]


def _echo(body: dict) -> str:
    return body["messages"][-1]["content"]


class ScriptedOpenAIServer:
    """OpenAI ``/v1/chat/completions`` (and ``/v1/models``) on ``127.0.0.1`` with scripted answers.

    Args:
        responder (`Callable[[dict], str | list[str] | Fault]`, *optional*): maps each decoded request body to an
            answer. Defaults to echoing the last message. Called in the server thread; exceptions become HTTP 500.
        die_after (`int`, *optional*): after this many chat requests have been answered, the server closes its
            socket and every connection, like a crashed process; later requests are refused.
        n_support (`str`, defaults to ``"native"``): ``"native"`` honours ``n``; ``"reject"`` answers 400 to
            ``n > 1``; ``"ignore"`` always returns one choice.
        reject_sampling_params (`bool`, defaults to `False`): answer 400 when ``temperature``/``top_p`` are sent,
            as OpenAI reasoning models do.
        model (`str`, defaults to ``"scripted"``): model name reported when the request names none.
        port (`int`, defaults to 0): port to bind (0 picks a free one).

    Attributes:
        base_url (`str`): ``http://127.0.0.1:<port>/v1``.
        requests (`list[dict]`): every chat request body received, in arrival order.
        request_headers (`list[dict]`): the lower-cased headers of each of those requests.
        max_in_flight (`int`): most chat requests handled at the same time.

    Example:
        >>> with ScriptedOpenAIServer(lambda body: "hi") as server:
        ...     server.base_url.startswith("http://127.0.0.1:")
        True
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        die_after: int | None = None,
        n_support: str = "native",
        reject_sampling_params: bool = False,
        model: str = "scripted",
        port: int = 0,
    ) -> None:
        if n_support not in ("native", "reject", "ignore"):
            raise ValueError(f"n_support must be 'native', 'reject' or 'ignore'; got {n_support!r}")
        self.responder = responder or _echo
        self.die_after = die_after
        self.n_support = n_support
        self.reject_sampling_params = reject_sampling_params
        self.model = model
        self.requests: list[dict] = []
        self.request_headers: list[dict] = []
        self.max_in_flight = 0
        self.answered = 0
        self._port = port
        self._faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._in_flight = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._thread: threading.Thread | None = None
        self._dead = False

    # -- lifecycle ----------------------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """Root URL to give clients (``.../v1``)."""
        if self._server is None:
            raise RuntimeError("the server is not started")
        return f"http://127.0.0.1:{self._port}/v1"

    def start(self) -> ScriptedOpenAIServer:
        """Start serving in a background thread; returns ``self``."""
        if self._thread is not None:
            return self
        ready = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                self._server = loop.run_until_complete(
                    asyncio.start_server(self._handle, "127.0.0.1", self._port, backlog=1024)
                )
                self._port = self._server.sockets[0].getsockname()[1]
            except BaseException as err:  # reported to start()
                failure.append(err)
                ready.set()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        self._thread = threading.Thread(target=serve, name="scripted-openai-server", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            raise failure[0]
        return self

    def stop(self) -> None:
        """Stop serving and join the thread (idempotent)."""
        if self._thread is None or self._loop is None:
            return

        async def shutdown() -> None:
            self._kill()
            await asyncio.sleep(0)
            self._loop.stop()

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop)
        self._thread.join(timeout=10)
        self._thread = None

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting ----------------------------------------------------------------------------------------------

    def inject(self, fault: Fault, times: int = 1) -> None:
        """Make the next ``times`` chat requests suffer ``fault`` instead of reaching the responder."""
        with self._lock:
            self._faults.extend([fault] * times)

    @property
    def dead(self) -> bool:
        """Whether the server has died (``die_after`` reached)."""
        return self._dead

    # -- serving ------------------------------------------------------------------------------------------------

    def _kill(self) -> None:
        self._dead = True
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while not self._dead:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = (lines[0].split(" ", 2) + ["", ""])[:3]
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        name, value = line.split(":", 1)
                        headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
                keep = await self._respond(writer, method, path, body, headers)
                if not keep or headers.get("connection", "").lower() == "close":
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            self._writers.discard(writer)
            if self._dead:
                writer.transport.abort()
            else:
                writer.close()

    async def _respond(
        self, writer: asyncio.StreamWriter, method: str, path: str, raw: bytes, headers: dict[str, str]
    ) -> bool:
        path = path.split("?", 1)[0].rstrip("/")
        if method == "GET" and path.endswith("/models"):
            self._send(writer, 200, {"object": "list", "data": [{"id": self.model, "object": "model"}]})
            return True
        if method != "POST" or not path.endswith("/chat/completions"):
            self._send(writer, 404, {"error": {"message": f"no route {method} {path}", "type": "not_found"}})
            return True
        try:
            body = json.loads(raw)
        except ValueError:
            self._send(writer, 400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
            return True
        with self._lock:
            self.requests.append(body)
            self.request_headers.append(headers)
            fault = self._faults.popleft() if self._faults else None
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            return await self._answer(writer, body, fault)
        finally:
            with self._lock:
                self._in_flight -= 1

    async def _answer(self, writer: asyncio.StreamWriter, body: dict, fault: Fault | None) -> bool:
        n = int(body.get("n", 1) or 1)
        if self.reject_sampling_params and ("temperature" in body or "top_p" in body):
            self._send(writer, 400, _error("Unsupported parameter: 'temperature' is not supported with this model."))
            return True
        if self.reject_sampling_params and "max_tokens" in body:
            self._send(writer, 400, _error("Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens'."))
            return True
        if n > 1 and self.n_support == "reject":
            self._send(writer, 400, _error("n must be 1 for this server: 'n' > 1 is not supported"))
            return True
        try:
            answer = fault if fault is not None else self.responder(body)
        except Exception as err:  # the responder's bug becomes a 500, as a real server's would
            self._send(writer, 500, _error(f"responder raised {type(err).__name__}: {err}"))
            return True
        if isinstance(answer, Fault):
            if answer.delay_s:
                await asyncio.sleep(answer.delay_s)
            if answer.kind == "disconnect":
                writer.transport.abort()
                return False
            if answer.kind == "http":
                extra = {} if answer.retry_after is None else {"Retry-After": f"{answer.retry_after:g}"}
                self._send(writer, answer.status, _error(answer.message), extra)
                return True
            if answer.kind == "raw":
                self._send(writer, answer.status, answer.body or b"", dict(answer.headers))
                return True
            if answer.kind == "cut":
                data = answer.body or b""
                self._send(writer, 200, data[: int(answer.then)], content_length=len(data))
                await writer.drain()
                writer.transport.abort()
                return False
            answer = answer.then
        if self._dead:
            writer.transport.abort()
            return False
        texts = [answer] * n if isinstance(answer, str) else [str(t) for t in answer]
        if self.n_support == "ignore":
            texts = texts[:1]
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
        prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", [])) + 1
        choices = []
        completion_tokens = 0
        for i, text in enumerate(texts):
            words = len(text.split())
            reason = "length" if max_tokens is not None and words > int(max_tokens) else "stop"
            completion_tokens += words
            choices.append(
                {
                    "index": i,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": reason,
                    "logprobs": None,
                }
            )
        payload = {
            "id": f"chatcmpl-scripted-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.model,
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        with self._lock:
            self.answered += 1
            dying = self.die_after is not None and self.answered >= self.die_after
        if dying:
            # Stop listening before the last answer leaves: a client that reads it and connects again must find
            # nothing there, never a half-dead listener.
            self._dead = True
            if self._server is not None:
                self._server.close()
        if body.get("stream"):
            self._send(writer, 200, _sse(payload, bool((body.get("stream_options") or {}).get("include_usage"))),
                       {"Content-Type": "text/event-stream"})  # fmt: skip
        else:
            self._send(writer, 200, payload)
        if dying:
            await writer.drain()
            self._kill()
            return False
        return True

    @staticmethod
    def _send(
        writer: asyncio.StreamWriter, status: int, payload: dict | bytes, headers: dict | None = None,
        *, content_length: int | None = None,
    ) -> None:  # fmt: skip
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        length = len(data) if content_length is None else content_length
        headers = {"Content-Type": "application/json", **(headers or {})}
        head = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}", f"Content-Length: {length}",
                "Connection: keep-alive"]
        head += [f"{k}: {v}" for k, v in headers.items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + data)


_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 408: "Request Timeout",
            429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
            504: "Gateway Timeout"}


def _sse(payload: dict, include_usage: bool) -> bytes:
    """A ``stream: true`` answer: the completion as server-sent chunks (a delta per choice, then its finish
    reason, then the usage when asked for), ending with ``data: [DONE]``, as OpenAI streams them."""
    base = {k: payload[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    chunks = [base | {"choices": [{"index": c["index"], "delta": c["message"], "finish_reason": None,
                                   "logprobs": None}]} for c in payload["choices"]]  # fmt: skip
    chunks += [base | {"choices": [{"index": c["index"], "delta": {}, "finish_reason": c["finish_reason"],
                                    "logprobs": None}]} for c in payload["choices"]]  # fmt: skip
    if include_usage:
        chunks.append(base | {"choices": [], "usage": payload["usage"]})
    return b"".join(b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in chunks) + b"data: [DONE]\n\n"


def _error(message: str) -> dict:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}


def main(argv: list[str] | None = None) -> None:
    """Serve a constant (or echoed) answer until interrupted; prints the base URL first."""
    parser = argparse.ArgumentParser(description="Scripted OpenAI-compatible chat server on 127.0.0.1")
    parser.add_argument("--answer", default=None, help="text of every choice (default: echo the last message)")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    responder = (lambda body: args.answer) if args.answer is not None else None
    server = ScriptedOpenAIServer(responder, port=args.port).start()
    print(server.base_url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
