"""The recipe's seed rows: named sources or local datasets, filtered, cut and merged; then near-duplicates marked.

Example:
    >>> from evolvecoder_datasets.llm import LLMConfig
    >>> from evolvecoder_datasets.recipe import RecipeConfig
    >>> from evolvecoder_datasets.recipe.seeds import load_seeds
    >>> load_seeds(RecipeConfig(llm=LLMConfig(model="m"), mutants=4, limit_per_source=2))["id"]  # doctest: +SKIP
    ['HumanEval_0', 'HumanEval_1']
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from .. import schema
from ..errors import ConfigError
from .config import SOURCES, RecipeConfig

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

    from ..distributed.executor import Executor

__all__ = ["check_sources", "dedup_seeds", "load_seeds", "local_only", "packages_only"]


def _is_packages_folder(name: str) -> bool:
    return os.path.isdir(name) and not any(os.path.exists(os.path.join(name, f))
                                           for f in ("dataset_info.json", "state.json"))


def packages_only(config: RecipeConfig) -> bool:
    """Whether every source of ``config`` is a folder of contest problem packages (so the run's seeds are stdin
    problems and the refine stage's model is never asked), known before anything is loaded. (Local files may hold
    stdin problems too: :func:`local_only` says when that is known only once they are loaded.)

    Example:
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> from evolvecoder_datasets.recipe import RecipeConfig
        >>> packages_only(RecipeConfig(llm=LLMConfig(model="m"), mutants=4, sources=("humaneval",)))
        False
    """
    return bool(config.sources) and all(_is_packages_folder(name) for name in config.sources)


def local_only(config: RecipeConfig) -> bool:
    """Whether every source of ``config`` is local (a packages folder, a saved dataset or a JSON/JSONL/Parquet
    file): loading them is quick and offline, so whether the refine stage's model is needed can wait until the
    seeds are read.

    Example:
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> from evolvecoder_datasets.recipe import RecipeConfig
        >>> local_only(RecipeConfig(llm=LLMConfig(model="m"), mutants=4, sources=("rows.jsonl",)))
        True
    """
    return bool(config.sources) and all(name.lower() not in SOURCES for name in config.sources)


def check_sources(config: RecipeConfig) -> None:
    """Check, without loading them, that the local sources of ``config`` can be read: each path exists, and a JSON
    Lines or Parquet file's columns fit a known layout (:func:`~evolvecoder_datasets.sources.layouts.layout_of`;
    a JSON Lines file is judged by its first row). What ``run --check`` adds to the configuration's own checks.

    Raises:
        ConfigError: a source path is missing, or a file's columns fit no known layout (naming the file).

    Example:
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> from evolvecoder_datasets.recipe import RecipeConfig
        >>> check_sources(RecipeConfig(llm=LLMConfig(model="m"), mutants=4, sources=("missing.jsonl",)))
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.errors.ConfigError: seed source 'missing.jsonl' does not exist ...
    """
    import json

    from ..errors import SchemaError
    from ..sources.layouts import layout_of

    for name in config.sources:
        if name.lower() in SOURCES:
            continue
        if not os.path.exists(name):
            raise ConfigError(f"seed source {name!r} does not exist (a relative path is read from {os.getcwd()})")
        columns = None
        if name.endswith(".parquet"):
            import pyarrow.parquet as pq

            columns = pq.read_schema(name).names
        elif name.endswith((".jsonl", ".json")):
            with open(name, encoding="utf-8", errors="replace") as handle:
                first = next((line for line in handle if line.strip()), "")
            try:
                row = json.loads(first)
            except ValueError:
                row = None  # a JSON array or an empty file: the loader will say
            columns = list(row) if isinstance(row, dict) else None
        if columns is not None:
            try:
                layout_of(columns)
            except SchemaError as err:
                raise ConfigError(f"seed source {name!r}: {err}") from err


def _load_source(name: str) -> Dataset:
    from datasets import Dataset, load_from_disk

    key = name.lower()
    if key == "humaneval":
        from ..sources import load_humaneval

        return load_humaneval()
    if key == "leetcode":
        from ..sources import load_leetcode

        return load_leetcode()
    if name.endswith((".jsonl", ".json", ".parquet")):
        from ..sources import adapt_layout

        # a local file in any known layout (TACO, APPS, CodeContests, Codeforces, ...) or already seed rows
        return adapt_layout(Dataset.from_parquet(name) if name.endswith(".parquet") else Dataset.from_json(name))
    if os.path.isdir(name):
        if _is_packages_folder(name):
            from ..sources.problem_package import load_problem_packages

            return load_problem_packages(name)  # a folder of contest problem packages (or one package)
        return load_from_disk(name)
    raise ConfigError(f"seed source {name!r} is neither a known source {SOURCES} nor an existing dataset path")


def _of_kind(ds: Dataset, *, stdin: bool) -> list[int]:
    """The rows of ``ds`` that are stdin/stdout problems (cases, no asserts), or with ``stdin=False`` the others."""
    tests = ds[schema.TESTS] if schema.TESTS in ds.column_names else [None] * len(ds)
    inputs = ds[schema.INPUTS] if schema.INPUTS in ds.column_names else [None] * len(ds)
    return [i for i, (t, c) in enumerate(zip(tests, inputs)) if (bool(c) and not t) == stdin]


def load_seeds(config: RecipeConfig) -> Dataset:
    """The seed rows ``config`` asks for: each source loaded, filtered by ``problem_ids``, cut to the limit, merged.

    Args:
        config (`RecipeConfig`): the run configuration.

    Raises:
        ConfigError: an unknown source, or no seed left.
        MissingExtraError: a package-backed source is not installed (extra ``data``).

    Example:
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> seeds = load_seeds(RecipeConfig(llm=LLMConfig(model="m"), mutants=4, limit_per_source=3))  # doctest: +SKIP
        >>> seeds["id"]  # doctest: +SKIP
        ['HumanEval_0', 'HumanEval_1', 'HumanEval_2']
    """
    from ..sources import merge_sources

    parts = []
    wanted = set(config.problem_ids)
    for name in config.sources:
        ds = _load_source(name)
        if wanted:
            ds = ds.select([i for i, pid in enumerate(list(ds[schema.ID])) if pid in wanted])
        if config.problem_kind != "auto":
            ds = ds.select(_of_kind(ds, stdin=config.problem_kind == "stdin"))
        if config.limit_per_source is not None:
            ds = ds.select(range(min(config.limit_per_source, len(ds))))
        parts.append(ds)
    seeds = merge_sources(*parts)
    if not len(seeds):
        raise ConfigError("no seed problem left after problem_ids and limit_per_source")
    return seeds


def dedup_seeds(seeds: Dataset, config: RecipeConfig,
                executor: Executor | None = None) -> tuple[Dataset, dict[str, Any]]:
    """Mark near-duplicate seeds (``drop_reason = "near_duplicate"``, one kept per group) and summarise.

    Args:
        seeds (`datasets.Dataset`): the seed rows.
        config (`RecipeConfig`): ``dedup_threshold``, ``dedup_model`` and ``seed`` are used.
        executor (`Executor`, *optional*): where the run's heavy work runs (the recipe chooses it once); on Ray the
            embeddings are computed on the cluster's CPU workers. Defaults to this machine.

    Returns:
        `tuple[datasets.Dataset, dict]`: the seeds with ``drop_reason``, and the summary the round statistics carry
        (model, threshold, input rows, kept rows, duplicate groups).

    Example:
        >>> marked, info = dedup_seeds(load_seeds(config), config)   # doctest: +SKIP
    """
    from ..stages.dedup import find_near_duplicates

    if executor is None or not executor.on_ray:  # the distinct texts embedded here, in this process
        result = find_near_duplicates(seeds, threshold=config.dedup_threshold, model=config.dedup_model,
                                      seed=config.seed)
    else:  # the embeddings on the cluster's CPU workers; the search itself is one matrix product, here
        from ..distributed import EmbedConfig, embed_distributed

        embedded = embed_distributed(seeds, EmbedConfig(model=config.dedup_model), distributed=executor.ray)
        result = find_near_duplicates(embedded, threshold=config.dedup_threshold, seed=config.seed,
                                      embedding_column="embedding")
    summary = result.summary()
    marked = result.apply(seeds)
    reasons = ["near_duplicate" if dup else None for dup in marked[schema.DUP_OF]]
    marked = marked.remove_columns([schema.DUP_OF, schema.DUP_SCORE]).add_column(schema.DROP_REASON, reasons)
    from ..stages.support.dedup_embed import model_name

    info = {"model": model_name(config.dedup_model), "threshold": config.dedup_threshold, "input": summary["rows"],
            "kept": summary["kept"], "groups": summary["pairs"]}
    return marked, info


