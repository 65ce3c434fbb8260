"""Dropped rows: stages mark a row with a ``drop_reason`` instead of losing it; these count, record and remove them.

A record names the stage that dropped the row as data (:func:`dropped_records` is told the stage whose output it
reads), never by reading the reason string.

Example:
    >>> from evolvecoder_datasets.stages.support.drops import drop_reason_counts
    >>> drop_reason_counts([None, "too_few_tests"])
    {'too_few_tests': 1}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ... import schema

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["drop_reason_counts", "dropped_records", "without_dropped"]


def drop_reason_counts(reasons: Iterable[str | None]) -> dict[str, int]:
    """``{reason: count}`` of the non-empty drop reasons, most common first.

    Example:
        >>> drop_reason_counts([None, "refine_no_json", "too_few_tests", "refine_no_json"])
        {'refine_no_json': 2, 'too_few_tests': 1}
    """
    return dict(Counter(r for r in reasons if r).most_common())


def dropped_records(ds: Dataset, *, stage: str, recorded: Iterable[str] = ()) -> list[dict[str, str]]:
    """The rows ``stage`` dropped, as ``{"id", "stage", "reason"}`` records (the ``dropped`` config's rows).

    A stage keeps the reasons of rows an earlier stage dropped, so pass the ids already ``recorded`` to leave them
    to the stage that wrote them. A dataset without a ``drop_reason`` column dropped nothing.

    Args:
        ds (`datasets.Dataset`): the stage's output rows, with ``id`` and (optionally) ``drop_reason``.
        stage (`str`): the stage whose output ``ds`` is (``"dedup"``, ``"refine"``, ``"final"`` in the recipe).
        recorded (`Iterable[str]`, *optional*): ids an earlier stage already recorded.

    Example:
        >>> from datasets import Dataset
        >>> refined = Dataset.from_dict({"id": ["a", "b", "c"], "drop_reason": ["near_duplicate", None, "refine_no_json"]})
        >>> dropped_records(refined, stage="refine", recorded=["a"])
        [{'id': 'c', 'stage': 'refine', 'reason': 'refine_no_json'}]
    """
    if schema.DROP_REASON not in ds.column_names:
        return []
    skip = set(recorded)
    return [{schema.ID: str(i), schema.STAGE: stage, schema.REASON: str(r)}
            for i, r in zip(ds[schema.ID], ds[schema.DROP_REASON]) if r and str(i) not in skip]


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
