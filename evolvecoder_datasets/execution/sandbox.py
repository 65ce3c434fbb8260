"""The caller's side of the sandbox: a pool of fork servers and the jobs sent to them.

Each worker is one small fork server process (see ``_forkserver.py``) started with ``subprocess`` from the real
interpreter, never by forking the caller: a trainer that holds GBs would pay ~40 ms per GiB for every fork.
A worker runs one program at a time, so at most ``workers`` untrusted processes compete for the cores and
CPU-time verdicts stay honest.

Example:
    >>> from evolvecoder_datasets.execution import Sandbox
    >>> with Sandbox(workers=1, timeout_s=1.0) as sb:
    ...     sb.run("def inc(x):\\n    return x + 1\\n", ["assert inc(1) == 2", "assert inc(1) == 3"]).statuses
    ['pass', 'fail']
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import dataclasses
import itertools
import logging
import os
import queue
import random
import threading
import weakref
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ..errors import ConfigError, SandboxCrashed, SandboxError
from ._inside import inside_spec
from ._worker import _shutdown, _Worker
from .isolation import detect_isolation, server_command
from .judge import plan_test
from .report import ExecutionReport
from .verdicts import _clean_entry, _early_stop, _verdicts

logger = logging.getLogger(__name__)

__all__ = ["Sandbox", "Job", "MODES"]

MODES = ("isolated", "fast")


@dataclass(frozen=True)
class Job:
    """One program and what to run it against: assert ``tests`` or stdin/stdout ``inputs``/``outputs``.

    Args:
        timeout_s: CPU seconds per test for this job (a limit calibrated for its problem, say). The sandbox's own
            ``timeout_s`` stays the ceiling: the smaller of the two applies, and the wall-clock backstop shrinks with
            it. ``None`` uses the sandbox's.
        stop_on_failure: stop at the first test that does not pass and report the rest ``unexecuted`` (a binary
            reward's value is known there). Statuses of the tests that ran are those of a full run. Where the
            order cannot change a verdict (isolated mode, stdin/stdout cases), the tests that failed most often
            for earlier jobs with the same tests run first; reports keep the order given.

    Example:
        >>> Job("print(int(input()) * 2)", inputs=["3\\n"], outputs=["6\\n"]).kind
        'stdio'
        >>> Job("def f(x):\\n    return x", tests=["assert f(1) == 1"], timeout_s=0.2, stop_on_failure=True).size
        1
    """

    program: str
    tests: Sequence[str] | None = None
    inputs: Sequence[str] | None = None
    outputs: Sequence[str] | None = None
    float_tol: float | None = None
    timeout_s: float | None = None
    stop_on_failure: bool = False

    def __post_init__(self) -> None:
        if self.timeout_s is not None and not self.timeout_s > 0:
            raise ConfigError(f"a job's timeout_s must be > 0, got {self.timeout_s!r}")

    @property
    def kind(self) -> str:
        return "stdio" if self.inputs is not None else "assert"

    @property
    def size(self) -> int:
        return len(self.inputs if self.inputs is not None else (self.tests or ()))


class _FailureOrder:
    """Per list of tests, how often each one failed in this sandbox's earlier jobs, and a random order that tends to
    run the likeliest failures first.

    A binary reward stops at the first test that does not pass, so the sooner a wrong program meets the test that
    catches it, the fewer tests it costs. The group of completions of one prompt share their tests, and the ones
    that catch wrong programs are few: in EvolveCoder's data the evolved, adversarial tests come last in the list.
    Counts are kept for the last ``size`` lists of tests (keyed by their hash and length: a collision only costs a
    worse order), in memory, per sandbox.

    The order is drawn afresh for every job (weighted sampling without replacement, a test's weight 1 plus 64 per
    time it failed), so where a test runs says only, by chance, that it may have failed before: a program that
    reads its position (its pid, the clock) cannot learn which test caught earlier programs from one run, and the
    tests that never failed come in a random order too.

    Example:
        >>> order = _FailureOrder(seed=0)
        >>> tests = ["assert f(1) == 1", "assert f(2) == 2", "assert f(3) == 3"]
        >>> order.order(tests) is None  # nothing failed yet: the order given
        True
        >>> order.record(tests, ["pass", "pass", "fail"])
        >>> firsts = [order.order(tests)[0] for _ in range(200)]
        >>> firsts.count(2) > 150, sorted(set(firsts))  # mostly first, never always
        (True, [0, 1, 2])
    """

    _FAILED = frozenset({"fail", "error", "timeout", "memory", "crash"})
    _WEIGHT = 64

    def __init__(self, size: int = 4096, seed: int | None = None) -> None:
        self._counts: collections.OrderedDict[tuple, list[int]] = collections.OrderedDict()
        self._size = size
        self._lock = threading.Lock()
        self._random = random.Random(seed if seed is not None else int.from_bytes(os.urandom(8), "big"))

    @staticmethod
    def _key(cases: Sequence[str]) -> tuple:
        return len(cases), hash(tuple(cases))

    def order(self, cases: Sequence[str]) -> list[int] | None:
        """Indices of ``cases`` in a random order weighted towards the most failed; None where nothing failed."""
        key = self._key(cases)
        with self._lock:
            counts = self._counts.get(key)
            if counts is None:
                return None
            self._counts.move_to_end(key)
            draws = [self._random.random() for _ in counts]
        keys = [d ** (1.0 / (1 + self._WEIGHT * c)) for d, c in zip(draws, counts)]  # Efraimidis-Spirakis
        order = sorted(range(len(counts)), key=keys.__getitem__, reverse=True)
        return None if order == list(range(len(order))) else order

    def record(self, cases: Sequence[str], statuses: Sequence[str]) -> None:
        """Count the cases that ran and did not pass (in the given order's indices)."""
        failed = [i for i, status in enumerate(statuses) if status in self._FAILED]
        if not failed:
            return
        key = self._key(cases)
        with self._lock:
            counts = self._counts.get(key)
            if counts is None:
                counts = self._counts[key] = [0] * len(cases)
                while len(self._counts) > self._size:
                    self._counts.popitem(last=False)
            for i in failed:
                counts[i] += 1


def _permuted(job: Job, order: list[int]) -> Job:
    """``job`` with its tests (or stdin/stdout cases) in ``order``."""
    if job.kind == "stdio":
        outputs = None if job.outputs is None else [job.outputs[i] for i in order]
        return dataclasses.replace(job, inputs=[job.inputs[i] for i in order], outputs=outputs)  # type: ignore[index]
    return dataclasses.replace(job, tests=[job.tests[i] for i in order])  # type: ignore[index]


def _in_given_order(report: ExecutionReport, order: list[int]) -> ExecutionReport:
    """A report of a job run in ``order``, back in the order its tests were given."""
    def back(values: list) -> list:
        if len(values) != len(order):
            return values
        out = [None] * len(order)
        for position, index in enumerate(order):
            out[index] = values[position]
        return out

    return dataclasses.replace(report, statuses=back(report.statuses), messages=back(report.messages),
                               cpu_s=back(report.cpu_s), judged=back(report.judged))  # fmt: skip


class Sandbox:
    """A pool of sandboxed fork servers that runs untrusted Python against tests and builds pass matrices.

    Args:
        workers (`int`, *optional*): fork servers, i.e. programs run at once. Defaults to the usable cores.
        timeout_s (`float`, defaults to 1.0): CPU seconds one test may use (judged by the kernel's accounting of
            the child, not by wall time, so a loaded machine does not cause false timeouts).
        memory_mb (`int`, defaults to 1024): address-space limit of a solution process.
        mode (`str`, defaults to ``"isolated"``): ``"isolated"`` forks a fresh copy of the loaded program per test
            (tests cannot share state); ``"fast"`` runs the tests in sequence in one process.
        isolation (`str`, defaults to ``"auto"``): ``"bwrap"``, ``"unshare"``, ``"none"`` or ``"auto"`` (strongest
            available; warns when that is none).
        wall_timeout_s (`float`, *optional*): wall-clock backstop per test for programs that sleep or block.
            Defaults to ``4 * timeout_s + 1.0``.
        load_timeout_s (`float`, *optional*): CPU seconds for compiling and loading the program. Defaults to
            ``max(timeout_s, 2.0)``.
        preamble (`str`, *optional*): code run in the program's namespace before it (e.g.
            ``"from typing import List"``), for models that forget common imports.
        max_output_bytes (`int`, defaults to 1 MiB): file-size limit, and the stdout cap of stdin/stdout programs.
        max_processes (`int`, defaults to 32): process limit of the sandbox uid (effective when run as root).
        max_open_files (`int`, defaults to 64): open-file limit.
        max_consecutive_timeouts (`int`, *optional*, defaults to 2): after this many timeouts in a row, mark the
            program's remaining tests ``unexecuted`` instead of running them (the policy of every entry point, see
            :class:`~evolvecoder_datasets.limits.SandboxSettings`): a looping program costs two limits, not one per
            test. ``None`` runs every test.

    Raises:
        ConfigError: an argument is out of range.
        SandboxUnavailable: an explicitly requested isolation cannot run here.

    Example:
        >>> with Sandbox(workers=2, timeout_s=0.5, mode="fast") as sb:
        ...     M = sb.pass_matrix(["def f(x):\\n    return x * 2", "def f(x):\\n    return x + 2"],
        ...                        ["assert f(2) == 4", "assert f(3) == 6"])
        >>> M.tolist()
        [[True, True], [True, False]]
    """

    def __init__(
        self,
        workers: int | None = None,
        timeout_s: float = 1.0,
        memory_mb: int = 1024,
        mode: str = "isolated",
        *,
        isolation: str = "auto",
        wall_timeout_s: float | None = None,
        load_timeout_s: float | None = None,
        preamble: str | None = None,
        max_output_bytes: int = 1 << 20,
        max_processes: int = 32,
        max_open_files: int = 64,
        max_consecutive_timeouts: int | None = 2,
        max_value_bytes: int = 4 << 20,
    ) -> None:
        if mode not in MODES:
            raise ConfigError(f"mode must be one of {MODES}, got {mode!r}")
        if timeout_s <= 0 or memory_mb < 64:
            raise ConfigError("timeout_s must be > 0 and memory_mb >= 64")
        if workers is not None and workers < 1:
            raise ConfigError("workers must be >= 1")
        self.workers = workers or len(os.sched_getaffinity(0))
        self.timeout_s = float(timeout_s)
        self.memory_mb = int(memory_mb)
        self.mode = mode
        self.requested_isolation = isolation
        self.wall_timeout_s = float(wall_timeout_s) if wall_timeout_s else 4 * self.timeout_s + 1.0
        self.load_timeout_s = float(load_timeout_s) if load_timeout_s else max(self.timeout_s, 2.0)
        self.preamble = preamble
        self.max_output_bytes = int(max_output_bytes)
        self.max_processes = int(max_processes)
        self.max_open_files = int(max_open_files)
        self.max_consecutive_timeouts = max_consecutive_timeouts
        self.max_value_bytes = int(max_value_bytes)
        self.isolation: str | None = None
        self._workers: list[_Worker] = []
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._finalizer: weakref.finalize | None = None
        self._job_ids = itertools.count()
        self._owner_pid = os.getpid()
        self._failures = _FailureOrder()

    # -- lifecycle ---------------------------------------------------------------------------------------------
    def start(self) -> Sandbox:
        """Start the fork servers (done lazily by the first job). Returns ``self``."""
        with self._lock:
            if self._workers and self._owner_pid != os.getpid():
                raise SandboxError("this Sandbox was started in another process (inherited through fork); "
                                   "create a new one here, or use shared_sandbox()")
            if self._workers:
                return self
            self.isolation = detect_isolation(self.requested_isolation)
            command = server_command(self.isolation)
            pid = os.getpid()
            workers = [_Worker(command) for _ in range(self.workers)]
            try:
                for worker in workers:
                    worker.start()
            except BaseException:
                _shutdown(workers, pid)
                raise
            self._workers = workers
            for worker in workers:
                self._idle.put(worker)
            self._executor = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="ecd-sandbox")
            self._finalizer = weakref.finalize(self, _shutdown, list(workers), pid)
            self._owner_pid = pid
            atexit.register(self._finalizer)
        return self

    def close(self) -> None:
        """Stop every fork server and the processes they own."""
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(wait=True)
                self._executor = None
            if self._finalizer is not None:
                self._finalizer()
                self._finalizer = None
            self._workers = []
            self._idle = queue.Queue()

    def __enter__(self) -> Sandbox:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def uid_dropped(self) -> bool:
        """Whether solutions run as an unprivileged uid: checked, by running a one-line program and reading its
        process's uids from ``/proc`` in the fork server (a server's own word is not taken)."""
        return self.run("pass", ["assert True"]).uid_dropped

    @property
    def server_pids(self) -> list[int]:
        """Process ids of the running fork servers (as seen from the caller)."""
        procs = [w.proc for w in self._workers]  # read each once: a worker may drop its process meanwhile
        return [p.pid for p in procs if p is not None]

    # -- jobs --------------------------------------------------------------------------------------------------
    def _job_message(self, job: Job, uid: int) -> dict:
        timeout_s, wall_timeout_s = self.timeout_s, self.wall_timeout_s
        if job.timeout_s is not None and job.timeout_s < timeout_s:  # the sandbox's limit is the ceiling
            timeout_s = float(job.timeout_s)
            wall_timeout_s = min(wall_timeout_s, 4 * timeout_s + 1.0)
        message = {
            "id": next(self._job_ids),
            "kind": job.kind,
            "program": job.program,
            "preamble": self.preamble,
            "mode": self.mode,
            "timeout_s": timeout_s,
            "wall_timeout_s": wall_timeout_s,
            "load_timeout_s": self.load_timeout_s,
            "memory_mb": self.memory_mb,
            "max_output_bytes": self.max_output_bytes,
            "max_processes": self.max_processes,
            "max_open_files": self.max_open_files,
            "max_consecutive_timeouts": self.max_consecutive_timeouts,
            "max_value_bytes": self.max_value_bytes,
            "uid": uid,
            "stop_on_failure": bool(job.stop_on_failure),
        }
        if job.kind == "stdio":
            if job.outputs is None or len(job.outputs) != len(job.inputs or ()):
                raise ConfigError("a stdin/stdout job needs as many outputs as inputs")
            message["inputs"] = list(job.inputs or ())  # the expected outputs stay here: the judge compares
        else:
            # Only the program's part of each test leaves this process: its expected side stays with the judge.
            message["tests"] = [inside_spec(plan_test(str(t)).wire) for t in job.tests or ()]
        return message

    def _deadline(self, job: Job) -> float:
        per_test = self.wall_timeout_s * 1.5 + 2.0
        return 3 * self.load_timeout_s + job.size * per_test + 30.0

    def _execute(self, job: Job) -> ExecutionReport:
        if job.size == 0:
            return ExecutionReport([], [], [], self.isolation or "none", False)
        # Where tests run in processes of their own, their order changes no verdict: a job that stops at its first
        # failure runs the tests that failed most often for this sandbox's earlier jobs first (see _FailureOrder).
        cases = job.inputs if job.kind == "stdio" else job.tests
        independent = job.kind == "stdio" or self.mode == "isolated"
        order = self._failures.order(cases) if independent and job.stop_on_failure else None  # type: ignore[arg-type]
        report = self._run_in_order(_permuted(job, order) if order else job)
        if order:
            report = _in_given_order(report, order)
        if independent and report.infra_error is None:
            self._failures.record(cases, report.statuses)  # type: ignore[arg-type]
        return report

    def _run_in_order(self, job: Job) -> ExecutionReport:
        on_progress = _early_stop(job) if job.stop_on_failure else None
        reply, last_error = self._call(self._job_message, job, on_progress)
        if reply is None:
            n = job.size
            return ExecutionReport(
                statuses=["crash"] * n,
                messages=[f"sandbox failure: {last_error}"] * n,
                cpu_s=[0.0] * n,
                isolation=self.isolation or "none",
                uid_dropped=False,
                infra_error=str(last_error),
            )
        # Judged after the worker is back in the pool: a test's helper call may need one (see _clean_call).
        known = on_progress.judged if on_progress is not None else None  # streamed tests, judged as they came
        statuses, messages, judged = _verdicts(job, reply, self._clean_call, known)
        return ExecutionReport(
            statuses=statuses,
            messages=messages,
            cpu_s=reply["cpu"],
            isolation=self.isolation or "none",
            uid_dropped=bool(reply.get("uid_dropped")),
            infra_error=reply.get("infra_error"),
            judged=judged,
        )

    def _call(self, make_message, job: Job, on_progress=None) -> tuple[dict | None, Exception | None]:
        """One job on an idle worker; a dead server is restarted once and the job retried."""
        worker = self._idle.get()
        try:
            last_error = None
            for _attempt in range(2):
                try:
                    return worker.call(make_message(job, worker.uid), self._deadline(job), on_progress), None
                except SandboxCrashed as err:
                    last_error = err
                    logger.warning("sandbox worker failed (%s); restarting it", err)
            return None, last_error
        finally:
            self._idle.put(worker)

    def _clean_call(self, imports: str, expression: str) -> tuple:
        """Evaluate a test's module helper (``re.fullmatch(...)``, ``np.allclose(...)``) on values the judge already
        holds, in a solution process that loaded only ``imports`` and never any program code: the program patched
        its own copy of those modules, not this one. Returns a judge probe entry."""
        job = Job(imports, tests=[expression])

        def message(job: Job, uid: int) -> dict:
            msg = self._job_message(Job(imports, tests=[]), uid)
            msg["kind"], msg["preamble"], msg["tests"] = "assert", None, ["Pp" + expression]
            return msg

        reply, error = self._call(message, job)
        if reply is None:
            return ("e", "crash", f"sandbox failure: {error}")
        return _clean_entry(reply)

    def run(self, program: str, tests: Sequence[str]) -> ExecutionReport:
        """Run ``program`` once against each assert in ``tests``.

        Args:
            program (`str`): Python source defining what the tests call.
            tests (`Sequence[str]`): independent test snippets, usually one ``assert`` each.

        Returns:
            `ExecutionReport`: one status per test.

        Example:
            >>> with Sandbox(workers=1) as sb:
            ...     sb.run("import sys\\nsys.exit(0)", ["assert True"]).statuses
            ['error']
        """
        self.start()
        return self._execute(Job(program, tests=list(tests)))

    def run_stdio(
        self, program: str, inputs: Sequence[str], outputs: Sequence[str], *, float_tol: float | None = None
    ) -> ExecutionReport:
        """Run a stdin/stdout ``program`` once per case and compare its output token by token.

        Args:
            program (`str`): a script reading stdin and writing stdout (TACO/APPS/CodeContests style).
            inputs (`Sequence[str]`): stdin text per case.
            outputs (`Sequence[str]`): expected stdout per case (whitespace-normalised comparison).
            float_tol (`float`, *optional*): relative/absolute tolerance for numeric tokens.

        Example:
            >>> with Sandbox(workers=1) as sb:
            ...     sb.run_stdio("a, b = map(int, input().split())\\nprint(a + b)", ["1 2\\n", "3 4\\n"],
            ...                  ["3\\n", "8\\n"]).statuses
            ['pass', 'fail']
        """
        self.start()
        return self._execute(Job(program, inputs=list(inputs), outputs=list(outputs), float_tol=float_tol))

    def run_many(self, jobs: Iterable[Job | tuple[str, Sequence[str]]], *, progress: bool = False) -> list[ExecutionReport]:
        """Run many jobs over all workers; reports come back in the order of ``jobs``.

        Args:
            jobs: :class:`Job` objects or ``(program, tests)`` pairs.
            progress (`bool`, defaults to False): show a tqdm progress bar.

        Example:
            >>> with Sandbox(workers=2) as sb:
            ...     [r.statuses for r in sb.run_many([("x = 1", ["assert x == 1"]), ("x = 2", ["assert x == 1"])])]
            [['pass'], ['fail']]
        """
        self.start()
        assert self._executor is not None
        normalised = [j if isinstance(j, Job) else Job(j[0], tests=list(j[1])) for j in jobs]
        results = self._executor.map(self._execute, normalised)
        if progress:
            from tqdm.auto import tqdm

            results = tqdm(results, total=len(normalised), desc="executing", unit="program")
        return list(results)

    def pass_matrix(self, programs: Sequence[str], tests: Sequence[str], *, progress: bool = False):
        """Boolean matrix ``(len(programs), len(tests))``: which program passes which test.

        Example:
            >>> with Sandbox(workers=2) as sb:
            ...     sb.pass_matrix(["def f():\\n    return 1", "def f():\\n    return 2"], ["assert f() == 1"]).tolist()
            [[True], [False]]
        """
        return self._matrix(programs, tests, "passed", bool, progress)

    def status_matrix(self, programs: Sequence[str], tests: Sequence[str]):
        """Int8 matrix of status codes (index into :data:`evolvecoder_datasets.schema.STATUS_NAMES`).

        Example:
            >>> from evolvecoder_datasets.schema import STATUS_NAMES
            >>> with Sandbox(workers=1) as sb:
            ...     codes = sb.status_matrix(["def f(:"], ["assert f() == 1"])
            >>> STATUS_NAMES[codes[0, 0]]
            'syntax_error'
        """
        return self._matrix(programs, tests, "codes", "int8", False)

    def _matrix(self, programs: Sequence[str], tests: Sequence[str], field: str, dtype, progress: bool):
        """One row per program, filled from each report's ``field`` (``passed`` or ``codes``)."""
        import numpy as np

        reports = self.run_many([Job(p, tests=list(tests)) for p in programs], progress=progress)
        matrix = np.zeros((len(programs), len(tests)), dtype=dtype)
        for i, report in enumerate(reports):
            if report.statuses:
                matrix[i] = getattr(report, field)
        return matrix

    # -- async ------------------------------------------------------------------------------------------------
    async def arun(self, program: str, tests: Sequence[str]) -> ExecutionReport:
        """Async :meth:`run`: the work happens in the fork servers; the event loop stays free.

        Example:
            >>> import asyncio
            >>> with Sandbox(workers=1) as sb:
            ...     asyncio.run(sb.arun("x = 3", ["assert x == 3"])).statuses
            ['pass']
        """
        self.start()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._execute, Job(program, tests=list(tests)))

    async def arun_many(self, jobs: Iterable[Job | tuple[str, Sequence[str]]]) -> list[ExecutionReport]:
        """Async :meth:`run_many`."""
        self.start()
        loop = asyncio.get_running_loop()
        normalised = [j if isinstance(j, Job) else Job(j[0], tests=list(j[1])) for j in jobs]
        return list(await asyncio.gather(*(loop.run_in_executor(self._executor, self._execute, j) for j in normalised)))
