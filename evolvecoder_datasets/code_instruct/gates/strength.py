"""Gates 5 and 6: the test is strong (real asserts, ``pytest.raises`` where errors are asked) and its checks
depend on what it imports from ``task_module``.

Example:
    >>> from evolvecoder_datasets.code_instruct.gates.strength import check_test_strength
    >>> check_test_strength("def test_a():\\n    assert True\\n", "Write f.").reason
    'weak_test'
"""

from __future__ import annotations

import ast
import re

from ..._parse import bound_names
from .result import GateResult
from .result import parse_or_none as _parse

__all__ = ["check_asserts_reach_oracle", "check_test_strength", "count_oracle_checks", "is_trivial_assert",
           "mentions_errors"]

_ERROR_WORDS = re.compile(
    r"\b(?:raises?|raised|raising|errors?|exceptions?|invalid|must\s+not|rejects?|rejected|forbidden)\b", re.IGNORECASE
)


def is_trivial_assert(node: ast.Assert) -> bool:
    """Whether an ``assert`` cannot fail whatever the solution does.

    Trivial: only literals and operators (``assert True``, ``assert 1 == 1``, ``assert not False``), a comparison of
    an expression with itself (``assert x == x``), or ``isinstance(x, object)``.

    Example:
        >>> [is_trivial_assert(ast.parse(s).body[0]) for s in ("assert True", "assert f(1) == f(1)", "assert f(1) == 2")]
        [True, True, False]
    """
    test = node.test
    if not any(isinstance(sub, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) for sub in ast.walk(test)):
        return True
    if isinstance(test, ast.Compare) and len(test.comparators) == 1 and ast.dump(test.left) == ast.dump(
        test.comparators[0]
    ):
        return True
    return (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"
            and len(test.args) == 2 and isinstance(test.args[1], ast.Name) and test.args[1].id == "object")  # fmt: skip


def mentions_errors(problem: str) -> bool:
    """Whether the problem asks for errors: raise, error, exception, invalid, must not, reject, forbidden.

    Example:
        >>> mentions_errors("Raise ValueError on invalid input."), mentions_errors("Return the sum.")
        (True, False)
    """
    return bool(_ERROR_WORDS.search(problem))


def _uses_pytest_raises(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "raises":
                return True
            if isinstance(func, ast.Name) and func.id == "raises":
                return True
    return False


def check_test_strength(test: str, problem: str, *, min_asserts: int = 3) -> GateResult:
    """Gate 5: enough real asserts, no trivial ones, a test function, and ``pytest.raises`` where errors are asked.

    Args:
        test (`str`): the pytest source.
        problem (`str`): the problem description (decides whether ``pytest.raises`` is required).
        min_asserts (`int`, defaults to 3): least number of non-trivial ``assert`` statements.

    Example:
        >>> test = "from task_module import f\\ndef test_a():\\n    assert f(1) == 2\\n    assert f(2) == 3\\n    assert f(0) == 1\\n"
        >>> check_test_strength(test, "Write f.").ok
        True
        >>> check_test_strength(test, "Write f; raise ValueError for negative input.").detail
        'the problem asks for errors but the test never uses pytest.raises'
    """
    tree = _parse(test)
    if tree is None:
        return GateResult.failed("syntax_error", "the test does not parse")
    has_test = any(
        (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"))
        or (isinstance(node, ast.ClassDef) and node.name.startswith("Test"))
        for node in ast.walk(tree)
    )
    if not has_test:
        return GateResult.failed("weak_test", "no test function (def test_...) or Test class")
    asserts = [node for node in ast.walk(tree) if isinstance(node, ast.Assert)]
    trivial = [node for node in asserts if is_trivial_assert(node)]
    if trivial:
        lines = [node.lineno for node in trivial]
        return GateResult.failed("weak_test", f"trivial assert(s) on line(s) {lines}")
    if len(asserts) < min_asserts:
        return GateResult.failed("weak_test", f"{len(asserts)} non-trivial assert(s); at least {min_asserts} needed")
    if mentions_errors(problem) and not _uses_pytest_raises(tree):
        return GateResult.failed("weak_test", "the problem asks for errors but the test never uses pytest.raises")
    return GateResult.passed()


# -- the asserts reach the oracle (gate 6) ---------------------------------------------------------------------


def _names_loaded(node: ast.AST) -> set[str]:
    return {sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load)}


def _names_stored(node: ast.AST | None) -> set[str]:
    if node is None:
        return set()
    return {sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store)}


def _oracle_names(tree: ast.Module) -> set[str]:
    """Names bound to ``task_module`` or to what it exports (a star import: every free name of the test)."""
    names: set[str] = set()
    star = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.asname or "task_module" for alias in node.names if alias.name.split(".")[0] == "task_module")
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "task_module":
            star |= any(alias.name == "*" for alias in node.names)
            names.update(alias.asname or alias.name for alias in node.names if alias.name != "*")
    if star:
        import builtins

        bound = set(dir(builtins)) | bound_names(tree)
        names |= _names_loaded(tree) - bound
    return names


def _tainted_names(tree: ast.Module, oracle: set[str]) -> set[str]:
    """Every name whose value may come from the oracle: a fixed point over assignments, loops, ``with`` targets,
    mutating calls (``out.append(f(x))``), parameters of helpers called with oracle values, and helpers, fixtures and
    classes whose body, decorators or bases use a tainted name.

    Scopes are merged (a name tainted anywhere is tainted everywhere): the analysis may call a test connected that
    is not, never the reverse, so the gate only rejects tests that cannot reach the oracle at all.
    """
    tainted = set(oracle)
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef)
    functions = {node.name: node for node in ast.walk(tree) if isinstance(node, kinds)}
    changed = True
    while changed:
        before = len(tainted)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions:
                # A helper called with an oracle value: its parameter holds that value (``check(parser, ...)``).
                params = functions[node.func.id].args
                positional = [*params.posonlyargs, *params.args]
                for arg, param in zip(node.args, positional):
                    if _names_loaded(arg) & tainted:
                        tainted.add(param.arg)
                for kw in node.keywords:
                    if kw.arg and _names_loaded(kw.value) & tainted:
                        tainted.add(kw.arg)
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
                if node.value is not None and _names_loaded(node.value) & tainted:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for target in targets:
                        tainted |= _names_stored(target)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                if _names_loaded(node.iter) & tainted:
                    tainted |= _names_stored(node.target)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if _names_loaded(item.context_expr) & tainted:
                        tainted |= _names_stored(item.optional_vars)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                root = node.func.value
                while isinstance(root, (ast.Attribute, ast.Subscript)):
                    root = root.value
                args = [*node.args, *(kw.value for kw in node.keywords)]
                if isinstance(root, ast.Name) and any(_names_loaded(arg) & tainted for arg in args):
                    tainted.add(root.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                # A helper, a fixture (its name is the test's parameter) or a class, through its body, its
                # decorators (``@define class P``) or its bases (``class P(Base)``).
                parts = [*node.body, *node.decorator_list]
                if isinstance(node, ast.ClassDef):
                    parts += [*node.bases, *(kw.value for kw in node.keywords)]
                if any(_names_loaded(part) & tainted for part in parts):
                    tainted.add(node.name)
        changed = len(tainted) != before
    return tainted


def _is_raises(call: ast.AST) -> bool:
    if not isinstance(call, ast.Call):
        return False
    func = call.func
    return (isinstance(func, ast.Attribute) and func.attr in ("raises", "assertRaises", "assertRaisesRegex")) or (
        isinstance(func, ast.Name) and func.id == "raises"
    )


def count_oracle_checks(test: str) -> tuple[int, int]:
    """``(reaching, total)`` checks of a pytest module: asserts, ``assert*`` method calls and ``pytest.raises``
    blocks, and how many of them depend on a name taken from ``task_module`` (directly, or through variables,
    helpers and fixtures). A syntax error counts as ``(0, 0)``.

    Example:
        >>> count_oracle_checks("from task_module import f\\nimport json\\n"
        ...                     "def test_a():\\n    out = f(2)\\n    assert out == 4\\n    assert json.dumps(1) == '1'\\n")
        (1, 2)
    """
    tree = _parse(test)
    if tree is None:
        return 0, 0
    tainted = _tainted_names(tree, _oracle_names(tree))
    reaching = total = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            total += 1
            reaching += bool(_names_loaded(node.test) & tainted)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr.startswith("assert") and not node.func.attr.startswith("assertRaises")):  # fmt: skip
            total += 1
            reaching += any(_names_loaded(arg) & tainted for arg in node.args)
        elif isinstance(node, (ast.With, ast.AsyncWith)) and any(_is_raises(i.context_expr) for i in node.items):
            total += 1
            reaching += any(_names_loaded(stmt) & tainted for stmt in node.body)
        elif _is_raises(node) and len(node.args) > 1:  # pytest.raises(E, f, x): the callable form
            total += 1
            reaching += any(_names_loaded(arg) & tainted for arg in node.args[1:])
    return reaching, total


def check_asserts_reach_oracle(test: str) -> GateResult:
    """Gate 6: at least one check of the test must depend on the oracle (``task_module``).

    Stage A proves little here: a test that imports ``task_module`` at the top fails without it at collection, so
    a test whose asserts only exercise the repository (or constants) passes both stages while testing nothing of
    the task. This gate follows values from ``task_module``'s names through assignments, loops, ``with`` targets,
    mutating calls, helpers and fixtures (:func:`count_oracle_checks`) and rejects the test when no assert, ``assert*``
    call or ``pytest.raises`` block depends on them.

    Example:
        >>> check_asserts_reach_oracle("import os\\nfrom task_module import f\\n"
        ...                            "def test_a():\\n    assert os.sep\\n    assert len('ab') == 2\\n").reason
        'oracle_unreached'
    """
    tree = _parse(test)
    if tree is None:
        return GateResult.failed("syntax_error", "the test does not parse")
    reaching, total = count_oracle_checks(test)
    if reaching == 0:
        return GateResult.failed(
            "oracle_unreached", f"none of the {total} check(s) depends on a name taken from task_module"
        )
    return GateResult.passed()
