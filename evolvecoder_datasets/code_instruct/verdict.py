"""The verdict of one pytest run: the plugin's signed result file and the :class:`PytestRun` read from it.

Every backend stages ``_verdict_plugin.py`` in the run's harness folder and loads it as :data:`PLUGIN_MODULE`, with
the flags of :func:`harness_args`. The run's random key reaches the plugin through an inherited pipe (the launcher
writes it there), never the environment or a file a test could read; the plugin signs its result file with an HMAC
of that key. :func:`read_verdict` is the one reader of that file, in the judging process: the exit code and the log
never decide a verdict by themselves, a missing, unreadable or unsigned file reads as no verdict at all (a crash),
and a signed file passes only when pytest's own exit status is 0, nothing was tampered with, and every collected
test has a passed outcome (a collected test without one, or an outcome for a test not collected, is a failure).

Example:
    >>> PytestRun("passed", {"test_x.py::test_ok": "passed"}).passed
    True
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["HARNESS_FLAGS", "PLUGIN_MODULE", "PLUGIN_PATH", "RUN_STATUSES", "PytestRun", "harness_args", "new_key",
           "read_verdict", "sign_verdict"]  # fmt: skip

PLUGIN_PATH = Path(__file__).with_name("_verdict_plugin.py")
#: Module name the verdict plugin is loaded under (``pytest -p ecd_verdict``).
PLUGIN_MODULE = "ecd_verdict"
#: Outcomes of one pytest run, as :attr:`PytestRun.status` reports them.
RUN_STATUSES = ("passed", "failed", "no_tests", "timeout", "crashed")
#: The largest result file read (a bigger one is no verdict), and the most entries of each kind taken from it.
MAX_VERDICT_BYTES = 8 << 20
MAX_ENTRIES = 20_000
_MAX_TEXT = 2_000
_MAX_PARAMS = 1 << 16  # the repr of one test's parameters (a longer one is cut, and then matches nothing)


@dataclass(frozen=True)
class PytestRun:
    """The verdict of one sandboxed pytest run.

    Args:
        status (`str`): ``"passed"`` (at least one test ran, every collected test passed, pytest exited 0), ``"failed"``
            (a test failed, errored, was skipped or has no outcome, collection failed, or the run was tampered with),
            ``"no_tests"`` (nothing collected), ``"timeout"`` (wall or CPU limit) or ``"crashed"`` (no complete result
            file signed with the run's key: the interpreter died or exited early, e.g. ``os._exit(0)``). For a
            collect-only run, ``"passed"`` means at least one test was collected and nothing failed or was tampered
            with.
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
        collected (`tuple[tuple[str, int], ...]`): every test pytest collected, with the first line of its function
            as pytest reports it.
        tampered (`tuple[str, ...]`): what the plugin saw changed under it (pytest's modules, a plugin registered
            during the run, a refused audit event); never part of a passed run.
        listed (`tuple[str, ...]`): the test ids pytest printed (a collect-only run's output, read with bounds).
        params (`tuple[tuple[str, str], ...]`): each parametrized test collected, with the ``repr`` of the dict of
            its parameters (at most 64 KiB of it).
    """

    status: str
    tests: dict[str, str] = field(default_factory=dict)
    collect_errors: tuple[str, ...] = ()
    exit_code: int | None = None
    duration_s: float = 0.0
    log_tail: str = ""
    missing_modules: tuple[str, ...] = ()
    judged_outside: bool = False
    collected: tuple[tuple[str, int], ...] = ()
    tampered: tuple[str, ...] = ()
    listed: tuple[str, ...] = ()
    params: tuple[tuple[str, str], ...] = ()

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


#: pytest's flags for every harness run (and an exported ``test.sh``): the verdict plugin, no cache, no debugger (its
#: class keeps pytest's configuration where a test could read it), plain asserts (the rewriting import hook keeps it
#: on ``sys.meta_path``).
HARNESS_FLAGS = ("-p", PLUGIN_MODULE, "-p", "no:cacheprovider", "-p", "no:debugging", "--assert=plain", "-q")


def harness_args(ini: str, rootdir: str, test_file: str, *, collect_only: bool = False) -> list[str]:
    """pytest's arguments for a harness run (after ``python -m pytest``): the verdict plugin, no cache, no debugger
    (its class keeps pytest's configuration where a test could read it), plain asserts (the rewriting import hook
    keeps it on ``sys.meta_path``), the harness's empty ini file.

    Example:
        >>> harness_args("/h/pytest.ini", "/w", "test_task.py", collect_only=True)[-2:]
        ['--collect-only', 'test_task.py']
    """
    return [*HARNESS_FLAGS, "-c", ini, "--rootdir", rootdir, "-o", "addopts=",
            *(["--collect-only"] if collect_only else []), test_file]  # fmt: skip


def new_key() -> str:
    """A fresh random key for one run, as hex (the launcher hands it to the plugin through a pipe).

    Example:
        >>> len(new_key())
        64
    """
    return secrets.token_hex(32)


def sign_verdict(payload: bytes, key: str) -> bytes:
    """A result file's bytes as the plugin writes them: ``payload``, then its HMAC-SHA256 under ``key`` on a line.

    Example:
        >>> sign_verdict(b"{}", "00").splitlines()[0]
        b'{}'
    """
    digest = hmac.new(key.encode("ascii"), payload, "sha256").hexdigest()
    return payload + b"\n" + digest.encode("ascii") + b"\n"


def read_verdict(path: str | os.PathLike, key: str, *, collect_only: bool = False) -> PytestRun | None:
    """Read the result file the plugin wrote; ``None`` when it is missing, unreadable, too large, or not signed with
    ``key``. Everything in it is the untrusted run's account, read with bounds; the status is decided here.

    Args:
        path (`str` or `os.PathLike`): the result file.
        key (`str`): the run's key (hex), handed to the plugin through a pipe.
        collect_only (`bool`, defaults to `False`): the run only collected (``--collect-only``).

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "v.json")
        >>> payload = (b'{"version":2,"exitstatus":0,"collected":[["t.py::test_a",1]],"collect_errors":[],'
        ...            b'"tests":{"t.py::test_a":"passed"},"missing_modules":[],"tampered":[]}')
        >>> _ = open(path, "wb").write(sign_verdict(payload, "k1"))
        >>> read_verdict(path, "k1").status, read_verdict(path, "k2")
        ('passed', None)
    """
    data = _signed_payload(path, key)
    if data is None:
        return None
    tests = _text_map(data.get("tests"))
    errors = _texts(data.get("collect_errors"))
    tampered = _texts(data.get("tampered"))
    collected = tuple((str(e[0])[:_MAX_TEXT], e[1]) for e in _entries(data.get("collected"))
                      if isinstance(e, list) and len(e) == 2 and isinstance(e[1], int))  # fmt: skip
    params = tuple((e[0][:_MAX_TEXT], e[1][:_MAX_PARAMS]) for e in _entries(data.get("params"))
                   if isinstance(e, list) and len(e) == 2 and all(isinstance(x, str) for x in e))  # fmt: skip
    exitstatus = data.get("exitstatus")
    missing = _texts(data.get("missing_modules"))
    ids = [name for name, _ in collected]
    if exitstatus == 3:  # pytest.ExitCode.INTERNAL_ERROR, e.g. SystemExit raised while collecting
        errors += ("<internal error>",)
    if collect_only:
        if errors or tampered or len(set(ids)) != len(ids):
            status = "failed"
        else:
            status = "no_tests" if not collected else "passed" if exitstatus == 0 else "failed"
        return PytestRun(status, {}, errors, missing_modules=missing, collected=collected, tampered=tampered,
                         params=params)  # fmt: skip
    untested = [name for name in ids if name not in tests]
    uncollected = [name for name in tests if name not in set(ids)]
    if errors or tampered or untested or uncollected or any(outcome != "passed" for outcome in tests.values()):
        status = "failed"
    elif not tests:
        status = "no_tests"
    else:
        status = "passed" if exitstatus == 0 else "failed"
    for name in untested:  # a collected test without an outcome never ran to its end: a failure
        tests.setdefault(name, "error")
    return PytestRun(status, tests, errors, missing_modules=missing, collected=collected, tampered=tampered,
                     params=params)  # fmt: skip


def _signed_payload(path: str | os.PathLike, key: str) -> dict | None:
    """The JSON object of a result file whose HMAC checks out; ``None`` otherwise (no link followed, no FIFO waited
    on, at most :data:`MAX_VERDICT_BYTES`)."""
    if not key:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = b""
        while len(data) <= MAX_VERDICT_BYTES:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            data += chunk
    except OSError:
        return None
    finally:
        os.close(fd)
    payload, _, digest = data.rstrip(b"\n").rpartition(b"\n")
    if len(data) > MAX_VERDICT_BYTES or not payload:
        return None
    expected = hmac.new(key.encode("ascii"), payload, "sha256").hexdigest().encode("ascii")
    if not hmac.compare_digest(digest, expected):
        return None
    try:
        value = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) and value.get("version") == 2 else None


def _entries(value) -> list:
    return value[:MAX_ENTRIES] if isinstance(value, list) else []


def _texts(value) -> tuple[str, ...]:
    return tuple(str(v)[:_MAX_TEXT] for v in _entries(value) if isinstance(v, str))


def _text_map(value) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    items = list(value.items())[:MAX_ENTRIES]
    return {str(k)[:_MAX_TEXT]: str(v)[:40] for k, v in items if isinstance(v, str)}
