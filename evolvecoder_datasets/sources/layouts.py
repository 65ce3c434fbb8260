"""Seed rows from a local file in any known layout: the adapter is chosen by the columns the file has.

A user who downloaded TACO, APPS, CodeContests, Codeforces, PrimeIntellect, HumanEval or the EvolveCoder seed set
to a JSONL or Parquet file points the recipe at that file; :func:`adapt_layout` reads its columns and calls the one
adapter whose source columns are all there (rows already in the seed schema are kept as they are). Contest
layouts keep what their judge needs: CodeContests rows bring their time limit and labelled submissions (accepted
Python 3 and C++, incorrect ones as ``rejected``), Codeforces rows keep their checker-judged problems.

Example:
    >>> from datasets import Dataset
    >>> from evolvecoder_datasets.sources.layouts import adapt_layout, layout_of
    >>> taco = Dataset.from_list([{"question": "Print a + b.", "solutions": '["print(sum(map(int, input().split())))"]',
    ...                            "input_output": '{"inputs": ["1 2\\\\n"], "outputs": ["3\\\\n"]}',
    ...                            "difficulty": "EASY", "starter_code": ""}])
    >>> layout_of(taco.column_names)
    'taco'
    >>> adapt_layout(taco)[0]["outputs"]
    ['3\\n']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import SchemaError
from .apps import APPS_COLUMNS, TACO_COLUMNS
from .base import SEED_COLUMNS
from .code_contests import CODE_CONTESTS_COLUMNS
from .codeforces import CODEFORCES_COLUMNS
from .evolvecoder_seed import SEED_COLUMNS_READ
from .humaneval import HUMANEVAL_COLUMNS
from .primeintellect import PRIMEINTELLECT_COLUMNS

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["LAYOUTS", "adapt_layout", "layout_of"]

#: Each known layout and the columns that name it, most specific first (APPS before TACO: APPS adds
#: ``problem_id``; the seed schema before all: its rows are already adapted).
LAYOUTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("seed", SEED_COLUMNS),
    ("apps", APPS_COLUMNS),
    ("taco", TACO_COLUMNS),
    ("code_contests", CODE_CONTESTS_COLUMNS),
    ("codeforces", CODEFORCES_COLUMNS),
    ("primeintellect", PRIMEINTELLECT_COLUMNS),
    ("humaneval", HUMANEVAL_COLUMNS),
    ("evolvecoder_seed", SEED_COLUMNS_READ),
)


def layout_of(columns: Any) -> str:
    """The name of the first layout in :data:`LAYOUTS` whose columns ``columns`` all hold.

    Raises:
        SchemaError: no known layout fits; the message lists each layout's columns.

    Example:
        >>> layout_of(["description", "public_tests", "private_tests", "solutions", "difficulty", "name"])
        'code_contests'
    """
    have = set(columns)
    for name, needed in LAYOUTS:
        if have.issuperset(needed):
            return name
    known = "; ".join(f"{name}: {', '.join(needed)}" for name, needed in LAYOUTS)
    raise SchemaError(f"the columns {sorted(have)} fit no known seed layout ({known})")


def adapt_layout(ds: Dataset, *, on_error: str = "raise") -> Dataset:
    """``ds``'s rows as seed rows, through the adapter of its layout (:func:`layout_of`); seed rows are returned as
    they are.

    Args:
        ds (`datasets.Dataset`): rows in one of the :data:`LAYOUTS`.
        on_error (`str`, defaults to `"raise"`): passed to the adapter (``"skip"`` leaves unreadable rows out).

    Raises:
        SchemaError: the columns fit no known layout.
        SourceFormatError: a row cannot be read (with ``on_error="raise"``).

    Example:
        >>> from datasets import load_dataset
        >>> seeds = adapt_layout(load_dataset("json", data_files="taco_train.jsonl", split="train"))  # doctest: +SKIP
    """
    from . import apps, code_contests, codeforces, evolvecoder_seed, humaneval, primeintellect

    layout = layout_of(ds.column_names)
    if layout == "seed":
        return ds
    adapters = {
        "apps": lambda: apps.from_apps(ds, on_error=on_error),
        "taco": lambda: apps.from_taco(ds, on_error=on_error),
        "code_contests": lambda: code_contests.from_code_contests(ds, with_submissions=True, on_error=on_error),
        "codeforces": lambda: codeforces.from_codeforces(ds, with_checkers=True, on_error=on_error),
        "primeintellect": lambda: primeintellect.from_primeintellect(ds, on_error=on_error),
        "humaneval": lambda: humaneval.from_humaneval(ds, on_error=on_error),
        "evolvecoder_seed": lambda: evolvecoder_seed.from_evolvecoder_seed(ds, on_error=on_error),
    }
    return adapters[layout]()
