"""What one execution returns: typed per-test outcomes.

Example:
    >>> from evolvecoder_datasets.execution.report import ExecutionReport
    >>> r = ExecutionReport(statuses=["pass", "fail"], messages=["", "AssertionError"], cpu_s=[0.0, 0.0])
    >>> r.passed, r.pass_rate, r.all_passed
    ([True, False], 0.5, False)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..schema import STATUS_CODES, STATUS_NAMES

__all__ = ["ExecutionReport"]


@dataclass(frozen=True)
class ExecutionReport:
    """Outcome of running one program against its tests (or stdin/stdout cases).

    Args:
        statuses (`list[str]`): per test, one of ``pass``, ``fail`` (assertion or wrong output), ``error``
            (exception), ``timeout``, ``memory``, ``crash`` (killed, or no result line), ``syntax_error``,
            ``unexecuted`` (skipped by a time budget).
        messages (`list[str]`): per test, a short reason (empty on pass).
        cpu_s (`list[float]`): per test, CPU seconds used (0.0 where not measured).
        isolation (`str`): ``bwrap``, ``unshare`` or ``none``.
        uid_dropped (`bool`): whether solutions ran as an unprivileged uid.
        infra_error (`str`, *optional*): set when the sandbox itself failed; the cells are then not the program's
            fault and callers (rewards) should not score them.
        judged (`list[str]`): per test, where its verdict was decided: ``outside`` (by the judge, in a process that
            never ran program code, from the values of the program's calls) or ``inside`` (a test the judge could
            not split, run whole in the sandbox with in-process hardening only).
        outputs (`list[str | None]`, *optional*): a stdin/stdout job given no expected ``outputs`` (a *valuing*
            job: what does this program print?): per case, what the program printed (UTF-8, invalid bytes replaced,
            at most the sandbox's ``max_output_bytes`` + 1 bytes), ``None`` where the case did not end normally
            (its status says how). ``None`` for every other job.
    """

    statuses: list[str]
    messages: list[str] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)
    isolation: str = "none"
    uid_dropped: bool = False
    infra_error: str | None = None
    judged: list[str] = field(default_factory=list)
    outputs: list[str | None] | None = None

    @property
    def judged_inside(self) -> int:
        """How many verdicts were decided inside the sandbox (tests the judge could not split)."""
        return sum(j == "inside" for j in self.judged)

    @property
    def passed(self) -> list[bool]:
        """Per test, whether it passed."""
        return [s == "pass" for s in self.statuses]

    @property
    def all_passed(self) -> bool:
        """True when there is at least one test and every test passed."""
        return bool(self.statuses) and all(s == "pass" for s in self.statuses)

    @property
    def pass_rate(self) -> float:
        """Fraction of tests passed (0.0 for no tests)."""
        return sum(self.passed) / len(self.statuses) if self.statuses else 0.0

    @property
    def codes(self) -> list[int]:
        """Per test, the int code of the status (index in :data:`STATUS_NAMES`)."""
        return [STATUS_CODES[s] for s in self.statuses]

    def counts(self) -> dict[str, int]:
        """Number of tests per status, e.g. ``{"pass": 18, "timeout": 2}``."""
        return dict(Counter(self.statuses))
