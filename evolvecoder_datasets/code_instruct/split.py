"""A plain pytest module as planned asserts, so its verdicts are decided outside the solution's process.

pytest runs a test in the interpreter that imported ``task_module.py``: whatever the solution does there (patch the
verdict plugin, write its result file) decides the verdict. The sandbox's judge does better for asserts: the
program's calls run in the sandbox and return values, the comparisons run in a process the program never touched.
:func:`split_pytest_module` turns a pytest module whose shape allows it into such tests, one per ``test_*``
function, per parameter set of its ``pytest.mark.parametrize`` decorators (values written out, or a module constant
holding them; pytest's ids) and per ``test_*`` method of a plain ``Test*`` class: the module's own imports,
constants and helpers, the parameters as assignments, then the body. Names the test imports from ``task_module`` are
the program's (the solution is the sandbox's program); ``task_module.f`` reads as ``f``.

What cannot be split raises :class:`NotSplittable` with the reason, and the task is judged inside as before:
fixtures (a test parameter no ``parametrize`` gives), other decorators and marks (``pytest.param``, ``indirect=``,
``usefixtures``), test classes with bases, set-up methods or methods that use ``self``, ``pytestmark``, set-up and
tear-down hooks, ``yield``/``return``/``global`` in a test's body, async tests, the ``task_module`` object used other
than by attribute (``dir(task_module)``, ``monkeypatch.setattr(task_module, ...)``), ``"task_module"`` as a string
and module-level statements other than imports, assignments, helper ``def``/``class`` and docstrings. So is a
module-level binding pytest would read as something other than set-up code (a name pytest collects, ``test*`` or
``Test*``, bound by an assignment, an import or a walrus, so a test function re-bound later; a ``pytest_*`` name such
as ``pytest_plugins`` or ``pytest_generate_tests``; xunit set-up names; ``pytest`` itself re-bound; a star import; an
assignment to an attribute or an item): pytest would run what the split does not. What the static reading cannot
see (a test made by code at import time) the collection check of :func:`~.verification.verify_task` finds.

Example:
    >>> suite = split_pytest_module(
    ...     "import math\\nfrom task_module import area as a\\n\\n"
    ...     "def test_unit():\\n    assert a(1) == math.pi\\n")
    >>> suite.names, suite.program_suffix
    (('test_task.py::test_unit',), '\\n_ecd_as_a = area\\n')
    >>> print(suite.tests[0])
    import math
    assert _ecd_as_a(1) == math.pi
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .raises import RAISED_HELPER, rewrite_raises

if TYPE_CHECKING:  # pragma: no cover
    from ..limits import SandboxSettings

__all__ = ["SPLIT_MODE", "TEST_TIMEOUT_S", "NotSplittable", "SplitSuite", "split_pytest_module", "split_settings"]

#: The module the tests import the solution as.
TASK_MODULE = "task_module"
#: How split tests run: in order on one loaded solution, as pytest runs a module's tests on one imported
#: ``task_module`` (what a solution keeps carries from one test function to the next in both).
SPLIT_MODE = "fast"
#: CPU seconds per test function of a split test; loading the solution and its imports gets three times as much.
TEST_TIMEOUT_S = 10.0
_BUILTIN_NAMES = frozenset(dir(builtins))


class NotSplittable(ValueError):
    """The pytest module's shape cannot be split into planned asserts (``reason`` says which part).

    Example:
        >>> NotSplittable("fixture", "test_a(tmp_path)").reason
        'fixture'
    """

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class SplitSuite:
    """A pytest module as sandbox tests.

    Attributes:
        tests (`tuple[str, ...]`): one test per ``test_*`` function, in the module's order.
        names (`tuple[str, ...]`): their pytest ids (``test_task.py::test_name``).
        program_suffix (`str`): lines appended to the solution so the test's import aliases name the program's
            objects (``from task_module import f as g`` gives ``_ecd_as_g = f``); empty when there are none.
        lines (`tuple[int, ...]`): for each test, the first line of the function it comes from (its first
            decorator's line when it has one), as pytest reports the location of what it collected.
        params (`tuple[str, ...]`): for each test, its parameters as the source of a dict (``"{'t': 'A b'}"``;
            empty without ``parametrize``), to compare with the values pytest collected.
    """

    tests: tuple[str, ...]
    names: tuple[str, ...]
    program_suffix: str = ""
    lines: tuple[int, ...] = ()
    params: tuple[str, ...] = ()

    def program(self, solution: str) -> str:
        """The sandbox program: ``solution`` and the alias lines.

        Example:
            >>> SplitSuite(("assert g(1)",), ("t::test_a",), "\\ng = f\\n").program("def f(x):\\n    return x")
            'def f(x):\\n    return x\\ng = f\\n'
        """
        return solution.rstrip("\n") + self.program_suffix if self.program_suffix else solution


def split_settings(settings: SandboxSettings | None = None, *, test_timeout_s: float = TEST_TIMEOUT_S,
                   **overrides) -> SandboxSettings:
    """The sandbox settings split tests run under: ``settings`` (default: the defaults) in :data:`SPLIT_MODE`, with
    ``test_timeout_s`` per test function, three times that to load, every test run; ``overrides`` last. What
    verification and an exported folder's verifier both judge by.

    Example:
        >>> s = split_settings(test_timeout_s=2.0, workers=1)
        >>> s.mode, s.timeout_s, s.load_timeout_s, s.max_consecutive_timeouts, s.workers
        ('fast', 2.0, 6.0, None, 1)
    """
    from ..limits import SandboxSettings

    values = {"timeout_s": float(test_timeout_s), "load_timeout_s": 3.0 * float(test_timeout_s),
              "max_consecutive_timeouts": None, "mode": SPLIT_MODE, **overrides}  # fmt: skip
    return dataclasses.replace(settings if settings is not None else SandboxSettings(), **values)


def split_pytest_module(test: str, *, test_file: str = "test_task.py",
                        exceptions: Mapping[str, str] | None = None) -> SplitSuite:  # fmt: skip
    """Split a plain pytest module into one planned test per ``test_*`` function.

    Args:
        test (`str`): the pytest module's source.
        test_file (`str`, defaults to ``"test_task.py"``): the file name its ids start with.
        exceptions (`Mapping[str, str]`, *optional*): the exception classes the test names, as written, with their
            qualified names learned in a clean process of the task's environment
            (:func:`~.exceptions.learn_exception_classes`): ``pytest.raises`` blocks on them, or checking their
            ``__cause__``/``__context__``, are rewritten so the judge decides them (:func:`~.raises.rewrite_raises`).

    Returns:
        `SplitSuite`: the tests, their pytest ids and the program's alias lines.

    Raises:
        NotSplittable: the module has a shape the split does not cover (``reason`` names it); such a task is
            verified by pytest, judged inside.

    Example:
        >>> split_pytest_module("import pytest\\n@pytest.mark.slow\\ndef test_a():\\n    assert 1\\n")
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.code_instruct.split.NotSplittable: decorated_test: test_a
    """
    try:
        return _split(test, test_file, dict(exceptions or {}))
    except (RecursionError, MemoryError):  # a model-written module nested past what the AST tools recurse through
        raise NotSplittable("too_deep", "nested past what can be split") from None


def _split(test: str, test_file: str, exceptions: dict[str, str]) -> SplitSuite:
    try:  # read as pytest reads the file written from it (UTF-8 bytes): a coding cookie decodes its literals
        tree = ast.parse(test.encode("utf-8", "surrogatepass"))
    except (SyntaxError, ValueError, RecursionError, MemoryError) as err:
        raise NotSplittable("syntax_error", str(err)[:200]) from err
    for node in ast.walk(tree):  # importorskip("task_module"), importlib.import_module(...): pytest's to judge
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                node.value == TASK_MODULE or node.value.startswith(TASK_MODULE + ".")):
            raise NotSplittable("task_module_by_name", repr(node.value)[:80])
    module_aliases: set[str] = set()  # names bound to the task module itself (``import task_module as tm``)
    program_names: dict[str, str] = {}  # names bound by ``from task_module import ...``: the solution's name
    aliases: list[tuple[str, str]] = []  # (test's name, solution's name)
    prelude: list[ast.stmt] = []
    functions: list[ast.stmt] = []  # test functions and test classes, in order
    constants: dict[str, ast.expr] = {}  # module-level ``NAME = <value>``, for parametrize(..., NAME)
    for position, stmt in enumerate(tree.body):
        _check_bindings(stmt)
        if isinstance(stmt, ast.Import):
            kept = []
            for alias in stmt.names:
                if alias.name == TASK_MODULE or alias.name.startswith(TASK_MODULE + "."):
                    if alias.name != TASK_MODULE:
                        raise NotSplittable("task_module_submodule", alias.name)
                    module_aliases.add(alias.asname or alias.name)
                else:
                    kept.append(alias)
            if kept:
                prelude.append(ast.copy_location(ast.Import(names=kept), stmt))
        elif isinstance(stmt, ast.ImportFrom):
            if stmt.level:
                raise NotSplittable("relative_import", ast.unparse(stmt))
            if stmt.module == TASK_MODULE:
                for alias in stmt.names:
                    if (alias.asname or alias.name) in _BUILTIN_NAMES:  # the sandbox keeps builtins the test's
                        raise NotSplittable("shadows_builtin", alias.asname or alias.name)
                    if program_names.setdefault(alias.asname or alias.name, alias.name) != alias.name:
                        raise NotSplittable("rebinds_task_module_name", alias.asname or alias.name)
                    if alias.asname and alias.asname != alias.name:
                        aliases.append((alias.asname, alias.name))
            elif stmt.module and stmt.module.split(".")[0] == TASK_MODULE:
                raise NotSplittable("task_module_submodule", stmt.module)
            else:
                prelude.append(stmt)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name.startswith("test"):
            functions.append(stmt)
        elif isinstance(stmt, ast.ClassDef) and stmt.name.startswith("Test"):
            functions.append(stmt)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if any(_is_fixture(d) for d in stmt.decorator_list):
                raise NotSplittable("fixture", stmt.name)
            if stmt.name.startswith(_HOOK_PREFIXES):
                raise NotSplittable("pytest_hook", stmt.name)
            prelude.append(stmt)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            if any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in _targets(stmt)):
                raise NotSplittable("pytestmark", ast.unparse(stmt)[:80])
            prelude.append(stmt)
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                constants[stmt.targets[0].id] = stmt.value
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and position == 0:
            continue  # the module's docstring
        elif isinstance(stmt, ast.If) and _is_main_guard(stmt):
            continue  # never runs under pytest
        else:
            raise NotSplittable("module_statement", ast.unparse(stmt).splitlines()[0][:80])
    clash = (set(program_names) | module_aliases) & {name for stmt in prelude for name in _module_bound(stmt)}
    if clash:  # the split drops the import, so the module's own binding would stand, whichever came last
        raise NotSplittable("rebinds_task_module_name", min(clash))
    cases = [case for node in functions for case in _cases(node, constants)]
    if not cases:
        raise NotSplittable("no_test_functions")
    names = [name for name, *_ in cases]
    if len(set(names)) != len(names):  # pytest keeps the last definition only
        raise NotSplittable("duplicate_test_name", next(n for n in names if names.count(n) > 1))
    anywhere = _bound_anywhere(tree)  # a name a test, helper or comprehension binds, or that starts with the prefix
    for mine, _ in aliases:  # renamed below, so no binding of the test's own may share the name
        if mine in anywhere:
            raise NotSplittable("rebinds_task_module_name", mine)
    rewrite = _TaskModuleAttributes(module_aliases, {mine: _ALIAS + mine for mine, _ in aliases})
    prelude = [rewrite.visit(s) for s in prelude]
    tests, raised = [], False
    for _, body, _, _ in cases:
        body = [rewrite.visit(s) for s in body]
        if exceptions:
            body, changed = rewrite_raises(body, exceptions)
            raised = raised or changed
        tests.append(ast.unparse(ast.Module(body=[*prelude, *body], type_ignores=[])))
    if rewrite.read & anywhere:  # ``tm.f`` reads as the program's ``f``: a binding of the test's own would stand
        raise NotSplittable("rebinds_task_module_name", min(rewrite.read & anywhere))
    suffix = "".join(f"{_ALIAS}{mine} = {theirs}\n" for mine, theirs in aliases) + (RAISED_HELPER if raised else "")
    return SplitSuite(tuple(tests), tuple(f"{test_file}::{n}" for n in names), "\n" + suffix if suffix else "",
                      tuple(case[2] for case in cases), tuple(case[3] for case in cases))


def _cases(node: ast.stmt, constants: dict[str, ast.expr]) -> list[tuple[str, list[ast.stmt], int, str]]:
    """``(pytest id without the file, statements, first line, parameters)`` for each test a module-level test function or class
    makes."""
    if isinstance(node, ast.ClassDef):
        if node.decorator_list or node.keywords or any(not (isinstance(b, ast.Name) and b.id == "object")
                                                       for b in node.bases):  # fmt: skip
            raise NotSplittable("test_class", f"{node.name}: bases, decorators or keywords")
        out = []
        for position, stmt in enumerate(node.body):
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and position == 0:
                continue
            if not (isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name.startswith("test")):
                raise NotSplittable("test_class", f"{node.name}: {ast.unparse(stmt).splitlines()[0][:60]}")
            out += [(f"{node.name}::{name}", *rest)
                    for name, *rest in _function_cases(stmt, constants, method=True)]  # fmt: skip
        return out
    return _function_cases(node, constants)


def _function_cases(stmt, constants, *, method: bool = False) -> list[tuple[str, list[ast.stmt], int, str]]:
    """The tests of one test function: one, or one per parameter set of its ``pytest.mark.parametrize``
    decorators (the parameters bound by assignments before the body, and written as the source of a dict, which the
    collection check compares with the values pytest collected: a value it evaluates at another time, or an object
    changed after the decorator read it, is not the split's)."""
    if isinstance(stmt, ast.AsyncFunctionDef):
        raise NotSplittable("async_test", stmt.name)
    sets: list[tuple[str, list[ast.stmt]]] = [("", [])]  # (id, bindings), the decorator nearest the def first
    given: list[str] = []
    for decorator in reversed(stmt.decorator_list):
        names, values = _parametrize(decorator, stmt.name, constants)
        given += names
        sets = [(f"{left}-{right}" if left else right, bind + more)
                for left, bind in sets for right, more in values]  # fmt: skip
    args = stmt.args
    params = [a.arg for a in args.args]
    if method:
        if not params or params[0] != "self":
            raise NotSplittable("test_class", f"{stmt.name} is not a plain method")
        params = params[1:]
        if any(isinstance(n, ast.Name) and n.id == "self" for n in ast.walk(stmt)):
            raise NotSplittable("uses_self", stmt.name)
    if args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg or args.defaults or sorted(params) != sorted(
            given):  # fmt: skip
        raise NotSplittable("fixture", f"{stmt.name}({ast.unparse(args)})")
    for node in _own_nodes(stmt):
        if isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal)):
            raise NotSplittable("test_control_flow", f"{stmt.name}: {type(node).__name__.lower()}")
    body = list(stmt.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the test's docstring
    ids = _unique([i for i, _ in sets])
    first = min([stmt.lineno, *(d.lineno for d in stmt.decorator_list)])  # the code object's first line
    return [(f"{stmt.name}[{i}]" if stmt.decorator_list else stmt.name, [*bind, *body], first, _params_source(bind))
            for i, (_, bind) in zip(ids, sets)]  # fmt: skip


def _params_source(bind: list[ast.Assign]) -> str:
    """``{'name': value, ...}`` of a test's parameter assignments; empty without any."""
    if not bind:
        return ""
    keys = [ast.Constant(value=b.targets[0].id) for b in bind]
    return ast.unparse(ast.Dict(keys=keys, values=[b.value for b in bind]))


# At most this many tests from one function's parameter sets (pytest would run them all; a test suite this large
# from one function is a sign the split should not write it out).
MAX_PARAMETER_SETS = 256


def _parametrize(decorator: ast.expr, name: str, constants: dict[str, ast.expr]):
    """``(argnames, [(id, [assignments]), ...])`` of one ``@pytest.mark.parametrize(names, values[, ids=...])``
    whose values are written out (a list or tuple, or a module constant bound to one); anything else, a mark or
    ``pytest.param`` included, raises :class:`NotSplittable`."""
    func = decorator.func if isinstance(decorator, ast.Call) else decorator
    chain = []
    while isinstance(func, ast.Attribute):
        chain.append(func.attr)
        func = func.value
    if not (isinstance(decorator, ast.Call) and chain[:2] == ["parametrize", "mark"] and isinstance(func, ast.Name)
            and func.id == "pytest"):  # fmt: skip
        raise NotSplittable("decorated_test", name)
    keywords = {k.arg: k.value for k in decorator.keywords}
    if len(decorator.args) != 2 or set(keywords) - {"ids"}:
        raise NotSplittable("decorated_test", f"{name}: parametrize({ast.unparse(decorator)[:60]})")
    try:
        argnames = ast.literal_eval(decorator.args[0])
    except (ValueError, SyntaxError, TypeError):
        raise NotSplittable("decorated_test", f"{name}: argument names not written out") from None
    names = [n.strip() for n in argnames.split(",") if n.strip()] if isinstance(argnames, str) else list(argnames)
    if not names or not all(isinstance(n, str) and n.isidentifier() for n in names):
        raise NotSplittable("decorated_test", f"{name}: argument names {argnames!r}")
    values = decorator.args[1]
    if isinstance(values, ast.Name) and values.id in constants:
        values = constants[values.id]
    if not isinstance(values, (ast.List, ast.Tuple)) or not values.elts or len(values.elts) > MAX_PARAMETER_SETS:
        raise NotSplittable("decorated_test", f"{name}: parameter values not written out")
    given_ids = None
    if "ids" in keywords:
        try:
            given_ids = ast.literal_eval(keywords["ids"])
        except (ValueError, SyntaxError, TypeError):
            raise NotSplittable("decorated_test", f"{name}: ids not written out") from None
        if not isinstance(given_ids, (list, tuple)) or len(given_ids) != len(values.elts):
            raise NotSplittable("decorated_test", f"{name}: ids do not match the values")
    out = []
    for index, element in enumerate(values.elts):
        if isinstance(element, ast.Starred) or any(isinstance(n, ast.Call) and "param" == getattr(n.func, "attr", "")
                                                   for n in ast.walk(element)):  # fmt: skip
            raise NotSplittable("decorated_test", f"{name}: pytest.param or a starred value")
        if len(names) == 1:
            parts = [element]
        elif isinstance(element, (ast.Tuple, ast.List)) and len(element.elts) == len(names):
            parts = list(element.elts)
        else:
            raise NotSplittable("decorated_test", f"{name}: a parameter set that is not written out")
        bind = [ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store())], value=v, lineno=0) for n, v in zip(names, parts)]
        label = given_ids[index] if given_ids is not None and given_ids[index] is not None else "-".join(
            _id_of(v, n, index) for n, v in zip(names, parts))  # fmt: skip
        out.append((str(label), bind))
    return names, out


def _id_of(node: ast.expr, argname: str, index: int) -> str:
    """pytest's id for one parameter value: the value itself for a string, number, bool or None, else
    ``<argname><index>``."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return f"{argname}{index}"
    if isinstance(value, str):
        return value.encode("unicode_escape").decode("ascii")
    if value is None or isinstance(value, (bool, int, float, complex)):
        return str(value)
    return f"{argname}{index}"


def _unique(ids: list[str]) -> list[str]:
    """pytest's rule for repeated ids: every copy of a repeated id gets ``_<n>``, counted per id."""
    repeated = {i for i in ids if ids.count(i) > 1}
    seen: dict[str, int] = {}
    out = []
    for i in ids:
        if i in repeated:
            out.append(f"{i}_{seen.get(i, 0)}")
            seen[i] = seen.get(i, 0) + 1
        else:
            out.append(i)
    return out


def _own_nodes(function: ast.FunctionDef):
    """The nodes of ``function``'s body outside nested functions, lambdas and classes."""
    todo = list(function.body)
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                todo.append(child)


# Module-level names pytest reads itself: hooks and plugins (``pytest_plugins``, ``pytest_generate_tests``), xunit
# set-up and tear-down (``setup_module``, ``setUpModule``...), and the collection switches of a module.
_HOOK_PREFIXES = ("pytest_", "setup", "teardown", "setUp", "tearDown")
_READ_BY_PYTEST = frozenset({"__test__", "__getattr__", "__dir__"})
# Values that are data whatever they hold, so a ``test_cases = [...]`` is set-up, not a test pytest collects.
_DATA_DISPLAYS = (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Constant, ast.JoinedStr, ast.ListComp, ast.SetComp,
                  ast.DictComp)  # fmt: skip


def _check_bindings(stmt: ast.stmt) -> None:
    """Refuse a module-level statement that binds a name pytest would read as more than set-up code: a name it
    collects (``test*``, ``Test*``) bound other than by the test's own ``def``/``class``, a hook or set-up name, or
    ``pytest`` itself bound to something else (an import, an assignment, a walrus, a helper's ``global``); and the
    bindings the split cannot follow (a star import, an assignment to an attribute or an item)."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        for alias in stmt.names:
            if alias.name == "*":
                raise NotSplittable("star_import", ast.unparse(stmt)[:80])
            bound = alias.asname or alias.name.split(".")[0]
            if bound == "pytest":  # ``import pytest`` (or ``import pytest.x``), nothing else under that name
                if not isinstance(stmt, ast.Import) or alias.name.split(".")[0] != "pytest":
                    raise NotSplittable("rebinds_pytest", ast.unparse(stmt)[:80])
                continue
            _check_name(bound, stmt)
    elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
        data = isinstance(stmt.value, _DATA_DISPLAYS)  # a list, a dict...: never a function or a class
        for target in _targets(stmt):
            for name in _assigned_names(target, stmt):
                if not (data and isinstance(target, ast.Name) and name.startswith(("test", "Test"))):
                    _check_name(name, stmt)
    elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and stmt.name in _READ_BY_PYTEST:
        raise NotSplittable("binds_pytest_name", stmt.name)
    for node in _module_scope_nodes(stmt):
        if isinstance(node, ast.NamedExpr):
            _check_name(node.target.id, stmt)
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        for node in ast.walk(stmt):  # a helper that binds a module name pytest reads when called at import
            for name in node.names if isinstance(node, (ast.Global, ast.Nonlocal)) else ():
                _check_name(name, stmt)


def _check_name(name: str, stmt: ast.stmt) -> None:
    if name == "pytestmark":
        raise NotSplittable("pytestmark", ast.unparse(stmt)[:80])
    if name.startswith(("test", "Test")):
        raise NotSplittable("binds_test_name", f"{name}: {ast.unparse(stmt).splitlines()[0][:60]}")
    if name.startswith(_HOOK_PREFIXES) or name in _READ_BY_PYTEST or name == "pytest":
        raise NotSplittable("binds_pytest_name", f"{name}: {ast.unparse(stmt).splitlines()[0][:60]}")


def _assigned_names(target: ast.expr, stmt: ast.stmt) -> list[str]:
    """The names an assignment target binds; an attribute or an item (``test_a.__test__ = False``,
    ``sys.modules[...] = ...``) cannot be split."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _assigned_names(element, stmt)]
    if isinstance(target, ast.Starred):
        return _assigned_names(target.value, stmt)
    raise NotSplittable("module_assignment_target", ast.unparse(stmt).splitlines()[0][:80])


def _module_scope_nodes(stmt: ast.stmt):
    """The nodes of a module-level statement evaluated in the module's scope: not the bodies of functions, lambdas
    and classes (their decorators, defaults and bases are)."""
    todo = [stmt]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            todo += [*node.decorator_list, *node.args.defaults, *(d for d in node.args.kw_defaults if d)]
        elif isinstance(node, ast.ClassDef):
            todo += [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]
        elif isinstance(node, ast.Lambda):
            todo += [*node.args.defaults, *(d for d in node.args.kw_defaults if d)]
        else:
            todo += list(ast.iter_child_nodes(node))


def _module_bound(stmt: ast.stmt) -> set[str]:
    """The module-level names a statement of the prelude binds: a ``def``/``class`` name (and what its ``global``
    statements name), import aliases, assignment and walrus targets."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name} | {n for node in ast.walk(stmt) if isinstance(node, ast.Global) for n in node.names}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).partition(".")[0] for a in stmt.names}
    return {n.id for n in _module_scope_nodes(stmt) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}


def _targets(stmt: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return list(stmt.targets) if isinstance(stmt, ast.Assign) else [stmt.target]


def _is_fixture(decorator: ast.expr) -> bool:
    """``@pytest.fixture``, ``@pytest.fixture(...)`` or ``@fixture``."""
    node = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(node, ast.Attribute) and node.attr in ("fixture", "yield_fixture")) or (
        isinstance(node, ast.Name) and node.id in ("fixture", "yield_fixture")
    )


def _is_main_guard(stmt: ast.If) -> bool:
    """``if __name__ == "__main__":`` with no ``else`` and a body that only runs the tests: calls of ``pytest.main``,
    ``unittest.main``, ``print`` or a ``test*`` function, inside ``sys.exit(...)``/``raise SystemExit(...)`` or not,
    their arguments constants and names (and ``import sys``, ``pytest`` or ``unittest``). The split leaves it out, so it must be nothing but that: pytest skips it
    unless the module bound ``__name__`` itself, and then it runs no code of the module's own but its tests. A
    ``!=``, an ``else``, another statement or an argument that is an expression is module code."""
    test = stmt.test
    if not (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq) and len(test.comparators) == 1
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value == "__main__"
            and not stmt.orelse):  # fmt: skip
        return False
    for line in stmt.body:
        if isinstance(line, ast.Import) and all(a.name in ("sys", "pytest", "unittest") and not a.asname
                                                for a in line.names):  # fmt: skip
            continue
        call = line.exc if isinstance(line, ast.Raise) else line.value if isinstance(line, ast.Expr) else None
        if isinstance(call, ast.Call) and ast.unparse(call.func) in ("sys.exit", "SystemExit", "exit") and call.args:
            call = call.args[0]
        if not (isinstance(call, ast.Call) and not call.keywords and all(map(_inert, call.args)) and (
                ast.unparse(call.func) in ("pytest.main", "unittest.main", "print")
                or (isinstance(call.func, ast.Name) and call.func.id.startswith("test") and not call.args))):
            return False
    return True


def _inert(node: ast.expr) -> bool:
    """A constant, a name, or a list or tuple of them: evaluating it runs no code."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(map(_inert, node.elts))
    return isinstance(node, (ast.Constant, ast.Name))


# The program's names a test imports under another name (``from task_module import g as h``) are bound under this
# prefix after the solution (``_ecd_as_h = g``), and the test's ``h`` reads that: the solution's own ``h`` stays its
# own (``h = g`` re-bound it, and a solution whose ``f`` calls a wrong ``h`` passed).
_ALIAS = "_ecd_as_"


def _bound_anywhere(tree: ast.Module) -> set[str]:
    """Every name the module binds anywhere but in its ``task_module`` imports (assignment, loop, ``with``,
    comprehension and walrus targets, ``def``/``class`` names, parameters, other imports, ``except ... as``,
    ``global``/``nonlocal``), and any name of the alias prefix it uses."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and (not isinstance(node.ctx, ast.Load) or node.id.startswith(_ALIAS)):
            out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and not (
                isinstance(node, ast.ImportFrom) and node.module == TASK_MODULE):  # fmt: skip
            out |= {(a.asname or a.name).partition(".")[0] for a in node.names}
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            out |= set(node.names)
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            out.add(node.name)
    return out


class _TaskModuleAttributes(ast.NodeTransformer):
    """``task_module.f`` (under any alias the test bound it to) as the program's name ``f`` (``read`` keeps them);
    a name imported under an alias as its prefixed name; any other use of the module object cannot be split."""

    def __init__(self, module_names: set[str], renamed: dict[str, str] | None = None) -> None:
        self.module_names = module_names
        self.renamed = renamed or {}
        self.read: set[str] = set()

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id in self.module_names:
            if not isinstance(node.ctx, ast.Load):
                raise NotSplittable("task_module_object", f"assigns {node.value.id}.{node.attr}")
            self.read.add(node.attr)
            return ast.copy_location(ast.Name(id=node.attr, ctx=ast.Load()), node)
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.module_names:
            raise NotSplittable("task_module_object", f"uses {node.id} itself")
        if node.id in self.renamed:
            return ast.copy_location(ast.Name(id=self.renamed[node.id], ctx=node.ctx), node)
        return node
