"""One problem during an evolution round: its state, the log entries of the round's methods, how a method's new
tests join its suite, and the search method. The evolve box (:mod:`~evolvecoder_datasets.stages.evolve`) asks the
model writers and calls these; they know nothing of prompts.

Example:
    >>> from evolvecoder_datasets.stages.support.round_state import log_entry
    >>> entry = log_entry(2, "search", requested=40, parsed=3)
    >>> entry["round"], entry["method"], entry["parsed"], entry["added"]
    (2, 'search', 3, 0)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...limits import SandboxSettings
from ...search.writer import SearchConfig, SearchProblem, search_tests
from ...suite import TestSuite
from .new_tests import run_new_tests
from .resources import get_sandbox

__all__ = ["RoundProblem", "append_tests", "log_entry", "search_round"]


@dataclass
class RoundProblem:
    """One problem's state during the round."""

    id: str
    question: str
    codes: list[str]
    models: list[str]
    suite: TestSuite
    reference: str | None
    search_reference: str | None
    rng: np.random.Generator
    log: list[dict[str, Any]] = field(default_factory=list)
    limit: float | None = None  # calibrated CPU seconds per test (the time_limit_s column), None: the fixed limit

    @property
    def M(self) -> np.ndarray:
        """The pass matrix, programs x tests."""
        assert self.suite.matrix is not None
        return self.suite.matrix

    def eligible(self, select_from: tuple[str, ...]) -> np.ndarray:
        """The programs of the models in ``select_from`` (every program when it is empty)."""
        if not select_from:
            return np.arange(len(self.codes), dtype=np.int64)
        return np.asarray([i for i, m in enumerate(self.models) if m in select_from], dtype=np.int64)


def log_entry(round_: int, method: str, **values: Any) -> dict[str, Any]:
    """A method's entry in a problem's ``evolve_log`` for one round, zeros where ``values`` says nothing."""
    entry = {
        "round": round_,
        "method": method,
        "programs": [],
        "notes": [],
        "requested": 0,
        "parsed": 0,
        "added": 0,
        "duplicates": 0,
        "dependent": 0,
        "reference_failed": 0,
        "split_failed": 0,
        "error": None,
    }
    entry.update(values)
    return entry


def append_tests(
    problems: list[RoundProblem], method: str, candidates: list[list[str]], entries: list[dict[str, Any]], *,
    round_: int, execute: Any, drop_failed_split: bool = False,
) -> None:
    """Run each problem's new tests against its whole pool (and reference) and append those that survive: the
    reference must pass a test; a discriminative test that does not split the programs shown is counted, and
    dropped with ``drop_failed_split``."""
    work = [(problem, tests) for problem, tests in zip(problems, candidates) if tests]
    finished = iter(run_new_tests(get_sandbox(execute), work, execute))  # in the order of work
    for problem, tests, entry in zip(problems, candidates, entries):
        problem.log.append(entry)
        if not tests:
            continue
        ref_report, rows = next(finished)
        infra = [r.infra_error for r in rows if r.infra_error]
        if infra:
            entry["error"] = f"sandbox: {infra[0]}"
        new_M = np.array([r.passed for r in rows], dtype=bool).reshape(len(rows), len(tests))
        keep = np.ones(len(tests), dtype=bool)
        if ref_report is not None and not ref_report.infra_error:
            ref_ok = np.asarray(ref_report.passed, dtype=bool)
            entry["reference_failed"] = int((~ref_ok).sum())
            keep &= ref_ok
        if method == "discriminative" and entry["programs"]:
            shown = new_M[entry["programs"]]
            splits = shown.any(axis=0) & ~shown.all(axis=0)
            entry["split_failed"] = int((keep & ~splits).sum())
            if drop_failed_split:
                keep &= splits
        kept = np.flatnonzero(keep)
        entry["added"] = int(kept.size)
        statuses = [r.statuses for r in rows] if problem.suite.statuses is not None else None
        new = TestSuite.of(tests, round=round_, method=method, matrix=new_M, statuses=statuses)
        problem.suite = problem.suite.extend(new.select(kept))


def search_round(problems: list[RoundProblem], search: SearchConfig, *, seed: int, round_: int, execute: Any) -> None:
    """The search method: inputs mutated from each problem's asserts, kept when they kill or split programs of the
    pool that the suite (as grown by this round's prompts) cannot reject or tell apart."""
    from ...execution import shared_sandbox

    settings = dataclasses.replace(search, seed=seed)
    found = search_tests(
        [SearchProblem(p.id, p.search_reference, list(p.suite.tests), p.codes, p.M,
                       limit=execute.job_timeout(p.limit)) for p in problems],
        settings,
        round=round_,
        # the search's own mode and limit, the rest of the stage's sandbox (the timeout policy at its one default)
        sandbox=shared_sandbox(execute, mode=settings.mode, timeout_s=settings.timeout_s,
                               max_consecutive_timeouts=SandboxSettings.max_consecutive_timeouts),
        verify_sandbox=get_sandbox(execute),
        progress=True,
    )
    entries = []
    for result in found:
        notes = [result.reason] if result.reason else []
        notes.append(f"survivors {result.survivors}, killed {result.killed}, splits {result.splits}, "
                     f"executions {result.executions}, reads {result.reads}")
        entries.append(log_entry(round_, "search", notes=notes, requested=result.candidates,
                                 parsed=len(result.tests) + result.rejected, reference_failed=result.rejected))
    append_tests(problems, "search", [r.tests for r in found], entries, round_=round_, execute=execute)
