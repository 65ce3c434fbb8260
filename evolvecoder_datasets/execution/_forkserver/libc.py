"""What this process asks of the C library and the kernel beyond Python's ``os``.

The libc handle (``_LIBC``: ``prctl``, ``malloc_trim``, the System V IPC calls of ``traces.remove_traces``), the
bare ``clone`` system call that starts a test's process as the server's child (``_SYSCALL`` with its ready
arguments ``_CLONE_ARGS``, see ``solution._clone_per_case``), the interpreter's own at-fork hooks for a clone made
while other threads live, and the start-up probe of whether such a clone is allowed here.

The names that can change (``_LIBC``, ``_SYSCALL``, ``_CLONE_ARGS``) are read through this module
(``libc._SYSCALL``), never copied into another: each lives here once.
"""

from __future__ import annotations

import ctypes
import os
import signal

from .pristine import _close, _exit, _fork, _read, _waitpid, pin_builtins

pin_builtins(globals())

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def _libc():
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover - static or exotic libc
        return None


_LIBC = _libc()


def _prctl(option: int, value: int) -> bool:
    return bool(_LIBC is not None and _LIBC.prctl(option, value, 0, 0, 0) == 0)


_SYS_CLONE = {"x86_64": 56, "aarch64": 220}.get(os.uname().machine)  # clone(flags, stack=0, ...): a plain fork


def _syscall():
    """libc's ``syscall``, called with the GIL held (a ``PyDLL`` function), or None where it cannot be had. Its
    arguments are passed as ready ``c_long`` objects (:data:`_CLONE_ARGS`): converting Python ints on every call
    allocates, and in a process that just forked each allocation may be a page copied."""
    if _SYS_CLONE is None:
        return None
    try:
        fn = ctypes.PyDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):  # pragma: no cover - static or exotic libc
        return None
    fn.restype = ctypes.c_long
    return fn


_SYSCALL = _syscall()
_SIGCHLD = int(signal.SIGCHLD)
_CLONE_PARENT = 0x00008000
_CLONE_ARGS = tuple(ctypes.c_long(v) for v in (_SYS_CLONE or 0, _CLONE_PARENT | _SIGCHLD, 0, 0, 0, 0))


def _one_thread() -> bool:
    """True when this process has exactly one thread (``/proc/self/stat``'s thread count; read with a bare fd, as
    a file object's buffers would be pages every test's process copies)."""
    try:
        fd = os.open("/proc/self/stat", os.O_RDONLY)
        try:
            data = _read(fd, 4096)
        finally:
            _close(fd)
        return int(data[data.rfind(b")") + 2 :].split()[17]) == 1
    except (OSError, ValueError, IndexError):
        return False


def _fork_hooks():
    """``(before, in_child, in_parent)``: the interpreter's own at-fork work (``PyOS_BeforeFork`` and its two
    halves after), for a clone made while other threads are alive (what ``os.fork`` runs around ``fork()``)."""
    api = ctypes.pythonapi
    return api.PyOS_BeforeFork, api.PyOS_AfterFork_Child, api.PyOS_AfterFork_Parent


def _clone_parent_works() -> bool:
    """Whether a child of this process can start a process as this one's child (``CLONE_PARENT``), which isolated
    mode's server-supervised tests need: a seccomp profile or an unusual kernel may refuse it, and S then supervises
    its tests itself. Tried once, when the server starts, with a child and a clone that exit at once."""
    if _SYSCALL is None:
        return False
    pid = _fork()
    if pid == 0:
        try:
            _exit(0 if _SYSCALL(*_CLONE_ARGS) >= 0 else 1)  # the clone exits here too, with 0
        finally:
            _exit(1)
    ok = False
    try:
        _, status = _waitpid(pid, 0)
        ok = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        if ok:
            _waitpid(-1, 0)  # the clone: this server's child
    except ChildProcessError:
        ok = False
    return ok
