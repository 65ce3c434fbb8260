"""The pre-filtered seed set the released EvolveCoder code starts from (``CodeDPO/filtered_original_acecoderv3``).

The dataset has no public card; its layout is the one the released step-1 script reads: configs ``TACO``,
``APPS``, ``primeintellect``, ``codeforces`` and ``contests``, split ``train``, with ``id`` (``<prefix>_<n>``),
``question``, ``starter_code`` (possibly empty) and ``solution`` (one program; Markdown-fenced for
``primeintellect``). Ids are kept; the source name is read from the prefix. Tests, when the rows carry
``tests`` (asserts) or an APPS-style ``input_output``, are kept too; the released pipeline writes new ones.

Example:
    >>> from datasets import concatenate_datasets, load_dataset
    >>> from evolvecoder_datasets.sources import from_evolvecoder_seed
    >>> configs = ["TACO", "APPS", "primeintellect", "codeforces", "contests"]
    >>> raw = concatenate_datasets([load_dataset("CodeDPO/filtered_original_acecoderv3", c, split="train")
    ...                             for c in configs])  # doctest: +SKIP
    >>> seeds = from_evolvecoder_seed(raw)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import schema
from ..errors import SourceFormatError
from .base import adapt, add_input_output, empty_row, parse_structured, require_text, strip_code_fences

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

SEED_COLUMNS_READ = ("id", "question", "solution")
# id prefix in the seed set -> our source name
PREFIX_SOURCES = {
    "TACO": "TACO",
    "APPS": "APPS",
    "primeintellect": "PrimeIntellect",
    "codeforces": "Codeforces",
    "contests": "CodeContests",
}

__all__ = ["PREFIX_SOURCES", "evolvecoder_seed_row", "from_evolvecoder_seed"]


def evolvecoder_seed_row(row: dict[str, Any], index: int) -> dict[str, Any]:
    """Convert one seed-set record; the id is kept and the source comes from its prefix.

    Args:
        row (`dict`): the record (``id``, ``question``, ``starter_code``, ``solution``; optionally ``tests`` or
            ``input_output``).
        index (`int`): its position (unused).

    Raises:
        SourceFormatError: ``id`` or ``question`` is missing, ``tests`` is not a list of strings (a JSON text
            of one is decoded), or ``input_output`` cannot be decoded or its cases do not pair up.

    Example:
        >>> evolvecoder_seed_row({"id": "primeintellect_7", "question": "Q", "starter_code": "",
        ...                       "solution": "```python\\nprint(1)\\n```"}, 0)["source"]
        'PrimeIntellect'
    """
    row_id = require_text(row, "id", stage="evolvecoder_seed")
    prefix = row_id.rsplit("_", 1)[0]
    out = empty_row(
        row_id, PREFIX_SOURCES.get(prefix, prefix), require_text(row, "question", stage="evolvecoder_seed")
    )
    out[schema.STARTER_CODE] = row.get("starter_code") or ""
    if isinstance(row.get("solution"), str) and row["solution"].strip():
        out[schema.SOLUTIONS] = [strip_code_fences(row["solution"])]
    tests = parse_structured(row.get("tests"), what=f"{row_id} tests") if row.get("tests") else None
    if tests is not None:
        if not isinstance(tests, list) or not all(isinstance(t, str) for t in tests):
            raise SourceFormatError(f"evolvecoder_seed row {row_id!r}: tests must be a list of strings")
        out[schema.TESTS] = [t for t in tests if t.strip()]
    cases = (
        parse_structured(row.get("input_output"), what="input_output") if row.get("input_output") else None
    )
    if cases is not None:
        if not isinstance(cases, dict):
            raise SourceFormatError(f"evolvecoder_seed row {row_id!r}: input_output must be an object")
        add_input_output(out, cases, what=f"evolvecoder_seed row {row_id!r} input_output")
    return out


def from_evolvecoder_seed(ds: Dataset, *, num_proc: int | None = None, on_error: str = "raise") -> Dataset:
    """Adapt rows of the EvolveCoder pre-filtered seed set (any of its configs, or them concatenated).

    Args:
        ds (`datasets.Dataset`): seed-set rows.
        num_proc (`int`, *optional*): processes for ``map``.
        on_error (`str`, defaults to `"raise"`): ``"skip"`` leaves out rows that cannot be read, logging each
            reason, instead of raising at the first one.

    Raises:
        SchemaError: ``id``, ``question`` or ``solution`` is missing.
        SourceFormatError: a row cannot be decoded (with ``on_error="raise"``).

    Example:
        >>> from datasets import load_dataset
        >>> from evolvecoder_datasets.sources import from_evolvecoder_seed
        >>> seeds = from_evolvecoder_seed(load_dataset("CodeDPO/filtered_original_acecoderv3", "TACO", split="train"))  # doctest: +SKIP
    """
    return adapt(
        ds,
        evolvecoder_seed_row,
        required=SEED_COLUMNS_READ,
        stage="evolvecoder_seed",
        num_proc=num_proc,
        on_error=on_error,
    )
