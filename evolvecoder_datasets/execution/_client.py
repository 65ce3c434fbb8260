"""Finding, starting and talking to this machine's execution service (the caller's side; stdlib only).

The service answers on ``service.sock`` in a runtime folder per user and per installed copy of this package
(``$EVOLVECODER_SERVICE_DIR`` if set, else ``$XDG_RUNTIME_DIR`` or the temp folder, then
``evolvecoder-<uid>/<digest>``, the digest of the interpreter, the package's folder, the protocol and its
execution code), so two checkouts of the package never share one. The first caller that finds none starts it,
under a lock file, so that the processes of one machine (``Dataset.map(num_proc=N)`` workers, several trainers)
start exactly one.

Nothing there is trusted for its name (:mod:`._trust`): each folder level made under a shared parent must be a real
directory of this effective uid with mode 0700, the lock and log files are opened without following links, and
the process answering on the socket must run as this effective uid (``SO_PEERCRED``) before anything is sent to it;
otherwise :class:`~evolvecoder_datasets.errors.SandboxUntrusted`. Its replies are checked for their size and shape
(:mod:`._protocol`): a malformed one is a ``SandboxError`` (an infrastructure failure), never a verdict.

Example:
    >>> from evolvecoder_datasets.execution._client import service_folder
    >>> service_folder().split(os.sep)[-2].startswith("evolvecoder-")
    True
"""

from __future__ import annotations

import atexit
import fcntl
import functools
import hashlib
import marshal
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from pathlib import Path

from ..errors import ConfigError, SandboxError, SandboxUntrusted
from . import _protocol
from ._trust import (check_peer, open_private_file, peer_credentials, private_folder, process_state, safe_parent,
                     socket_present)

_SOCKET = "service.sock"
_PACKAGE = Path(__file__).resolve().parent.parent  # evolvecoder_datasets/
_START_TIMEOUT_S = 60.0
STOPPED_LIMIT_S = 10.0  # a service found stopped (SIGSTOP from outside) this long while a caller waits is replaced


@functools.lru_cache(maxsize=1)
def _digest() -> str:
    h = hashlib.sha256(f"{sys.executable}\0{_PACKAGE}\0{_protocol.PROTOCOL}".encode())
    for path in sorted((_PACKAGE / "execution").rglob("*.py")):
        h.update(f"{path.name}:{path.stat().st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def service_folder() -> str:
    """The runtime folder of this machine's service for this copy of the package: each level made with mode 0700
    and proven this user's (a real directory of this effective uid, no group or other bits) before it is used.

    Raises:
        SandboxUntrusted: a level is another user's, a symbolic link or open to others, or the shared parent lets
            others rename its entries; the message names the path, its owner and mode, and the fix.
    """
    base = os.environ.get("EVOLVECODER_SERVICE_DIR")
    if base:
        base = os.path.abspath(base)
        os.makedirs(os.path.dirname(base), exist_ok=True)  # the user's own path, up to the folder we check
    else:
        root = os.path.abspath(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir())
        base = os.path.join(root, f"evolvecoder-{os.geteuid()}")
    # The folder above ours by its real path (safe_parent resolves it once): a link on the way is never walked again.
    base = os.path.join(safe_parent(os.path.dirname(base)), os.path.basename(base))
    private_folder(base)
    return private_folder(os.path.join(base, _digest()))


def service_env() -> dict[str, str]:
    """The service's whole environment: no variable of the caller reaches it (a test's ``str.format`` that reads
    ``os.environ`` there finds these), only what imports this package."""
    from .isolation import BASE_ENV

    return {**BASE_ENV, "PYTHONPATH": str(_PACKAGE.parent), "PYTHONNOUSERSITE": "1"}


def _lock(folder: str) -> int:
    fd = open_private_file(folder, "start.lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _try_connect(folder: str) -> socket.socket | None:
    """A connection to the service answering in ``folder``, None where none answers; a socket path that is not a
    socket of ours, or a peer of another uid, raises :class:`SandboxUntrusted` before anything is sent."""
    path = os.path.join(folder, _SOCKET)
    if not socket_present(path):
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return None
    try:
        check_peer(sock, path)
    except SandboxUntrusted:
        sock.close()
        raise
    return sock


def bind_listener(folder: str) -> socket.socket | None:
    """The service's listening socket in ``folder``; None where a live service already answers there."""
    fd = _lock(folder)
    try:
        live = _try_connect(folder)
        if live is not None:
            live.close()
            return None
        path = os.path.join(folder, _SOCKET)
        if socket_present(path):  # a dead service's socket (anything else there is refused, never removed)
            os.unlink(path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        os.chmod(path, 0o600)
        listener.listen(256)
        return listener
    finally:
        os.close(fd)


def release_listener(folder: str, listener: socket.socket) -> None:
    """Stop answering: the socket file goes under the start lock, so a caller starting the next service waits."""
    fd = _lock(folder)
    try:
        try:
            os.unlink(os.path.join(folder, _SOCKET))
        except OSError:
            pass
        listener.close()
    finally:
        os.close(fd)


_started: list[subprocess.Popen] = []  # services this process started (reaped when they end)


def _detach() -> None:
    """At exit: the services this process started outlive it by design (they end when idle), say so to Popen."""
    for proc in _started:
        if proc.poll() is None:
            proc.returncode = 0  # not ours to wait for any more; silences Popen's "still running" warning


atexit.register(_detach)


def connect() -> socket.socket:
    """A connection to this machine's service, starting it first where none answers.

    Raises:
        SandboxError: the service did not start (its log is in the runtime folder).
    """
    folder = service_folder()
    sock = _try_connect(folder)
    if sock is not None:
        return sock
    fd = _lock(folder)
    try:
        sock = _try_connect(folder)
        if sock is not None:
            return sock
        for proc in [p for p in _started if p.poll() is not None]:
            _started.remove(proc)
        log = open_private_file(folder, "service.log", os.O_WRONLY | os.O_APPEND)
        try:
            proc = subprocess.Popen([sys.executable, "-m", "evolvecoder_datasets.execution.service", "--folder", folder],
                                    stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=service_env(), cwd="/",
                                    close_fds=True, start_new_session=True)  # fmt: skip
        finally:
            os.close(log)
        _started.append(proc)
        # The service takes the same lock to bind: release it while waiting for the socket.
        os.close(fd)
        fd = -1
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            sock = _try_connect(folder)
            if sock is not None:
                return sock
            if proc.poll() is not None:
                sock = _try_connect(folder)  # another caller's service won the race
                if sock is not None:
                    return sock
                raise SandboxError(f"the execution service exited at start ({folder}/service.log)")
            time.sleep(0.01)
        raise SandboxError(f"the execution service did not answer within {_START_TIMEOUT_S:.0f} s")
    finally:
        if fd >= 0:
            os.close(fd)


def _wait_released(pid: int, path: str, wait_s: float = 10.0) -> None:
    """Wait (at most ``wait_s``) until the killed service ``pid`` no longer listens on ``path``: its judges hold
    the listening socket for a moment after it died, and a connection made then is taken by nobody."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(path)
            if peer_credentials(probe)[0] != pid:  # a service started since answers there
                return
        except OSError:  # nobody listens any more
            return
        finally:
            probe.close()
        time.sleep(0.02)


def await_reply(sock: socket.socket, limit_s: float | None = None) -> None:
    """Wait until the service starts its reply on ``sock``, however long its work takes, unless the service is
    stopped from outside (SIGSTOP, a tracer): found stopped for ``limit_s`` seconds in a row (default
    :data:`STOPPED_LIMIT_S`), it is killed (it runs as this uid, checked at connect, and it holds the folder's
    socket, so every later caller would wait on it too) and the request counts as broken (``ConnectionError``): :meth:`Connections.request` sends it once more, to a
    service started afresh, and a second stop is an infrastructure failure, never a verdict or a hang.

    Example:
        >>> a, b = socket.socketpair()
        >>> _protocol.send(b, ("ok",)); await_reply(a); _protocol.recv(a)
        ('ok',)
    """
    limit_s = STOPPED_LIMIT_S if limit_s is None else limit_s
    poller = select.poll()
    poller.register(sock, select.POLLIN | select.POLLERR | select.POLLHUP)
    pid = since = None
    while not poller.poll(500):
        pid = pid if pid is not None else peer_credentials(sock)[0]
        if process_state(pid) not in (b"T", b"t"):
            since = None
            continue
        since = since if since is not None else time.monotonic()
        if time.monotonic() - since >= limit_s:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            _wait_released(pid, sock.getpeername())
            raise ConnectionError(f"the execution service (pid {pid}) was stopped from outside for {limit_s:.0f} s")


class Connections:
    """Idle connections of one caller to the service, one per thread in use; a broken one is replaced once."""

    def __init__(self) -> None:
        self._idle: list[socket.socket] = []
        self._lock = threading.Lock()
        self._pid = os.getpid()
        _live.add(self)

    def request(self, message) -> tuple:
        """Send ``message`` and return the service's answer, checked to be ``("ok", ...)`` or ``("error", kind,
        message)``. A connection that broke is replaced once; a reply that is too large or malformed is a
        SandboxError at once (never retried, never a verdict); a service that is not this user's is
        SandboxUntrusted."""
        last: Exception | None = None
        for _attempt in range(2):
            sock = self._take()
            try:
                _protocol.send(sock, message)
                await_reply(sock)
                reply = _protocol.recv(sock)
                reply = None if reply is None else _protocol.check_reply(reply)
            except _protocol.ReplyError as err:
                sock.close()
                raise SandboxError(f"the execution service sent a malformed reply: {err}") from None
            except (OSError, EOFError) as err:
                reply, last = None, err
            if reply is None:
                sock.close()
                self.close()  # the idle ones went to the same service, which is likely gone too: retry afresh
                last = last or SandboxError("the execution service closed the connection")
                continue
            with self._lock:
                self._idle.append(sock)
            return reply
        raise SandboxError(f"the execution service did not answer: {last}")

    def run(self, settings: tuple, workers: int, jobs: list[bytes], sizes: list[int], keys: list,
            bounds: list[int] | None = None) -> list[bytes]:  # fmt: skip
        """Run encoded ``jobs`` on the service and return one report's bytes per job, in order. A batch too large
        for one frame goes as several (:func:`~._protocol.batch_frames`; ``bounds`` per job: the most bytes its
        report may take, see :func:`~._protocol.reply_bound`).

        Raises:
            ConfigError: one job alone is over the service's cap, or the service called the request malformed.
            SandboxError: the service failed, or answered something that is not the reports asked for.

        Example:
            >>> from evolvecoder_datasets.execution import Job, Sandbox
            >>> from evolvecoder_datasets.execution._protocol import decode_report, encode_job, wire_settings
            >>> with Sandbox(workers=1, mode="fast") as sb:
            ...     settings = wire_settings(sb.settings, sb.isolation)
            ...     blobs = Connections().run(settings, 1, [encode_job(Job("x = 1", tests=["assert x == 1"]))],
            ...                               [1], [None])
            >>> decode_report(blobs[0], 1).statuses
            ['pass']
        """
        bounds = bounds if bounds is not None else [_protocol.reply_bound(n, False, 0) for n in sizes]
        try:
            ranges = _protocol.batch_frames(jobs, bounds, len(marshal.dumps(settings)))
        except OverflowError as err:
            raise ConfigError(str(err)) from None
        blobs: list[bytes] = []
        for a, b in ranges:
            reply = self.request(("run", settings, workers, jobs[a:b], sizes[a:b], keys[a:b]))
            if reply[0] != "ok":
                raise (ConfigError if reply[1] == "ConfigError" else SandboxError)(reply[2])
            try:
                blobs += _protocol.run_reports(reply, b - a)
            except _protocol.ReplyError as err:
                raise SandboxError(f"the execution service sent a malformed reply: {err}") from None
        return blobs

    def _take(self) -> socket.socket:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return connect()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for sock in idle:
            sock.close()


_live: weakref.WeakSet[Connections] = weakref.WeakSet()  # every caller's connections in this process


def _held_here() -> bool:
    """Whether this process holds an open connection to the service (a live caller of its own keeps it)."""
    pid = os.getpid()
    return any(c._pid == pid and any(s.fileno() >= 0 for s in list(c._idle)) for c in list(_live))


def _ask_release(folder: str, wait_s: float) -> tuple[str, int, int] | str | None:
    """One ``release`` request: ``("ok", pid, other callers)``, ``"absent"`` where no service answers, None for an
    answer of another shape."""
    sock = _try_connect(folder)
    if sock is None:
        return "absent"
    try:
        sock.settimeout(wait_s)
        _protocol.send(sock, ("release",))
        reply = _protocol.recv(sock)
    except (OSError, ValueError, EOFError):
        return None
    finally:
        sock.close()
    shaped = type(reply) is tuple and len(reply) == 3 and reply[0] == "ok" and all(type(x) is int for x in reply[1:])
    return reply if shaped else None


def release_service(wait_s: float = 15.0) -> bool:
    """Ask this machine's service to end now if no caller holds a connection to it (a live ``Sandbox`` anywhere on
    the machine keeps it), and wait up to ``wait_s`` for it to exit. Starts nothing. Returns whether no service of
    this package answers afterwards: ``False`` where the service still says other callers hold it after a moment's
    asking again, or at once where a caller of this process holds it (it ends when the last of them leaves). For
    owners that should leave no process behind (``serve`` on SIGTERM).

    Example:
        >>> from evolvecoder_datasets.execution._client import release_service
        >>> release_service(wait_s=5.0) in (True, False)
        True
    """
    folder, deadline = service_folder(), time.monotonic() + wait_s
    settle = time.monotonic() + min(wait_s, 2.0)
    while True:
        reply = _ask_release(folder, wait_s)
        if reply == "absent":
            return True
        if reply is None:
            return False
        # Other callers hold it: it ends when the last of them leaves. A connection its owner has just closed (this
        # process's own sandboxes, closed a moment ago) may not be counted out yet: ask again for a moment, unless
        # a caller of this process still holds one open (then nothing can end it now).
        if not reply[2] or time.monotonic() > settle or _held_here():
            break
        time.sleep(0.05)
    if reply[2]:
        return False
    pid = reply[1]
    ours = [p for p in _started if p.pid == pid]
    while time.monotonic() < deadline:
        if ours and ours[0].poll() is not None:  # our child: reaped here
            _started.remove(ours[0])
            return True
        if not ours and not os.path.exists(f"/proc/{pid}"):
            return True
        time.sleep(0.02)
    return False

