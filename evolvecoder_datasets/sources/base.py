"""The common seed-row schema and the helpers every source adapter shares.

A seed row is a problem in one layout whatever its origin:

| column | type | meaning |
|---|---|---|
| ``id`` | string | ``<SOURCE>_<n>``, e.g. ``TACO_12`` |
| ``source`` | string | seed dataset name (``HumanEval``, ``LeetCode``, ``TACO``, ...) |
| ``question`` | string | problem statement as the source gives it |
| ``tests`` | list[string] | independent Python test snippets (``assert ...``) for call-based problems |
| ``inputs`` / ``outputs`` | list[string] | stdin and expected stdout, pairwise, for stdin/stdout problems |
| ``solutions`` | list[string] | reference solutions (Python only) |
| ``starter_code`` | string | signature or class skeleton to complete (may be empty) |
| ``entry_point`` | string or null | the function (or class) the tests call |
| ``difficulty`` | string or null | the source's own difficulty label |

Example:
    >>> from evolvecoder_datasets.sources.base import SEED_COLUMNS, call_assert
    >>> SEED_COLUMNS[:3]
    ('id', 'source', 'question')
    >>> call_assert("add", [1, 2], 3)
    'assert add(1, 2) == 3'
"""

from __future__ import annotations

import ast
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import schema
from ..errors import SourceFormatError

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

STARTER_CODE = "starter_code"
ENTRY_POINT = "entry_point"
DIFFICULTY = "difficulty"

SEED_COLUMNS = (
    schema.ID,
    schema.SOURCE,
    schema.QUESTION,
    schema.TESTS,
    schema.INPUTS,
    schema.OUTPUTS,
    schema.SOLUTIONS,
    STARTER_CODE,
    ENTRY_POINT,
    DIFFICULTY,
)

__all__ = [
    "SEED_COLUMNS",
    "adapt",
    "add_input_output",
    "as_text_block",
    "call_assert",
    "call_based_tests",
    "check_seed_rows",
    "empty_row",
    "parse_structured",
    "require_text",
    "seed_features",
    "strip_code_fences",
]


def seed_features():
    """``datasets.Features`` of seed rows (imports ``datasets`` lazily).

    Example:
        >>> from evolvecoder_datasets.sources import seed_features
        >>> list(seed_features())[:4]
        ['id', 'source', 'question', 'tests']
    """
    from datasets import Features, List, Value

    return Features(
        {
            schema.ID: Value("string"),
            schema.SOURCE: Value("string"),
            schema.QUESTION: Value("string"),
            schema.TESTS: List(Value("string")),
            schema.INPUTS: List(Value("string")),
            schema.OUTPUTS: List(Value("string")),
            schema.SOLUTIONS: List(Value("string")),
            STARTER_CODE: Value("string"),
            ENTRY_POINT: Value("string"),
            DIFFICULTY: Value("string"),
        }
    )


def empty_row(row_id: str, source: str, question: str) -> dict[str, Any]:
    """A seed row with every list empty and every optional field unset.

    Args:
        row_id (`str`): the ``<SOURCE>_<n>`` id.
        source (`str`): the seed dataset name.
        question (`str`): the problem statement.

    Example:
        >>> empty_row("X_0", "X", "Add two numbers.")["tests"]
        []
    """
    return {
        schema.ID: row_id,
        schema.SOURCE: source,
        schema.QUESTION: question,
        schema.TESTS: [],
        schema.INPUTS: [],
        schema.OUTPUTS: [],
        schema.SOLUTIONS: [],
        STARTER_CODE: "",
        ENTRY_POINT: None,
        DIFFICULTY: None,
    }


def adapt(
    ds: Dataset,
    convert: Callable[..., dict[str, Any]],
    *,
    required: Sequence[str],
    stage: str,
    num_proc: int | None = None,
    fn_kwargs: Mapping[str, Any] | None = None,
) -> Dataset:
    """Map a source ``Dataset`` to seed rows with ``convert(row, index, **fn_kwargs)``.

    Runs as one fingerprinted ``Dataset.map`` (cached like any other), drops the source's own columns and casts
    to :func:`seed_features`.

    Args:
        ds (`datasets.Dataset`): rows in the source's layout.
        convert (`Callable`): module-level function ``(row, index, **kwargs) -> seed row``.
        required (`Sequence[str]`): source columns ``convert`` reads.
        stage (`str`): adapter name, for error messages.
        num_proc (`int`, *optional*): processes for ``map``.
        fn_kwargs (`Mapping`, *optional*): extra keyword arguments for ``convert``.

    Raises:
        SchemaError: a required source column is missing.
        SourceFormatError: a row cannot be read (raised by ``convert``).

    Example:
        >>> from datasets import Dataset
        >>> def convert(row, index):
        ...     return empty_row(f"X_{index}", "X", row["text"])
        >>> list(adapt(Dataset.from_dict({"text": ["a"]}), convert, required=["text"], stage="x")["id"])
        ['X_0']
    """
    schema.check_columns(ds.column_names, required, stage=stage)
    return ds.map(
        convert,
        with_indices=True,
        remove_columns=ds.column_names,
        features=seed_features(),
        fn_kwargs=dict(fn_kwargs or {}),
        num_proc=num_proc,
        desc=f"adapting {stage}",
    )


def parse_structured(value: Any, *, what: str) -> Any:
    """Decode a field that sources store as JSON text (or a Python literal) and others as a nested value.

    ``None`` and empty strings decode to ``None``.

    Args:
        value (`Any`): the raw field.
        what (`str`): field name, for the error message.

    Raises:
        SourceFormatError: the text is neither JSON nor a Python literal.

    Example:
        >>> parse_structured('{"inputs": ["1\\\\n"], "outputs": ["2\\\\n"]}', what="input_output")["inputs"]
        ['1\\n']
    """
    if value is None:
        return None
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError) as err:
        raise SourceFormatError(f"{what} is neither JSON nor a Python literal: {text[:80]!r}") from err


def as_text_block(value: Any) -> str:
    """Stdin/stdout payloads arrive as a string or as a list of lines; return one string.

    Example:
        >>> as_text_block(["1 2", "3"])
        '1 2\\n3\\n'
    """
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return "".join(line if str(line).endswith("\n") else f"{line}\n" for line in map(str, value))
    return str(value)


def strip_code_fences(text: str | None) -> str:
    """Remove one surrounding Markdown code fence (```python ... ```), if present.

    Example:
        >>> strip_code_fences("```python\\nprint(1)\\n```")
        'print(1)'
    """
    if not text:
        return ""
    body = text.strip()
    if body.startswith("```"):
        first_newline = body.find("\n")
        body = body[first_newline + 1 :] if first_newline != -1 else ""
        if body.rstrip().endswith("```"):
            body = body.rstrip()[:-3]
    return body.strip("\n")


def _literal(value: Any) -> str:
    """Python source for a JSON-decoded value (floats that are not finite need a call)."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(_literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def call_assert(callee: str, args: Sequence[Any], expected: Any) -> str:
    """One ``assert callee(*args) == expected`` line with the values written as Python literals.

    Args:
        callee (`str`): the call target, e.g. ``"add"`` or ``"Solution().maxProfit"``.
        args (`Sequence`): positional arguments.
        expected (`Any`): the expected return value.

    Example:
        >>> call_assert("Solution().f", [[1, 2], "x"], None)
        "assert Solution().f([1, 2], 'x') == None"
    """
    return f"assert {callee}({', '.join(_literal(a) for a in args)}) == {_literal(expected)}"


def call_based_tests(
    fn_name: str,
    inputs: Iterable[Any],
    outputs: Iterable[Any],
    *,
    starter_code: str = "",
) -> list[str]:
    """Turn APPS/TACO-style call-based cases into asserts on ``fn_name``.

    The APPS convention stores each argument list in ``inputs`` and each return value wrapped in a one-element
    list in ``outputs``; the reference judge accepts either ``outputs[i]`` or ``outputs[i][0]``. When every
    output of a problem is a one-element list the wrapper is removed, otherwise outputs are used as they are.
    When the starter code defines ``class Solution``, the call goes through ``Solution()``.

    Args:
        fn_name (`str`): function (or method) name the judge calls.
        inputs (`Iterable`): one argument list per case (a single non-list value is one argument).
        outputs (`Iterable`): one expected value per case.
        starter_code (`str`, defaults to `""`): the problem's starter code.

    Raises:
        SourceFormatError: ``inputs`` and ``outputs`` differ in length.

    Example:
        >>> call_based_tests("double", [[2], [5]], [[4], [10]])
        ['assert double(2) == 4', 'assert double(5) == 10']
    """
    inputs, outputs = list(inputs), list(outputs)
    if len(inputs) != len(outputs):
        raise SourceFormatError(f"{len(inputs)} inputs but {len(outputs)} outputs for {fn_name!r}")
    wrapped = bool(outputs) and all(isinstance(o, list) and len(o) == 1 for o in outputs)
    callee = f"Solution().{fn_name}" if "class Solution" in (starter_code or "") else fn_name
    tests = []
    for args, expected in zip(inputs, outputs):
        args = args if isinstance(args, (list, tuple)) else [args]
        tests.append(call_assert(callee, args, expected[0] if wrapped else expected))
    return tests


def add_input_output(out: dict[str, Any], cases: Mapping[str, Any]) -> None:
    """Put an APPS-style ``input_output`` object (``{"inputs", "outputs", "fn_name"?}``) into a seed row.

    With ``fn_name`` the cases become asserts appended to ``out["tests"]`` (through ``Solution()`` when
    ``out["starter_code"]`` defines that class) and ``fn_name`` becomes the entry point; without it they are
    stdin/stdout pairs written to ``out["inputs"]`` and ``out["outputs"]``.

    Args:
        out (`dict`): the seed row being built (see :func:`empty_row`); changed in place.
        cases (`Mapping`): the decoded ``input_output`` object.

    Raises:
        SourceFormatError: call-based ``inputs`` and ``outputs`` differ in length.

    Example:
        >>> row = empty_row("X_0", "X", "Double x.")
        >>> add_input_output(row, {"inputs": [[2]], "outputs": [[4]], "fn_name": "double"})
        >>> row["tests"], row["entry_point"]
        (['assert double(2) == 4'], 'double')
    """
    inputs, outputs = cases.get("inputs") or [], cases.get("outputs") or []
    fn_name = cases.get("fn_name")
    if fn_name:
        out[schema.TESTS] += call_based_tests(fn_name, inputs, outputs, starter_code=out[STARTER_CODE])
        out[ENTRY_POINT] = fn_name
    else:
        out[schema.INPUTS] = [as_text_block(x) for x in inputs]
        out[schema.OUTPUTS] = [as_text_block(x) for x in outputs]


def require_text(row: Mapping[str, Any], column: str, *, stage: str) -> str:
    """The non-empty string in ``row[column]``, or :class:`SourceFormatError`.

    Example:
        >>> require_text({"q": "x"}, "q", stage="apps")
        'x'
    """
    value = row.get(column)
    if not isinstance(value, str) or not value.strip():
        raise SourceFormatError(f"{stage}: column {column!r} must be a non-empty string, got {value!r:.60}")
    return value


def check_seed_rows(ds: Dataset) -> None:
    """Raise :class:`SchemaError` unless ``ds`` has every seed column.

    Example:
        >>> from datasets import Dataset
        >>> check_seed_rows(Dataset.from_dict({"id": ["x"]}))
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.errors.SchemaError: stage 'seed rows' needs column(s) ['source', 'question', 'tests', 'inputs', 'outputs', 'solutions', 'starter_code', 'entry_point', 'difficulty']; got ['id']
    """
    schema.check_columns(ds.column_names, SEED_COLUMNS, stage="seed rows")
