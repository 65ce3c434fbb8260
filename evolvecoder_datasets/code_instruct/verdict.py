"""The verdict of one pytest run: the plugin's nonce-stamped result file and the :class:`PytestRun` read from it.

Every backend stages ``_verdict_plugin.py`` in the run's harness folder and loads it as :data:`PLUGIN_MODULE`; it
writes each test's outcome to a result file stamped with the run's random nonce. :func:`read_verdict` is the one
reader of that file: the exit code and the log never decide a verdict, and a missing, unreadable or unstamped file
reads as no verdict at all (a crash).

Example:
    >>> PytestRun("passed", {"test_x.py::test_ok": "passed"}).passed
    True
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["PLUGIN_MODULE", "PLUGIN_PATH", "RUN_STATUSES", "PytestRun", "read_verdict"]

PLUGIN_PATH = Path(__file__).with_name("_verdict_plugin.py")
#: Module name the verdict plugin is loaded under (``pytest -p ecd_verdict``).
PLUGIN_MODULE = "ecd_verdict"
#: Outcomes of one pytest run, as :attr:`PytestRun.status` reports them.
RUN_STATUSES = ("passed", "failed", "no_tests", "timeout", "crashed")
_PYTEST_INTERNAL_ERROR = 3  # pytest.ExitCode.INTERNAL_ERROR


@dataclass(frozen=True)
class PytestRun:
    """The verdict of one sandboxed pytest run.

    Args:
        status (`str`): ``"passed"`` (at least one test ran and every test passed), ``"failed"`` (a test failed,
            errored or was skipped, or collection failed), ``"no_tests"`` (nothing collected), ``"timeout"`` (wall
            or CPU limit) or ``"crashed"`` (no complete result file with the run's nonce: the interpreter died or
            exited early, e.g. ``os._exit(0)``).
        tests (`dict[str, str]`): outcome per test id (``passed``, ``failed``, ``error``, ``skipped``, ``xfailed``,
            ``xpassed``).
        collect_errors (`tuple[str, ...]`): ids of files that failed to import or collect.
        exit_code (`int` or `None`): the process's exit code (for diagnostics only; never the verdict).
        duration_s (`float`): wall time of the run.
        log_tail (`str`): the end of pytest's output, for humans.
        missing_modules (`tuple[str, ...]`): modules a failing import could not find (``ModuleNotFoundError``),
            for diagnosis only.
        judged_outside (`bool`, defaults to `False`): the outcomes were decided by the sandbox's judge on the test's
            split form, not by pytest in the solution's interpreter.
    """

    status: str
    tests: dict[str, str] = field(default_factory=dict)
    collect_errors: tuple[str, ...] = ()
    exit_code: int | None = None
    duration_s: float = 0.0
    log_tail: str = ""
    missing_modules: tuple[str, ...] = ()
    judged_outside: bool = False

    @property
    def passed(self) -> bool:
        """Whether every collected test passed (and there was at least one)."""
        return self.status == "passed"

    def counts(self) -> dict[str, int]:
        """How many tests ended in each outcome.

        Example:
            >>> PytestRun("failed", {"t::a": "passed", "t::b": "failed"}).counts()
            {'passed': 1, 'failed': 1}
        """
        return dict(Counter(self.tests.values()))


def read_verdict(path: str | os.PathLike, nonce: str) -> tuple[str, dict[str, str], tuple[str, ...]] | None:
    """Read the verdict file the plugin writes; ``None`` when it is missing, unreadable or not stamped with ``nonce``.

    Returns ``(status, tests, collect_errors)`` with ``status`` one of ``passed``, ``failed``, ``no_tests``.

    Args:
        path (`str` or `os.PathLike`): the result file.
        nonce (`str`): the run's nonce, handed to the plugin through the environment.

    Example:
        >>> import json, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "v.json")
        >>> _ = open(path, "w").write(json.dumps({"nonce": "n1", "collected": 1, "collect_errors": [],
        ...                                       "tests": {"t.py::test_a": "passed"}}))
        >>> read_verdict(path, "n1")[0], read_verdict(path, "other")
        ('passed', None)
    """
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not nonce or data.get("nonce") != nonce:
        return None
    tests = {str(k): str(v) for k, v in dict(data.get("tests") or {}).items()}
    errors = tuple(str(e) for e in data.get("collect_errors") or ())
    if data.get("exitstatus") == _PYTEST_INTERNAL_ERROR:
        errors += ("<internal error>",)  # e.g. SystemExit raised while collecting
    if errors or any(outcome != "passed" for outcome in tests.values()):
        return "failed", tests, errors
    if not tests:
        return "no_tests", tests, errors
    return "passed", tests, errors


def _missing_modules(path: Path) -> tuple[str, ...]:
    """The ``missing_modules`` the plugin noted (the file's nonce was already checked by :func:`read_verdict`)."""
    try:
        names = json.loads(path.read_text(encoding="utf-8")).get("missing_modules") or ()
    except (OSError, ValueError, AttributeError):
        return ()
    return tuple(str(name) for name in names if isinstance(name, str))
