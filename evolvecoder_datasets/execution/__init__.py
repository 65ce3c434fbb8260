"""The sandbox: run untrusted, model-written Python against tests, fast and safely.

Public names: :class:`Sandbox`, :func:`run_tests`, :func:`extract_code`, :class:`ExecutionReport`, :class:`Job`,
and :class:`~evolvecoder_datasets.limits.SandboxSettings`, the one place of every sandbox setting.

Example:
    >>> from evolvecoder_datasets.execution import run_tests
    >>> run_tests("def sq(x):\\n    return x * x", ["assert sq(3) == 9", "assert sq(-2) == -4"]).statuses
    ['pass', 'fail']
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from .._cache import process_shared
from ..limits import SandboxSettings
from .extract import extract_code
from .report import ExecutionReport
from .sandbox import Job, Sandbox, resolve_settings

__all__ = ["Sandbox", "Job", "ExecutionReport", "run_tests", "shared_sandbox", "extract_code"]

_shared: dict[tuple, Sandbox] = {}
_shared_lock = threading.Lock()


def shared_sandbox(settings: SandboxSettings | None = None, **overrides) -> Sandbox:
    """A process-wide sandbox for these settings (as :class:`Sandbox` takes them), started once and reused (closed
    at interpreter exit). Equal settings share one sandbox, whichever config carried them.

    Example:
        >>> sb = shared_sandbox(timeout_s=1.0, mode="fast")
        >>> from evolvecoder_datasets.limits import SandboxSettings
        >>> sb is shared_sandbox(SandboxSettings(mode="fast"))
        True
    """
    resolved = resolve_settings(settings, overrides)
    return process_shared(_shared, _shared_lock, resolved, lambda: Sandbox(resolved))


def run_tests(program: str, tests: Sequence[str], settings: SandboxSettings | None = None, **overrides) -> ExecutionReport:
    """Run one program against its tests in a shared, lazily started sandbox (one worker unless told otherwise).

    Args:
        program (`str`): Python source.
        tests (`Sequence[str]`): assert snippets.
        settings (`SandboxSettings`, *optional*): the sandbox's settings (defaults: 1 CPU second per test, 1 GiB,
            ``"isolated"``, the rest unexecuted after 2 timeouts in a row).
        **overrides: single settings by name (``timeout_s=0.2``, ``mode="fast"``, ``preamble=...``).

    Example:
        >>> run_tests("while True: pass", ["assert True"], timeout_s=0.2).statuses
        ['timeout']
    """
    if settings is None or settings.workers is None:
        overrides.setdefault("workers", 1)
    return shared_sandbox(settings, **overrides).run(program, tests)
