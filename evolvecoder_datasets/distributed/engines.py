"""The stages the recipe scales out, driven by the shard scheduler: execute, mutant scoring and embedding.

Each takes the stage's config and a :class:`~evolvecoder_datasets.distributed.DistributedConfig`; with
``engine="local"`` it runs the same stage function through ``Dataset.map``, with identical rows.

Example:
    >>> from evolvecoder_datasets.distributed.engines import execute_distributed
    >>> from evolvecoder_datasets.distributed.config import DistributedConfig
    >>> out = execute_distributed(ds, distributed=DistributedConfig(engine="local"))  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from .. import schema
from ..stages.embed import EmbedConfig, embed_rows
from ..stages.mutation import MutationConfig, score_mutants
from ..stages.support.resources import task_cpus as _task_cpus
from .config import DistributedConfig
from .shards import map_shards

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

    from ..stages.execute import ExecuteConfig

__all__ = ["embed_distributed", "execute_distributed", "score_mutants_distributed"]


def _execute_rows(batch: dict[str, list], *, config: ExecuteConfig) -> dict[str, list]:
    """The execute stage inside a task: the sandbox gets as many fork servers as the task reserved CPUs."""
    from ..stages.execute import execute

    if config.workers is None:
        config = dataclasses.replace(config, workers=_task_cpus())
    return execute(batch, config=config)


def execute_distributed(
    ds: Dataset,
    config: ExecuteConfig | None = None,
    *,
    distributed: DistributedConfig | None = None,
    engine: str | None = None,
    address: str | None = None,
    shard_size: int | None = None,
    results_dir: str | None = None,
) -> Dataset:
    """The execute stage (pass matrices) over a dataset on Ray or locally, with identical results.

    Reads ``solutions`` and ``tests`` (or ``inputs``/``outputs``) and writes ``pass_matrix`` (and ``statuses``
    when ``config.statuses``), exactly as :func:`evolvecoder_datasets.stages.execute.execute_dataset`. On Ray,
    each task starts one fork server per CPU it reserved (unless ``config.workers`` fixes the count) and keeps
    it for the next tasks that land on the same worker process.

    Args:
        ds (`datasets.Dataset`): problem rows with solutions.
        config (`ExecuteConfig`, *optional*): sandbox settings; defaults to ``ExecuteConfig()``.
        distributed (`DistributedConfig`, *optional*): engine settings; defaults to ``DistributedConfig()``
            (Ray, private local instance). The keyword arguments below override its fields.
        engine (`str`, *optional*): ``"ray"`` or ``"local"`` (delegates to ``execute_dataset``).
        address (`str`, *optional*): Ray address (``"auto"``, ``"ray://head:10001"``...).
        shard_size (`int`, *optional*): problems per task.
        results_dir (`str`, *optional*): folder of finished shards for resumable runs.

    Returns:
        `datasets.Dataset`: ``ds`` with ``pass_matrix`` (and ``statuses``).

    Raises:
        SchemaError: ``solutions`` or the tests are missing.
        MissingExtraError: Ray is not installed (``pip install 'evolvecoder-datasets[ray]'``).
        DistributedError: a task failed on infrastructure beyond its retries.

    Example:
        >>> from evolvecoder_datasets.stages.execute import ExecuteConfig
        >>> scored = execute_distributed(ds, ExecuteConfig(timeout_s=1.0), address="auto",
        ...                              shard_size=32, results_dir="runs/round1/execute")  # doctest: +SKIP
    """
    from ..stages.execute import ExecuteConfig, execute_dataset

    config = config or ExecuteConfig()
    overrides = {"engine": engine, "address": address, "shard_size": shard_size, "results_dir": results_dir}
    distributed = dataclasses.replace(
        distributed or DistributedConfig(), **{k: v for k, v in overrides.items() if v is not None}
    )
    schema.check_columns(ds.column_names, [schema.SOLUTIONS], stage="execute")
    if schema.TESTS not in ds.column_names and schema.INPUTS not in ds.column_names:
        schema.check_columns(ds.column_names, [schema.TESTS], stage="execute")
    if distributed.engine == "local":
        return execute_dataset(ds, config, batch_size=distributed.shard_size)
    from ..stages.execute import READS, output_features

    # The reference and any stored limit travel too: the task calibrates limits exactly as the local engine does,
    # and the new columns get the local engine's types (a shard whose limits are all null still has float64).
    columns = [c for c in READS if c in ds.column_names]
    return map_shards(ds, _execute_rows, fn_kwargs={"config": config}, config=distributed, input_columns=columns,
                      features=output_features(config), desc="execute")  # fmt: skip


def score_mutants_distributed(
    ds: Dataset, config: MutationConfig | None = None, *, distributed: DistributedConfig | None = None
) -> Dataset:
    """:func:`score_mutants` over a dataset, on Ray (one sandbox per task) or locally.

    Args:
        ds (`datasets.Dataset`): rows with a reference solution and tests.
        config (`MutationConfig`, *optional*): defaults to ``MutationConfig()``.
        distributed (`DistributedConfig`, *optional*): engine settings; defaults to Ray on a local instance.

    Returns:
        `datasets.Dataset`: ``ds`` with ``mutation_score``, ``mutants_killed`` and ``mutants_considered``.

    Raises:
        SchemaError: a configured column is missing.
        MissingExtraError: Ray is not installed.
        DistributedError: a task failed on infrastructure beyond its retries.

    Example:
        >>> scored = score_mutants_distributed(ds, MutationConfig(reference_column="canonical_solution"),
        ...                                    distributed=DistributedConfig(address="auto"))  # doctest: +SKIP
        >>> sum(scored["mutation_score"]) / len(scored)  # doctest: +SKIP
    """
    config = config or MutationConfig()
    columns = [config.reference_column, config.tests_column] + (
        [config.reference_tests_column] if config.reference_tests_column else []
    )
    return map_shards(ds, score_mutants, fn_kwargs={"config": config}, config=distributed, input_columns=columns,
                      desc="mutants")  # fmt: skip


def embed_distributed(
    ds: Dataset, config: EmbedConfig | None = None, *, distributed: DistributedConfig | None = None
) -> Dataset:
    """:func:`embed_rows` over a dataset on CPU workers (each loads the model once), or locally.

    Args:
        ds (`datasets.Dataset`): rows with the text column.
        config (`EmbedConfig`, *optional*): defaults to ``EmbedConfig()``.
        distributed (`DistributedConfig`, *optional*): engine settings; defaults to Ray on a local instance.

    Returns:
        `datasets.Dataset`: ``ds`` with the embedding column.

    Raises:
        SchemaError: the text column is missing.
        MissingExtraError: Ray, sentence-transformers or the offline model is not installed.
        DistributedError: a task failed on infrastructure beyond its retries.

    Example:
        >>> from evolvecoder_datasets.stages.dedup import deduplicate
        >>> embedded = embed_distributed(seeds, EmbedConfig(), distributed=DistributedConfig(address="auto",
        ...                              cpus_per_task=4, shard_size=2048))  # doctest: +SKIP
        >>> marked = deduplicate(embedded, embedding_column="embedding", threshold=0.9)  # doctest: +SKIP
    """
    from datasets import Features, List, Value

    config = config or EmbedConfig()
    features = Features({config.output_column: List(Value("float32"))})
    return map_shards(ds, embed_rows, fn_kwargs={"config": config}, config=distributed, input_columns=[config.column],
                      features=features, desc="embed")  # fmt: skip
