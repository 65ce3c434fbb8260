"""A request cache in one sqlite file per run directory: paid calls are never repeated after a crash.

The key is a SHA-256 of the backend, the model, the messages, the sampling parameters, the prompt version and any
extra request body, serialised canonically. Each answer is committed as soon as it arrives (WAL journal), so a
process killed mid-run loses nothing it had received; the rerun sends only the missing requests and gets back
identical rows. The same file serves as a replay store (``LLMConfig(cache_mode="replay")``).

Example:
    >>> import tempfile
    >>> from evolvecoder_datasets.llm.cache import RequestCache, request_key
    >>> from evolvecoder_datasets.llm.types import ChatRequest, Completion
    >>> req = ChatRequest("hi", max_tokens=4)
    >>> key = request_key(req, backend="openai", model="m")
    >>> with RequestCache(tempfile.mkdtemp()) as cache:
    ...     cache.put(key, req, Completion(("hello",), ("stop",), 3, 1, "m"))
    ...     cache.get(key).text
    'hello'
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .types import ChatRequest, Completion

__all__ = ["RequestCache", "request_key", "CACHE_FILENAME"]

CACHE_FILENAME = "llm_cache.sqlite"
_KEY_SCHEMA = 1  # bump when the key recipe changes
_BUSY_S = 60.0  # how long an open or a write waits for another process holding the file


def request_key(
    request: ChatRequest, *, backend: str, model: str, extra_body: Mapping[str, Any] | None = None
) -> str:
    """The cache key of ``request`` sent to ``model`` through ``backend``.

    Args:
        request (`ChatRequest`): the request.
        backend (`str`): backend name (``"openai"``, ``"transformers"``, ``"vllm"``).
        model (`str`): resolved model name.
        extra_body (`Mapping[str, Any]`, *optional*): extra request fields that change the answer.

    Example:
        >>> from evolvecoder_datasets.llm.types import ChatRequest
        >>> a = request_key(ChatRequest("x", prompt_version="1"), backend="openai", model="m")
        >>> b = request_key(ChatRequest("x", prompt_version="2"), backend="openai", model="m")
        >>> a != b and len(a) == 64
        True
    """
    payload = {
        "schema": _KEY_SCHEMA,
        "backend": backend,
        "model": model,
        "messages": [[m["role"], m["content"]] for m in request.messages],
        "params": request.sampling_params(),
        "prompt_version": request.prompt_version,
        "extra": dict(extra_body) if extra_body else None,
    }
    if request.response_schema is not None:  # absent otherwise, so keys written before it existed stay valid
        payload["response_schema"] = request.response_schema
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _enter_wal(conn: sqlite3.Connection) -> None:
    """Put the file in WAL mode (persistent: only its first opener changes it). The switch needs the file to itself,
    and sqlite answers ``database is locked`` at once, without its busy handler, while another process opens or
    switches the same new file; so ask again for up to ``_BUSY_S``, as the handler would."""
    deadline = time.monotonic() + _BUSY_S
    pause = 0.005
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) and "busy" not in str(err) or time.monotonic() > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.2)


def _connect_read_only(path: str) -> sqlite3.Connection:
    """Open an existing cache without writing to it, so a replay works from a read-only copy of a run.

    ``mode=ro`` reads a live cache while another process writes it; where the directory is read-only too, sqlite
    cannot create the WAL index, and the file is opened as immutable (nothing can be writing it there).
    """
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
    last: sqlite3.Error | None = None
    for suffix in ("", "&immutable=1"):
        conn = sqlite3.connect(uri + suffix, uri=True, timeout=_BUSY_S, check_same_thread=False, isolation_level=None)
        try:
            conn.execute("SELECT COUNT(*) FROM completions").fetchone()
        except sqlite3.OperationalError as err:
            conn.close()
            last = err
            if "no such table" in str(err):
                break
            continue
        return conn
    raise sqlite3.OperationalError(f"cannot read the request cache {path!r}: {last}")


class RequestCache:
    """Completions stored by request key in ``<run_dir>/llm_cache.sqlite``.

    Safe to share between threads of one process; several processes may open the same file (sqlite locking,
    WAL journal). Every :meth:`put` is committed immediately.

    Args:
        run_dir (`str` or `os.PathLike`): directory of the run (created if missing).
        read_only (`bool`, defaults to `False`): refuse writes (replay); an existing file is then opened read-only,
            so a run directory on a read-only mount replays.

    Example:
        >>> import tempfile
        >>> cache = RequestCache(tempfile.mkdtemp())
        >>> len(cache)
        0
        >>> cache.close()
    """

    def __init__(self, run_dir: str | os.PathLike, *, read_only: bool = False) -> None:
        os.makedirs(run_dir, exist_ok=True)
        self.path = os.path.join(os.fspath(run_dir), CACHE_FILENAME)
        self.read_only = read_only
        self._lock = threading.Lock()
        if read_only and os.path.exists(self.path):
            self._conn = _connect_read_only(self.path)
            return
        self._conn = sqlite3.connect(self.path, timeout=_BUSY_S, check_same_thread=False, isolation_level=None)
        _enter_wal(self._conn)
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS completions ("
            " key TEXT PRIMARY KEY, request TEXT NOT NULL, completion TEXT NOT NULL, created REAL NOT NULL)"
        )

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM completions").fetchone()[0]

    def __contains__(self, key: str) -> bool:
        with self._lock:
            return self._conn.execute("SELECT 1 FROM completions WHERE key = ?", (key,)).fetchone() is not None

    def get(self, key: str) -> Completion | None:
        """The stored completion for ``key`` (marked ``cached=True``), or ``None``."""
        with self._lock:
            row = self._conn.execute("SELECT completion FROM completions WHERE key = ?", (key,)).fetchone()
        return None if row is None else Completion.from_json(json.loads(row[0]), cached=True)

    def get_many(self, keys: Iterable[str]) -> dict[str, Completion]:
        """Stored completions for the keys that have one (one query per 500 keys)."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, Completion] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT key, completion FROM completions WHERE key IN ({marks})", chunk
                ).fetchall()
                for key, blob in rows:
                    found[key] = Completion.from_json(json.loads(blob), cached=True)
        return found

    def put(self, key: str, request: ChatRequest, completion: Completion) -> None:
        """Store ``completion`` under ``key`` and commit. Ignored in read-only mode."""
        if self.read_only:
            return
        req = json.dumps(request.to_json(), ensure_ascii=False)
        comp = json.dumps(completion.to_json(), ensure_ascii=False)
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO completions (key, request, completion, created) VALUES (?, ?, ?, ?)",
                (key, req, comp, time.time()),
            )

    def items(self) -> Iterator[tuple[ChatRequest, Completion]]:
        """Every stored (request, completion) pair, oldest first: the replay log of a run."""
        with self._lock:
            rows = self._conn.execute("SELECT request, completion FROM completions ORDER BY created").fetchall()
        for req, comp in rows:
            yield ChatRequest.from_json(json.loads(req)), Completion.from_json(json.loads(comp), cached=True)

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None  # type: ignore[assignment]

    def __enter__(self) -> RequestCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RequestCache({self.path!r}, read_only={self.read_only})"
