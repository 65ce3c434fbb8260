"""The zygote Z: the process every solution process S of an assert job starts from, so S never holds a test.

S used to be a fork of the server, whose memory held the job's tests (and earlier jobs' tests, in the cache of
prepared tests): a program could read its tests' expressions while it loaded and compute their answers under the
load limit, out of every test's time. Z is forked from the server once, after start-up (and a warm-up job of the
server's own) and before any caller's job, and never receives anything of a job: asked with two pipe ends, it
clones S with ``CLONE_PARENT`` (so S is the server's child: the server waits for it, reads its time and kills it
as before) and sends back its pid. The server has the next job's S started while it waits for that job
(``Server.prespawn``); S then reads the job, without its tests, as the first frame on its control pipe, and the
tests, all at once, after its load line. S closes Z's socket before it reads anything.

Where ``CLONE_PARENT`` is refused, and for stdin/stdout jobs (whose inputs are files in the work folder anyway),
S is still forked from the server (``docs/threat-model.md``).
"""

from __future__ import annotations

import array
import ctypes
import json
import os
import signal
import socket
import struct

from . import libc, processes
from .job import AssertJob, JobError, parse_job
from .limits import Limits
from .pristine import _close, _exit, _fork, _len, _read_exact, pin_builtins
from .solution import _solution_child

pin_builtins(globals())

_PID = struct.Struct(">q")
_REPLY_TIMEOUT_S = 10.0  # Z answers in well under a millisecond; a Z that does not is gone or stuck


class ZygoteLost(RuntimeError):
    """Z is gone or does not answer: this server cannot start a solution process that never held a test."""


class Zygote:
    """The server's handle on Z: its pid and the server's end of their socket."""

    def __init__(self, pid: int, sock: socket.socket) -> None:
        self.pid, self.sock = pid, sock

    def spawn(self, wfd: int, ctl_r: int) -> int:
        """Have Z clone a solution process S that will write its report on ``wfd`` and read its job, then its
        tests, from ``ctl_r`` (see ``Server._spawn``). Returns S's pid (a child of this server). Raises
        :class:`ZygoteLost` when Z does not answer."""
        try:
            self.sock.sendmsg([b"S"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [wfd, ctl_r]))])
            reply = b""
            while _len(reply) < _PID.size:
                chunk = self.sock.recv(_PID.size - _len(reply))
                if not chunk:
                    raise ZygoteLost("the zygote closed its socket")
                reply += chunk
        except OSError as err:  # socket.timeout included
            raise ZygoteLost(f"the zygote does not answer: {err}") from None
        (pid,) = _PID.unpack(reply)
        if pid <= 0:
            raise ZygoteLost(f"the zygote could not clone a solution process: {os.strerror(-pid)}")
        return pid


def spawn_spec(job: AssertJob, limits: Limits, todo: list[int], nonce: str, workdir: str) -> dict:
    """What S gets of a job before it loads the program: the job without its tests, the limits the server read from
    it (with them), which tests S is to run, the run's nonce and the work folder. S reads it with
    :func:`read_spawn_spec`.

    Example:
        >>> from evolvecoder_datasets.execution._forkserver.job import WARM_UP, AssertJob
        >>> job = AssertJob.parse(WARM_UP)
        >>> spec = spawn_spec(job, Limits.of(job), [0, 2], "ab", "/tmp/w")
        >>> spec["job"]["tests"], read_spawn_spec(spec)[1] == Limits.of(job), spec["todo"]
        ([], True, [0, 2])
    """
    return {"job": {**job.frame(), "tests": []}, "limits": limits.frame(), "todo": list(todo), "nonce": nonce,
            "workdir": workdir}  # fmt: skip


def read_spawn_spec(spec: dict) -> tuple[AssertJob, Limits, list[int], str, str]:
    """``(job, limits, todo, nonce, workdir)`` of a :func:`spawn_spec` (the job's ``tests`` empty)."""
    job = parse_job(spec["job"])
    if not isinstance(job, AssertJob):
        raise JobError(f"a solution process cloned from the zygote runs an assert job, not a {job.kind} job")
    return job, Limits.parse(spec["limits"]), spec["todo"], spec["nonce"], spec["workdir"]


def start(server_fds: tuple[int, ...]):
    """Fork Z from the server (once, before any job). Returns its :class:`Zygote` handle, or None where a
    socket pair cannot be made. ``server_fds`` are the server's own fds, which Z closes."""
    try:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError:
        return None
    pid = _fork()
    if pid == 0:
        try:
            ours.detach()
            for fd in server_fds:
                if fd >= 0:
                    _close(fd)
            _zygote_main(theirs)
        finally:
            _exit(1)
    theirs.close()
    ours.settimeout(_REPLY_TIMEOUT_S)
    processes._KEEP.add(pid)  # the server's sweeps of its children leave Z alone
    return Zygote(pid, ours)


def _zygote_main(sock: socket.socket) -> None:
    """Z's loop: receive two fds, clone S, answer with its pid; end when the server's end closes."""
    libc._prctl(libc._PR_SET_PDEATHSIG, signal.SIGKILL)
    wake_w = signal.set_wakeup_fd(-1)
    if wake_w >= 0:
        _close(wake_w)
    for sig in (signal.SIGCHLD, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    libc._lock_sigchld((os.getppid(), os.getpid()))  # once here: every S cloned from Z inherits it (see libc)
    before, in_child, in_parent = libc._fork_hooks()
    while True:
        try:
            data, fds, _flags, _addr = socket.recv_fds(sock, 1, 2)
        except OSError:
            _exit(0)
        if not data:
            _exit(0)  # the server is gone
        if _len(fds) != 2:
            for fd in fds:
                _close(fd)
            sock.sendall(_PID.pack(-22))  # EINVAL: the server sent a spawn without its pipes
            continue
        before()
        pid = libc._SYSCALL(*libc._CLONE_ARGS)
        if pid == 0:
            in_child()
            try:
                _close(sock.detach())
                _solution(fds[0], fds[1])
            finally:
                _exit(1)
        in_parent()
        for fd in fds:
            _close(fd)
        sock.sendall(_PID.pack(pid if pid > 0 else -(ctypes.get_errno() or 12)))


def _solution(wfd: int, ctl_r: int) -> None:
    """Body of S cloned from Z: wait for the job (the first frame on ``ctl_r``: a length, then the job without its
    tests as JSON), then be its solution process; the tests come on the same pipe after the load line."""
    header = _read_exact(ctl_r, 4)
    if _len(header) < 4:
        _exit(0)  # the server went away before it had a job for this process
    job, limits, todo, nonce, workdir = read_spawn_spec(json.loads(_read_exact(ctl_r, int.from_bytes(header, "big"))))
    _solution_child(job, todo, None, nonce, wfd, workdir, limits, ctl_r)
