"""Process accounting and waiting: CPU time read from ``/proc``, children listed, waited for under limits, killed.

Used by the server (every solution process's tree) and by a solution process that supervises its tests itself
(:func:`wait_with_limits`, :class:`Output`, :func:`sweep_children`). Read with bare fds where it runs after every
test: a file object allocates, so dirties, pages a forked process copies.
"""

from __future__ import annotations

import os
import signal
import time

from .pristine import (
    _close,
    _kill,
    _killpg,
    _len,
    _monotonic,
    _pidfd_open,
    _read,
    _select,
    _wait4,
    _waitpid,
    pin_builtins,
)

pin_builtins(globals())

_CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a live process from /proc (0.0 when it is gone)."""
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return 0.0
    try:
        return _stat_cpus(fd)[0]
    finally:
        _close(fd)


def _stat_cpus(fd: int) -> tuple[float, float]:
    """``(own, reaped children's)`` CPU seconds from an open ``/proc/<pid>/stat`` (zeros once it is gone). Each
    read at offset 0 is a fresh snapshot, so the server keeps one fd per solution process instead of opening the
    file for every test."""
    try:
        data = os.pread(fd, 1024, 0)
    except OSError:
        return 0.0, 0.0
    if not data:
        return 0.0, 0.0
    fields = data[data.rfind(b")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK, (int(fields[13]) + int(fields[14])) / _CLK_TCK


def _tree_cpu(pid: int, limit: int = 256) -> float:
    """CPU seconds of a live process and every live descendant: each one's own time plus what it reaped
    (``/proc/<pid>/stat``), walked through ``/proc/<pid>/task/<pid>/children`` (at most ``limit`` processes; the
    job's uid holds at most ``max_processes``). A descendant that already ended is in its reaper's reaped time."""
    total, todo, seen = 0.0, [pid], 0
    while todo and seen < limit:
        kid = todo.pop()
        seen += 1
        try:
            fd = os.open(f"/proc/{kid}/stat", os.O_RDONLY)
        except OSError:
            continue
        try:
            own, reaped = _stat_cpus(fd)
        finally:
            _close(fd)
        total += own + reaped
        todo.extend(_children(kid))
    return total


def _uid_of(pid: int):
    """The real, effective, saved and filesystem uids of a live process, if they are all one (else None)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"Uid:"):
                    uids = {int(x) for x in line.split()[1:]}
                    return uids.pop() if _len(uids) == 1 else None
    except (OSError, ValueError):
        return None
    return None


#: Children of the server that are not a job's: the zygote (``zygote.start``). No listing of children names them,
#: so no sweep kills them and no test's accounting counts them.
_KEEP: set[int] = set()


def _job_pids(data: bytes) -> list[int]:
    """The pids of a ``children`` file's text, without the kept ones."""
    kids = [int(x) for x in data.split()] if data else []
    return [k for k in kids if k not in _KEEP] if _KEEP else kids


def _children(pid: int) -> list[int]:
    # Read with bare fds: this runs after every forked test, and a file object allocates (so dirties) pages.
    try:
        fd = os.open(f"/proc/{pid}/task/{pid}/children", os.O_RDONLY)
        try:
            data = _read(fd, 65536)
        finally:
            _close(fd)
        return _job_pids(data)
    except OSError:
        kids = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat", "rb") as fh:
                        data = fh.read()
                    if int(data[data.rfind(b")") + 2 :].split()[1]) == pid and int(entry) not in _KEEP:
                        kids.append(int(entry))
                except (OSError, ValueError, IndexError):
                    continue
        return kids


class _ChildrenFile:
    """``/proc/<pid>/task/<pid>/children`` opened once and re-read with ``pread`` (each read at offset 0 is a fresh
    list): the server looks at its own children and at S's after every test, and an open/read/close was a third
    of its work per test. Falls back to :func:`_children` where the file cannot be read (the process is gone)."""

    __slots__ = ("fd", "pid")

    def __init__(self, pid: int) -> None:
        self.pid = pid
        try:
            self.fd = os.open(f"/proc/{pid}/task/{pid}/children", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self.fd = -1

    def pids(self) -> list[int]:
        if self.fd >= 0:
            try:
                return _job_pids(os.pread(self.fd, 65536, 0))
            except OSError:
                pass
        return _children(self.pid)

    def close(self) -> None:
        if self.fd >= 0:
            _close(self.fd)
            self.fd = -1


def sweep_children(spare: int = 0) -> float:
    """Kill and reap every child of this process (orphans re-parented to us, as a subreaper, included), but
    ``spare`` (a pid) when given.

    Returns the CPU seconds the reaped processes had used (their own and their reaped descendants').
    """
    me, used = os.getpid(), 0.0
    for _ in range(100):
        kids = [k for k in _children(me) if k != spare]
        if not kids:
            break
        for kid in kids:
            for fn, target in ((_killpg, kid), (_kill, kid)):
                try:
                    fn(target, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        for kid in kids:
            try:
                usage = _wait4(kid, 0)[2]
                used += usage.ru_utime + usage.ru_stime
            except ChildProcessError:
                pass
    if not spare:
        _reap_zombies()
    return used


def _reap_zombies() -> None:
    while True:
        try:
            pid, _ = _waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _KEEP.discard(pid)  # a kept process that ended (its pid may be a new process's one day)


def _kill_tree(pid: int) -> None:
    for fn in (_killpg, _kill):
        try:
            fn(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def wait_with_limits(pid: int, cpu_limit: float, wall_limit: float, output: Output | None = None):
    """Wait for a child, killing its group once its CPU time reaches ``cpu_limit`` or wall time ``wall_limit``.

    With ``output``, the child's stdout pipe is read meanwhile (so a chatty child never blocks on a full pipe), up to
    its cap: past it the child is killed (``killed == "output"``).
    Returns ``(wait_status, cpu_seconds, killed)`` where ``killed`` is ``None``, ``"cpu"``, ``"wall"`` or ``"output"``.
    """
    start = _monotonic()
    killed = None
    try:
        pidfd = _pidfd_open(pid)
    except (TypeError, OSError):
        pidfd = -1
    try:
        next_check = min(cpu_limit, wall_limit)
        while True:
            if pidfd >= 0:
                watch = [pidfd] if output is None or output.closed else [pidfd, output.fd]
                ready = _select(watch, [], [], max(0.0, start + next_check - _monotonic()))[0]
                if output is not None and output.fd in ready:
                    if not output.read():
                        killed = "output"
                        _kill_tree(pid)
                        break
                    if pidfd not in ready:
                        continue
                done = pidfd in ready
            else:
                if output is not None and not output.closed and _select([output.fd], [], [], 0)[0]:
                    if not output.read():
                        killed = "output"
                        _kill_tree(pid)
                        break
                done = _poll_wait(pid, start + min(next_check, 0.01 if output is not None else next_check))
            if done:
                break
            elapsed = _monotonic() - start
            cpu = proc_cpu_seconds(pid)
            if cpu >= cpu_limit or elapsed >= wall_limit:
                killed = "cpu" if cpu >= cpu_limit else "wall"
                _kill_tree(pid)
                break
            next_check = min(wall_limit, elapsed + max(cpu_limit - cpu, 0.01))
    finally:
        if pidfd >= 0:
            _close(pidfd)
    _, status, usage = _wait4(pid, 0)
    return status, usage.ru_utime + usage.ru_stime, killed


class Output:
    """The read end of a case's stdout pipe, collected by the process that waits for the case, up to ``cap``."""

    __slots__ = ("fd", "cap", "chunks", "size", "closed")

    def __init__(self, fd: int, cap: int) -> None:
        self.fd, self.cap, self.chunks, self.size, self.closed = fd, cap, [], 0, False
        os.set_blocking(fd, False)

    def read(self) -> bool:
        """Read what is there; False once more than ``cap`` bytes came."""
        while True:
            try:
                chunk = _read(self.fd, 1 << 16)
            except BlockingIOError:
                return True
            except InterruptedError:
                continue
            if not chunk:
                self.closed = True
                return True
            self.size += _len(chunk)
            if self.size > self.cap:
                return False
            self.chunks.append(chunk)

    def finish(self) -> bytes:
        """Whatever is left once the case ended (descendants holding the pipe were swept), then close."""
        if not self.closed:
            self.read()
        _close(self.fd)
        return b"".join(self.chunks)


def _poll_wait(pid: int, deadline: float) -> bool:
    delay = 0.0005
    while True:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return True
        if _monotonic() >= deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.01)


def _describe_exit(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return f"killed by {name}"
    return f"exited with code {os.WEXITSTATUS(status)} without reporting"
