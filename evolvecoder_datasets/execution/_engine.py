"""The engine: plan a job's tests, send the program's part to a fork server, judge what comes back.

This is hostile-input work (tests are model-written, values are program-chosen bytes), so it runs in a judge
process of the execution service (:mod:`.service`, :mod:`._judge_process`), never in a caller. The public
:class:`~evolvecoder_datasets.execution.Sandbox` is a client of that service; :class:`LocalEngine` here is the
same engine run in the current process, for the judge process itself and for benchmarks that compare with it.

Example:
    >>> from evolvecoder_datasets.execution import Job
    >>> from evolvecoder_datasets.execution._engine import LocalEngine
    >>> with LocalEngine(workers=1, timeout_s=1.0) as engine:
    ...     engine.run_many([Job("x = 1", tests=["assert x == 1", "assert x == 2"])])[0].statuses
    ['pass', 'fail']
"""

from __future__ import annotations

import functools
import itertools
import logging
import os
import queue
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from ..errors import SandboxCrashed
from ..limits import SandboxSettings
from ._inside import inside_spec
from ._order import _FailureOrder, _in_given_order, _permuted
from ._protocol import SETTINGS, wire_settings
from ._tools import NOT_CHECKED, Tools
from ._worker import _shutdown, _Worker
from .checkers import CHECKER_FAILED
from .isolation import detect_isolation, server_command, server_env
from .judge import plan_test
from .report import ExecutionReport
from .sandbox import Job, resolve_settings
from .verdicts import _clean_entry, _early_stop, _verdicts

logger = logging.getLogger(__name__)
_AT = {name: i for i, name in enumerate(SETTINGS)}  # a setting's position in the tuple the engine runs by

# How many module-helper calls (each a fresh process that never ran program code) one job's judging may start.
MAX_CLEAN_CALLS = 16


@functools.lru_cache(maxsize=16384)
def _wire(test: str) -> str:
    """The program's part of one test as the fork server reads it, cached per test string (a suite's tests are
    planned once, not once per program)."""
    return inside_spec(plan_test(test).wire)


class _Pool:
    """Fork servers of one isolation kind (and Python environment), handed out one job at a time."""

    def __init__(self, isolation: str, size: int, python_env: str | None = None, binds: tuple[str, ...] = (),
                 role: str | None = None) -> None:
        self.isolation = isolation
        self.python_env = python_env
        self.binds = binds  # extra read-only folders (a toolchain pool's compilers)
        self.role = role  # "toolchain" / "checker": servers that never run programs (see _tools)
        self.workers: list[_Worker] = []
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._size = size
        self._pid = os.getpid()
        self._finalizer = None

    def start(self) -> None:
        if self.workers:
            return
        import atexit
        import weakref

        command = (server_command(self.isolation, self.python_env, self.binds, self.role) if self.role
                   else server_command(self.isolation, self.python_env))  # fmt: skip
        env = server_env(self.python_env)
        workers = [_Worker(command, env) for _ in range(self._size)]
        try:
            for worker in workers:
                worker.start()
        except BaseException:
            _shutdown(workers, self._pid)
            raise
        self.workers = workers
        for worker in workers:
            self._idle.put(worker)
        self._finalizer = weakref.finalize(self, _shutdown, list(workers), self._pid)
        atexit.register(self._finalizer)

    def get(self) -> _Worker:
        return self._idle.get()

    def put(self, worker: _Worker) -> None:
        self._idle.put(worker)

    def close(self) -> None:
        if self._finalizer is not None:
            self._finalizer()
            self._finalizer = None
        self.workers = []
        self._idle = queue.Queue()

    @property
    def pids(self) -> list[int]:
        procs = [w.proc for w in self.workers]
        return [p.pid for p in procs if p is not None]


class LocalEngine:
    """Today's engine in this process: ``workers`` fork servers, a thread per job, the judge here.

    Takes the settings as :class:`~evolvecoder_datasets.execution.Sandbox` does (``SandboxSettings``, overrides); ``pool``
    shares fork servers between engines of one process (the judge process keeps one per isolation kind).
    """

    def __init__(self, settings: SandboxSettings | None = None, *, pool: _Pool | None = None, **overrides) -> None:
        resolved = resolve_settings(settings, overrides)
        self._setup(wire_settings(resolved, resolved.isolation), pool, resolved.worker_count)

    def _setup(self, wire: tuple, pool: _Pool | None, workers: int) -> None:
        # What the job frames are built from, by position (``_protocol.SETTINGS``). The judge process's engine runs
        # by the tuple its request carried, untouched (:meth:`from_wire`); a standalone one makes its own.
        self.wire = wire
        self.isolation: str | None = pool.isolation if pool is not None else None
        self._workers = workers
        self._pool = pool
        self._own_pool = pool is None
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._job_ids = itertools.count()
        self._failures = _FailureOrder()

    @classmethod
    def from_wire(cls, wire: tuple, pool: _Pool) -> LocalEngine:
        """The judge process's engine: one job at a time on ``pool``'s fork servers, by the settings ``wire`` a
        request carried (checked by the service), with no settings object rebuilt from them.

        Example:
            >>> from evolvecoder_datasets.limits import SandboxSettings
            >>> from evolvecoder_datasets.execution._protocol import wire_settings
            >>> wire = wire_settings(SandboxSettings(timeout_s=0.5), "none")
            >>> engine = LocalEngine.from_wire(wire, _Pool("none", 1))
            >>> engine.setting("timeout_s"), engine.wire is wire
            (0.5, True)
        """
        engine = cls.__new__(cls)
        engine._setup(wire, pool, 1)
        return engine

    def setting(self, name: str):
        """The value of one of :data:`._protocol.SETTINGS` this engine runs by (``wall_timeout_s`` and
        ``load_timeout_s`` resolved, ``isolation`` as sent).

        Example:
            >>> LocalEngine(timeout_s=0.25).setting("wall_timeout_s")
            2.0
        """
        return self.wire[_AT[name]]

    # -- lifecycle ---------------------------------------------------------------------------------------------
    def start(self) -> LocalEngine:
        with self._lock:
            if self._pool is None:
                self.isolation = detect_isolation(self.setting("isolation"))
                self._pool = _Pool(self.isolation, self._workers, self.setting("python_env"))
            self._pool.start()
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=self._workers, thread_name_prefix="ecd-engine")
        return self

    def close(self) -> None:
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(wait=True)
                self._executor = None
            if self._own_pool and self._pool is not None:
                self._pool.close()
                self._pool = None

    def __enter__(self) -> LocalEngine:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    def run_many(self, jobs: Sequence[Job]) -> list[ExecutionReport]:
        """Run ``jobs`` over the pool; reports in the order of ``jobs``."""
        self.start()
        assert self._executor is not None
        return list(self._executor.map(self.execute, jobs))

    # -- one job -----------------------------------------------------------------------------------------------
    def _job_message(self, job: Job, uid: int, binary: str | None = None) -> dict:
        """The fork server's frame of ``job`` (``_forkserver.job``: every field, typed; the server has no default, so
        each value a job runs by is chosen here, from this engine's settings tuple and the job's own limit)."""
        wire = self.wire
        timeout_s, wall_timeout_s = wire[_AT["timeout_s"]], wire[_AT["wall_timeout_s"]]
        if job.timeout_s is not None and job.timeout_s < timeout_s:  # the sandbox's limit is the ceiling
            timeout_s = float(job.timeout_s)
            wall_timeout_s = min(wall_timeout_s, SandboxSettings.default_wall_s(timeout_s))
        budget = wire[_AT["max_consecutive_timeouts"]]
        message = {
            "id": next(self._job_ids),
            "kind": job.kind,
            "program": job.program,
            "preamble": wire[_AT["preamble"]],
            "mode": wire[_AT["mode"]],
            "timeout_s": float(timeout_s),
            "wall_timeout_s": float(wall_timeout_s),
            "load_timeout_s": float(wire[_AT["load_timeout_s"]]),
            "memory_mb": int(wire[_AT["memory_mb"]]),
            "max_output_bytes": int(wire[_AT["max_output_bytes"]]),
            "max_processes": int(wire[_AT["max_processes"]]),
            "max_open_files": int(wire[_AT["max_open_files"]]),
            "max_consecutive_timeouts": None if budget is None else int(budget),
            "max_value_bytes": int(wire[_AT["max_value_bytes"]]),
            "uid": uid,
            "stop_on_failure": bool(job.stop_on_failure),
        }
        if job.kind == "stdio":
            message["inputs"] = list(job.inputs or ())  # the expected outputs stay here: the judge compares
            message["binary"] = binary  # a compiled program (see _tools), which the fork server seals and runs
        else:
            # Only the program's part of each test leaves this process: its expected side stays with the judge.
            message["tests"] = [_wire(str(t)) for t in job.tests or ()]
        return message

    def deadline(self, job: Job) -> float:
        """Wall seconds a job may take at most (the fork server's own backstops end it far sooner)."""
        per_test = self.setting("wall_timeout_s") * 1.5 + 2.0
        return 3 * self.setting("load_timeout_s") + job.size * per_test + 30.0

    def execute(self, job: Job, *, order_failures: bool = True) -> ExecutionReport:
        """One job's report. ``order_failures`` applies :class:`_FailureOrder` here (a judge process leaves that
        to the client, which keeps the counts per sandbox)."""
        if job.size == 0:
            return ExecutionReport([], [], [], self.isolation or "none", False)
        if not order_failures:
            return self._run_in_order(job)
        cases = job.inputs if job.kind == "stdio" else job.tests
        independent = job.kind == "stdio" or self.setting("mode") == "isolated"
        order = self._failures.order(cases) if independent and job.stop_on_failure else None  # type: ignore[arg-type]
        report = self._run_in_order(_permuted(job, order) if order else job)
        if order:
            report = _in_given_order(report, order)
        if independent and report.infra_error is None:
            self._failures.record(cases, report.statuses)  # type: ignore[arg-type]
        return report

    def _run_in_order(self, job: Job) -> ExecutionReport:
        binary = None
        if job.language != "python":  # compiled once per source (see _tools); a compile error is the program's
            built = Tools(self.isolation or "none", _Pool).build(job.language, job.program)
            if built.binary is None:
                status = "syntax_error" if built.error is not None else "crash"
                return self._uniform(job, status, built.error or built.infra or "", built.infra)
            binary = built.binary
        # A checker judges after the job: nothing to stream (the program's own outputs are judged as one).
        on_progress = _early_stop(job) if job.stop_on_failure and job.checker is None else None
        reply, last_error = self._call(functools.partial(self._job_message, binary=binary), job, on_progress)
        if reply is None:
            return self._uniform(job, "crash", f"sandbox failure: {last_error}", str(last_error))
        infra = reply.get("infra_error")
        checked = None
        if job.checker is not None:
            checked, infra = _checked(Tools(self.isolation or "none", _Pool), job, reply, infra)
        # Judged after the worker is back in the pool: a test's helper call may need one (see _clean_call).
        known = on_progress.judged if on_progress is not None else None  # streamed tests, judged as they came
        budget = [MAX_CLEAN_CALLS]
        statuses, messages, judged = _verdicts(job, reply, functools.partial(self._clean_call, budget), known,
                                               checked)  # fmt: skip
        printed = None
        if job.kind == "stdio" and job.outputs is None:  # a valuing job: what each case printed comes back
            printed = [o if s == "pass" and isinstance(o, str) else None
                       for s, o in zip(statuses, reply.get("outputs") or [None] * len(statuses))]
        return ExecutionReport(statuses=statuses, messages=messages, cpu_s=reply["cpu"],
                               isolation=self.isolation or "none", uid_dropped=bool(reply.get("uid_dropped")),
                               infra_error=infra, judged=judged, outputs=printed)  # fmt: skip

    def _uniform(self, job: Job, status: str, message: str, infra: str | None) -> ExecutionReport:
        """One ending for every test of ``job`` (a compile error, a sandbox that failed)."""
        n = job.size
        return ExecutionReport(statuses=[status] * n, messages=[message[:4000]] * n, cpu_s=[0.0] * n,
                               isolation=self.isolation or "none", uid_dropped=False, infra_error=infra)  # fmt: skip

    def _call(self, make_message, job: Job, on_progress=None) -> tuple[dict | None, Exception | None]:
        """One job on an idle worker; a dead server is restarted once and the job retried."""
        assert self._pool is not None
        worker = self._pool.get()
        try:
            last_error = None
            for _attempt in range(2):
                try:
                    return worker.call(make_message(job, worker.uid), self.deadline(job), on_progress), None
                except SandboxCrashed as err:
                    last_error = err
                    logger.warning("sandbox worker failed (%s); restarting it", err)
            return None, last_error
        finally:
            self._pool.put(worker)

    def _clean_call(self, budget: list[int], imports: str, expression: str) -> tuple:
        """Evaluate a test's module helper (``re.fullmatch(...)``, ``np.allclose(...)``) on values the judge already
        holds, in a solution process that loaded only ``imports`` and never any program code: the program patched
        its own copy of those modules, not this one. Returns a judge probe entry. One job starts at most
        :data:`MAX_CLEAN_CALLS` of them: a test that fans out into more is a ``crash``."""
        if budget[0] <= 0:
            return ("e", "crash", f"the test needs more than {MAX_CLEAN_CALLS} helper processes")
        budget[0] -= 1
        job = Job(imports, tests=[expression])

        def message(job: Job, uid: int) -> dict:
            msg = self._job_message(Job(imports, tests=[]), uid)
            msg["kind"], msg["preamble"], msg["tests"] = "assert", None, ["Pp" + expression]
            return msg

        reply, error = self._call(message, job)
        if reply is None:
            return ("e", "crash", f"sandbox failure: {error}")
        return _clean_entry(reply)


def _checked(tools: Tools, job: Job, reply: dict, infra: str | None) -> tuple[dict, str | None]:
    """The checker's verdicts on the cases that ended with an output, ``{index: (status, message)}``; a case the
    checker could not judge is ``unexecuted`` and flags the report's ``infra_error`` (nobody's verdict)."""
    outputs = reply.get("outputs") or []
    statuses = reply.get("statuses") or []
    cases = [(i, str(job.inputs[i]), outputs[i], str(job.outputs[i]))  # type: ignore[index]
             for i in range(min(job.size, len(outputs), len(statuses)))
             if statuses[i] == "done" and isinstance(outputs[i], str)]  # fmt: skip
    verdicts, failed = tools.check(job.checker, cases)  # type: ignore[arg-type]
    if failed is not None:  # as said: a broken checker ("checker failed: ...") or the checker's sandbox (retried)
        return {i: ("unexecuted", failed) for i, *_ in cases}, infra or failed
    works = _checker_works(tools, job, [i for i, (status, message) in verdicts.items()
                                        if status == "checker_failed" and message != NOT_CHECKED])
    out = {}
    for i, (status, message) in verdicts.items():
        if status == "checker_failed" and i in works:
            # the checker accepts the jury's own answer on this case: what it could not judge is the program's output
            out[i] = ("fail", f"the checker failed on this output and accepts the jury's answer: {message}"[:500])
        elif status == "checker_failed" and works and message == NOT_CHECKED:
            out[i] = ("unexecuted", message)  # never reached, after the program's own failure: no verdict, no flag
        elif status == "checker_failed":
            out[i] = ("unexecuted", message)
            infra = infra or f"{CHECKER_FAILED} on case {i}: {message}"[:500]
        else:
            out[i] = (status, message)
    return out, infra


def _checker_works(tools: Tools, job: Job, failed: list[int]) -> set[int]:
    """The cases among ``failed`` (the checker failed on the program's output) on which the checker accepts the
    jury's answer given as the output: there the checker works, so the output it could not judge is the program's
    doing (a ``fail``, never a reward of ``None`` a program could choose by printing garbage)."""
    if not failed:
        return set()
    jury = [(i, str(job.inputs[i]), str(job.outputs[i]), str(job.outputs[i])) for i in failed]  # type: ignore[index]
    verdicts, broken = tools.check(job.checker, jury)  # type: ignore[arg-type]
    if broken is not None:
        return set()
    return {i for i, (status, _) in verdicts.items() if status == "pass"}
