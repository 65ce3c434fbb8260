"""The caller's side of the sandbox: jobs, and the client of this machine's execution service.

A :class:`Sandbox` sends its jobs to the execution service (:mod:`.service`): a separate process per machine that
owns one fork server per core and the judge. Planning tests, decoding program-chosen values and judging all
happen there, so nothing hostile runs in the caller (a trainer, a recipe's driver); a whole ``run_many`` is one
message each way, so the caller's CPU per execution is a few microseconds. What stays here: the jobs, the order
of a stopping job's tests (:class:`_FailureOrder`) and the reports.

Example:
    >>> from evolvecoder_datasets.execution import Sandbox
    >>> with Sandbox(workers=1, timeout_s=1.0) as sb:
    ...     sb.run("def inc(x):\\n    return x + 1\\n", ["assert inc(1) == 2", "assert inc(1) == 3"]).statuses
    ['pass', 'fail']
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import itertools
import logging
import os
import random
import threading
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..errors import ConfigError, SandboxError, SandboxUntrusted
from ..limits import SandboxSettings
from ._order import _FailureOrder, _in_given_order, _permuted  # noqa: F401 - importable from here too
from .checkers import Checker
from .languages import language
from .report import ExecutionReport

logger = logging.getLogger(__name__)

__all__ = ["Sandbox", "Job"]

_tokens = itertools.count()

# Where this process's jobs go: None is this machine's execution service; otherwise a callable
# ``(settings, workers, jobs, sizes, keys) -> reports`` (encoded, as the service's) that routes them elsewhere,
# installed by :func:`evolvecoder_datasets.distributed.execute_on_ray_nodes`.
_route: list = [None]
# Jobs and tests this process sent to its own machine's service (what a driver that routes elsewhere keeps at 0).
_local_counts = {"jobs": 0, "tests": 0}
_counts_lock = threading.Lock()


def set_route(route) -> object:
    """Send this process's jobs through ``route`` (``None``: this machine's service); returns the previous one.

    Example:
        >>> previous = set_route(None)
        >>> set_route(previous) is None
        True
    """
    previous, _route[0] = _route[0], route
    return previous


_here_counts = {"jobs": 0, "tests": 0}  # of those, the jobs sent inside jobs_here() blocks
_here_depth = [0]  # how many jobs_here() blocks are open


@contextlib.contextmanager
def jobs_here():
    """Within the block, this process's jobs go to this machine's service even where a route is set (for
    measurements a rerun must redo without starting a cluster: the recipe's fidelity oracle). Its jobs count in
    :func:`local_counts` and in ``local_counts()["here"]``.

    Example:
        >>> with jobs_here():
        ...     pass
    """
    previous, _route[0] = _route[0], None
    _here_depth[0] += 1
    try:
        yield
    finally:
        _here_depth[0] -= 1
        _route[0] = previous


def _current_route():
    """The route of this process's jobs; a forked copy of a routing process (a ``num_proc`` worker) cannot use its
    parent's connections and sends its jobs to its machine's service."""
    route = _route[0]
    return None if route is None or getattr(route, "pid", os.getpid()) != os.getpid() else route


def local_counts() -> dict[str, int]:
    """Jobs and tests this process has sent to this machine's execution service so far; ``here``: those of them
    sent inside :func:`jobs_here` blocks.

    Example:
        >>> sorted(local_counts())
        ['here', 'jobs', 'tests']
    """
    with _counts_lock:
        return {**_local_counts, "here": dict(_here_counts)}


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

        language: ``"python"`` (default) or ``"cpp"`` (stdin/stdout jobs; compiled once per source, see
            :mod:`.languages`).
        checker: the problem's special judge (:class:`~.checkers.Checker`, or its ``{source, language, contract}``
            cell) in place of the token compare (stdin/stdout jobs).

    A stdin/stdout job without ``outputs`` is a *valuing* job: nothing is compared, a case that ends normally is a
    ``pass`` and the report's ``outputs`` say what it printed (how a reference values a new input; see
    :meth:`Sandbox.value_stdio`).

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
    language: str = "python"
    checker: Checker | None = None

    def __post_init__(self) -> None:
        _check_texts(self)
        if self.timeout_s is not None and not self.timeout_s > 0:
            raise ConfigError(f"a job's timeout_s must be > 0, got {self.timeout_s!r}")
        language(self.language)  # a ConfigError naming the known ones
        if self.checker is not None and not isinstance(self.checker, Checker):
            object.__setattr__(self, "checker", Checker.from_value(self.checker))
        if self.inputs is None and (self.language != "python" or self.checker is not None):
            raise ConfigError("compiled languages and checkers are for stdin/stdout jobs (inputs and outputs)")
        if self.inputs is not None and self.outputs is None and (self.checker is not None or self.stop_on_failure):
            raise ConfigError("a valuing job (inputs without outputs) runs every case and has no answers to check")

    @property
    def kind(self) -> str:
        return "stdio" if self.inputs is not None else "assert"

    @property
    def size(self) -> int:
        return len(self.inputs if self.inputs is not None else (self.tests or ()))


def resolve_settings(settings: SandboxSettings | None, overrides: dict) -> SandboxSettings:
    """``settings`` (or the defaults) with ``overrides`` applied, checked once (:class:`SandboxSettings` holds the
    only defaults and the only checks); a config that embeds the settings is reduced to them.

    Example:
        >>> resolve_settings(None, {"mode": "fast"}).mode
        'fast'
    """
    if settings is not None and not isinstance(settings, SandboxSettings):
        raise ConfigError(f"settings must be a SandboxSettings (or a config built on it), got {type(settings).__name__}")
    base = (settings or SandboxSettings()).for_sandbox()
    unknown = sorted(set(overrides) - set(SandboxSettings.SANDBOX_FIELDS))
    if unknown:
        raise TypeError(f"unknown sandbox setting(s) {unknown}; the settings are {list(SandboxSettings.SANDBOX_FIELDS)}")
    if not overrides:
        return settings if settings == base else base  # already a sandbox's own settings: kept, not copied again
    return dataclasses.replace(base, **overrides)


def _check_texts(job: Job) -> None:
    """A job's program and each test, input and answer is a ``str``: anything else is the caller's error, never a
    text made with ``str()`` (a ``bytes`` or list test would become an expression statement that always passes)."""
    if not isinstance(job.program, str):
        raise ConfigError(f"a job's program must be a str, got {type(job.program).__name__}")
    for name in ("tests", "inputs", "outputs"):
        texts = getattr(job, name)
        if texts is None:
            continue
        _refuse_one_text(texts, f"a job's {name}")
        for text in texts:
            if not isinstance(text, str):
                raise ConfigError(f"each of a job's {name} must be a str, got {type(text).__name__}")


def _refuse_one_text(texts, name: str) -> None:
    """One ``str`` (or ``bytes``) given where a sequence of them is asked for is the caller's error."""
    if isinstance(texts, (str, bytes)):
        raise ConfigError(f"{name} must be a sequence of str, got one {type(texts).__name__}")


def _texts(texts: Sequence[str], name: str) -> list[str]:
    """``texts`` as a list, where one ``str`` given for the sequence is refused, not split into characters."""
    _refuse_one_text(texts, name)
    return list(texts)


def _check_job(job: Job) -> None:
    from ._protocol import MAX_JOB_TESTS

    if job.kind == "stdio" and job.outputs is not None and len(job.outputs) != len(job.inputs or ()):
        raise ConfigError("a stdin/stdout job needs as many outputs as inputs")
    if job.size > MAX_JOB_TESTS:
        raise ConfigError(f"a job has {job.size} tests; the execution service takes at most {MAX_JOB_TESTS} per job")


class Sandbox:
    """Runs untrusted Python against tests and builds pass matrices, through this machine's execution service.

    The service (:mod:`evolvecoder_datasets.execution.service`) is one process per machine, started by the first
    caller with ``subprocess`` and shared by every caller: it owns one fork server per core, plans the tests and
    judges the values, so hostile input (model-written tests, program-chosen bytes) never reaches this process.
    A whole :meth:`run_many` is one message each way.

    Args:
        settings (`SandboxSettings`, *optional*): every setting, with its default and its check, in one place
            (:class:`~evolvecoder_datasets.limits.SandboxSettings`: ``timeout_s``, ``memory_mb``, ``mode``,
            ``workers``, ``isolation``, ``preamble``, ``max_consecutive_timeouts``, the wall and load limits and
            the output, process, file and value caps). A config built on it (``ExecuteConfig``,
            ``RewardConfig``) is taken as it is. ``workers`` is how many of this sandbox's programs run at once
            (the service runs at most one per core in all, whatever the number of callers); ``timeout_s`` is
            judged by the kernel's accounting of the child's CPU, not by wall time, so a loaded machine does not
            cause false timeouts; ``"isolated"`` forks a fresh copy of the loaded program per test, ``"fast"``
            runs the tests in sequence in one process.
        **overrides: single settings by name, applied over ``settings`` (``Sandbox(mode="fast", workers=2)``).

    Raises:
        ConfigError: a setting is out of range.
        TypeError: an override names no setting.
        SandboxUnavailable: an explicitly requested isolation cannot run here.

    Example:
        >>> with Sandbox(workers=2, timeout_s=0.5, mode="fast") as sb:
        ...     M = sb.pass_matrix(["def f(x):\\n    return x * 2", "def f(x):\\n    return x + 2"],
        ...                        ["assert f(2) == 4", "assert f(3) == 6"])
        >>> M.tolist()
        [[True, True], [True, False]]
    """

    def __init__(self, settings: SandboxSettings | None = None, **overrides) -> None:
        self.settings = resolve_settings(settings, overrides)
        self.isolation: str | None = None
        self._connections = None
        self._lock = threading.Lock()
        self._finalizer: weakref.finalize | None = None
        self._owner_pid = os.getpid()
        self._token = (os.getpid(), next(_tokens))  # this sandbox's failure counts in the service

    # -- lifecycle ---------------------------------------------------------------------------------------------
    def start(self) -> Sandbox:
        """Join (or start) the machine's execution service, with fork servers ready for this sandbox's isolation
        (done lazily by the first job). Returns ``self``."""
        with self._lock:
            if self._connections is not None and self._owner_pid != os.getpid():
                raise SandboxError("this Sandbox was started in another process (inherited through fork); "
                                   "create a new one here, or use shared_sandbox()")
            if self._connections is not None:
                return self
            from ._client import Connections
            from .isolation import detect_isolation

            self.isolation = detect_isolation(self.settings.isolation)  # the caller's machine, not hostile input
            connections = Connections()
            if _current_route() is None:  # routed jobs start the services where they run
                self._ask(connections, ("start", self._wire()))
            self._connections = connections
            self._owner_pid = os.getpid()
            self._finalizer = weakref.finalize(self, _close, connections, self._owner_pid)
        return self

    def close(self) -> None:
        """Close this sandbox's connections (the service, shared by the machine's callers, ends when idle)."""
        with self._lock:
            if self._finalizer is not None:
                self._finalizer()
                self._finalizer = None
            self._connections = None

    def __enter__(self) -> Sandbox:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    def _wire(self) -> tuple:
        """This sandbox's settings as a request carries them (:func:`._protocol.wire_settings`), made for each request
        like its jobs' bytes: ``self.settings`` is the one holder of them in this process."""
        from ._protocol import wire_settings

        return wire_settings(self.settings, self.isolation)

    @staticmethod
    def _ask(connections, message):
        reply = connections.request(message)
        if reply[0] != "ok":
            raise (ConfigError if reply[1] == "ConfigError" else SandboxError)(reply[2])
        return reply[1]

    def _request(self, message):
        """The service's answer to ``message`` (None: only start, and check this is the process that did)."""
        self.start()
        if self._owner_pid != os.getpid():
            raise SandboxError("this Sandbox was started in another process (inherited through fork); "
                               "create a new one here, or use shared_sandbox()")
        return None if message is None else self._ask(self._connections, message)

    @property
    def connected(self) -> bool:
        """Whether this sandbox holds connections to the execution service (started and not closed).

        Example:
            >>> sb = Sandbox(mode="fast").start()
            >>> sb.close()
            >>> sb.connected
            False
        """
        return self._connections is not None

    @property
    def capacity(self) -> int:
        """Programs that run at once where this sandbox's jobs go: ``workers`` on this machine's service; where a
        route sends them elsewhere and says its size (the nodes' CPUs, :func:`~evolvecoder_datasets.distributed.
        execute_on_ray_nodes`), that. What a stream sizes its requests by
        (:func:`~evolvecoder_datasets.stages.support.stream.stream_shape`).

        Example:
            >>> Sandbox(workers=3).capacity
            3
        """
        size = getattr(_current_route(), "capacity", None)
        return max(1, int(size())) if callable(size) else self.settings.worker_count

    @property
    def uid_dropped(self) -> bool:
        """Whether solutions run as an unprivileged uid: checked, by running a one-line program and reading its
        process's uids from ``/proc`` in the fork server (a server's own word is not taken)."""
        return self.run("pass", ["assert True"]).uid_dropped

    def _info(self) -> tuple[list[int], list[int]]:
        value = self._request(("info", self.isolation))
        if not (type(value) is tuple and len(value) == 2
                and all(type(v) is list and all(type(x) is int for x in v) for v in value)):  # fmt: skip
            raise SandboxError("the execution service sent a malformed reply to info")
        return value

    @property
    def server_pids(self) -> list[int]:
        """Process ids of the service's fork servers (every caller of the machine shares them)."""
        return list(self._info()[0])

    @property
    def sandbox_uids(self) -> set[int]:
        """The unprivileged uids the service's fork servers run programs as."""
        return set(self._info()[1])

    # -- jobs --------------------------------------------------------------------------------------------------
    def _execute_many(self, jobs: list[Job]) -> list[ExecutionReport]:
        """One request for all of ``jobs``. Where tests run in processes of their own, their order changes no
        verdict: the service runs a stopping job's tests that failed most often for earlier jobs with the same
        tests first (see :class:`_FailureOrder`; keyed by this process's hash of the test list)."""
        from ._protocol import ReplyError, crash_report, decode_report, encode_job, reply_bound

        if not jobs:
            return []
        self.start()
        keys = []
        for job in jobs:
            _check_job(job)
            if job.stop_on_failure and (job.kind == "stdio" or self.settings.mode == "isolated"):
                cases = job.inputs if job.kind == "stdio" else job.tests
                keys.append((*_FailureOrder._key(cases), self._token))  # type: ignore[arg-type]  # per sandbox
            else:
                keys.append(None)
        encoded, sizes = [encode_job(j) for j in jobs], [j.size for j in jobs]
        route = _current_route()
        try:
            if route is not None:
                blobs = route(self._wire(), self.settings.worker_count, encoded, sizes, keys)
            else:
                with _counts_lock:
                    _local_counts["jobs"] += len(jobs)
                    _local_counts["tests"] += sum(sizes)
                    if _here_depth[0]:
                        _here_counts["jobs"] += len(jobs)
                        _here_counts["tests"] += sum(sizes)
                self._request(None)  # started, and in the process that started it
                bounds = [reply_bound(j.size, j.kind == "stdio" and j.outputs is None, self.settings.max_output_bytes)
                          for j in jobs]  # fmt: skip
                blobs = self._connections.run(self._wire(), self.settings.worker_count, encoded, sizes, keys, bounds)
            if type(blobs) is not list or len(blobs) != len(jobs):
                got = len(blobs) if type(blobs) is list else type(blobs).__name__
                raise SandboxError(f"the execution service answered {got} reports for {len(jobs)} jobs")
            return [decode_report(b, j.size) for b, j in zip(blobs, jobs)]
        except (SandboxError, ReplyError) as err:
            if isinstance(err, SandboxUntrusted) or "another process" in str(err):
                raise
            why = f"the execution service sent a malformed reply: {err}" if isinstance(err, ReplyError) else str(err)
            return [decode_report(crash_report(j.size, self.isolation or "none", f"sandbox failure: {why}", why))
                    for j in jobs]  # fmt: skip

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
        return self._execute_many([Job(program, tests=_texts(tests, "tests"))])[0]

    def run_stdio(
        self,
        program: str,
        inputs: Sequence[str],
        answers: Sequence[str],
        *,
        language: str = "python",
        checker: Checker | dict | None = None,
        float_tol: float | None = None,
    ) -> ExecutionReport:
        """Run a stdin/stdout ``program`` once per case and judge its output: token by token, or by ``checker``.

        Args:
            program (`str`): a program reading stdin and writing stdout (TACO/APPS/CodeContests style).
            inputs (`Sequence[str]`): stdin text per case.
            answers (`Sequence[str]`): expected stdout per case (the answer file a checker reads).
            language (`str`, defaults to ``"python"``): ``"python"`` or ``"cpp"`` (``g++ -O2 -std=gnu++17``,
                compiled once per source in a sandbox of its own; a compile error is ``syntax_error``).
            checker (`Checker` or `dict`, *optional*): a special judge (testlib or Kattis contract); a case it cannot
                judge (it crashed, timed out, or said it failed) is the program's ``fail`` where the checker accepts
                the jury's answer on it, else ``unexecuted`` with the report's ``infra_error`` saying so.
            float_tol (`float`, *optional*): tolerance for numbers written with a fraction or an exponent (integers
                always compare exactly; see :func:`~.checkers.outputs_match`).

        Example:
            >>> with Sandbox(workers=1) as sb:
            ...     sb.run_stdio("a, b = map(int, input().split())\\nprint(a + b)", ["1 2\\n", "3 4\\n"],
            ...                  ["3\\n", "8\\n"]).statuses
            ['pass', 'fail']
        """
        job = Job(program, inputs=_texts(inputs, "inputs"), outputs=_texts(answers, "answers"), float_tol=float_tol,
                  language=language, checker=Checker.from_value(checker))
        return self._execute_many([job])[0]

    def value_stdio(self, program: str, inputs: Sequence[str], *, language: str = "python",
                    timeout_s: float | None = None) -> ExecutionReport:
        """What a stdin/stdout ``program`` (a reference) prints on each of ``inputs``: the report's ``outputs``.

        Nothing is compared: a case that ends normally is ``pass`` and its output is in ``outputs``; any other ending
        keeps its status (``timeout``, ``error``, ``crash``...) and its output is ``None``. The program runs in the
        sandbox like any other; what comes back is bounded text (``max_output_bytes``, invalid UTF-8 replaced),
        read by the service, so the caller holds a string and nothing else the program chose.

        Example:
            >>> with Sandbox(workers=1) as sb:
            ...     report = sb.value_stdio("print(int(input()) ** 2)", ["3\\n", "x\\n"])
            >>> report.statuses, report.outputs
            (['pass', 'error'], ['9\\n', None])
        """
        job = Job(program, inputs=_texts(inputs, "inputs"), language=language, timeout_s=timeout_s)
        return self._execute_many([job])[0]

    def run_many(self, jobs: Iterable[Job | tuple[str, Sequence[str]]], *, progress: bool = False) -> list[ExecutionReport]:
        """Run many jobs over the service's fork servers; reports come back in the order of ``jobs``.

        Args:
            jobs: :class:`Job` objects or ``(program, tests)`` pairs.
            progress (`bool`, defaults to False): show a tqdm progress bar (the jobs then go in chunks).

        Example:
            >>> with Sandbox(workers=2) as sb:
            ...     [r.statuses for r in sb.run_many([("x = 1", ["assert x == 1"]), ("x = 2", ["assert x == 1"])])]
            [['pass'], ['fail']]
        """
        normalised = [j if isinstance(j, Job) else Job(j[0], tests=_texts(j[1], "tests")) for j in jobs]
        if not progress:
            return self._execute_many(normalised)
        from tqdm.auto import tqdm

        chunk = max(64, 8 * self.settings.worker_count)
        reports: list[ExecutionReport] = []
        with tqdm(total=len(normalised), desc="executing", unit="program") as bar:
            for i in range(0, len(normalised), chunk):
                reports += self._execute_many(normalised[i : i + chunk])
                bar.update(len(normalised[i : i + chunk]))
        return reports

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
        """Async :meth:`run`: the work happens in the service; the event loop stays free.

        Example:
            >>> import asyncio
            >>> with Sandbox(workers=1) as sb:
            ...     asyncio.run(sb.arun("x = 3", ["assert x == 3"])).statuses
            ['pass']
        """
        return (await self.arun_many([Job(program, tests=list(tests))]))[0]

    async def arun_many(self, jobs: Iterable[Job | tuple[str, Sequence[str]]]) -> list[ExecutionReport]:
        """Async :meth:`run_many` (one request for all of ``jobs``)."""
        normalised = [j if isinstance(j, Job) else Job(j[0], tests=_texts(j[1], "tests")) for j in jobs]
        return await asyncio.get_running_loop().run_in_executor(None, self._execute_many, normalised)


def _close(connections, owner_pid: int) -> None:
    # A forked copy of the caller (a datasets num_proc worker, say) inherits the Sandbox object: it must never
    # use or close the parent's connections.
    if os.getpid() == owner_pid:
        connections.close()
