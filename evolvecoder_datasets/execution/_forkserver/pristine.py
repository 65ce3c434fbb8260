"""What the harness holds of the interpreter from before any program ran.

A program may rebind names in builtins or in shared modules (``builtins.len = ...``, ``json.dumps = ...``,
``math.isclose = ...``). Every module of this package therefore copies the builtins into its own globals when it is
imported (:func:`pin_builtins`), so its code finds them there first, and calls the ``os`` and ``time`` functions
captured here under private names. The tests themselves run over pristine copies of the builtins and of the
standard-library modules (``_PRISTINE_BUILTINS``, ``_PRISTINE_MODULES``, :func:`snapshot_stdlib_modules`).
"""

from __future__ import annotations

import binascii
import builtins
import os
import re
import select
import sys
import time
import types


def pin_builtins(namespace: dict) -> None:
    """Copy the builtins as they are now into ``namespace`` (a module's globals), dunder names left out.

    Called by every module of this package when it is imported, before any program runs: a program that later
    rebinds ``builtins.len`` or ``builtins.isinstance`` does not change what the harness code calls.
    """
    namespace.update({_k: _v for _k, _v in vars(builtins).items() if not _k.startswith("__")})


# This module's own builtins and the functions the harness calls, captured before any untrusted code runs.
pin_builtins(globals())
_fork, _exit, _write, _read, _close, _kill, _killpg = os.fork, os._exit, os.write, os.read, os.close, os.kill, os.killpg
_wait4, _waitpid, _monotonic, _process_time = os.wait4, os.waitpid, time.monotonic, time.process_time
_getpid, _setpgid, _select, _writev = os.getpid, os.setpgid, select.select, os.writev
_pidfd_open = getattr(os, "pidfd_open", None)
_b2a = binascii.b2a_base64


def _read_exact(fd: int, n: int) -> bytes:
    """``n`` bytes from a pipe; fewer only where it ended first."""
    chunks, left = [], n
    while left:
        try:
            chunk = _read(fd, left)
        except InterruptedError:
            continue
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
_FunctionType = types.FunctionType
# Tests resolve builtins here, not in the (possibly monkeypatched) builtins module the program shares.
_PRISTINE_BUILTINS = dict(vars(builtins))
_BUILTIN_NAMES = frozenset(k for k in _PRISTINE_BUILTINS if not k.startswith("_"))
_isinstance, _type, _len, _id = isinstance, type, len, id
_AssertionError, _MemoryError, _SystemExit, _BaseException = AssertionError, MemoryError, SystemExit, BaseException


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
