"""The fork server's conversation, typed: the messages it takes and sends, and the job it runs.

Frames are length-prefixed JSON both ways (``Server.recv``/``Server.send``; the caller's side is
``execution._worker``). The server says hello first, with :data:`PROTOCOL_VERSION`, which the caller checks; then
it answers each request of :data:`REQUESTS` with the message :data:`REPLIES` names.

A job's frame is read once, where it arrives (:func:`parse_job`, called by ``Server.serve``), into the frozen record
of its kind (:data:`KINDS`): :class:`AssertJob`, :class:`StdioJob`, :class:`CompileJob` or :class:`CheckJob`. Nothing
in the server reads the frame after that. Every field is required and typed by its annotation (the readers are in
``_READERS``): a frame that lacks a field or holds one of another type raises :class:`JobError`, which the server
answers as that job's infrastructure error (:func:`failure_reply`). No field has a default here: every value a job
runs by is chosen by whoever builds the frame (the engine's ``LocalEngine._job_message`` from its
``SandboxSettings`` for program jobs, ``execution._tools`` from the ``languages``/``checkers`` constants for compile
and check jobs, the server itself for its warm-up, :data:`WARM_UP`). Keys a kind does not read are ignored.

Example:
    >>> job = parse_job({"kind": "stdio", "id": 7, "uid": None, "mode": "isolated", "timeout_s": 1,
    ...                  "wall_timeout_s": 5.0, "load_timeout_s": 2.0, "memory_mb": 256, "max_output_bytes": 1024,
    ...                  "max_processes": 8, "max_open_files": 16, "program": "print(input())",
    ...                  "max_value_bytes": 4096, "max_consecutive_timeouts": 2, "stop_on_failure": False,
    ...                  "inputs": ["1\\n"], "binary": None})
    >>> job.kind, job.timeout_s, job.inputs, job.size
    ('stdio', 1.0, ('1\\n',), 1)
    >>> try:
    ...     parse_job({"kind": "stdio", "id": 7})
    ... except JobError as err:
    ...     print(err)
    StdioJob field 'uid' is missing
"""

from __future__ import annotations

from .lines import MAX_MESSAGE
from .pristine import _isinstance, _len, _type, pin_builtins

pin_builtins(globals())

#: Sent in the hello; a caller speaking another version refuses the server. Bump it whenever a frame changes.
PROTOCOL_VERSION = 5

SHUTDOWN, PING, STOP, JOB = "shutdown", "ping", "stop", "job"
ASSERT, STDIO, COMPILE, CHECK = "assert", "stdio", "compile", "check"
MODES = ("isolated", "fast")

#: What the caller may send, by the word that names it (a frame's ``op``; a job's frame has no ``op``, its ``kind``
#: is one of :data:`KINDS`), and the message of :data:`REPLIES` the server answers with (None: no answer).
#: ``shutdown``: the server ends (so it does when its input ends). ``ping``: it says it is there. ``stop``: the
#: ``stop_on_failure`` job running ends, its tests not run yet ``unexecuted`` (between jobs it changes nothing).
REQUESTS = {SHUTDOWN: None, PING: "pong", STOP: None, JOB: "result"}

#: What the server sends, by name: the keys it always has, then those it may have. ``hello`` comes once, first;
#: ``progress`` only during a ``stop_on_failure`` job (its values, ``value`` for tests and ``output`` for stdin
#: cases, go to the caller's judge); ``result`` ends each job: ``values`` (assert), ``outputs`` (stdio), ``binary``
#: (compile) or ``endings`` (check) by kind, and ``infra_error`` where the job could not be run at all.
REPLIES = {
    "hello": (("hello", "pid", "uid_drop", "python"), ()),
    "pong": (("pong",), ()),
    "progress": (("progress",), ("value", "output")),
    "result": (("id", "statuses", "messages", "cpu"),
               ("uid_dropped", "values", "outputs", "binary", "endings", "infra_error")),
}  # fmt: skip


class JobError(ValueError):
    """A job's frame lacks a field, holds one of another type, or names no kind this server runs.

    Example:
        >>> isinstance(JobError("AssertJob field 'tests' is missing"), ValueError)
        True
    """


def request_word(frame) -> str:
    """The word of :data:`REQUESTS` that names ``frame`` (None, the end of the caller's pipe, says ``shutdown``);
    every frame that names no op is a job's, which :func:`parse_job` reads or refuses.

    Example:
        >>> request_word({"op": "ping"}), request_word(None), request_word({"kind": "assert"}), request_word([1])
        ('ping', 'shutdown', 'job', 'job')
    """
    if frame is None:
        return SHUTDOWN
    op = frame.get("op") if _isinstance(frame, dict) else None
    return op if _isinstance(op, str) and op in REQUESTS and op != JOB else JOB


def parse_job(frame) -> Job:
    """The job ``frame`` asks for, read into the record of its ``kind``. Raises :class:`JobError` where it is not one.

    Example:
        >>> try:
        ...     parse_job({"kind": "lint"})
        ... except JobError as err:
        ...     print(err)
        no job is of kind 'lint'; the kinds are ['assert', 'check', 'compile', 'stdio']
    """
    if not _isinstance(frame, dict):
        raise JobError(f"a job's frame is a JSON object, not {_type(frame).__name__}")
    if "op" in frame:
        raise JobError(f"this server takes no op {frame['op']!r}; the ops are {sorted(set(REQUESTS) - {JOB})}")
    kind = frame.get("kind")
    record = KINDS.get(kind) if _isinstance(kind, str) else None
    if record is None:
        raise JobError(f"no job is of kind {kind!r}; the kinds are {sorted(KINDS)}")
    return record.parse(frame)


def hello(pid: int, uid_drop: bool, python: str) -> dict:
    """The first message of a server: its protocol version, pid, whether it can drop its children's uid, and its
    Python's version.

    Example:
        >>> sorted(hello(12, True, "3.11.7")) == sorted(REPLIES["hello"][0])
        True
    """
    return {"hello": PROTOCOL_VERSION, "pid": pid, "uid_drop": uid_drop, "python": python}


def failure_reply(frame, err: BaseException) -> dict:
    """The ``result`` of a job the server could not run: its frame was no job (:class:`JobError`), or the server
    failed on it (a bug of ours). Each of its tests or stdin cases is a ``crash`` and ``infra_error`` says why, so
    the caller's verdicts for it are nobody's; the frame's ``id`` comes back as it was sent.

    Example:
        >>> reply = failure_reply({"id": 3, "tests": ["Pp1", "Pp2"]}, JobError("AssertJob field 'uid' is missing"))
        >>> reply["id"], reply["statuses"], reply["infra_error"]
        (3, ['crash', 'crash'], "JobError: AssertJob field 'uid' is missing")
    """
    fields = frame if _isinstance(frame, dict) else {}
    cases = fields.get("tests")
    cases = cases if _isinstance(cases, list) else fields.get("inputs")
    n = _len(cases) if _isinstance(cases, list) else 0
    what = "malformed job" if _isinstance(err, JobError) else "server error"
    message = f"{what}: {_type(err).__name__}: {err}"[:MAX_MESSAGE]
    return {"id": fields.get("id"), "statuses": ["crash"] * n, "messages": [message] * n, "cpu": [0.0] * n,
            "infra_error": f"{_type(err).__name__}: {err}"}  # fmt: skip


# -- reading a field ---------------------------------------------------------------------------------------------
class _Wrong(Exception):
    """A reader's word for a value of another type: what it should have been."""


def _int(value) -> int:
    if _type(value) is not int:  # a bool is no count
        raise _Wrong("an integer")
    return value


def _number(value) -> float:
    if _type(value) not in (int, float):
        raise _Wrong("a number")
    return float(value)


def _bool(value) -> bool:
    if _type(value) is not bool:
        raise _Wrong("true or false")
    return value


def _str(value) -> str:
    if _type(value) is not str:
        raise _Wrong("a string")
    return value


def _strs(value) -> tuple:
    if _type(value) not in (list, tuple) or not all(_type(item) is str for item in value):
        raise _Wrong("a list of strings")
    return tuple(value)


def _triples(value) -> tuple:
    if _type(value) not in (list, tuple) or not all(
            _type(item) in (list, tuple) and _len(item) == 3 and all(_type(t) is str for t in item) for item in value):
        raise _Wrong("a list of [string, string, string]")
    return tuple(tuple(item) for item in value)


def _optional(read):
    """``read``, or None where the value is null."""
    return lambda value: None if value is None else read(value)


def _header(value) -> PrecompiledHeader:
    return PrecompiledHeader.parse(value)


#: How a field is read, by its annotation: a maintainer who declares a field of a new type says here how it is read
#: (a record whose annotation is not here fails when this module is imported).
_READERS = {
    "int": _int,
    "int | None": _optional(_int),
    "float": _number,
    "bool": _bool,
    "str": _str,
    "str | None": _optional(_str),
    "tuple[str, ...]": _strs,
    "tuple[tuple[str, str, str], ...]": _triples,
    "PrecompiledHeader | None": _optional(_header),
}


# -- records -----------------------------------------------------------------------------------------------------
class _Record:
    """A frozen record whose fields are its classes' annotations, each required and read by ``_READERS``.

    Example:
        >>> header = PrecompiledHeader(header="bits/stdc++.h", command=("g++", "{src}"))
        >>> header.replace(command=()).command, header.frame()["command"]
        ((), ('g++', '{src}'))
    """

    FIELDS: tuple = ()  # ((name, reader), ...): the annotations of the class and of the records it extends

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("__annotations__", {})
        cls.FIELDS = cls.FIELDS + tuple((name, _READERS[text]) for name, text in own.items())

    def __init__(self, **values) -> None:
        names = [name for name, _ in self.FIELDS]
        if sorted(values) != sorted(names):
            missing, extra = sorted(set(names) - set(values)), sorted(set(values) - set(names))
            raise TypeError(f"{_type(self).__name__} takes {names}: {missing} missing, {extra} unknown")
        for name in names:
            object.__setattr__(self, name, values[name])

    @classmethod
    def parse(cls, frame):
        """The record ``frame`` (a dict) holds. Raises :class:`JobError` where a field is missing or of another type."""
        if not _isinstance(frame, dict):
            raise JobError(f"a {cls.__name__} is a JSON object, not {_type(frame).__name__}")
        values = {}
        for name, read in cls.FIELDS:
            if name not in frame:
                raise JobError(f"{cls.__name__} field {name!r} is missing")
            try:
                values[name] = read(frame[name])
            except _Wrong as wrong:
                shown = repr(frame[name])[:40]
                raise JobError(f"{cls.__name__} field {name!r} must be {wrong}, not {shown}") from None
        record = cls(**values)
        record._check()
        return record

    def _check(self) -> None:
        """What a record's fields must be beyond their types (nothing, unless a record says)."""

    def replace(self, **changes):
        """A copy with ``changes``."""
        return _type(self)(**{**self.fields(), **changes})

    def fields(self) -> dict:
        """``{name: value}`` of every field."""
        return {name: getattr(self, name) for name, _ in self.FIELDS}

    def frame(self) -> dict:
        """What :meth:`parse` reads this record back from (tuples go out as JSON lists)."""
        return {name: value.frame() if _isinstance(value, _Record) else value for name, value in self.fields().items()}

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError(f"a {_type(self).__name__} is frozen: make another with replace({name}=...)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a {_type(self).__name__} is frozen")

    def __eq__(self, other) -> bool:
        return _type(other) is _type(self) and other.fields() == self.fields()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r:.60}" for name, value in self.fields().items())
        return f"{_type(self).__name__}({shown})"


class PrecompiledHeader(_Record):
    """A compile job's precompiled header: the header and the command that builds it (``{src}``, ``{out}``).

    Example:
        >>> PrecompiledHeader.parse({"header": "bits/stdc++.h", "command": ["g++", "-x", "c++-header"]}).header
        'bits/stdc++.h'
    """

    header: str
    command: tuple[str, ...]


class Job(_Record):
    """What every job has: its id (sent back with its reply), the uid and limits of its processes (``mode``:
    ``isolated`` or ``fast``; seconds of CPU per test, of wall clock per test, of CPU to load the program).

    Example:
        >>> AssertJob.parse({**WARM_UP, "mode": "fast"}).fast, StdioJob.kind, Job.fast
        (True, 'stdio', False)
    """

    kind = ""
    fast = False  # the tests run one after another in the solution process (fast mode, assert jobs only)
    id: int | None
    uid: int | None
    mode: str
    timeout_s: float
    wall_timeout_s: float
    load_timeout_s: float
    memory_mb: int
    max_output_bytes: int
    max_processes: int
    max_open_files: int

    def frame(self) -> dict:
        """What :func:`parse_job` reads this job back from."""
        return {"kind": self.kind, **super().frame()}

    def _check(self) -> None:
        if self.mode not in MODES:
            raise JobError(f"{_type(self).__name__} field 'mode' must be one of {list(MODES)}, not {self.mode!r}")


class ProgramJob(Job):
    """A job that runs a program: its source, the largest value a probe may send, the timeouts in a row after which
    the rest is ``unexecuted`` (None: never), and whether the first test that does not pass stops it."""

    program: str
    max_value_bytes: int
    max_consecutive_timeouts: int | None
    stop_on_failure: bool


class AssertJob(ProgramJob):
    """A Python program and its tests (each as the caller's planner sent it: ``P``-probes, or a whole ``T`` test),
    after an optional ``preamble``. A solution process cloned from the zygote holds it with ``tests`` empty: they
    come on its control pipe, once it has loaded the program.

    Example:
        >>> AssertJob.parse(WARM_UP).size
        3
    """

    kind = ASSERT
    preamble: str | None
    tests: tuple[str, ...]

    @property
    def fast(self) -> bool:  # type: ignore[override]
        """Whether the solution process runs the tests itself, one after another (fast mode)."""
        return self.mode == "fast"

    @property
    def size(self) -> int:
        """How many tests the job has."""
        return _len(self.tests)


class StdioJob(ProgramJob):
    """A program run once per stdin case: Python (``program``), or a compiled ``binary`` (base64) where not None.
    The expected outputs never come here: the caller compares.

    Example:
        >>> StdioJob.parse({**WARM_UP, "kind": "stdio", "inputs": [], "binary": None}).size
        0
    """

    kind = STDIO
    inputs: tuple[str, ...]
    binary: str | None

    @property
    def size(self) -> int:
        """How many stdin cases the job has."""
        return _len(self.inputs)


class CompileJob(Job):
    """A toolchain server's job: write ``source`` as ``source_name`` and run ``command`` (``{src}``, ``{out}``
    filled in) on it; the binary comes back if at most ``max_binary_bytes``. ``pch``, where not None, is built once
    per server under ``pch_cpu_s``/``pch_wall_s`` and put first on the include path."""

    kind = COMPILE
    source: str
    source_name: str
    command: tuple[str, ...]
    pch: PrecompiledHeader | None
    pch_cpu_s: float
    pch_wall_s: float
    max_binary_bytes: int


class CheckJob(Job):
    """A checker server's job: run the checker, a Python ``source`` or a compiled ``binary`` (one of them, the other
    None), on each of ``cases`` (``[input, output, answer]``) under its ``contract`` (testlib, kattis, codeforces)."""

    kind = CHECK
    contract: str
    cases: tuple[tuple[str, str, str], ...]
    source: str | None
    binary: str | None

    def _check(self) -> None:
        super()._check()
        if (self.source is None) == (self.binary is None):
            raise JobError("a CheckJob has a 'source' or a 'binary': one of them, the other null")


#: The record each kind of job is read into.
KINDS = {record.kind: record for record in (AssertJob, StdioJob, CompileJob, CheckJob)}

#: The frame of the job the server runs on itself before its zygote is forked (``startup._warm_up``, one per mode).
WARM_UP = {"kind": ASSERT, "id": None, "uid": None, "mode": "isolated", "timeout_s": 1.0, "wall_timeout_s": 5.0,
           "load_timeout_s": 5.0, "memory_mb": 1024, "max_output_bytes": 1 << 20, "max_processes": 32,
           "max_open_files": 64, "program": "def _ecd_warm(x):\n    return [x, str(x)]\n", "max_value_bytes": 1 << 16,
           "max_consecutive_timeouts": None, "stop_on_failure": False, "preamble": None,
           "tests": ["Pp_ecd_warm(%d)" % i for i in range(3)]}  # fmt: skip
