"""The execution service: one process per machine that owns the fork servers and the judge, for every caller.

Planning tests, decoding program-chosen values and judging are hostile-input work. They run here, in judge
processes (:mod:`._judge_process`, one per core, each with one fork server per isolation kind), never in a caller
(a GRPO trainer, a recipe's driver). Callers (:class:`~evolvecoder_datasets.execution.Sandbox`) reach the service
through a Unix socket in a per-user runtime folder; the first caller starts it (with ``subprocess``, never by
forking itself) and every caller of the machine shares it, so a machine has one fork server per core whatever
the number of callers (``Dataset.map(num_proc=N)`` workers included).

This front process never parses a test or a value: it forwards each job's bytes to an idle judge process and the
report's bytes back. A judge process has an address-space limit and a scrubbed environment; the front gives each
job a CPU budget in it and a wall deadline, and where a job overruns either, or the judge process dies on it (a
segfault of the interpreter, say), that job's tests are ``crash`` and a fresh judge process takes the next job.

Run: ``python -m evolvecoder_datasets.execution.service`` (callers start it themselves when none runs; it ends
after ``--idle-s`` seconds without a caller).

Example:
    >>> from evolvecoder_datasets.execution import Sandbox
    >>> with Sandbox(workers=1) as sb:  # starts the service if none runs, or joins the running one
    ...     sb.run("x = 1", ["assert x == 1"]).statuses
    ['pass']
"""

from __future__ import annotations

import argparse
import logging
import marshal
import os
import queue
import select
import signal
import socket
import subprocess
import sys
import threading
import time

from ._protocol import (FRAME_STALL_S, MAX_REQUEST_FRAME, SETTINGS, checked_run, checked_settings, crash_report,
                        plain_loads, read_frame, recv_body, recv_header, send, write_frame)  # fmt: skip
from ._trust import peer_credentials, process_state as _state
from .isolation import PYTHON_ENV_MARKER, SIDE_SERVER_MARKER
from ._order import _FailureOrder

logger = logging.getLogger(__name__)

# CPU seconds a judge process may spend on one job: planning, decoding and judging a job of ordinary tests takes
# milliseconds; a test whose judge's part is a CPU bomb is stopped here and its job is a crash.
JUDGE_CPU_S = 2.0
JUDGE_CPU_PER_TEST_S = 0.05
# Address space of a judge process (the soft limit; its fork servers' children set their own).
JUDGE_ADDRESS_SPACE = 2 << 30
IDLE_S = 60.0
JUDGE_STOPPED_S = 5.0  # a judge found stopped this long under a job was stopped from outside (SIGSTOP)
# Request bytes read (or being read) and not yet answered, over all callers: four of the largest frames (256 MiB).
# Reserved as they arrive, a chunk ahead (never as a header declares: four headers of 256 MiB held every caller off),
# so a caller past this waits (its bytes in its socket); a sender silent, or waiting for room, for ``FRAME_STALL_S``
# in the middle of a frame is dropped and gives its reservation back.
MAX_IN_FLIGHT = 4 * MAX_REQUEST_FRAME

_WALL, _LOAD, _ISOLATION = (SETTINGS.index(k) for k in ("wall_timeout_s", "load_timeout_s", "isolation"))
_TICK = os.sysconf("SC_CLK_TCK")
#: Signals a judge process can die of through what a job makes it do (a fault on hostile bytes, an exhausted
#: address space, an abort): that job's crash. Any other signal was sent from outside.
_FAULT_SIGNALS = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL, signal.SIGABRT, signal.SIGSYS,
                            signal.SIGXCPU, signal.SIGXFSZ, signal.SIGTRAP})


def _listed(pid: int, program: set[bytes] | None) -> bool:
    """Whether the fork server ``pid`` is one of the default environment's (a server whose programs import another
    one ends its command with ``PYTHON_ENV_MARKER``, :func:`~.isolation.server_command`) and, with ``program``, one
    whose command is one of those names. One read of its command line."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            args = fh.read().rstrip(b"\0").split(b"\0")
    except OSError:
        args = [b""]
    if args[-1].startswith((PYTHON_ENV_MARKER.encode(), SIDE_SERVER_MARKER.encode())):
        return False  # another environment's programs, or a toolchain / checker server (no programs at all)
    return program is None or os.path.basename(args[0]) in program


def _cpu_s(pid: int) -> tuple[float, bytes]:
    """User + system CPU seconds of ``pid`` from ``/proc`` (its threads, not its children), and its state letter."""
    with open(f"/proc/{pid}/stat", "rb") as fh:
        fields = fh.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK, fields[0]


class _JudgeSlot:
    """One judge process, restarted when it dies or is killed for overrunning a job."""

    def __init__(self, address_space: int) -> None:
        self.address_space = address_space
        self.proc: subprocess.Popen | None = None
        self.private: queue.Queue = queue.Queue()
        self.restarts = 0
        self.uids: list[int] = []
        self.current: _Request | None = None  # the batch whose job this judge is on
        self.failure: tuple[str, int | None] = ("", None)  # why the last call returned None: see :meth:`call`

    def server_pids(self, program: set[bytes] | None = None) -> list[int]:
        """The judge process's live children: its fork servers (read from ``/proc``, never waiting for a job);
        with ``program``, those whose command is one of those names (one isolation kind's). Servers of another
        Python environment (``python_env``) are left out: they are no default sandbox's."""
        proc = self.proc
        if proc is None:
            return []
        pids = []
        try:
            for task in os.listdir(f"/proc/{proc.pid}/task"):
                with open(f"/proc/{proc.pid}/task/{task}/children") as fh:
                    pids += [int(p) for p in fh.read().split()]
        except OSError:
            return []
        return [p for p in pids if _state(p) not in (b"", b"Z") and _listed(p, program)]

    def interrupt(self) -> None:
        """Kill the judge process from another thread (its own thread sees the end of its reply and cleans up)."""
        proc = self.proc
        if proc is not None:
            try:
                os.kill(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def _start(self) -> subprocess.Popen:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "evolvecoder_datasets.execution._judge_process", str(self.address_space)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd="/", close_fds=True,
        )  # fmt: skip
        return self.proc

    def stop(self, grace_s: float = 5.0) -> None:
        """End the judge process gracefully (the end of its stdin: it closes its fork servers and exits), killed
        after ``grace_s``."""
        proc = self.proc
        if proc is not None:
            try:
                proc.stdin.close()  # type: ignore[union-attr]
                proc.wait(timeout=grace_s)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()

    def kill(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            proc.kill()
        except ProcessLookupError:
            pass
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()  # type: ignore[union-attr]
            except OSError:
                pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover
            logger.warning("judge process %s did not exit after SIGKILL", proc.pid)

    def call(self, frame: bytes, wall_s: float, cpu_s: float | None) -> bytes | None:
        """Send one frame and wait for the answer; None (the process killed) where it died, overran ``wall_s`` or
        ``cpu_s`` CPU seconds, or was stopped: ``failure`` says which (``unsent``: gone before the frame; ``died``
        with its returncode; ``cpu``; ``wall``; ``stopped``: by a signal, for ``JUDGE_STOPPED_S``)."""
        proc = self.proc if self.proc is not None and self.proc.poll() is None else None
        if proc is None:
            if self.proc is not None:
                self.restarts += 1
                self.kill()
            proc = self._start()
        self.failure = ("", None)
        try:
            write_frame(proc.stdin.fileno(), frame)  # type: ignore[union-attr]
        except OSError:
            self.failure = ("unsent", None)
            self.kill()
            return None
        start: list[float] = []
        over: list[bool] = []
        stops: list[float] = []  # since when it has been found stopped (SIGSTOP: nothing in a job sends it one)

        def within_budget() -> bool:  # first read after 50 ms: a quick job costs no /proc read
            try:
                used, state = _cpu_s(proc.pid)
            except (OSError, IndexError, ValueError):
                return False
            if not start:
                start.append(used)
            if used - start[0] > cpu_s:  # type: ignore[operator]
                over.append(True)
            stops[:] = (stops or [time.monotonic()]) if state in (b"T", b"t") else []
            return not over and not (stops and time.monotonic() - stops[0] >= JUDGE_STOPPED_S)

        deadline = time.monotonic() + wall_s
        data = read_frame(proc.stdout.fileno(), deadline,  # type: ignore[union-attr]
                          within_budget if cpu_s is not None else None)  # fmt: skip
        if data is None:
            if over:
                self.failure = ("cpu", None)
            elif stops or time.monotonic() >= deadline:  # stopped (SIGSTOP): by someone else, as a kill would be
                self.failure = ("stopped", None) if stops or _state(proc.pid) in (b"T", b"t") else ("wall", None)
            else:  # the end of its reply: it exited, or was killed
                try:
                    self.failure = ("died", proc.wait(timeout=5))
                except subprocess.TimeoutExpired:
                    self.failure = ("died", None)
            self.kill()
        return data

    def killed_from_outside(self) -> bool:
        """Whether the last failed call's judge process was gone before its job, or died of a signal nothing in
        the job can send it: no program runs in the judge or as its uid, so a kill, a termination or a hang-up
        came from outside (an operator, the OOM killer, a supervisor), while a fault the job's bytes can cause
        (a segfault, an abort, an exhausted address space) and an overrun of its budgets stay the job's. A judge
        found stopped (SIGSTOP, which nothing in a job sends it either) was stopped from outside."""
        kind, code = self.failure
        return kind in ("unsent", "stopped") or kind == "died" and code is not None and code < 0 and \
            -code not in _FAULT_SIGNALS  # fmt: skip


def _tool_wall_s(shape: tuple[int, str, bool]) -> float:
    """Wall seconds a job may add for its compiles and its checker (run by the judge's toolchain and checker
    servers, see ``_tools``), beyond what its tests take: none for a plain Python job. ``shape``: the job's
    checked ``(size, language, has a checker)``."""
    from .checkers import CHECKER_WALL_S
    from .languages import COMPILE_WALL_S, PRECOMPILE_WALL_S

    size, compiled, checker = shape
    build = COMPILE_WALL_S + PRECOMPILE_WALL_S  # a toolchain server's first C++ compile builds its header first
    extra = build if compiled != "python" else 0.0
    if checker:
        extra += build + size * (CHECKER_WALL_S + 1.0)
    return extra


class _Budget:
    """Bytes the front holds for requests read and not yet answered; :meth:`take` waits until they fit."""

    def __init__(self, limit: int) -> None:
        self.limit, self.held = limit, 0
        self._cond = threading.Condition()

    def take(self, n: int, timeout: float | None = None) -> None:
        """Hold ``n`` more bytes once they fit; ``TimeoutError`` where they do not within ``timeout`` seconds (the
        reader is dropped, as a sender silent that long is, and what it held is given back)."""
        with self._cond:
            if not self._cond.wait_for(lambda: self.held + n <= self.limit, timeout):
                raise TimeoutError(f"no room for {n} more request bytes within {timeout} s")
            self.held += n

    def give(self, n: int) -> None:
        with self._cond:
            self.held -= n
            self._cond.notify_all()


class _Keyed:
    """A list of tests known here only by the key its caller computed (length, hash): what :class:`_FailureOrder`
    needs of it, without the tests."""

    __slots__ = ("key",)

    def __init__(self, key: tuple) -> None:
        self.key = key

    def __len__(self) -> int:
        return self.key[0]


class _KeyedFailures(_FailureOrder):
    """:class:`_FailureOrder` over caller-computed keys: the front orders a stopping job's tests when it hands
    the job to a judge (so a batch's later jobs learn from its earlier ones) and counts from the report."""

    @staticmethod
    def _key(cases) -> tuple:  # type: ignore[override]
        return tuple(cases.key)


class _Request:
    """One caller's batch: its jobs, at most ``workers`` of them with the judges at once."""

    def __init__(self, settings: tuple, workers: int, jobs: list, shapes: list, tasks: queue.Queue,
                 keys: list | None = None) -> None:  # fmt: skip
        self.settings, self.jobs, self.shapes, self.tasks = settings, jobs, shapes, tasks
        self.sizes = [shape[0] for shape in shapes]
        self.keys = keys or [None] * len(jobs)
        self.results: list = [None] * len(jobs)
        self.left = len(jobs)
        self.next = 0
        self.cancelled = False
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.wall_per_test = settings[_WALL] * 1.5 + 2.0
        self.wall_base = 3 * settings[_LOAD] + 40.0
        if not jobs:
            self.done.set()
        self._feed(max(1, workers))

    def _feed(self, k: int) -> None:
        with self.lock:
            start, self.next = self.next, min(len(self.jobs), self.next + k)
        for i in range(start, self.next):
            self.tasks.put((self, i))

    def finish(self, i: int, data: bytes) -> None:
        self.results[i] = data
        with self.lock:
            self.left -= 1
            last = self.left == 0
        if last:
            self.done.set()
        else:
            self._feed(1)


class Service:
    """The front: a Unix socket, one thread per caller connection and one per judge process."""

    def __init__(self, folder: str, judges: int | None = None, *, address_space: int = JUDGE_ADDRESS_SPACE,
                 idle_s: float = IDLE_S) -> None:  # fmt: skip
        self.folder = folder
        self.slots = [_JudgeSlot(address_space) for _ in range(judges or len(os.sched_getaffinity(0)))]
        self.tasks: queue.Queue = queue.Queue()
        self.failures = _KeyedFailures()
        self.idle_s = idle_s
        self.connections = 0
        self.last_seen = time.monotonic()
        self.released = False  # a caller asked it to end once no caller is connected
        self.budget = _Budget(MAX_IN_FLIGHT)
        self.refused = 0  # connections of another uid, closed unread
        self._lock = threading.Lock()

    # -- judges ------------------------------------------------------------------------------------------------
    def _judge_loop(self, slot: _JudgeSlot) -> None:
        while True:
            try:
                task = slot.private.get_nowait()
            except queue.Empty:
                try:
                    task = self.tasks.get(timeout=0.05)
                except queue.Empty:
                    continue
            if isinstance(task, tuple) and isinstance(task[0], _Request):
                request, i = task
                request.finish(i, self._judged_once_more(slot, request, i))
            else:  # (isolation, event): start the judge and its fork server for isolation, between jobs
                isolation, event = task
                data = slot.call(marshal.dumps(("warm", isolation)), 60.0, None)
                if data is not None:
                    slot.uids = list(marshal.loads(data)[1])
                event.set()

    def _judged_once_more(self, slot: _JudgeSlot, request: _Request, i: int) -> bytes:
        """Job ``i``'s report. A judge process killed from outside under it was not the program's doing: the job
        runs once more on a fresh one, and a second such death is an infrastructure failure (the report's
        ``infra_error``: no verdict), never the program's ``crash``. A judge that died of what the job can
        cause, or overran its budgets, gives the program's ``crash`` as before."""
        isolation = request.settings[_ISOLATION]
        for attempt in (1, 2):
            slot.failure = ("", None)
            try:
                data = self._judged(slot, request, i)
            except Exception:  # a bug here costs this job, never the judge's thread (every caller's)
                logger.exception("the front failed on a job")
                slot.current = None
                return crash_report(request.sizes[i], isolation, "the service failed on this job",
                                    infra_error="the execution service failed on this job (logged)")
            if data is not None:
                return data
            if request.cancelled or not slot.killed_from_outside():
                return crash_report(request.sizes[i], isolation,
                                    "judge failed on this job (it overran its limits or died of it)")  # fmt: skip
            logger.warning("judge process killed from outside on a job (%s, attempt %d)", slot.failure, attempt)
        code = slot.failure[1]
        how = (f"signal {-code}" if code is not None and code < 0 else
               "stopped" if slot.failure[0] == "stopped" else "gone before the job")  # fmt: skip
        return crash_report(request.sizes[i], isolation, "judge process killed from outside, twice",
                            infra_error=f"the judge process was killed from outside ({how}) on two tries")

    def _judged(self, slot: _JudgeSlot, request: _Request, i: int) -> bytes | None:
        """Job ``i`` of ``request`` on ``slot``'s judge process: its report's bytes, None where it failed."""
        if request.cancelled:
            return None
        size, key = request.sizes[i], request.keys[i]
        order = self.failures.order(_Keyed(key)) if key is not None else None
        frame = marshal.dumps(("run", request.settings, request.jobs[i], order))
        slot.current = request
        wall = request.wall_base + size * request.wall_per_test + _tool_wall_s(request.shapes[i])
        data = slot.call(frame, wall, JUDGE_CPU_S + JUDGE_CPU_PER_TEST_S * size)
        slot.current = None
        if data is not None and key is not None:
            report = marshal.loads(data)  # (statuses, ..., infra_error at 5, ...)
            if report[5] is None and len(report[0]) == size:
                self.failures.record(_Keyed(key), report[0])
        return data

    def _warm(self, isolation: str) -> None:
        """Every judge process started, with a fork server for ``isolation`` (each between its jobs)."""
        events = []
        for slot in self.slots:
            event = threading.Event()
            slot.private.put((isolation, event))
            events.append((slot, event))
        for slot, event in events:
            while not event.wait(0.05) and slot.current is None:  # a busy judge warms after its job
                pass

    def _info(self, isolation: str | None) -> tuple[list, list]:
        from .isolation import server_command

        program = None
        if isolation:  # the server's first program, or the one a wrapper (setpriv ... --) execs
            command = server_command(isolation)
            names = {os.path.basename(command[0])}
            if "--" in command[:8]:
                names.add(os.path.basename(command[command.index("--") + 1]))
            program = {os.fsencode(n) for n in names}
        pids: list = []
        uids: list = []
        for slot in self.slots:
            pids += slot.server_pids(program)
            uids += slot.uids
        return pids, uids

    def _wait(self, batch: _Request, conn: socket.socket) -> bool:
        """Wait for ``batch``; False (and its jobs stopped) where the caller hung up meanwhile: a dead caller's
        programs do not run on."""
        while not batch.done.wait(0.25):
            try:
                readable = select.select([conn], [], [], 0)[0]
                gone = bool(readable) and conn.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                gone = True
            if gone:
                batch.cancelled = True
                for slot in self.slots:
                    if slot.current is batch:
                        slot.interrupt()
                return False
        return True

    # -- callers -----------------------------------------------------------------------------------------------
    def _answer(self, request, conn: socket.socket):
        op = request[0]
        if op == "run":
            settings, workers, jobs, shapes, keys = checked_run(request)
            batch = _Request(settings, workers, jobs, shapes, self.tasks, keys)
            return ("ok", batch.results) if self._wait(batch, conn) else None
        if op == "start":
            self._warm(checked_settings(request[1])[_ISOLATION])
            return ("ok", None)
        if op == "info":
            if request[1] not in (None, "bwrap", "unshare", "none"):
                raise ValueError(f"unknown isolation {str(request[1])[:40]!r}")
            return ("ok", self._info(request[1]))
        if op == "ping":
            return ("ok", os.getpid())
        if op == "release":  # end as soon as no caller is connected (a caller that connects later cancels it)
            with self._lock:
                self.released = True
                others = self.connections - 1  # the asking caller's own connection closes after the reply
            return ("ok", os.getpid(), others)
        return ("error", "ConfigError", f"unknown request {op!r}")

    def _ours(self, conn: socket.socket) -> bool:
        """Whether the peer of ``conn`` runs as this service's effective uid (``SO_PEERCRED``); another's is
        counted and logged, and its connection is the caller's to close unread."""
        uid = peer_credentials(conn)[1]
        if uid == os.geteuid():
            return True
        with self._lock:
            self.refused += 1
        logger.warning("refused a connection from uid %d (this service answers uid %d only)", uid, os.geteuid())
        return False

    def _connection(self, conn: socket.socket) -> None:
        with self._lock:
            self.connections += 1
        try:
            if not self._ours(conn):  # another user's process: closed without reading a byte
                return
            while self._exchange(conn):
                pass
        except OSError:
            pass
        finally:
            conn.close()
            with self._lock:
                self.connections -= 1
                self.last_seen = time.monotonic()

    def _exchange(self, conn: socket.socket) -> bool:
        """Read one request, answer it; False where the connection is done. A frame over ``MAX_REQUEST_FRAME``
        is answered with an error and the connection closed before its body is read; a body is read against its
        declared size, in chunks, each reserved in the front's in-flight budget before it is read."""
        size = recv_header(conn)
        if size is None:
            return False
        if size > MAX_REQUEST_FRAME:
            message = f"a request of {size} bytes is over the execution service's cap of {MAX_REQUEST_FRAME} bytes"
            send(conn, ("error", "ConfigError", message))
            return False
        taken = [0]

        def reserve(n: int) -> None:  # as the bytes arrive: a header alone reserves nothing
            self.budget.take(n, FRAME_STALL_S)
            taken[0] += n

        try:
            body = recv_body(conn, size, reserve=reserve)
            if body is None:
                return False
            try:
                request = plain_loads(body)  # proven plain first: decoding costs what arrived
                del body
                reply = self._answer(request, conn) if type(request) is tuple and request else \
                    ("error", "ConfigError", "a request must be a non-empty tuple")
            except (ValueError, TypeError, IndexError, KeyError, EOFError) as err:  # the caller's malformed request
                reply = ("error", "ConfigError", f"malformed request: {type(err).__name__}: {str(err)[:300]}")
            except Exception as err:  # noqa: BLE001 - a bug of ours on this request: its error, not the service's end
                logger.exception("the front failed on a request")
                reply = ("error", "SandboxError", f"the execution service failed: {type(err).__name__}: {err}"[:400])
            if reply is None:  # the caller hung up
                return False
            send(conn, reply)
            return True
        finally:
            self.budget.give(taken[0])

    def serve(self, listener: socket.socket) -> None:
        """Answer callers on ``listener`` until no caller has been connected for ``idle_s`` seconds, or none is
        connected after a ``release`` request."""
        for slot in self.slots:
            threading.Thread(target=self._judge_loop, args=(slot,), daemon=True, name="ecd-judge").start()
        listener.settimeout(0.1)
        while True:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                with self._lock:
                    idle = self.connections == 0 and (self.released or time.monotonic() - self.last_seen > self.idle_s)
                if idle:
                    break
                continue
            conn.settimeout(None)
            if not self._ours(conn):  # never counted as a caller: it cancels no release, keeps nothing alive
                conn.close()
                continue
            with self._lock:
                self.last_seen = time.monotonic()
                self.released = False
            threading.Thread(target=self._connection, args=(conn,), daemon=True, name="ecd-caller").start()
        stoppers = [threading.Thread(target=slot.stop) for slot in self.slots]
        for thread in stoppers:
            thread.start()
        for thread in stoppers:
            thread.join()


def main(argv: list[str] | None = None) -> None:
    """``python -m evolvecoder_datasets.execution.service``: serve this machine's callers until idle."""
    from ._client import bind_listener, release_listener, service_folder
    from ._trust import private_folder

    parser = argparse.ArgumentParser(description="The execution service of evolvecoder-datasets.")
    parser.add_argument("--folder", default=None, help="runtime folder of the socket (default: per user)")
    parser.add_argument("--judges", type=int, default=None, help="judge processes (default: usable cores)")
    parser.add_argument("--idle-s", type=float, default=IDLE_S, help="exit after this long without a caller")
    parser.add_argument("--address-space", type=int, default=JUDGE_ADDRESS_SPACE, help="bytes per judge process")
    args = parser.parse_args(argv)
    folder = private_folder(args.folder, create=False) if args.folder else service_folder()
    listener = bind_listener(folder)
    if listener is None:
        print(f"an execution service already answers in {folder}", file=sys.stderr)
        return
    print(f"execution service {os.getpid()} in {folder}", file=sys.stderr, flush=True)
    try:
        Service(folder, args.judges, address_space=args.address_space, idle_s=args.idle_s).serve(listener)
    finally:
        release_listener(folder, listener)


if __name__ == "__main__":
    main()
