"""Compiled programs and checkers in the fork server: compiling a source, running a binary, running a checker.

Three jobs, each in processes of their own under the job's limits and uid:

* ``compile`` (a toolchain server's job: one started with the compilers bound, that runs nothing else): the
  source is written to the job's folder, the language's compile command runs as the sandbox uid, and the binary
  comes back as base64 (at most ``max_binary_bytes``); the compiler's messages come back on a failure.
* a stdin/stdout job with a ``binary``: the binary is put in a sealed in-memory file (``memfd``, no write, grow or
  shrink once sealed) before any program process exists, and each case's process executes it from there
  (:func:`exec_case`): a program cannot change what a later case or program runs.
* ``check`` (a checker server's job: one that never runs programs, so the expected answers it holds never share a
  process with a program): per case a fresh folder with copies of the input, the program's output and the answer,
  and the checker run on them under the testlib or Kattis contract; what comes back is its exit code (or the
  reason it was killed) and the first bytes of what it said, up to the first case on which the checker failed (the
  rest is not run: that job's reward is ``None`` anyway). The verdict is the caller's
  (:mod:`~evolvecoder_datasets.execution.checkers`).
"""

from __future__ import annotations

import binascii
import fcntl
import os
import resource
import sys

from .job import CheckJob, CompileJob, PrecompiledHeader, StdioJob
from .limits import Limits, _enter_child
from .pristine import _close, _exit, _fork, _len, pin_builtins
from .processes import Output, sweep_children, wait_with_limits

pin_builtins(globals())

_SEALS = ("F_SEAL_SEAL", "F_SEAL_SHRINK", "F_SEAL_GROW", "F_SEAL_WRITE")
_MESSAGE_BYTES = 16384


def sealed_binary(data: bytes) -> int:
    """An fd of a sealed, close-on-exec in-memory file holding ``data`` (an executable)."""
    fd = os.memfd_create("program", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    view, done = memoryview(data), 0
    while done < _len(data):
        done += os.write(fd, view[done:])
    seals = 0
    for name in _SEALS:
        seals |= getattr(fcntl, name, 0)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
    return fd


def job_binary(job: StdioJob | CheckJob) -> int:
    """The sealed fd of a job's ``binary`` (base64), or -1 where it runs Python."""
    text = job.binary
    if not text:
        return -1
    return sealed_binary(binascii.a2b_base64(text, strict_mode=True))


def exec_case(exe_fd: int, memory: int) -> None:
    """In a case's process, stdin and stdout in place: become the compiled program (never returns but by
    ``_exit(127)`` when the binary cannot start, which the server reads as a run-time error)."""
    try:
        stack = min(memory, 256 << 20) if memory > 0 else 256 << 20  # contest programs recurse deep
        resource.setrlimit(resource.RLIMIT_STACK, (stack, stack))
    except (ValueError, OSError):
        pass
    try:
        os.execve(exe_fd, ["program"], dict(os.environ))
    finally:
        _exit(127)


def _run_tool(argv: list, exe_fd: int, stdin_path: str | None, limits: Limits, folder: str, cpu_s: float,
              wall_s: float, cap: int, stderr: bool = True) -> tuple:
    """Run ``argv`` (``argv[0]`` a path, or ``exe_fd`` the binary) in a child under ``limits`` in ``folder``, stdout
    (and stderr, unless ``stderr`` is false) on one pipe read up to ``cap``. Returns ``(wait status, cpu seconds,
    killed, output bytes)``."""
    rfd, wfd = os.pipe()
    pid = _fork()
    if pid == 0:
        try:
            fd = os.open(stdin_path or os.devnull, os.O_RDONLY | os.O_NOFOLLOW)
            os.dup2(fd, 0)
            os.dup2(wfd, 1)
            if stderr:
                os.dup2(wfd, 2)
            _enter_child(limits, -1, folder, session=True, also_keep=exe_fd)
            os.execve(exe_fd if exe_fd >= 0 else argv[0], argv, dict(os.environ))
        finally:
            _exit(127)
    _close(wfd)
    output = Output(rfd, cap)
    status, cpu, killed = wait_with_limits(pid, cpu_s, wall_s, output)
    sweep_children()
    return status, cpu, killed, output.finish()[:cap]


def read_regular(path: str | os.PathLike, cap: int) -> bytes | None:
    """The bytes of a regular file (not a link, a FIFO or a device) of at most ``cap`` bytes, else None.

    No link is followed and no FIFO or device is waited on. ``None`` also when the file cannot be opened; an error
    while reading an opened file is raised (``OSError``). The fork server reads a compiled binary and a checker's
    message with it, the exported task's verifier the agent's solution.

    Example:
        >>> from evolvecoder_datasets.execution._forkserver.tools import read_regular
        >>> read_regular("/nonexistent/file", 10) is None, read_regular("/dev/null", 10) is None
        (True, True)
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        import stat

        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > cap:
            return None
        chunks, size = [], 0
        while size <= cap:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += _len(chunk)
        return None if size > cap else b"".join(chunks)
    finally:
        _close(fd)


def _write(path: str, data: bytes, mode: int = 0o644) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        view, done = memoryview(data), 0
        while done < _len(data):
            done += os.write(fd, view[done:])
    finally:
        _close(fd)
    os.chmod(path, mode)


def _own(path: str, uid) -> None:
    if uid is not None and os.geteuid() == 0:
        os.chown(path, uid, uid)


def _ending(status: int, killed) -> tuple:
    """``(exit code or None, killed)`` of a tool process."""
    if killed is None and os.WIFEXITED(status):
        return os.WEXITSTATUS(status), None
    return None, killed or "signal"


# Precompiled headers this server built, by their build command: the folder to put first on the include path, or
# None where building failed (compiles go on without it).
_PRECOMPILED: dict = {}


def _precompiled(spec: PrecompiledHeader | None, limits: Limits, root: str, cpu_s: float, wall_s: float) -> str | None:
    """The include folder holding ``spec.header``'s precompiled form, built once per server from our own one-line
    source (``#include <header>``) with ``spec.command``. It runs as this server's own user, not the sandbox uid:
    its input is ours, and the file it leaves must stay out of a compile job's reach (a program compiled later
    cannot write it). The folder has a name nobody can guess, in this server's private ``/tmp``."""
    if spec is None or not spec.command:
        return None
    key = "\0".join(spec.command) + "\0" + spec.header
    if key in _PRECOMPILED and (_PRECOMPILED[key] is None or os.path.isdir(_PRECOMPILED[key])):
        return _PRECOMPILED[key]
    import tempfile

    _PRECOMPILED[key] = None
    folder = tempfile.mkdtemp(prefix="ecd-pch-", dir=root)  # not TMPDIR: that is the job's folder, emptied after it
    os.chmod(folder, 0o755)
    target = os.path.join(folder, spec.header + ".gch")
    os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
    source = os.path.join(folder, "header.h")
    _write(source, f"#include <{spec.header}>\n".encode())
    argv = [source if part == "{src}" else target if part == "{out}" else part for part in spec.command]
    # Our own build, as this server's user: the compile job's memory, room for the header's output, and a CPU cap
    # with the slack every job's has (two seconds to load, two more).
    own = Limits(memory=limits.memory, fsize=512 << 20, nofile=256, nproc=64, uid=None, cpu=int(2.0 + cpu_s + 2.0) + 1)
    status, _cpu, killed, _said = _run_tool(argv, -1, None, own, folder, cpu_s, wall_s, _MESSAGE_BYTES)
    if killed is None and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and os.path.isfile(target):
        os.chmod(target, 0o644)
        _PRECOMPILED[key] = folder
    return _PRECOMPILED[key]


def run_compile(job: CompileJob, limits: Limits, workdir: str) -> dict:
    """Compile ``job.source`` with ``job.command`` (``{src}``/``{out}`` filled in) in ``workdir``."""
    source_name = job.source_name
    _write(os.path.join(workdir, source_name), job.source.encode("utf-8", "surrogateescape"))
    argv = [source_name if part == "{src}" else "program" if part == "{out}" else part for part in job.command]
    precompiled = _precompiled(job.pch, limits, os.path.dirname(workdir), job.pch_cpu_s, job.pch_wall_s)
    if precompiled is not None:  # first on the include path: used where the source includes the header first
        argv[1:1] = ["-I", precompiled]
    cpu_s, wall_s = job.timeout_s, job.wall_timeout_s
    status, cpu, killed, said = _run_tool(argv, -1, None, limits, workdir, cpu_s, wall_s, _MESSAGE_BYTES)
    code, killed = _ending(status, killed)
    message = said.decode("utf-8", "replace")
    reply = {"statuses": ["done"], "messages": [""], "cpu": [cpu], "binary": None}
    if code != 0:
        why = {"cpu": "the compiler hit its CPU limit", "wall": "the compiler hit its wall-clock limit"}.get(
            killed or "", f"compile error (exit {code})" if code is not None else "the compiler was killed")
        reply["statuses"], reply["messages"] = ["syntax_error"], [f"{why}: {message}"[:4000]]
        return reply
    binary = read_regular(os.path.join(workdir, "program"), job.max_binary_bytes)
    if binary is None:
        reply["statuses"], reply["messages"] = ["syntax_error"], ["the compiler left no binary within the limits"]
        return reply
    reply["binary"] = binascii.b2a_base64(binary, newline=False).decode("ascii")
    return reply


def run_check(job: CheckJob, limits: Limits, workdir: str) -> dict:
    """Run the job's checker on each of its ``cases`` (``[input, output, answer]``) under its ``contract``."""
    contract = job.contract
    exe_fd = job_binary(job)
    script = None
    if exe_fd < 0:
        script = os.path.join(workdir, "checker.py")
        _write(script, str(job.source).encode("utf-8", "surrogateescape"))
    cpu_s, wall_s = job.timeout_s, job.wall_timeout_s
    known = {"testlib": (0, 1, 2, 7), "kattis": (42, 43), "codeforces": (0,)}.get(contract, ())
    endings, messages, cpu = [], [], []
    try:
        for i, (given, output, answer) in enumerate(job.cases):
            folder = os.path.join(workdir, f"case{i}")
            os.mkdir(folder, 0o755)
            paths = [os.path.join(folder, name) for name in ("input", "output", "answer")]
            for path, text in zip(paths, (given, output, answer)):
                _write(path, text.encode("utf-8", "surrogateescape"), 0o444)
            feedback = os.path.join(folder, "feedback")
            os.mkdir(feedback, 0o755)
            _own(feedback, limits.uid)
            _own(folder, limits.uid)
            if contract == "kattis":
                args, stdin = [paths[0], paths[2], feedback + "/"], paths[1]
            elif contract == "codeforces":  # input, answer, output; its stdout is its score
                args, stdin = [paths[0], paths[2], paths[1]], None
            else:
                args, stdin = paths, None
            argv = [sys.executable, "-I", "-B", script, *args] if script else ["checker", *args]
            status, used, killed, said = _run_tool(argv, exe_fd, stdin, limits, folder, cpu_s, wall_s, _MESSAGE_BYTES,
                                                   stderr=contract != "codeforces")  # fmt: skip
            code, killed = _ending(status, killed)
            if contract == "kattis":
                note = read_regular(os.path.join(feedback, "judgemessage.txt"), _MESSAGE_BYTES) or b""
                said = note + b"\n" + said
            endings.append([code, killed])
            messages.append(said[:_MESSAGE_BYTES].decode("utf-8", "replace"))
            cpu.append(used)
            if code not in known:  # the checker failed: the rest is not checked (the caller says so)
                break
    finally:
        if exe_fd >= 0:
            _close(exe_fd)
    return {"statuses": ["done"] * _len(endings), "messages": messages, "cpu": cpu, "endings": endings}
