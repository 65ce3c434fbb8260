"""Stdin/stdout problems in the recipe: contest problem packages and TACO-layout rows, evolved as they are.

A run whose seeds are all stdin/stdout problems (``inputs``/``outputs``, no ``tests``) skips the refine and domain
stages: its cases are the problem's own, never rewritten into a function problem. In their place
:func:`confirm_references` runs each problem's accepted solutions (``solutions``, in the row's language; then the
accepted ``submissions`` in another language, such as C++) on its own cases, judged as the problem judges (checker,
tolerance, language): the first that passes them all is the reference the rounds value new inputs with
(``reference_solutions``, ``reference_ok``, and ``reference_language`` when it is not the row's); a problem whose
solutions all fail its own cases is dropped (``drop_reason = "reference_fails_cases"``), one with no solution keeps
its cases and gets no new ones. After the
pool is sampled, :func:`add_submissions` appends a package's labelled submissions in the row's language (accepted,
wrong answer, time limit, run-time error) to it: programs whose verdict a contest judge gave, beside the model's
scripts and the reference's mutants.

Example:
    >>> from evolvecoder_datasets.recipe.stdin import stdin_only
    >>> stdin_only({"tests": [[], []], "inputs": [["1\\n"], ["2\\n"]]}), stdin_only({"tests": [["assert f()"]]})
    (True, False)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import schema
from ..errors import ConfigError
from ..schema import SUBMISSION_MODEL  # a pool entry's label: submission:<verdict>

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

    from .config import RecipeConfig

__all__ = ["MAX_REFERENCE_CANDIDATES", "SUBMISSION_MODEL", "add_submissions", "confirm_references", "stdin_only"]

#: At most this many accepted programs per problem are tried as its reference (CodeContests rows carry hundreds).
MAX_REFERENCE_CANDIDATES = 8
ACCEPTED = "_accepted"  # internal: the seed solutions travelling beside the pool while submissions are appended


def stdin_only(columns: Any) -> bool:
    """Whether every row is a stdin/stdout problem (``inputs`` and no ``tests``); a mix is refused by the recipe.

    Raises:
        ConfigError: some rows are stdin/stdout problems and others are not.
    """
    names = columns.column_names if hasattr(columns, "column_names") else list(columns)
    tests = list(columns[schema.TESTS]) if schema.TESTS in names else []
    inputs = list(columns[schema.INPUTS]) if schema.INPUTS in names else [None] * len(tests)
    stdin = [bool(i) and not t for t, i in zip(tests, inputs)] if tests else [bool(i) for i in inputs]
    if any(stdin) and not all(stdin):
        raise ConfigError(f"the seeds mix {sum(stdin)} stdin/stdout problems with {len(stdin) - sum(stdin)} function "
                          "problems; run them as two recipes, with `problem_kind: stdin` and `problem_kind: function` "
                          "(stdin problems skip the refine stage)")
    return bool(stdin) and all(stdin)


def _confirm(batch: dict[str, list], *, config: Any) -> dict[str, list]:
    from ..execution import Job, shared_sandbox
    from ..execution.checkers import Checker

    n = len(batch[schema.ID])
    none = [None] * n
    solutions = batch.get(schema.SOLUTIONS) or none
    drops = list(batch.get(schema.DROP_REASON) or none)
    languages = batch.get(schema.LANGUAGE) or none
    checkers = batch.get(schema.CHECKER) or none
    tols = batch.get(schema.FLOAT_TOL) or none
    submissions = batch.get("submissions") or none
    jobs, owners = [], []
    for i in range(n):
        if drops[i]:
            continue
        for code, language in _candidates(solutions[i], submissions[i], languages[i] or "python"):
            jobs.append(Job(code, inputs=list(batch[schema.INPUTS][i]), outputs=list(batch[schema.OUTPUTS][i]),
                            checker=Checker.from_value(checkers[i]), float_tol=tols[i], language=language))
            owners.append((i, code, language))
    passing: dict[int, tuple[str, str]] = {}
    tried: dict[int, int] = {}
    for (i, code, language), report in zip(owners, shared_sandbox(config).run_many(jobs) if jobs else []):
        tried[i] = tried.get(i, 0) + 1
        if report.all_passed:
            passing.setdefault(i, (code, language))  # candidates are in order: the row's own language first
    references, ok, reference_languages = [], [], []
    for i in range(n):
        code, language = passing.get(i, (None, None))
        references.append([code] if code is not None else [])
        ok.append(i in passing)
        reference_languages.append(language if language not in (None, languages[i] or "python") else None)
        if tried.get(i) and i not in passing and not drops[i]:
            drops[i] = "reference_fails_cases"
    origins = [[{"round": 0, "method": "seed"} for _ in batch[schema.INPUTS][i] or ()] for i in range(n)]
    return {schema.REFERENCE_SOLUTIONS: references, schema.REFERENCE_OK: ok,
            schema.REFERENCE_LANGUAGE: reference_languages, schema.DROP_REASON: drops, schema.TEST_ORIGIN: origins}


def _candidates(solutions: Any, submissions: Any, language: str) -> list[tuple[str, str]]:
    """A row's reference candidates in the order they are preferred: its solutions (in its language), then its
    accepted submissions in its language, then those in the other languages a judge runs (by name)."""
    own = [str(s.get("code") if isinstance(s, dict) else s) for s in (solutions or ())]
    accepted = [s for s in submissions or () if isinstance(s, dict) and s.get("verdict") == "accepted"
                and isinstance(s.get("source"), str)]
    same = [s["source"] for s in accepted if (s.get("language") or "python") == language]
    other = sorted(((s["source"], s.get("language") or "python") for s in accepted
                    if (s.get("language") or "python") != language), key=lambda c: c[1])
    out = [(code, language) for code in dict.fromkeys(own + same)]
    return (out + list(dict.fromkeys(other)))[:MAX_REFERENCE_CANDIDATES]


def confirm_references(seeds: Dataset, config: RecipeConfig) -> Dataset:
    """Each problem's reference: the first of its accepted solutions that passes all its own cases (see the module
    docstring); adds ``reference_solutions``, ``reference_ok``, ``reference_language`` (null where it is the row's
    language), ``drop_reason`` and ``test_origin`` (round 0, method ``seed``: the problem's own cases).

    Example:
        >>> confirmed = confirm_references(load_seeds(config), config)   # doctest: +SKIP
    """
    from datasets import List, Value

    features = seeds.features.copy()
    features[schema.REFERENCE_SOLUTIONS] = List(Value("string"))
    features[schema.REFERENCE_OK] = Value("bool")
    features[schema.REFERENCE_LANGUAGE] = Value("string")
    features[schema.DROP_REASON] = Value("string")
    features[schema.TEST_ORIGIN] = schema.problem_features()[schema.TEST_ORIGIN]
    return seeds.map(_confirm, batched=True, batch_size=config.batch_size, fn_kwargs={"config": config.execute},
                     features=features, desc="references")


def _with_submissions(batch: dict[str, list]) -> dict[str, list]:
    n = len(batch[schema.ID])
    subs = batch.get("submissions") or [None] * n
    languages = batch.get(schema.LANGUAGE) or [None] * n
    accepted = batch.get(ACCEPTED) or [None] * n
    pools = []
    for i in range(n):
        pool = list(batch[schema.SOLUTIONS][i] or [])
        kept = [(s.get("verdict"), s.get("source")) for s in subs[i] or ()
                if s.get("language") == (languages[i] or "python")]
        # a TACO row's accepted programs are its solutions: they join as accepted submissions, once each
        listed = {code for _, code in kept}
        kept += [("accepted", code) for code in accepted[i] or () if code not in listed]
        for k, (verdict, code) in enumerate(kept):
            pool.append({"model": SUBMISSION_MODEL + str(verdict), "sample": k, "code": code})
        pools.append(pool)
    return {schema.SOLUTIONS: pools}


def add_submissions(pooled: Dataset, accepted: list[list[str]] | None = None) -> Dataset:
    """The pool with each package's labelled submissions in the row's language appended (model
    ``submission:<verdict>``), and each row's ``accepted`` programs (its seed ``solutions``: a TACO row has no
    other label) as ``submission:accepted`` where they are not among them; without either the rows are returned
    as they are.

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_list([{"id": "P", "language": "python",
        ...     "solutions": [{"model": "mutant", "sample": 0, "code": "x=2"}],
        ...     "submissions": [{"verdict": "wrong_answer", "language": "python", "path": "a.py", "source": "x=1"},
        ...                     {"verdict": "accepted", "language": "cpp", "path": "b.cpp", "source": "int"}]}])
        >>> [s["model"] for s in add_submissions(ds)[0]["solutions"]]
        ['mutant', 'submission:wrong_answer']
    """
    if "submissions" not in pooled.column_names and not any(accepted or ()):
        return pooled
    if accepted is not None:
        if len(accepted) != len(pooled):
            raise ConfigError(f"{len(accepted)} lists of accepted programs for {len(pooled)} rows")
        pooled = pooled.add_column(ACCEPTED, [list(a or ()) for a in accepted])
    out = pooled.map(_with_submissions, batched=True, features=pooled.features, desc="submissions")
    return out.remove_columns(ACCEPTED) if accepted is not None else out
