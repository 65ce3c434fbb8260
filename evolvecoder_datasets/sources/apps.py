"""APPS (``codeparrot/apps``) and TACO (``BAAI/TACO``): one layout, two adapters.

Both store ``solutions`` as a JSON list of Python programs and ``input_output`` as JSON
``{"inputs": [...], "outputs": [...], "fn_name"?: str}``. With ``fn_name`` the cases are call-based (argument
lists and return values) and become asserts on the function, through ``Solution()`` when the starter code
defines that class; without it they are stdin/stdout pairs and become ``inputs``/``outputs``.

Example:
    >>> from datasets import load_dataset
    >>> from evolvecoder_datasets.sources import from_taco
    >>> seeds = from_taco(load_dataset("BAAI/TACO", split="train"))  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import schema
from ..errors import SourceFormatError
from .base import adapt, add_input_output, empty_row, parse_structured, require_text

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

APPS_COLUMNS = ("problem_id", "question", "solutions", "input_output", "difficulty", "starter_code")
TACO_COLUMNS = ("question", "solutions", "input_output", "difficulty", "starter_code")

__all__ = ["apps_like_row", "from_apps", "from_taco"]


def apps_like_row(
    row: dict[str, Any],
    index: int,
    *,
    source: str,
    id_column: str | None = None,
    max_solutions: int | None = None,
) -> dict[str, Any]:
    """Convert one APPS/TACO record to a seed row.

    Args:
        row (`dict`): the record.
        index (`int`): its position; the id is ``<source>_<index>`` unless ``id_column`` names a column.
        source (`str`): ``"APPS"`` or ``"TACO"``.
        id_column (`str`, *optional*): column whose value numbers the id (APPS: ``problem_id``).
        max_solutions (`int`, *optional*): keep at most this many reference solutions.

    Raises:
        SourceFormatError: ``input_output`` or ``solutions`` cannot be decoded, or the cases are inconsistent
            (inputs and outputs of unequal length or not lists, a non-string ``fn_name``, a null payload).

    Example:
        >>> record = {"question": "Print the sum.", "solutions": '["print(sum(map(int, input().split())))"]',
        ...           "input_output": '{"inputs": ["1 2\\\\n"], "outputs": ["3\\\\n"]}', "difficulty": "EASY",
        ...           "starter_code": ""}
        >>> apps_like_row(record, 4, source="TACO")["outputs"]
        ['3\\n']
    """
    stage = source.lower()
    number = row.get(id_column) if id_column else index
    if number is None or (isinstance(number, str) and not number.strip()):
        raise SourceFormatError(f"{source} row {index}: {id_column!r} is empty, so the row has no stable id")
    out = empty_row(f"{source}_{number}", source, require_text(row, "question", stage=stage))
    out[schema.STARTER_CODE] = row.get("starter_code") or ""
    out[schema.DIFFICULTY] = str(row["difficulty"]) if row.get("difficulty") not in (None, "") else None

    solutions = parse_structured(row.get("solutions"), what=f"{source} solutions") or []
    if not isinstance(solutions, list):
        raise SourceFormatError(
            f"{source} row {number}: solutions must be a list, got {type(solutions).__name__}"
        )
    out[schema.SOLUTIONS] = [s for s in solutions if isinstance(s, str)][:max_solutions]

    cases = parse_structured(row.get("input_output"), what=f"{source} input_output") or {}
    if not isinstance(cases, dict):
        raise SourceFormatError(f"{source} row {number}: input_output must be an object")
    add_input_output(out, cases, what=f"{source} row {number} input_output")
    return out


def from_apps(
    ds: Dataset, *, max_solutions: int | None = None, num_proc: int | None = None, on_error: str = "raise"
) -> Dataset:
    """Adapt ``codeparrot/apps`` rows (ids ``APPS_<problem_id>``).

    Args:
        ds (`datasets.Dataset`): APPS rows (``problem_id``, ``question``, ``solutions``, ``input_output``,
            ``difficulty``, ``url``, ``starter_code``).
        max_solutions (`int`, *optional*): keep at most this many reference solutions per problem.
        num_proc (`int`, *optional*): processes for ``map``.
        on_error (`str`, defaults to `"raise"`): ``"skip"`` leaves out rows that cannot be read, logging each
            reason, instead of raising at the first one.

    Raises:
        SchemaError: a column is missing.
        SourceFormatError: a row cannot be decoded (with ``on_error="raise"``).

    Example:
        >>> from datasets import load_dataset
        >>> from evolvecoder_datasets.sources import from_apps
        >>> seeds = from_apps(load_dataset("codeparrot/apps", split="train"))  # doctest: +SKIP
    """
    return adapt(
        ds,
        apps_like_row,
        required=APPS_COLUMNS,
        stage="apps",
        num_proc=num_proc,
        on_error=on_error,
        fn_kwargs={"source": "APPS", "id_column": "problem_id", "max_solutions": max_solutions},
    )


def from_taco(
    ds: Dataset, *, max_solutions: int | None = None, num_proc: int | None = None, on_error: str = "raise"
) -> Dataset:
    """Adapt ``BAAI/TACO`` rows (ids ``TACO_<row index>``, as in the released EvolveCoder data).

    Args:
        ds (`datasets.Dataset`): TACO rows (``question``, ``solutions``, ``starter_code``, ``input_output``,
            ``difficulty``, and TACO's metadata columns, which are dropped).
        max_solutions (`int`, *optional*): keep at most this many reference solutions per problem.
        num_proc (`int`, *optional*): processes for ``map``.
        on_error (`str`, defaults to `"raise"`): ``"skip"`` leaves out rows that cannot be read, logging each
            reason, instead of raising at the first one.

    Raises:
        SchemaError: a column is missing.
        SourceFormatError: a row cannot be decoded (with ``on_error="raise"``).

    Example:
        >>> from datasets import load_dataset
        >>> from evolvecoder_datasets.sources import from_taco
        >>> seeds = from_taco(load_dataset("BAAI/TACO", split="train"), max_solutions=8)  # doctest: +SKIP
    """
    return adapt(
        ds,
        apps_like_row,
        required=TACO_COLUMNS,
        stage="taco",
        num_proc=num_proc,
        on_error=on_error,
        fn_kwargs={"source": "TACO", "id_column": None, "max_solutions": max_solutions},
    )
