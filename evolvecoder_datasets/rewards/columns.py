"""How a row's test columns become jobs: assert lists, or stdin/stdout cases in any of the layouts datasets use.

Example:
    >>> from evolvecoder_datasets.rewards.columns import _stdio_cases
    >>> _stdio_cases({"inputs": ["1\\n"], "outputs": ["1\\n"]}, "tests")
    ([], ['1\\n'], ['1\\n'])
"""

from __future__ import annotations

from typing import Any

from ..errors import SchemaError


def _as_list(value: Any, column: str, *, code: bool = False) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (str, bytes, dict)):
        raise SchemaError(f"column {column!r} must hold a list of strings per row, got a single {type(value).__name__}")
    items = list(value)
    if not code:  # stdin/stdout texts are compared, not run: a number or a list of lines reads as its text
        return [_case_text(item) for item in items]
    for item in items:
        if not isinstance(item, str):
            # str() of a dict, a number or None is an expression statement that always "passes": refuse it.
            raise SchemaError(f"column {column!r} must hold strings, got a {type(item).__name__}: {str(item)[:80]}")
    return items


def _case_text(value: Any) -> str:
    return value if isinstance(value, str) else "\n".join(map(str, value)) if isinstance(value, list) else str(value)


def _stdio_cases(value: Any, column: str) -> tuple[list[str], list[str], list[str]]:
    """``(asserts, inputs, outputs)`` of one row's tests value.

    Assert strings come back as the first list. Stdin/stdout cases stored in the tests column, as lists of
    ``{"input": ..., "output": ...}`` or as one ``{"inputs": [...], "outputs": [...]}`` (the APPS layout), come back
    as the other two.

    Example:
        >>> _stdio_cases([{"input": "1\\n", "output": "2\\n"}], "tests")
        ([], ['1\\n'], ['2\\n'])
    """
    if isinstance(value, dict):
        if "inputs" in value and "outputs" in value:
            ins, outs = value["inputs"] or [], value["outputs"] or []
            return [], [_case_text(x) for x in ins], [_case_text(x) for x in outs]
        raise SchemaError(f"column {column!r} holds a dict without 'inputs'/'outputs' lists: {str(value)[:80]}")
    if value is not None and not isinstance(value, (str, bytes)):
        items = list(value)
        if items and all(isinstance(item, dict) for item in items):
            if not all("input" in item and "output" in item for item in items):
                raise SchemaError(f"column {column!r} holds dicts without 'input'/'output' keys: {str(items[0])[:80]}")
            return [], [_case_text(item["input"]) for item in items], [_case_text(item["output"]) for item in items]
        value = items
    return _as_list(value, column, code=True), [], []


def _case_options(value: Any) -> dict[str, Any]:
    """``checker``, ``language`` and ``float_tol`` carried beside stdin/stdout cases in a tests value
    (``{"inputs": [...], "outputs": [...], "language": "cpp", ...}``, as verl's ``ground_truth`` and the reward
    service's ``tests`` carry them); ``{}`` for any other value.

    Example:
        >>> _case_options({"inputs": ["1"], "outputs": ["1"], "language": "cpp"})
        {'language': 'cpp'}
        >>> _case_options(["assert f() == 1"])
        {}
    """
    if not isinstance(value, dict):
        return {}
    return {key: value[key] for key in ("checker", "language", "float_tol") if value.get(key) is not None}

