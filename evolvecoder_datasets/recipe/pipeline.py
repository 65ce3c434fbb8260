"""The EvolveCoder recipe as a library call: seeds -> dedup -> round 0 -> rounds 1..R -> final filter -> store.

Round 0 refines the seeds (:mod:`~evolvecoder_datasets.stages.refine`), samples the solution pool once
(:mod:`~evolvecoder_datasets.stages.sample`, optionally with AST mutants as an extra "model") and executes it
(:mod:`~evolvecoder_datasets.stages.execute`). Each round r = 1..R evolves the tests from the start-of-round matrix
(:mod:`~evolvecoder_datasets.stages.evolve`); the final filter (:mod:`~evolvecoder_datasets.stages.finalize`) prunes
them. Each round is published to a revision store (``round{r}`` branches of a Hub repository or a local git-backed
folder, with statistics, figures, a card and a ``dropped`` config naming every removed problem) and the result goes
to ``main`` (exactly ``id``, ``question``, ``tests``; ``keep_source`` adds ``source``).

Every stage's output is saved under ``<output_dir>/stages/`` (:mod:`~evolvecoder_datasets.recipe.checkpoints`), and
every LLM answer is kept in ``<output_dir>/llm``: an interrupted run started again with the same configuration
reloads the finished stages and sends only the requests that never got an answer. Every random choice derives from
``seed`` (per problem and round) and is recorded in the round statistics.

Example:
    >>> from evolvecoder_datasets.recipe import demo_config, run_recipe
    >>> result = run_recipe(demo_config("runs/demo"))  # doctest: +SKIP
    >>> print(result)  # doctest: +SKIP
    EvolveCoder run in runs/demo: 6 seeds -> 5 problems after round 0 -> 4 final problems (1 rounds)
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import schema
from .._deps import require
from ..errors import EmptyRunError, MissingExtraError, RevisionNotFoundError
from ..keys import chain, config_digest
from ..schema import TIME_LIMIT
from ..stages.support.drops import drop_reason_counts, dropped_records, without_dropped
from .checkpoints import Checkpoints, evolve_failures, refine_failures
from .config import RECIPE_VERSION, RecipeConfig
from .measures import RunMeasures
from .progress import run_progress, stepping
from .seeds import dedup_seeds, load_seeds, local_only, packages_only
from .stats import (
    RoundStats,
    RunHistory,
    cases_of,
    final_stats,
    is_sample,
    ks,
    llm_matrices,
    method_rows,
    round_stats,
)
from .stdin import add_submissions, confirm_references, stdin_only

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

    from ..distributed.executor import Executor
    from ..rounds import RoundCommit

__all__ = ["RecipeResult", "run", "run_recipe"]

logger = logging.getLogger(__name__)

# Round revisions carry each problem's calibrated time limit (issue 15), so rewards trained on them use it.
PROBLEM_COLUMNS = (schema.ID, schema.SOURCE, schema.QUESTION, schema.TESTS, schema.TEST_ORIGIN, schema.ROUND,
                   schema.DROP_REASON, TIME_LIMIT, schema.INPUTS, schema.OUTPUTS, schema.CHECKER, schema.FLOAT_TOL,
                   schema.LANGUAGE)
POOL_COLUMNS = (schema.ID, schema.SOLUTIONS, schema.PASS_MATRIX, schema.STATUSES)


@dataclass
class RecipeResult:
    """What a run produced.

    Attributes:
        final (`datasets.Dataset`): the published problems (after the final filter).
        rounds (`list[datasets.Dataset]`): problems with pool and pass matrix after round 0, 1, ..., R.
        stats (`list[dict]`): each round's statistics (as committed to the store), then the final one.
        commits (`list[RoundCommit]`): what was pushed (empty when publishing is disabled or nothing changed).
        drop_reasons (`dict[str, int]`): every removed problem, by reason (seeds included).
        dropped (`list[dict[str, str]]`): every removed problem: ``id``, ``stage`` (``dedup``, ``refine`` or
            ``final``) and ``reason``, as published in each revision's ``dropped`` config.
        output_dir (`str`): the run folder.
        seeds (`int`): seed problems read.
        execution (`dict`): where this run's sandbox jobs were judged: ``this_machine`` (``jobs``, ``tests`` sent
            by this process to its own machine's execution service), ``this_machine_measurements`` (those of them
            that measure the suites, the fidelity oracle, which every run redoes and which never starts a
            cluster) and ``nodes`` (per Ray node id, under ``distributed.engine: ray``); also written to
            ``execution.json`` in the run folder. Round 0's shard
            tasks run on Ray workers and use their own node's service: they count in neither.

    Example:
        >>> result = run_recipe(config)                                       # doctest: +SKIP
        >>> [d for d in result.dropped if d["stage"] == "refine"][:1]          # doctest: +SKIP
        [{'id': 'HumanEval_23', 'stage': 'refine', 'reason': 'refine_no_json'}]
    """

    final: Dataset
    rounds: list[Dataset]
    stats: list[dict[str, Any]]
    commits: list[Any] = field(default_factory=list)
    drop_reasons: dict[str, int] = field(default_factory=dict)
    dropped: list[dict[str, str]] = field(default_factory=list)
    output_dir: str = ""
    seeds: int = 0
    execution: dict[str, Any] = field(default_factory=dict)

    def pass_at_1(self) -> list[float]:
        """Mean pass@1 of the LLM samples, per round (0..R)."""
        return [float(s["pass_at_k"][str(s["round"])]["1"]) for s in self.stats[:-1]]

    def mutation_scores(self) -> list[float | None]:
        """Pooled mutation score per round (None without mutants)."""
        return [s.get("mutation_score", {}).get(str(s["round"])) for s in self.stats[:-1]]

    def fidelity(self) -> list[dict[str, Any] | None]:
        """Per round 0..R, then ``main``: the suite's fidelity against the oracle (``right``, ``wrong``, ``tpr``,
        ``tnr``, ``fpr``, ``fnr``; rates ``None`` over no program), or ``None`` where the run computed none.

        Example:
            >>> [f["tnr"] for f in result.fidelity()]   # doctest: +SKIP
            [0.87, 0.91, 0.93, 0.93]
        """
        return [(s.get("fidelity") or {}).get("suite") for s in self.stats]

    def __str__(self) -> str:
        lines = [
            (f"EvolveCoder run in {self.output_dir}: {self.seeds} seeds -> {len(self.rounds[0])} problems after "
             f"round 0 -> {len(self.final)} final problems ({len(self.rounds) - 1} rounds)"),
        ]
        pool = [s.get("pool_pass_at_1", {}).get(str(s["round"])) for s in self.stats[:-1]]
        if any(p is not None for p in pool):
            lines.append("pool pass@1 by round (model samples and mutants passing every test): "
                         + ", ".join("–" if p is None else f"{p:.3f}" for p in pool))
        samples = self.pass_at_1()
        if any(p == p for p in samples):  # NaN when the run samples no model
            lines.append("pass@1 of the model samples by round: " + ", ".join(f"{p:.3f}" for p in samples))
        scores = [s for s in self.mutation_scores() if s is not None]
        if scores:
            lines.append("mutation score by round: " + ", ".join(f"{s:.3f}" for s in scores))
        fidelity = self.fidelity()
        if any(f is not None for f in fidelity):
            names = [str(s["round"]) for s in self.stats[:-1]] + ["main"]
            lines.append("test fidelity (TPR/TNR) by round: " + ", ".join(
                f"{n} {_rate(f['tpr'])}/{_rate(f['tnr'])}" for n, f in zip(names, fidelity) if f is not None))
        if self.drop_reasons:
            lines.append("dropped: " + ", ".join(f"{k} {v}" for k, v in self.drop_reasons.items()))
        for commit in self.commits:
            lines.append(f"pushed {commit.revision} of {commit.repo_id} at {commit.commit[:10]}")
        return "\n".join(lines)


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _dropped_dataset(dropped: list[dict[str, str]]) -> Dataset:
    from datasets import Dataset, Features, Value

    features = Features({name: Value("string") for name in schema.DROPPED_COLUMNS})
    return Dataset.from_dict({name: [d[name] for d in dropped] for name in schema.DROPPED_COLUMNS},
                             features=features)


# ---------------------------------------------------------------------------------------------- figures
def _pool_matrices(ds: Dataset) -> list[Any]:
    """Each problem's whole pass matrix (model samples and mutants)."""
    import numpy as np

    from ..passmatrix import as_pass_matrix

    return [as_pass_matrix(matrix) if tests else np.zeros((len(sols), 0), dtype=bool)
            for sols, matrix, tests in zip(ds[schema.SOLUTIONS], ds[schema.PASS_MATRIX], cases_of(ds))]


def _solved(row: dict[str, Any]) -> bool:
    """Whether a per-model row has a pass@k above zero (a chart of zeros says nothing a table would not)."""
    return any(isinstance(v, float) and v > 0 for k, v in row.items() if str(k).startswith("pass@"))


def _figures(config: RecipeConfig, rounds: list[Dataset], history: RunHistory, final: Dataset | None,
             tag: str) -> list[str]:
    if not config.figures:
        return []
    from ..metrics import difficulty_table, mutation_table, per_model_table, save_figures
    from ..metrics.fidelity import rate_rows

    last = rounds[-1]
    folder = Path(config.output_dir) / "figures" / tag
    try:
        require("matplotlib", extra="viz", feature="round figures")
    except MissingExtraError as err:
        logger.warning("no figures in the cards: %s", err)
        return []
    difficulty = difficulty_table({r: llm_matrices(ds) for r, ds in enumerate(rounds)}, ks=ks(config))
    per_model = per_model_table([[s for s in sols if is_sample(s)] for sols in last[schema.SOLUTIONS]],
                                llm_matrices(last), ks=ks(config)) if config.models else []
    if config.mutants:
        # the whole pool, mutants included: where the models solve little (the demo's SmolLM2), this is the line
        # that shows the suites hardening
        whole = difficulty_table({r: _pool_matrices(ds) for r, ds in enumerate(rounds)}, ks=(1,))
        for row, pool in zip(difficulty, whole):
            row["pass@1 of the whole pool (samples and mutants)"] = pool["pass@1"]
    drawn = save_figures(
        folder,
        difficulty=difficulty,
        methods=method_rows(last, final),  # the card's meaning of generated and retained
        per_model=per_model if any(_solved(row) for row in per_model) else None,  # no empty chart
        mutation=mutation_table(history.mutation_rows) if history.mutation_rows else None,
        fidelity=rate_rows(history.fidelity) if history.fidelity else None,
    )
    return [str(path) for path in drawn.values()]


# ---------------------------------------------------------------------------------------------- publishing
def _already_pushed(store: str, revision: int | str, run_key: str) -> bool:
    from ..rounds import load_round_stats

    try:
        stats = load_round_stats(store, revision)
    except (RevisionNotFoundError, OSError):
        return False
    return (stats.get("provenance") or {}).get("run_key") == run_key


def _push_round(ds: Dataset, store: str, r: int, stats: RoundStats, config: RecipeConfig, figures: list[str],
                dropped: list[dict[str, str]]) -> RoundCommit:
    from ..rounds import push_round

    problems = ds.select_columns([c for c in PROBLEM_COLUMNS if c in ds.column_names])
    pool = ds.select_columns([c for c in POOL_COLUMNS if c in ds.column_names])
    return push_round(problems, store, round=r, solutions=pool, dropped=_dropped_dataset(dropped),
                      stats=stats.to_dict(), config=config, figures=figures)


def _push_final(final: Dataset, store: str, stats: RoundStats, config: RecipeConfig, figures: list[str],
                dropped: list[dict[str, str]]) -> RoundCommit:
    from ..rounds import push_final

    return push_final(final, store, round=config.rounds, keep_source=config.keep_source,
                      dropped=_dropped_dataset(dropped), stats=stats.to_dict(), config=config, figures=figures)


# ---------------------------------------------------------------------------------------------- the run
def _adopt_references(current: Dataset, drops: dict[str, int], dropped: list[dict[str, str]],
                      config: RecipeConfig) -> tuple[Dataset, dict[str, int]]:
    """Round 0's problems with a reference each (a sample the seed's tests accept where it had none); the others
    recorded in ``dropped`` (stage ``references``) and counted in the drop reasons."""
    from .references import adopt_sample_references

    adopted = adopt_sample_references(current, num_proc=config.num_proc)
    left = dropped_records(adopted, stage="references", recorded=[d[schema.ID] for d in dropped])
    if not left:
        return adopted, drops
    dropped += left
    logger.info("%d problems without a reference left at round 0 (no sample passes their own tests)", len(left))
    return without_dropped(adopted), dict(Counter(drops) + Counter(d[schema.REASON] for d in left))


_DOMAINS_VERSION = "domains-1"
_REFERENCES_VERSION = "sample-references-1"  # round 0: a sample the seed's tests accept, or no_reference
_STDIN_VERSION = "stdin-references-2"  # 2: a reference in another language, accepted solutions in the pool


def _domains(live: Dataset, config: RecipeConfig) -> Dataset:
    from ..stages.domains import domains_dataset

    return domains_dataset(live, config.execute, num_proc=config.num_proc)


def run_recipe(config: RecipeConfig, *, progress: bool | None = None, library_bars: bool = False) -> RecipeResult:
    """Run the whole recipe: seeds, dedup, round 0, rounds 1..R, final filter, publishing.

    Each step prints one line on stderr when it starts and when it ends (:mod:`~evolvecoder_datasets.recipe.progress`);
    ``datasets``' own bars are off while the run lasts.

    Args:
        config (`RecipeConfig`): the run configuration.
        progress (`bool`, *optional*): print the step lines; by default where ``datasets``' progress bars are on
            (``datasets.disable_progress_bars()`` makes a run quiet).
        library_bars (`bool`, defaults to `False`): keep ``datasets``' bars as well.

    Returns:
        [`RecipeResult`]: the final dataset, every round's dataset and statistics, the dropped problems with their
        stage and reason, and what was pushed.

    Raises:
        ConfigError: the configuration is incomplete (e.g. no test-writer model name).
        MissingExtraError: a needed optional dependency is not installed.
        EmptyRunError: no problem survived refinement.
        LLMUnavailableError: before anything runs, a model's endpoint is unreachable, down or lacks its key
            (:func:`~evolvecoder_datasets.llm.preflight.preflight` of :meth:`RecipeConfig.endpoints`).
        LLMRequestError: the test writer or a pool model keeps failing (the answers received so far are cached).
        RoundStoreError: the round store cannot be written.

    Example:
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> from evolvecoder_datasets.recipe import RecipeConfig, run_recipe
        >>> from evolvecoder_datasets.stages.sample import ModelSpec
        >>> config = RecipeConfig(output_dir="runs/he10", sources=("humaneval",), limit_per_source=10, rounds=2,
        ...                       llm=LLMConfig(model="gpt-4o-mini"), mutants=8,
        ...                       models=(ModelSpec("qwen3-4b", LLMConfig(model="Qwen/Qwen3-4B",
        ...                                         base_url="http://127.0.0.1:8000/v1"), n=8),))
        >>> result = run_recipe(config)  # doctest: +SKIP
    """
    from ..distributed.executor import Executor
    from ..execution.sandbox import local_counts

    before = local_counts()
    # The one choice of where the run's heavy work runs: here, or on Ray. The steps that scale out get the executor.
    executor = Executor(config.on_ray(), num_proc=config.num_proc)
    # on Ray, every stage's sandbox jobs go to the execution services of the cluster's nodes
    with run_progress(progress, library_bars=library_bars), executor.serving() as router_counts:
        result = _run_recipe(config, executor)
    after = local_counts()
    result.execution = {
        "this_machine": {k: after[k] - before[k] for k in ("jobs", "tests")},
        "this_machine_measurements": {k: after["here"][k] - before["here"][k] for k in ("jobs", "tests")},
        "nodes": router_counts,
    }
    _write_json(Path(config.output_dir) / "execution.json", result.execution)
    return result


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def _run_recipe(config: RecipeConfig, executor: Executor) -> RecipeResult:
    from ..llm.preflight import preflight
    from ..stages.refine import refine_dataset

    # Contest problem packages skip the refine stage: its test writer is never asked (known from the sources alone).
    # Local files may hold stdin problems too: their refine writer is checked once they are read (quick, offline).
    packages, later = packages_only(config), local_only(config)
    endpoints = [(role, cfg) for role, cfg in config.endpoints() if not (packages and role.endswith("(refine)"))]
    # A fresh run checks every endpoint in seconds, before the embedding and the first paid request. A rerun may
    # need none of them (its stages are saved), so there each stage checks its own models just before it runs.
    fresh = not any(Path(config.output_dir, "stages").glob("*/checkpoint.json"))
    if fresh:
        preflight([(role, cfg) for role, cfg in endpoints if not (later and role.endswith("(refine)"))])

    def checked(roles: str, compute: Any) -> Any:
        def run_stage() -> Any:
            preflight([(role, cfg) for role, cfg in endpoints if role.startswith(roles)])
            return compute()
        return run_stage

    os.makedirs(config.output_dir, exist_ok=True)
    checkpoints = Checkpoints(config.output_dir)
    store = config.store_location()
    common = {"batch_size": config.batch_size, "num_proc": config.num_proc}

    seeds = load_seeds(config)
    stdin = stdin_only(seeds)
    if stdin:
        endpoints = [(role, cfg) for role, cfg in endpoints if not role.endswith("(refine)")]
    elif fresh and later:  # still before the embedding and the first paid request
        preflight([(role, cfg) for role, cfg in endpoints if role.endswith("(refine)")])
    key = chain(RECIPE_VERSION, config.seed, config.sources, config.problem_ids, config.limit_per_source,
                json.dumps({"id": list(seeds[schema.ID]), "q": list(seeds[schema.QUESTION])}))
    dedup_info = None
    if config.dedup:
        key = chain(key, "dedup", config.dedup_threshold, config.dedup_model)
        seeds = checkpoints.stage("00_dedup", key, lambda: dedup_seeds(seeds, config, executor))
        dedup_info = checkpoints.info("00_dedup")
    n_seeds = len(seeds)

    if stdin:  # contest problems are evolved as they are: no refine, no domain stage
        key = chain(key, "references", _STDIN_VERSION)
        refined = checkpoints.stage("01_references", key, lambda: confirm_references(seeds, config))
        drops = drop_reason_counts(refined[schema.DROP_REASON])
        dropped = dropped_records(seeds, stage="dedup") if config.dedup else []
        dropped += dropped_records(refined, stage="references", recorded=[d[schema.ID] for d in dropped])
        live = without_dropped(refined)
        if len(live) == 0:
            raise EmptyRunError(f"no stdin/stdout problem has an accepted solution that passes its own cases "
                                f"({len(refined)} seeds; drop reasons: {drops})")
        return _rounds(config, executor, checkpoints, key, live, drops, dropped, dedup_info, n_seeds, store, common,
                       checked, stdin=True)

    refine_cfg = config.refine_config()
    key = chain(key, "refine", config_digest(refine_cfg))
    refined = checkpoints.stage("01_refine", key,
                                checked("test writer (refine)", lambda: refine_dataset(seeds, refine_cfg, **common)),
                                refine_failures)
    key = chain(key, checkpoints.failures("01_refine"))
    drops = drop_reason_counts(refined[schema.DROP_REASON])
    # Each record names the stage whose output first carried the reason (refine keeps the dedup marks).
    dropped = dropped_records(seeds, stage="dedup") if config.dedup else []
    dropped += dropped_records(refined, stage="refine", recorded=[d[schema.ID] for d in dropped])
    live = without_dropped(refined)
    if len(live) == 0:
        reasons = ", ".join(f"{k} {v}" for k, v in drops.items()) or "none recorded"
        raise EmptyRunError(
            f"no problem survived refinement ({len(refined)} seeds; drop reasons: {reasons}). The test writer's answers "
            f"are cached under {config.with_cache(refine_cfg.require_llm()).cache_dir}; use a stronger model, or "
            "refine.fallback_to_seed to keep seeds whose refinement fails."
        )

    # each problem's precondition recorded, its own asserts outside it dropped, before anything runs on them
    key = chain(key, "domains", _DOMAINS_VERSION)
    live = checkpoints.stage("01b_domains", key, lambda: _domains(live, config))
    return _rounds(config, executor, checkpoints, key, live, drops, dropped, dedup_info, n_seeds, store, common,
                   checked)


def _rounds(config: RecipeConfig, executor: Executor, checkpoints: Checkpoints, key: str, live: Dataset,
            drops: dict[str, int], dropped: list[dict[str, str]], dedup_info: Any, n_seeds: int, store: Any,
            common: dict[str, Any], checked: Any, *, stdin: bool = False) -> RecipeResult:
    """From the live problems on: the pool (with a package's labelled submissions for stdin problems), round 0,
    the rounds, the final filter, publishing. Each round's measurements (reference verdicts, fidelity) run first,
    then its statistics count them."""
    from ..stages.finalize import finalize_dataset
    from ..stages.sample import sample_dataset

    sample_cfg = config.sample_config()
    key = chain(key, "sample", config_digest(sample_cfg))
    pooled = checkpoints.stage("02_sample", key,
                               checked("pool model", lambda: sample_dataset(live, sample_cfg, **common)))
    if stdin:  # the labelled programs: a package's submissions, a TACO row's accepted solutions
        pooled = add_submissions(pooled, accepted=live[schema.SOLUTIONS])
    key = chain(key, "execute", config_digest(config.execute))
    current = checkpoints.stage("03_execute", key, lambda: executor.execute(pooled, config.execute))
    if not stdin:  # a reference for the seeds without one, or they leave now, saying why (not at the end)
        current, drops = _adopt_references(current, drops, dropped, config)
        key = chain(key, _REFERENCES_VERSION)

    history = RunHistory()
    measures = RunMeasures(config, executor)
    rounds: list[Dataset] = []
    stats: list[RoundStats] = []
    commits: list[RoundCommit] = []
    for r in range(config.rounds + 1):
        if r > 0:
            evolve_cfg = config.evolve_config(r)
            key = chain(key, f"evolve{r}", config_digest(evolve_cfg))
            previous = current
            current = checkpoints.stage(f"{3 + r:02d}_round{r}", key,
                                        checked("test writer (evolve)", lambda previous=previous, cfg=evolve_cfg:
                                                executor.evolve(previous, cfg, **common)),
                                        evolve_failures(r))
            key = chain(key, checkpoints.failures(f"{3 + r:02d}_round{r}"))
        rounds.append(current)
        with stepping(f"round {r}: measurements (references on new tests, fidelity) and statistics"):
            measured = measures.round(current, r, known=history.reference_passes, key=key)
            stats.append(round_stats(current, r, config, history, measured, run_key=key, drop_reasons=drops,
                                     dedup=dedup_info))
        if store and not _already_pushed(store, r, key):
            with stepping(f"publishing round{r} (card, figures, data)"):
                figures = _figures(config, rounds, history, None, f"round{r}")
                commits.append(_push_round(current, store, r, stats[-1], config, figures, dropped))

    final_cfg = config.finalize_config()
    key = chain(key, "finalize", config_digest(final_cfg))
    finalized = checkpoints.stage("99_final", key, lambda: finalize_dataset(current, final_cfg,
                                                                            num_proc=config.num_proc))
    all_drops = dict(Counter(drops) + Counter(drop_reason_counts(finalized[schema.DROP_REASON])))
    dropped += dropped_records(finalized, stage="final")
    final = without_dropped(finalized)
    with stepping("main: statistics of the published suites"):
        measured = measures.final(current, final)
        stats.append(final_stats(current, final, config, history, measured, run_key=key, drop_reasons=all_drops,
                                 dedup=dedup_info))
    if store and not _already_pushed(store, "main", key):
        with stepping("publishing main (card, figures, data)"):
            figures = _figures(config, rounds, history, final, "final")
            commits.append(_push_final(final, store, stats[-1], config, figures, dropped))
    return RecipeResult(final=final, rounds=rounds, stats=[s.to_dict() for s in stats], commits=commits,
                        drop_reasons=all_drops, dropped=dropped, output_dir=config.output_dir, seeds=n_seeds)


def run(config: RecipeConfig, *, progress: bool | None = None, library_bars: bool = False) -> RecipeResult:
    """Alias of :func:`run_recipe`, the entry point ``evolvecoder-datasets run CONFIG.yaml`` calls.

    Args:
        config (`RecipeConfig`): the run configuration.

    Raises:
        ConfigError: the configuration is incomplete.

    Example:
        >>> from evolvecoder_datasets.cli import main
        >>> main(["run", "recipes/configs/demo_smollm2.yaml"])  # doctest: +SKIP
        0
    """
    return run_recipe(config, progress=progress, library_bars=library_bars)
