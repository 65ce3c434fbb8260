"""The execution service's messages: length-prefixed ``marshal`` frames of plain data, and the tuples inside.

Everything here is light (stdlib only, no judge, no fork server), because callers import it. A frame is a 4-byte
big-endian length and a ``marshal`` payload. Between a caller and the service (a Unix socket):

* ``("start", settings)`` -> ``("ok", None)``: the service's judges have fork servers for ``settings``' isolation;
* ``("run", settings, workers, jobs, sizes, keys)`` -> ``("ok", reports)``: ``jobs`` is a list of
  :func:`encode_job` bytes, at most ``workers`` of them run at once; ``keys`` per job the caller's key of its test
  list where the service may reorder a stopping job's tests (else None); ``reports`` one :func:`encode_report`
  bytes per job, in order;
* ``("info", isolation)`` -> ``("ok", (fork server pids, sandbox uids))``;
* any request -> ``("error", kind, message)`` for a request the service cannot read (a caller's bug).

Between the service and a judge process (pipes): ``("run", settings, job, order)`` -> report bytes, ``("warm",
isolation)`` and ``("info",)`` -> ``(pids, uids)``. Both peers are this package's code; ``marshal`` carries only
strings, numbers, ``None``, tuples and lists here, decoded by the caller only from its own service.

Example:
    >>> from evolvecoder_datasets.execution._protocol import decode_report, crash_report
    >>> decode_report(crash_report(2, "none", "judge failed")).statuses
    ['crash', 'crash']
"""

from __future__ import annotations

import marshal
import os
import select
import struct
import time

PROTOCOL = 3  # 2: python_env joined the settings; 3: a job's language and checker
_HEADER = struct.Struct(">I")
MAX_FRAME = 1 << 30

# Settings of a Sandbox that reach the engine, in this order (``isolation`` is the resolved one).
SETTINGS = ("timeout_s", "memory_mb", "mode", "isolation", "wall_timeout_s", "load_timeout_s", "preamble",
            "max_output_bytes", "max_processes", "max_open_files", "max_consecutive_timeouts", "max_value_bytes",
            "python_env")  # fmt: skip


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


def decode_report(data: bytes):
    from .report import ExecutionReport

    return ExecutionReport(*marshal.loads(data))


def crash_report(n: int, isolation: str, message: str, infra_error: str | None = None) -> bytes:
    """A job's report where every test is ``crash`` with ``message`` (the judge failed on it, or the service did)."""
    return marshal.dumps((["crash"] * n, [message] * n, [0.0] * n, isolation, False, infra_error, ["outside"] * n))


# -- frames on a socket (caller <-> service) ----------------------------------------------------------------------
def send(sock, obj) -> None:
    data = marshal.dumps(obj)
    sock.sendall(_HEADER.pack(len(data)) + data)


def recv(sock):
    """The next frame's object, or None at end of stream."""
    header = _recv_exact(sock, 4)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    if size > MAX_FRAME:
        raise ValueError("frame too large")
    body = _recv_exact(sock, size)
    return None if body is None else marshal.loads(body)


def _recv_exact(sock, n: int) -> bytes | None:
    if n == 0:
        return b""
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = sock.recv_into(view[got:])
        if not k:
            return None
        got += k
    return bytes(buf)


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
