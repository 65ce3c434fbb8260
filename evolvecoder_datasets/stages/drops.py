"""Dropped rows: stages mark a row with a ``drop_reason`` instead of losing it; these count and remove them.

Example:
    >>> from evolvecoder_datasets.stages.drops import drop_reason_counts
    >>> drop_reason_counts([None, "too_few_tests"])
    {'too_few_tests': 1}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .. import schema

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["drop_reason_counts", "without_dropped"]


def drop_reason_counts(reasons: Iterable[str | None]) -> dict[str, int]:
    """``{reason: count}`` of the non-empty drop reasons, most common first.

    Example:
        >>> drop_reason_counts([None, "refine_no_json", "too_few_tests", "refine_no_json"])
        {'refine_no_json': 2, 'too_few_tests': 1}
    """
    return dict(Counter(r for r in reasons if r).most_common())


def without_dropped(ds: Dataset, *, column: str = schema.DROP_REASON) -> Dataset:
    """The rows of ``ds`` whose ``drop_reason`` is empty (the others were recorded, not silently lost).

    Args:
        ds (`datasets.Dataset`): rows with a ``drop_reason`` column.
        column (`str`, defaults to ``"drop_reason"``): the column to test.

    Example:
        >>> from datasets import Dataset
        >>> len(without_dropped(Dataset.from_dict({"id": ["a", "b"], "drop_reason": [None, "too_few_tests"]})))
        1
    """
    reasons = list(ds[column])
    keep = [i for i, reason in enumerate(reasons) if not reason]
    return ds if len(keep) == len(ds) else ds.select(keep)
