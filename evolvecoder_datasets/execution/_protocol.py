"""The execution service's messages: length-prefixed ``marshal`` frames of plain data, and the tuples inside.

Everything here is light (stdlib only, no judge, no fork server), because callers import it. A frame is a 4-byte
big-endian length and a ``marshal`` payload. Between a caller and the service (a Unix socket):

* ``("start", settings)`` -> ``("ok", None)``: the service's judges have fork servers for ``settings``' isolation;
* ``("run", settings, workers, jobs, sizes, keys)`` -> ``("ok", reports)``: ``jobs`` is a list of
  :func:`encode_job` bytes, at most ``workers`` of them run at once; ``keys`` per job the caller's key of its test
  list where the service may reorder a stopping job's tests (else None); ``reports`` one :func:`encode_report`
  bytes per job, in order;
* ``("info", isolation)`` -> ``("ok", (fork server pids, sandbox uids))``;
* any request -> ``("error", kind, message)`` for a request the service cannot read (a caller's bug), or a frame
  over :data:`MAX_REQUEST_FRAME` (then the service closes the connection).

Frames on the socket are read against their declared size in chunks, never allocated up front: a request over
:data:`MAX_REQUEST_FRAME` is refused by its header, a reply over :data:`MAX_REPLY_FRAME` too, and a sender that
goes silent for :data:`FRAME_STALL_S` in the middle of a frame is dropped. A reply is checked for its shape
(:func:`check_reply`, :func:`decode_report`) before a verdict in it is believed: a malformed one is
:class:`ReplyError`, which callers turn into an infrastructure failure, never into a verdict.

Between the service and a judge process (pipes): ``("run", settings, job, order)`` -> report bytes, ``("warm",
isolation)`` and ``("info",)`` -> ``(pids, uids)``. Both peers are this package's code; ``marshal`` carries only
strings, numbers, ``None``, tuples and lists here, decoded by the caller only from its own service (a peer that
runs as the caller's uid, checked by :mod:`._trust`).

Example:
    >>> from evolvecoder_datasets.execution._protocol import decode_report, crash_report
    >>> decode_report(crash_report(2, "none", "judge failed")).statuses
    ['crash', 'crash']
"""

from __future__ import annotations

import marshal
import math
import operator
import os
import select
import struct
import time

PROTOCOL = 3  # 2: python_env joined the settings; 3: a job's language and checker
_HEADER = struct.Struct(">I")
# Frames between the service and its judge processes or fork servers (pipes of this package's own processes).
MAX_FRAME = 1 << 30
# A caller's request frame. The largest legitimate job we document: a program and tests of at most 1 MiB of
# characters each (the reward service's text cap), 35 tests for a GRPO job (~36 MiB at worst), or a contest job's
# stdin cases with their answers (a program's output is capped at max_output_bytes, 1 MiB by default). 256 MiB holds
# any of those several times over (120 cases of 1 MiB in and 1 MiB out); the caller splits a larger batch into
# frames of this size (:func:`batch_frames`), so only a single job over it is refused (a ConfigError, before
# anything is sent).
MAX_REQUEST_FRAME = 256 << 20
# A reply frame, read by the caller: reports are small (a message is cut at 4,000 characters) except a valuing
# job's outputs (each case up to max_output_bytes + 1 bytes, up to 3 bytes per byte once invalid UTF-8 is
# replaced); the caller sizes its frames so that their replies fit (:func:`reply_bound`).
MAX_REPLY_FRAME = 1 << 30
# Tests (or stdin/stdout cases) in one job: a crash report, the failure counts and the judge's budgets are per
# test, so the count is bounded where the bytes are (HumanEval suites have ~10, evolved suites hundreds).
MAX_JOB_TESTS = 1 << 16
# Seconds a sender may stay silent in the middle of a frame (a whole frame is written at once by our peers).
FRAME_STALL_S = 30.0
_CHUNK = 1 << 20


class ReplyError(ValueError):
    """A frame or a reply that does not have the protocol's shape or size (the peer is broken, or not ours)."""


class FrameTooLarge(ReplyError):
    """A frame header declared more bytes than the reader's cap."""

    def __init__(self, size: int, cap: int) -> None:
        self.size, self.cap = size, cap
        super().__init__(f"a frame of {size} bytes is over the cap of {cap} bytes")

# Settings of a Sandbox that reach the engine, in this order (``isolation`` is the resolved one).
SETTINGS = ("timeout_s", "memory_mb", "mode", "isolation", "wall_timeout_s", "load_timeout_s", "preamble",
            "max_output_bytes", "max_processes", "max_open_files", "max_consecutive_timeouts", "max_value_bytes",
            "python_env")  # fmt: skip


def wire_settings(settings, isolation: str) -> tuple:
    """The :data:`SETTINGS` tuple a request carries for a sandbox of ``settings`` (a
    :class:`~evolvecoder_datasets.limits.SandboxSettings`): its values by name, with ``isolation`` the one detected
    at start and the wall and load limits resolved (``wall_limit_s``, ``load_limit_s``), as the engine runs by them.

    Example:
        >>> from evolvecoder_datasets.limits import SandboxSettings
        >>> values = dict(zip(SETTINGS, wire_settings(SandboxSettings(timeout_s=0.5), "none")))
        >>> values["isolation"], values["timeout_s"], values["wall_timeout_s"], values["load_timeout_s"]
        ('none', 0.5, 3.0, 2.0)
    """
    values = list(_read_settings(settings))  # one attrgetter: made for every request, so it is kept cheap (~0.6 us)
    values[0], values[_ISOLATION] = float(values[0]), isolation
    return tuple(values)


# What each of :data:`SETTINGS` is read from on a ``SandboxSettings``: the wall and load limits resolved by its
# properties, and a placeholder for ``isolation``, which the caller detected.
_read_settings = operator.attrgetter(*({"wall_timeout_s": "wall_limit_s", "load_timeout_s": "load_limit_s",
                                        "isolation": "mode"}.get(name, name) for name in SETTINGS))  # fmt: skip
_ISOLATION = SETTINGS.index("isolation")
assert SETTINGS[0] == "timeout_s"


def encode_job(job) -> bytes:
    """One :class:`~evolvecoder_datasets.execution.Job` as bytes (its fields, in order)."""
    tests = None if job.tests is None else [str(t) for t in job.tests]
    inputs = None if job.inputs is None else [str(t) for t in job.inputs]
    outputs = None if job.outputs is None else [str(t) for t in job.outputs]
    checker = None if job.checker is None else job.checker.as_tuple()
    return marshal.dumps((job.program, tests, inputs, outputs, job.float_tol, job.timeout_s, job.stop_on_failure,
                          job.language, checker))  # fmt: skip


def encode_report(report) -> bytes:
    """An :class:`~evolvecoder_datasets.execution.ExecutionReport` as bytes (its fields, in order)."""
    return marshal.dumps((list(report.statuses), list(report.messages), [float(c) for c in report.cpu_s],
                          report.isolation, bool(report.uid_dropped), report.infra_error, list(report.judged),
                          None if report.outputs is None else list(report.outputs)))  # fmt: skip


def decode_report(data: bytes, size: int | None = None):
    """An :class:`~evolvecoder_datasets.execution.ExecutionReport` from :func:`encode_report` bytes, checked field by
    field (types, known statuses, one value per test, ``size`` tests where given).

    Raises:
        ReplyError: the bytes are not such a report.

    Example:
        >>> decode_report(crash_report(1, "none", "judge failed"), 2)
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.execution._protocol.ReplyError: a malformed report (statuses: 1, tests: 2)
    """
    from ..schema import STATUS_NAMES
    from .report import ExecutionReport

    try:
        fields = plain_loads(data) if type(data) is bytes else None
    except (ValueError, EOFError, TypeError):
        fields = None
    if type(fields) is not tuple or len(fields) not in (7, 8):
        raise ReplyError(f"a report is not a tuple of 7 or 8 fields: {_brief(fields)}")
    statuses, messages, cpu_s, isolation, dropped, infra, judged, *rest = fields
    outputs = rest[0] if rest else None
    n = len(statuses) if type(statuses) is list else -1
    problems = [
        (n < 0 or (size is not None and n != size), f"statuses: {n if n >= 0 else _brief(statuses)}, tests: {size}"),
        (not all(type(x) is str and x in STATUS_NAMES for x in statuses or ()), "an unknown status"),
        (not _list_of(messages, n, (str,)), "messages"),
        (not _list_of(cpu_s, n, (float,)) or not all(math.isfinite(c) for c in cpu_s), "cpu_s"),
        (isolation not in ("bwrap", "unshare", "none"), "isolation"),
        (type(dropped) is not bool, "uid_dropped"),
        (infra is not None and type(infra) is not str, "infra_error"),
        (not (_list_of(judged, n, (str,)) or judged == []) or not set(judged) <= {"inside", "outside"}, "judged"),
        (outputs is not None and not _list_of(outputs, n, (str, type(None))), "outputs"),
    ]
    for bad, what in problems:
        if bad:
            raise ReplyError(f"a malformed report ({what})")
    return ExecutionReport(statuses, messages, cpu_s, isolation, dropped, infra, judged, outputs)


def _list_of(value, n: int, types: tuple) -> bool:
    return type(value) is list and len(value) == n and all(type(x) in types for x in value)


def _brief(value) -> str:
    return repr(value)[:80] if type(value) in (str, int, float, bool, type(None)) else type(value).__name__


def check_reply(reply) -> tuple:
    """``reply`` when it has a reply's shape: ``("ok", ...)``, or ``("error", kind, message)`` of strings.

    Raises:
        ReplyError: anything else.

    Example:
        >>> check_reply(("ok", None))
        ('ok', None)
    """
    if type(reply) is not tuple or not reply or reply[0] not in ("ok", "error"):
        raise ReplyError(f"not a reply of the service: {_brief(reply)}")
    if reply[0] == "error" and not (len(reply) == 3 and all(type(x) is str for x in reply[1:])):
        raise ReplyError("an error reply that is not (error, kind, message) of strings")
    if reply[0] == "ok" and len(reply) < 2:
        raise ReplyError("an ok reply without its value")
    return reply


def run_reports(reply: tuple, n: int) -> list[bytes]:
    """The report bytes of an ``("ok", reports)`` answer to a ``run`` of ``n`` jobs.

    Raises:
        ReplyError: not a list of ``n`` byte strings.

    Example:
        >>> run_reports(("ok", [crash_report(1, "none", "x")]), 1) == [crash_report(1, "none", "x")]
        True
    """
    value = reply[1]
    if len(reply) != 2 or type(value) is not list or len(value) != n or not all(type(b) is bytes for b in value):
        raise ReplyError(f"a run of {n} jobs answered {_brief(value)} instead of {n} reports")
    return value


def reply_bound(size: int, valuing: bool, max_output_bytes: int) -> int:
    """At most how many bytes the report of a job of ``size`` tests takes in a reply: a message is cut at 4,000
    characters (4 bytes each at worst in UTF-8), and a valuing job brings back what each case printed (up to
    ``max_output_bytes`` + 1 bytes, each invalid byte replaced by 3 bytes).

    Example:
        >>> reply_bound(1, False, 1 << 20)
        17408
    """
    per_test = 16_384 + (3 * (max_output_bytes + 1) if valuing else 0)
    return 1024 + size * per_test


def batch_frames(jobs: list[bytes], bounds: list[int], settings_bytes: int = 0) -> list[tuple[int, int]]:
    """Consecutive ranges ``[a, b)`` of a batch's ``jobs`` whose request fits :data:`MAX_REQUEST_FRAME` and whose
    reply (``bounds``: per job, :func:`reply_bound`) fits :data:`MAX_REPLY_FRAME`; one range for any ordinary batch.

    Raises:
        OverflowError: one job alone does not fit (its index and size are in the message).

    Example:
        >>> batch_frames([b"x" * 10, b"y" * 10], [100, 100])
        [(0, 2)]
    """
    room = MAX_REQUEST_FRAME - settings_bytes - 4096
    ranges, start, held, replies = [], 0, 0, 0
    for i, (job, bound) in enumerate(zip(jobs, bounds)):
        need = len(job) + 128  # the job's bytes, its size and its key
        if need > room or bound > MAX_REPLY_FRAME:
            raise OverflowError(f"job {i} takes {len(job)} bytes (its report up to {bound}); the execution service "
                                f"takes at most {room} bytes per request and {MAX_REPLY_FRAME} per reply")  # fmt: skip
        if i > start and (held + need > room or replies + bound > MAX_REPLY_FRAME):
            ranges.append((start, i))
            start, held, replies = i, 0, 0
        held, replies = held + need, replies + bound
    if start < len(jobs):
        ranges.append((start, len(jobs)))
    return ranges


def crash_report(n: int, isolation: str, message: str, infra_error: str | None = None) -> bytes:
    """A job's report where every test is ``crash`` with ``message`` (the judge failed on it, or the service did)."""
    return marshal.dumps((["crash"] * n, [message] * n, [0.0] * n, isolation, False, infra_error, ["outside"] * n))


def checked_settings(settings) -> tuple:
    """A request's settings when they have the shape the front reads (the judge process checks the rest).

    Raises:
        ValueError: not a tuple of :data:`SETTINGS`, or a wall or load limit that is not a positive number.

    Example:
        >>> checked_settings(("too", "short"))
        Traceback (most recent call last):
        ...
        ValueError: settings must be a tuple of 13 values
    """
    if type(settings) is not tuple or len(settings) != len(SETTINGS):
        raise ValueError(f"settings must be a tuple of {len(SETTINGS)} values")
    values = dict(zip(SETTINGS, settings))
    for name in ("wall_timeout_s", "load_timeout_s"):
        value = values[name]
        if type(value) not in (int, float) or not math.isfinite(value) or value <= 0:
            raise ValueError(f"{name} must be a positive number, got {_brief(value)}")
    if values["isolation"] not in ("bwrap", "unshare", "none"):
        raise ValueError(f"unknown isolation {_brief(values['isolation'])}")
    return settings


def checked_run(request) -> tuple[tuple, int, list, list, list]:
    """The parts of a caller's ``("run", settings, workers, jobs, sizes[, keys])``, believed only as far as they
    are checked: ``(settings, workers, jobs, jobs' (size, language, has a checker), keys)``. A job's size is
    counted from its own bytes (the caller's ``sizes`` must agree) and is at most :data:`MAX_JOB_TESTS`; a key is
    None or a hashable tuple that starts with that size.

    Raises:
        ValueError: what does not fit, named (the caller's bug: an error reply, nothing runs).

    Example:
        >>> from evolvecoder_datasets.execution import Sandbox, Job
        >>> sb = Sandbox(isolation="none")
        >>> settings = wire_settings(sb.settings, "none")
        >>> job = encode_job(Job("x = 1", tests=["assert x == 1"]))
        >>> checked_run(("run", settings, 1, [job], [1], [None]))[3]
        [(1, 'python', False)]
        >>> checked_run(("run", settings, 1, [job], [10**9], [None]))
        Traceback (most recent call last):
        ...
        ValueError: job 0 is not an encoded job of 1000000000 tests
    """
    if type(request) is not tuple or len(request) not in (5, 6):
        raise ValueError("a run request is (run, settings, workers, jobs, sizes[, keys])")
    _, settings, workers, jobs, sizes, *keys = request
    keys = keys[0] if keys else None
    settings = checked_settings(settings)
    if type(workers) is not int or workers < 1:
        raise ValueError(f"workers must be a positive int, got {_brief(workers)}")
    if type(jobs) is not list or type(sizes) is not list or len(sizes) != len(jobs):
        raise ValueError("jobs and sizes must be lists of the same length")
    keys = [None] * len(jobs) if keys is None else keys
    if type(keys) is not list or len(keys) != len(jobs):
        raise ValueError("keys must be a list with one key per job")
    shapes = []
    for i, (job, size, key) in enumerate(zip(jobs, sizes, keys)):
        shape = _job_shape(job)
        if shape is None or shape[0] != size:
            raise ValueError(f"job {i} is not an encoded job of {_brief(size)} tests")
        if key is not None and not (type(key) is tuple and key and key[0] == size and _hashable(key)):
            raise ValueError(f"job {i}'s key is not a tuple of its size and its hash")
        shapes.append(shape)
    return settings, workers, jobs, shapes, keys


def _job_shape(job) -> tuple[int, str, bool] | None:
    """``(size, language, has a checker)`` of :func:`encode_job` bytes, or None where they are not a job."""
    try:
        fields = plain_loads(job) if type(job) is bytes else None
    except (ValueError, EOFError, TypeError):
        return None
    if type(fields) is not tuple or len(fields) < 7:
        return None
    cases = fields[2] if fields[2] is not None else fields[1]
    if cases is not None and (type(cases) is not list or len(cases) > MAX_JOB_TESTS):
        return None
    language = fields[7] if len(fields) > 7 else "python"
    return len(cases or ()), language if type(language) is str else "?", len(fields) > 8 and fields[8] is not None


def _hashable(key: tuple) -> bool:
    try:
        hash(key)
    except TypeError:
        return False
    return True


# -- what a frame may hold ---------------------------------------------------------------------------------------
# ``marshal.loads`` makes a container of the size its data declares before reading an item of it (13 bytes that
# declared a tuple of 2**26 items took a front from 25 MiB to 537 MiB), and rebuilds shared items as shared, so 196
# bytes can hold a tuple whose hash visits 2**26 tuples (2.7 s of a front's CPU, the GIL held). Frames between a
# caller and the service are therefore proven plain before they are decoded: None, booleans, ints, floats, strings,
# bytes, tuples and lists, nested at most MAX_NESTING levels, each container declaring no more items than bytes left,
# and back-references only to finished objects, each counted as the whole tree it stands for: the decoded object,
# walked as a tree (a hash, a repr, a comparison), has at most twice as many nodes as the frame has bytes, plus 4,096
# (a sandbox's token tuple, shared by the keys of a request, is such a reference).
MAX_NESTING = 100
_SCALARS = {ord("N"): 0, ord("F"): 0, ord("T"): 0, ord("i"): 4, ord("g"): 8}
_SIZED = {ord(c): 4 for c in "stuaA"} | {ord("z"): 1, ord("Z"): 1}  # strings, bytes: a length, then the bytes
_CONTAINERS = {ord("("): 4, ord("["): 4, ord(")"): 1}  # tuple, list, small tuple: a count, then the items
_INT32 = struct.Struct("<i")


def check_plain(data) -> None:
    """Prove that the ``marshal`` payload ``data`` is plain data whose decoding costs what arrived (see above).

    Raises:
        ValueError: another type (a code object, a dict, a set, ...), a count over the bytes left, nesting past
            :data:`MAX_NESTING`, a reference to an unfinished container or past the node budget, or data cut
            short; nothing was decoded.

    Example:
        >>> check_plain(marshal.dumps(("run", [b"job"], [1.5, None])))
        >>> check_plain(b"(" + (2**26).to_bytes(4, "little"))
        Traceback (most recent call last):
        ...
        ValueError: not plain marshal data: a container of 67108864 items in 0 bytes
    """
    end, pos, nodes = len(data), 0, 0
    budget = 2 * end + 4096
    trees: list[int | None] = []  # per object marshal numbers (flagged, no singleton): its nodes, None while open
    open_items = [[1, -1, 0]]  # per open container: items left, its number (or -1), nodes before it
    try:
        while open_items:
            top = open_items[-1]
            if not top[0]:
                open_items.pop()
                if top[1] >= 0:
                    trees[top[1]] = nodes - top[2]
                continue
            top[0] -= 1
            code = data[pos]
            kind, pos, nodes = code & 0x7F, pos + 1, nodes + 1
            if kind in _SCALARS:
                pos += _SCALARS[kind]
                if code & 0x80 and kind not in b"NFT":
                    trees.append(1)
            elif kind in _SIZED:
                n = data[pos] if _SIZED[kind] == 1 else _INT32.unpack_from(data, pos)[0]
                pos += _SIZED[kind] + (n if n >= 0 else end)
                trees += [1] * (code >> 7)
            elif kind == ord("l"):  # an int of |n| 15-bit digits
                pos += 4 + 2 * abs(_INT32.unpack_from(data, pos)[0])
                trees += [1] * (code >> 7)
            elif kind == ord("r"):
                n = _INT32.unpack_from(data, pos)[0]
                if not 0 <= n < len(trees) or trees[n] is None:
                    raise ValueError("a reference to an unfinished container (or to nothing)")
                pos, nodes = pos + 4, nodes - 1 + trees[n]
            elif kind in _CONTAINERS:
                n = data[pos] if _CONTAINERS[kind] == 1 else _INT32.unpack_from(data, pos)[0]
                pos += _CONTAINERS[kind]
                if not 0 <= n <= end - pos:
                    raise ValueError(f"a container of {n} items in {end - pos} bytes")
                if len(open_items) > MAX_NESTING:
                    raise ValueError(f"nested deeper than {MAX_NESTING} levels")
                open_items.append([n, len(trees) if code & 0x80 else -1, nodes - 1])
                trees += [None] * (code >> 7)
            else:
                raise ValueError(f"marshal type {chr(kind)!r} is not plain data")
            if pos > end:
                raise IndexError
            if nodes > budget:
                raise ValueError(f"references that stand for more than {budget} items")
    except (IndexError, struct.error):
        raise ValueError("not plain marshal data: cut short") from None
    except ValueError as err:
        raise ValueError(f"not plain marshal data: {err}") from None


def plain_loads(data):
    """``marshal.loads(data)`` once :func:`check_plain` proved it plain (raises its ValueError otherwise)."""
    check_plain(data)
    return marshal.loads(data)


# -- frames on a socket (caller <-> service) ----------------------------------------------------------------------
def send(sock, obj) -> None:
    data = marshal.dumps(obj)
    sock.sendall(_HEADER.pack(len(data)) + data)


def recv(sock, cap: int = MAX_REPLY_FRAME):
    """The next frame's object, or None at end of stream.

    Example:
        >>> import socket
        >>> a, b = socket.socketpair()
        >>> send(a, ("ping",)); recv(b)
        ('ping',)
        >>> a.sendall(_HEADER.pack(10**9)); recv(b, cap=100)
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.execution._protocol.FrameTooLarge: a frame of 1000000000 bytes is over the cap of 100 bytes

    Raises:
        FrameTooLarge: the header declares more than ``cap`` bytes (nothing more is read).
        ReplyError: the payload is not plain ``marshal`` data (:func:`check_plain`).
        OSError: the sender stalled for :data:`FRAME_STALL_S` inside the frame, or the connection broke.
    """
    size = recv_header(sock)
    if size is None:
        return None
    if size > cap:
        raise FrameTooLarge(size, cap)
    body = recv_body(sock, size)
    if body is None:
        return None
    try:
        return plain_loads(body)
    except (ValueError, EOFError, TypeError) as err:
        raise ReplyError(f"a frame that is not marshal data: {err}") from None


def recv_header(sock) -> int | None:
    """The size a frame's header declares; None at end of stream (waits as long as the peer is idle)."""
    header = b""
    while len(header) < _HEADER.size:
        chunk = sock.recv(_HEADER.size - len(header))
        if not chunk:
            return None
        header += chunk
    return _HEADER.unpack(header)[0]


def recv_body(sock, size: int, stall_s: float = FRAME_STALL_S, reserve=None) -> bytearray | None:
    """A frame's ``size`` bytes, read as they come (memory grows with what arrived, never with what the header
    claimed); None where the stream ends first. A silence of ``stall_s`` seconds raises ``TimeoutError``.
    ``reserve(n)``, where given, is called before a chunk is read for the ``n`` bytes it may add to what was
    reserved (at most what arrived plus one chunk, at most ``size`` in all)."""
    before = sock.gettimeout()
    sock.settimeout(stall_s if before is None else min(before, stall_s))
    buf = bytearray()
    reserved = 0
    try:
        while len(buf) < size:
            want = min(_CHUNK, size - len(buf))
            if reserve is not None and len(buf) + want > reserved:
                reserve(len(buf) + want - reserved)
                reserved = len(buf) + want
            chunk = sock.recv(want)
            if not chunk:
                return None
            buf += chunk
    finally:
        sock.settimeout(before)
    return buf


# -- frames on pipes (service <-> judge process) --------------------------------------------------------------------
def write_frame(fd: int, data: bytes) -> None:
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def read_frame(fd: int, deadline: float | None = None, on_wait=None) -> bytes | None:
    """One frame's payload from ``fd``; None at end of stream, past ``deadline`` or when ``on_wait()`` (called
    about every 50 ms while nothing comes) returns False. The engine reads its fork servers' JSON frames with it
    too (the same framing: a 4-byte big-endian length, then the payload)."""
    header = _read_exact(fd, 4, deadline, on_wait)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    if size > MAX_FRAME:
        return None
    return _read_exact(fd, size, deadline, on_wait)


def _read_exact(fd: int, n: int, deadline, on_wait) -> bytes | None:
    chunks, remaining = [], n
    while remaining:
        if deadline is not None or on_wait is not None:
            while True:
                left = None if deadline is None else deadline - time.monotonic()
                wait = left if on_wait is None else (0.05 if left is None else min(0.05, left))
                if wait <= 0:
                    return None
                if select.select([fd], [], [], wait)[0]:
                    break
                if on_wait is not None and not on_wait():
                    return None
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
