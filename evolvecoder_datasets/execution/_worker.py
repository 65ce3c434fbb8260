"""One fork server process as the caller sees it: its start, the framed-JSON conversation, its uid and its end.

:class:`~evolvecoder_datasets.execution.Sandbox` keeps a pool of these. Each worker claims an unprivileged uid
that no other live worker on the machine holds (a lock file per uid), so programs of two sandboxes can neither
signal each other nor read each other's files.

Example:
    >>> from evolvecoder_datasets.execution._worker import _claim_uid
    >>> uid, lock = _claim_uid()
    >>> 62000 <= uid < 65000
    True
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import signal
import struct
import subprocess
import time

from ..errors import SandboxCrashed, SandboxError, SandboxProtocolError
from ._forkserver.job import PROTOCOL_VERSION, SHUTDOWN, STOP
from ._protocol import read_frame

logger = logging.getLogger(__name__)

_UID_BASE, _UID_SPAN = 62000, 3000
_uid_counter = itertools.count()


class _Worker:
    """One fork server process and the framed-JSON conversation with it."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.command = command
        self.env = env  # isolation.server_env(python_env): the pool's, computed once for its workers
        self.uid, self._uid_lock = _claim_uid()
        self.proc: subprocess.Popen | None = None
        self.hello: dict = {}

    def start(self) -> None:
        """Start the server and read its hello.

        Raises:
            SandboxCrashed: the server did not say hello within 20 s.
            SandboxProtocolError: it said hello in another protocol version (``_forkserver.job.PROTOCOL_VERSION``).
        """
        self.proc = subprocess.Popen(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=self.env,
            close_fds=True,
            start_new_session=True,
            cwd="/",
        )
        hello = self._recv(deadline=time.monotonic() + 20)
        if not isinstance(hello, dict) or "hello" not in hello:
            self.kill()
            raise SandboxCrashed(f"fork server did not start: {' '.join(self.command[:3])} ...")
        if hello["hello"] != PROTOCOL_VERSION:  # its frames would mean something else than ours
            self.kill()
            raise SandboxProtocolError(f"the fork server speaks protocol version {str(hello['hello'])[:40]} and this caller "
                                       f"version {PROTOCOL_VERSION}: restart the process that runs the sandbox (the "
                                       "package changed under it?)")  # fmt: skip
        self.hello = hello

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def call(self, job: dict, timeout: float, on_progress=None) -> dict:
        """Send one job and wait for its reply. ``on_progress(message)`` sees each progress message of a
        ``stop_on_failure`` job and returns True to stop the job there."""
        if not self.alive:
            self.start()
        assert self.proc is not None and self.proc.stdin is not None
        self._send(job)
        deadline = time.monotonic() + timeout
        stopping = False
        try:
            while True:
                reply = self._recv(deadline=deadline)
                if reply is None:
                    self.kill()
                    raise SandboxCrashed("fork server died or stopped answering during a job")
                if not isinstance(reply, dict):
                    raise SandboxCrashed("fork server sent a reply that is not an object")
                if "progress" not in reply:
                    if reply.get("id") != job.get("id"):  # what an earlier job left: never another job's verdicts
                        continue
                    return reply
                if not stopping and on_progress is not None and _stops(on_progress, reply):
                    stopping = True
                    self._send({"op": STOP})
        except BaseException:
            # Whatever ended the conversation mid-job (a callback that raised, an interrupt), the server may still
            # be writing this job's messages: a worker is never handed on with them unread.
            self.kill()
            raise

    def _send(self, message: dict) -> None:
        """One length-prefixed JSON frame to the server; a closed input kills the worker."""
        data = json.dumps(message).encode()
        view = memoryview(struct.pack(">I", len(data)) + data)
        try:
            while view:
                view = view[os.write(self.proc.stdin.fileno(), view) :]
        except OSError as err:
            self.kill()
            raise SandboxCrashed(f"fork server closed its input: {err}") from err

    def _recv(self, deadline: float) -> dict | None:
        assert self.proc is not None and self.proc.stdout is not None
        body = read_frame(self.proc.stdout.fileno(), deadline)
        return None if body is None else json.loads(body)

    def release_uid(self) -> None:
        if self._uid_lock is not None:
            os.close(self._uid_lock)
            self._uid_lock = None

    def kill(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for stream in (proc.stdin, proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - a process that survives SIGKILL
            logger.warning("fork server %s did not exit after SIGKILL", proc.pid)

    def close(self) -> None:
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None and proc.stdin is not None:
            try:
                self._send({"op": SHUTDOWN})
                proc.wait(timeout=2)
            except (SandboxCrashed, subprocess.TimeoutExpired):
                pass
        self.kill()


def _stops(on_progress, reply: dict) -> bool:
    """Whether the progress callback says stop; one that raises (a hostile value its judge could not take) stops."""
    try:
        return bool(on_progress(reply))
    except Exception:  # noqa: BLE001 - the job's final reply is judged again, where a failure is a verdict
        logger.debug("a progress callback raised; stopping the job", exc_info=True)
        return True


def uid_claims_folder() -> str:
    """The folder of this user's uid claims, ``evolvecoder-sandbox-uids-<euid>`` in the shared temp folder: one per
    machine and user whatever service folder a sandbox uses (two services of one user, in different runtime folders,
    must still never run programs under one uid), checked as the runtime folder is
    (:func:`~evolvecoder_datasets.execution._trust.private_folder`): another user cannot make it first or plant links
    in it for a root caller to open.

    Example:
        >>> uid_claims_folder().rsplit("-", 1)[-1] == str(os.geteuid())
        True
    """
    import tempfile

    from ._trust import private_folder, safe_parent

    return private_folder(os.path.join(safe_parent(tempfile.gettempdir()), f"evolvecoder-sandbox-uids-{os.geteuid()}"))


def _claim_uid() -> tuple[int, int | None]:
    """An unprivileged uid no other live worker on this machine uses, held by a lock for the worker's life.

    Two workers with one uid could signal each other's programs or read their files, and share the per-uid process
    limit (a verdict would then depend on what else runs); uids are claimed with ``flock`` on a file per uid in
    :func:`uid_claims_folder` (released by the kernel if the process dies), so sandboxes in separate processes and
    services never share one. The files are opened without following links
    (:func:`~evolvecoder_datasets.execution._trust.open_private_file`); a folder or file another user planted is
    refused with :class:`~evolvecoder_datasets.errors.SandboxUntrusted`, never used.
    """
    import fcntl

    from ._trust import open_private_file

    folder = uid_claims_folder()
    start = (os.getpid() * 64 + next(_uid_counter)) % _UID_SPAN
    for i in range(_UID_SPAN):
        uid = _UID_BASE + (start + i) % _UID_SPAN
        fd = open_private_file(folder, f"{uid}.lock", os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return uid, fd
        except OSError:
            os.close(fd)
    raise SandboxError(f"all {_UID_SPAN} sandbox uids are in use on this machine")


def _shutdown(workers: list[_Worker], owner_pid: int) -> None:
    # A forked copy of the caller (a datasets num_proc worker, say) inherits the Sandbox object: it must never
    # close or kill servers that belong to its parent.
    if os.getpid() != owner_pid:
        return
    for worker in workers:
        worker.close()
        worker.release_uid()


