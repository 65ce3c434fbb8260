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
import logging
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import schema
from ..chat import fenced_blocks
from ..errors import ConfigError, SourceFormatError

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

logger = logging.getLogger(__name__)

SEED_COLUMNS = (
    schema.ID,
    schema.SOURCE,
    schema.QUESTION,
    schema.TESTS,
    schema.INPUTS,
    schema.OUTPUTS,
    schema.SOLUTIONS,
    schema.STARTER_CODE,
    schema.ENTRY_POINT,
    schema.DIFFICULTY,
)

__all__ = [
    "ON_ERROR",
    "SEED_COLUMNS",
    "adapt",
    "add_input_output",
    "as_text_block",
    "call_assert",
    "call_based_tests",
    "case_lists",
    "checker_feature",
    "check_seed_rows",
    "empty_row",
    "parse_structured",
    "require_text",
    "seed_features",
    "stdio_text",
    "strip_code_fences",
]


def checker_feature() -> dict:
    """The ``datasets`` type of a ``checker`` cell: ``{source, language, contract}`` (or null; see
    :class:`~evolvecoder_datasets.execution.checkers.Checker`).

    Example:
        >>> sorted(checker_feature())
        ['contract', 'language', 'source']
    """
    from datasets import Value

    return {"source": Value("string"), "language": Value("string"), "contract": Value("string")}


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
            schema.STARTER_CODE: Value("string"),
            schema.ENTRY_POINT: Value("string"),
            schema.DIFFICULTY: Value("string"),
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
        schema.STARTER_CODE: "",
        schema.ENTRY_POINT: None,
        schema.DIFFICULTY: None,
    }


ON_ERROR = ("raise", "skip")


def adapt(
    ds: Dataset,
    convert: Callable[..., dict[str, Any]],
    *,
    required: Sequence[str],
    stage: str,
    num_proc: int | None = None,
    fn_kwargs: Mapping[str, Any] | None = None,
    on_error: str = "raise",
    extra_features: Mapping[str, Any] | None = None,
) -> Dataset:
    """Map a source ``Dataset`` to seed rows with ``convert(row, index, **fn_kwargs)``.

    ``extra_features`` adds columns past the seed schema (``convert`` fills them; a Codeforces row's ``checker``).

    Runs as one fingerprinted ``Dataset.map`` (cached like any other), drops the source's own columns and casts
    to :func:`seed_features`. With ``on_error="skip"``, rows that ``convert`` refuses are left out and each is
    logged (a warning with the count and the first reasons) instead of stopping the whole load.

    Args:
        ds (`datasets.Dataset`): rows in the source's layout.
        convert (`Callable`): module-level function ``(row, index, **kwargs) -> seed row``.
        required (`Sequence[str]`): source columns ``convert`` reads.
        stage (`str`): adapter name, for error messages.
        num_proc (`int`, *optional*): processes for ``map``.
        fn_kwargs (`Mapping`, *optional*): extra keyword arguments for ``convert``.
        on_error (`str`, defaults to `"raise"`): ``"raise"`` stops at the first unreadable row with its
            :class:`SourceFormatError`; ``"skip"`` drops such rows and logs why.

    Raises:
        SchemaError: a required source column is missing.
        ConfigError: ``on_error`` is not ``"raise"`` or ``"skip"``.
        SourceFormatError: a row cannot be read (raised by ``convert``), or a converted row holds text that
            is not valid Unicode (a lone surrogate decoded from JSON), which Arrow cannot store; only with
            ``on_error="raise"``.

    Example:
        >>> from datasets import Dataset
        >>> def convert(row, index):
        ...     return empty_row(f"X_{index}", "X", row["text"])
        >>> list(adapt(Dataset.from_dict({"text": ["a"]}), convert, required=["text"], stage="x")["id"])
        ['X_0']
    """
    if on_error not in ON_ERROR:
        raise ConfigError(f"on_error must be one of {ON_ERROR}, got {on_error!r}")
    schema.check_columns(ds.column_names, required, stage=stage)
    features = seed_features()
    features.update(extra_features or {})
    if on_error == "skip":
        from datasets import Value

        features[schema.SKIP_REASON] = Value("string")
    converted = ds.map(
        _convert_checked,
        with_indices=True,
        remove_columns=ds.column_names,
        features=features,
        fn_kwargs={
            "_convert": convert,
            "_stage": stage,
            "_skip": on_error == "skip",
            "_extra": tuple(extra_features or ()),
            **dict(fn_kwargs or {}),
        },
        num_proc=num_proc,
        desc=f"adapting {stage}",
    )
    if on_error == "raise":
        return converted
    reasons = [r for r in converted[schema.SKIP_REASON] if r is not None]
    if reasons:
        logger.warning(
            "%s: skipped %d of %d rows that cannot be adapted, e.g. %s",
            stage,
            len(reasons),
            len(converted),
            "; ".join(reasons[:3]),
        )
        converted = converted.filter(
            _not_skipped, input_columns=schema.SKIP_REASON, num_proc=num_proc, desc=f"{stage}: skipping bad rows"
        )
    return converted.remove_columns(schema.SKIP_REASON)


def _not_skipped(reason: str | None) -> bool:
    return reason is None


def _convert_checked(
    row: dict[str, Any],
    index: int,
    *,
    _convert: Callable[..., dict[str, Any]],
    _stage: str,
    _skip: bool = False,
    _extra: Sequence[str] = (),
    **kwargs: Any,
) -> dict[str, Any]:
    """Run ``convert``; with ``_skip``, turn a :class:`SourceFormatError` into a placeholder row that carries
    the reason in :data:`schema.SKIP_REASON` (``adapt`` filters it out)."""
    if not _skip:
        return _convert_strict(row, index, _convert=_convert, _stage=_stage, **kwargs)
    try:
        out = _convert_strict(row, index, _convert=_convert, _stage=_stage, **kwargs)
    except SourceFormatError as err:
        out = empty_row(f"{_stage}_skipped_{index}", _stage, "")
        out.update(dict.fromkeys(_extra))  # the adapter's own columns (``extra_features``), dropped with the row
        out[schema.SKIP_REASON] = f"row {index}: {err}"
        return out
    out[schema.SKIP_REASON] = None
    return out


def _convert_strict(
    row: dict[str, Any], index: int, *, _convert: Callable[..., dict[str, Any]], _stage: str, **kwargs: Any
) -> dict[str, Any]:
    """Run ``convert`` and refuse a row Arrow cannot store, naming it (a lone surrogate decoded from JSON text
    such as ``"\\ud800"`` would otherwise fail deep inside the ``datasets`` writer with no row named)."""
    out = _convert(row, index, **kwargs)
    for column, value in out.items():
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str):
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError as err:
                    raise SourceFormatError(
                        f"{_stage}: row {out.get(schema.ID)!r} has text in {column!r} that is not valid "
                        f"Unicode ({err.reason} at position {err.start})"
                    ) from err
    return out


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
    """The body of a code fence that opens the text (```python ... ``` or ~~~), else the text; fences are read by
    :func:`evolvecoder_datasets.chat.fenced_blocks`, as everywhere else.

    Example:
        >>> strip_code_fences("```python\\nprint(1)\\n```")
        'print(1)'
    """
    if not text:
        return ""
    body = text.strip()
    if body.startswith(("```", "~~~")):
        blocks = fenced_blocks(body)
        body = blocks[0][1] if blocks else ""
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


def add_input_output(out: dict[str, Any], cases: Mapping[str, Any], *, what: str = "input_output") -> None:
    """Put an APPS-style ``input_output`` object (``{"inputs", "outputs", "fn_name"?}``) into a seed row.

    With ``fn_name`` the cases become asserts appended to ``out[schema.TESTS]`` (through ``Solution()`` when
    ``out["starter_code"]`` defines that class) and ``fn_name`` becomes the entry point; without it they are
    stdin/stdout pairs written to ``out[schema.INPUTS]`` and ``out[schema.OUTPUTS]``.

    Args:
        out (`dict`): the seed row being built (see :func:`empty_row`); changed in place.
        cases (`Mapping`): the decoded ``input_output`` object.
        what (`str`, defaults to `"input_output"`): where the object comes from, for error messages.

    Raises:
        SourceFormatError: ``inputs`` and ``outputs`` are not lists of equal length, ``fn_name`` is not a
            string, or a stdin/stdout payload is missing (None) or not text.

    Example:
        >>> row = empty_row("X_0", "X", "Double x.")
        >>> add_input_output(row, {"inputs": [[2]], "outputs": [[4]], "fn_name": "double"})
        >>> row["tests"], row["entry_point"]
        (['assert double(2) == 4'], 'double')
    """
    inputs, outputs = case_lists(cases, what=what)
    fn_name = cases.get("fn_name")
    if fn_name is not None and not isinstance(fn_name, str):
        raise SourceFormatError(f"{what}: fn_name must be a string, got {type(fn_name).__name__}")
    if fn_name and fn_name.strip():
        out[schema.TESTS] += call_based_tests(
            fn_name.strip(), inputs, outputs, starter_code=out[schema.STARTER_CODE]
        )
        out[schema.ENTRY_POINT] = fn_name.strip()
    else:
        out[schema.INPUTS] = [stdio_text(x, what=f"{what} input") for x in inputs]
        out[schema.OUTPUTS] = [stdio_text(x, what=f"{what} output") for x in outputs]


def case_lists(cases: Mapping[str, Any], *, what: str = "input_output") -> tuple[list[Any], list[Any]]:
    """The ``inputs`` and ``outputs`` lists of an APPS-style ``input_output`` object, checked to pair up.

    Missing or null lists read as empty.

    Args:
        cases (`Mapping`): the decoded ``input_output`` object.
        what (`str`, defaults to `"input_output"`): where the object comes from, for the error message.

    Raises:
        SourceFormatError: ``inputs`` or ``outputs`` is not a list, or they differ in length.

    Example:
        >>> case_lists({"inputs": ["1\\n"], "outputs": ["2\\n"]})
        (['1\\n'], ['2\\n'])
    """
    inputs, outputs = cases.get("inputs"), cases.get("outputs")
    inputs = [] if inputs is None else inputs
    outputs = [] if outputs is None else outputs
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise SourceFormatError(
            f"{what}: inputs and outputs must be lists, got {type(inputs).__name__} and {type(outputs).__name__}"
        )
    if len(inputs) != len(outputs):
        raise SourceFormatError(f"{what}: {len(inputs)} inputs but {len(outputs)} outputs")
    return inputs, outputs


def stdio_text(value: Any, *, what: str) -> str:
    """One stdin or expected-stdout payload as text: a string, or a list of lines (see :func:`as_text_block`).

    Unlike :func:`as_text_block`, a missing payload is an error: an expected output of ``None`` would otherwise
    become ``""`` and silently demand that a correct program print nothing.

    Args:
        value (`Any`): the raw payload.
        what (`str`): field name, for the error message.

    Raises:
        SourceFormatError: the payload is None, an object, or a list holding anything but strings and numbers.

    Example:
        >>> stdio_text(["1 2", "3"], what="input")
        '1 2\\n3\\n'
    """
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, (list, tuple)) and all(
        isinstance(line, (str, int, float)) and not isinstance(line, bool) for line in value
    ):
        return as_text_block(value)
    raise SourceFormatError(f"{what} must be text or a list of lines, got {value!r:.60}")


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
