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
import struct

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

# -- SIGCHLD kept at its default, the server out of the program's reach (a seccomp filter) --------------------------
# A child whose parent ignores SIGCHLD (or sets SA_NOCLDWAIT) is reaped by the kernel without adding its CPU time to
# anyone's account: a program could hand a test's work to a chain of short-lived children and have it counted by no
# one. The filter refuses every change of SIGCHLD's disposition (rt_sigaction(SIGCHLD, act != NULL) fails with
# EPERM; reading it stays allowed), and every syscall of another ABI (x32, i386 through int 0x80), by which the
# check could be passed around. Installed in the solution process before the program runs; every process it starts
# inherits it.
# Where the caller is not root there is no uid drop: the program runs as its server's uid and could signal it (a
# wrong program that SIGKILLed its server at load got an infrastructure failure, reward None, instead of its
# verdict). The same filter refuses (EPERM) a signal sent to the processes it is told to protect (the server and
# the zygote), to their process group and to every process at once (-1), by each call that sends one (kill, tkill,
# tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo), and pidfd_send_signal, whose target it cannot see.
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, _PR_SET_NO_NEW_PRIVS, _PR_SET_DUMPABLE = 22, 2, 38, 4
# (audit arch, rt_sigaction's number, lowest number of the x32 ABI or None, the signal senders, pidfd_send_signal)
_SECCOMP_ARCH = {
    "x86_64": (0xC000003E, 13, 0x40000000, (62, 200, 234, 129, 297), 424),
    "aarch64": (0xC00000B7, 134, None, (129, 130, 131, 138, 240), 424),
}.get(os.uname().machine)


def _sigchld_filter(protect: tuple[int, ...] = ()) -> bytes | None:
    """The classic-BPF program of that filter, as ``struct sock_filter`` entries, for this machine's ABI; a signal
    to a pid in ``protect``, to the group of the first, or to -1 is refused."""
    if _SECCOMP_ARCH is None:
        return None
    arch, rt_sigaction, x32, senders, pidfd_send_signal = _SECCOMP_ARCH
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_JMP|JGE|K, BPF_RET|K
    allow, deny = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
    targets = {pid & 0xFFFFFFFF for pid in protect if pid > 1} | {0xFFFFFFFF}  # pid_t, compared as its low half
    if protect and protect[0] > 1:
        targets.add(-_pgid(protect[0]) & 0xFFFFFFFF)
    # seccomp_data: nr at 0, arch at 4, args[i] at 16 + 8 i (low half first: both ABIs are little-endian).
    body = [(ld, 0, 0, 0)] + ([(jge, "deny", 0, x32)] if x32 is not None else []) + [
        (jeq, "deny", 0, pidfd_send_signal), *[(jeq, "target", 0, nr) for nr in senders],
        (jeq, 0, "allow", rt_sigaction), (ld, 0, 0, 16), (jeq, 0, "allow", int(signal.SIGCHLD)),
        (ld, 0, 0, 24), (jeq, 0, "deny", 0), (ld, 0, 0, 28), (jeq, "allow", "deny", 0),
        "target", (ld, 0, 0, 16), *[(jeq, "deny", 0, pid) for pid in sorted(targets)], (ret, 0, 0, allow),
    ]  # fmt: skip
    program = [(ld, 0, 0, 4), (jeq, 0, "deny", arch), *body, "allow", (ret, 0, 0, allow), "deny", (ret, 0, 0, deny)]
    where, entries = {}, []
    for entry in program:
        if isinstance(entry, str):
            where[entry] = len(entries)
        else:
            entries.append(entry)
    out = b""
    for i, (code, jt, jf, k) in enumerate(entries):
        jt, jf = (where[j] - i - 1 if isinstance(j, str) else j for j in (jt, jf))
        out += struct.pack("=HBBI", code, jt, jf, k)
    return out


def _pgid(pid: int) -> int:
    try:
        return os.getpgid(pid)
    except OSError:
        return pid


_SIGCHLD_KEPT = False  # this process has the filter (the zygote installs it once; every S it clones inherits it)


def _lock_sigchld(protect: tuple[int, ...] = ()) -> bool:
    """Install the filter in this process (and so in all it starts), once, refusing signals to the pids in
    ``protect`` (the server first): a process that inherited it (an S cloned from the zygote) keeps it. False where
    it cannot be had: another ABI, no libc, or a kernel or profile that refuses it; SIGCHLD's disposition is then
    the program's to change.

    Installing costs ~0.5-0.9 ms on this VM per process that installs it (measured with 300 forks; the kernel
    compiles the filter and frees it at exit), against nothing for one that inherits it: hence once, in the zygote."""
    global _SIGCHLD_KEPT
    if _SIGCHLD_KEPT:
        return True
    program = _sigchld_filter(protect)
    if program is None or _LIBC is None:
        return False
    entries = ctypes.create_string_buffer(program, len(program))
    fprog = struct.pack("@HP", len(program) // 8, ctypes.addressof(entries))  # struct sock_fprog
    prog = ctypes.create_string_buffer(fprog, len(fprog))
    if _LIBC.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    address = ctypes.c_void_p(ctypes.addressof(prog))  # a pointer, not the C int an untyped argument becomes
    _SIGCHLD_KEPT = _LIBC.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, address, 0, 0) == 0
    return _SIGCHLD_KEPT


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
