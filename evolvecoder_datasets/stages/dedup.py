"""Semantic deduplication of seed problems: embed, exact cosine search in blocks, keep one per group.

The paper embeds questions with ``all-mpnet-base-v2`` and treats pairs with cosine similarity at or above 0.9
as duplicates, keeping one random member of each group. Here:

1. exact duplicates (same normalised text) are grouped by hash first and embedded once;
2. embeddings come from a fingerprinted ``Dataset.map`` backed by a per-model SQLite cache, so a re-run never
   re-embeds a text, whether the dataset is file-backed or built in memory;
3. the search multiplies float32 tiles of ``block_size`` x ``block_size`` (upper triangle only), so memory
   stays bounded by the tile whatever the number of rows, and collects every pair at or above the threshold
   (or hands the same search to ``faiss`` with ``backend="faiss"``);
4. the keep rule picks one representative per group: ``"leader"`` (default) walks rows in a seeded random
   order, optionally after a priority, and each unclaimed row claims its unclaimed neighbours, so no two kept
   rows are near-duplicates; ``"component"`` keeps one row per connected component. A group is never dropped
   whole.

Rows are marked, not deleted: ``dup_of`` holds the id of the kept row (None for kept rows) and ``dup_score``
the cosine similarity to it. :func:`drop_duplicates` removes the marked rows.

Example:
    >>> from datasets import Dataset
    >>> from evolvecoder_datasets.stages.dedup import deduplicate, drop_duplicates
    >>> ds = Dataset.from_dict({"id": ["a", "b", "c"],
    ...                         "question": ["Add two numbers.", "Add two numbers!", "Reverse a string."]})
    >>> marked = deduplicate(ds, threshold=0.9, seed=0)  # doctest: +SKIP
    >>> marked["dup_of"]  # doctest: +SKIP
    [None, 'a', None]
    >>> len(drop_duplicates(marked))  # doctest: +SKIP
    2
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import schema
from ..errors import ConfigError, SchemaError
from ..textnorm import text_hash
from .support.dedup_embed import (
    PAPER_MODEL,
    EmbeddingCache,
    default_cache_dir,
    embed_batch,
    embed_texts,
    model_key,
    offline_model_path,
    setup_mpnet,
)
from .support.dedup_search import BACKENDS, as_unit_float32, knn_mean_similarity, near_duplicate_pairs

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

logger = logging.getLogger(__name__)

VERSION = "1"
KEEP_RULES = ("leader", "component")

__all__ = ["VERSION", "DedupOptions", "DedupResult", "DuplicationMatrix", "deduplicate", "drop_duplicates",
           "find_near_duplicates"]  # fmt: skip


# --------------------------------------------------------------------------------------------------- keep rules
def _priority_values(ds: Dataset, priority: str | Callable[[dict], Any] | None) -> np.ndarray:
    n = len(ds)
    if priority is None:
        return np.zeros(n)
    if isinstance(priority, str):
        schema.check_columns(ds.column_names, [priority], stage="deduplicate(priority)")
        raw = ds[priority]
    elif callable(priority):
        raw = [priority(row) for row in ds]
    else:
        raise ConfigError(
            f"priority must be a column name, a callable or None, got {type(priority).__name__}"
        )
    values = np.empty(n, dtype=np.float64)
    for position, value in enumerate(raw):
        if value is None:
            values[position] = -np.inf
        elif isinstance(value, (list, tuple, str, dict)):
            values[position] = len(value)
        else:
            values[position] = float(value)
    return values


def _leader(
    order: np.ndarray, node_of_row: np.ndarray, rows_of_node: list[list[int]], pairs, n_nodes: int
) -> tuple[np.ndarray, np.ndarray]:
    first, second, sims = pairs
    neighbours: list[list[tuple[int, float]]] = [[] for _ in range(n_nodes)]
    for a, b, s in zip(first.tolist(), second.tolist(), sims.tolist()):
        neighbours[a].append((b, s))
        neighbours[b].append((a, s))
    keeper = np.full(len(node_of_row), -1, dtype=np.int64)
    score = np.full(len(node_of_row), np.nan, dtype=np.float64)
    node_done = np.zeros(n_nodes, dtype=bool)
    for row in order.tolist():
        node = node_of_row[row]
        if node_done[node]:
            continue
        node_done[node] = True
        for sibling in rows_of_node[node]:
            if sibling != row:
                keeper[sibling], score[sibling] = row, 1.0
        for other, similarity in neighbours[node]:
            if not node_done[other]:
                node_done[other] = True
                for member in rows_of_node[other]:
                    keeper[member], score[member] = row, similarity
    return keeper, score


def _components(
    order: np.ndarray, node_of_row: np.ndarray, pairs, n_nodes: int, node_vectors: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    parent = np.arange(n_nodes)

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in zip(pairs[0].tolist(), pairs[1].tolist()):
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    representative: dict[int, int] = {}
    for row in order.tolist():
        representative.setdefault(root(int(node_of_row[row])), row)
    keeper = np.full(len(node_of_row), -1, dtype=np.int64)
    score = np.full(len(node_of_row), np.nan, dtype=np.float64)
    for row in range(len(node_of_row)):
        chosen = representative[root(int(node_of_row[row]))]
        if chosen != row:
            keeper[row] = chosen
            a, b = node_of_row[row], node_of_row[chosen]
            score[row] = 1.0 if a == b else float(np.clip(node_vectors[a] @ node_vectors[b], -1.0, 1.0))
    return keeper, score


# --------------------------------------------------------------------------------------------------- results
@dataclass
class DuplicationMatrix:
    """Cross-source duplication (the paper's Figure 1).

    ``fraction[a][b]`` is the share of rows of source ``a`` with at least one near-duplicate (another row) in
    source ``b``; the diagonal is duplication within a source.

    Attributes:
        sources (`list[str]`): source names, sorted.
        counts (`list[int]`): rows per source.
        pairs (`list[list[int]]`): rows of ``a`` with a near-duplicate in ``b``.
        fraction (`list[list[float]]`): ``pairs`` divided by ``counts`` of ``a``.
    """

    sources: list[str]
    counts: list[int]
    pairs: list[list[int]]
    fraction: list[list[float]]

    def to_markdown(self) -> str:
        """A Markdown table for the dataset card.

        Example:
            >>> DuplicationMatrix(["A"], [2], [[1]], [[0.5]]).to_markdown().splitlines()[2]
            '| A (2) | 50.0% |'
        """
        head = "| source (rows) | " + " | ".join(self.sources) + " |"
        rule = "|---" * (len(self.sources) + 1) + "|"
        body = [
            f"| {name} ({count}) | " + " | ".join(f"{100 * f:.1f}%" for f in row) + " |"
            for name, count, row in zip(self.sources, self.counts, self.fraction)
        ]
        return "\n".join([head, rule, *body])


@dataclass
class DedupResult:
    """Everything :func:`find_near_duplicates` decided, plus what the card's statistics need.

    Attributes:
        ids (`list[str]`): row ids, in dataset order.
        dup_of (`list[str | None]`): id of the kept row each row duplicates (None when kept).
        dup_score (`list[float | None]`): cosine similarity to that row (None when kept).
        sources (`list[str] | None`): row sources, when the dataset has a source column.
        node_of_row (`np.ndarray`): index of each row's distinct normalised text.
        node_vectors (`np.ndarray`): unit embeddings of the distinct texts.
        pairs (`tuple`): ``(i, j, similarity)`` between distinct texts at or above the threshold.
        config (`dict`): parameters, for provenance in the card.
    """

    ids: list[str]
    dup_of: list[str | None]
    dup_score: list[float | None]
    sources: list[str] | None
    node_of_row: np.ndarray
    node_vectors: np.ndarray
    pairs: tuple[np.ndarray, np.ndarray, np.ndarray]
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def kept(self) -> np.ndarray:
        """Boolean mask of kept rows."""
        return np.array([d is None for d in self.dup_of], dtype=bool)

    def summary(self) -> dict[str, Any]:
        """Counts and parameters for the card and logs.

        Example:
            >>> result.summary()["removed"]  # doctest: +SKIP
            41
        """
        kept = int(self.kept.sum())
        exact = int(sum(1 for s in self.dup_score if s is not None and s >= 1.0 - 1e-6))
        return {
            **self.config,
            "rows": len(self.ids),
            "distinct_texts": int(self.node_vectors.shape[0]),
            "pairs": int(self.pairs[0].size),
            "kept": kept,
            "removed": len(self.ids) - kept,
            "removed_exact_or_identical": exact,
        }

    def apply(self, ds: Dataset, *, num_proc: int | None = None) -> Dataset:
        """Write ``dup_of`` and ``dup_score`` into ``ds`` (the dataset this result was computed on).

        Args:
            ds (`datasets.Dataset`): the same rows, in the same order.
            num_proc (`int`, *optional*): processes for ``map``.

        Raises:
            SchemaError: ``ds`` has a different number of rows or different ids.

        Example:
            >>> marked = find_near_duplicates(ds).apply(ds)  # doctest: +SKIP
        """
        id_column = self.config.get("id_column", schema.ID)
        if len(ds) != len(self.ids) or ds[id_column] != self.ids:
            raise SchemaError("DedupResult.apply needs the dataset it was computed on (ids differ)")
        stale = [c for c in (schema.DUP_OF, schema.DUP_SCORE) if c in ds.column_names]
        if stale:
            ds = ds.remove_columns(stale)
        from datasets import Dataset, Value

        features = ds.features.copy()
        features[schema.DUP_OF] = Value("string")
        features[schema.DUP_SCORE] = Value("float32")
        if not len(ds):  # ``map`` and casts do not add or type columns of a table with no rows
            return Dataset.from_dict({name: [] for name in features}, features=features)
        return ds.map(
            _write_marks,
            batched=True,
            with_indices=True,
            features=features,
            fn_kwargs={"dup_of": self.dup_of, "dup_score": self.dup_score},
            num_proc=num_proc,
            desc="marking duplicates",
        )

    def duplication_matrix(self) -> DuplicationMatrix:
        """Cross-source duplication at this result's threshold.

        Raises:
            SchemaError: the dataset had no source column.

        Example:
            >>> print(result.duplication_matrix().to_markdown())  # doctest: +SKIP
        """
        if self.sources is None:
            raise SchemaError(
                "duplication_matrix needs a source column; pass source_column= to find_near_duplicates"
            )
        names = sorted(set(self.sources))
        position = {name: k for k, name in enumerate(names)}
        n_nodes = self.node_vectors.shape[0]
        node_sources = [Counter() for _ in range(n_nodes)]
        for node, source in zip(self.node_of_row.tolist(), self.sources):
            node_sources[node][source] += 1
        neighbour_sources: list[set[str]] = [set() for _ in range(n_nodes)]
        for a, b in zip(self.pairs[0].tolist(), self.pairs[1].tolist()):
            neighbour_sources[a].update(node_sources[b])
            neighbour_sources[b].update(node_sources[a])
        hits = np.zeros((len(names), len(names)), dtype=np.int64)
        counts = np.zeros(len(names), dtype=np.int64)
        for node, source in zip(self.node_of_row.tolist(), self.sources):
            a = position[source]
            counts[a] += 1
            same_text = node_sources[node]
            for other in names:
                if other in neighbour_sources[node] or same_text[other] - (other == source) > 0:
                    hits[a, position[other]] += 1
        fraction = (hits / np.maximum(counts, 1)[:, None]).round(6)
        return DuplicationMatrix(names, counts.tolist(), hits.tolist(), fraction.tolist())

    def knn_similarity(self, *, k: int = 10, block_size: int = 4096) -> dict[str, np.ndarray]:
        """Mean cosine similarity to the ``k`` nearest neighbours, before and after deduplication (Figure 2).

        Args:
            k (`int`, defaults to 10): neighbours per row.
            block_size (`int`, defaults to 4096): tile side of the exact search.

        Returns:
            `dict`: ``{"before": array over all rows, "after": array over kept rows}``.

        Example:
            >>> stats = result.knn_similarity(k=10)  # doctest: +SKIP
            >>> float(stats["before"].mean()), float(stats["after"].mean())  # doctest: +SKIP
            (0.792, 0.698)
        """
        rows = self.node_vectors[self.node_of_row]
        return {
            "before": knn_mean_similarity(rows, k=k, block_size=block_size),
            "after": knn_mean_similarity(rows[self.kept], k=k, block_size=block_size),
        }


def _write_marks(
    batch: dict[str, list], indices: list[int], *, dup_of: list, dup_score: list
) -> dict[str, list]:
    return {schema.DUP_OF: [dup_of[i] for i in indices], schema.DUP_SCORE: [dup_score[i] for i in indices]}


def _is_kept(dup_of: str | None) -> bool:
    return dup_of is None


# --------------------------------------------------------------------------------------------------- options
@dataclass(frozen=True)
class DedupOptions:
    """How :func:`find_near_duplicates` and :func:`deduplicate` decide (every field has the paper's default).

    Args:
        column (`str`, defaults to `"question"`): the text compared.
        threshold (`float`, defaults to 0.9): cosine similarity at or above which rows are duplicates (the paper).
        model (`str`, `os.PathLike`, `SentenceTransformer` or `None`, defaults to `None`): embedding model; None
            means the offline all-MiniLM-L6-v2; the paper's model is :data:`PAPER_MODEL` (or a folder from
            :func:`setup_mpnet`). A model name or path keeps the embedding ``map`` cacheable.
        seed (`int`, defaults to 0): seed of the random order that picks representatives.
        keep (`str`, defaults to `"leader"`): ``"leader"`` (greedy leader in seeded random order) or
            ``"component"`` (one row per connected component).
        priority (`str`, `Callable` or `None`, *optional*): rows with a larger value are kept first; a column
            name (lists and strings count by length, None ranks last) or a function of the row, e.g.
            ``lambda row: row["source"] == "LeetCode"``. Ties fall back to the seeded order.
        embedding_column (`str`, *optional*): use these precomputed vectors instead of embedding ``column``.
        id_column (`str`, defaults to `"id"`): ids written into ``dup_of``.
        source_column (`str`, *optional*, defaults to `"source"`): for the duplication matrix; ignored if absent.
        block_size (`int`, defaults to 4096): tile side of the search.
        backend (`str`, defaults to `"numpy"`): ``"numpy"`` or ``"faiss"``.
        batch_size (`int`, defaults to 64): embedding batch size.
        device (`str`, *optional*): torch device for the embedder.
        cache_dir (`str`, `os.PathLike` or `False`, *optional*): embedding cache folder (default
            :func:`default_cache_dir`); False disables it. Only used with a model name or path.

    Raises:
        ConfigError: an unknown keep rule or backend, or a threshold outside [-1, 1].

    Example:
        >>> strict = DedupOptions(threshold=0.95, keep="component")
        >>> strict.replace(seed=3).seed, strict.threshold
        (3, 0.95)
    """

    column: str = schema.QUESTION
    threshold: float = 0.9
    model: Any = None
    seed: int = 0
    keep: str = "leader"
    priority: str | Callable[[dict], Any] | None = None
    embedding_column: str | None = None
    id_column: str = schema.ID
    source_column: str | None = schema.SOURCE
    block_size: int = 4096
    backend: str = "numpy"
    batch_size: int = 64
    device: str | None = None
    cache_dir: str | os.PathLike | bool | None = None

    def __post_init__(self) -> None:
        if self.keep not in KEEP_RULES:
            raise ConfigError(f"keep must be one of {KEEP_RULES}, got {self.keep!r}")
        if self.backend not in BACKENDS:
            raise ConfigError(f"backend must be one of {BACKENDS}, got {self.backend!r}")
        if not -1.0 <= self.threshold <= 1.0:
            raise ConfigError(f"threshold must be a cosine similarity in [-1, 1], got {self.threshold}")

    def replace(self, **changes: Any) -> DedupOptions:
        """A copy with ``changes`` applied (validated again).

        Raises:
            TypeError: a name that is not an option.

        Example:
            >>> DedupOptions().replace(block_size=1024).block_size
            1024
        """
        unknown = sorted(set(changes) - {f.name for f in fields(self)})
        if unknown:
            raise TypeError(f"unknown dedup option(s) {unknown}; options are {[f.name for f in fields(self)]}")
        return dataclasses.replace(self, **changes)


def _options(options: DedupOptions | None, changes: dict[str, Any]) -> DedupOptions:
    base = options if options is not None else DedupOptions()
    if not isinstance(base, DedupOptions):
        raise TypeError(f"options must be a DedupOptions, got {type(base).__name__}")
    return base.replace(**changes) if changes else base


# --------------------------------------------------------------------------------------------------- stage
def find_near_duplicates(ds: Dataset, options: DedupOptions | None = None, **changes: Any) -> DedupResult:
    """Decide which rows are near-duplicates, without changing ``ds`` (see :func:`deduplicate`).

    Args:
        ds (`datasets.Dataset`): rows with the options' ``column`` and ``id_column``.
        options (`DedupOptions`, *optional*): how to decide; defaults to ``DedupOptions()``.
        **changes: any :class:`DedupOptions` field by name (``threshold=0.95``, ``keep="component"``, ...), applied
            on top of ``options``.

    Raises:
        SchemaError: a column is missing or ids repeat.
        ConfigError: an unknown keep rule or backend, or a bad threshold.
        TypeError: a keyword that is not an option.
        MissingExtraError: the embedder or the offline model is not installed.

    Example:
        >>> result = find_near_duplicates(seeds, threshold=0.9, keep="component")  # doctest: +SKIP
        >>> result = find_near_duplicates(seeds, DedupOptions(model=PAPER_MODEL), seed=1)  # doctest: +SKIP
        >>> result.summary()["removed"], result.duplication_matrix().sources  # doctest: +SKIP
    """
    o = _options(options, changes)
    column, threshold, model, seed, keep, priority = o.column, o.threshold, o.model, o.seed, o.keep, o.priority
    embedding_column, id_column, source_column = o.embedding_column, o.id_column, o.source_column
    block_size, backend, batch_size, device, cache_dir = o.block_size, o.backend, o.batch_size, o.device, o.cache_dir
    needed = [column, id_column] + ([embedding_column] if embedding_column else [])
    schema.check_columns(ds.column_names, needed, stage="deduplicate")
    ids = ds[id_column]
    if len(set(ids)) != len(ids):
        raise SchemaError(f"deduplicate needs unique values in {id_column!r}")

    texts = ds[column]
    # One node per distinct normalised text; node k is embedded from its first row, node_rows[k].
    node_of_text: dict[str, int] = {}
    first_rows: list[int] = []
    node_of_row = np.empty(len(ds), dtype=np.int64)
    for row, text in enumerate(texts):
        node = node_of_text.setdefault(text_hash(text), len(first_rows))
        if node == len(first_rows):
            first_rows.append(row)
        node_of_row[row] = node
    node_rows = np.asarray(first_rows, dtype=np.int64)

    model_name = None
    if not len(node_rows):  # nothing to embed: never load a model or map over zero rows
        vectors = np.zeros((0, 1), dtype=np.float32)
        model_name = None if embedding_column or model is None else str(model)
    elif embedding_column:
        vectors = ds.select(node_rows.tolist()).with_format("numpy")[embedding_column]
    elif model is None or isinstance(model, (str, os.PathLike)):
        model_name = model_key(model)
        embedded = ds.select(node_rows.tolist()).map(
            embed_batch,
            batched=True,
            batch_size=max(batch_size, 256),
            fn_kwargs={
                "column": column,
                "model": model_name,
                "batch_size": batch_size,
                "device": device,
                "cache_dir": None if cache_dir is False else os.fspath(cache_dir or default_cache_dir()),
                "version": VERSION,
            },
            remove_columns=[c for c in ds.column_names if c != column],
            desc="embedding",
        )
        vectors = embedded.with_format("numpy")[schema.DEDUP_EMBEDDING]
    else:
        vectors = embed_texts(
            [texts[r] or "" for r in node_rows], model=model, batch_size=batch_size, device=device
        )
        model_name = type(model).__name__
    if isinstance(vectors, np.ndarray) and vectors.dtype == object:
        vectors = np.stack(vectors)
    node_vectors = as_unit_float32(vectors) if len(node_rows) else np.zeros((0, 1), dtype=np.float32)

    pairs = near_duplicate_pairs(node_vectors, threshold=threshold, block_size=block_size, backend=backend)
    rows_of_node: list[list[int]] = [[] for _ in range(len(node_rows))]
    for row, node in enumerate(node_of_row.tolist()):
        rows_of_node[node].append(row)
    random_rank = np.empty(len(ds), dtype=np.int64)
    random_rank[np.random.default_rng(seed).permutation(len(ds))] = np.arange(len(ds))
    order = np.lexsort((random_rank, -_priority_values(ds, priority)))
    if keep == "leader":
        keeper, score = _leader(order, node_of_row, rows_of_node, pairs, len(node_rows))
    else:
        keeper, score = _components(order, node_of_row, pairs, len(node_rows), node_vectors)

    sources = ds[source_column] if source_column and source_column in ds.column_names else None
    config = {
        "stage": "dedup",
        "version": VERSION,
        "column": column,
        "threshold": threshold,
        "model": model_name or embedding_column,
        "seed": seed,
        "keep": keep,
        "priority": priority
        if isinstance(priority, str) or priority is None
        else getattr(priority, "__name__", "callable"),
        "backend": backend,
        "id_column": id_column,
    }
    result = DedupResult(
        ids=list(ids),
        dup_of=[ids[k] if k >= 0 else None for k in keeper.tolist()],
        dup_score=[None if np.isnan(s) else float(s) for s in score.tolist()],
        sources=sources,
        node_of_row=node_of_row,
        node_vectors=node_vectors,
        pairs=pairs,
        config=config,
    )
    logger.info("dedup: %s", result.summary())
    return result


def deduplicate(ds: Dataset, options: DedupOptions | None = None, **changes: Any) -> Dataset:
    """Mark near-duplicate rows: add ``dup_of`` (id of the kept row, or None) and ``dup_score`` (cosine to it).

    Exact duplicates (same normalised text) are grouped first, then the distinct texts are embedded and searched
    exhaustively. One representative per group is kept; nothing is deleted (filter with :func:`drop_duplicates`).
    Deterministic for a given seed, model and data.

    Args:
        ds (`datasets.Dataset`): rows with the options' ``column`` and ``id_column``.
        options (`DedupOptions`, *optional*): how to decide; defaults to ``DedupOptions()`` (the paper's cosine
            0.9, the offline all-MiniLM-L6-v2; :data:`PAPER_MODEL` is the paper's all-mpnet-base-v2).
        **changes: any :class:`DedupOptions` field by name (``threshold``, ``model``, ``seed``, ``keep``,
            ``priority``, ``embedding_column``, ...), applied on top of ``options``.

    Raises:
        SchemaError: a column is missing or ids repeat.
        ConfigError: an unknown keep rule or backend, or a bad threshold.
        MissingExtraError: ``sentence-transformers`` (extra ``embed``) or the offline model (extra ``data``).

    Example:
        >>> from evolvecoder_datasets.sources import load_humaneval, load_leetcode, merge_sources
        >>> from evolvecoder_datasets.stages.dedup import deduplicate, drop_duplicates
        >>> seeds = merge_sources(load_humaneval(), load_leetcode())  # doctest: +SKIP
        >>> marked = deduplicate(seeds, threshold=0.9, seed=0, priority="tests")  # doctest: +SKIP
        >>> clean = drop_duplicates(marked)  # doctest: +SKIP
    """
    return find_near_duplicates(ds, options, **changes).apply(ds)


def drop_duplicates(ds: Dataset, *, num_proc: int | None = None) -> Dataset:
    """Remove the rows :func:`deduplicate` (or ``mark_exact_duplicates``) marked with a ``dup_of``.

    Args:
        ds (`datasets.Dataset`): a marked dataset.
        num_proc (`int`, *optional*): processes for ``filter``.

    Raises:
        SchemaError: ``ds`` has no ``dup_of`` column.

    Example:
        >>> from datasets import Dataset
        >>> list(drop_duplicates(Dataset.from_dict({"id": ["a", "b"], "dup_of": [None, "a"]}))["id"])
        ['a']
    """
    schema.check_columns(ds.column_names, [schema.DUP_OF], stage="drop_duplicates")
    return ds.filter(_is_kept, input_columns=schema.DUP_OF, num_proc=num_proc, desc="dropping duplicates")
