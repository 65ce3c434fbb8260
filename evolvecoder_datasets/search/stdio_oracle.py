"""The fidelity oracle of stdin/stdout problems: many inputs of the problem's shape, valued by its reference and kept
apart from its suite, that label programs right or wrong.

The stdin twin of :mod:`.oracle`. Inputs are drawn by :class:`~.text_inputs.TextMutator` from the problem's own
cases with a stream of its own (seeded apart from every writer's), admitted by the problem's shape and, where it ships
one, its validator (both in the sandbox), valued by the reference there; a program is **right** when it passes every
oracle case and every case of the problem's own, **wrong** otherwise (judged by the problem's checker or the token
compare, in its language, under its limit). The oracle only labels: it never chooses, keeps or publishes a case.

Example:
    >>> from evolvecoder_datasets.execution import Sandbox
    >>> from evolvecoder_datasets.search.stdio_oracle import label_stdio_programs
    >>> from evolvecoder_datasets.search.stdio_writer import StdioProblem
    >>> ref = "n = int(input())\\nprint(max(map(int, input().split())))\\n"
    >>> first = "n = int(input())\\nprint(input().split()[0])\\n"  # right on the samples only
    >>> p = StdioProblem("Max", ref, ["2\\n5 1\\n", "3\\n9 2 4\\n"], ["5\\n", "9\\n"], [ref, first], [[True] * 2] * 2,
    ...                  question="$1 \\\\le n \\\\le 9$, $1 \\\\le a_i \\\\le 9$")
    >>> with Sandbox(workers=1) as sb:
    ...     [labels] = label_stdio_programs([p], sb, inputs=40)
    >>> labels
    [1, 0]
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from ..seeding import stable_int
from .problems import SearchConfig
from .stdio_writer import StdioProblem, problem_shape, value_stdin
from .text_inputs import TextMutator

__all__ = ["label_stdio_programs", "stdio_oracle"]


def stdio_oracle(problems: Sequence[StdioProblem], sandbox: Any, *, inputs: int = 64, seed: int = 0,
                 config: SearchConfig | None = None) -> list[tuple[list[str], list[str]] | None]:
    """Per problem, the oracle's cases ``(inputs, outputs)``: up to ``inputs`` texts drawn from its shape, admitted and
    valued in the sandbox (``None`` for a problem without a reference or a shape).

    Example:
        >>> stdio_oracle([StdioProblem("P", None, ["1\\n"], ["1\\n"], [], [])], sandbox=None)
        [None]
    """
    config = config or SearchConfig()
    requests, owners = [], []
    for k, problem in enumerate(problems):
        shape = problem_shape(problem, config) if problem.reference and problem.inputs else None
        if shape is None:
            continue
        rng = random.Random(stable_int(seed, problem.id, "stdio-oracle"))
        texts = TextMutator(shape, problem.inputs, rng).draw(inputs)
        requests.append((problem, texts))
        owners.append(k)
    out: list[tuple[list[str], list[str]] | None] = [None] * len(problems)
    for k, valued in zip(owners, value_stdin(requests, sandbox, config) if requests else []):
        out[k] = (valued.inputs, valued.outputs)
    return out


def label_stdio_programs(problems: Sequence[StdioProblem], sandbox: Any, *, inputs: int = 64, seed: int = 0,
                         config: SearchConfig | None = None,
                         oracles: Sequence[tuple[list[str], list[str]] | None] | None = None) -> list[list[int] | None]:
    """Per problem, per program of its pool: ``1`` right (passes every oracle case and every case of its own), ``0``
    wrong, ``-1`` unlabelled (the sandbox failed on it); ``None`` for a problem without an oracle. ``oracles``: the
    problems' oracles when already built (:func:`stdio_oracle`), else they are built here. A program whose row of
    ``problem.pass_matrix`` (its verdicts on the problem's own cases) holds a failure is wrong without a run.

    Example:
        >>> label_stdio_programs([StdioProblem("P", None, ["1\\n"], ["1\\n"], ["print(1)"], [[True]])], sandbox=None)
        [None]
    """
    from ..execution import Job

    config = config or SearchConfig()
    if oracles is None:
        oracles = stdio_oracle(problems, sandbox, inputs=inputs, seed=seed, config=config)
    jobs, owners = [], []
    labels: list[list[int] | None] = [None if o is None else [] for o in oracles]
    for k, (problem, oracle) in enumerate(zip(problems, oracles)):
        if oracle is None:
            continue
        cases_in, cases_out = list(problem.inputs) + oracle[0], list(problem.outputs) + oracle[1]
        failed = _failed_own_cases(problem)
        for p, code in enumerate(problem.programs):
            if failed[p]:  # wrong by its own cases' verdicts already: nothing to run (a TLE costs the limit a case)
                labels[k].append(0)  # type: ignore[union-attr]
                continue
            language = (problem.languages or [problem.language] * len(problem.programs))[p]
            jobs.append(Job(code, inputs=cases_in, outputs=cases_out, checker=problem.checker,
                            float_tol=problem.float_tol, language=language, timeout_s=problem.limit,
                            stop_on_failure=True))
            owners.append((k, len(labels[k])))  # type: ignore[arg-type]
            labels[k].append(-1)  # type: ignore[union-attr]
    for (k, p), report in zip(owners, sandbox.run_many(jobs) if jobs else []):
        labels[k][p] = -1 if report.infra_error else int(report.all_passed)  # type: ignore[index]
    return labels


def _failed_own_cases(problem: StdioProblem) -> list[bool]:
    """Per program, whether ``problem.pass_matrix`` (its verdicts on the problem's own cases, as the recipe's run
    judged them) has a failure: such a program is wrong whatever the oracle says. All ``False`` where the matrix is
    absent or not shaped ``(programs, cases)``."""
    rows = list(problem.pass_matrix) if problem.pass_matrix is not None else []
    if len(rows) != len(problem.programs) or any(len(row) != len(problem.inputs) for row in rows):
        return [False] * len(problem.programs)
    return [not all(bool(cell) for cell in row) for row in rows]
