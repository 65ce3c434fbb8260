"""One name per thing: every public name imports cold, and no module gives a schema column a second name.

- **Cold imports.** Each public module (and each package) is imported in a fresh interpreter and every name of its
  ``__all__`` is read from it, so a name that only resolves after some other module ran first (a lazy attribute, an
  import order that hides a cycle) fails here.
- **No column aliases.** Column names are defined once, in ``schema.py``. Outside it, no module-level constant may
  hold a column's name (``REFERENCES = REFERENCE_SOLUTIONS``, ``EVOLVE_LOG = schema.EVOLVE_LOG``,
  ``TIME_LIMIT = "time_limit_s"``) and no import may rename one (``from ..schema import TESTS as T``). The column
  names are read from ``schema.py`` itself, so a new column is covered the day it is added.
"""

from __future__ import annotations

import ast
import inspect
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "evolvecoder_datasets"

#: Constants outside schema.py whose value equals a column name by coincidence: a different concept.
NOT_COLUMNS = {
    # The name of a published revision's config that holds the solution pools, not the ``solutions`` column.
    ("evolvecoder_datasets.rounds.names", "SOLUTIONS_CONFIG"),
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def public_modules() -> list[str]:
    """Every module of the package whose dotted name has no part starting with ``_`` (packages included)."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = _module_name(path)
        if not any(part.startswith("_") for part in name.split(".")):
            names.append(name)
    return names


def schema_columns(source: str | None = None) -> dict[str, str]:
    """``{constant: column name}`` of every module-level string constant of ``schema.py``."""
    tree = ast.parse(source if source is not None else (PACKAGE / "schema.py").read_text(encoding="utf-8"))
    columns = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):  # fmt: skip
            columns[node.targets[0].id] = node.value.value
    return columns


def column_aliases(source: str, columns: dict[str, str]) -> list[tuple[int, str, str]]:
    """``(line, name, what it aliases)`` for each module-level second name of a column in ``source``."""
    values = set(columns.values())
    found = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "schema":
            found += [(node.lineno, a.asname, a.name) for a in node.names if a.asname and a.asname != a.name]
            continue
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if isinstance(value, ast.Constant) and isinstance(value.value, str) and value.value in values:
            aliased = repr(value.value)
        elif isinstance(value, ast.Attribute) and value.attr in columns:
            aliased = ast.unparse(value)
        elif isinstance(value, ast.Name) and value.id in columns:
            aliased = value.id
        else:
            continue
        found += [(node.lineno, t.id, aliased) for t in targets if isinstance(t, ast.Name)]
    return found


_COLD = """
import importlib, json, sys
name = sys.argv[1]
module = importlib.import_module(name)
names = getattr(module, "__all__", None)
missing = [] if names is None else [n for n in names if not hasattr(module, n)]
print(json.dumps({"all": names is not None, "missing": missing}))
"""


def _import_cold(name: str) -> tuple[str, int, str]:
    proc = subprocess.run([sys.executable, "-c", _COLD, name], capture_output=True, text=True, timeout=300)
    return name, proc.returncode, proc.stdout.strip() or proc.stderr.strip()[-2000:]


def test_the_alias_finder_finds_every_kind_of_second_name():
    columns = schema_columns('TESTS = "tests"\nREFERENCE_SOLUTIONS = "reference_solutions"\nPAIR = ("a", "b")\n')
    assert columns == {"TESTS": "tests", "REFERENCE_SOLUTIONS": "reference_solutions"}
    source = (
        "from .. import schema\n"
        "from ..schema import TESTS, REFERENCE_SOLUTIONS as REFS\n"
        "REFERENCES = REFERENCE_SOLUTIONS\n"
        "T = schema.TESTS\n"
        "LIMIT: str = 'tests'\n"
        "OTHER = 'testsuite'\n"
        "def f():\n    LOCAL = schema.TESTS\n"
    )
    assert column_aliases(source, columns) == [
        (2, "REFS", "REFERENCE_SOLUTIONS"), (3, "REFERENCES", "REFERENCE_SOLUTIONS"), (4, "T", "schema.TESTS"),
        (5, "LIMIT", "'tests'"),
    ]


def test_no_module_outside_schema_gives_a_column_a_second_name():
    columns = schema_columns()
    assert {"TESTS", "REFERENCE_SOLUTIONS", "TIME_LIMIT"} <= set(columns)
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "schema.py":
            continue
        module = _module_name(path)
        found += [f"{module}:{line} {name} = {what}" for line, name, what in column_aliases(path.read_text(), columns)
                  if (module, name) not in NOT_COLUMNS]  # fmt: skip
    assert found == []


def test_errors_all_lists_every_exception_class():
    from evolvecoder_datasets import errors

    classes = sorted(n for n, obj in vars(errors).items()
                     if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == errors.__name__)
    assert len(classes) >= 19
    assert sorted(set(classes) - set(errors.__all__)) == []


def test_every_public_name_imports_cold():
    modules = public_modules()
    assert "evolvecoder_datasets.execution" in modules and "evolvecoder_datasets.stages.refine" in modules
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(_import_cold, modules))
    failed = {name: out for name, rc, out in results if rc != 0}
    assert failed == {}
    missing = {name: json.loads(out)["missing"] for name, _, out in results if json.loads(out)["missing"]}
    assert missing == {}
    without_all = sorted(name for name, _, out in results if not json.loads(out)["all"])
    packages = {_module_name(p) for p in PACKAGE.rglob("__init__.py")}
    assert sorted(set(without_all) & packages) == []  # every package says what it exports


@pytest.mark.parametrize("module", ["evolvecoder_datasets", "evolvecoder_datasets.stages"])
def test_a_name_missing_from_a_module_is_reported(module, tmp_path):
    code = f"import {module} as m; m.__all__ = list(m.__all__) + ['no_such_name']\n" + _COLD.replace(
        "module = importlib.import_module(name)", "module = m")
    out = subprocess.run([sys.executable, "-c", code, module], capture_output=True, text=True, check=True).stdout
    assert json.loads(out)["missing"] == ["no_such_name"]


_SUBMODULE_NAMES = """
import importlib, json, pkgutil, sys
name = sys.argv[1]
package = importlib.import_module(name)
bad = []
for info in pkgutil.iter_modules(package.__path__):
    before = getattr(package, info.name, None)  # before the submodule is imported by name
    again = getattr(package, info.name, None)
    module = importlib.import_module(f"{name}.{info.name}")
    after = getattr(package, info.name, None)
    for seen in (before, again, after):
        if seen is not None and seen is not module:
            bad.append(f"{name}.{info.name} is {type(seen).__name__} {getattr(seen, '__name__', '')}, not the module")
            break
print(json.dumps(bad))
"""


def test_a_packages_attribute_named_like_its_submodule_is_that_submodule():
    """One meaning per dotted name: ``stages.refine`` was the box function on first access and the module after
    (a lazy export named like its module), ``llm.preflight`` likewise, and ``recipe.run`` the function while
    ``evolvecoder_datasets.recipe.run`` imported the module. Each package is read in a fresh interpreter, before and
    after each submodule is imported by name."""
    packages = sorted(_module_name(p) for p in PACKAGE.rglob("__init__.py")
                      if not any(part.startswith("_") for part in _module_name(p).split(".")))
    assert "evolvecoder_datasets.stages" in packages

    def check(name: str) -> list[str]:
        proc = subprocess.run([sys.executable, "-c", _SUBMODULE_NAMES, name], capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return json.loads(proc.stdout)

    with ThreadPoolExecutor(max_workers=2) as pool:
        found = [bad for result in pool.map(check, packages) for bad in result]
    assert found == []
