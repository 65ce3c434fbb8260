"""Search-written stdin/stdout cases: new inputs of the problem's shape, valued by its reference, kept when they kill
or split what the suite lets through.

The stdin/stdout twin of :mod:`.writer`, for problems judged on whole inputs and outputs (contest problems). For each
problem with a reference solution (Python or C++):

1. its **shape** is read off its own inputs (:func:`~.text_shape.infer_shape`), with the bounds its statement
   states (:func:`~.text_inputs.statement_bounds`); an input the shape does not admit is never a test. A problem
   that ships an input validator (testlib contract: exit 0 on a valid input) has it run in the sandbox on every
   candidate too, and no candidate it refuses is used;
2. :class:`~.text_inputs.TextMutator` draws candidates from the seeds and the inputs kept so far;
3. the reference runs on them **in the sandbox** (:meth:`~evolvecoder_datasets.execution.Sandbox.value_stdio`): a
   candidate is usable when the reference ends normally within ``cpu_s`` and prints at most ``max_stdout_chars``
   characters of clean text (what it prints is the expected output: never a model's guess, never the program's);
4. the **targets** (programs passing every case, and groups of programs with identical verdicts that pass some
   case) run on the usable
   candidates against the reference's outputs, judged by the problem's checker or the token compare, under the
   problem's calibrated limit; a survivor stops at its first failing case (one kill is all it needs);
5. candidates are kept greedily, most kills and splits first, until none adds anything, ``max_tests`` are kept, the
   ``budget`` of executions is spent, or ``patience`` generations kept nothing; a survivor that agreed with the
   reference on ``retire_after`` usable inputs is retired as probably equivalent, and a target that ran out of
   time in two generations is retired as too costly (each of its inputs costs a whole limit);
6. the reference runs the kept cases once more, judged the ordinary way (checker included): only those it passes are
   returned. A kept case the reference fails would be a wrong test; there are none by construction, and this check
   makes sure.

Example:
    >>> from evolvecoder_datasets.execution import Sandbox
    >>> from evolvecoder_datasets.search.stdio_writer import StdioProblem, search_stdio_tests
    >>> from evolvecoder_datasets.search.writer import SearchConfig
    >>> ref = "n = int(input())\\nprint(sum(map(int, input().split())))\\n"
    >>> weak = "n = int(input())\\nprint(sum(sorted(map(int, input().split()))[:3]))\\n"  # only the 3 smallest
    >>> problem = StdioProblem("P_1", ref, ["2\\n1 2\\n", "3\\n4 5 6\\n"], ["3\\n", "15\\n"], [weak], [[True, True]],
    ...                        question="$1 \\\\le n \\\\le 10$, $1 \\\\le a_i \\\\le 100$")
    >>> with Sandbox(workers=1) as sb:
    ...     [found] = search_stdio_tests([problem], SearchConfig(seed=0), sandbox=sb)
    >>> found.killed, len(found.inputs) >= 1, found.reason
    (1, True, None)
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..seeding import stable_int
from .problems import SearchConfig
from .text_inputs import TextMutator, repair_program, statement_bounds, statement_rules, validator_program
from .text_shape import infer_shape

__all__ = ["STDIO_REASONS", "StdioProblem", "StdioResult", "ValuedStdin", "problem_shape", "search_stdio_tests",
           "shipped_validator", "value_stdin"]

#: Why a problem got no cases.
STDIO_REASONS = {
    "no_reference": "the problem has no reference solution to value new inputs",
    "no_seed_inputs": "the problem has no inputs to learn its shape from",
    "no_shape": "no layout of lines and counts reads all of its inputs",
    "validator_refuses_seeds": "its input validator refuses one of its own inputs",
    "validator_unsupported": "its input validator is a compiled Kattis one (exit 42), which cannot be run here",
    "nothing_to_target": "every program fails some case, and none are alike",
    "no_kill": "no candidate killed or split a target within the budget",
}


@dataclass
class StdioProblem:
    """One stdin/stdout problem as the search sees it.

    Args:
        id (`str`): the problem id (it seeds the problem's random stream).
        reference (`str` or `None`): the reference solution; ``None`` gets no cases.
        inputs (`list[str]`), outputs (`list[str]`): the current cases.
        programs (`list[str]`): the pool.
        pass_matrix (array-like): ``(len(programs), len(inputs))`` verdicts of the current cases.
        question (`str`): the statement (its stated bounds widen the seeds' ranges).
        language (`str`, defaults to ``"python"``): the reference's language.
        languages (`list[str]`, *optional*): each program's language (default: ``language``).
        checker (*optional*): the problem's checker (:class:`~evolvecoder_datasets.execution.checkers.Checker` or
            its cell).
        float_tol (`float`, *optional*): the token compare's tolerance.
        limit (`float`, *optional*): CPU seconds per case the pool is judged by (default
            ``SearchConfig.sandbox.timeout_s``).
        validator (`dict`, *optional*): a shipped input validator ``{source, language, contract}``: ``testlib``
            (exit 0 on a valid input; the default) or ``kattis`` (exit 42; Python ones only).
        budget (`int`, *optional*): this problem's budget instead of ``SearchConfig.budget``.
        right (`list[int]`, *optional*): programs known right (a package's accepted submissions): never targets,
            neither to kill nor to split.
    """

    id: str
    reference: str | None
    inputs: list[str]
    outputs: list[str]
    programs: list[str]
    pass_matrix: Any
    question: str = ""
    language: str = "python"
    languages: list[str] | None = None
    checker: Any = None
    float_tol: float | None = None
    limit: float | None = None
    validator: dict | None = None
    budget: int | None = None
    right: list[int] | None = None


@dataclass
class StdioResult:
    """What the search did for one problem: the new cases (the reference passed each in a separate run) and counts
    like :class:`~.problems.SearchResult`'s, plus ``invalid`` (candidates a shipped validator refused) and
    ``unusable`` (candidates the reference did not end on, or answered with too much or unclean text)."""

    id: str
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    reason: str | None = None
    targets: int = 0
    survivors: int = 0
    killed: int = 0
    splits: int = 0
    retired: int = 0
    candidates: int = 0
    invalid: int = 0
    usable: int = 0
    unusable: int = 0
    executions: int = 0
    rejected: int = 0


class _State:
    def __init__(self, problem: StdioProblem, config: SearchConfig, round_: int) -> None:
        self.problem, self.config = problem, config
        self.result = StdioResult(problem.id)
        self.rng = random.Random(stable_int(config.seed, problem.id, round_, "stdio-search"))
        self.shape = problem_shape(problem, config)
        self.mutator = TextMutator(self.shape, problem.inputs, self.rng) if self.shape else None
        M = np.asarray(problem.pass_matrix, dtype=bool).reshape(len(problem.programs), len(problem.inputs))
        right = set(problem.right or ())
        self.alive = [p for p in range(len(problem.programs)) if M[p].all() and p not in right]
        self.groups: list[list[int]] = []
        if config.split:
            by_row: dict[bytes, list[int]] = {}
            for p in range(len(problem.programs)):
                if M[p].any() and p not in right:  # programs every case rejects get reward 0 already: telling them apart buys nothing
                    by_row.setdefault(M[p].tobytes(), []).append(p)
            self.groups = [g for g in by_row.values() if len(g) > 1]
        self.result.survivors = len(self.alive)
        self.result.targets = len(set(self.alive) | {p for g in self.groups for p in g})
        self.agreed = [0] * len(problem.programs)
        self.slow = [0] * len(problem.programs)
        self.budget = problem.budget or config.budget
        self.size = max(1, config.generation_size // 4)
        self.idle = 0
        self.done = False
        self.kept: list[tuple[str, str]] = []
        self.pending: list[str] = []
        self.values: list[tuple[str, str]] = []

    @property
    def limit(self) -> float:
        return min(self.problem.limit or self.config.sandbox.timeout_s, self.config.sandbox.timeout_s)

    def targets(self) -> list[int]:
        grouped = {p for g in self.groups for p in g}
        return sorted(set(self.alive) | grouped)

    def draw(self) -> list[str]:
        if self.done:
            return []
        if len(self.kept) >= self.config.max_tests or self.result.executions >= self.budget or not self.targets():
            self.done = True
            return []
        self.pending = self.mutator.draw(self.size) if self.mutator else []
        self.result.candidates += len(self.pending)
        if not self.pending:
            self.done = True
        return self.pending

    def pick(self, verdicts: dict[int, list[str]]) -> None:
        """Keep the candidates that kill or split, most first; retire survivors that keep agreeing."""
        kept_any = False
        left = list(range(len(self.values)))
        while left and len(self.kept) < self.config.max_tests:
            def gain(j: int) -> tuple[int, int]:
                kills = sum(1 for p in self.alive if p in verdicts and _failed(verdicts[p], j))
                splits = sum(1 for g in self.groups if _splits(g, verdicts, j))
                return kills, splits

            best = max(left, key=gain)
            kills, splits = gain(best)
            if kills + splits == 0:
                break
            left.remove(best)
            self.kept.append(self.values[best])
            self.mutator.add(self.values[best][0])  # type: ignore[union-attr]
            self.result.killed += kills
            self.result.splits += splits
            self.alive = [p for p in self.alive if not (p in verdicts and _failed(verdicts[p], best))]
            groups = []
            for g in self.groups:
                parts: dict[bool, list[int]] = {}
                for p in g:
                    parts.setdefault(p in verdicts and _failed(verdicts[p], best), []).append(p)
                groups += [part for part in parts.values() if len(part) > 1]
            self.groups = groups
            kept_any = True
        for p in list(self.alive):
            if p in verdicts:
                self.agreed[p] += sum(s == "pass" for s in verdicts[p])
                if self.agreed[p] >= self.config.retire_after and not any(p in g for g in self.groups):
                    self.alive.remove(p)
                    self.result.retired += 1
        # a program that runs out of time in two generations costs a limit per input from then on: it is given up
        for p, statuses in verdicts.items():
            self.slow[p] += "timeout" in statuses
            if self.slow[p] == 2 and (p in self.alive or any(p in g for g in self.groups)):
                self.alive = [q for q in self.alive if q != p]
                self.groups = [[q for q in g if q != p] for g in self.groups]
                self.groups = [g for g in self.groups if len(g) > 1]
                self.result.retired += 1
        self.idle = 0 if kept_any else self.idle + 1
        self.size = self.size if kept_any else min(self.size * 2, self.config.generation_size)
        if self.idle >= self.config.patience:
            self.done = True


def problem_shape(problem: StdioProblem, config: SearchConfig) -> dict | None:
    """The problem's input shape: read off its cases, with the bounds and rules its statement states.

    Example:
        >>> problem_shape(StdioProblem("P", None, ["2\\n1 2\\n"], ["3\\n"], [], []), SearchConfig())["layout"][1]["t"]
        'row'
    """
    return infer_shape(problem.inputs, statement_bounds(problem.question), max_chars=config.max_stdin_chars,
                       rules=statement_rules(problem.question))


def _failed(statuses: list[str], j: int) -> bool:
    return j < len(statuses) and statuses[j] not in ("pass", "unexecuted")


def _splits(group: list[int], verdicts: dict[int, list[str]], j: int) -> bool:
    seen = {(_failed(verdicts[p], j)) for p in group if p in verdicts and j < len(verdicts[p])
            and verdicts[p][j] != "unexecuted"}
    return len(seen) == 2


def _clean(output: Any, limit: int) -> bool:
    return isinstance(output, str) and output.strip() != "" and len(output) <= limit and "\ufffd" not in output


def _start(problem: StdioProblem, config: SearchConfig, round_: int) -> _State | StdioResult:
    if not problem.reference:
        return StdioResult(problem.id, reason="no_reference")
    if not problem.inputs:
        return StdioResult(problem.id, reason="no_seed_inputs")
    state = _State(problem, config, round_)
    if state.shape is None:
        return StdioResult(problem.id, reason="no_shape")
    if not state.targets():
        state.result.reason = "nothing_to_target"
        return state.result
    return state


def search_stdio_tests(
    problems: Sequence[StdioProblem],
    config: SearchConfig | None = None,
    *,
    round: int = 1,
    sandbox: Any = None,
    verify_sandbox: Any = None,
) -> list[StdioResult]:
    """Search new stdin/stdout cases for each problem (all problems advance together, one batch per step).

    Args:
        problems (`Sequence[StdioProblem]`): the problems, each with its reference, cases, pool and pass matrix.
        config (`SearchConfig`, *optional*): budget, generation size, patience, seed (the settings the assert
            search uses; ``max_stdin_chars`` caps an input, ``max_stdout_chars`` an expected output).
        round (`int`, defaults to 1): the round number (it seeds the candidates with the problem id).
        sandbox (`Sandbox`, *optional*): where the validators, the reference and the targets run (default: the
            shared sandbox of ``config.sandbox``; a mode applies to assert jobs only, so stdin cases run alike).
        verify_sandbox (`Sandbox`, *optional*): where the reference runs the kept cases (default: ``sandbox``).

    Returns:
        `list[StdioResult]`: one per problem, in order.

    Example:
        >>> search_stdio_tests([StdioProblem("P_2", None, ["1\\n"], ["1\\n"], [], [])])[0].reason
        'no_reference'
    """
    from ..execution import Job

    config = config or SearchConfig()
    if sandbox is None and any(p.reference for p in problems):
        from ..execution import shared_sandbox

        sandbox = shared_sandbox(config.sandbox)
    verify_sandbox = verify_sandbox or sandbox
    started = [_start(p, config, round) for p in problems]
    states = [s for s in started if isinstance(s, _State)]
    if states:
        _check_validators(states, sandbox)
    while True:
        active = [s for s in states if s.draw()]
        if not active:
            break
        _validate(active, sandbox)
        reports = sandbox.run_many([Job(s.problem.reference, inputs=s.pending, language=s.problem.language,
                                        timeout_s=min(s.config.cpu_s * 4, s.limit)) for s in active])
        for state, report in zip(active, reports):
            state.result.executions += len(state.pending)
            outputs = report.outputs or [None] * len(state.pending)
            state.values = [(text, out) for text, status, out in zip(state.pending, report.statuses, outputs)
                            if status == "pass" and _clean(out, state.config.max_stdout_chars)]
            state.result.usable += len(state.values)
            state.result.unusable += len(state.pending) - len(state.values)
        jobs, owners = [], []
        for state in active:
            if not state.values:
                continue
            problem = state.problem
            for p in state.targets():
                language = (problem.languages or [problem.language] * len(problem.programs))[p]
                jobs.append(Job(problem.programs[p], inputs=[v[0] for v in state.values],
                                outputs=[v[1] for v in state.values], checker=problem.checker,
                                float_tol=problem.float_tol, language=language, timeout_s=state.limit,
                                stop_on_failure=p in state.alive and not any(p in g for g in state.groups)))
                owners.append((state, p))
        verdicts: dict[int, dict[int, list[str]]] = {}
        for (state, p), report in zip(owners, sandbox.run_many(jobs) if jobs else []):
            state.result.executions += sum(s != "unexecuted" for s in report.statuses)
            if report.infra_error:  # nobody's verdict: neither a kill nor agreement
                continue
            verdicts.setdefault(id(state), {})[p] = list(report.statuses)
        for state in active:
            state.pick(verdicts.get(id(state), {}))
    _verify(states, verify_sandbox)
    for state in states:
        if not state.result.inputs and state.result.reason is None:
            state.result.reason = "no_kill"
    return [s.result if isinstance(s, _State) else s for s in started]


def _check_validators(states: list[_State], sandbox: Any) -> None:
    """A shipped validator must admit every input the problem already has, or the problem gets no cases."""
    for state in states:
        if state.problem.validator and shipped_validator(state.problem.validator) is None:
            state.done = True
            state.result.reason = "validator_unsupported"
    shipped = [s for s in states if s.problem.validator and not s.done]
    reports = sandbox.run_many([_validator_job(s, s.problem.inputs) for s in shipped]) if shipped else []
    for state, report in zip(shipped, reports):
        if not report.all_passed:
            state.done = True
            state.result.reason = "validator_refuses_seeds"


def shipped_validator(validator: dict | None) -> tuple[str, str] | None:
    """A shipped input validator as a program of the testlib contract (exit 0 printing nothing on a valid input):
    ``(source, language)``. A testlib validator is that already; a Python Kattis validator (exit 42 on a valid
    input) is wrapped; a compiled Kattis one cannot be (its ``exit(42)`` is final), so it gives ``None``.

    Example:
        >>> shipped_validator({"source": "int main() {}", "language": "cpp", "contract": "testlib"})[1]
        'cpp'
        >>> shipped_validator({"source": "int main() { return 42; }", "language": "cpp", "contract": "kattis"})
    """
    validator = validator or {}
    source, language = str(validator.get("source") or ""), validator.get("language") or "cpp"
    if validator.get("contract") != "kattis":
        return source, language
    if language != "python":
        return None
    return ("import sys as _ecd_sys\n_ecd_out, _ecd_sys.stdout = _ecd_sys.stdout, _ecd_sys.stderr\n"
            f"_ecd_source = {source!r}\n"
            "try:\n    exec(compile(_ecd_source, 'input_validator.py', 'exec'), {'__name__': '__main__'})\n"
            "    _ecd_code = 0\nexcept SystemExit as _ecd_exit:\n    _ecd_code = _ecd_exit.code\n"
            "_ecd_sys.stdout = _ecd_out\n_ecd_sys.exit(0 if _ecd_code == 42 else 1)\n", "python")


def _validator_job(state: _State, texts: list[str]) -> Any:
    from ..execution import Job

    source, language = shipped_validator(state.problem.validator) or ("", "python")
    return Job(source, inputs=list(texts), outputs=[""] * len(texts), language=language,
               timeout_s=state.config.sandbox.timeout_s)


def _validate(active: list[_State], sandbox: Any) -> None:
    """Drop the candidates a shipped validator refuses (the shape already admitted each)."""
    shipped = [s for s in active if s.problem.validator]
    for state, report in zip(shipped, sandbox.run_many([_validator_job(s, s.pending) for s in shipped])):
        admitted = [text for text, ok in zip(state.pending, report.passed) if ok]
        state.result.invalid += len(state.pending) - len(admitted)
        state.result.executions += len(state.pending)
        state.pending = admitted


def _verify(states: list[_State], sandbox: Any) -> None:
    """The reference runs the kept cases the ordinary way (checker included); only those it passes are returned."""
    from ..execution import Job

    work = [s for s in states if s.kept]
    jobs = [Job(s.problem.reference, inputs=[k[0] for k in s.kept], outputs=[k[1] for k in s.kept],
                checker=s.problem.checker, float_tol=s.problem.float_tol, language=s.problem.language)
            for s in work]
    for state, report in zip(work, sandbox.run_many(jobs) if jobs else []):
        for (text, out), status in zip(state.kept, report.statuses):
            if status == "pass":
                state.result.inputs.append(text)
                state.result.outputs.append(out)
            else:
                state.result.rejected += 1


@dataclass
class ValuedStdin:
    """Texts proposed for one problem (by a model), as cases: those its shape and shipped validator admit, that the
    reference answers with clean text in its time; ``invalid`` and ``unusable`` count the others (``invalid``
    includes texts already among its cases); ``repaired`` counts the texts whose counts were written again from
    what they count (a row of 5 values after ``n = 4``) before they were checked."""

    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    invalid: int = 0
    unusable: int = 0
    reason: str | None = None
    repaired: int = 0


def _repaired(requests: Sequence[tuple[StdioProblem, list[str]]], shapes: list[dict | None], sandbox: Any,
              config: SearchConfig, out: list[ValuedStdin]) -> list[list[str]]:
    """Each request's texts with their counts written again in the sandbox (a text the layout cannot read even so,
    or one the repair does not end on, stays as it was: the validator then refuses it)."""
    from ..execution import Job

    work = [k for k, (_, texts) in enumerate(requests) if texts and shapes[k] is not None]
    reports = sandbox.run_many([Job(repair_program(shapes[k]), inputs=list(requests[k][1]),
                                    timeout_s=config.sandbox.timeout_s) for k in work]) if work else []
    texts = [list(t) for _, t in requests]
    for k, report in zip(work, reports):
        for j, (status, printed) in enumerate(zip(report.statuses, report.outputs or ())):
            if status == "pass" and isinstance(printed, str) and printed and printed != texts[k][j]:
                texts[k][j] = printed
                out[k].repaired += 1
    return texts


def value_stdin(requests: Sequence[tuple[StdioProblem, list[str]]], sandbox: Any,
                config: SearchConfig | None = None) -> list[ValuedStdin]:
    """Check proposed stdin texts against each problem's shape and validator and value them with its reference,
    **all in the sandbox** (a model's text is hostile input: the caller never parses it). A small model often
    miscounts (``t = 5`` before four words, ``n = 2`` before four values): each text first has its counts written
    again from what follows them (:func:`~.text_inputs.repair_program`, in the sandbox too); its values are kept
    as they are, so an input outside the problem's bounds is still refused.

    Args:
        requests: each problem with the texts proposed for it.
        sandbox (`Sandbox`): where the validators and the references run.
        config (`SearchConfig`, *optional*): ``cpu_s`` (the reference's time per text, at most the problem's
            limit), ``max_stdin_chars`` and ``max_stdout_chars``.

    Returns:
        `list[ValuedStdin]`: one per request, in order (``reason`` ``no_reference`` or ``no_shape`` when the problem
        cannot value any).

    Example:
        >>> from evolvecoder_datasets.execution import Sandbox
        >>> p = StdioProblem("P", "print(int(input()) * 2)", ["3\\n", "10\\n"], ["6\\n", "20\\n"], [], [],
        ...                  question="$1 \\\\le x \\\\le 100$")
        >>> with Sandbox(workers=1) as sb:
        ...     [v] = value_stdin([(p, ["7\\n", "x\\n", "1000\\n", "3\\n"])], sb)
        >>> v.inputs, v.outputs, v.invalid
        (['7\\n'], ['14\\n'], 3)
    """
    from ..execution import Job

    config = config or SearchConfig()
    out = [ValuedStdin() for _ in requests]
    shapes = [problem_shape(problem, config) if problem.reference else None for problem, _ in requests]
    repaired = _repaired(requests, shapes, sandbox, config, out)
    jobs, owners = [], []
    for k, (problem, texts) in enumerate(requests):
        shape = shapes[k]
        if not problem.reference or shape is None:
            out[k].reason = "no_reference" if not problem.reference else "no_shape"
            continue
        texts = repaired[k]
        fresh = [t for t in dict.fromkeys(texts) if t not in set(problem.inputs)]
        out[k].invalid += len(texts) - len(fresh)
        if not fresh:
            continue
        jobs.append(Job(validator_program(shape), inputs=fresh, outputs=[""] * len(fresh),
                        timeout_s=config.sandbox.timeout_s))
        owners.append((k, fresh, "shape"))
        if problem.validator:
            program = shipped_validator(problem.validator)
            if program is None:  # a validator that cannot be run here: nothing it might refuse is used
                out[k].reason = "validator_unsupported"
                out[k].invalid += len(fresh)
                jobs.pop()
                owners.pop()
                continue
            jobs.append(Job(program[0], inputs=fresh, outputs=[""] * len(fresh), language=program[1],
                            timeout_s=config.sandbox.timeout_s))
            owners.append((k, fresh, "shipped"))
    admitted: dict[int, list[bool]] = {}
    fresh_of: dict[int, list[str]] = {}
    for (k, fresh, _), report in zip(owners, sandbox.run_many(jobs) if jobs else []):
        ok = admitted.setdefault(k, [True] * len(fresh))
        admitted[k] = [a and b for a, b in zip(ok, report.passed)]
        fresh_of[k] = fresh
    valued = [(k, [t for t, ok in zip(fresh_of[k], admitted[k]) if ok]) for k in sorted(admitted)]
    for k, texts in valued:
        out[k].invalid += len(fresh_of[k]) - len(texts)
    valued = [(k, texts) for k, texts in valued if texts]
    reports = sandbox.run_many([
        Job(requests[k][0].reference, inputs=texts, language=requests[k][0].language,
            timeout_s=min(config.cpu_s * 4, requests[k][0].limit or config.sandbox.timeout_s,
                          config.sandbox.timeout_s))
        for k, texts in valued])
    for (k, texts), report in zip(valued, reports):
        for text, status, printed in zip(texts, report.statuses, report.outputs or [None] * len(texts)):
            if status == "pass" and _clean(printed, config.max_stdout_chars):
                out[k].inputs.append(text)
                out[k].outputs.append(printed)
            else:
                out[k].unusable += 1
    return out
