"""Merging seed sources and the exact-duplicate pass (a hash of the normalised text).

Normalisation lower-cases, folds Unicode compatibility forms (NFKC) and collapses every run of whitespace, so
re-flowed or re-indented copies of a statement hash alike. :func:`mark_exact_duplicates` writes the same
``dup_of``/``dup_score`` columns as the semantic pass (:func:`evolvecoder_datasets.stages.dedup.deduplicate`,
which runs this hashing itself before embedding); nothing is deleted until you filter.

The normal form and its hash live on the ground floor (:mod:`evolvecoder_datasets.textnorm`), shared with the
semantic pass.

Example:
    >>> from datasets import Dataset
    >>> from evolvecoder_datasets.sources.exact import mark_exact_duplicates
    >>> ds = Dataset.from_dict({"id": ["A", "B"], "question": ["Two Sum", "two   sum "]})
    >>> list(mark_exact_duplicates(ds)["dup_of"])
    [None, 'A']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import schema
from ..textnorm import text_hash
from .base import SEED_COLUMNS, seed_features

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["mark_exact_duplicates", "merge_sources"]


def _hash_batch(batch: dict[str, list[Any]], *, column: str) -> dict[str, list[str]]:
    return {"_text_hash": [text_hash(t) for t in batch[column]]}


def mark_exact_duplicates(
    ds: Dataset, *, column: str = schema.QUESTION, id_column: str = schema.ID, num_proc: int | None = None
) -> Dataset:
    """Add ``dup_of`` (id of the first row with the same normalised text, or None) and ``dup_score`` (1.0 or None).

    The first occurrence in dataset order is kept. Use :func:`evolvecoder_datasets.stages.dedup.drop_duplicates`
    (or any ``filter`` on ``dup_of``) to remove the marked rows.

    Args:
        ds (`datasets.Dataset`): rows with ``column`` and ``id_column``.
        column (`str`, defaults to `"question"`): the text compared.
        id_column (`str`, defaults to `"id"`): the id written into ``dup_of``.
        num_proc (`int`, *optional*): processes for the hashing ``map``.

    Raises:
        SchemaError: a column is missing.

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"id": ["a", "b", "c"], "question": ["Sum two", "sum  TWO", "Other"]})
        >>> list(mark_exact_duplicates(ds)["dup_of"])
        [None, 'a', None]
    """
    from datasets import Dataset, Value

    schema.check_columns(ds.column_names, [column, id_column], stage="mark_exact_duplicates")
    if not len(ds):  # ``map`` and casts do not add or type columns of a table with no rows
        features = ds.features.copy()
        features[schema.DUP_OF], features[schema.DUP_SCORE] = Value("string"), Value("float32")
        return Dataset.from_dict({name: [] for name in features}, features=features)
    hashed = ds.map(
        _hash_batch, batched=True, fn_kwargs={"column": column}, num_proc=num_proc, desc="hashing texts"
    )
    hashes, ids = hashed["_text_hash"], hashed[id_column]
    first: dict[str, str] = {}
    dup_of: list[str | None] = []
    for h, row_id in zip(hashes, ids):
        if h in first:
            dup_of.append(first[h])
        else:
            first[h] = row_id
            dup_of.append(None)
    hashed = hashed.remove_columns("_text_hash")
    for name in (schema.DUP_OF, schema.DUP_SCORE):
        if name in hashed.column_names:
            hashed = hashed.remove_columns(name)
    # Typed as deduplicate() types them: with no duplicate, all-None columns would otherwise be Arrow nulls.
    hashed = hashed.add_column(schema.DUP_OF, dup_of).cast_column(schema.DUP_OF, Value("string"))
    scores = [None if d is None else 1.0 for d in dup_of]
    return hashed.add_column(schema.DUP_SCORE, scores).cast_column(schema.DUP_SCORE, Value("float32"))


def contest_features() -> dict:
    """The ``datasets`` types of the columns a contest source adds to the seed columns (imports ``datasets``
    lazily).

    Example:
        >>> list(contest_features())
        ['checker', 'float_tol', 'time_limit_s', 'language', 'validator', 'submissions']
    """
    from datasets import List, Value

    from .base import checker_feature

    return {
        schema.CHECKER: checker_feature(),
        schema.FLOAT_TOL: Value("float64"),
        schema.TIME_LIMIT: Value("float64"),
        schema.LANGUAGE: Value("string"),
        schema.VALIDATOR: checker_feature(),
        "submissions": List({"verdict": Value("string"), "language": Value("string"), "path": Value("string"),
                             "source": Value("string")}),
    }


def merge_sources(*datasets: Dataset) -> Dataset:
    """Concatenate adapted seed datasets into one, in the seed schema, checking ids stay unique. The columns of
    contest sources (:func:`contest_features`: a problem package's checker, tolerance, time limit, language,
    validator and labelled submissions) are kept where any source has them.

    Args:
        *datasets (`datasets.Dataset`): outputs of the ``from_*``/``load_*`` adapters.

    Raises:
        SchemaError: a dataset lacks seed columns or two rows share an id.

    Example:
        >>> from evolvecoder_datasets.sources import load_humaneval, load_leetcode, merge_sources
        >>> seeds = merge_sources(load_humaneval(), load_leetcode())  # doctest: +SKIP
        >>> len(seeds)  # doctest: +SKIP
        1373
    """
    from datasets import concatenate_datasets

    from ..errors import SchemaError

    features = seed_features()
    extra = contest_features()
    # a contest source's own columns (checker, tolerance, limit, language, validator, labelled submissions) travel
    # with it; the rows of the other sources get them empty
    carried = [name for name in extra if any(name in ds.column_names for ds in datasets)]
    for name in carried:
        features[name] = extra[name]
    parts = []
    for ds in datasets:
        schema.check_columns(ds.column_names, SEED_COLUMNS, stage="merge_sources")
        part = ds.select_columns(list(SEED_COLUMNS) + [c for c in carried if c in ds.column_names])
        for name in carried:
            if name not in part.column_names:
                part = part.add_column(name, [None] * len(part))
        parts.append(part.select_columns(list(SEED_COLUMNS) + carried).cast(features))
    merged = concatenate_datasets(parts)
    ids = merged[schema.ID]
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        repeated = sorted({i for i in ids if i in seen or seen.add(i)})
        raise SchemaError(f"merge_sources: ids repeat across sources, e.g. {repeated[:5]}")
    return merged
