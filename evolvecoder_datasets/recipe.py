"""The EvolveCoder recipe as a library call: seeds -> dedup -> round 0 -> rounds 1..R -> final filter -> store.

Round 0 refines the seeds (:mod:`~evolvecoder_datasets.stages.refine`), samples the solution pool once
(:mod:`~evolvecoder_datasets.stages.sample`, optionally with AST mutants as an extra "model") and executes it
(:mod:`~evolvecoder_datasets.stages.execute`). Each round r = 1..R evolves the tests from the start-of-round matrix
(:mod:`~evolvecoder_datasets.stages.evolve`); the final filter (:mod:`~evolvecoder_datasets.stages.finalize`) prunes
them. Each round is published to a revision store (``round{r}`` branches of a Hub repository or a local git-backed
folder, with statistics, figures and a card) and the result goes to ``main``.

Every stage's output is saved under ``<output_dir>/stages/`` with the key of everything that produced it (the
stage configuration chained with its input's key), and every LLM answer is kept in ``<output_dir>/llm``: an
interrupted run started again with the same configuration reloads the finished stages and sends only the requests
that never got an answer. Every random choice derives from ``seed`` (per problem and round) and is recorded in the
round statistics.

The CLI runs it as ``evolvecoder-datasets run CONFIG.yaml`` (the YAML maps onto :class:`RecipeConfig`, nested
dataclasses included); ``recipes/evolvecoder.py`` is a thin script over :func:`run_recipe`.

Example:
    >>> from evolvecoder_datasets.recipe import RecipeConfig, run_recipe, demo_config
    >>> result = run_recipe(demo_config("runs/demo"))  # doctest: +SKIP
    >>> print(result)  # doctest: +SKIP
    EvolveCoder run in runs/demo: 6 seeds -> 5 problems after round 0 -> 4 final problems (1 round)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import shutil
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import schema
from ._deps import require
from .errors import ConfigError, EmptyRunError, MissingExtraError, RevisionNotFoundError
from .llm.config import LLMConfig
from .stages._common import config_digest, drop_reason_counts, get_sandbox, without_dropped
from .stages.evolve import EVOLVE_LOG, EvolveConfig
from .stages.execute import ExecuteConfig
from .stages.finalize import FinalizeConfig
from .stages.refine import RefineConfig
from .stages.sample import MUTANT_MODEL, ModelSpec, SampleConfig

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

    from .rounds import RoundCommit

__all__ = ["SOURCES", "RecipeConfig", "RecipeResult", "demo_config", "load_seeds", "run", "run_recipe"]

logger = logging.getLogger(__name__)

#: Seed sources known by name (anything else in ``RecipeConfig.sources`` is a local dataset path).
SOURCES = ("humaneval", "leetcode")
RECIPE_VERSION = "evolvecoder-recipe-1"
PROBLEM_COLUMNS = (schema.ID, schema.SOURCE, schema.QUESTION, schema.TESTS, schema.TEST_ORIGIN, schema.ROUND,
                   schema.DROP_REASON)
POOL_COLUMNS = (schema.ID, schema.SOLUTIONS, schema.PASS_MATRIX, schema.STATUSES)


@dataclass(frozen=True)
class RecipeConfig:
    """Everything a run of the recipe depends on; the YAML files in ``recipes/configs/`` map onto it.

    Args:
        output_dir (`str`, defaults to ``"runs/evolvecoder"``): run folder: stage checkpoints, the LLM request cache,
            figures, and the default round store.
        store (`str`, *optional*): where rounds are published: a Hub dataset repository (``"org/name"``) or a
            folder. Defaults to ``<output_dir>/store``; an empty string disables publishing.
        sources (`tuple[str, ...]`, defaults to ``("humaneval",)``): seed sources: ``"humaneval"``, ``"leetcode"``, or
            a path to a ``save_to_disk`` folder, a ``.jsonl``/``.json`` or a ``.parquet`` file in the seed schema.
        limit_per_source (`int`, *optional*): keep the first N seeds of each source (after ``problem_ids``).
        problem_ids (`tuple[str, ...]`, *optional*): keep only these seed ids.
        dedup (`bool`, defaults to `True`): drop near-duplicate seeds first (embedding cosine, one kept per group).
        dedup_threshold (`float`, defaults to 0.9): cosine similarity at or above which seeds are duplicates.
        dedup_model (`str`, *optional*): embedding model; default the offline all-MiniLM-L6-v2.
        rounds (`int`, defaults to 3): evolution rounds after round 0.
        seed (`int`, defaults to 0): seed of every random choice (dedup, selections, mutants, final filter).
        llm (`LLMConfig`): the test writer (refine and evolve prompts). Its ``cache_dir`` defaults to
            ``<output_dir>/llm``.
        models (`tuple[ModelSpec, ...]`): the solution pool's models (sampled once, at round 0).
        mutants (`int`, defaults to 0): AST mutants of the reference per problem added to the pool (model
            ``"mutant"``); they also give the mutation score of every round.
        refine (`RefineConfig`): refine settings (its ``llm`` defaults to ``llm``).
        evolve (`EvolveConfig`): round settings (``llm`` and ``round`` are filled in per round).
        finalize (`FinalizeConfig`): final filter settings.
        execute (`ExecuteConfig`): sandbox settings of every stage.
        figures (`bool`, defaults to `True`): draw the round figures (extra ``viz``).
        batch_size (`int`, defaults to 16): problems per ``Dataset.map`` batch (requests sent together).
        num_proc (`int`, *optional*): processes for the stages.

    Raises:
        ConfigError: an unknown named source, ``rounds < 0``, or no model and no mutants.

    Example:
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> cfg = RecipeConfig(output_dir="runs/x", llm=LLMConfig(model="gpt-4o-mini"), mutants=8, rounds=2)
        >>> cfg.store_location().endswith("runs/x/store")
        True
    """

    output_dir: str = "runs/evolvecoder"
    store: str | None = None
    sources: tuple[str, ...] = ("humaneval",)
    limit_per_source: int | None = None
    problem_ids: tuple[str, ...] = ()
    dedup: bool = True
    dedup_threshold: float = 0.9
    dedup_model: str | None = None
    rounds: int = 3
    seed: int = 0
    llm: LLMConfig = field(default_factory=LLMConfig)
    models: tuple[ModelSpec, ...] = ()
    mutants: int = 0
    refine: RefineConfig = field(default_factory=RefineConfig)
    evolve: EvolveConfig = field(default_factory=EvolveConfig)
    finalize: FinalizeConfig = field(default_factory=FinalizeConfig)
    execute: ExecuteConfig = field(default_factory=ExecuteConfig)
    figures: bool = True
    batch_size: int = 16
    num_proc: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "output_dir", os.fspath(self.output_dir))
        for name in ("sources", "problem_ids", "models"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if not self.sources:
            raise ConfigError("RecipeConfig.sources is empty")
        for source in self.sources:
            if source.lower() not in SOURCES and not any(source.endswith(s) for s in (".jsonl", ".json", ".parquet")) \
                    and os.sep not in source and not source.startswith("."):
                raise ConfigError(f"unknown seed source {source!r}: use {SOURCES} or a path to a local dataset")
        if isinstance(self.rounds, bool) or self.rounds < 0:
            raise ConfigError(f"rounds must be >= 0, got {self.rounds}")
        if not self.models and not self.mutants:
            raise ConfigError("RecipeConfig needs at least one model in `models` (or mutants > 0)")
        if self.limit_per_source is not None and self.limit_per_source < 1:
            raise ConfigError("limit_per_source must be >= 1 when set")

    def store_location(self) -> str | None:
        """Where rounds are published (``None`` when publishing is disabled)."""
        if self.store == "":
            return None
        # Absolute: a relative default ("demo-output/store") that does not exist yet must not pass for a Hub id.
        return self.store or os.path.abspath(os.path.join(self.output_dir, "store"))

    def with_cache(self, llm: LLMConfig) -> LLMConfig:
        """``llm`` with the run's request cache unless it names its own."""
        return llm if llm.cache_dir else llm.replace(cache_dir=os.path.join(self.output_dir, "llm"))

    def refine_config(self) -> RefineConfig:
        """The refine stage's configuration, with the run's test writer, sandbox and seed filled in."""
        return self.refine.replace(llm=self.with_cache(self.refine.llm or self.llm), execute=self.execute,
                                   seed=self.seed)

    def sample_config(self) -> SampleConfig:
        """The sample stage's configuration (every model's cache in the run folder)."""
        models = tuple(dataclasses.replace(m, llm=self.with_cache(m.llm)) for m in self.models)
        return SampleConfig(models=models, mutants=self.mutants, seed=self.seed)

    def evolve_config(self, round: int) -> EvolveConfig:
        """Round ``round``'s configuration, with the run's test writer, sandbox and seed filled in."""
        return self.evolve.replace(llm=self.with_cache(self.evolve.llm or self.llm), round=round,
                                   execute=self.execute, seed=self.seed)

    def finalize_config(self) -> FinalizeConfig:
        """The final filter's configuration with the run's seed."""
        return self.finalize.replace(seed=self.seed)


@dataclass
class RecipeResult:
    """What a run produced.

    Attributes:
        final (`datasets.Dataset`): the published problems (after the final filter).
        rounds (`list[datasets.Dataset]`): problems with pool and pass matrix after round 0, 1, ..., R.
        stats (`list[dict]`): each round's statistics (as committed to the store), then the final one.
        commits (`list[RoundCommit]`): what was pushed (empty when publishing is disabled or nothing changed).
        drop_reasons (`dict[str, int]`): every removed problem, by reason (seeds included).
        output_dir (`str`): the run folder.
    """

    final: Dataset
    rounds: list[Dataset]
    stats: list[dict[str, Any]]
    commits: list[Any] = field(default_factory=list)
    drop_reasons: dict[str, int] = field(default_factory=dict)
    output_dir: str = ""
    seeds: int = 0

    def pass_at_1(self) -> list[float]:
        """Mean pass@1 of the LLM samples, per round (0..R)."""
        return [float(s["pass_at_k"][str(s["round"])]["1"]) for s in self.stats[:-1]]

    def mutation_scores(self) -> list[float | None]:
        """Pooled mutation score per round (None without mutants)."""
        return [s.get("mutation_score", {}).get(str(s["round"])) for s in self.stats[:-1]]

    def __str__(self) -> str:
        lines = [
            (f"EvolveCoder run in {self.output_dir}: {self.seeds} seeds -> {len(self.rounds[0])} problems after "
             f"round 0 -> {len(self.final)} final problems ({len(self.rounds) - 1} rounds)"),
            "pass@1 by round: " + ", ".join(f"{p:.3f}" for p in self.pass_at_1()),
        ]
        scores = [s for s in self.mutation_scores() if s is not None]
        if scores:
            lines.append("mutation score by round: " + ", ".join(f"{s:.3f}" for s in scores))
        if self.drop_reasons:
            lines.append("dropped: " + ", ".join(f"{k} {v}" for k, v in self.drop_reasons.items()))
        for commit in self.commits:
            lines.append(f"pushed {commit.revision} of {commit.repo_id} at {commit.commit[:10]}")
        return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- checkpoints
class _Checkpoints:
    """Stage outputs saved under ``<output_dir>/stages/<name>`` with the key that produced them."""

    def __init__(self, root: str) -> None:
        self.root = Path(root) / "stages"
        self.root.mkdir(parents=True, exist_ok=True)

    def stage(self, name: str, key: str, compute: Callable[[], Dataset],
              failed: Callable[[Dataset], list[str]] | None = None) -> Dataset:
        """The stage's saved output when its key matches and no request of it failed, else ``compute()`` saved.

        ``failed`` lists the problems whose request failed and was recorded (``on_llm_error="record"``): such a
        stage is computed again by the next run, which replays the answered requests from the request cache and
        sends only the failed ones, so a passing outage does not freeze the drops into the checkpoint.
        """
        from datasets import load_from_disk

        folder = self.root / name
        meta = folder / "checkpoint.json"
        if meta.is_file():
            saved = json.loads(meta.read_text())
            if saved.get("key") == key and not saved.get("failed"):
                logger.info("stage %s: reusing %s", name, folder)
                return load_from_disk(str(folder))
            if saved.get("key") == key:
                logger.info("stage %s: asking again for %d failed request(s)", name, len(saved["failed"]))
        ds = compute()
        partial = self.root / f".{name}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        ds.save_to_disk(str(partial))
        record = {"key": key, "stage": name, "rows": len(ds), "failed": failed(ds) if failed else []}
        (partial / "checkpoint.json").write_text(json.dumps(record))
        shutil.rmtree(folder, ignore_errors=True)
        partial.rename(folder)
        return load_from_disk(str(folder))

    def failures(self, name: str) -> list[str]:
        """The failed requests a stage checkpoint recorded (part of the next stage's key: when they are asked
        again and answered, every later stage is computed again)."""
        meta = self.root / name / "checkpoint.json"
        return json.loads(meta.read_text()).get("failed", []) if meta.is_file() else []


def _refine_failures(ds: Dataset) -> list[str]:
    return sorted(str(i) for i, d in zip(ds[schema.ID], ds[schema.DROP_REASON]) if d == "refine_llm_error")


def _evolve_failures(round: int) -> Callable[[Dataset], list[str]]:
    def failed(ds: Dataset) -> list[str]:
        return sorted(str(i) for i, log in zip(ds[schema.ID], ds[EVOLVE_LOG])
                      if any(e["round"] == round and (e["error"] or "").startswith("llm:") for e in log or ()))
    return failed


def _chain(*parts: Any) -> str:
    return hashlib.sha256(json.dumps([str(p) for p in parts]).encode()).hexdigest()[:20]


# ---------------------------------------------------------------------------------------------- seeds
def _load_source(name: str) -> Dataset:
    from datasets import Dataset, load_from_disk

    key = name.lower()
    if key == "humaneval":
        from .sources import load_humaneval

        return load_humaneval()
    if key == "leetcode":
        from .sources import load_leetcode

        return load_leetcode()
    if name.endswith((".jsonl", ".json")):
        return Dataset.from_json(name)
    if name.endswith(".parquet"):
        return Dataset.from_parquet(name)
    if os.path.isdir(name):
        return load_from_disk(name)
    raise ConfigError(f"seed source {name!r} is neither a known source {SOURCES} nor an existing dataset path")


def load_seeds(config: RecipeConfig) -> Dataset:
    """The seed rows ``config`` asks for: each source loaded, filtered by ``problem_ids``, cut to the limit, merged.

    Args:
        config (`RecipeConfig`): the run configuration.

    Raises:
        ConfigError: an unknown source, or no seed left.
        MissingExtraError: a package-backed source is not installed (extra ``data``).

    Example:
        >>> seeds = load_seeds(RecipeConfig(llm=LLMConfig(model="m"), mutants=4, limit_per_source=3))  # doctest: +SKIP
        >>> seeds["id"]  # doctest: +SKIP
        ['HumanEval_0', 'HumanEval_1', 'HumanEval_2']
    """
    from .sources import merge_sources

    parts = []
    wanted = set(config.problem_ids)
    for name in config.sources:
        ds = _load_source(name)
        if wanted:
            ds = ds.select([i for i, pid in enumerate(list(ds[schema.ID])) if pid in wanted])
        if config.limit_per_source is not None:
            ds = ds.select(range(min(config.limit_per_source, len(ds))))
        parts.append(ds)
    seeds = merge_sources(*parts)
    if not len(seeds):
        raise ConfigError("no seed problem left after problem_ids and limit_per_source")
    return seeds


def _dedup(seeds: Dataset, config: RecipeConfig) -> tuple[Dataset, dict[str, Any]]:
    from .stages.dedup import find_near_duplicates

    result = find_near_duplicates(seeds, threshold=config.dedup_threshold, model=config.dedup_model, seed=config.seed)
    summary = result.summary()
    marked = result.apply(seeds)
    reasons = ["near_duplicate" if dup else None for dup in marked["dup_of"]]
    marked = marked.remove_columns(["dup_of", "dup_score"]).add_column(schema.DROP_REASON, reasons)
    info = {"model": summary.get("model"), "threshold": config.dedup_threshold, "input": summary["rows"],
            "kept": summary["kept"], "groups": summary["pairs"]}
    return marked, info


# ---------------------------------------------------------------------------------------------- statistics
def _llm_rows(solutions: Sequence[dict]) -> list[int]:
    return [i for i, s in enumerate(solutions) if s["model"] != MUTANT_MODEL]


def _llm_matrices(ds: Dataset) -> list[np.ndarray]:
    from .passmatrix import as_pass_matrix

    out = []
    for sols, matrix, tests in zip(ds[schema.SOLUTIONS], ds[schema.PASS_MATRIX], ds[schema.TESTS]):
        M = as_pass_matrix(matrix) if tests else np.zeros((len(sols), 0), dtype=bool)
        out.append(M[_llm_rows(sols)])
    return out


def _mutation(ds: Dataset, config: RecipeConfig) -> list[dict[str, int]]:
    """Per problem with mutants: mutants killed by a test the reference passes, out of all mutants."""
    from .passmatrix import as_pass_matrix

    rows = [i for i, sols in enumerate(ds[schema.SOLUTIONS]) if any(s["model"] == MUTANT_MODEL for s in sols)]
    if not rows:
        return []
    refs = [ds[i]["reference_solutions"][0] for i in rows]
    tests = [ds[i][schema.TESTS] for i in rows]
    reports = get_sandbox(config.execute).run_many(list(zip(refs, tests)))
    scores = []
    for i, report in zip(rows, reports):
        sols = ds[i][schema.SOLUTIONS]
        M = as_pass_matrix(ds[i][schema.PASS_MATRIX])
        mutant_rows = [k for k, s in enumerate(sols) if s["model"] == MUTANT_MODEL]
        trusted = np.asarray(report.passed, dtype=bool)
        killed = (~M[np.ix_(mutant_rows, np.flatnonzero(trusted))]).any(axis=1)
        scores.append({"killed": int(killed.sum()), "considered": len(mutant_rows)})
    return scores


def _by_source(ds: Dataset) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for source, tests in zip(ds[schema.SOURCE], ds[schema.TESTS]):
        slot = out.setdefault(source, {"problems": 0, "tests": 0})
        slot["problems"] += 1
        slot["tests"] += len(tests)
    return out


def _methods(ds: Dataset, retained_from: Dataset | None = None) -> dict[str, dict[str, int]]:
    """Tests per method: generated (proposed by the model, before any check) and retained (in the dataset)."""
    retained = Counter(o["method"] for origins in (retained_from or ds)[schema.TEST_ORIGIN] for o in origins)
    generated: Counter = Counter()
    for row in ds.select_columns([c for c in (schema.TEST_ORIGIN, "refine_dropped_tests", "reference_failed_tests",
                                              EVOLVE_LOG) if c in ds.column_names]):
        methods = Counter(o["method"] for o in row[schema.TEST_ORIGIN])
        generated["seed"] += methods.get("seed", 0)
        generated["refine"] += methods.get("refine", 0) + int(row.get("refine_dropped_tests") or 0) + \
            max(int(row.get("reference_failed_tests") or 0), 0)
        for entry in row.get(EVOLVE_LOG) or ():
            if entry["method"] in ("adversarial", "discriminative"):
                generated[entry["method"]] += int(entry["parsed"])
    return {m: {"generated": int(generated[m]), "retained": int(retained.get(m, 0))}
            for m in sorted(set(generated) | set(retained)) if generated[m] or retained.get(m)}


def _provenance(config: RecipeConfig, run_key: str) -> dict[str, Any]:
    from . import prompts
    from .stages.sample import SOLVE_VERSION

    return {
        "recipe": RECIPE_VERSION,
        "run_key": run_key,
        "test_writer": config.llm.model or config.llm.backend,
        "models": {m.name: {"model": m.llm.model or m.llm.backend, "n": m.n, "temperature": m.temperature,
                            "top_p": m.top_p} for m in config.models},
        "mutants_per_problem": config.mutants,
        "prompt_versions": {**prompts.VERSIONS, "solve": SOLVE_VERSION},
        "thresholds": {"hide_below": config.evolve.hide_below, "band": list(config.evolve.band),
                       "final_min_pass_rate": config.finalize.min_pass_rate,
                       "final_max_per_group": config.finalize.max_per_group,
                       "final_min_tests": config.finalize.min_tests, "final_max_perfect": config.finalize.max_perfect,
                       "dedup_threshold": config.dedup_threshold if config.dedup else None},
        "seeds": {"seed": config.seed},
        "execution": {"mode": config.execute.mode, "timeout_s": config.execute.timeout_s},
    }


def _ks(config: RecipeConfig) -> tuple[int, ...]:
    per_model = min((m.n for m in config.models), default=1)
    return tuple(k for k in (1, 4, 8) if k == 1 or k <= per_model)


def _round_stats(ds: Dataset, r: int, config: RecipeConfig, history: dict[str, Any], run_key: str,
                 drops: dict[str, int], dedup_info: dict[str, Any] | None) -> dict[str, Any]:
    from .metrics import pass_at_k, per_model_table, solution_counts

    n, c = solution_counts(_llm_matrices(ds))
    history["pass_at_k"][str(r)] = {str(k): float(np.mean(pass_at_k(n, c, k))) if len(n) else float("nan")
                                    for k in _ks(config)}
    by_model = per_model_table([[s for s in sols if s["model"] != MUTANT_MODEL] for sols in ds[schema.SOLUTIONS]],
                               _llm_matrices(ds), ks=_ks(config)) if config.models else []
    mutation = _mutation(ds, config) if config.mutants else []
    if mutation:
        considered = sum(m["considered"] for m in mutation)
        history["mutation_score"][str(r)] = sum(m["killed"] for m in mutation) / considered if considered else None
        history["mutation_rows"][r] = mutation
    stats: dict[str, Any] = {
        "round": r,
        "num_problems": len(ds),
        "num_tests": int(sum(len(t) for t in ds[schema.TESTS])),
        "problems_by_source": _by_source(ds),
        "tests_by_method": _methods(ds),
        "pass_at_k": json.loads(json.dumps(history["pass_at_k"])),
        "pass_at_k_by_model": {row["model"]: {k.split("@")[1]: row[k] for k in row if k.startswith("pass@")}
                               for row in by_model},
        "drop_reasons": dict(drops),
        "provenance": _provenance(config, run_key),
    }
    if history["mutation_score"]:
        stats["mutation_score"] = dict(history["mutation_score"])
    if dedup_info:
        stats["dedup"] = dedup_info
    return stats


def _figures(config: RecipeConfig, rounds: list[Dataset], history: dict[str, Any], final: Dataset | None,
             tag: str) -> list[str]:
    if not config.figures:
        return []
    from .metrics import difficulty_table, method_table, mutation_table, per_model_table, save_figures

    last = rounds[-1]
    folder = Path(config.output_dir) / "figures" / tag
    try:
        require("matplotlib", extra="viz", feature="round figures")
    except MissingExtraError as err:
        logger.warning("no figures in the cards: %s", err)
        return []
    drawn = save_figures(
        folder,
        difficulty=difficulty_table({r: _llm_matrices(ds) for r, ds in enumerate(rounds)}, ks=_ks(config)),
        methods=method_table(last[schema.TEST_ORIGIN], (final or last)[schema.TEST_ORIGIN]),
        per_model=per_model_table([[s for s in sols if s["model"] != MUTANT_MODEL] for sols in last[schema.SOLUTIONS]],
                                  _llm_matrices(last), ks=_ks(config)) if config.models else None,
        mutation=mutation_table(history["mutation_rows"]) if history["mutation_rows"] else None,
    )
    return [str(path) for path in drawn.values()]


# ---------------------------------------------------------------------------------------------- the run
def _already_pushed(store: str, revision: int | str, run_key: str) -> bool:
    from .rounds import load_round_stats

    try:
        stats = load_round_stats(store, revision)
    except (RevisionNotFoundError, OSError):
        return False
    return (stats.get("provenance") or {}).get("run_key") == run_key


def run_recipe(config: RecipeConfig) -> RecipeResult:
    """Run the whole recipe: seeds, dedup, round 0, rounds 1..R, final filter, publishing.

    Args:
        config (`RecipeConfig`): the run configuration.

    Returns:
        [`RecipeResult`]: the final dataset, every round's dataset and statistics, and what was pushed.

    Raises:
        ConfigError: the configuration is incomplete (e.g. no test-writer model name).
        MissingExtraError: a needed optional dependency is not installed.
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
    from .stages.evolve import evolve_dataset
    from .stages.execute import execute_dataset
    from .stages.finalize import finalize_dataset
    from .stages.refine import refine_dataset
    from .stages.sample import sample_dataset

    os.makedirs(config.output_dir, exist_ok=True)
    checkpoints = _Checkpoints(config.output_dir)
    store = config.store_location()
    common = {"batch_size": config.batch_size, "num_proc": config.num_proc}

    seeds = load_seeds(config)
    key = _chain(RECIPE_VERSION, config.seed, config.sources, config.problem_ids, config.limit_per_source,
                 json.dumps({"id": list(seeds[schema.ID]), "q": list(seeds[schema.QUESTION])}))
    dedup_info = None
    if config.dedup:
        key = _chain(key, "dedup", config.dedup_threshold, config.dedup_model)
        seeds = checkpoints.stage("00_dedup", key, lambda: _dedup(seeds, config)[0])
        dedup_info = {"model": config.dedup_model or "all-MiniLM-L6-v2", "threshold": config.dedup_threshold,
                      "input": len(seeds), "kept": sum(1 for d in seeds[schema.DROP_REASON] if not d)}
    n_seeds = len(seeds)

    refine_cfg = config.refine_config()
    key = _chain(key, "refine", config_digest(refine_cfg))
    refined = checkpoints.stage("01_refine", key, lambda: refine_dataset(seeds, refine_cfg, **common),
                                _refine_failures)
    key = _chain(key, checkpoints.failures("01_refine"))
    drops = drop_reason_counts(refined[schema.DROP_REASON])
    live = without_dropped(refined)
    if len(live) == 0:
        reasons = ", ".join(f"{k} {v}" for k, v in drops.items()) or "none recorded"
        raise EmptyRunError(
            f"no problem survived refinement ({len(refined)} seeds; drop reasons: {reasons}). The test writer's answers "
            f"are cached under {config.with_cache(refine_cfg.require_llm()).cache_dir}; use a stronger model, or "
            "refine.fallback_to_seed to keep seeds whose refinement fails."
        )

    sample_cfg = config.sample_config()
    key = _chain(key, "sample", config_digest(sample_cfg))
    pooled = checkpoints.stage("02_sample", key, lambda: sample_dataset(live, sample_cfg, **common))
    key = _chain(key, "execute", config_digest(config.execute))
    current = checkpoints.stage("03_execute", key,
                                lambda: execute_dataset(pooled, config.execute, num_proc=config.num_proc))

    history: dict[str, Any] = {"pass_at_k": {}, "mutation_score": {}, "mutation_rows": {}}
    rounds: list[Dataset] = []
    stats: list[dict[str, Any]] = []
    commits: list[RoundCommit] = []
    for r in range(config.rounds + 1):
        if r > 0:
            evolve_cfg = config.evolve_config(r)
            key = _chain(key, f"evolve{r}", config_digest(evolve_cfg))
            previous = current
            current = checkpoints.stage(f"{3 + r:02d}_round{r}", key,
                                        lambda previous=previous, cfg=evolve_cfg: evolve_dataset(previous, cfg, **common),
                                        _evolve_failures(r))
            key = _chain(key, checkpoints.failures(f"{3 + r:02d}_round{r}"))
        rounds.append(current)
        round_stats = _round_stats(current, r, config, history, key, drops, dedup_info)
        figures = _figures(config, rounds, history, None, f"round{r}")
        round_stats["figure_captions"] = _captions()
        stats.append(round_stats)
        if store and not _already_pushed(store, r, key):
            commits.append(_push_round(current, store, r, round_stats, config, figures))

    final_cfg = config.finalize_config()
    key = _chain(key, "finalize", config_digest(final_cfg))
    finalized = checkpoints.stage("99_final", key, lambda: finalize_dataset(current, final_cfg,
                                                                            num_proc=config.num_proc))
    final_drops = drop_reason_counts(finalized[schema.DROP_REASON])
    all_drops = dict(Counter(drops) + Counter(final_drops))
    final = without_dropped(finalized)
    final_stats = {
        "round": config.rounds,
        "num_problems": len(final),
        "num_tests": int(sum(len(t) for t in final[schema.TESTS])),
        "problems_by_source": _by_source(final),
        "tests_by_method": _methods(current, final),
        "pass_at_k": json.loads(json.dumps(history["pass_at_k"])),
        "drop_reasons": all_drops,
        "provenance": _provenance(config, key),
        "figure_captions": _captions(),
        "changes": [f"final filter: {len(current)} -> {len(final)} problems"],
    }
    if history["mutation_score"]:
        final_stats["mutation_score"] = dict(history["mutation_score"])
    if dedup_info:
        final_stats["dedup"] = dedup_info
    stats.append(final_stats)
    if store and not _already_pushed(store, "main", key):
        from .rounds import push_final

        figures = _figures(config, rounds, history, final, "final")
        commits.append(push_final(final.select_columns([c for c in PROBLEM_COLUMNS if c in final.column_names]),
                                  store, round=config.rounds, keep_source=True, stats=final_stats,
                                  config=config, figures=figures))
    return RecipeResult(final=final, rounds=rounds, stats=stats, commits=commits, drop_reasons=all_drops,
                        output_dir=config.output_dir, seeds=n_seeds)


def _captions() -> dict[str, str]:
    return {
        "difficulty.png": "Mean pass@k of the sampled solutions per round: it falls as the tests harden.",
        "methods.png": "Tests generated and retained per round and method.",
        "per_model.png": "pass@k per model of the solution pool in the latest round.",
        "mutation_score.png": "Share of reference mutants killed by the tests, per round.",
    }


def _push_round(ds: Dataset, store: str, r: int, stats: dict[str, Any], config: RecipeConfig,
                figures: list[str]) -> RoundCommit:
    from .rounds import push_round

    problems = ds.select_columns([c for c in PROBLEM_COLUMNS if c in ds.column_names])
    pool = ds.select_columns([c for c in POOL_COLUMNS if c in ds.column_names])
    return push_round(problems, store, round=r, solutions=pool, stats=stats, config=config, figures=figures)


def run(config: RecipeConfig) -> RecipeResult:
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
    return run_recipe(config)


def demo_config(output_dir: str = "runs/demo", *, rounds: int = 1) -> RecipeConfig:
    """The embedded demo: SmolLM2-135M (local, CPU) writes the tests and samples solutions for a handful of
    HumanEval and LeetCode seeds, with AST mutants in the pool, published to a local store with cards.

    SmolLM2-135M is tiny: expect most of its tests and programs to be wrong. The point is the whole pipeline
    running offline in minutes; swap ``llm`` and ``models`` for real ones (see ``recipes/configs/``).

    Args:
        output_dir (`str`, defaults to ``"runs/demo"``): the run folder.
        rounds (`int`, defaults to 1): evolution rounds.

    Example:
        >>> demo_config("runs/demo").models[0].name
        'smollm2'
    """
    smol = LLMConfig(backend="transformers", model="smollm2", batch_size=8)
    return RecipeConfig(
        output_dir=output_dir,
        sources=("humaneval", "leetcode"),
        problem_ids=("HumanEval_0", "HumanEval_13", "HumanEval_55", "LeetCode_1", "LeetCode_9"),
        dedup=True,
        rounds=rounds,
        llm=smol,
        models=(ModelSpec("smollm2", smol, n=4, temperature=0.8, max_tokens=256),),
        mutants=8,
        refine=RefineConfig(num_tests=8, min_tests=1, max_tokens=512, fallback_to_seed=True),
        evolve=EvolveConfig(num_tests=5, max_tokens=384),
        finalize=FinalizeConfig(min_tests=1, max_perfect=3),
        execute=ExecuteConfig(mode="fast", timeout_s=1.0),
    )
