"""One stdin/stdout problem during an evolution round: its state, and the search method on its cases.

The assert problems' round lives in :mod:`.round_state`; a stdin/stdout problem (``inputs``/``outputs`` in place of
``tests``) grows here: the search writer (:mod:`~evolvecoder_datasets.search.stdio_writer`) finds new inputs valued
by the problem's reference, the whole pool runs them (Python or C++, judged by the problem's checker or the token
compare, under its limit), and they join its suite with ``test_origin = {round, method}`` beside new columns of the
pass matrix.

Example:
    >>> from evolvecoder_datasets.stages.support.stdio_round import StdioRoundProblem
    >>> StdioRoundProblem.__dataclass_fields__["language"].default
    'python'
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ... import passmatrix, schema
from ...errors import LLMResponseError, SchemaError
from ...limits import SandboxSettings
from ...search.problems import SearchConfig
from ...search.stdio_writer import StdioProblem, search_stdio_tests, value_stdin
from ...suite import TestSuite, as_origin_list
from ..execute import solution_codes
from ...execution import shared_sandbox
from .round_state import kept_mask, log_entry

__all__ = ["StdioRoundProblem", "append_cases", "stdio_model_round", "stdio_problem", "stdio_rows",
           "stdio_search_round"]


@dataclass
class StdioRoundProblem:
    """A stdin/stdout problem's state during the round (its suite holds ``inputs`` and ``outputs`` columns)."""

    id: str
    question: str
    codes: list[str]
    suite: TestSuite
    reference: str | None
    language: str = "python"
    checker: Any = None
    float_tol: float | None = None
    limit: float | None = None
    validator: dict | None = None
    reference_language: str | None = None
    models: list[str] = field(default_factory=list)
    log: list[dict[str, Any]] = field(default_factory=list)

    @property
    def inputs(self) -> list[str]:
        return list(self.suite.columns.get("inputs", ()))

    @property
    def outputs(self) -> list[str]:
        return list(self.suite.columns.get("outputs", ()))

    @property
    def calibrated(self) -> bool:
        """Whether the problem's limit follows its reference: a stored limit (calibrated, or a contest's stated one,
        which only grows) and a reference in the pool's language."""
        return self.limit is not None and self.reference is not None and self.reference_language in (
            None, self.language)

    @property
    def judged_reference_language(self) -> str:
        """The language the reference runs in (the row's unless ``reference_language`` says otherwise)."""
        return self.reference_language or self.language

    def search_problem(self, limit: float | None) -> StdioProblem:
        """The problem as the search and the valuing of model texts see it: the reference in its own language,
        each program of the pool in the row's."""
        return StdioProblem(self.id, self.reference, self.inputs, self.outputs, self.codes, self.suite.matrix,
                            question=self.question, language=self.judged_reference_language,
                            languages=[self.language] * len(self.codes), checker=self.checker,
                            float_tol=self.float_tol, limit=limit, validator=self.validator,
                            right=[j for j, m in enumerate(self.models) if m == schema.ACCEPTED_MODEL])


def stdio_problem(batch: dict[str, list], i: int, *, reference: str | None, limit: Any) -> StdioRoundProblem:
    """Row ``i`` of an evolve batch, a stdin/stdout problem, as the round's state.

    Raises:
        SchemaError: its pass matrix does not match its pool and cases.
    """
    solutions = batch[schema.SOLUTIONS][i] or []
    cases = list(batch[schema.INPUTS][i] or ())
    M = passmatrix.as_pass_matrix(batch[schema.PASS_MATRIX][i])
    if M.shape != (len(solutions), len(cases)):
        raise SchemaError(f"problem {batch[schema.ID][i]!r}: pass matrix {M.shape} does not match "
                          f"{len(solutions)} solutions x {len(cases)} cases")

    def cell(name: str) -> Any:
        return (batch.get(name) or [None] * (i + 1))[i]

    statuses = cell(schema.STATUSES) or None
    if statuses is not None and len(statuses) != len(solutions):  # a pool whose statuses were not kept
        statuses = None
    origins = as_origin_list(cell(schema.TEST_ORIGIN)) or [{"round": 0, "method": "seed"} for _ in cases]
    columns = {schema.INPUTS: cases, schema.OUTPUTS: list(cell(schema.OUTPUTS) or ())}
    return StdioRoundProblem(
        id=batch[schema.ID][i], question=batch[schema.QUESTION][i], codes=solution_codes(solutions),
        suite=TestSuite((), origins, M.copy(), statuses, columns), reference=reference,
        language=cell(schema.LANGUAGE) or "python", checker=cell(schema.CHECKER), float_tol=cell(schema.FLOAT_TOL),
        limit=limit, validator=cell(schema.VALIDATOR), reference_language=cell(schema.REFERENCE_LANGUAGE),
        models=[str(s.get("model") or "") if isinstance(s, dict) else "" for s in solutions])


def stdio_rows(out: dict[str, list], problem: StdioRoundProblem, log: list[dict[str, Any]], round_: int,
               statuses: Any) -> None:
    """Append the problem's grown cells to the evolve stage's ``out`` columns (``inputs``/``outputs`` are written
    by the stage for every row)."""
    cells = problem.suite.row()
    out[schema.TESTS].append([])
    out[schema.TEST_ORIGIN].append(cells[schema.TEST_ORIGIN])
    out[schema.PASS_MATRIX].append(cells[schema.PASS_MATRIX])
    out[schema.ROUND].append(round_)
    out[schema.EVOLVE_LOG].append(log + problem.log)
    if schema.STATUSES in out:
        out[schema.STATUSES].append(cells.get(schema.STATUSES, statuses))


def stdio_search_round(problems: list[StdioRoundProblem], search: SearchConfig, *, seed: int, round_: int,
                       execute: Any) -> None:
    """The search method on stdin/stdout problems: new cases kept when they kill or split programs of the pool that
    the suite cannot reject or tell apart, run against the whole pool and appended."""
    from ...execution import shared_sandbox

    settings = dataclasses.replace(search, seed=seed)
    found = search_stdio_tests(
        [p.search_problem(execute.job_timeout(p.limit)) for p in problems],
        settings,
        round=round_,
        # the search's own limit, the rest of the stage's sandbox; a program stops after two timeouts in a row
        sandbox=shared_sandbox(execute, timeout_s=settings.sandbox.timeout_s,
                               max_consecutive_timeouts=SandboxSettings.max_consecutive_timeouts),
        verify_sandbox=shared_sandbox(execute),
    )
    entries = []
    for problem, result in zip(problems, found):
        notes = [result.reason] if result.reason else []
        notes.append(f"survivors {result.survivors}, killed {result.killed}, splits {result.splits}, "
                     f"candidates {result.candidates}, usable {result.usable}, invalid {result.invalid}, "
                     f"executions {result.executions}")
        entries.append(log_entry(round_, "search", notes=notes, requested=result.candidates,
                                 parsed=len(result.inputs) + result.rejected, reference_failed=result.rejected))
    append_cases(problems, "search", [(r.inputs, r.outputs) for r in found], entries, round_=round_,
                 execute=execute, check_reference=False)


def append_cases(problems: list[StdioRoundProblem], method: str, cases: list[tuple[list[str], list[str]]],
                 entries: list[dict[str, Any]], *, round_: int, execute: Any, check_reference: bool = True,
                 drop_failed_split: bool = False) -> None:
    """Run each problem's new cases against its whole pool (and, with ``check_reference``, its reference, judged the
    ordinary way: cases it fails are dropped) and append the rest to its suite; the log entries are appended to the
    problems' logs. A discriminative case that does not split the programs shown is counted (and dropped with
    ``drop_failed_split``). A case one of the pool's accepted programs (``submission:accepted``) fails is left out
    (``accepted_failed``): the reference's output is kept only where they agree. A problem's calibrated limit grows
    first to cover what its reference needed on the new cases (as for asserts: a right program as slow as the
    reference on a larger input still passes); a reference in another language than the pool calibrates nothing.
    (For search cases this runs the reference once more: the search verified them, but does not return its CPU.)"""
    from ...execution import Job
    from ..execute import reference_limit

    sandbox = shared_sandbox(execute)
    ref_jobs, ref_owners = [], []
    for k, (problem, (inputs, outputs)) in enumerate(zip(problems, cases)):
        if inputs and problem.reference and (check_reference or problem.calibrated):
            ref_jobs.append(Job(problem.reference, inputs=inputs, outputs=outputs, checker=problem.checker,
                                float_tol=problem.float_tol, language=problem.judged_reference_language))
            ref_owners.append(k)
    references = dict(zip(ref_owners, sandbox.run_many(ref_jobs) if ref_jobs else []))
    for k, report in references.items():
        if problems[k].calibrated and not report.infra_error:
            problems[k].limit = max(problems[k].limit, reference_limit(report, execute) or 0.0)
    jobs, owners = [], []
    for k, (problem, (inputs, outputs)) in enumerate(zip(problems, cases)):
        timeout = execute.job_timeout(problem.limit)
        for code in problem.codes if inputs else ():
            jobs.append(Job(code, inputs=inputs, outputs=outputs, checker=problem.checker,
                            float_tol=problem.float_tol, language=problem.language, timeout_s=timeout))
            owners.append(k)
    rows: dict[int, list[Any]] = {}
    for k, report in zip(owners, sandbox.run_many(jobs) if jobs else []):
        rows.setdefault(k, []).append(report)
    for k, (problem, (inputs, outputs), entry) in enumerate(zip(problems, cases, entries)):
        problem.log.append(entry)
        if not inputs:
            continue
        reports = rows.get(k, [])
        reference = references.get(k) if check_reference else None
        infra = [r.infra_error for r in reports if r.infra_error]
        if infra:
            entry["error"] = f"sandbox: {infra[0]}"
        matrix = np.array([r.passed for r in reports], dtype=bool).reshape(len(reports), len(inputs))
        mask = kept_mask(entry, method, matrix, reference, drop_failed_split=drop_failed_split)
        # outputs from the reference, confirmed by the accepted programs: a case one of them fails is wrong or outside
        # the problem, whatever the reference printed
        accepted = [j for j, model in enumerate(problem.models) if model == schema.ACCEPTED_MODEL and j < len(matrix)]
        if accepted:
            disputed = mask & ~matrix[accepted].all(axis=0)
            if disputed.any():
                entry["accepted_failed"] = int(disputed.sum())
                entry["notes"].append(f"{int(disputed.sum())} cases an accepted program fails: left out")
            mask &= ~disputed
        kept = np.flatnonzero(mask).tolist()
        statuses = [[r.statuses[j] for j in kept] for r in reports] if problem.suite.statuses is not None else None
        origin = {"round": int(round_), "method": method}
        new = TestSuite((), tuple(dict(origin) for _ in kept), matrix[:, kept], statuses,
                        {"inputs": tuple(inputs[j] for j in kept), "outputs": tuple(outputs[j] for j in kept)})
        entry["added"] = len(kept)
        problem.suite = problem.suite.extend(new)


def stdio_model_round(problems: list[StdioRoundProblem], config: Any) -> None:
    """The model writers on stdin/stdout problems: each method's prompt (the programs chosen from the matrix as for
    asserts) asks for stdin texts (:mod:`~evolvecoder_datasets.prompts.stdin_inputs`); the texts are checked and
    valued in the sandbox (:func:`~evolvecoder_datasets.search.stdio_writer.value_stdin`), then run against the
    pool and appended. ``config`` is the round's ``EvolveConfig``."""
    from ...execution import shared_sandbox
    from ...prompts import stdin_inputs
    from .llm_stage import parse_each, raise_unrecordable
    from .resources import get_backend

    backend = get_backend(config.require_llm())
    record = config.on_llm_error == "record"
    for method in config.llm_methods:
        built = [_stdin_prompt(p, method, config) for p in problems]
        answers = backend.generate([b[0] for b in built], return_exceptions=record,
                                   desc=f"round {config.round} {method} (stdin)")
        entries, proposed = [], []
        for problem, (_, programs, notes), answer in zip(problems, built, answers):
            entry = log_entry(config.round, method, programs=programs, notes=notes,
                              requested=config.num_tests * config.answers)
            entries.append(entry)
            texts: list[str] = []
            if isinstance(answer, BaseException):
                raise_unrecordable(answer)
                entry["error"] = f"llm: {type(answer).__name__}"
            else:
                entry["answers"] = len(answer.texts)
                try:
                    parsed = parse_each(answer.texts, stdin_inputs.parse, entry)
                    texts = list(dict.fromkeys(text for result in parsed for text in result.inputs))
                    entry["parsed"] = len(texts)
                except LLMResponseError as err:
                    entry["error"] = f"parse: {err.reason}"
            proposed.append(texts)
        requests = [(p.search_problem(config.execute.job_timeout(p.limit)), texts)
                    for p, texts in zip(problems, proposed)]
        # the value reads' ceiling: the default limit, or more where 4 x value_cpu_s (the reference's alarm) needs it
        ceiling = max(SandboxSettings.timeout_s, config.value_cpu_s * 4 + 0.1)
        settings = SearchConfig(cpu_s=config.value_cpu_s, sandbox=SandboxSettings(mode="fast", timeout_s=ceiling))
        valued = value_stdin(requests, shared_sandbox(config.execute), settings)
        for entry, found in zip(entries, valued):
            entry["notes"].append(f"inputs: {len(found.inputs)} valued, {found.repaired} recounted, "
                                  f"{found.invalid} invalid or seen, "
                                  f"{found.unusable} the reference does not answer" + (
                                      f"; {found.reason}" if found.reason else ""))
        append_cases(problems, method, [(v.inputs, v.outputs) for v in valued], entries, round_=config.round,
                     execute=config.execute, drop_failed_split=config.drop_failed_split)


def _stdin_prompt(problem: StdioRoundProblem, method: str, config: Any) -> tuple[Any, list[int], list[str]]:
    """The request for ``method`` built from the problem's current matrix, the programs shown and the notes."""
    from ...prompts import stdin_inputs
    from ...seeding import problem_rng, stable_int

    rng = problem_rng(config.seed, problem.id, config.round, "evolve-stdin")
    M = problem.suite.matrix
    visible = passmatrix.hide_tests(M, config.hide_below, max_pass_rate=config.hide_above)
    if method == "adversarial":
        shown = visible
        selection = passmatrix.select_adversarial(M[:, shown], rng=rng, n_top=config.n_top,
                                                  n_diverse=config.n_diverse, band=config.band,
                                                  min_rate=config.hide_below)
    else:
        shown = passmatrix.dedupe_tests(M, rng=rng, keep=1, among=visible)
        selection = passmatrix.select_similar(M[:, shown], rng=rng, k=config.n_similar)
    programs = [int(p) for p in selection.indices]
    passed = "all of them"
    if method == "adversarial" and programs and len(shown):
        row = M[programs[0], shown]
        passed = "all of them" if row.all() else f"{int(row.sum())} of {len(shown)}"
    sampling = {"temperature": config.temperature, "max_tokens": config.max_tokens, "n": config.answers,
                "seed": stable_int(config.seed, problem.id, config.round, method, "stdin") & 0x7FFFFFFF}
    inputs = problem.inputs
    request = stdin_inputs.build_request(method, problem.question, [problem.codes[p] for p in programs],
                                         [inputs[int(t)] for t in shown] or inputs[:1], num_tests=config.num_tests,
                                         passed=passed, **sampling)
    return request, programs, list(selection.notes)
