"""The fork server: a small stdlib-only process that runs untrusted programs against tests.

It is started by :class:`evolvecoder_datasets.execution.Sandbox` through ``isolation.server_command``: the real
interpreter as ``python -I -S -B -c "...; import _forkserver; _forkserver.main()"`` (imported as a module, not run
as a script, which keeps less heap alive), inside bubblewrap or the ``unshare`` bootstrap when available, never by
forking the caller. It talks to its parent over length-prefixed JSON frames on two pipes and handles one job (one
program and its tests) at a time; during a ``stop_on_failure`` job it also streams each ended test and listens for
the caller's ``stop``.

Process tree of one job::

    server (trusted: never runs program code; judges CPU time, sweeps, never a split test's verdict)
      ├─ Z: the zygote, forked before any job (never holds anything of a job; clones each S for the server)
      ├─ S: solution child (own session; rlimits; unprivileged uid; loads the program once)
      └─ G: one process per test in "isolated" mode (own process group; cloned by S as the server's child)

Where ``CLONE_PARENT`` is refused there is no Z: S is forked from the server and supervises its own tests (G is
then S's child). stdin/stdout jobs always fork S from the server.

Results travel on a dedicated result pipe as lines that start with a per-run random nonce; a test without a line
is a crash, and exit codes are never trusted. This server decides no verdict of a split test: the caller's judge
(``judge.py``) split each test into *probes* (the expressions that need the program) and its own part, and only the
probes come here. A child evaluates them and sends their values in the wire encoding (``_wire.py``); the server
passes the bytes on, and the judge, in a process that never ran program code, evaluates the asserts. A test the
judge could not split arrives whole (``T``) and runs with the older in-process hardening (a comparator held in a
closure, pristine builtins); its verdict is flagged ``inside`` by the caller. Nothing this process holds is a
secret: it never receives a test's expected side. The probes themselves reach an assert job's S only after it has
loaded the program (``zygote``), so a program cannot compute its tests' answers while it loads.

Its modules, one concern each (every one imported here, at once: the sandbox's bootstrap puts the execution folder
on ``sys.path`` only while it imports this package, see ``isolation.server_command``):

- ``job``: the conversation with the caller (the requests it may send, the replies, ``PROTOCOL_VERSION``) and the
  typed job, read once where its frame arrives (``parse_job``), with no default on this side;
- ``pristine``: the builtins and ``os`` functions pinned before any program runs, pristine copies for tests;
- ``libc``: the C library handle, the bare ``clone`` and the other calls ``os`` lacks;
- ``values``: canonical values, the hardened comparison of whole tests, stdin/stdout output comparison;
- ``prepared``: tests compiled once per distinct source (``prepare_test``);
- ``lines``: the result pipe's lines, written by ``_Reporter`` and split and read by the server;
- ``processes``: CPU time from ``/proc``, children, waiting under limits, killing;
- ``traces``: what a program leaves on disk or in IPC, and its link-safe removal;
- ``limits``: the rlimits and uid of a job's processes, entering a child;
- ``solution``: the solution process S and its test loops;
- ``run``, ``progress``: the server's state of one S, and early stop (given what it sends and reads with);
- ``server``, ``watch``, ``reading``: the server, what it does while S runs, and how it reads S's lines;
- ``zygote``: the process each assert job's S is cloned from, and the server's handle on it;
- ``startup``: :func:`main`.

Every module stays importable without the package and without third-party modules: intra-package imports are
relative, and the sibling ``_wire`` is imported as a top-level module when the sandbox starts the server.
"""

# ruff: noqa: F401 - every module is imported for its loading now, not for a name
from . import (
    job,
    libc,
    limits,
    lines,
    prepared,
    pristine,
    processes,
    progress,
    reading,
    run,
    server,
    solution,
    startup,
    traces,
    values,
    watch,
    zygote,
)
from .startup import main

__all__ = ["main"]
