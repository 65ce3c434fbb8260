"""The server's state of one solution process S while it runs (:class:`_Run`)."""

from __future__ import annotations

import os
import select

from .pristine import _len, _monotonic, pin_builtins
from .processes import _ChildrenFile, _stat_cpus, _tree_cpu

pin_builtins(globals())


class _Run:
    """Server-side state of one solution child."""

    def __init__(self, pid: int, rfd: int, nonce: str) -> None:
        self.pid, self.rfd, self.nonce = pid, rfd, nonce
        self.buf = bytearray()
        self.loaded = False
        self.last_event = _monotonic()
        self.last_cpu = 0.0
        self.exit_status = 0
        self.killed_after_cpu = 0.0
        self.max_payload = 1 << 20
        self.bytes_read = 0
        self.reported: list[int] = []  # tests whose D line S sent, and the CPU it said their processes used
        self.reported_cpu = 0.0
        # Isolated mode with server-supervised tests (S said "L <cpu> c"): the pipe on which the server tells S to
        # start a test, the test running (None between tests), when it was started, the first exit status and the
        # CPU time of its processes, and how many tests in a row hit a limit.
        self.ctl_fd = -1
        self.supervised = False  # the server's decision, made before S started (see Server._supervise)
        # S cloned from the zygote (see zygote.py): its tests, sent on ``ctl_fd`` once S has loaded the program.
        self.after_load: bytes | None = None
        self.current: int | None = None
        self.started = 0.0
        self.test_status: int | None = None
        self.test_cpu = 0.0
        self.streak = 0
        self.folders_seen: tuple | None = None
        self.eof = False  # the result pipe ended while a test's process was still running
        self.malformed = False  # S wrote a line no honest S writes: the job's remaining tests are crashes
        self.started_cpu = 0.0  # S's tree CPU when the running test was started (counted as the test's)
        try:
            self.stat_fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self.stat_fd = -1
        self.children = _ChildrenFile(pid)

    @property
    def clones(self) -> bool:
        """Whether the server starts S's tests (supervised) and S has loaded the program, so they are running."""
        return self.supervised and self.loaded

    def close_fds(self) -> None:
        """Close what this server holds open on S's ``/proc`` entries (S never ran: see ``Server._spawn``)."""
        if self.stat_fd >= 0:
            os.close(self.stat_fd)
            self.stat_fd = -1
        self.children.close()

    def send_ctl(self, data: bytes, seconds: float) -> bool:
        """Write ``data`` on the control pipe (non-blocking) within ``seconds``. False when S is gone or does not
        read it in time (its tests are its own then: the watch ends it at its limits)."""
        view, deadline = memoryview(data), _monotonic() + seconds
        while view:
            try:
                view = view[os.write(self.ctl_fd, view):]
                continue
            except BlockingIOError:
                pass
            except InterruptedError:
                continue
            except OSError:
                return False
            left = deadline - _monotonic()
            if left <= 0 or not select.select([], [self.ctl_fd], [], left)[1]:
                return False
        return _len(view) == 0

    def cpu(self) -> float:
        """S's CPU seconds so far (0.0 once it is gone)."""
        return self.cpus()[0]

    def cpus(self) -> tuple[float, float]:
        """S's own CPU seconds and those of the children it reaped (zeros once it is gone)."""
        return _stat_cpus(self.stat_fd) if self.stat_fd >= 0 else (0.0, 0.0)

    def s_extra(self, since: float) -> float:
        """Isolated mode: the CPU S's tree used beyond ``since`` (a previous reading), S's own time past a clone's
        cost (``_S_ALLOWANCE_S`` per test) included; with ``since == 0.0``, the reading itself."""
        own, others = self.tree_cpus()
        now = others + max(0.0, own - self.last_cpu - _S_ALLOWANCE_S)
        return now if since == 0.0 else now - since

    def tree_cpus(self) -> tuple[float, float]:
        """S's own CPU seconds, and what every other process of its tree used: the children it reaped and every
        live descendant (fast mode: work a test hands to a forked child counts as the test's)."""
        own, reaped = self.cpus()
        kids = self.children.pids()
        return own, reaped + (sum(_tree_cpu(k) for k in kids) if kids else 0.0)


_S_ALLOWANCE_S = 0.01  # S's own CPU per test (a clone's page-table copy) not charged to the test
