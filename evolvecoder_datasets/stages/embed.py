"""Stage: unit-norm embeddings of a text column, the input of semantic deduplication on a cluster.

A batched ``Dataset.map`` function; :func:`evolvecoder_datasets.distributed.embed_distributed` runs it as coarse
Ray tasks, and :func:`evolvecoder_datasets.stages.dedup.deduplicate` reads its output as ``embedding_column``.

Example:
    >>> from evolvecoder_datasets.stages.embed import EmbedConfig
    >>> EmbedConfig().output_column
    'embedding'
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import schema
from .._deps import require
from .support.resources import task_cpus as _task_cpus

__all__ = ["EmbedConfig", "embed_rows"]


@dataclass(frozen=True)
class EmbedConfig:
    """Settings of the embedding stage that precedes semantic deduplication.

    Args:
        column (`str`, defaults to ``"question"``): text to embed.
        output_column (`str`, defaults to ``"embedding"``): where the unit-norm float32 vectors go.
        model (`str`, *optional*): model name or local folder; None is the offline all-MiniLM-L6-v2. It must
            exist on every worker (a path on shared storage, or a name the workers can load).
        batch_size (`int`, defaults to 64): encoder batch size.
        device (`str`, *optional*): torch device; CPU workers use ``"cpu"``.

    Example:
        >>> EmbedConfig(model="/shared/models/all-mpnet-base-v2").output_column
        'embedding'
    """

    column: str = schema.QUESTION
    output_column: str = schema.EMBEDDING
    model: str | None = None
    batch_size: int = 64
    device: str | None = "cpu"


def embed_rows(batch: dict[str, list], *, config: EmbedConfig) -> dict[str, list]:
    """Batched stage: unit-norm embeddings of ``config.column``, one torch thread per reserved CPU.

    Reads ``config.column``; writes ``config.output_column`` (a float32 vector per row), which
    :func:`evolvecoder_datasets.stages.dedup.deduplicate` accepts as ``embedding_column``.

    Args:
        batch (`dict[str, list]`): rows.
        config (`EmbedConfig`): column, model and batch size.

    Raises:
        SchemaError: the text column is missing.
        MissingExtraError: sentence-transformers or the offline model is not installed.

    Example:
        >>> out = embed_rows({"question": ["Two sum", "Reverse a list"]}, config=EmbedConfig())  # doctest: +SKIP
        >>> len(out["embedding"][0])  # doctest: +SKIP
        384
    """
    from .support.dedup_embed import embed_texts

    schema.check_columns(batch, [config.column], stage="embed")
    cpus = _task_cpus(default=0)
    if cpus:
        torch = require("torch", extra="embed", feature="embeddings")
        torch.set_num_threads(cpus)
    vectors = embed_texts([t or "" for t in batch[config.column]], model=config.model, batch_size=config.batch_size,
                          device=config.device)  # fmt: skip
    return {config.output_column: list(vectors)}
