"""Checks of what a stage receives: per-row cells of a batch and the values of a stage config.

Each raises a typed error that names the stage, column, row or setting, so a bad input stops with one line.

Example:
    >>> from evolvecoder_datasets.checks import check_fraction
    >>> check_fraction("min_pass_rate", 0.1)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from . import schema
from .errors import ConfigError, SchemaError

__all__ = ["check_fraction", "check_list_cells", "check_on_llm_error", "check_positive", "check_text_cells"]


def _row_label(batch: Mapping[str, Any], i: int) -> str:
    ids = batch.get(schema.ID)
    return f"row {i} (id {ids[i]!r})" if ids is not None and i < len(ids) else f"row {i}"


def check_list_cells(
    batch: Mapping[str, Any],
    column: str,
    *,
    stage: str,
    items: str = "text",
    rows: Iterable[int] | None = None,
) -> None:
    """Raise :class:`SchemaError` naming ``column`` and the row when a cell is not a list of the expected items.

    A missing column and a ``None`` cell pass (the stages treat them as empty). A plain string is refused: iterated,
    it would silently become one test (or program) per character.

    Args:
        batch (`Mapping[str, Any]`): the batch a stage received.
        column (`str`): the column to check.
        stage (`str`): the stage name, for the message.
        items (`str`, defaults to ``"text"``): ``"text"`` (every item a string) or ``"solutions"`` (every item a
            string, ``None``, or a mapping whose ``code`` is a string or ``None``).
        rows (`Iterable[int]`, *optional*): only these rows (default: all).

    Raises:
        SchemaError: a cell is not a list, or holds an item of the wrong type.

    Example:
        >>> check_list_cells({"id": ["X_1"], "tests": [["assert f() == 1"]]}, "tests", stage="execute")
        >>> check_list_cells({"id": ["X_1"], "tests": ["assert f() == 1"]}, "tests", stage="execute")
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.errors.SchemaError: stage 'execute': column 'tests' must hold a list per row, got str in row 0 (id 'X_1')
    """
    cells = batch.get(column)
    if cells is None:
        return
    for i in range(len(cells)) if rows is None else rows:
        cell = cells[i]
        if cell is None:
            continue
        if isinstance(cell, (str, bytes, Mapping)) or not isinstance(cell, (Sequence, np.ndarray)):
            raise SchemaError(f"stage {stage!r}: column {column!r} must hold a list per row, got "
                              f"{type(cell).__name__} in {_row_label(batch, i)}")
        for k, item in enumerate(cell):
            if isinstance(item, str):
                continue
            if items == "solutions" and (item is None or (isinstance(item, Mapping)
                                                          and isinstance(item.get("code") or "", str))):
                continue
            raise SchemaError(f"stage {stage!r}: column {column!r} item {k} of {_row_label(batch, i)} must be a "
                              f"{'program' if items == 'solutions' else 'string'}, got {type(item).__name__}")


def check_text_cells(batch: Mapping[str, Any], column: str, *, stage: str, rows: Iterable[int] | None = None) -> None:
    """Raise :class:`SchemaError` naming ``column`` and the row when a cell is not a string (``None`` included).

    Example:
        >>> check_text_cells({"id": ["X_1"], "question": [None]}, "question", stage="sample")
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.errors.SchemaError: stage 'sample': column 'question' must hold a string, got NoneType in row 0 (id 'X_1')
    """
    cells = batch.get(column)
    if cells is None:
        return
    for i in range(len(cells)) if rows is None else rows:
        if not isinstance(cells[i], str):
            raise SchemaError(f"stage {stage!r}: column {column!r} must hold a string, got "
                              f"{type(cells[i]).__name__} in {_row_label(batch, i)}")


def check_fraction(name: str, value: float) -> None:
    """Raise :class:`ConfigError` unless ``0 <= value <= 1``.

    Example:
        >>> check_fraction("hide_below", 1.5)
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.errors.ConfigError: hide_below must lie in [0, 1], got 1.5
    """
    if not 0.0 <= float(value) <= 1.0:
        raise ConfigError(f"{name} must lie in [0, 1], got {value!r}")


def check_positive(name: str, value: int, *, minimum: int = 1) -> None:
    """Raise :class:`ConfigError` unless ``value`` is an integer ``>= minimum``.

    Example:
        >>> check_positive("min_tests", 0, minimum=0)
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{name} must be an integer >= {minimum}, got {value!r}")


def check_on_llm_error(value: str) -> None:
    """Raise :class:`ConfigError` unless ``value`` is ``"raise"`` or ``"record"``.

    Example:
        >>> check_on_llm_error("record")
    """
    if value not in ("raise", "record"):
        raise ConfigError(f"on_llm_error must be 'raise' or 'record', got {value!r}")
