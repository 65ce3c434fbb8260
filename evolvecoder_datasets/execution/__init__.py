"""The sandbox: run untrusted, model-written Python against tests, fast and safely.

Public names: :class:`Sandbox`, :func:`run_tests`, :func:`extract_code`, :class:`ExecutionReport`, :class:`Job`.

Example:
    >>> from evolvecoder_datasets.execution import run_tests
    >>> run_tests("def sq(x):\\n    return x * x", ["assert sq(3) == 9", "assert sq(-2) == -4"]).statuses
    ['pass', 'fail']
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Sequence

from .extract import extract_code
from .report import STATUS_CODES, STATUS_NAMES, ExecutionReport
from .sandbox import MODES, Job, Sandbox

__all__ = ["Sandbox", "Job", "ExecutionReport", "run_tests", "extract_code", "STATUS_NAMES", "STATUS_CODES", "MODES"]

_shared: dict[tuple, Sandbox] = {}
_shared_lock = threading.Lock()


def shared_sandbox(**settings) -> Sandbox:
    """A process-wide sandbox for ``settings``, started once and reused (closed at interpreter exit).

    Example:
        >>> sb = shared_sandbox(timeout_s=1.0, mode="fast")
        >>> sb is shared_sandbox(timeout_s=1.0, mode="fast")
        True
    """
    import os

    key = (os.getpid(), tuple(sorted(settings.items())))
    with _shared_lock:
        sandbox = _shared.get(key)
        if sandbox is None:
            sandbox = _shared[key] = Sandbox(**settings)
            atexit.register(sandbox.close)
        return sandbox


def run_tests(
    program: str,
    tests: Sequence[str],
    timeout_s: float = 1.0,
    *,
    memory_mb: int = 1024,
    mode: str = "isolated",
    preamble: str | None = None,
    max_consecutive_timeouts: int | None = 2,
) -> ExecutionReport:
    """Run one program against its tests in a shared, lazily started sandbox.

    Args:
        program (`str`): Python source.
        tests (`Sequence[str]`): assert snippets.
        timeout_s (`float`, defaults to 1.0): CPU seconds per test.
        memory_mb (`int`, defaults to 1024): address-space limit.
        mode (`str`, defaults to ``"isolated"``): ``"isolated"`` or ``"fast"``.
        preamble (`str`, *optional*): code run before the program (e.g. ``"from typing import List"``).
        max_consecutive_timeouts (`int`, *optional*, defaults to 2): after this many timeouts in a row the rest is
            ``unexecuted`` (the policy every entry point shares); ``None`` runs every test.

    Example:
        >>> run_tests("while True: pass", ["assert True"], timeout_s=0.2).statuses
        ['timeout']
    """
    sandbox = shared_sandbox(timeout_s=timeout_s, memory_mb=memory_mb, mode=mode, preamble=preamble, workers=1,
                             max_consecutive_timeouts=max_consecutive_timeouts)
    return sandbox.run(program, tests)
