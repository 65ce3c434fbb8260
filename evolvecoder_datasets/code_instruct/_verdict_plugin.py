"""pytest plugin loaded by the verification harness (``-p ecd_verdict``); it writes the machine-readable verdict.

It reads the result path and a per-run random nonce from the environment at import time and removes both before any
test module is imported. Every collection error and every test phase is recorded; the file is written (atomically)
only when the session finishes, so a test or a solution that kills the interpreter (``os._exit(0)``) leaves no
verdict, and the harness counts that as a crash, never as a pass. Standard library only: it runs in the repository's
virtualenv, which has pytest but not this package.
"""

from __future__ import annotations

import json
import os
import re

_PATH = os.environ.pop("ECD_VERDICT_PATH", "")
_NONCE = os.environ.pop("ECD_VERDICT_NONCE", "")
_RESULTS: dict[str, str] = {}
_COLLECT_ERRORS: list[str] = []
_COLLECTED = [0]
_MISSING: set[str] = set()
_NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '([^']+)'")


def _note_missing(report) -> None:
    """Remember modules a failing import could not find (a diagnosis only; never part of the verdict)."""
    try:
        text = str(report.longrepr)
    except Exception:  # noqa: BLE001 - a repr that cannot be rendered just gives no diagnosis
        text = ""
    _MISSING.update(_NO_MODULE.findall(text))

# Phase outcomes in increasing severity: a test's verdict is the worst of its phases.
_RANK = {"passed": 0, "skipped": 1, "xfailed": 1, "xpassed": 1, "failed": 2, "error": 3}


def _record(nodeid: str, outcome: str) -> None:
    previous = _RESULTS.get(nodeid)
    if previous is None or _RANK[outcome] > _RANK[previous]:
        _RESULTS[nodeid] = outcome


def pytest_collectreport(report):
    if report.failed:
        _COLLECT_ERRORS.append(report.nodeid or "<session>")
        _note_missing(report)


def pytest_collection_modifyitems(session, config, items):
    _COLLECTED[0] = len(items)


def pytest_runtest_logreport(report):
    if report.failed:
        _note_missing(report)
    if report.when == "call":
        if hasattr(report, "wasxfail"):
            outcome = "xfailed" if report.skipped else "xpassed"
        else:
            outcome = report.outcome
    elif report.failed:
        outcome = "error"  # a fixture failed in setup or teardown
    elif report.skipped:
        outcome = "skipped"
    else:
        outcome = "passed"
    _record(report.nodeid, outcome)


def pytest_sessionfinish(session, exitstatus):
    if not _PATH:
        return
    payload = {
        "nonce": _NONCE,
        "exitstatus": int(exitstatus),
        "collected": _COLLECTED[0],
        "collect_errors": _COLLECT_ERRORS,
        "tests": _RESULTS,
        "missing_modules": sorted(_MISSING),
    }
    partial = _PATH + ".partial"
    with open(partial, "w", encoding="utf-8") as handle:
        json.dump(payload, handle)
    os.replace(partial, _PATH)
