"""The server: reads jobs from its caller, runs each in a fresh solution process S, answers with what S reported.

:class:`Server` holds the framing of the caller's pipes, the main loop, one job's set-up and clean-up, and the
outcome of each solution process (``_supervise``); it watches S while it runs with the methods of
``watch._Watch`` and reads S's lines with those of ``reading._Results``.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import struct
import sys

from . import prepared
from .job import (
    CHECK,
    COMPILE,
    PING,
    SHUTDOWN,
    STDIO,
    STOP,
    AssertJob,
    Job,
    StdioJob,
    failure_reply,
    hello,
    parse_job,
    request_word,
)
from .libc import _clone_parent_works
from .limits import Limits
from .prepared import prepare_test, test_wire
from .pristine import _close, _exit, _fork, _len, _read_exact, pin_builtins
from .processes import _KEEP, _ChildrenFile, _describe_exit, _kill_tree, sweep_children
from .progress import _Progress
from .reading import _Results
from .run import _Run
from .solution import _solution_child, _stdio_child
from .tools import job_binary, run_check, run_compile
from .traces import _TRACE_DIRS, _mtimes, _rmtree, _writable_by, remove_traces
from .watch import _Watch
from .zygote import ZygoteLost, spawn_spec

pin_builtins(globals())

_STOPPED = "not run: an earlier test did not pass"


class Server(_Watch, _Results):
    """One fork server: its caller's pipes, the job running and the solution process it is on."""

    def __init__(self, in_fd: int, out_fd: int) -> None:
        self.in_fd, self.out_fd = in_fd, out_fd
        self.pid = os.getpid()
        self.workroot = os.environ.get("ECD_WORKROOT") or "/tmp"
        # One work folder per server, emptied after every job (children find it in HOME/TMPDIR and as cwd).
        self.workdir = os.path.join(self.workroot, f"ecd-work-{self.pid}")
        self.wake_r = -1
        self.children = _ChildrenFile(self.pid)
        self.clone_parent = False
        self.zygote = None  # zygote.Zygote, where S can be cloned from a process that never held a test
        self.blank = None  # (pid, result pipe, control pipe) of an S the zygote started for the next job

    def watch_children(self) -> None:
        """Make a child's exit wake the watch loop: SIGCHLD writes a byte on a pipe it selects on (the tests' processes
        are this server's children, see :func:`_clone_per_case`). Writes to a pipe whose reader died fail instead of
        killing the server (children get both signals back at their defaults, see :meth:`_fork_solution`)."""
        self.wake_r, wake_w = os.pipe()
        for fd in (self.wake_r, wake_w):
            os.set_blocking(fd, False)
            os.set_inheritable(fd, False)
        signal.signal(signal.SIGCHLD, _on_child_exit)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        self.clone_parent = _clone_parent_works()

    # -- framing ---------------------------------------------------------------------------------------------
    def recv(self):
        header = self._read_exact(4)
        if header is None:
            return None
        (size,) = struct.unpack(">I", header)
        body = self._read_exact(size)
        if body is None:
            return None
        return json.loads(body)

    def _read_exact(self, n: int):
        data = _read_exact(self.in_fd, n)
        return data if _len(data) == n else None

    def send(self, obj) -> None:
        data = json.dumps(obj).encode()
        view = memoryview(struct.pack(">I", _len(data)) + data)
        while view:
            view = view[os.write(self.out_fd, view):]

    # -- main loop -------------------------------------------------------------------------------------------
    def serve(self) -> None:
        """Say hello, then answer the caller's requests (``job.REQUESTS``) until it says shutdown or its pipe ends.
        A job's frame is read into its record here, once; one that is no job, and a job this server fails on, is
        answered with that job's infrastructure error instead of ending the server."""
        self.prespawn()
        self.send(hello(self.pid, os.geteuid() == 0, sys.version.split()[0]))
        while True:
            msg = self.recv()
            word = request_word(msg)
            if word == SHUTDOWN:
                sweep_children()
                return
            if word == PING:
                self.send({"pong": True})
                continue
            if word == STOP:  # came after its job ended: nothing left to stop
                continue
            try:
                result = self.run_job(parse_job(msg))
            except Exception as err:  # a malformed job, or a bug of ours: say so instead of dying silently
                result = failure_reply(msg, err)
            self.send(result)
            self.prespawn()

    def _workdir(self, uid) -> str:
        path = self.workdir
        if not _rmtree(path):  # something the remover could not take away: set it aside, start a fresh folder
            self.spare = getattr(self, "spare", 0) + 1
            try:
                os.rename(path, f"{path}.old-{self.spare}")
            except OSError:
                self.workdir = path = f"{self.workdir}-{self.spare}"
                _rmtree(path)
        os.mkdir(path, 0o700)
        if uid is not None and os.geteuid() == 0:
            os.chown(path, uid, uid)
        return path

    def run_job(self, job: Job) -> dict:
        """Run ``job`` in a fresh work folder under its limits; its reply (``job.REPLIES["result"]``)."""
        limits = Limits.of(job)
        self.uid_seen: list = []  # the real uid of each solution process, read by this server from /proc
        workdir = self._workdir(limits.uid)
        self.trace_folders = tuple(f for f in (*_TRACE_DIRS, workdir) if _writable_by(f, limits.uid))
        scratch = _mtimes(_TRACE_DIRS)
        try:
            if job.kind == STDIO:
                result = self._run_stdio(job, limits, workdir)
            elif job.kind == COMPILE:  # a toolchain server's job (see tools.py)
                result = run_compile(job, limits, workdir)
            elif job.kind == CHECK:  # a checker server's job: it never runs programs
                result = run_check(job, limits, workdir)
            else:
                result = self._run_asserts(job, limits, workdir)
        finally:
            sweep_children()
            moved = [f for f, a, b in zip(_TRACE_DIRS, scratch, _mtimes(_TRACE_DIRS)) if a != b]
            _rmtree(workdir)
            if limits.uid is not None and os.geteuid() == 0:  # scratch folders only where something moved
                remove_traces(limits.uid, moved)
        result["id"] = job.id
        # Checked, not assumed: every solution process that loaded ran under the job's uid, not root.
        result["uid_dropped"] = bool(self.uid_seen) and limits.uid is not None and all(
            u == limits.uid for u in self.uid_seen)
        return result

    # -- assert jobs -----------------------------------------------------------------------------------------
    def _run_asserts(self, job: AssertJob, limits: Limits, workdir: str) -> dict:
        sources = job.tests
        n = _len(sources)
        tests = [prepared._TESTS.get_or(src, prepare_test) for src in sources]
        self.payloads: list = [None] * n
        self.progress = _Progress(job, self.payloads, self.send, self.recv)
        statuses: list = [None] * n
        messages = [""] * n
        cpu = [0.0] * n
        for i, t in enumerate(tests):
            if t.kind == "invalid":
                statuses[i], messages[i] = "error", t.message
                if self.progress.enabled:  # nothing after it needs to run
                    _mark(statuses, messages, range(i + 1, n), "unexecuted", _STOPPED)
                    break
        timeouts_in_a_row = 0
        budget = job.max_consecutive_timeouts
        while todo := self._left_to_run(statuses, messages):
            if budget and timeouts_in_a_row >= budget:
                _mark(statuses, messages, todo, "unexecuted", "skipped after repeated timeouts")
                break

            def start(supervised, todo=todo):
                if self.zygote is not None:
                    return self._spawn(job, limits, todo, tests, workdir, supervised)
                return self._fork_solution(
                    lambda nonce, wfd, ctl: _solution_child(job, todo, tests, nonce, wfd, workdir, limits, ctl),
                    ctl=supervised)

            outcome, progressed = self._supervise(job, start, todo, tests, statuses, messages, cpu)
            if outcome == "done":
                break
            # Tests run in order, so the run of timeouts is broken by any test that finished in between.
            timeouts_in_a_row = (0 if progressed else timeouts_in_a_row) + 1 if outcome == "timeout" else 0
        return {"statuses": statuses, "messages": messages, "cpu": cpu, "values": self.payloads}

    def _left_to_run(self, statuses: list, messages: list) -> list:
        """The tests of this job not yet ended, in order; none once the caller stopped the job (those are marked
        ``unexecuted``), which ends the job's loop."""
        todo = [i for i, status in enumerate(statuses) if status is None]
        if todo and self.progress.stopped(statuses):
            _mark(statuses, messages, todo, "unexecuted", _STOPPED)
            return []
        return todo

    def prespawn(self) -> None:
        """Have the zygote start the next assert job's S now, while this server waits for the job: S then waits on
        its control pipe for the job (see :meth:`_spawn`), and starting it costs the job nothing."""
        if self.zygote is None or self.blank is not None:
            return
        rfd, wfd = os.pipe()
        ctl_r, ctl_w = os.pipe()
        try:
            pid = self.zygote.spawn(wfd, ctl_r)
        except ZygoteLost:
            for fd in (rfd, ctl_w):
                _close(fd)
            return
        finally:
            _close(wfd)
            _close(ctl_r)
        os.set_blocking(rfd, False)
        os.set_blocking(ctl_w, False)  # written with a deadline (_Run.send_ctl): S may not be reading
        _KEEP.add(pid)  # not a job's process yet: the sweeps between jobs leave it alone
        self.blank = (pid, rfd, ctl_w)

    def _spawn(self, job: AssertJob, limits: Limits, todo: list, tests: list, workdir: str, supervised: bool) -> _Run:
        """Start S for ``todo`` from the zygote: S never held a test. Its job (without the tests) is the first frame
        on its control pipe; its tests follow, all at once, after its load line; in isolated mode (``supervised``)
        the same pipe then carries the word to start each test.

        A zygote that is gone (the program of an earlier job killed it, where S runs under the server's uid) ends
        this server without an answer: its caller starts a fresh one, with a fresh zygote, and retries the job."""
        nonce = os.urandom(12).hex()
        spec = json.dumps(spawn_spec(job, limits, todo, nonce, workdir)).encode()
        for _attempt in range(2):  # a waiting S that is gone (killed where it shares a uid with programs): again
            self.prespawn()
            if self.blank is None:
                sweep_children()
                _exit(70)
            (pid, rfd, ctl_w), self.blank = self.blank, None
            _KEEP.discard(pid)
            run = _Run(pid, rfd, nonce)
            run.ctl_fd, run.supervised = ctl_w, supervised
            if run.send_ctl(struct.pack(">I", _len(spec)) + spec, job.wall_timeout_s):
                break
            _kill_tree(pid)
            for fd in (rfd, ctl_w):
                _close(fd)
            run.close_fds()
        # Every test S is to run, sent once it has loaded the program (before the word to start the first).
        wires = [test_wire(tests[i]) for i in todo]
        body = b"".join(struct.pack(">I", _len(wire)) + wire for wire in wires)
        run.after_load = struct.pack(">I", _len(body)) + body
        return run

    def _fork_solution(self, body, *, ctl: bool = False) -> _Run:
        """Fork S running ``body(nonce, wfd, ctl_fd)``; with ``ctl``, a pipe on which this server names the tests
        S is to start (``ctl_fd`` is -1 without)."""
        rfd, wfd = os.pipe()
        ctl_r, ctl_w = os.pipe() if ctl else (-1, -1)
        nonce = os.urandom(12).hex()
        pid = _fork()
        if pid == 0:
            _close(rfd)
            try:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                signal.signal(signal.SIGPIPE, signal.SIG_DFL)
                if ctl_w >= 0:
                    _close(ctl_w)
                body(nonce, wfd, ctl_r)
            finally:
                _exit(1)
        _close(wfd)
        os.set_blocking(rfd, False)
        run = _Run(pid, rfd, nonce)
        if ctl_r >= 0:
            _close(ctl_r)
            run.ctl_fd, run.supervised = ctl_w, True
        return run

    def _supervise(self, job, start, todo, tests, statuses, messages, cpu) -> tuple[str, bool]:
        """Run one child (``start(supervised)`` makes it) over ``todo``; fill what it reports; blame the test it
        ended on.

        Used for solution children (assert jobs) and stdin runners alike. Returns ``(outcome, progressed)``:
        ``outcome`` is ``"done"`` (nothing left to run), or ``"timeout"``/``"crash"`` when a test ended the child
        early (the caller starts a fresh one for the rest); ``progressed`` says whether a test finished in this child
        before the one blamed, which breaks a run of consecutive timeouts.
        """
        stdio = job.kind == STDIO
        fast = job.fast  # only then does the child run untrusted code per test
        # The server decides whether it supervises each test (isolated mode, where CLONE_PARENT works): nothing
        # S says changes it.
        run = start(not stdio and not fast and self.clone_parent)
        max_value = job.max_value_bytes
        run.max_payload = 8 * max_value + 65536
        # Everything a child may legitimately write: a short line or two per test, and values (base64) on top.
        run.max_bytes = 4 * run.max_payload + (_len(todo) + 4) * 65536
        pending = collections.deque(todo)
        killed_for = self._watch(run, job, pending, tests, statuses, messages, cpu, judge_cpu=fast)
        if not pending:
            return "done", True
        current = pending.popleft()
        progressed = current != todo[0]
        if not run.loaded:
            if stdio:
                status, message = "crash", "the runner ended before starting"
            elif killed_for is not None:
                what = "CPU time" if killed_for == "cpu" else "wall-clock"
                status, message = "timeout", f"loading the program hit the {what} limit"
            else:
                status = "crash"
                message = "the program ended the process while loading (" + _describe_exit(run.exit_status) + ")"
            _mark(statuses, messages, [current, *pending], status, message)
            return "done", progressed
        if killed_for == "flood":
            _mark(statuses, messages, [current, *pending], "crash", "the program flooded the result pipe")
            return "done", progressed
        if killed_for == "malformed" or run.malformed:
            _mark(statuses, messages, [current, *pending], "crash", "the solution process wrote a malformed report")
            return "done", progressed
        if killed_for == "stop":
            _mark(statuses, messages, [current, *pending], "unexecuted", _STOPPED)
            return "done", progressed
        if killed_for == "cpu" or (killed_for is not None and fast):
            statuses[current] = "timeout"
            messages[current] = "CPU time limit" if killed_for == "cpu" else "wall-clock backstop (blocked or sleeping)"
            cpu[current] = run.killed_after_cpu
            return "timeout", progressed
        statuses[current] = "crash"
        if stdio:
            messages[current] = "the runner stopped answering" if killed_for else "the runner died"
        else:
            messages[current] = ("the solution process stopped answering" if killed_for else
                                 "the solution process died during this test (" + _describe_exit(run.exit_status) + ")")
        return "crash", progressed

    # -- stdio jobs ------------------------------------------------------------------------------------------
    def _run_stdio(self, job: StdioJob, limits: Limits, workdir: str) -> dict:
        """Run each stdin case; return what each printed. The expected outputs never come here: the caller compares
        (every child is a fork of this process, so what it holds a program could read)."""
        inputs = job.inputs
        n = _len(inputs)
        self.outputs: list = [None] * n
        self.progress = _Progress(job, self.outputs, self.send, self.recv)
        for i, text in enumerate(inputs):
            path = os.path.join(workdir, f"in{i}")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.chmod(path, 0o644)
        statuses: list = [None] * n
        messages = [""] * n
        cpu = [0.0] * n
        exe_fd = job_binary(job)  # a compiled program: sealed in memory before any program process exists
        try:
            while todo := self._left_to_run(statuses, messages):

                def start(supervised, todo=todo):
                    return self._fork_solution(
                        lambda nonce, wfd, ctl: _stdio_child(job, todo, nonce, wfd, workdir, limits, exe_fd))

                self._supervise(job, start, todo, None, statuses, messages, cpu)
        finally:
            if exe_fd >= 0:
                _close(exe_fd)
        outputs = [self.outputs[i] or "" if statuses[i] == "done" else None for i in range(n)]
        return {"statuses": statuses, "messages": messages, "cpu": cpu, "outputs": outputs}


def _mark(statuses: list, messages: list, indices, status: str, message: str) -> None:
    """Give every test in ``indices`` the same ending."""
    for i in indices:
        statuses[i], messages[i] = status, message


def _on_child_exit(signum, frame) -> None:
    """SIGCHLD's handler in the server: nothing to do here, the byte on the wake pipe is the message."""
