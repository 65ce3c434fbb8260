"""Inside the solution process S: loading the program once, running its tests, reporting each on the result pipe.

``_solution_child`` (assert jobs) and ``_stdio_child`` (stdin/stdout programs) are the bodies of S. Fast mode runs
every test in S; isolated mode runs each in its own process, started as the server's child where it can be
(``_clone_per_case``), else forked and supervised by S (``_fork_per_case``). A split test's probes are evaluated
here and their values sent in the wire encoding; a whole test runs with the in-process hardening (``values``).
"""

from __future__ import annotations

import ctypes
import io
import os
import signal
import sys
import types

from . import libc, pristine, processes
from .job import AssertJob, ProgramJob, StdioJob
from .limits import Limits, _enter_child
from .lines import MAX_MESSAGE, _Reporter
from .prepared import _STRIP_NAME, PreparedTest, test_from_wire
from .pristine import (
    _BUILTIN_NAMES,
    _AssertionError,
    _b2a,
    _BaseException,
    _close,
    _exit,
    _fork,
    _FunctionType,
    _getpid,
    _id,
    _isinstance,
    _len,
    _MemoryError,
    _process_time,
    _read,
    _read_exact,
    _setpgid,
    _stdlib_imports,
    _SystemExit,
    _type,
    pin_builtins,
    snapshot_stdlib_modules,
)
from .processes import Output, _children, sweep_children, wait_with_limits
from .tools import exec_case
from .traces import _Traces
from .values import hardened_compare, strip_value

try:  # started by the sandbox: the execution folder is on the path, the package is not imported
    import _wire
    import _wire_own
except ImportError:  # imported as part of the package (tests, tools)
    from .. import _wire, _wire_own

pin_builtins(globals())


def _exception_status(err: BaseException, limit: int = MAX_MESSAGE) -> tuple[str, str]:
    if _isinstance(err, _AssertionError):
        msg = str(err)
        return "fail", ("AssertionError: " + msg if msg else "AssertionError")[:limit]
    if _isinstance(err, _MemoryError):
        return "memory", "MemoryError"
    if _isinstance(err, _SystemExit):
        return "error", f"SystemExit({err.code!r}) raised"[:limit]
    try:
        text = f"{_type(err).__name__}: {err}"
    except _BaseException:
        text = _type(err).__name__
    return "error", text[:limit]


def _test_globals(namespace: dict) -> dict:
    """The namespace a test runs in: the program's names, minus any that shadow a builtin, over pristine builtins.

    A program that rebinds ``builtins.sorted`` or defines a global ``len`` cannot change what the test's own
    ``sorted(...)``/``len(...)`` mean, and one that rebinds ``math.isclose`` cannot change the test's
    ``math.isclose``: standard-library modules are seen through pristine copies. The program's own functions still
    see whatever it set up for itself.
    """
    copies = pristine._PRISTINE_MODULES
    scope = {k: copies.get(_id(v), v) for k, v in dict.items(namespace) if k not in _BUILTIN_NAMES}
    scope["__builtins__"] = pristine._PRISTINE_BUILTINS
    scope[_STRIP_NAME] = strip_value
    return scope


_STEP_OK = b"v0;N"


_RAISED_MESSAGE = 1 << 16  # a probe's exception message, whole enough for ``pytest.raises(match=...)`` to search


def _step_error(tag: bytes, err: BaseException) -> bytes:
    status, message = _exception_status(err, _RAISED_MESSAGE if tag == b"e" else MAX_MESSAGE)
    out = tag + _wire._str_token(status) + _wire._str_token(message)
    return out + _wire._str_token(_exception_chain(err)) + _exception_args(err) if tag == b"e" else out


_ARGS_OF = BaseException.__dict__["args"].__get__  # the exception's own args, whatever its class says
_MAX_ARGS_BYTES = 1 << 16


def _exception_args(err: BaseException) -> bytes:
    """The args a probe's exception was raised with, as wire data (``info.value.args``), or ``N`` where they
    cannot travel (too large, not readable): the judge then knows only the message."""
    try:
        return _wire.encode(_ARGS_OF(err), _MAX_ARGS_BYTES)
    except _BaseException:  # an argument may be anything the program made
        return b"N"


# The builtin classes as they were before any program ran, by identity: a class is builtin only if it is one of them
# (a program's class may say ``__module__ = "builtins"``, its metaclass may say anything, ``builtins.ValueError`` may
# be rebound). Read through ``type``'s own descriptors, which no metaclass overrides.
_BUILTIN_TYPES = {_id(v): (v, v.__name__) for v in vars(__import__("builtins")).values() if _isinstance(v, type)}
_MRO_OF, _QUALNAME_OF = type.__dict__["__mro__"].__get__, type.__dict__["__qualname__"].__get__


def _builtin_name(klass) -> str:
    entry = _BUILTIN_TYPES.get(_id(klass))
    return entry[1] if entry is not None and entry[0] is klass else ""


def _exception_chain(err: BaseException) -> str:
    """``own class, builtin bases...`` of a raised exception, for the judge's ``except`` clauses: the class itself
    where it is a builtin one, else ``program.<qualname>``; then the builtin classes among its bases."""
    try:
        mro = _MRO_OF(_type(err))
        names = [_builtin_name(c) for c in mro]
        own = names[0] or "program." + _QUALNAME_OF(mro[0])
        return ",".join([own, *(n for n in names[1:] if n)])
    except _BaseException:  # noqa: BLE001
        return ""


def _probe_failed(err: BaseException) -> bytes:
    """The report of a one-probe test whose probe raised ``err`` (or whose value was too large to send)."""
    return b"E1:" + (_too_large(err) if _isinstance(err, _wire.TooLarge) else _step_error(b"e", err))


def _too_large(err: BaseException) -> bytes:
    """A probe entry for a value too large to send: a ``fail``, with no chain and no args."""
    return b"e" + _wire._str_token("fail") + _wire._str_token(str(err)) + _wire._str_token("") + b"N"


def _run_plan(test: PreparedTest, namespace: dict, max_value: int) -> bytes:
    """Evaluate a split test's probe steps; one entry per step that ran (see ``judge.judge``): ``E<n>:`` then per
    step ``v<id>;<value>`` (the value's identity here, for ``is``), ``e<status><message>`` (a probe raised) or
    ``x<status><message>`` (a statement raised); then what the program's own ``__eq__`` says of the pairs of its
    objects the values hold (``_wire_own.OwnVerdicts``), asked as each probe's value is taken, where they hold any.

    A probe that raises is recorded and the next one still runs (the judge decides whether its value was needed,
    as ``and``/``or`` would); a set-up statement that raises ends the test there.
    """
    steps = test.steps
    own: list = []  # snapshots of program objects with their own __eq__, whose verdicts travel with the values
    if _len(steps) == 1 and steps[0][0] == "p":  # the common ``assert <probe> == ...``: fewer objects, fewer pages
        try:
            value = eval(steps[0][1], namespace)
            data = b"E1:v%x;%b" % (_id(value), _wire.encode(value, max_value, own=own))
            if not own:
                return data
            verdicts = _wire_own.OwnVerdicts()
            verdicts.ask(own)
            return data + verdicts.trailer()
        except _BaseException as err:  # the program may raise anything, SystemExit and KeyboardInterrupt included
            return _probe_failed(err)
    parts, alive = [], []  # values stay alive to the end of the test, so no two share an id
    verdicts = _wire_own.OwnVerdicts()
    for kind, code in steps:
        if kind == "x":
            try:
                exec(code, namespace)
            except _BaseException as err:
                parts.append(_step_error(b"x", err))
                break
            parts.append(_STEP_OK)
            continue
        try:
            value = eval(code, namespace)
            alive.append(value)
            parts.append(b"v%x;%b" % (_id(value), _wire.encode(value, max_value, own=own)))
            if _len(own) > verdicts.seen:  # asked now, of the objects as this probe found them
                verdicts.ask(own)
        except _wire.TooLarge as err:
            parts.append(_too_large(err))
        except _BaseException as err:  # the program may raise anything, SystemExit and KeyboardInterrupt included
            parts.append(_step_error(b"e", err))
    return b"E%d:%b" % (_len(parts), b"".join(parts)) + verdicts.trailer()


def _run_one_test(test: PreparedTest, namespace: dict, max_value: int, *, scope: dict | None = None):
    """Run one prepared test in the current process. Returns ``(status, message, payload)``.

    ``scope`` is a test namespace already built with :func:`_test_globals` (isolated mode builds it once in the
    solution child, so each forked grandchild does not write, and so copy, every page the namespace touches).
    A split test always ends with status ``value``: its payload is the judge's to read.
    """
    try:
        namespace = scope if scope is not None else _test_globals(namespace)
        if test.kind == "plan":  # (fast mode builds a fresh scope per test: a test's names do not reach the next)
            return "value", "", _b2a(_run_plan(test, namespace, max_value), newline=False)
        # The comparator reaches the test through a closure cell: rebinding a global cannot replace it.
        _FunctionType(test.code, namespace)(hardened_compare, strip_value)()
        return "pass", "", None
    except _BaseException as err:  # the program may raise anything, SystemExit and KeyboardInterrupt included
        status, message = _exception_status(err)
        return status, message, None


def _server_and_zygote() -> tuple[int, ...]:
    """What S's seccomp filter keeps the program from signalling (see ``libc``): its server (S's parent when S is
    forked from it, or cloned from the zygote, which installed the filter with the same pids) and the zygote."""
    return (os.getppid(), *processes._KEEP)


def _solution_child(job: AssertJob, todo: list[int], tests: list[PreparedTest], nonce: str, wfd: int,
                    workdir: str, limits: Limits, ctl_fd: int = -1) -> None:
    """Body of S. Never returns: it ``_exit``s. ``ctl_fd`` (isolated mode): where the server says which test to
    start next (see :func:`_clone_per_case`). ``tests`` is None where S was cloned from the zygote: they come on
    ``ctl_fd``, all in one frame, once S has sent its load line (:func:`_receive_tests`)."""
    report = _Reporter(wfd, nonce)
    try:
        _enter_child(limits, wfd, workdir, session=True, also_keep=ctl_fd)
        libc._prctl(libc._PR_SET_CHILD_SUBREAPER, 1)
        sigchld_kept = libc._lock_sigchld(_server_and_zygote())  # no child reaped unseen, no signal to them
        try:
            code = compile(job.program, "<solution>", "exec", dont_inherit=True)
            pre = compile(job.preamble, "<preamble>", "exec", dont_inherit=True) if job.preamble else None
        except (SyntaxError, ValueError) as err:
            report.send(b"X", b"syntax_error", f"{_type(err).__name__}: {err}"[:MAX_MESSAGE])
            _exit(0)
        fresh = [n for n in _stdlib_imports(job.program) if n not in sys.modules]
        for name in fresh:  # load them untouched, so their pristine copies are real
            try:
                __import__(name)
            except _BaseException:
                pass
        if fresh:
            snapshot_stdlib_modules()
        module = types.ModuleType("solution")
        module.__dict__["__builtins__"] = __builtins__
        sys.modules["solution"] = module
        namespace = module.__dict__
        try:
            if pre is not None:
                exec(pre, namespace)
            exec(code, namespace)
        except _BaseException as err:
            status, message = _exception_status(err)
            report.send(b"X", status.encode(), ("while loading the program: " + message)[:MAX_MESSAGE])
            _exit(0)
        for sig in (signal.SIGALRM, signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGVTALRM, signal.SIGPROF):
            if sig != signal.SIGCHLD or not sigchld_kept:  # a kept SIGCHLD is still the default
                signal.signal(sig, signal.SIG_DFL)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.setitimer(signal.ITIMER_PROF, 0)
        max_value = job.max_value_bytes
        if job.fast:
            report.send(b"L", _process_time())
            if tests is None:
                tests = _receive_tests(ctl_fd, todo)
            for idx in todo:
                status, message, payload = _run_one_test(tests[idx], namespace, max_value)
                report.result(idx, status, message, payload, _process_time())
            _exit(0)
        _isolated_loop(job, todo, tests, namespace, report, max_value, ctl_fd)
    except _BaseException as err:  # harness failure: say so, the server marks the rest
        try:
            report.send(b"X", b"crash", f"harness: {_type(err).__name__}: {err}"[:MAX_MESSAGE])
        finally:
            _exit(1)
    _exit(0)


def _receive_tests(ctl_fd: int, todo: list[int]) -> dict:
    """S cloned from the zygote: the tests of ``todo``, in one frame the server writes after the load line (its
    length, then each test's length and ``prepared.test_wire`` bytes). Read with pinned names only: the program has
    run in this process and may have replaced any builtin or module function."""
    header = _read_exact(ctl_fd, 4)
    data = _read_exact(ctl_fd, int.from_bytes(header, "big")) if _len(header) == 4 else b""
    tests, at = {}, 0
    for idx in todo:
        size = int.from_bytes(data[at : at + 4], "big")
        wire = data[at + 4 : at + 4 + size]
        if _len(wire) != size or at + 4 > _len(data):
            raise RuntimeError("the server's tests frame was cut short")
        tests[idx] = test_from_wire(wire)
        at += 4 + size
    return tests


def _fork_per_case(job: ProgramJob, todo: list[int], report: _Reporter, case, capture: int | None = None) -> None:
    """Fork one grandchild per test or stdin case, judge its CPU time, report its end with a D line.

    Before each case, what the previous one left on disk is removed (:class:`_Traces`): no test sees a file another
    wrote.
    ``case(idx)`` runs in the grandchild and must end it with ``_exit``. After ``max_consecutive_timeouts`` timeouts
    in a row the rest is reported unexecuted (a U line); escapees a grandchild left behind are swept after it.
    With ``capture`` (a byte cap), the grandchild's stdout is a pipe read here, sent on in an O line before the D
    line: output never passes through a file the program could swap for a symlink or a FIFO.
    """
    cpu_limit, wall_limit = job.timeout_s, job.wall_timeout_s
    budget = job.max_consecutive_timeouts
    streak = 0
    me = _getpid()
    traces = _Traces(job.uid)
    for idx in todo:
        if budget and streak >= budget:
            report.send(b"U", idx)
            return
        traces.clear()
        pipe = os.pipe() if capture is not None else None
        pid = _fork()
        if pid == 0:
            try:
                _setpgid(0, 0)
                if pipe is not None:
                    os.dup2(pipe[1], 1)
                    _close(pipe[0])
                    _close(pipe[1])
                case(idx)
            finally:
                _exit(0)
        output = None
        if pipe is not None:
            _close(pipe[1])
            output = Output(pipe[0], capture)
        status, cpu, killed = wait_with_limits(pid, cpu_limit, wall_limit, output)
        if output is not None:
            if _children(me):
                sweep_children()  # escapees hold the write end: end them before reading to the end
            data = output.finish()
            report.send(b"O", idx, _b2a(data, newline=False) if data else b"-")
        if _children(me):  # before the D line: what escapees used is in our children's CPU when the server reads it
            sweep_children()
        report.done(idx, status, cpu, killed)
        streak = streak + 1 if killed or cpu > cpu_limit else 0


def _clone_per_case(job: AssertJob, todo: list[int], report: _Reporter, case, ctl_fd: int) -> None:
    """Isolated mode, server-supervised: start each test's process when the server says, as the *server's* child.

    The server writes one byte on ``ctl_fd`` per test of ``todo``, in order, once the previous test's process and
    everything it left running are gone: ``g`` (go) or ``c`` (a folder a test could write changed: clear it first,
    see :class:`_Traces`). S clones the test's process with ``CLONE_PARENT``, so the trusted server waits for it,
    reads its CPU time from ``wait4`` and kills it at its limit. S does no per-test supervision: every object it
    touches after a fork is a page copied, and its waiting, checking and reporting once cost a fifth of each test
    (see ``benchmarks/RESULTS.md``). Returns when the server closes the pipe.

    The clone is a bare system call: the interpreter's at-fork work (re-creating its locks and thread states,
    running the hooks modules registered; ``random`` re-seeds itself there) does not run in the test's process. S
    holds the GIL through the call and has one thread (checked by the caller), so there is nothing to repair; each
    test starts from the same loaded state, ``random``'s included.
    """
    traces = _Traces(job.uid)
    clear = b"c"
    repair = None if libc._one_thread() else libc._fork_hooks()
    for idx in todo:
        while True:
            try:
                token = _read(ctl_fd, 1)  # one byte: a cached object, nothing allocated
                break
            except InterruptedError:
                continue
        if not token:
            return
        if token == clear or traces.loaded:
            traces.clear()
        if repair is not None:
            repair[0]()
        pid = libc._SYSCALL(*libc._CLONE_ARGS)
        if repair is not None:
            repair[1 if pid == 0 else 2]()
        if pid == 0:
            try:
                _close(ctl_fd)
                _setpgid(0, 0)
                case(idx)
            finally:
                _exit(0)
        if pid < 0:
            err = ctypes.get_errno()
            report.send(b"X", b"crash", f"harness: clone failed: {os.strerror(err)}"[:MAX_MESSAGE])
            return
    while True:  # stay until the server closes the pipe: it reads the last test's line until S's end of it closes
        try:
            if not _read(ctl_fd, 1):
                return
        except InterruptedError:
            continue


def _isolated_loop(job: AssertJob, todo, tests, namespace, report: _Reporter, max_value: int, ctl_fd: int = -1) -> None:
    """Isolated mode: each test in its own fork of the loaded program; the server supervises them where it can
    (:func:`_clone_per_case`), S itself where it cannot (:func:`_fork_per_case`)."""
    import gc

    scope = _test_globals(namespace)  # the program is loaded and S runs none of its code from here on
    # Where the server gave S a control pipe, it supervises the tests: S clones each test's process for it. A clone
    # skips the interpreter's at-fork repairs, which is safe only while S has one thread; with more (the program
    # left one running) S runs the repairs around the clone itself, as os.fork does (see _clone_per_case).
    clones = ctl_fd >= 0 and libc._SYSCALL is not None
    # Most tests are one probe (``assert f(x) == y``): their code, looked up by the grandchild with nothing else.
    # Their value leaves raw after a V line where the server supervises the test, which drops an unfinished frame
    # with its test (where S reports a D line after each test, a frame cut short could swallow it).
    probes: dict = {}  # filled below, once the tests are here
    encode = _wire.encode

    def case(idx: int) -> None:
        code = probes.get(idx)
        if code is not None:  # the shortest path: every object made here may be a page copied
            try:
                value = eval(code, scope)
                own: list = []  # objects with their own __eq__: their verdicts follow the value, as in _run_plan
                data = encode(value, max_value, own=own)
                if own:
                    verdicts = _wire_own.OwnVerdicts()
                    verdicts.ask(own)
                    data += verdicts.trailer()
            except _BaseException as err:  # the program may raise anything
                report.result(idx, "value", "", _b2a(_probe_failed(err), newline=False), 0.0)
                return
            report.value(idx, _id(value), data)
            return
        test = tests[idx]
        if test.kind == "plan":  # most tests: one call less, and fewer objects (pages a grandchild copies)
            report.result(idx, "value", "", _b2a(_run_plan(test, scope, max_value), newline=False), 0.0)
            return
        status, message, payload = _run_one_test(test, namespace, max_value, scope=scope)
        report.result(idx, status, message, payload, 0.0)

    report.send(b"L", _process_time(), *((b"c",) if clones else ()))
    if tests is None:  # S came from the zygote: its tests come now, before the word to start the first
        tests = _receive_tests(ctl_fd, todo)
    if clones:
        for i in todo:
            t = tests[i]
            if t.kind == "plan" and _len(t.steps) == 1 and t.steps[0][0] == "p":
                probes[i] = t.steps[0][1]
    gc.freeze()  # keep the loaded program's objects out of the grandchildren's collections (fewer COW faults)
    if clones:
        _clone_per_case(job, todo, report, case, ctl_fd)
    else:
        _fork_per_case(job, todo, report, case)


# ---------------------------------------------------------------------------------------------------------------
# Stdin/stdout programs: one grandchild per case, output judged by the server.
# ---------------------------------------------------------------------------------------------------------------


def _stdio_child(job: StdioJob, todo: list[int], nonce: str, wfd: int, workdir: str, limits: Limits,
                 exe_fd: int = -1) -> None:
    """S of a stdin/stdout job: load the Python program (or hold the compiled one's sealed fd), then one process per
    case."""
    report = _Reporter(wfd, nonce)
    try:
        _enter_child(limits, wfd, workdir, session=True, also_keep=exe_fd)
        libc._prctl(libc._PR_SET_CHILD_SUBREAPER, 1)
        libc._lock_sigchld(_server_and_zygote())
        cap = job.max_output_bytes
        if exe_fd >= 0:
            report.send(b"L", _process_time())
            _fork_per_case(job, todo, report, lambda idx: _run_binary_case(exe_fd, idx, workdir, limits), capture=cap)
            _exit(0)
        try:
            code = compile(job.program, "<solution>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as err:
            report.send(b"X", b"syntax_error", f"{_type(err).__name__}: {err}"[:MAX_MESSAGE])
            _exit(0)
        report.send(b"L", _process_time())
        _fork_per_case(job, todo, report, lambda idx: _run_stdio_case(code, idx, workdir, report), capture=cap)
    except _BaseException as err:
        report.send(b"X", b"crash", f"harness: {_type(err).__name__}: {err}"[:MAX_MESSAGE])
        _exit(1)
    _exit(0)


def _case_stdin(idx: int, workdir: str) -> None:
    """Make case ``idx``'s input this process's stdin, and take it out of the folder the program can list."""
    path = workdir + "/in%d" % idx
    fd_in = os.open(path, os.O_RDONLY)
    os.unlink(path)
    os.dup2(fd_in, 0)  # stdout is already the pipe the waiting process reads
    _close(fd_in)


def _run_binary_case(exe_fd: int, idx: int, workdir: str, limits: Limits) -> None:
    """One case of a compiled program: its exit code and signal decide run-time errors (see ``reading``)."""
    try:
        _case_stdin(idx, workdir)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        exec_case(exe_fd, limits.memory)
    finally:
        _exit(127)


def _run_stdio_case(code, idx: int, workdir: str, report: _Reporter) -> None:
    status, message = "done", ""
    try:
        _case_stdin(idx, workdir)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8")
        sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False), 1 << 16), encoding="utf-8")
        module = types.ModuleType("__main__")
        module.__dict__["__builtins__"] = __builtins__
        sys.modules["__main__"] = module
        try:
            exec(code, module.__dict__)
        except _SystemExit as err:
            if err.code not in (None, 0):
                status, message = "error", f"SystemExit({err.code!r})"
        except _BaseException as err:  # an AssertionError too: the program's own check is a run-time error here
            status, message = _exception_status(err)
            if status == "fail":
                status = "error"
        try:
            sys.stdout.flush()
        except _BaseException as err:  # e.g. the output limit
            status, message = "error", f"writing output failed: {_type(err).__name__}: {err}"[:MAX_MESSAGE]
    except _BaseException as err:
        status, message = _exception_status(err)
    try:
        report.result(idx, status, message, None, 0.0)
    finally:
        _exit(0)
