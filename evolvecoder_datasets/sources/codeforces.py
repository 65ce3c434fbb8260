"""Codeforces (``open-r1/codeforces``): statements in parts, examples and official tests as ``{input, output}``.

Interactive problems (``interaction_format``) and file-based I/O (``input_mode`` other than ``stdio``) are filtered
out first, with a count per reason in the log. Problems with several valid answers (``generated_checker``) are
filtered out too by default; ``with_checkers=True`` keeps them, with a ``checker`` column
(``{source, "python", "codeforces"}``, the contract open-r1's own runner calls those scripts with: ``checker input
answer output``, exit 0, ``1``/``100`` on stdout when accepted; null for the other problems), which the rewards and
the execute stage judge with (:mod:`evolvecoder_datasets.execution.checkers`). Ids are ``Codeforces_<contest><index>``
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

from .. import schema
from ..errors import SourceFormatError
from .base import adapt, checker_feature, empty_row, require_text

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


def unjudgeable_reason(row: dict[str, Any], *, with_checkers: bool = False) -> str | None:
    """Why this problem cannot be judged (by an exact stdout comparison, or with ``with_checkers`` by its
    ``generated_checker`` where it has one), or None when it can.

    Example:
        >>> unjudgeable_reason({"interaction_format": "Interact with the jury."})
        'interactive'
        >>> unjudgeable_reason({"generated_checker": "print(1)"}), unjudgeable_reason({"generated_checker": "x"},
        ...                                                                             with_checkers=True)
        ('checker', None)
    """
    if row.get("interaction_format"):
        return "interactive"
    if row.get("generated_checker") and not with_checkers:
        return "checker"
    if row.get("input_mode") not in (None, "", "stdio"):
        return "file_io"
    return None


def _is_judgeable(*values: Any, names: list[str], with_checkers: bool = False) -> bool:
    """``Dataset.filter`` body over only the columns that decide (the tests columns are large)."""
    return unjudgeable_reason(dict(zip(names, values)), with_checkers=with_checkers) is None


def _cases(value: Any, *, problem_id: str, column: str) -> list[tuple[str, str]]:
    """``[{"input", "output"}, ...]`` as checked ``(input, output)`` text pairs."""
    pairs = []
    for number, case in enumerate(value or []):
        stdin = case.get("input") if isinstance(case, dict) else None
        stdout = case.get("output") if isinstance(case, dict) else None
        if not isinstance(stdin, str) or not isinstance(stdout, str):
            raise SourceFormatError(
                f"Codeforces {problem_id}: {column}[{number}] needs text input and output, got {case!r:.80}"
            )
        pairs.append((stdin, stdout))
    return pairs


def _section(row: dict[str, Any], heading: str, column: str) -> list[str]:
    text = row.get(column)
    return [f"{heading}\n{text.strip()}"] if isinstance(text, str) and text.strip() else []


def _statement(row: dict[str, Any], examples: list[tuple[str, str]]) -> str:
    title = row.get("title")
    parts = [f"{title.strip()}\n"] if isinstance(title, str) and title.strip() else []
    parts.append(require_text(row, "description", stage="codeforces").strip())
    parts += _section(row, "Input", "input_format") + _section(row, "Output", "output_format")
    for number, (stdin, stdout) in enumerate(examples, start=1):
        parts.append(f"Example {number}\nInput\n{stdin.rstrip()}\nOutput\n{stdout.rstrip()}")
    return "\n\n".join(parts + _section(row, "Note", "note"))


def codeforces_row(row: dict[str, Any], index: int, *, with_checkers: bool = False) -> dict[str, Any]:
    """Convert one ``open-r1/codeforces`` record to a seed row.

    Official tests are used when present, the statement's examples otherwise (``official_tests`` is empty for
    problems whose tests Codeforces truncates). The rating is the difficulty.

    Args:
        row (`dict`): the record.
        index (`int`): its position (unused: ids come from the problem id).

    Raises:
        SourceFormatError: the record has no id or no statement, or an example or official test lacks a text
            input or output.

    Example:
        >>> record = {"id": "4/A", "title": "Watermelon", "description": "Split w.", "input_format": "w",
        ...           "output_format": "YES or NO", "examples": [{"input": "8\\n", "output": "YES\\n"}],
        ...           "official_tests": [], "rating": 800.0}
        >>> row = codeforces_row(record, 0)
        >>> row["id"], row["inputs"], row["difficulty"]
        ('Codeforces_4A', ['8\\n'], '800')
    """
    problem_id = require_text(row, "id", stage="codeforces")
    examples = _cases(row.get("examples"), problem_id=problem_id, column="examples")
    out = empty_row(f"{SOURCE}_{problem_id.replace('/', '')}", SOURCE, _statement(row, examples))
    official = _cases(row.get("official_tests"), problem_id=problem_id, column="official_tests")
    cases = official or examples
    out[schema.INPUTS] = [stdin for stdin, _ in cases]
    out[schema.OUTPUTS] = [stdout for _, stdout in cases]
    rating = row.get("rating")
    out[schema.DIFFICULTY] = str(int(rating)) if isinstance(rating, (int, float)) and math.isfinite(rating) else None
    if with_checkers:
        checker = row.get("generated_checker")
        if checker is not None and not isinstance(checker, str):
            raise SourceFormatError(f"Codeforces {problem_id}: generated_checker must be text, got {checker!r:.60}")
        out[schema.CHECKER] = {"source": checker, "language": "python", "contract": "codeforces"} if checker else None
    return out


def from_codeforces(
    ds: Dataset,
    *,
    judgeable_only: bool = True,
    with_checkers: bool = False,
    num_proc: int | None = None,
    on_error: str = "raise",
) -> Dataset:
    """Adapt ``open-r1/codeforces`` rows (default config).

    Args:
        ds (`datasets.Dataset`): Codeforces rows.
        judgeable_only (`bool`, defaults to `True`): drop interactive and file-I/O problems, and checker-judged
            ones unless ``with_checkers``.
        with_checkers (`bool`, defaults to `False`): keep checker-judged problems and add a ``checker`` column (the
            seed columns plus that one; :func:`~evolvecoder_datasets.sources.merge_sources` keeps the seed columns).
        num_proc (`int`, *optional*): processes for ``map``/``filter``.
        on_error (`str`, defaults to `"raise"`): ``"skip"`` leaves out rows that cannot be read, logging each
            reason, instead of raising at the first one.

    Raises:
        SchemaError: a column is missing.
        SourceFormatError: a row cannot be decoded (with ``on_error="raise"``).

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
                unjudgeable_reason(dict(zip(present, values)), with_checkers=with_checkers)
                for values in zip(*(ds[c] for c in present))
            )
            reasons.pop(None, None)
            if reasons:
                logger.info(
                    "codeforces: dropping %d unjudgeable problems %s", sum(reasons.values()), dict(reasons)
                )
            ds = ds.filter(
                _is_judgeable,
                input_columns=present,
                fn_kwargs={"names": present, "with_checkers": with_checkers},
                num_proc=num_proc,
                desc="codeforces: judgeable",
            )
    extra = {schema.CHECKER: checker_feature()} if with_checkers else None
    return adapt(
        ds,
        codeforces_row,
        required=CODEFORCES_COLUMNS,
        stage="codeforces",
        num_proc=num_proc,
        on_error=on_error,
        fn_kwargs={"with_checkers": with_checkers},
        extra_features=extra,
    )
