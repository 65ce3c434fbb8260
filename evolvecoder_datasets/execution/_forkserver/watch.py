"""Watching a solution process S while it runs: its time limits, and the tests the server itself starts.

:class:`_Watch` holds the methods of :class:`server.Server` that run while S does: the watch loop (``_watch``),
the check of S's reported CPU time against the kernel's (``_check_accounting``) and, in isolated mode where the
tests' processes are the server's own children, starting, reaping, judging and limiting each one.
"""

from __future__ import annotations

import os
import select
import time

from .pristine import _close, _len, _monotonic, _read, _wait4, _waitpid, _write, pin_builtins
from .processes import _CLK_TCK, _kill_tree, _tree_cpu, sweep_children
from .run import _Run
from .traces import _mtimes

pin_builtins(globals())

_BATCH_READ_S = float(os.environ.get("ECD_BATCH_READ_S", "0.002"))
_LINE_GRACE_S = 0.002  # how long a running test's result pipe is left unread (see Server._watch)


class _Watch:
    """Mixed into :class:`server.Server`: what it does while a solution process runs."""

    def _watch(self, run: _Run, job, pending, tests, statuses, messages, cpu, *, judge_cpu: bool):
        """Apply S's lines until ``pending`` is empty or S ends; kill S when it overruns. Returns the kill reason.

        S's own CPU time since its last line is always judged against the limit: while it loads the program (and in
        fast mode, while it runs a test) it runs untrusted code, and in isolated mode it has run the program's
        module code, so nothing it does afterwards is trusted either (a program may make it compute instead of
        supervising). Grandchildren are capped by the kernel (``RLIMIT_CPU``) and a wall-clock backstop. Lines are
        read as they come, but a child that floods its pipe neither starves these checks nor gets past a byte cap.
        """
        cpu_limit, wall_limit, load_cpu = job.timeout_s, job.wall_timeout_s, job.load_timeout_s
        killed_for = None
        values: dict = {}
        progress = self.progress
        watched = self._watched_fds(run)
        quiet = [fd for fd in watched if fd != run.rfd]
        ended = (job, tests, pending, statuses, messages, cpu, values)  # what a test's end updates
        try:
            next_check = None
            while pending:
                untrusted_running = judge_cpu or not run.loaded or run.clones
                cpu_budget = cpu_limit if run.loaded else load_cpu
                wall_budget = wall_limit if untrusted_running else wall_limit * 1.5 + 2.0
                if next_check is None:
                    next_check = run.last_event + min(cpu_budget, wall_budget)
                wake = progress.wake_at()
                until = next_check if wake is None else min(next_check, wake)
                ready = self._wait_ready(run, watched, quiet, until)
                if self.in_fd in ready and progress.caller_says_stop():
                    killed_for = "stop"
                    break
                if wake is not None and not ready and progress.stopped(statuses):
                    killed_for = "stop"
                    break
                if run.rfd in ready:
                    before = run.last_event
                    if not self._drain(run, job, tests, pending, statuses, messages, cpu, values):
                        if run.current is None:
                            break  # EOF: S is gone
                        watched.remove(run.rfd)  # the running test's process is still this server's to end
                        run.eof = True
                    if run.bytes_read > run.max_bytes:
                        killed_for = "flood"
                        break
                    if run.malformed:
                        killed_for = "malformed"
                        break
                    if run.last_event != before:
                        next_check = None
                    if not untrusted_running and _len(pending) > 2:
                        # S and its grandchildren write two short lines per test; reading each as it lands costs
                        # two wake-ups per test on cores the tests need. Let a few accumulate (the pipe holds 64 KiB).
                        time.sleep(_BATCH_READ_S)
                if self.wake_r in ready:  # after the result pipe: a test's line is written before its process ends
                    _drain_pipe(self.wake_r)
                    if run.current is not None and self._reap_test(run):
                        self._finish_test(run, None, *ended)
                        next_check = None
                if progress.enabled and progress.stopped(statuses):
                    killed_for = "stop"
                    break
                if run.eof and run.current is None:
                    break
                if run.clones and run.current is None and pending:
                    self._start_test(run, pending[0])
                    next_check = None
                if ready and (next_check is None or _monotonic() < next_check):
                    continue
                if run.clones and run.current is not None:
                    killed_for, next_check = self._check_test(run, cpu_budget, wall_budget, ended)
                    if killed_for is not None:
                        break
                    continue
                killed_for, next_check = self._check_solution(run, cpu_budget, wall_budget, judge_cpu=judge_cpu)
                if killed_for is not None:
                    break
        finally:
            own_cpu, children_cpu = self._end_run(run, job, tests, pending, statuses, messages, cpu, values)
        if tests is not None and not judge_cpu and run.loaded and run.stat_fd >= 0:
            self._check_accounting(run, children_cpu, cpu_limit, killed_for, statuses, messages)
        if judge_cpu and killed_for is None and run.reported and own_cpu + children_cpu > 0.0:
            self._charge_after_report(run, own_cpu + children_cpu, cpu_limit, statuses, messages)
        return killed_for

    def _watched_fds(self, run: _Run) -> list:
        """What the watch loop waits on: S's result pipe, the caller's pipe where it may stop the job, and the
        wake-up pipe (emptied first) where the server supervises the tests."""
        watched = [run.rfd, self.in_fd] if self.progress.enabled else [run.rfd]
        if self.wake_r >= 0 and run.supervised:
            watched.append(self.wake_r)
            _drain_pipe(self.wake_r)
        return watched

    def _wait_ready(self, run: _Run, watched: list, quiet: list, until: float) -> list:
        """The fds of ``watched`` that are readable, waiting at most until ``until``."""
        fds = watched
        if run.current is not None and not run.eof:
            # A test's line waits in the pipe until its process ends (one wake-up per test, not two); a
            # test that runs longer, or writes more than the pipe holds, is read from as it goes.
            grace = run.started + _LINE_GRACE_S
            if _monotonic() < grace:
                fds, until = quiet, min(until, grace)
        return select.select(fds, [], [], max(0.0, until - _monotonic()))[0]

    def _check_solution(self, run: _Run, cpu_budget: float, wall_budget: float, *, judge_cpu: bool):
        """S's own limits, checked when it could first have reached one. Returns ``(killed_for, next_check)``:
        ``"cpu"`` or ``"wall"`` and None where it went over, else None and when to look again."""
        elapsed = _monotonic() - run.last_event
        if judge_cpu or not run.loaded:  # S runs the program's code: its whole tree's time counts
            used = sum(run.tree_cpus()) - run.last_cpu
        else:
            used = run.cpu() - run.last_cpu
        if used >= cpu_budget or elapsed >= wall_budget:
            killed_for = "cpu" if used >= cpu_budget else "wall"
            run.killed_after_cpu = used
            return killed_for, None
        # Not there yet (the child was waiting, or starved of CPU): look again when it could be.
        return None, _monotonic() + min(max(cpu_budget - used, 0.01), wall_budget - elapsed)

    def _end_run(self, run: _Run, job, tests, pending, statuses, messages, cpu, values) -> tuple[float, float]:
        """End S and whatever it left running, read the rest of its lines and close its fds. Returns ``(own_cpu,
        children_cpu)``: what the kernel counted for S itself, and for the children reaped by S and by the sweep."""
        if run.ctl_fd >= 0:
            _close(run.ctl_fd)
        _kill_tree(run.pid)
        own_cpu, children_cpu = run.cpus()  # S is dead or dying, not reaped: what the kernel counted for it
        try:
            _, run.exit_status = _waitpid(run.pid, 0)
        except ChildProcessError:
            pass
        # Orphaned grandchildren hold the pipe's write end: end them before draining.
        children_cpu += sweep_children()
        self._drain(run, job, tests, pending, statuses, messages, cpu, values, final=True)
        _close(run.rfd)
        if run.stat_fd >= 0:
            _close(run.stat_fd)
        run.children.close()
        return own_cpu, children_cpu

    def _charge_after_report(self, run: _Run, used: float, cpu_limit: float, statuses, messages) -> None:
        """Fast mode: S's marks split its tree's CPU time ``used`` between tests, but none of it may go missing; what
        it used after the last test it reported belongs to that test (S has nothing else to do but exit)."""
        left = used - run.last_cpu
        if left > max(cpu_limit, 0.05) + 2.0 / _CLK_TCK:
            idx = run.reported[-1]
            statuses[idx], messages[idx] = "timeout", f"{left:.2f} s of CPU time after its report"
            self.payloads[idx] = None

    def _check_accounting(self, run: _Run, children_cpu: float, cpu_limit: float, killed_for, statuses,
                          messages) -> None:
        """Isolated mode: the CPU time S's own children used, as the kernel counted it, must be what S reported.

        S has run the program's module code, so its D lines (each grandchild's CPU time, read by S from ``wait4``)
        could understate a test's time. The kernel adds every process S reaps to S's children's CPU time, and we
        reap whatever S left behind: more than one test's limit beyond what S reported means S hid a test's time,
        and the tests it reported become timeouts instead of the verdicts their values would get. (What a test's
        escapees used counts here too: S sweeps them before its D line, after measuring the grandchild.) Where the
        tests' processes are this server's children (:func:`_clone_per_case`), S reports nothing and should have no
        children at all: a worker of its own that computed a test's values out of the server's sight shows here.
        """
        unaccounted = children_cpu - run.reported_cpu
        allowance = max(cpu_limit, 0.05) + (cpu_limit if killed_for else 0.0) + 2.0 / _CLK_TCK
        if unaccounted <= allowance:
            return
        for idx in run.reported:
            statuses[idx] = "timeout"
            messages[idx] = f"{unaccounted:.2f} s of CPU time went unreported by the solution process"
            self.payloads[idx] = None

    # -- isolated mode, tests supervised here -----------------------------------------------------------------
    def _start_test(self, run: _Run, idx: int) -> None:
        """Tell S to start test ``idx``, the next of its list (see :func:`_clone_per_case`); its process will be this
        server's child. The byte says whether a folder a test can write changed since the last test started (the
        change times are looked at here, where no copy-on-write page pays for the ``stat``)."""
        for kid in run.children.pids():  # S has no business with processes of its own between tests
            _kill_tree(kid)
        seen = _mtimes(self.trace_folders)
        token = b"g" if seen == run.folders_seen else b"c"
        run.folders_seen = seen
        run.current, run.started, run.test_status, run.test_cpu = idx, _monotonic(), None, 0.0
        run.last_event = run.started
        run.started_cpu = run.s_extra(0.0)
        try:
            _write(run.ctl_fd, token)
        except OSError:
            pass  # S is gone: the end of its result pipe says so

    def _reap_test(self, run: _Run) -> bool:
        """Whether the running test's process ended. While it lives it is this server's only child besides S (what
        it starts is its own child until it ends), so the first to end is it. Once it has, whatever it left running
        is ended too; the CPU time of all of them, from ``wait4``, is in ``run.test_cpu``."""
        kids = [k for k in self.children.pids() if k != run.pid]
        alive = False
        for kid in kids:
            try:
                pid, status, usage = _wait4(kid, os.WNOHANG)
            except ChildProcessError:
                continue
            if not pid:
                alive = True
                continue
            run.test_cpu += usage.ru_utime + usage.ru_stime
            if run.test_status is None:
                run.test_status = status
        if run.test_status is None:
            return False
        if alive:
            run.test_cpu += sweep_children(spare=run.pid)
        return True

    def _finish_test(self, run: _Run, killed, job, tests, pending, statuses, messages, cpu, values) -> None:
        """The running test's processes are gone: read what it reported, give its verdict, keep count of tests that
        hit a limit in a row (past ``max_consecutive_timeouts`` the rest is not run).

        What is left unread after that is an unfinished line or frame of this test's (its process was killed
        mid-write, or wrote a byte count it never filled): it is dropped, so it cannot swallow the next test's."""
        idx, run.current = run.current, None
        self._drain(run, job, tests, pending, statuses, messages, cpu, values)  # its line came before its exit
        del run.buf[:]
        if not pending or pending[0] != idx:
            return
        # What S's tree did meanwhile is the test's too (S ran the program's module code, so a helper it forked,
        # or S itself computing past the cost of a clone, is the test's work done out of its process).
        used = run.test_cpu + max(0.0, run.s_extra(run.started_cpu))
        self._test_ended(run, idx, run.test_status or 0, used, killed, job, pending, statuses, messages, cpu, values)
        run.streak = run.streak + 1 if killed or used > job.timeout_s else 0
        budget = job.max_consecutive_timeouts
        if budget and run.streak >= budget:
            while pending:
                i = pending.popleft()
                statuses[i], messages[i] = "unexecuted", "skipped after repeated timeouts"

    def _check_test(self, run: _Run, cpu_budget: float, wall_budget: float, ended: tuple):
        """The running test's limits, checked when it could first have reached one. Returns ``(killed_for,
        next_check)``: a reason to end S (its own CPU time since the last test went over; it never started the
        test), or None and when to look again (None once a test ended here, killed at its limit)."""
        now = _monotonic()
        elapsed = now - run.started
        own = run.cpu() - run.last_cpu
        if own >= cpu_budget:
            run.killed_after_cpu = own
            return "cpu", None
        kids = [k for k in self.children.pids() if k != run.pid]
        if not kids and run.test_status is None:
            return ("wall", None) if elapsed >= wall_budget else (None, now + max(wall_budget - elapsed, 0.01))
        used = sum(_tree_cpu(k) for k in kids) + max(0.0, run.s_extra(run.started_cpu))
        if used < cpu_budget and elapsed < wall_budget:
            return None, now + min(max(cpu_budget - used, 0.01), wall_budget - elapsed)
        for kid in kids:
            _kill_tree(kid)
        self._reap_test(run)
        run.test_cpu += sweep_children(spare=run.pid)
        run.test_cpu = max(run.test_cpu, used)
        self._finish_test(run, "cpu" if used >= cpu_budget else "wall", *ended)
        return None, None


def _drain_pipe(fd: int) -> None:
    """Empty a non-blocking pipe (a short read says it is empty)."""
    try:
        while _len(_read(fd, 4096)) == 4096:
            pass
    except (BlockingIOError, InterruptedError):
        pass
