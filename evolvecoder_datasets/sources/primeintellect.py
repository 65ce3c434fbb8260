"""PrimeIntellect SYNTHETIC-1 coding problems (``PrimeIntellect/verifiable-coding-problems``).

Rows carry ``prompt``, a fenced ``gold_standard_solution`` and ``verification_info``, JSON (sometimes a
Python literal) of the form ``{"language": "python", "test_cases": [{"type": "stdin_stdout", "input": ...,
"output": ...} | {"type": "function_call", "fn_name": ..., "input": [args], "output": [value]}]}``.
``metadata`` is JSON that may hold a ``difficulty``. Rows in other languages keep their tests but no solution.

Example:
    >>> from datasets import load_dataset
    >>> from evolvecoder_datasets.sources import from_primeintellect
    >>> ds = load_dataset("PrimeIntellect/verifiable-coding-problems", split="train")  # doctest: +SKIP
    >>> seeds = from_primeintellect(ds.filter(lambda r: r["task_type"] == "verifiable_code"))  # doctest: +SKIP
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from .. import schema
from ..errors import SourceFormatError
from .base import (
    adapt,
    call_based_tests,
    empty_row,
    parse_structured,
    require_text,
    stdio_text,
    strip_code_fences,
)

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

SOURCE = "PrimeIntellect"
PRIMEINTELLECT_COLUMNS = ("prompt", "gold_standard_solution", "verification_info")

__all__ = ["SOURCE", "from_primeintellect", "primeintellect_row"]


def primeintellect_row(row: dict[str, Any], index: int) -> dict[str, Any]:
    """Convert one SYNTHETIC-1 coding record to a seed row (id ``PrimeIntellect_<index>``).

    Args:
        row (`dict`): the record.
        index (`int`): its position.

    Raises:
        SourceFormatError: ``verification_info`` cannot be decoded, ``test_cases`` is not a list of objects, a
            test case has an unknown ``type`` or a missing expected output, or function-call cases name more
            than one function.

    Example:
        >>> record = {"prompt": "Double n.", "gold_standard_solution": "```python\\ndef f(n):\\n    return 2*n\\n```",
        ...           "verification_info": '{"language": "python", "test_cases": [{"type": "function_call",'
        ...                                ' "fn_name": "f", "input": [3], "output": [6]}]}'}
        >>> primeintellect_row(record, 0)["tests"]
        ['assert f(3) == 6']
    """
    out = empty_row(f"{SOURCE}_{index}", SOURCE, require_text(row, "prompt", stage="primeintellect"))
    info = parse_structured(row.get("verification_info"), what="verification_info") or {}
    if not isinstance(info, dict):
        raise SourceFormatError(f"PrimeIntellect row {index}: verification_info must be an object")
    language = str(info.get("language") or "python").lower()
    if language.startswith("python") and row.get("gold_standard_solution"):
        out[schema.SOLUTIONS] = [strip_code_fences(row["gold_standard_solution"])]
    calls: dict[str, tuple[list[Any], list[Any]]] = defaultdict(lambda: ([], []))
    cases = info.get("test_cases") or []
    if not isinstance(cases, list) or not all(isinstance(case, dict) for case in cases):
        raise SourceFormatError(f"PrimeIntellect row {index}: test_cases must be a list of objects")
    for case in cases:
        kind = case.get("type") or "stdin_stdout"
        if kind == "stdin_stdout":
            where = f"PrimeIntellect row {index} test case {len(out[schema.INPUTS])}"
            stdin = case.get("input")
            out[schema.INPUTS].append("" if stdin is None else stdio_text(stdin, what=f"{where} input"))
            out[schema.OUTPUTS].append(stdio_text(case.get("output"), what=f"{where} output"))
        elif kind == "function_call":
            args, expected = calls[case.get("fn_name") or ""]
            args.append(case.get("input"))
            expected.append(case.get("output"))
        else:
            raise SourceFormatError(f"PrimeIntellect row {index}: unknown test case type {kind!r}")
    if len(calls) > 1 or "" in calls:
        raise SourceFormatError(
            f"PrimeIntellect row {index}: function-call cases need one fn_name, got {list(calls)}"
        )
    for fn_name, (args, expected) in calls.items():
        out[schema.TESTS] = call_based_tests(
            fn_name, args, expected, starter_code=out[schema.SOLUTIONS][0] if out[schema.SOLUTIONS] else ""
        )
        out[schema.ENTRY_POINT] = fn_name
    metadata = parse_structured(row.get("metadata"), what="metadata") if row.get("metadata") else None
    if isinstance(metadata, dict) and metadata.get("difficulty") not in (None, ""):
        out[schema.DIFFICULTY] = str(metadata["difficulty"])
    return out


def from_primeintellect(ds: Dataset, *, num_proc: int | None = None, on_error: str = "raise") -> Dataset:
    """Adapt SYNTHETIC-1 coding rows (``verifiable_code`` tasks).

    Args:
        ds (`datasets.Dataset`): rows with ``prompt``, ``gold_standard_solution``, ``verification_info`` (and
            optionally ``metadata``).
        num_proc (`int`, *optional*): processes for ``map``.
        on_error (`str`, defaults to `"raise"`): ``"skip"`` leaves out rows that cannot be read, logging each
            reason, instead of raising at the first one.

    Raises:
        SchemaError: a column is missing.
        SourceFormatError: a row cannot be decoded (with ``on_error="raise"``).

    Example:
        >>> from datasets import load_dataset
        >>> from evolvecoder_datasets.sources import from_primeintellect
        >>> seeds = from_primeintellect(load_dataset("PrimeIntellect/verifiable-coding-problems", split="train"))  # doctest: +SKIP
    """
    return adapt(
        ds,
        primeintellect_row,
        required=PRIMEINTELLECT_COLUMNS,
        stage="primeintellect",
        num_proc=num_proc,
        on_error=on_error,
    )
