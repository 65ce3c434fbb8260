"""Codeforces (``open-r1/codeforces``): statements in parts, examples and official tests as ``{input, output}``.

Only problems an exact stdout comparison can judge are adapted: interactive problems (``interaction_format``),
problems with several valid answers (``generated_checker``) and file-based I/O (``input_mode`` other than
``stdio``) are filtered out first, with a count per reason in the log. Ids are ``Codeforces_<contest><index>``
(``Codeforces_1843C``), stable across dataset versions.

Example:
    >>> from datasets import load_dataset
    >>> from evolvecoder_datasets.sources import from_codeforces
    >>> seeds = from_codeforces(load_dataset("open-r1/codeforces", split="train"))  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from typing import TYPE_CHECKING, Any

from ..errors import SourceFormatError
from .base import DIFFICULTY, adapt, empty_row, require_text

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

logger = logging.getLogger(__name__)

SOURCE = "Codeforces"
CODEFORCES_COLUMNS = (
    "id",
    "title",
    "description",
    "input_format",
    "output_format",
    "examples",
    "official_tests",
)

__all__ = ["SOURCE", "codeforces_row", "from_codeforces", "unjudgeable_reason"]


def unjudgeable_reason(row: dict[str, Any]) -> str | None:
    """Why an exact stdout comparison cannot judge this problem, or None when it can.

    Example:
        >>> unjudgeable_reason({"interaction_format": "Interact with the jury."})
        'interactive'
    """
    if row.get("interaction_format"):
        return "interactive"
    if row.get("generated_checker"):
        return "checker"
    if row.get("input_mode") not in (None, "", "stdio"):
        return "file_io"
    return None


def _is_judgeable(*values: Any, names: list[str]) -> bool:
    """``Dataset.filter`` body over only the columns that decide (the tests columns are large)."""
    return unjudgeable_reason(dict(zip(names, values))) is None


def _statement(row: dict[str, Any]) -> str:
    parts = [f"{row['title']}\n", require_text(row, "description", stage="codeforces").strip()]
    for heading, column in (("Input", "input_format"), ("Output", "output_format")):
        if row.get(column):
            parts.append(f"{heading}\n{row[column].strip()}")
    for number, example in enumerate(row.get("examples") or [], start=1):
        parts.append(
            f"Example {number}\nInput\n{example['input'].rstrip()}\nOutput\n{example['output'].rstrip()}"
        )
    if row.get("note"):
        parts.append(f"Note\n{row['note'].strip()}")
    return "\n\n".join(parts)


def codeforces_row(row: dict[str, Any], index: int) -> dict[str, Any]:
    """Convert one ``open-r1/codeforces`` record to a seed row.

    Official tests are used when present, the statement's examples otherwise (``official_tests`` is empty for
    problems whose tests Codeforces truncates). The rating is the difficulty.

    Args:
        row (`dict`): the record.
        index (`int`): its position (unused: ids come from the problem id).

    Raises:
        SourceFormatError: the record has no id or no statement.

    Example:
        >>> record = {"id": "4/A", "title": "Watermelon", "description": "Split w.", "input_format": "w",
        ...           "output_format": "YES or NO", "examples": [{"input": "8\\n", "output": "YES\\n"}],
        ...           "official_tests": [], "rating": 800.0}
        >>> row = codeforces_row(record, 0)
        >>> row["id"], row["inputs"], row["difficulty"]
        ('Codeforces_4A', ['8\\n'], '800')
    """
    problem_id = require_text(row, "id", stage="codeforces")
    out = empty_row(f"{SOURCE}_{problem_id.replace('/', '')}", SOURCE, _statement(row))
    cases = row.get("official_tests") or row.get("examples") or []
    try:
        out["inputs"] = [case["input"] for case in cases]
        out["outputs"] = [case["output"] for case in cases]
    except (KeyError, TypeError) as err:
        raise SourceFormatError(f"Codeforces {problem_id}: a test lacks input or output") from err
    rating = row.get("rating")
    out[DIFFICULTY] = str(int(rating)) if isinstance(rating, (int, float)) and math.isfinite(rating) else None
    return out


def from_codeforces(ds: Dataset, *, judgeable_only: bool = True, num_proc: int | None = None) -> Dataset:
    """Adapt ``open-r1/codeforces`` rows (default config).

    Args:
        ds (`datasets.Dataset`): Codeforces rows.
        judgeable_only (`bool`, defaults to `True`): drop interactive, checker-judged and file-I/O problems.
        num_proc (`int`, *optional*): processes for ``map``/``filter``.

    Raises:
        SchemaError: a column is missing.
        SourceFormatError: a row cannot be decoded.

    Example:
        >>> from datasets import load_dataset
        >>> from evolvecoder_datasets.sources import from_codeforces
        >>> seeds = from_codeforces(load_dataset("open-r1/codeforces", split="test"))  # doctest: +SKIP
    """
    if judgeable_only:
        present = [
            c for c in ("interaction_format", "generated_checker", "input_mode") if c in ds.column_names
        ]
        if present:
            reasons = Counter(
                unjudgeable_reason(dict(zip(present, values))) for values in zip(*(ds[c] for c in present))
            )
            reasons.pop(None, None)
            if reasons:
                logger.info(
                    "codeforces: dropping %d unjudgeable problems %s", sum(reasons.values()), dict(reasons)
                )
            ds = ds.filter(
                _is_judgeable,
                input_columns=present,
                fn_kwargs={"names": present},
                num_proc=num_proc,
                desc="codeforces: judgeable",
            )
    return adapt(ds, codeforces_row, required=CODEFORCES_COLUMNS, stage="codeforces", num_proc=num_proc)
