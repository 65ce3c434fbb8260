"""CodeContests (``deepmind/code_contests``): stdin/stdout problems with public, private and generated tests.

Solutions come as parallel lists ``solutions.language`` / ``solutions.solution``; only ``PYTHON3`` (3) programs
are kept (``PYTHON`` (1) is Python 2); exports that write the language as its name (``"PYTHON3"``) work
too. ``difficulty`` is an enum index, written out by name.

``with_submissions=True`` keeps what a contest judge would: the row's ``time_limit_s`` and ``language``
(``python``), and a ``submissions`` column of labelled programs as a problem package has them
(``{verdict, language, path, source}``): the accepted Python 3 and C++ solutions (``accepted``) and the
``incorrect_solutions`` (``rejected``: the dataset does not say which verdict). A problem with only C++ solutions
then still has a reference (the recipe takes an accepted C++ submission when no Python one passes).

Example:
    >>> from datasets import load_dataset
    >>> from evolvecoder_datasets.sources import from_code_contests
    >>> seeds = from_code_contests(load_dataset("deepmind/code_contests", split="train"))  # doctest: +SKIP
"""

from __future__ import annotations

import string
from typing import TYPE_CHECKING, Any

from .. import schema
from ..errors import SourceFormatError
from .base import adapt, empty_row, require_text

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

SOURCE = "CodeContests"
CODE_CONTESTS_COLUMNS = ("description", "public_tests", "private_tests", "solutions", "difficulty")
PYTHON3 = 3
CPP = 2
# The judge languages a kept submission may be in, by the dataset's enum and by name.
_SUBMISSION_LANGUAGES = {PYTHON3: "python", "PYTHON3": "python", CPP: "cpp", "CPP": "cpp"}
# The dataset's Difficulty enum: named levels, then Codeforces-style letters A (7) .. V (28).
DIFFICULTY_NAMES = ("UNKNOWN_DIFFICULTY", "EASY", "MEDIUM", "HARD", "HARDER", "HARDEST", "EXTERNAL") + tuple(
    string.ascii_uppercase[:22]
)

__all__ = ["DIFFICULTY_NAMES", "SOURCE", "code_contests_row", "from_code_contests"]


def _pairs(tests: Any, which: str, index: int) -> tuple[list[str], list[str]]:
    if not tests:
        return [], []
    where = f"CodeContests row {index} {which}"
    if not isinstance(tests, dict):
        raise SourceFormatError(f"{where}: expected {{'input': [...], 'output': [...]}}, got {tests!r:.60}")
    inputs, outputs = list(tests.get("input") or []), list(tests.get("output") or [])
    if len(inputs) != len(outputs):
        raise SourceFormatError(f"{where}: {len(inputs)} inputs but {len(outputs)} outputs")
    if not all(isinstance(text, str) for text in inputs + outputs):
        raise SourceFormatError(f"{where}: every input and output must be text (found a null or non-string)")
    return inputs, outputs


def code_contests_row(row: dict[str, Any], index: int, *, include_generated: bool = False,
                      with_submissions: bool = False) -> dict[str, Any]:
    """Convert one CodeContests record to a seed row (id ``CodeContests_<index>``).

    Args:
        row (`dict`): the record.
        index (`int`): its position.
        include_generated (`bool`, defaults to `False`): also keep ``generated_tests`` (often hundreds).
        with_submissions (`bool`, defaults to `False`): add ``time_limit_s``, ``language`` and ``submissions``
            (see the module docstring).

    Raises:
        SourceFormatError: a test set is not an ``{input, output}`` object, its lists differ in length, or
            they hold a null or non-string case.

    Example:
        >>> record = {"description": "Echo.", "public_tests": {"input": ["1\\n"], "output": ["1\\n"]},
        ...           "private_tests": {"input": [], "output": []},
        ...           "solutions": {"language": [3, 2], "solution": ["print(input())", "int main(){}"]},
        ...           "difficulty": 7}
        >>> row = code_contests_row(record, 0)
        >>> row["solutions"], row["difficulty"]
        (['print(input())'], 'A')
    """
    out = empty_row(f"{SOURCE}_{index}", SOURCE, require_text(row, "description", stage="code_contests"))
    inputs, outputs = [], []
    kinds = ["public_tests", "private_tests"] + (["generated_tests"] if include_generated else [])
    for kind in kinds:
        more_in, more_out = _pairs(row.get(kind), kind, index)
        inputs += more_in
        outputs += more_out
    out[schema.INPUTS], out[schema.OUTPUTS] = inputs, outputs
    solutions = row.get("solutions") or {}
    languages, programs = solutions.get("language") or [], solutions.get("solution") or []
    out[schema.SOLUTIONS] = [
        code
        for lang, code in zip(languages, programs)
        if lang in (PYTHON3, "PYTHON3") and isinstance(code, str)
    ]
    level = row.get("difficulty")
    if isinstance(level, int) and 0 <= level < len(DIFFICULTY_NAMES):
        out[schema.DIFFICULTY] = DIFFICULTY_NAMES[level]
    elif level is not None:
        out[schema.DIFFICULTY] = str(level)
    if with_submissions:
        out[schema.TIME_LIMIT] = _seconds(row.get("time_limit"))
        out[schema.LANGUAGE] = "python"
        out["submissions"] = _labelled(row.get("solutions"), "accepted") + _labelled(
            row.get("incorrect_solutions"), "rejected")
    return out


def _seconds(limit: Any) -> float | None:
    """A ``{seconds, nanos}`` time limit in seconds (``None`` when absent or zero)."""
    if not isinstance(limit, dict):
        return None
    total = float(limit.get("seconds") or 0) + float(limit.get("nanos") or 0) / 1e9
    return total or None


def _labelled(programs: Any, verdict: str) -> list[dict[str, str]]:
    """The Python 3 and C++ programs of a ``{language, solution}`` set as labelled submissions."""
    programs = programs if isinstance(programs, dict) else {}
    out = []
    for k, (lang, code) in enumerate(zip(programs.get("language") or [], programs.get("solution") or [])):
        name = _SUBMISSION_LANGUAGES.get(lang)
        if name is not None and isinstance(code, str):
            out.append({"verdict": verdict, "language": name, "path": f"{verdict}/{k}", "source": code})
    return out


def from_code_contests(
    ds: Dataset, *, include_generated: bool = False, with_submissions: bool = False, num_proc: int | None = None,
    on_error: str = "raise"
) -> Dataset:
    """Adapt ``deepmind/code_contests`` rows.

    Args:
        ds (`datasets.Dataset`): CodeContests rows.
        include_generated (`bool`, defaults to `False`): also keep the generated tests.
        with_submissions (`bool`, defaults to `False`): add the contest columns ``time_limit_s``, ``language`` and
            ``submissions`` (accepted Python 3 and C++ solutions, and the incorrect ones as ``rejected``).
        num_proc (`int`, *optional*): processes for ``map``.
        on_error (`str`, defaults to `"raise"`): ``"skip"`` leaves out rows that cannot be read, logging each
            reason, instead of raising at the first one.

    Raises:
        SchemaError: a column is missing.
        SourceFormatError: a row cannot be decoded (with ``on_error="raise"``).

    Example:
        >>> from datasets import load_dataset
        >>> from evolvecoder_datasets.sources import from_code_contests
        >>> seeds = from_code_contests(load_dataset("deepmind/code_contests", split="valid"))  # doctest: +SKIP
    """
    return adapt(
        ds,
        code_contests_row,
        required=CODE_CONTESTS_COLUMNS,
        stage="code_contests",
        num_proc=num_proc,
        on_error=on_error,
        fn_kwargs={"include_generated": include_generated, "with_submissions": with_submissions},
        extra_features=_contest_features() if with_submissions else None,
    )


def _contest_features() -> dict:
    from .exact import contest_features

    extra = contest_features()
    return {name: extra[name] for name in (schema.TIME_LIMIT, schema.LANGUAGE, "submissions")}
