"""Starting the server: its imports without ``site``, its process set-up, and :func:`main`."""

from __future__ import annotations

import builtins
import os
import signal
import sys

from . import libc, pristine, zygote
from .job import WARM_UP, AssertJob
from .limits import _prepare_server_process
from .pristine import _pristine_import, pin_builtins, snapshot_stdlib_modules
from .server import Server

pin_builtins(globals())


def _trim_heap() -> None:
    """Give the heap's free pages back to the kernel before a process starts forking.

    Start-up (imports, compiling this module when no bytecode cache is readable) leaves megabytes of freed memory
    in malloc's arenas. Those pages stay mapped, so every fork copies their page table entries and every exit tears
    them down: trimming them is ~2 MB less per fork. Done once in the server; a solution child does not repeat it
    (a full collection costs ~1 ms per program, more than its small compile leaves behind).
    """
    import gc

    gc.collect()
    trim = getattr(libc._LIBC, "malloc_trim", None)  # glibc only
    if trim is not None:
        trim(0)


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
    libc._prctl(libc._PR_SET_PDEATHSIG, signal.SIGKILL)
    libc._prctl(libc._PR_SET_CHILD_SUBREAPER, 1)
    # Not dumpable, nor is any process forked from it: a program of the server's own uid (a caller that is not
    # root) can neither ptrace the server or the zygote nor open their /proc/<pid>/mem (measured: PTRACE_SEIZE of
    # the server succeeded from a program's load).
    libc._prctl(libc._PR_SET_DUMPABLE, 0)
    _setup_imports()
    server = Server(in_fd, out_fd)
    _prepare_server_process(server.workdir)
    server.watch_children()
    pristine._PRISTINE_BUILTINS.update(vars(builtins))  # now with exit()/quit(); still before any untrusted code
    pristine._PRISTINE_BUILTINS["__import__"] = _pristine_import
    snapshot_stdlib_modules()
    if server.clone_parent:  # every assert job's S from a process that never held a test (see zygote.py)
        _warm_up(server)
        _trim_heap()
        server.zygote = zygote.start((in_fd, out_fd, server.wake_r, server.children.fd))
    else:
        _trim_heap()
    server.serve()


def _warm_up(server: Server) -> None:
    """Run one job of our own in each mode before the zygote is forked, so that the interpreter state every
    solution process inherits from it is that of a server that has run jobs (its type attribute cache above all:
    each entry a test's process must fill in itself is a page it copies, ~40 per test from a server that never ran
    one). The job is ours: nothing of a caller's is in this process yet."""
    for mode in ("isolated", "fast"):
        server.run_job(AssertJob.parse({**WARM_UP, "mode": mode}))
