"""How a stdin/stdout case is judged: the default token compare, or the problem's own checker.

**The default compare** (:func:`outputs_match`) splits both texts on whitespace and compares token by token.
Integers are compared exactly, whatever their size (``1000000007`` is not ``1000000000`` at any tolerance); a
tolerance, when the problem gives one, applies only where the expected token is written with a fraction or an
exponent (``0.333333``, ``1e-9``), and then the program's token must be a plain decimal number too (no ``nan``,
``inf``, ``1_000`` or hex that Python's ``float`` would accept). Everything else compares as text.

**A checker** (:class:`Checker`) is a special judge for problems with more than one right answer, in one of the two
contracts contest tooling uses:

- ``testlib``: ``checker <input> <output> <answer>``; exit 0 accepted, 1 wrong answer, 2 presentation error,
  3 checker failure, 7 points (a partial score: not accepted). ``#include "testlib.h"`` finds the vendored copy
  (testlib 0.9.45, :data:`~.languages.TESTLIB_INCLUDE`).
- ``kattis`` (the ICPC output-validator contract): ``validator <input> <answer> <feedback_dir> < output``; exit 42
  accepted, 43 wrong answer; ``judgemessage.txt`` in the feedback folder says why.
- ``codeforces`` (the convention of ``open-r1/codeforces``' ``generated_checker`` scripts, as open-r1's own runner
  calls them): ``checker <input> <answer> <output>``; it exits 0 and prints its score: ``1`` or ``100`` accepted,
  anything else a wrong answer.

A checker is untrusted code too (model-written or downloaded): it runs in a sandbox process of its own, in a fork
server that never runs programs, after the program, on copies of the three files, with its own limits
(:data:`CHECKER_CPU_S`, :data:`CHECKER_MEMORY_MB`). Any other ending of it (a crash, a timeout, exit 3, an unknown
code) is a failure of the checker on that case (:func:`checker_verdict`), never a pass. The engine then runs it once
more with the jury's answer as the output: where it accepts that, the checker works and what it could not judge is
the program's output (the program's fail); otherwise the case is an infrastructure failure (nobody's verdict).

Example:
    >>> from evolvecoder_datasets.execution.checkers import Checker, outputs_match
    >>> outputs_match("1000000000", "1000000007", float_tol=1e-6), outputs_match("0.3333334", "0.333333", 1e-6)
    (False, True)
    >>> Checker("import sys; sys.exit(42)", language="python", contract="kattis").contract
    'kattis'
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from .languages import LANGUAGES

__all__ = [
    "CHECKER_CPU_S",
    "CHECKER_FAILED",
    "CHECKER_MEMORY_MB",
    "CHECKER_WALL_S",
    "CONTRACTS",
    "Checker",
    "checker_verdict",
    "outputs_match",
]

#: The testlib, Kattis and open-r1 Codeforces contracts.
CONTRACTS = ("testlib", "kattis", "codeforces")
#: CPU seconds and address space a checker gets per case (apart from the program's limits), and its wall-clock
#: backstop. Checking stops at the first case whose checker fails: the job's reward is ``None`` from there on.
CHECKER_CPU_S = 5.0
CHECKER_WALL_S = 1.5 * CHECKER_CPU_S + 2.0
CHECKER_MEMORY_MB = 1024

#: How every ``infra_error`` a checker caused begins (a broken checker, not a dead sandbox: rerunning will not help).
CHECKER_FAILED = "checker failed"

_INTEGER = re.compile(r"[+-]?[0-9]+\Z")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")


@dataclass(frozen=True)
class Checker:
    """A problem's special judge: its ``source``, its ``language`` (``"cpp"`` or ``"python"``) and its ``contract``
    (``"testlib"`` or ``"kattis"``).

    Example:
        >>> Checker.from_value({"source": "int main() {}", "language": "cpp", "contract": "testlib"}).language
        'cpp'
        >>> Checker.from_value(None) is None
        True
    """

    source: str
    language: str = "cpp"
    contract: str = "testlib"

    def __post_init__(self) -> None:
        if not isinstance(self.source, str) or not self.source.strip():
            raise ConfigError("a checker needs its source text")
        if self.language not in LANGUAGES:
            raise ConfigError(f"unknown checker language {self.language!r}; choose one of {sorted(LANGUAGES)}")
        if self.contract not in CONTRACTS:
            raise ConfigError(f"unknown checker contract {self.contract!r}; choose one of {CONTRACTS}")

    @classmethod
    def from_value(cls, value: Any) -> Checker | None:
        """A checker from a dataset cell (``{source, language, contract}`` or null), a tuple, or a checker."""
        if value is None or isinstance(value, Checker):
            return value
        if isinstance(value, Mapping):
            if value.get("source") is None:
                return None
            return cls(value["source"], value.get("language") or "cpp", value.get("contract") or "testlib")
        if isinstance(value, (tuple, list)) and len(value) == 3:
            return cls(*value)
        raise ConfigError(f"a checker is {{source, language, contract}} or null, got {type(value).__name__}")

    def as_tuple(self) -> tuple[str, str, str]:
        return self.source, self.language, self.contract


def outputs_match(actual: str, expected: str, float_tol: float | None = None) -> bool:
    """Whitespace-normalised token compare: integers exactly, a tolerance only for numbers written with a fraction
    or an exponent (relative to the expected value, absolute below 1).

    Example:
        >>> outputs_match("1 2\\n3\\n", "1 2 3"), outputs_match("2", "2.0", float_tol=1e-9)
        (True, True)
        >>> outputs_match("12345678901234567890", "12345678901234567891", float_tol=1e-6)
        False
        >>> outputs_match("nan", "0.5", float_tol=1e9), outputs_match("0.5001", "0.5", float_tol=1e-6)
        (False, False)
    """
    a, e = actual.split(), expected.split()
    if a == e:
        return True
    if len(a) != len(e):
        return False
    for x, y in zip(a, e):
        if x != y and not _same_number(x, y, float_tol):
            return False
    return True


def _same_number(x: str, y: str, float_tol: float | None) -> bool:
    if _INTEGER.match(y):  # an integer answer: the same integer, exactly (``+7`` and ``007`` are ``7``)
        return _INTEGER.match(x) is not None and len(x) < 10_000 and int(x) == int(y)
    if float_tol is None or not _DECIMAL.match(y) or not _DECIMAL.match(x):
        return False
    fx, fy = float(x), float(y)
    return math.isfinite(fx) and math.isfinite(fy) and abs(fx - fy) <= float_tol * max(1.0, abs(fy))


def checker_verdict(contract: str, exit_code: int | None, killed: str | None, message: str = "") -> tuple[str, str]:
    """``(status, message)`` of a case from its checker's ending: ``pass``, ``fail``, or ``checker_failed`` (an
    infrastructure failure of the case: the checker crashed, timed out, or said it failed).

    ``exit_code`` is ``None`` when a signal ended the checker; ``killed`` says why the sandbox ended it.

    Example:
        >>> checker_verdict("testlib", 1, None, "wrong answer 1st numbers differ")
        ('fail', 'checker: wrong answer 1st numbers differ')
        >>> checker_verdict("kattis", 42, None), checker_verdict("testlib", 3, None)[0]
        (('pass', ''), 'checker_failed')
        >>> checker_verdict("codeforces", 0, None, "100\\n")[0], checker_verdict("codeforces", 0, None, "0")[0]
        ('pass', 'fail')
    """
    note = " ".join(message.split())[:300]
    if killed is not None or exit_code is None:
        why = {"cpu": "hit its CPU limit", "wall": "hit its wall-clock limit", "output": "wrote too much"}
        return "checker_failed", f"checker {why.get(killed or '', 'was killed by a signal')}" + (f": {note}" if note else "")
    if contract == "testlib":
        if exit_code == 0:
            return "pass", ""
        if exit_code in (1, 2, 7):
            kind = {1: "", 2: "presentation error: ", 7: "partial score: "}[exit_code]
            return "fail", f"checker: {kind}{note}".rstrip(": ")
    elif contract == "kattis":
        if exit_code == 42:
            return "pass", ""
        if exit_code == 43:
            return "fail", f"checker: {note}".rstrip(": ") if note else "checker: wrong answer"
    elif contract == "codeforces" and exit_code == 0:  # what it printed on stdout is its score
        if note.split() in (["1"], ["100"]):
            return "pass", ""
        return "fail", f"checker: score {note[:60]!r}"
    return "checker_failed", f"checker failed (exit code {exit_code})" + (f": {note}" if note else "")
