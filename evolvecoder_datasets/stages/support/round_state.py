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
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ... import passmatrix, schema
from ...errors import SchemaError
from ...limits import SandboxSettings
from ...schema import TIME_LIMIT
from ...search.domain import Domain
from ...search.writer import SearchConfig, SearchProblem, search_tests
from ...seeding import problem_rng
from ...suite import TestSuite, as_origin_list
from ..execute import solution_codes
from .domains import admitted_tests, count_rules, derive_domain
from .new_tests import run_new_tests
from ...execution import shared_sandbox

__all__ = ["SEARCH_STATE", "RoundProblem", "append_tests", "assign_domains", "kept_mask", "log_entry",
           "note_outside", "round_problem", "search_round", "search_states"]


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
    domain: Domain | None = None  # the inputs the problem defines (set at the start of the round)
    callee: str | None = None  # the function its tests call with literal arguments
    seed_violations: int = 0  # its own asserts found outside the domain (at its first round)

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


def round_problem(batch: dict[str, list], i: int, *, seed: int, round_: int, reference: str | None,
                  search_reference: str | None, callee: str | None = None) -> RoundProblem:
    """Row ``i`` of a round's batch as that round's problem: its suite (tests, their origins, the pass matrix, the
    statuses where they were kept for every program), its programs and their models, its calibrated limit and its
    own random stream. Both passes of a round build their problems here, so they see the same problem.

    Example:
        >>> batch = {"id": ["p"], "question": ["q"], "tests": [["assert f(1) == 1"]],
        ...          "solutions": [[{"model": "m", "code": "def f(x): return x"}]], "pass_matrix": [[[True]]],
        ...          "test_origin": [None]}
        >>> problem = round_problem(batch, 0, seed=0, round_=1, reference=None, search_reference=None)
        >>> problem.codes, problem.models, problem.M.tolist(), problem.suite.origins
        (['def f(x): return x'], ['m'], [[True]], ({'round': 0, 'method': 'refine'},))
    """
    tests = list(batch[schema.TESTS][i] or ())
    solutions = batch[schema.SOLUTIONS][i] or []
    M = passmatrix.as_pass_matrix(batch[schema.PASS_MATRIX][i]) if tests else np.zeros((len(solutions), 0), bool)
    if M.shape != (len(solutions), len(tests)):
        raise SchemaError(f"problem {batch[schema.ID][i]!r}: pass matrix {M.shape} does not match "
                          f"{len(solutions)} solutions x {len(tests)} tests")
    origins_col = batch.get(schema.TEST_ORIGIN)
    origins = (as_origin_list(origins_col[i]) if origins_col is not None else None) or [
        {"round": 0, "method": "refine"} for _ in tests]
    statuses_col = batch.get(schema.STATUSES)
    statuses = statuses_col[i] if statuses_col is not None and statuses_col[i] else None
    if statuses is not None and len(statuses) != len(solutions):  # a pool whose statuses were not kept
        statuses = None
    limits = batch.get(TIME_LIMIT)
    return RoundProblem(
        id=batch[schema.ID][i],
        question=batch[schema.QUESTION][i],
        codes=solution_codes(solutions),
        models=[s.get("model", "") if isinstance(s, dict) else "" for s in solutions],
        suite=TestSuite(tests, origins, M.copy(), statuses),
        reference=reference,
        search_reference=search_reference,
        rng=problem_rng(seed, batch[schema.ID][i], round_, "evolve"),
        limit=limits[i] if limits is not None else None,
        callee=callee,
    )


def log_entry(round_: int, method: str, **values: Any) -> dict[str, Any]:
    """A method's entry in a problem's ``evolve_log`` for one round, zeros where ``values`` says nothing."""
    entry = {
        "round": round_,
        "method": method,
        "programs": [],
        "notes": [],
        "requested": 0,
        "answers": 0,
        "parsed": 0,
        "added": 0,
        "duplicates": 0,
        "dependent": 0,
        "reference_failed": 0,
        "split_failed": 0,
        "error": None,
        "out_of_domain": [],
    }
    entry.update(values)
    return entry


def note_outside(entry: dict[str, Any], counts: dict[str, int]) -> None:
    """Add ``counts`` (inputs or tests left out as outside the domain, by rule) to a log entry.

    Example:
        >>> entry = log_entry(1, "search")
        >>> note_outside(entry, {"sign": 2}); note_outside(entry, {"sign": 1, "statement": 1})
        >>> entry["out_of_domain"]
        [{'rule': 'sign', 'count': 3}, {'rule': 'statement', 'count': 1}]
    """
    if not counts:
        return
    merged = count_rules({c["rule"]: c["count"] for c in entry.get("out_of_domain") or ()}, counts)
    entry["out_of_domain"] = [{"rule": rule, "count": n} for rule, n in sorted(merged.items()) if n]


def append_tests(
    problems: list[RoundProblem], method: str, candidates: list[list[str]], entries: list[dict[str, Any]], *,
    round_: int, execute: Any, drop_failed_split: bool = False,
) -> None:
    """Run each problem's new tests against its whole pool (and reference) and append those that survive: their
    inputs must lie inside the problem's domain (:func:`~.domains.admitted_tests`; counted by rule, whichever writer
    made them), the reference must pass a test; a discriminative test that does not split the programs shown is
    counted, and dropped with ``drop_failed_split``."""
    gates = admitted_tests([(p.domain, p.callee, tests) for p, tests in zip(problems, candidates)],
                           shared_sandbox(execute))
    candidates = [[t for t, ok in zip(tests, keep) if ok] for tests, (keep, _) in zip(candidates, gates)]
    for entry, (_, counts) in zip(entries, gates):
        note_outside(entry, counts)
    work = [(problem, tests) for problem, tests in zip(problems, candidates) if tests]
    finished = iter(run_new_tests(shared_sandbox(execute), work, execute))  # in the order of work
    for problem, tests, entry in zip(problems, candidates, entries):
        problem.log.append(entry)
        if not tests:
            continue
        ref_report, rows = next(finished)
        infra = [r.infra_error for r in rows if r.infra_error]
        if infra:
            entry["error"] = f"sandbox: {infra[0]}"
        new_M = np.array([r.passed for r in rows], dtype=bool).reshape(len(rows), len(tests))
        kept = np.flatnonzero(kept_mask(entry, method, new_M, ref_report, drop_failed_split=drop_failed_split))
        entry["added"] = int(kept.size)
        statuses = [r.statuses for r in rows] if problem.suite.statuses is not None else None
        new = TestSuite.of(tests, round=round_, method=method, matrix=new_M, statuses=statuses)
        problem.suite = problem.suite.extend(new.select(kept))


def kept_mask(entry: dict[str, Any], method: str, matrix: np.ndarray, reference: Any, *,
              drop_failed_split: bool = False) -> np.ndarray:
    """Which of a method's new tests (or stdin cases) join the suite: those the reference passes (``reference``, its
    report, or ``None``; a report the sandbox failed on decides nothing), counted in ``entry["reference_failed"]``;
    a discriminative one that does not split the programs shown (``entry["programs"]``) is counted in
    ``entry["split_failed"]`` and left out with ``drop_failed_split``. ``matrix`` is the pool's, programs x new tests.

    Example:
        >>> entry = log_entry(1, "discriminative", programs=[0, 1])
        >>> kept_mask(entry, "discriminative", np.array([[True, True], [False, True]]), None).tolist()
        [True, True]
        >>> entry["split_failed"]
        1
    """
    keep = np.ones(matrix.shape[1], dtype=bool)
    if reference is not None and not reference.infra_error:
        ok = np.asarray(reference.passed, dtype=bool)
        entry["reference_failed"] = int((~ok).sum())
        keep &= ok
    if method == "discriminative" and entry["programs"]:
        shown = matrix[entry["programs"]]
        splits = shown.any(axis=0) & ~shown.all(axis=0)
        entry["split_failed"] = int((keep & ~splits).sum())
        if drop_failed_split:
            keep &= splits
    return keep


def assign_domains(problems: list[RoundProblem], cells: list[dict[str, Any] | None], *, round_: int,
                   execute: Any, propose: Callable[..., list[Domain | None]] | None = None,
                   first: list[bool] | None = None) -> None:
    """Give each problem its domain: the one its ``domain`` cell records, else derived now from its round-0 asserts
    (:func:`~.domains.derive_domain`); where that is only inferred, ``propose(problems, seeds)`` (the model's checked
    preconditions: :func:`~.model_domains.model_domains`) may replace it. At a problem's first round (``first``;
    default: where no domain is recorded yet) its domain judges its own asserts: those outside it are dropped from
    the suite and reported in a ``domain`` log entry (and ``seed_violations``), never kept silently."""
    fresh: list[RoundProblem] = []
    judge: list[RoundProblem] = []
    seeds: dict[str, tuple] = {}
    for k, (problem, cell) in enumerate(zip(problems, cells)):
        methods = [str(o.get("method", "unknown")) for o in problem.suite.origins or ()] or ["seed"] * len(
            problem.suite.tests)
        domain, call = derive_domain(problem.id, problem.suite.tests, methods, problem.search_reference,
                                     problem.question)
        problem.callee = call.callee if call else None
        recorded = Domain.from_row(cell)
        if recorded is not None:
            problem.domain = recorded
            problem.seed_violations = int((cell or {}).get("seed_violations") or 0)
        else:
            problem.domain = domain
            fresh.append(problem)
            if call is not None and call.seeds:
                seeds[problem.id] = call.seeds
        if (first[k] if first is not None else recorded is None):
            judge.append(problem)
    asking = [p for p in fresh if p.domain is not None and p.domain.how == "inferred" and p.id in seeds]
    if propose is not None and asking:
        for problem, proposed in zip(asking, propose(asking, [seeds[p.id] for p in asking])):
            if proposed is not None:
                problem.domain = proposed
    if not judge:
        return
    gates = admitted_tests([(p.domain, p.callee, p.suite.tests) for p in judge], shared_sandbox(execute),
                           require_literal=False)
    for problem, (keep, counts) in zip(judge, gates):
        outside = [j for j, ok in enumerate(keep) if not ok]
        if not outside:
            continue
        assert problem.domain is not None
        entry = log_entry(round_, "domain", requested=len(keep), notes=[
            f"domain: {problem.domain.how}; own asserts outside it, dropped: "
            + "; ".join(problem.suite.tests[j][:120] for j in outside)])
        note_outside(entry, counts)
        problem.seed_violations = len(outside)
        problem.suite = problem.suite.select(np.flatnonzero(np.asarray(keep, bool)))
        problem.log.append(entry)


def search_round(problems: list[RoundProblem], search: SearchConfig, *, seed: int, round_: int, execute: Any) -> None:
    """The search method: inputs mutated from each problem's asserts, kept when they kill or split programs of the
    pool that the suite (as grown by this round's prompts) cannot reject or tell apart."""
    from ...execution import shared_sandbox

    settings = dataclasses.replace(search, seed=seed)
    found = search_tests(
        [SearchProblem(p.id, p.search_reference, list(p.suite.tests), p.codes, p.M,
                       limit=execute.job_timeout(p.limit), domain=p.domain) for p in problems],
        settings,
        round=round_,
        # the search's own mode and limit, the rest of the stage's sandbox (the timeout policy at its one default)
        sandbox=shared_sandbox(execute, mode=settings.sandbox.mode, timeout_s=settings.sandbox.timeout_s,
                               max_consecutive_timeouts=SandboxSettings.max_consecutive_timeouts),
        verify_sandbox=shared_sandbox(execute),
        progress=True,
    )
    entries = []
    for result in found:
        notes = [result.reason] if result.reason else []
        notes.append(f"survivors {result.survivors}, killed {result.killed}, splits {result.splits}, "
                     f"executions {result.executions}, reads {result.reads}")
        entry = log_entry(round_, "search", notes=notes, requested=result.candidates,
                          parsed=len(result.tests) + result.rejected, reference_failed=result.rejected)
        note_outside(entry, result.out_of_domain)
        entries.append(entry)
    append_tests(problems, "search", [r.tests for r in found], entries, round_=round_, execute=execute)


# A split round's (``split_round``) column from its first pass to its second: per row, what the search needs that the other columns do not hold (JSON),
# or null where the row has no assert search this round. Removed once the second pass is done.
SEARCH_STATE = "_search_state"


def search_states(problems: list[RoundProblem | None]) -> list[str | None]:
    """The :data:`SEARCH_STATE` cell of each row: the references and the callee the round found, and whether the
    row's ``domain`` cell holds the domain it judged by; ``None`` for a row without an assert problem.

    Example:
        >>> search_states([None])
        [None]
    """
    return [None if p is None else json.dumps({"reference": p.reference, "search_reference": p.search_reference,
                                               "callee": p.callee, "domain": p.domain is not None})
            for p in problems]  # fmt: skip
