"""The fork server: a small stdlib-only process that runs untrusted programs against tests.

It is started by :class:`evolvecoder_datasets.execution.Sandbox` through ``isolation.server_command``: the real
interpreter as ``python -I -S -B -c "...; import _forkserver; _forkserver.main()"`` (imported as a module, not run
as a script, which keeps less heap alive), inside bubblewrap or the ``unshare`` bootstrap when available, never by
forking the caller. It talks to its parent over length-prefixed JSON frames on two pipes and handles one job (one
program and its tests) at a time; during a ``stop_on_failure`` job it also streams each ended test and listens for
the caller's ``stop``.

Process tree of one job::

    server (trusted: never runs program code; judges CPU time, sweeps, never a split test's verdict)
      └─ S: solution child (own session; rlimits; unprivileged uid; loads the program once)
           └─ G: one grandchild per test in "isolated" mode (own process group)

Results travel on a dedicated result pipe as lines that start with a per-run random nonce; a test without a line
is a crash, and exit codes are never trusted. This server decides no verdict of a split test: the caller's judge
(``judge.py``) split each test into *probes* (the expressions that need the program) and its own part, and only the
probes come here. A child evaluates them and sends their values in the wire encoding (``_wire.py``); the server
passes the bytes on, and the judge, in a process that never ran program code, evaluates the asserts. A test the
judge could not split arrives whole (``T``) and runs with the older in-process hardening (a comparator held in a
closure, pristine builtins); its verdict is flagged ``inside`` by the caller. Nothing this process holds is a
secret: every child is a fork of it, so it never receives a test's expected side.

This file must stay importable without the package and without third-party modules.
"""

from __future__ import annotations

import binascii
import builtins
import collections
import ctypes
import enum
import io
import json
import marshal
import os
import re
import resource
import select
import signal
import struct
import sys
import time
import types

try:  # started by the sandbox: this folder is on the path, the package is not imported
    import _wire
except ImportError:  # imported as part of the package (tests, tools)
    from . import _wire

PROTOCOL_VERSION = 4
STATUSES = ("pass", "fail", "error", "timeout", "memory", "crash", "syntax_error", "unexecuted")
MAX_MESSAGE = 300
_CLK_TCK = os.sysconf("SC_CLK_TCK")
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_IMMUTABLE_TYPE_FLAG = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: set on C-defined types, never on Python classes

# Captured before any untrusted code runs. A program may rebind names in builtins or in shared modules
# (builtins.len = ..., json.dumps = ...); the harness code below resolves these names here, in its own globals,
# first. The builtins are snapshotted into this module's namespace for the same reason.
globals().update({_k: _v for _k, _v in vars(builtins).items() if not _k.startswith("__")})
_fork, _exit, _write, _read, _close, _kill, _killpg = os.fork, os._exit, os.write, os.read, os.close, os.kill, os.killpg
_wait4, _waitpid, _monotonic, _process_time = os.wait4, os.waitpid, time.monotonic, time.process_time
_getpid, _setpgid, _select, _writev = os.getpid, os.setpgid, select.select, os.writev
_pidfd_open = getattr(os, "pidfd_open", None)
_b2a = binascii.b2a_base64
_FunctionType = types.FunctionType
# Tests resolve builtins here, not in the (possibly monkeypatched) builtins module the program shares.
_PRISTINE_BUILTINS = dict(vars(builtins))
_BUILTIN_NAMES = frozenset(k for k in _PRISTINE_BUILTINS if not k.startswith("_"))
_isinstance, _type, _len, _id = isinstance, type, len, id
_AssertionError, _MemoryError, _SystemExit, _BaseException = AssertionError, MemoryError, SystemExit, BaseException


def _libc():
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover - static or exotic libc
        return None


_LIBC = _libc()


def _prctl(option: int, value: int) -> bool:
    return bool(_LIBC is not None and _LIBC.prctl(option, value, 0, 0, 0) == 0)


_SYS_CLONE = {"x86_64": 56, "aarch64": 220}.get(os.uname().machine)  # clone(flags, stack=0, ...): a plain fork


def _syscall():
    """libc's ``syscall``, called with the GIL held (a ``PyDLL`` function), or None where it cannot be had. Its
    arguments are passed as ready ``c_long`` objects (:data:`_CLONE_ARGS`): converting Python ints on every call
    allocates, and in a process that just forked each allocation may be a page copied."""
    if _SYS_CLONE is None:
        return None
    try:
        fn = ctypes.PyDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):  # pragma: no cover - static or exotic libc
        return None
    fn.restype = ctypes.c_long
    return fn


_SYSCALL = _syscall()
_SIGCHLD = int(signal.SIGCHLD)
_CLONE_PARENT = 0x00008000
_CLONE_ARGS = tuple(ctypes.c_long(v) for v in (_SYS_CLONE or 0, _CLONE_PARENT | _SIGCHLD, 0, 0, 0, 0))


def _one_thread() -> bool:
    """True when this process has exactly one thread (``/proc/self/stat``'s thread count; read with a bare fd, as
    a file object's buffers would be pages every test's process copies)."""
    try:
        fd = os.open("/proc/self/stat", os.O_RDONLY)
        try:
            data = _read(fd, 4096)
        finally:
            _close(fd)
        return int(data[data.rfind(b")") + 2 :].split()[17]) == 1
    except (OSError, ValueError, IndexError):
        return False


def _trim_heap() -> None:
    """Give the heap's free pages back to the kernel before a process starts forking.

    Start-up (imports, compiling this module when no bytecode cache is readable) leaves megabytes of freed memory
    in malloc's arenas. Those pages stay mapped, so every fork copies their page table entries and every exit tears
    them down: trimming them is ~2 MB less per fork. Done once in the server; a solution child does not repeat it
    (a full collection costs ~1 ms per program, more than its small compile leaves behind).
    """
    import gc

    gc.collect()
    trim = getattr(_LIBC, "malloc_trim", None)  # glibc only
    if trim is not None:
        trim(0)


# ---------------------------------------------------------------------------------------------------------------
# Canonical values: what a program's result *is*, independent of the methods its class defines.
# ---------------------------------------------------------------------------------------------------------------


class Opaque:
    """Stands for a value built from a Python-defined class; equal only to itself."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name} object>"

    def __reduce__(self):
        return (Opaque, (self.name,))


_ATOMS = (int, bool, float, complex, str, bytes, type(None))
_DEPTH_LIMIT = 200


def canonical(value, *, _depth: int = 0):
    """Rebuild ``value`` from builtin base data, replacing Python-defined objects by :class:`Opaque`.

    Subclasses of builtins are read through the builtin's own slots (``int.__index__``, ``dict.items`` ...), so an
    overridden ``__eq__``/``__iter__``/``__str__`` has no say; numpy scalars become Python numbers. Used by the
    hardening of tests judged inside (the judge reads values through ``_wire`` instead).
    """
    t = _type(value)
    if t in _ATOMS:
        return value
    if _depth > _DEPTH_LIMIT:
        return Opaque("too deeply nested value")
    d = _depth + 1
    if t is list:
        return [canonical(v, _depth=d) for v in value]
    if t is tuple:
        return tuple(canonical(v, _depth=d) for v in value)
    if t is dict:
        return {canonical(k, _depth=d): canonical(v, _depth=d)
                for k, v in value.items()}  # fmt: skip
    if t is set:
        return {canonical(v, _depth=d) for v in value}
    if t is frozenset:
        return frozenset(canonical(v, _depth=d) for v in value)
    if t is _wire._stdlib_class("fractions", "Fraction") or t is _wire._stdlib_class("decimal", "Decimal"):
        return value
    if t is collections.deque:
        return collections.deque(canonical(v, _depth=d) for v in value)
    # Subclasses of builtins: read the builtin's data, ignore the subclass's methods.
    if _isinstance(value, bool):  # pragma: no cover - bool cannot be subclassed
        return bool(value)
    if _isinstance(value, int):
        return int.__index__(value)
    if _isinstance(value, float):
        return float.__float__(value)
    if _isinstance(value, str):
        return str.__str__(value)
    if _isinstance(value, bytes):
        return bytes.__add__(b"", value)
    if _isinstance(value, complex):
        return complex(complex.real.__get__(value), complex.imag.__get__(value))
    if _isinstance(value, list):
        return [canonical(v, _depth=d) for v in list.__iter__(value)]
    if _isinstance(value, tuple):
        return tuple(canonical(v, _depth=d) for v in tuple.__iter__(value))
    if _isinstance(value, dict):
        return {canonical(k, _depth=d): canonical(v, _depth=d)
                for k, v in dict.items(value)}  # fmt: skip
    if _isinstance(value, (set, frozenset)):
        items = [canonical(v, _depth=d) for v in set.__iter__(value)] if _isinstance(
            value, set) else [canonical(v, _depth=d) for v in frozenset.__iter__(value)]
        return set(items) if _isinstance(value, set) else frozenset(items)
    if t.__flags__ & _IMMUTABLE_TYPE_FLAG:
        # Implemented in C: its methods are what its library wrote, not what the program wrote.
        numpy = sys.modules.get("numpy")
        if numpy is not None and _isinstance(value, numpy.generic):
            return canonical(value.item(), _depth=d)
        return value
    return Opaque(getattr(t, "__qualname__", "object"))


def _has_opaque(value, _depth: int = 0) -> bool:
    t = _type(value)
    if t is Opaque:
        return True
    if _depth > _DEPTH_LIMIT:
        return True
    if t in (list, tuple, set, frozenset, collections.deque):
        return any(_has_opaque(v, _depth + 1) for v in value)
    if t is dict:
        return any(_has_opaque(k, _depth + 1) or _has_opaque(v, _depth + 1) for k, v in value.items())
    return False


def _compare(op: str, left, right) -> bool:
    if op == "eq":
        return left == right
    if op == "ne":
        return left != right
    if op == "lt":
        return left < right
    if op == "le":
        return left <= right
    if op == "gt":
        return left > right
    if op == "ge":
        return left >= right
    if op == "in":
        return left in right
    if op == "notin":
        return left not in right
    raise ValueError(op)


def hardened_compare(op: str, left, right) -> bool:
    """Compare as Python would, but on canonical values when exactly one side holds program-defined objects.

    When both sides contain Python-defined objects (a ``ListNode`` against a ``ListNode``) there is nothing
    trusted to compare against, and Python's own semantics apply.
    """
    cl, cr = canonical(left), canonical(right)
    if _has_opaque(cl) and _has_opaque(cr):
        return bool(_compare(op, left, right))
    return bool(_compare(op, cl, cr))


_VALUE_BASES = (int, float, complex, str, bytes)
_CONTAINER_BASES = ((list, list), (dict, dict), (set, set), (frozenset, frozenset))
# Standard-library classes that subclass builtins for good reasons and whose behaviour tests may rely on.
_TRUSTED_SUBCLASSES = frozenset({collections.Counter, collections.OrderedDict, collections.defaultdict})


def strip_value(value):
    """What a program-defined subclass of a builtin really holds, as the plain builtin (shallow).

    Applied to every call result inside a test, so a ``float`` subclass whose ``__sub__`` answers 0.0, or a list
    subclass with a lying ``__len__``, meets the test's arithmetic and builtins as the plain value it is. Objects of
    program classes, enums, named tuples and the standard library's own subclasses pass through unchanged.
    """
    t = _type(value)
    if t in _ATOMS or t in (list, tuple, dict, set, frozenset) or t.__flags__ & _IMMUTABLE_TYPE_FLAG:
        return value
    if t in _TRUSTED_SUBCLASSES or _isinstance(value, enum.Enum):
        return value
    if _isinstance(value, _VALUE_BASES):
        return canonical(value)
    if _isinstance(value, list):
        return list(list.__iter__(value))
    if _isinstance(value, dict):
        return dict(dict.items(value))
    if _isinstance(value, set):
        return set(set.__iter__(value))
    if _isinstance(value, frozenset):
        return frozenset(frozenset.__iter__(value))
    return value


# Pristine copies of standard-library modules: a test's ``math.isclose`` means the real one even when the program
# rebinds ``math.isclose`` (the module object is shared with the program; the copy is not).
_PRISTINE_MODULES: dict = {}


def _is_stdlib(module) -> bool:
    name = getattr(module, "__name__", "") or ""
    return name.partition(".")[0] in getattr(sys, "stdlib_module_names", ()) and not name.startswith("_ecd")


def _pristine_import(name, globals=None, locals=None, fromlist=(), level=0, _import=builtins.__import__):
    """What a test's own ``import`` binds: the pristine copy of a standard-library module the program may have
    patched (defence in depth: the judge evaluates its own ``math``/``statistics`` calls outside anyway)."""
    module = _import(name, globals, locals, fromlist, level)
    return _PRISTINE_MODULES.get(_id(module), module)


def snapshot_stdlib_modules() -> None:
    """Record a pristine copy of every standard-library module loaded now and not recorded yet."""
    for module in list(sys.modules.values()):
        if _type(module) is types.ModuleType and _id(module) not in _PRISTINE_MODULES and _is_stdlib(module):
            clone = types.ModuleType(module.__name__)
            clone.__dict__.update(vars(module))
            _PRISTINE_MODULES[_id(module)] = clone


_IMPORT_LINE = re.compile(r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import\b|import[ \t]+([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*))",
                          re.MULTILINE)


def _stdlib_imports(source: str) -> list[str]:
    """Standard-library modules a program imports (to load and snapshot them before the program runs).

    A line scan, not a parse: it runs for every program, and a miss only means that module is seen unprotected.
    """
    stdlib = getattr(sys, "stdlib_module_names", ())
    names = []
    for single, several in _IMPORT_LINE.findall(source):
        for name in ([single] if single else several.split(",")):
            name = name.strip()
            if name and name.partition(".")[0] in stdlib:
                names.append(name)
    return names


def _a2b_strict(data: bytes) -> bytes:
    try:
        return binascii.a2b_base64(data, strict_mode=True)
    except TypeError:  # pragma: no cover - Python 3.10 has no strict mode
        return binascii.a2b_base64(data)


# ---------------------------------------------------------------------------------------------------------------
# Tests: classified and compiled once per distinct source, by the server (trusted).
# ---------------------------------------------------------------------------------------------------------------

# The names a whole test's compiled code binds its comparator and value stripper to (see ``_inside.py``, where the
# caller compiles such tests: this process never imports ``ast``).
_CMP_NAME = "_ecd_cmp_"
_STRIP_NAME = "_ecd_strip_"


class PreparedTest:
    """A test ready to run: ``kind`` is ``plan`` (probe steps; values go to the judge), ``stmt`` (a test the judge
    could not split, run whole) or ``invalid``."""

    __slots__ = ("kind", "code", "steps", "message")

    def __init__(self, kind, code=None, steps=(), message=""):
        self.kind, self.code, self.steps, self.message = kind, code, steps, message


def prepare_test(spec: str) -> PreparedTest:
    """Compile one test as the caller sent it. Never raises: a broken one becomes kind ``invalid``.

    ``spec`` is ``P`` + probe steps (``x<statement>`` or ``p<expression>``, separated by ``\x1f``), ``M`` + a whole
    test the judge could not split (compiled by the caller, ``_inside.inside_spec``, base64 of its ``marshal``
    form), or ``E`` + the reason a test is invalid.
    """
    tag, body = spec[:1], spec[1:]
    if tag == "E":
        return PreparedTest("invalid", message=body[:MAX_MESSAGE])
    if tag == "P":
        try:
            steps = []
            for part in body.split("\x1f") if body else ():
                kind, src = part[:1], part[1:]
                mode = "eval" if kind == "p" else "exec"
                if kind not in ("p", "x"):
                    raise ValueError(f"unknown step {kind!r}")
                steps.append((kind, compile(src, "<test>", mode, dont_inherit=True)))
        except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError) as err:
            return PreparedTest("invalid", message=f"probe does not compile: {type(err).__name__}: {err}"[:MAX_MESSAGE])
        return PreparedTest("plan", steps=tuple(steps))
    if tag != "M":
        return PreparedTest("invalid", message="unknown test encoding")
    # A whole test, compiled by the caller (trusted, the same interpreter) into the code of ``_ecd_make_``.
    try:
        code = marshal.loads(_a2b_strict(body.encode("ascii")))
        if _type(code) is not types.CodeType or code.co_argcount != 2:
            raise ValueError("not the code of a test")
    except (ValueError, TypeError, EOFError, binascii.Error, UnicodeEncodeError) as err:
        return PreparedTest("invalid", message=f"malformed test code: {type(err).__name__}: {err}"[:MAX_MESSAGE])
    return PreparedTest("stmt", code=code)


class _LRU(collections.OrderedDict):
    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def get_or(self, key, make):
        try:
            self.move_to_end(key)
            return self[key]
        except KeyError:
            value = self[key] = make(key)
            if _len(self) > self.size:
                self.popitem(last=False)
            return value


# Compiled tests, kept across jobs: a pass matrix sends the same tests with every program of a problem. Small on
# purpose: every solution child and grandchild is a fork of this process, and fork and exit cost grows with the
# pages it maps. A prepared test holds ~1.3 KB; at 20,000 entries the cache added 26 MB to the server and isolated
# mode ran 27% slower after a long run (832 -> 608 tests/s). 1,024 entries (~1.3 MB) hold the tests of the few
# problems a worker has in flight.
_TESTS = _LRU(1_024)


# ---------------------------------------------------------------------------------------------------------------
# Output checking for stdin/stdout problems.
# ---------------------------------------------------------------------------------------------------------------


def outputs_match(actual: str, expected: str, float_tol: float | None = None) -> bool:
    """Whitespace-normalised token comparison; with ``float_tol``, numeric tokens match within that tolerance.

    >>> outputs_match("1 2\\n3\\n", "1 2 3")
    True
    >>> outputs_match("0.3333334", "0.333333", float_tol=1e-6)
    True
    """
    a, e = actual.split(), expected.split()
    if a == e:
        return True
    if float_tol is None or _len(a) != _len(e):
        return False
    for x, y in zip(a, e):
        if x == y:
            continue
        try:
            fx, fy = float(x), float(y)
        except ValueError:
            return False
        if not abs(fx - fy) <= float_tol * max(1.0, abs(fy)):
            return False
    return True


# ---------------------------------------------------------------------------------------------------------------
# Process plumbing.
# ---------------------------------------------------------------------------------------------------------------


def proc_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a live process from /proc (0.0 when it is gone)."""
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return 0.0
    try:
        return _stat_cpus(fd)[0]
    finally:
        _close(fd)


def _stat_cpus(fd: int) -> tuple[float, float]:
    """``(own, reaped children's)`` CPU seconds from an open ``/proc/<pid>/stat`` (zeros once it is gone). Each
    read at offset 0 is a fresh snapshot, so the server keeps one fd per solution process instead of opening the
    file for every test."""
    try:
        data = os.pread(fd, 1024, 0)
    except OSError:
        return 0.0, 0.0
    if not data:
        return 0.0, 0.0
    fields = data[data.rfind(b")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK, (int(fields[13]) + int(fields[14])) / _CLK_TCK


def _tree_cpu(pid: int, limit: int = 256) -> float:
    """CPU seconds of a live process and every live descendant: each one's own time plus what it reaped
    (``/proc/<pid>/stat``), walked through ``/proc/<pid>/task/<pid>/children`` (at most ``limit`` processes; the
    job's uid holds at most ``max_processes``). A descendant that already ended is in its reaper's reaped time."""
    total, todo, seen = 0.0, [pid], 0
    while todo and seen < limit:
        kid = todo.pop()
        seen += 1
        try:
            fd = os.open(f"/proc/{kid}/stat", os.O_RDONLY)
        except OSError:
            continue
        try:
            own, reaped = _stat_cpus(fd)
        finally:
            _close(fd)
        total += own + reaped
        todo.extend(_children(kid))
    return total


def _finite(token: bytes) -> float:
    """A CPU mark or count read from S: a finite, non-negative number, else ``ValueError`` (a malformed line)."""
    value = float(token)
    if not 0.0 <= value < 1e9:  # NaN compares false too
        raise ValueError("not a finite non-negative number")
    return value


def _wait_status(token: bytes) -> int:
    """A wait status read from S: an int a real ``waitpid`` can return (16 bits), else ``ValueError``."""
    value = int(token)
    if not 0 <= value < 1 << 16:
        raise ValueError("not a wait status")
    return value


def _uid_of(pid: int):
    """The real, effective, saved and filesystem uids of a live process, if they are all one (else None)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"Uid:"):
                    uids = {int(x) for x in line.split()[1:]}
                    return uids.pop() if _len(uids) == 1 else None
    except (OSError, ValueError):
        return None
    return None


def _children(pid: int) -> list[int]:
    # Read with bare fds: this runs after every forked test, and a file object allocates (so dirties) pages.
    try:
        fd = os.open(f"/proc/{pid}/task/{pid}/children", os.O_RDONLY)
        try:
            data = _read(fd, 65536)
        finally:
            _close(fd)
        return [int(x) for x in data.split()] if data else []
    except OSError:
        kids = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat", "rb") as fh:
                        data = fh.read()
                    if int(data[data.rfind(b")") + 2 :].split()[1]) == pid:
                        kids.append(int(entry))
                except (OSError, ValueError, IndexError):
                    continue
        return kids


class _ChildrenFile:
    """``/proc/<pid>/task/<pid>/children`` opened once and re-read with ``pread`` (each read at offset 0 is a fresh
    list): the server looks at its own children and at S's after every test, and an open/read/close was a third
    of its work per test. Falls back to :func:`_children` where the file cannot be read (the process is gone)."""

    __slots__ = ("fd", "pid")

    def __init__(self, pid: int) -> None:
        self.pid = pid
        try:
            self.fd = os.open(f"/proc/{pid}/task/{pid}/children", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self.fd = -1

    def pids(self) -> list[int]:
        if self.fd >= 0:
            try:
                data = os.pread(self.fd, 65536, 0)
                return [int(x) for x in data.split()] if data else []
            except OSError:
                pass
        return _children(self.pid)

    def close(self) -> None:
        if self.fd >= 0:
            _close(self.fd)
            self.fd = -1


def sweep_children(spare: int = 0) -> float:
    """Kill and reap every child of this process (orphans re-parented to us, as a subreaper, included), but
    ``spare`` (a pid) when given.

    Returns the CPU seconds the reaped processes had used (their own and their reaped descendants').
    """
    me, used = os.getpid(), 0.0
    for _ in range(100):
        kids = [k for k in _children(me) if k != spare]
        if not kids:
            break
        for kid in kids:
            for fn, target in ((_killpg, kid), (_kill, kid)):
                try:
                    fn(target, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        for kid in kids:
            try:
                usage = _wait4(kid, 0)[2]
                used += usage.ru_utime + usage.ru_stime
            except ChildProcessError:
                pass
    if not spare:
        _reap_zombies()
    return used


def _reap_zombies() -> None:
    while True:
        try:
            pid, _ = _waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _kill_tree(pid: int) -> None:
    for fn in (_killpg, _kill):
        try:
            fn(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def wait_with_limits(pid: int, cpu_limit: float, wall_limit: float, output: Output | None = None):
    """Wait for a child, killing its group once its CPU time reaches ``cpu_limit`` or wall time ``wall_limit``.

    With ``output``, the child's stdout pipe is read meanwhile (so a chatty child never blocks on a full pipe), up to
    its cap: past it the child is killed (``killed == "output"``).
    Returns ``(wait_status, cpu_seconds, killed)`` where ``killed`` is ``None``, ``"cpu"``, ``"wall"`` or ``"output"``.
    """
    start = _monotonic()
    killed = None
    try:
        pidfd = _pidfd_open(pid)
    except (TypeError, OSError):
        pidfd = -1
    try:
        next_check = min(cpu_limit, wall_limit)
        while True:
            if pidfd >= 0:
                watch = [pidfd] if output is None or output.closed else [pidfd, output.fd]
                ready = _select(watch, [], [], max(0.0, start + next_check - _monotonic()))[0]
                if output is not None and output.fd in ready:
                    if not output.read():
                        killed = "output"
                        _kill_tree(pid)
                        break
                    if pidfd not in ready:
                        continue
                done = pidfd in ready
            else:
                if output is not None and not output.closed and _select([output.fd], [], [], 0)[0]:
                    if not output.read():
                        killed = "output"
                        _kill_tree(pid)
                        break
                done = _poll_wait(pid, start + min(next_check, 0.01 if output is not None else next_check))
            if done:
                break
            elapsed = _monotonic() - start
            cpu = proc_cpu_seconds(pid)
            if cpu >= cpu_limit or elapsed >= wall_limit:
                killed = "cpu" if cpu >= cpu_limit else "wall"
                _kill_tree(pid)
                break
            next_check = min(wall_limit, elapsed + max(cpu_limit - cpu, 0.01))
    finally:
        if pidfd >= 0:
            _close(pidfd)
    _, status, usage = _wait4(pid, 0)
    return status, usage.ru_utime + usage.ru_stime, killed


class Output:
    """The read end of a case's stdout pipe, collected by the process that waits for the case, up to ``cap``."""

    __slots__ = ("fd", "cap", "chunks", "size", "closed")

    def __init__(self, fd: int, cap: int) -> None:
        self.fd, self.cap, self.chunks, self.size, self.closed = fd, cap, [], 0, False
        os.set_blocking(fd, False)

    def read(self) -> bool:
        """Read what is there; False once more than ``cap`` bytes came."""
        while True:
            try:
                chunk = _read(self.fd, 1 << 16)
            except BlockingIOError:
                return True
            except InterruptedError:
                continue
            if not chunk:
                self.closed = True
                return True
            self.size += _len(chunk)
            if self.size > self.cap:
                return False
            self.chunks.append(chunk)

    def finish(self) -> bytes:
        """Whatever is left once the case ended (descendants holding the pipe were swept), then close."""
        if not self.closed:
            self.read()
        _close(self.fd)
        return b"".join(self.chunks)


def _poll_wait(pid: int, deadline: float) -> bool:
    delay = 0.0005
    while True:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return True
        if _monotonic() >= deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.01)


def _describe_exit(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return f"killed by {name}"
    return f"exited with code {os.WEXITSTATUS(status)} without reporting"


def _devnull_std() -> None:
    fd = os.open(os.devnull, os.O_RDWR)
    for target in (0, 1, 2):
        if fd != target:
            os.dup2(fd, target)
    if fd > 2:
        _close(fd)


_IPC_TABLES = (("shm", "shmctl"), ("msg", "msgctl"), ("sem", "semctl"))
_TRACE_DIRS = ("/tmp", "/var/tmp", "/dev/shm")


def remove_traces(uid: int, folders=_TRACE_DIRS, keep: str | None = None, *, ipc: bool = True) -> int:
    """Remove what a job's uid left behind: System V IPC objects and entries in the shared scratch folders.

    Runs in the server after every job, so the next program (another model's, another problem's) starts from
    nothing the last one made, and in the solution process before every test of isolated mode. Files are matched by
    owner: the uid is the sandbox's own, so this never touches a file of anyone else, even where ``/tmp`` is the
    host's (isolation ``none``); ``keep`` is spared. Returns how many were removed.
    """
    removed = 0
    for table, call in _IPC_TABLES if ipc else ():
        try:
            with open(f"/proc/sysvipc/{table}", "rb") as fh:
                header, *rows = fh.read().split(b"\n")
        except OSError:
            continue
        cols = header.split()
        try:
            id_col = cols.index(b"shmid" if table == "shm" else b"msqid" if table == "msg" else b"semid")
            uid_cols = [cols.index(b"uid"), cols.index(b"cuid")]
        except ValueError:
            continue
        fn = getattr(_LIBC, call, None) if _LIBC is not None else None
        for row in rows:
            fields = row.split()
            if _len(fields) <= max(id_col, *uid_cols) or not any(int(fields[c]) == uid for c in uid_cols):
                continue
            if fn is not None:  # IPC_RMID is 0: semctl(id, 0, IPC_RMID), shmctl/msgctl(id, IPC_RMID, NULL)
                ident = int(fields[id_col])
                removed += (fn(ident, 0, 0) if table == "sem" else fn(ident, 0, None)) == 0
    # Only C-level calls below: in a solution process the program may have rebound builtins (isinstance, str ...)
    # that os.path and shutil would call.
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.path == keep:
                continue
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                _rmtree(entry.path)
                removed += 1
            except OSError:
                continue
    return removed


_SNAPSHOT_ENTRIES, _SNAPSHOT_BYTES = 1024, 16 << 20


def _snapshot_folders(folders, uid: int, keep: str) -> dict:
    """What ``uid`` owns in each of ``folders`` (recursively; ``keep`` excluded), as ``{folder: [(relative path,
    kind, mode, data)]}`` for the folders that hold anything: the files a program wrote while it loaded.

    Bounded (1,024 entries, 16 MiB of file data): past that the rest is not put back, and a test sees the folder
    as the last test left it, less what it added at the top.
    """
    found: dict = {}
    total = 0
    for folder in folders:
        entries: list = []
        todo = [("", folder)]
        while todo and _len(entries) < _SNAPSHOT_ENTRIES:
            rel, path = todo.pop()
            try:
                listing = list(os.scandir(path))
            except OSError:
                continue
            for entry in listing:
                if entry.path == keep or _len(entries) >= _SNAPSHOT_ENTRIES:
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                    if st.st_uid != uid:
                        continue
                    name = rel + "/" + entry.name if rel else entry.name
                    if entry.is_symlink():
                        entries.append((name, "l", 0, os.readlink(entry.path)))
                    elif entry.is_dir(follow_symlinks=False):
                        entries.append((name, "d", st.st_mode & 0o7777, None))
                        todo.append((name, entry.path))
                    elif entry.is_file(follow_symlinks=False) and total + st.st_size <= _SNAPSHOT_BYTES:
                        fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
                        try:
                            data = _read(fd, st.st_size + 1)
                        finally:
                            _close(fd)
                        total += _len(data)
                        entries.append((name, "f", st.st_mode & 0o7777, data))
                except OSError:
                    continue
        if entries:
            found[folder] = sorted(entries, key=lambda e: e[0].count("/"))  # folders before what they hold
    return found


def _restore_folder(folder: str, entries: list) -> None:
    """Put back what :func:`_snapshot_folders` recorded in ``folder`` (emptied of the uid's entries just before)."""
    for name, kind, mode, data in entries:
        path = folder + "/" + name
        try:
            if kind == "d":
                os.mkdir(path, mode)
            elif kind == "l":
                os.symlink(data, path)
            else:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
                try:
                    view = memoryview(data)
                    while view:
                        view = view[_write(fd, view):]
                finally:
                    _close(fd)
        except OSError:
            continue


def _writable_by(folder: str, uid) -> bool:
    """Whether ``uid`` (its own group, no others: the solution child drops supplementary groups) can add entries to
    ``folder``, from its owner and mode; True where no uid is dropped to or the folder cannot be read."""
    if uid is None:
        return True
    try:
        st = os.stat(folder)
    except OSError:
        return True
    mode = st.st_mode
    return bool(mode & 0o002 or (st.st_uid == uid and mode & 0o200) or (st.st_gid == uid and mode & 0o020))


def _mtimes(folders) -> tuple:
    """Change time, size and link count of each of ``folders`` (what moves when an entry is added or removed): a
    folder whose figures did not move since the last look has nothing new to clean.

    The inode change time, not the modification time: a program that owns a folder can set its modification time
    back (``os.utime``) to hide a file it left for the next test, but no program sets a change time. The size and
    link count because a change time may be stamped at the scheduler's tick (tmpfs gave 21 distinct times for 40
    quick changes here): a folder on tmpfs grows by 20 bytes per entry, and one gains a link per subfolder.
    """
    out = []
    for folder in folders:
        try:
            st = os.stat(folder)
            out.append((st.st_ctime_ns, st.st_size, st.st_nlink))
        except OSError:
            out.append(None)
    return tuple(out)


def _rmtree(path: str) -> bool:
    """Remove folder ``path`` and everything under it, never following a symbolic link, whatever its depth. Returns
    whether ``path`` is gone.

    ``shutil.rmtree`` without ``shutil``: every module this server imports is in the image each test's fork copies.
    Folders are opened with ``O_NOFOLLOW`` and emptied through their fds, so a link planted anywhere in the tree
    (the folder itself included) is removed as a link, not followed. A folder nested deeper than
    ``_RM_DEPTH`` below the top is moved up to the top (a ``renameat``, which follows no link either) and emptied
    on a later pass, so no nesting a program builds holds more than ``_RM_DEPTH`` fds open or outlasts the remover;
    each pass removes at least the folders it moved, and the passes are bounded by the entries there are.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        try:
            os.unlink(path)  # a link or a file where the folder was: the entry only
        except OSError:
            pass
        return not os.path.lexists(path)
    try:
        moved = [0]
        for _ in range(1 << 16):
            if not _empty_folder(fd, fd, moved):
                break
    finally:
        _close(fd)
    try:
        os.rmdir(path)
    except OSError:
        pass
    return not os.path.lexists(path)


_RM_DEPTH = 32


def _empty_folder(fd: int, top: int, moved: list, depth: int = 0) -> bool:
    """Remove what folder ``fd`` holds; folders ``_RM_DEPTH`` levels down are moved up into ``top`` instead of
    entered. Returns whether anything was left for another pass (a moved folder)."""
    try:
        names = [(e.name, e.is_dir(follow_symlinks=False)) for e in os.scandir(fd)]
    except OSError:
        return False
    again = False
    for name, is_dir in names:
        try:
            if not is_dir:
                os.unlink(name, dir_fd=fd)
                continue
            if depth >= _RM_DEPTH:
                moved[0] += 1
                os.rename(name, f".ecd-deep-{moved[0]}", src_dir_fd=fd, dst_dir_fd=top)
                again = True
                continue
            try:
                inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except PermissionError:  # a folder its owner made unreadable: the server may open it up again
                os.chmod(name, 0o700, dir_fd=fd)
                inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            try:
                again = _empty_folder(inner, top, moved, depth + 1) or again
            finally:
                _close(inner)
            os.rmdir(name, dir_fd=fd)
        except OSError:
            continue
    return again


class Limits:
    """Resource limits applied in the solution child (and inherited by its grandchildren)."""

    def __init__(self, job: dict) -> None:
        self.memory = int(job.get("memory_mb", 1024)) * 1024 * 1024
        self.fsize = int(job.get("max_output_bytes", 1 << 20))
        self.nofile = int(job.get("max_open_files", 64))
        self.nproc = int(job.get("max_processes", 32))
        self.uid = job.get("uid")
        # The kernel's CPU cap per process: a backstop that holds even when the supervising child runs the
        # program's code. In fast mode the solution child runs every test; otherwise each process runs one.
        timeout, load = float(job.get("timeout_s", 1.0)), float(job.get("load_timeout_s") or 2.0)
        n = _len(job.get("tests") or job.get("inputs") or ())
        share = n * timeout if job.get("mode") == "fast" and job.get("kind") != "stdio" else timeout + 0.01 * n
        self.cpu = int(load + share + 2.0) + 1

    def apply(self) -> None:
        for limit, value in (
            (resource.RLIMIT_AS, self.memory),
            (resource.RLIMIT_FSIZE, self.fsize),
            (resource.RLIMIT_NOFILE, self.nofile),
            (resource.RLIMIT_CORE, 0),
            (resource.RLIMIT_NPROC, self.nproc),
            (resource.RLIMIT_CPU, self.cpu),
        ):
            if value and value > 0:
                try:
                    resource.setrlimit(limit, (value, value + 1 if limit == resource.RLIMIT_CPU else value))
                except (ValueError, OSError):
                    pass

    def drop_privileges(self) -> bool:
        if self.uid is None or os.geteuid() != 0:
            return False
        try:
            os.setgroups([])
            os.setresgid(self.uid, self.uid, self.uid)
            os.setresuid(self.uid, self.uid, self.uid)
        except OSError:
            return False
        return True


_CHILD_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
              "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}  # fmt: skip


def _enter_child(limits: Limits, keep_fd: int, workdir: str, *, session: bool, also_keep: int = -1) -> None:
    """Set-up of a solution child: session, fds, limits, cwd, uid.

    Streams, environment and signal dispositions were put in their final state once in the server (see
    :func:`_prepare_server_process`), so a child inherits them instead of paying for them on every job: after a
    fork every page a child writes is a copy, and this set-up runs once per program.
    """
    if session:
        os.setsid()
    low = 3
    for fd in sorted(f for f in (keep_fd, also_keep) if f >= 0):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 65536)
    limits.apply()
    os.chdir(workdir)
    limits.drop_privileges()


_CHILD_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGXFSZ, signal.SIGALRM, signal.SIGCHLD)


def _prepare_server_process(workdir: str) -> None:
    """What every child should inherit: fds 0-2 and sys streams on /dev/null, the children's environment (nothing
    of the caller's), default signal dispositions."""
    _devnull_std()
    sys.stdin = open(0, "r", closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
    os.environ.clear()
    os.environ.update(_CHILD_ENV)
    os.environ["HOME"] = workdir
    os.environ["TMPDIR"] = workdir
    for sig in _CHILD_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)


# ---------------------------------------------------------------------------------------------------------------
# Inside the solution child.
# ---------------------------------------------------------------------------------------------------------------


_STATUS_BYTES = {"value": b"value", "pass": b"pass", "fail": b"fail", "error": b"error", "crash": b"crash",
                 "memory": b"memory", "timeout": b"timeout"}


class _Reporter:
    """Writes verdict lines ``<nonce> <TAG> <field> ...`` to the result pipe.

    Fields are ASCII tokens (numbers, status words, base64 text, ``-`` for none) assembled without ``json`` or
    any other module a program could have rebound. Writes under 4 KiB are atomic.
    """

    __slots__ = ("fd", "prefix", "bprefix")

    def __init__(self, fd: int, nonce: str) -> None:
        self.fd, self.prefix, self.bprefix = fd, nonce + " ", nonce.encode("ascii")

    def result(self, idx: int, status: str, message: str, payload: bytes | None, cpu: float) -> None:
        """The ``R`` line of one test, built in a single formatting step and written in one ``write``: it is written
        by every forked grandchild, where each temporary object may dirty (so copy) a page (a page fault costs
        3-5 µs here; the general path below cost ~25 of them per test)."""
        text = _b2a(message.encode("utf-8", "replace"), newline=False) if message else b"="
        line = b"%b R %d %b %b %b %b\n" % (self.bprefix, idx, _STATUS_BYTES.get(status) or status.encode("ascii"),
                                           text, payload or b"-", b"0" if cpu == 0.0 else b"%a" % cpu)  # fmt: skip
        if _len(line) <= 4096:  # one write of at most PIPE_BUF bytes is whole and atomic
            try:
                if _write(self.fd, line) == _len(line):
                    return
            except InterruptedError:
                pass
            except OSError:
                return
        self._write_all(line)

    def value(self, idx: int, ident: int, data: bytes) -> None:
        """A one-probe test's value: a ``V`` line (test, the value's id, a byte count), then ``data`` (its wire
        encoding) raw, in one ``writev``. The grandchild writes no base64 and builds no line around its value: each
        object it makes may dirty a page (the server, which copies nothing, builds the payload)."""
        head = b"%b V %d %x %d\n" % (self.bprefix, idx, ident, _len(data))
        try:
            n = _writev(self.fd, (head, data))
        except InterruptedError:
            n = 0
        except OSError:
            return
        if n < _len(head) + _len(data):
            self._write_all((head + data)[n:])

    def send(self, *fields) -> None:
        parts = [self.prefix]
        for field in fields:
            t = _type(field)
            if field is None:
                parts.append("-")
            elif t is str:
                parts.append(_b2a(field.encode("utf-8", "replace"), newline=False).decode("ascii") or "=")
            elif t is bytes:  # already an ASCII token
                parts.append(field.decode("ascii"))
            else:
                parts.append(repr(field))
            parts.append(" ")
        parts[-1] = "\n"
        self._write_all("".join(parts).encode("ascii"))

    def done(self, idx: int, wait_status: int, cpu: float, killed: str | None) -> None:
        """The ``D`` line the solution child writes after each grandchild it waited for (one formatting step)."""
        self._write_all(b"%b D %d %d %a %b\n" % (self.bprefix, idx, wait_status, cpu,
                                                  killed.encode("ascii") if killed else b"-"))  # fmt: skip

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                n = _write(self.fd, view)
            except InterruptedError:
                continue
            except OSError:
                return
            view = view[n:]


def _text(token: bytes) -> str:
    return "" if token in (b"-", b"=") else binascii.a2b_base64(token).decode("utf-8", "replace")


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
    pristine = _PRISTINE_MODULES
    scope = {k: pristine.get(_id(v), v) for k, v in dict.items(namespace) if k not in _BUILTIN_NAMES}
    scope["__builtins__"] = _PRISTINE_BUILTINS
    scope[_STRIP_NAME] = strip_value
    return scope


_STEP_OK = b"v0;N"


_RAISED_MESSAGE = 1 << 16  # a probe's exception message, whole enough for ``pytest.raises(match=...)`` to search


def _step_error(tag: bytes, err: BaseException) -> bytes:
    status, message = _exception_status(err, _RAISED_MESSAGE if tag == b"e" else MAX_MESSAGE)
    out = tag + _wire._str_token(status) + _wire._str_token(message)
    return out + _wire._str_token(_exception_chain(err)) if tag == b"e" else out


def _exception_chain(err: BaseException) -> str:
    """``own class, builtin bases...`` of a raised exception, for the judge's ``except`` clauses (the program's
    claim about what it raised, as raising it is)."""
    try:
        mro = _type(err).__mro__
        names = [c.__name__ if c.__module__ == "builtins" else "" for c in mro]
        own = mro[0].__qualname__ if mro[0].__module__ == "builtins" else "program." + mro[0].__qualname__
        return ",".join([own, *(n for n in names[1:] if n)])
    except _BaseException:  # noqa: BLE001
        return ""


def _probe_failed(err: BaseException) -> bytes:
    """The report of a one-probe test whose probe raised ``err`` (or whose value was too large to send)."""
    if _isinstance(err, _wire.TooLarge):
        return b"E1:e" + _wire._str_token("fail") + _wire._str_token(str(err)) + _wire._str_token("")
    return b"E1:" + _step_error(b"e", err)


def _run_plan(test: PreparedTest, namespace: dict, max_value: int) -> bytes:
    """Evaluate a split test's probe steps; one entry per step that ran (see ``judge.judge``): ``E<n>:`` then per
    step ``v<id>;<value>`` (the value's identity here, for ``is``), ``e<status><message>`` (a probe raised) or
    ``x<status><message>`` (a statement raised).

    A probe that raises is recorded and the next one still runs (the judge decides whether its value was needed,
    as ``and``/``or`` would); a set-up statement that raises ends the test there.
    """
    steps = test.steps
    if _len(steps) == 1 and steps[0][0] == "p":  # the common ``assert <probe> == ...``: fewer objects, fewer pages
        try:
            value = eval(steps[0][1], namespace)
            return b"E1:v%x;%b" % (_id(value), _wire.encode(value, max_value))
        except _BaseException as err:  # the program may raise anything, SystemExit and KeyboardInterrupt included
            return _probe_failed(err)
    parts, alive = [], []  # values stay alive to the end of the test, so no two share an id
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
            parts.append(b"v%x;%b" % (_id(value), _wire.encode(value, max_value)))
        except _wire.TooLarge as err:
            parts.append(b"e" + _wire._str_token("fail") + _wire._str_token(str(err)) + _wire._str_token(""))
        except _BaseException as err:  # the program may raise anything, SystemExit and KeyboardInterrupt included
            parts.append(_step_error(b"e", err))
    return b"E%d:%b" % (_len(parts), b"".join(parts))


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


def _solution_child(job: dict, todo: list[int], tests: list[PreparedTest], nonce: str, wfd: int,
                    workdir: str, limits: Limits, ctl_fd: int = -1) -> None:
    """Body of S. Never returns: it ``_exit``s. ``ctl_fd`` (isolated mode): where the server says which test to
    start next (see :func:`_clone_per_case`)."""
    report = _Reporter(wfd, nonce)
    try:
        _enter_child(limits, wfd, workdir, session=True, also_keep=ctl_fd)
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)
        try:
            code = compile(job["program"], "<solution>", "exec", dont_inherit=True)
            pre = compile(job["preamble"], "<preamble>", "exec", dont_inherit=True) if job.get("preamble") else None
        except (SyntaxError, ValueError) as err:
            report.send(b"X", b"syntax_error", f"{_type(err).__name__}: {err}"[:MAX_MESSAGE])
            _exit(0)
        fresh = [n for n in _stdlib_imports(job["program"]) if n not in sys.modules]
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
            signal.signal(sig, signal.SIG_DFL)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.setitimer(signal.ITIMER_PROF, 0)
        max_value = int(job.get("max_value_bytes", 4 << 20))
        if job.get("mode") == "fast":
            report.send(b"L", _process_time())
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


def _fork_per_case(job: dict, todo: list[int], report: _Reporter, case, capture: int | None = None) -> None:
    """Fork one grandchild per test or stdin case, judge its CPU time, report its end with a D line.

    Before each case, what the previous one left on disk is removed (:class:`_Traces`): no test sees a file another
    wrote.
    ``case(idx)`` runs in the grandchild and must end it with ``_exit``. After ``max_consecutive_timeouts`` timeouts
    in a row the rest is reported unexecuted (a U line); escapees a grandchild left behind are swept after it.
    With ``capture`` (a byte cap), the grandchild's stdout is a pipe read here, sent on in an O line before the D
    line: output never passes through a file the program could swap for a symlink or a FIFO.
    """
    cpu_limit = float(job["timeout_s"])
    wall_limit = float(job["wall_timeout_s"])
    budget = job.get("max_consecutive_timeouts")
    streak = 0
    me = _getpid()
    traces = _Traces(job)
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


class _Traces:
    """What a test may leave for the next one on disk, and its removal before each test (run by S, as the job's uid,
    so a link a program planted leads nowhere it could not go itself).

    Whatever the previous test left in the work folder (every test's cwd, HOME and TMPDIR), ``/tmp``, ``/var/tmp``
    or ``/dev/shm`` is removed, looked for only where a folder's change time moved (a ``stat`` each, and only in the
    folders this uid can write: under bubblewrap the work folder alone). Files the program wrote while it loaded are
    part of the state every test starts from: where there are any, their folder is put back as it was before each
    test (a test may change a file inside a folder it did not add to, which no change time of the top folder shows).
    """

    __slots__ = ("uid", "base", "folders", "seen", "loaded", "first")

    def __init__(self, job: dict) -> None:
        uid = job.get("uid") if os.getuid() != 0 and os.getuid() == job.get("uid") else None
        self.uid, self.base, self.first = uid, os.getcwd(), True
        self.folders = tuple(f for f in (*_TRACE_DIRS, self.base) if os.access(f, os.W_OK | os.X_OK)) \
            if uid is not None else ()  # fmt: skip
        self.seen = _mtimes(self.folders)
        self.loaded = _snapshot_folders(self.folders, uid, keep=self.base) if uid is not None else {}

    def clear(self) -> None:
        """Remove what the last test left (nothing to do before the first)."""
        first, self.first = self.first, False
        if self.uid is None:
            return
        try:
            now = _mtimes(self.folders)
            changed = () if now == self.seen and not self.loaded else tuple(
                f for f, a, b in zip(self.folders, self.seen, now) if a != b or (f in self.loaded and not first))
            if changed:
                remove_traces(self.uid, changed, keep=self.base, ipc=False)
                for folder in changed:
                    if folder in self.loaded:
                        _restore_folder(folder, self.loaded[folder])
                now = _mtimes(self.folders)
            self.seen = now
        except _BaseException:  # noqa: BLE001 - defence in depth only: never stop the tests over it
            pass


def _clone_per_case(job: dict, todo: list[int], report: _Reporter, case, ctl_fd: int) -> None:
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
    traces = _Traces(job)
    clear = b"c"
    repair = None if _one_thread() else _fork_hooks()
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
        pid = _SYSCALL(*_CLONE_ARGS)
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


def _fork_hooks():
    """``(before, in_child, in_parent)``: the interpreter's own at-fork work (``PyOS_BeforeFork`` and its two
    halves after), for a clone made while other threads are alive (what ``os.fork`` runs around ``fork()``)."""
    api = ctypes.pythonapi
    return api.PyOS_BeforeFork, api.PyOS_AfterFork_Child, api.PyOS_AfterFork_Parent


def _isolated_loop(job, todo, tests, namespace, report: _Reporter, max_value: int, ctl_fd: int = -1) -> None:
    """Isolated mode: each test in its own fork of the loaded program; the server supervises them where it can
    (:func:`_clone_per_case`), S itself where it cannot (:func:`_fork_per_case`)."""
    import gc

    scope = _test_globals(namespace)  # the program is loaded and S runs none of its code from here on
    # Where the server gave S a control pipe, it supervises the tests: S clones each test's process for it. A clone
    # skips the interpreter's at-fork repairs, which is safe only while S has one thread; with more (the program
    # left one running) S runs the repairs around the clone itself, as os.fork does (see _clone_per_case).
    clones = ctl_fd >= 0 and _SYSCALL is not None
    # Most tests are one probe (``assert f(x) == y``): their code, looked up by the grandchild with nothing else.
    # Their value leaves raw after a V line where the server supervises the test, which drops an unfinished frame
    # with its test (where S reports a D line after each test, a frame cut short could swallow it).
    probes = {i: tests[i].steps[0][1] for i in todo
              if clones and tests[i].kind == "plan" and _len(tests[i].steps) == 1 and tests[i].steps[0][0] == "p"}
    encode = _wire.encode
    gc.freeze()  # keep the loaded program's objects out of the grandchildren's collections (fewer COW faults)

    def case(idx: int) -> None:
        code = probes.get(idx)
        if code is not None:  # the shortest path: every object made here may be a page copied
            try:
                value = eval(code, scope)
                data = encode(value, max_value)
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

    if clones:
        report.send(b"L", _process_time(), b"c")
        _clone_per_case(job, todo, report, case, ctl_fd)
        return
    report.send(b"L", _process_time())
    _fork_per_case(job, todo, report, case)


# ---------------------------------------------------------------------------------------------------------------
# Stdin/stdout programs: one grandchild per case, output judged by the server.
# ---------------------------------------------------------------------------------------------------------------


def _stdio_child(job: dict, todo: list[int], nonce: str, wfd: int, workdir: str, limits: Limits) -> None:
    report = _Reporter(wfd, nonce)
    try:
        _enter_child(limits, wfd, workdir, session=True)
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)
        try:
            code = compile(job["program"], "<solution>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as err:
            report.send(b"X", b"syntax_error", f"{_type(err).__name__}: {err}"[:MAX_MESSAGE])
            _exit(0)
        report.send(b"L", _process_time())
        cap = int(job.get("max_output_bytes", 1 << 20))
        _fork_per_case(job, todo, report, lambda idx: _run_stdio_case(code, idx, workdir, report), capture=cap)
    except _BaseException as err:
        report.send(b"X", b"crash", f"harness: {_type(err).__name__}: {err}"[:MAX_MESSAGE])
        _exit(1)
    _exit(0)


def _run_stdio_case(code, idx: int, workdir: str, report: _Reporter) -> None:
    status, message = "done", ""
    try:
        path = workdir + "/in%d" % idx
        fd_in = os.open(path, os.O_RDONLY)
        os.unlink(path)  # the case keeps its stdin; nothing of it stays in the folder the program can list
        os.dup2(fd_in, 0)  # stdout is already the pipe the waiting process reads
        _close(fd_in)
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
        except _BaseException as err:
            status, message = _exception_status(err)
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


# ---------------------------------------------------------------------------------------------------------------
# The server: reads jobs, supervises S, judges.
# ---------------------------------------------------------------------------------------------------------------


_BATCH_READ_S = float(os.environ.get("ECD_BATCH_READ_S", "0.002"))


class _Run:
    """Server-side state of one solution child."""

    def __init__(self, pid: int, rfd: int, nonce: str) -> None:
        self.pid, self.rfd, self.nonce = pid, rfd, nonce
        self.buf = bytearray()
        self.loaded = False
        self.last_event = _monotonic()
        self.last_cpu = 0.0
        self.exit_status = 0
        self.killed_after_cpu = 0.0
        self.max_payload = 1 << 20
        self.bytes_read = 0
        self.reported: list[int] = []  # tests whose D line S sent, and the CPU it said their processes used
        self.reported_cpu = 0.0
        # Isolated mode with server-supervised tests (S said "L <cpu> c"): the pipe on which the server tells S to
        # start a test, the test running (None between tests), when it was started, the first exit status and the
        # CPU time of its processes, and how many tests in a row hit a limit.
        self.ctl_fd = -1
        self.clones = False
        self.current: int | None = None
        self.started = 0.0
        self.test_status: int | None = None
        self.test_cpu = 0.0
        self.streak = 0
        self.folders_seen: tuple | None = None
        self.eof = False  # the result pipe ended while a test's process was still running
        self.malformed = False  # S wrote a line no honest S writes: the job's remaining tests are crashes
        self.started_cpu = 0.0  # S's tree CPU when the running test was started (counted as the test's)
        try:
            self.stat_fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self.stat_fd = -1
        self.children = _ChildrenFile(pid)

    def cpu(self) -> float:
        """S's CPU seconds so far (0.0 once it is gone)."""
        return self.cpus()[0]

    def cpus(self) -> tuple[float, float]:
        """S's own CPU seconds and those of the children it reaped (zeros once it is gone)."""
        return _stat_cpus(self.stat_fd) if self.stat_fd >= 0 else (0.0, 0.0)

    def s_extra(self, since: float) -> float:
        """Isolated mode: the CPU S's tree used beyond ``since`` (a previous reading), S's own time past a clone's
        cost (``_S_ALLOWANCE_S`` per test) included; with ``since == 0.0``, the reading itself."""
        own, others = self.tree_cpus()
        now = others + max(0.0, own - self.last_cpu - _S_ALLOWANCE_S)
        return now if since == 0.0 else now - since

    def tree_cpus(self) -> tuple[float, float]:
        """S's own CPU seconds, and what every other process of its tree used: the children it reaped and every
        live descendant (fast mode: work a test hands to a forked child counts as the test's)."""
        own, reaped = self.cpus()
        kids = self.children.pids()
        return own, reaped + (sum(_tree_cpu(k) for k in kids) if kids else 0.0)


_S_ALLOWANCE_S = 0.01  # S's own CPU per test (a clone's page-table copy) not charged to the test
_STOPPED = "not run: an earlier test did not pass"
_LINE_GRACE_S = 0.002  # how long a running test's result pipe is left unread (see Server._watch)
_STREAM_AFTER_S = 0.02
_STREAM_GAP_FIRST_S = 0.001  # after a message, the next waits this long, then twice as long... (see _Progress)
_STREAM_GAP_MAX_S = 0.008


class _Progress:
    """Early stop for jobs sent with ``stop_on_failure`` (a binary reward's value is known at the first test that
    does not pass).

    Tests end in order. Each one that ends with a status this server observed itself (a timeout, a crash, an error of
    a test run inside) and is not a pass stops the job here. The values of those that end with values are streamed to
    the caller, ``{"progress": [idx, ...], "value": [...]}`` (stdin/stdout cases: ``"output"``), since only the
    caller's judge can tell a pass; the caller answers ``{"op": "stop"}`` when one failed. The server decides no
    verdict either way: stopping only marks the tests not yet run ``unexecuted``.

    In fast mode streaming starts only once a job has run for ``_STREAM_AFTER_S``: a job of quick tests is over
    before a stop could gain anything, and its values come back with the reply (streaming each cost fast mode ~15%
    there). In isolated mode every test costs a fork, so the first value goes at once: waiting 20 ms let a wrong
    program run ~16 tests past its first failure (the reward benchmark ran 1,741 tests where 1,474 do now).

    After each message the next one waits ``_STREAM_GAP_FIRST_S``, then twice that, up to ``_STREAM_GAP_MAX_S``,
    and carries every value that ended meanwhile. A message cost ~0.13 ms of CPU between this server and the caller
    (a right program's 35 streamed one by one cost 12% more than none at all), while wrong programs mostly fail on
    their first tests: the benchmark's 20 wrong programs first fail at tests 0-2, five of them at 5 or 15. A failure
    later in a job is reported at most 8 ms late.
    """

    __slots__ = ("server", "enabled", "checked", "sent", "stop", "stdio", "start_streaming", "gap")

    def __init__(self, server: Server, job: dict) -> None:
        self.server, self.enabled = server, bool(job.get("stop_on_failure"))
        self.stdio = job.get("kind") == "stdio"
        self.checked = self.sent = 0
        self.stop = False
        self.start_streaming = _monotonic() + (_STREAM_AFTER_S if job.get("mode") == "fast" else 0.0)
        self.gap = 0.0

    def stopped(self, statuses: list) -> bool:
        """Look at the tests that ended since the last call, in order, and stream the values waiting once the job
        has run long enough and the gap after the last message has passed; True once the job should stop."""
        if not self.enabled:
            return False
        n = _len(statuses)
        while not self.stop and self.checked < n and statuses[self.checked] is not None:
            if statuses[self.checked] not in ("value", "pass", "done"):
                self.stop = True
            self.checked += 1
        if self.stop or self.sent == self.checked:
            return self.stop
        now = _monotonic()
        if now < self.start_streaming:
            return False
        ended = range(self.sent, self.checked)
        self.sent = self.checked
        if self.stdio:
            found = [(i, self.server.outputs[i] or "") for i in ended if statuses[i] == "done"]
        else:
            found = [(i, self.server.payloads[i]) for i in ended if statuses[i] == "value"]
        if found:
            self.server.send({"progress": [i for i, _ in found],
                              "output" if self.stdio else "value": [v for _, v in found]})  # fmt: skip
            self.start_streaming = now + self.gap
            self.gap = min(_STREAM_GAP_MAX_S, max(_STREAM_GAP_FIRST_S, 2 * self.gap))
        return self.stop

    def wake_at(self) -> float | None:
        """When ended tests wait to be streamed: the time the next message may go (None when nothing waits)."""
        return self.start_streaming if self.enabled and self.sent < self.checked and not self.stop else None

    def caller_says_stop(self) -> bool:
        """Read the caller's message sent during a job: only ``stop`` can come (or the end of its pipe)."""
        msg = self.server.recv()
        self.stop = self.stop or msg is None or msg.get("op") == "stop"
        return self.stop


class Server:
    def __init__(self, in_fd: int, out_fd: int) -> None:
        self.in_fd, self.out_fd = in_fd, out_fd
        self.pid = os.getpid()
        self.workroot = os.environ.get("ECD_WORKROOT") or "/tmp"
        # One work folder per server, emptied after every job (children find it in HOME/TMPDIR and as cwd).
        self.workdir = os.path.join(self.workroot, f"ecd-work-{self.pid}")
        self.wake_r = -1
        self.children = _ChildrenFile(self.pid)
        self.clone_parent = False

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
        chunks, remaining = [], n
        while remaining:
            try:
                chunk = _read(self.in_fd, remaining)
            except InterruptedError:
                continue
            if not chunk:
                return None
            chunks.append(chunk)
            remaining -= _len(chunk)
        return b"".join(chunks)

    def send(self, obj) -> None:
        data = json.dumps(obj).encode()
        view = memoryview(struct.pack(">I", _len(data)) + data)
        while view:
            view = view[os.write(self.out_fd, view):]

    # -- main loop -------------------------------------------------------------------------------------------
    def serve(self) -> None:
        self.send({"hello": PROTOCOL_VERSION, "pid": self.pid, "uid_drop": os.geteuid() == 0,
                   "python": sys.version.split()[0]})  # fmt: skip
        while True:
            msg = self.recv()
            if msg is None or msg.get("op") == "shutdown":
                sweep_children()
                return
            if msg.get("op") == "ping":
                self.send({"pong": True})
                continue
            if msg.get("op") == "stop":  # came after its job ended: nothing left to stop
                continue
            try:
                result = self.run_job(msg)
            except Exception as err:  # a bug of ours: say so instead of dying silently
                n = _len(msg.get("tests") or []) or int(msg.get("n_cases") or 0)
                result = {"id": msg.get("id"), "statuses": ["crash"] * n,
                          "messages": [f"server error: {type(err).__name__}: {err}"[:MAX_MESSAGE]] * n,
                          "cpu": [0.0] * n, "infra_error": f"{type(err).__name__}: {err}"}  # fmt: skip
            self.send(result)

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

    def run_job(self, job: dict) -> dict:
        limits = Limits(job)
        self.progress = _Progress(self, job)
        self.uid_seen: list = []  # the real uid of each solution process, read by this server from /proc
        workdir = self._workdir(limits.uid)
        self.trace_folders = tuple(f for f in (*_TRACE_DIRS, workdir) if _writable_by(f, limits.uid))
        scratch = _mtimes(_TRACE_DIRS)
        try:
            if job.get("kind") == "stdio":
                result = self._run_stdio(job, limits, workdir)
            else:
                result = self._run_asserts(job, limits, workdir)
        finally:
            sweep_children()
            moved = [f for f, a, b in zip(_TRACE_DIRS, scratch, _mtimes(_TRACE_DIRS)) if a != b]
            _rmtree(workdir)
            if limits.uid is not None and os.geteuid() == 0:  # scratch folders only where something moved
                remove_traces(limits.uid, moved)
        result["id"] = job.get("id")
        # Checked, not assumed: every solution process that loaded ran under the job's uid, not root.
        result["uid_dropped"] = bool(self.uid_seen) and limits.uid is not None and all(
            u == limits.uid for u in self.uid_seen)
        return result

    # -- assert jobs -----------------------------------------------------------------------------------------
    def _run_asserts(self, job: dict, limits: Limits, workdir: str) -> dict:
        sources = job["tests"]
        n = _len(sources)
        tests = [_TESTS.get_or(src, prepare_test) for src in sources]
        self.payloads: list = [None] * n
        statuses: list = [None] * n
        messages = [""] * n
        cpu = [0.0] * n
        for i, t in enumerate(tests):
            if t.kind == "invalid":
                statuses[i], messages[i] = "error", t.message
                if self.progress.enabled:  # nothing after it needs to run
                    for j in range(i + 1, n):
                        statuses[j], messages[j] = "unexecuted", _STOPPED
                    break
        timeouts_in_a_row = 0
        budget = job.get("max_consecutive_timeouts")
        while True:
            todo = [i for i in range(n) if statuses[i] is None]
            if not todo:
                break
            if self.progress.stopped(statuses):
                for i in todo:
                    statuses[i], messages[i] = "unexecuted", _STOPPED
                break
            if budget and timeouts_in_a_row >= budget:
                for i in todo:
                    statuses[i], messages[i] = "unexecuted", "skipped after repeated timeouts"
                break

            def body(nonce, wfd, ctl, todo=todo):
                _solution_child(job, todo, tests, nonce, wfd, workdir, limits, ctl)

            outcome, progressed = self._supervise(job, body, todo, tests, statuses, messages, cpu)
            if outcome == "done":
                break
            # Tests run in order, so the run of timeouts is broken by any test that finished in between.
            timeouts_in_a_row = (0 if progressed else timeouts_in_a_row) + 1 if outcome == "timeout" else 0
        return {"statuses": statuses, "messages": messages, "cpu": cpu, "values": self.payloads}

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
            run.ctl_fd = ctl_w
        return run

    def _supervise(self, job, body, todo, tests, statuses, messages, cpu) -> tuple[str, bool]:
        """Run one child (``body``, forked) over ``todo``; fill what it reports; blame the test it ended on.

        Used for solution children (assert jobs) and stdin runners alike. Returns ``(outcome, progressed)``:
        ``outcome`` is ``"done"`` (nothing left to run), or ``"timeout"``/``"crash"`` when a test ended the child
        early (the caller starts a fresh one for the rest); ``progressed`` says whether a test finished in this child
        before the one blamed, which breaks a run of consecutive timeouts.
        """
        stdio = job.get("kind") == "stdio"
        fast = job.get("mode") == "fast" and not stdio  # only then does the child run untrusted code per test
        run = self._fork_solution(body, ctl=not stdio and not fast and self.clone_parent)
        max_value = int(job.get("max_value_bytes", 4 << 20))
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
            for i in [current, *pending]:
                statuses[i], messages[i] = status, message
            return "done", progressed
        if killed_for == "flood":
            for i in [current, *pending]:
                statuses[i], messages[i] = "crash", "the program flooded the result pipe"
            return "done", progressed
        if killed_for == "malformed" or run.malformed:
            for i in [current, *pending]:
                statuses[i], messages[i] = "crash", "the solution process wrote a malformed report"
            return "done", progressed
        if killed_for == "stop":
            for i in [current, *pending]:
                statuses[i], messages[i] = "unexecuted", _STOPPED
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

    def _watch(self, run: _Run, job, pending, tests, statuses, messages, cpu, *, judge_cpu: bool):
        """Apply S's lines until ``pending`` is empty or S ends; kill S when it overruns. Returns the kill reason.

        S's own CPU time since its last line is always judged against the limit: while it loads the program (and in
        fast mode, while it runs a test) it runs untrusted code, and in isolated mode it has run the program's
        module code, so nothing it does afterwards is trusted either (a program may make it compute instead of
        supervising). Grandchildren are capped by the kernel (``RLIMIT_CPU``) and a wall-clock backstop. Lines are
        read as they come, but a child that floods its pipe neither starves these checks nor gets past a byte cap.
        """
        cpu_limit = float(job["timeout_s"])
        wall_limit = float(job["wall_timeout_s"])
        load_cpu = float(job.get("load_timeout_s") or cpu_limit)
        killed_for = None
        values: dict = {}
        progress = self.progress
        watched = [run.rfd, self.in_fd] if progress.enabled else [run.rfd]
        if self.wake_r >= 0 and run.ctl_fd >= 0:
            watched.append(self.wake_r)
            _drain_pipe(self.wake_r)
        quiet = [fd for fd in watched if fd != run.rfd]
        ended = (job, tests, pending, statuses, messages, cpu, values)  # what a test's end updates
        try:
            next_check = None
            while pending:
                untrusted_running = judge_cpu or not run.loaded or run.clones
                cpu_budget = cpu_limit if run.loaded else load_cpu
                wall_budget = wall_limit if untrusted_running else wall_limit * 1.5 + 2.0
                if next_check is None:
                    next_check = run.last_event + min(cpu_budget, wall_budget)
                wake = progress.wake_at()
                until = next_check if wake is None else min(next_check, wake)
                fds = watched
                if run.current is not None and not run.eof:
                    # A test's line waits in the pipe until its process ends (one wake-up per test, not two); a
                    # test that runs longer, or writes more than the pipe holds, is read from as it goes.
                    grace = run.started + _LINE_GRACE_S
                    if _monotonic() < grace:
                        fds, until = quiet, min(until, grace)
                ready = select.select(fds, [], [], max(0.0, until - _monotonic()))[0]
                if self.in_fd in ready and progress.caller_says_stop():
                    killed_for = "stop"
                    break
                if wake is not None and not ready and progress.stopped(statuses):
                    killed_for = "stop"
                    break
                if run.rfd in ready:
                    before = run.last_event
                    if not self._drain(run, job, tests, pending, statuses, messages, cpu, values):
                        if run.current is None:
                            break  # EOF: S is gone
                        watched.remove(run.rfd)  # the running test's process is still this server's to end
                        run.eof = True
                    if run.bytes_read > run.max_bytes:
                        killed_for = "flood"
                        break
                    if run.malformed:
                        killed_for = "malformed"
                        break
                    if run.last_event != before:
                        next_check = None
                    if not untrusted_running and _len(pending) > 2:
                        # S and its grandchildren write two short lines per test; reading each as it lands costs
                        # two wake-ups per test on cores the tests need. Let a few accumulate (the pipe holds 64 KiB).
                        time.sleep(_BATCH_READ_S)
                if self.wake_r in ready:  # after the result pipe: a test's line is written before its process ends
                    _drain_pipe(self.wake_r)
                    if run.current is not None and self._reap_test(run):
                        self._finish_test(run, None, *ended)
                        next_check = None
                if progress.enabled and progress.stopped(statuses):
                    killed_for = "stop"
                    break
                if run.eof and run.current is None:
                    break
                if run.clones and run.current is None and pending:
                    self._start_test(run, pending[0])
                    next_check = None
                if ready and (next_check is None or _monotonic() < next_check):
                    continue
                if run.clones and run.current is not None:
                    killed_for, next_check = self._check_test(run, cpu_budget, wall_budget, ended)
                    if killed_for is not None:
                        break
                    continue
                elapsed = _monotonic() - run.last_event
                if judge_cpu or not run.loaded:  # S runs the program's code: its whole tree's time counts
                    used = sum(run.tree_cpus()) - run.last_cpu
                else:
                    used = run.cpu() - run.last_cpu
                if used >= cpu_budget or elapsed >= wall_budget:
                    killed_for = "cpu" if used >= cpu_budget else "wall"
                    run.killed_after_cpu = used
                    break
                # Not there yet (the child was waiting, or starved of CPU): look again when it could be.
                next_check = _monotonic() + min(max(cpu_budget - used, 0.01), wall_budget - elapsed)
        finally:
            if run.ctl_fd >= 0:
                _close(run.ctl_fd)
            _kill_tree(run.pid)
            own_cpu, children_cpu = run.cpus()  # S is dead or dying, not reaped: what the kernel counted for it
            try:
                _, run.exit_status = _waitpid(run.pid, 0)
            except ChildProcessError:
                pass
            # Orphaned grandchildren hold the pipe's write end: end them before draining.
            children_cpu += sweep_children()
            self._drain(run, job, tests, pending, statuses, messages, cpu, values, final=True)
            _close(run.rfd)
            if run.stat_fd >= 0:
                _close(run.stat_fd)
            run.children.close()
        if tests is not None and not judge_cpu and run.loaded and run.stat_fd >= 0:
            self._check_accounting(run, children_cpu, cpu_limit, killed_for, statuses, messages)
        if judge_cpu and killed_for is None and run.reported and own_cpu + children_cpu > 0.0:
            # Fast mode: S's marks split its time between tests, but none of it may go missing. What its tree used
            # after the last test it reported belongs to that test (S has nothing else to do but exit).
            left = own_cpu + children_cpu - run.last_cpu
            if left > max(cpu_limit, 0.05) + 2.0 / _CLK_TCK:
                idx = run.reported[-1]
                statuses[idx], messages[idx] = "timeout", f"{left:.2f} s of CPU time after its report"
                self.payloads[idx] = None
        return killed_for

    def _check_accounting(self, run: _Run, children_cpu: float, cpu_limit: float, killed_for, statuses,
                          messages) -> None:
        """Isolated mode: the CPU time S's own children used, as the kernel counted it, must be what S reported.

        S has run the program's module code, so its D lines (each grandchild's CPU time, read by S from ``wait4``)
        could understate a test's time. The kernel adds every process S reaps to S's children's CPU time, and we
        reap whatever S left behind: more than one test's limit beyond what S reported means S hid a test's time,
        and the tests it reported become timeouts instead of the verdicts their values would get. (What a test's
        escapees used counts here too: S sweeps them before its D line, after measuring the grandchild.) Where the
        tests' processes are this server's children (:func:`_clone_per_case`), S reports nothing and should have no
        children at all: a worker of its own that computed a test's values out of the server's sight shows here.
        """
        unaccounted = children_cpu - run.reported_cpu
        allowance = max(cpu_limit, 0.05) + (cpu_limit if killed_for else 0.0) + 2.0 / _CLK_TCK
        if unaccounted <= allowance:
            return
        for idx in run.reported:
            statuses[idx] = "timeout"
            messages[idx] = f"{unaccounted:.2f} s of CPU time went unreported by the solution process"
            self.payloads[idx] = None

    def _drain(self, run: _Run, job, tests, pending, statuses, messages, cpu, values, final: bool = False) -> bool:
        """Read what the result pipe holds and apply complete lines. Returns False at end of file."""
        eof = False
        max_line = run.max_payload + 4096
        for _ in range(64 if not final else 1 << 30):  # a bounded bite, then back to the limit checks
            try:
                chunk = _read(run.rfd, 1 << 16)
            except BlockingIOError:
                if final and select.select([run.rfd], [], [], 0.2)[0]:
                    continue
                break
            except InterruptedError:
                continue
            if not chunk:
                eof = True
                break
            run.bytes_read += _len(chunk)
            if run.bytes_read > run.max_bytes:
                del run.buf[:]
                return not final  # past what any honest child writes: stop reading (the watch kills it)
            run.buf += chunk
            if _len(run.buf) > max_line and b"\n" not in chunk:
                tail = run.buf.rfind(b"\n")
                if tail < 0 or _len(run.buf) - tail > max_line:
                    run.bytes_read = run.max_bytes + 1  # a line longer than any honest one: a flood
                    del run.buf[:]
                    return not final
            if not final and _len(chunk) < (1 << 16):
                break
        data = bytes(run.buf)
        prefix = run.nonce.encode() + b" "
        # Value frames are part of the protocol only where the server supervises the tests.
        items, rest = _split_frames(data, prefix, run.max_payload, frames=run.clones)
        run.buf = bytearray(rest)
        for line, raw in items:
            if run.malformed:
                break
            try:
                self._apply(run, line[_len(prefix) :].split(b" "), job, tests, pending, statuses, messages, cpu, values,
                            raw)
            except Exception:  # noqa: BLE001 - every line S writes goes through here: a total function of its bytes
                # A line with the run's nonce that no honest S writes (garbage, a number out of range, a second
                # load line): S is lying, and the job's remaining tests are crashes (see _watch).
                run.malformed = True
        return not eof

    def _apply(self, run, fields, job, tests, pending, statuses, messages, cpu, values, raw=None) -> None:
        # Nothing S writes moves a deadline: the clocks restart only where the server saw a test end (or the
        # program load, once). A line S may not write at this point is malformed (see _drain).
        tag = fields[0].decode("ascii")
        timeout = float(job["timeout_s"])
        if tag == "L":
            if run.loaded:
                raise ValueError("a second load line")
            mark = _finite(fields[1])
            self.uid_seen.append(_uid_of(run.pid))
            # The supervision mode is the server's: S's own word ("c") is not asked for (see _fork_solution).
            run.clones = run.ctl_fd >= 0
            run.loaded = True
            run.last_event = _monotonic()
            if job.get("mode") == "fast" and job.get("kind") != "stdio":
                own, others = run.tree_cpus()
                run.last_cpu = min(mark, own) + others
            else:
                run.last_cpu = min(mark, run.cpu() or mark)
        elif not run.loaded and tag not in ("X",):
            raise ValueError("a test's line before the load line")
        elif tag in ("X", "U"):
            if tag == "U":
                status, message = "unexecuted", "skipped after repeated timeouts"
            else:
                status, message = fields[1].decode("ascii"), _text(fields[2])
            status = status if status in STATUSES and status not in ("pass", "unexecuted") else "crash"
            while pending:
                i = pending.popleft()
                statuses[i], messages[i] = status, str(message)[:MAX_MESSAGE]
        elif tag == "R":
            idx, status, message = int(fields[1]), fields[2].decode("ascii"), _text(fields[3])
            payload, cpu_mark = (None if fields[4] == b"-" else fields[4]), _finite(fields[5])
            if not pending or idx != pending[0] or idx in values:
                return  # only the first line for the test being run counts
            kind = tests[idx].kind if tests is not None else "stdio"
            if status == "value":
                # A split test's values: the caller's judge reads them. Only a split test may send them.
                if kind != "plan" or payload is None or _len(payload) > run.max_payload:
                    status, message, payload = "crash", "malformed report", None
                else:
                    self.payloads[idx] = payload.decode("ascii")
            elif status == "pass" and kind != "stmt":
                status, message = "crash", "a child claimed a verdict it does not decide"
            elif status not in STATUSES and status != "done":
                status, message = "crash", "unknown status"
            if job.get("mode") == "fast" and job.get("kind") != "stdio":
                # The child's CPU mark is only believed downwards: a lying child cannot move the baseline past the
                # CPU time the kernel has counted for it, so the watch below still sees every second it spends.
                # What the rest of S's tree used (a child a test forked, reaped or alive) is the kernel's figure.
                own, others = run.tree_cpus()
                mark = max(run.last_cpu, min(cpu_mark, own) + others)
                used = mark - run.last_cpu
                run.last_cpu = mark
                run.last_event = _monotonic()
                run.reported.append(idx)
                cpu[idx] = used
                if used > timeout:
                    status, message = "timeout", f"CPU time {used:.2f} s over the limit"
                statuses[idx], messages[idx] = status, str(message)[:MAX_MESSAGE]
                pending.popleft()
            else:
                values[idx] = (status, str(message)[:MAX_MESSAGE])
        elif tag == "V":  # a one-probe test's value, ``raw`` its wire bytes (isolated mode)
            idx, ident = int(fields[1]), int(fields[2], 16)
            if not 0 <= ident < 1 << 64:
                raise ValueError("not an identity")
            if not pending or idx != pending[0] or idx in values or raw is None or not run.clones:
                return  # only the first line for the test being run counts
            if tests is None or tests[idx].kind != "plan":
                values[idx] = ("crash", "malformed report")
                return
            self.payloads[idx] = _b2a(b"E1:v%x;%b" % (ident, raw), newline=False).decode("ascii")
            values[idx] = ("value", "")
        elif tag == "O":
            idx = int(fields[1])
            if pending and idx == pending[0] and job.get("kind") == "stdio":
                data = b"" if fields[2] == b"-" else _a2b_strict(fields[2])
                self.outputs[idx] = data[: int(job.get("max_output_bytes", 1 << 20)) + 1].decode("utf-8", "replace")
        elif tag not in ("D", "U"):
            raise ValueError("unknown line")
        elif tag == "D" and not run.clones:
            idx, wstatus, used = int(fields[1]), _wait_status(fields[2]), _finite(fields[3])
            killed = None if fields[4] == b"-" else fields[4].decode("ascii")
            if killed not in (None, "cpu", "wall", "output"):
                raise ValueError("unknown kill reason")
            if not pending or idx != pending[0]:
                return
            run.last_event = _monotonic()
            run.reported_cpu += used
            self._test_ended(run, idx, wstatus, used, killed, job, pending, statuses, messages, cpu, values)

    def _test_ended(self, run, idx, wstatus, used, killed, job, pending, statuses, messages, cpu, values) -> None:
        """Test ``idx`` (``pending[0]``) is over: its process ended with ``wstatus`` after ``used`` CPU seconds,
        killed (``"cpu"``, ``"wall"``, ``"output"``) or not (None). Its verdict comes from what it reported, else
        from how it ended."""
        timeout = float(job["timeout_s"])
        pending.popleft()
        run.last_cpu = run.cpu() or run.last_cpu  # S's own time is judged per test
        run.reported.append(idx)
        cpu[idx] = float(used)
        reported = values.pop(idx, None)
        if killed == "output":
            statuses[idx], messages[idx] = "error", "output over the limit"
        elif killed or float(used) > timeout:
            statuses[idx] = "timeout"
            messages[idx] = "wall-clock backstop (blocked or sleeping)" if killed == "wall" else "CPU time limit"
        elif reported is not None:
            statuses[idx], messages[idx] = reported
        elif job.get("kind") == "stdio" and os.WIFEXITED(int(wstatus)):
            # A script may end itself with os._exit (a common fast-exit idiom); its output is still judged by
            # the server, so an exit without a line only decides whether there is output to judge.
            code = os.WEXITSTATUS(int(wstatus))
            statuses[idx], messages[idx] = ("done", "") if code == 0 else ("error", f"exit code {code}")
        else:
            wstatus = int(wstatus)
            statuses[idx] = "crash"
            if os.WIFSIGNALED(wstatus) and os.WTERMSIG(wstatus) == signal.SIGSEGV:
                messages[idx] = "segmentation fault"
            else:
                messages[idx] = _describe_exit(wstatus)

    # -- isolated mode, tests supervised here -----------------------------------------------------------------
    def _start_test(self, run: _Run, idx: int) -> None:
        """Tell S to start test ``idx``, the next of its list (see :func:`_clone_per_case`); its process will be this
        server's child. The byte says whether a folder a test can write changed since the last test started (the
        change times are looked at here, where no copy-on-write page pays for the ``stat``)."""
        for kid in run.children.pids():  # S has no business with processes of its own between tests
            _kill_tree(kid)
        seen = _mtimes(self.trace_folders)
        token = b"g" if seen == run.folders_seen else b"c"
        run.folders_seen = seen
        run.current, run.started, run.test_status, run.test_cpu = idx, _monotonic(), None, 0.0
        run.last_event = run.started
        run.started_cpu = run.s_extra(0.0)
        try:
            _write(run.ctl_fd, token)
        except OSError:
            pass  # S is gone: the end of its result pipe says so

    def _reap_test(self, run: _Run) -> bool:
        """Whether the running test's process ended. While it lives it is this server's only child besides S (what
        it starts is its own child until it ends), so the first to end is it. Once it has, whatever it left running
        is ended too; the CPU time of all of them, from ``wait4``, is in ``run.test_cpu``."""
        kids = [k for k in self.children.pids() if k != run.pid]
        alive = False
        for kid in kids:
            try:
                pid, status, usage = _wait4(kid, os.WNOHANG)
            except ChildProcessError:
                continue
            if not pid:
                alive = True
                continue
            run.test_cpu += usage.ru_utime + usage.ru_stime
            if run.test_status is None:
                run.test_status = status
        if run.test_status is None:
            return False
        if alive:
            run.test_cpu += sweep_children(spare=run.pid)
        return True

    def _finish_test(self, run: _Run, killed, job, tests, pending, statuses, messages, cpu, values) -> None:
        """The running test's processes are gone: read what it reported, give its verdict, keep count of tests that
        hit a limit in a row (past ``max_consecutive_timeouts`` the rest is not run).

        What is left unread after that is an unfinished line or frame of this test's (its process was killed
        mid-write, or wrote a byte count it never filled): it is dropped, so it cannot swallow the next test's."""
        idx, run.current = run.current, None
        self._drain(run, job, tests, pending, statuses, messages, cpu, values)  # its line came before its exit
        del run.buf[:]
        if not pending or pending[0] != idx:
            return
        # What S's tree did meanwhile is the test's too (S ran the program's module code, so a helper it forked,
        # or S itself computing past the cost of a clone, is the test's work done out of its process).
        used = run.test_cpu + max(0.0, run.s_extra(run.started_cpu))
        self._test_ended(run, idx, run.test_status or 0, used, killed, job, pending, statuses, messages, cpu, values)
        run.streak = run.streak + 1 if killed or used > float(job["timeout_s"]) else 0
        budget = job.get("max_consecutive_timeouts")
        if budget and run.streak >= budget:
            while pending:
                i = pending.popleft()
                statuses[i], messages[i] = "unexecuted", "skipped after repeated timeouts"

    def _check_test(self, run: _Run, cpu_budget: float, wall_budget: float, ended: tuple):
        """The running test's limits, checked when it could first have reached one. Returns ``(killed_for,
        next_check)``: a reason to end S (its own CPU time since the last test went over; it never started the
        test), or None and when to look again (None once a test ended here, killed at its limit)."""
        now = _monotonic()
        elapsed = now - run.started
        own = run.cpu() - run.last_cpu
        if own >= cpu_budget:
            run.killed_after_cpu = own
            return "cpu", None
        kids = [k for k in self.children.pids() if k != run.pid]
        if not kids and run.test_status is None:
            return ("wall", None) if elapsed >= wall_budget else (None, now + max(wall_budget - elapsed, 0.01))
        used = sum(_tree_cpu(k) for k in kids) + max(0.0, run.s_extra(run.started_cpu))
        if used < cpu_budget and elapsed < wall_budget:
            return None, now + min(max(cpu_budget - used, 0.01), wall_budget - elapsed)
        for kid in kids:
            _kill_tree(kid)
        self._reap_test(run)
        run.test_cpu += sweep_children(spare=run.pid)
        run.test_cpu = max(run.test_cpu, used)
        self._finish_test(run, "cpu" if used >= cpu_budget else "wall", *ended)
        return None, None

    # -- stdio jobs ------------------------------------------------------------------------------------------
    def _run_stdio(self, job: dict, limits: Limits, workdir: str) -> dict:
        """Run each stdin case; return what each printed. The expected outputs never come here: the caller compares
        (every child is a fork of this process, so what it holds a program could read)."""
        inputs = job["inputs"]
        n = _len(inputs)
        self.outputs: list = [None] * n
        for i, text in enumerate(inputs):
            path = os.path.join(workdir, f"in{i}")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.chmod(path, 0o644)
        statuses: list = [None] * n
        messages = [""] * n
        cpu = [0.0] * n
        while True:
            todo = [i for i in range(n) if statuses[i] is None]
            if not todo:
                break
            if self.progress.stopped(statuses):
                for i in todo:
                    statuses[i], messages[i] = "unexecuted", _STOPPED
                break

            def body(nonce, wfd, ctl, todo=todo):
                _stdio_child(job, todo, nonce, wfd, workdir, limits)

            self._supervise(job, body, todo, None, statuses, messages, cpu)
        outputs = [self.outputs[i] or "" if statuses[i] == "done" else None for i in range(n)]
        return {"statuses": statuses, "messages": messages, "cpu": cpu, "outputs": outputs}


def _clone_parent_works() -> bool:
    """Whether a child of this process can start a process as this one's child (``CLONE_PARENT``), which isolated
    mode's server-supervised tests need: a seccomp profile or an unusual kernel may refuse it, and S then supervises
    its tests itself. Tried once, when the server starts, with a child and a clone that exit at once."""
    if _SYSCALL is None:
        return False
    pid = _fork()
    if pid == 0:
        try:
            _exit(0 if _SYSCALL(*_CLONE_ARGS) >= 0 else 1)  # the clone exits here too, with 0
        finally:
            _exit(1)
    ok = False
    try:
        _, status = _waitpid(pid, 0)
        ok = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        if ok:
            _waitpid(-1, 0)  # the clone: this server's child
    except ChildProcessError:
        ok = False
    return ok


def _split_frames(data: bytes, prefix: bytes, max_size: int, *, frames: bool = True) -> tuple[list, bytes]:
    """The complete ``(line, raw)`` items of ``data`` whose line starts with ``prefix``, and what is left unfinished.

    ``raw`` is None for a plain line; a ``V`` line (see :meth:`_Reporter.value`) is followed by its byte count of
    raw bytes, which may hold anything (line ends included). A ``V`` line whose count is malformed or over
    ``max_size`` is no line; one whose bytes have not all come is left, with them, for the next read. Without
    ``frames`` (fast mode, stdio, S-supervised tests) every item is a plain line, a ``V`` one included.
    """
    frame = prefix + b"V "
    if not frames or frame not in data:
        *lines, rest = data.split(b"\n")
        return [(line, None) for line in lines if line.startswith(prefix)], rest
    items, pos = [], 0
    while True:
        end = data.find(b"\n", pos)
        if end < 0:
            break
        line, raw = data[pos:end], None
        pos = end + 1
        if line.startswith(frame):
            try:
                size = int(line.rsplit(b" ", 1)[1])
            except (ValueError, IndexError):
                continue
            if not 0 <= size <= max_size:
                continue
            if _len(data) - pos < size:
                pos = end - _len(line)  # its bytes are still coming: read the line again then
                break
            raw, pos = data[pos : pos + size], pos + size
        elif not line.startswith(prefix):
            continue
        items.append((line, raw))
    return items, data[pos:]


def _drain_pipe(fd: int) -> None:
    """Empty a non-blocking pipe (a short read says it is empty)."""
    try:
        while _len(_read(fd, 4096)) == 4096:
            pass
    except (BlockingIOError, InterruptedError):
        pass


def _on_child_exit(signum, frame) -> None:
    """SIGCHLD's handler in the server: nothing to do here, the byte on the wake pipe is the message."""


def _setup_imports() -> None:
    """Make installed packages importable without running site's ``.pth`` hooks (the server starts with ``-S``).

    Keeping the server small matters: every test forks it (or its child), and fork and exit cost grows with the
    pages a process maps. ``site`` with its ``.pth`` hooks more than doubles them; the package folders alone are
    what solutions need.
    """
    for entry in os.environ.get("ECD_SITE_PATHS", "").split(os.pathsep):
        if entry and entry not in sys.path and os.path.isdir(entry):
            sys.path.append(entry)
    import site

    site.setquit()  # exit()/quit(), which scripts use and -S leaves undefined
    # The few modules most solutions import, loaded once here (as root, before any uid drop) so every child has
    # them: ~2 MB more to fork, against ~5 ms of import per program, and importable even where the interpreter's
    # folder is not readable by the sandbox uid (pyenv under /root, outside bubblewrap).
    for name in _PRELOAD:
        try:
            __import__(name)
        except ImportError:
            pass


_PRELOAD = ("typing", "re", "collections", "heapq", "bisect", "functools", "itertools", "math", "string", "operator")


def main() -> None:
    # Move the protocol pipes off 0/1 so that nothing we run can write on them by accident.
    in_fd = os.dup(0)
    out_fd = os.dup(1)
    os.set_inheritable(in_fd, False)
    os.set_inheritable(out_fd, False)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    _setup_imports()
    server = Server(in_fd, out_fd)
    _prepare_server_process(server.workdir)
    server.watch_children()
    _PRISTINE_BUILTINS.update(vars(builtins))  # now with exit()/quit(); still before any untrusted code
    _PRISTINE_BUILTINS["__import__"] = _pristine_import
    snapshot_stdlib_modules()
    _trim_heap()
    server.serve()


if __name__ == "__main__":
    main()
