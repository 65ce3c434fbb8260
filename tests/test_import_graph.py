"""The package's import graph has no cycle and no upward import: rooms sit on the floors of ``docs/layers.md``.

The graph is read from the source (every ``import`` and ``from ... import`` of a package module, at module level or
inside a function; imports only type checkers see are left out), so an import hidden inside a function to dodge a
cycle at run time counts as the cycle it is.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "evolvecoder_datasets"
LAYERS = PACKAGE.parent / "docs" / "layers.md"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(tree: ast.AST) -> set[int]:
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            hidden.update(id(n) for n in ast.walk(node))
    return hidden


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports (``from pkg import sub`` names ``pkg.sub`` when that is a module)."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        hidden = _type_checking_only(tree)
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        edges: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in hidden:
                continue
            if isinstance(node, ast.Import):
                edges.update(a.name for a in node.names if a.name in modules)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    if sub in modules:
                        edges.add(sub)
                    elif target in modules:
                        edges.add(target)
        edges.discard(name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_package_has_no_import_cycle():
    graph = import_graph()
    assert "evolvecoder_datasets.rounds.publish" in graph["evolvecoder_datasets.rounds"]
    assert cycles(graph) == []


def test_nothing_imports_the_cli_and_the_upper_floor_is_not_imported_from_below():
    graph = import_graph()
    assert [m for m, edges in graph.items() if "evolvecoder_datasets.cli" in edges] == []
    upper = ("evolvecoder_datasets.recipe", "evolvecoder_datasets.cli")
    lower = ("evolvecoder_datasets.stages", "evolvecoder_datasets.execution", "evolvecoder_datasets.llm",
             "evolvecoder_datasets.rounds", "evolvecoder_datasets.cards", "evolvecoder_datasets.distributed")
    upward = sorted((m, e) for m, edges in graph.items() if m.startswith(lower) for e in edges if e.startswith(upper))
    assert upward == []


def test_every_module_of_the_package_is_at_most_600_lines():
    """No module anywhere in the package (sub-packages included) is over 600 lines: the next feature splits a room
    by concern instead of growing it."""
    long = {str(path.relative_to(PACKAGE)): n for path in sorted(PACKAGE.rglob("*.py"))
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > 600}
    assert long == {}, f"modules over 600 lines (split them by concern): {long}"


def test_every_function_of_the_package_is_at_most_120_lines():
    """No function or method is over 120 lines (decorators left out): a longer one is phases that want names."""
    import ast

    long = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno >= 120:
                long[f"{path.relative_to(PACKAGE)}:{node.name}"] = node.end_lineno - node.lineno + 1
    assert long == {}, f"functions over 120 lines (give their phases names): {long}"


def test_importing_the_upper_floor_imports_no_heavy_dependency():
    code = ("import sys, evolvecoder_datasets.recipe, evolvecoder_datasets.rounds, evolvecoder_datasets.config, "
            "evolvecoder_datasets.cli; print(sorted(m for m in ('torch', 'transformers', 'ray') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def room(module: str) -> str:
    """The room of a module: its top-level module or sub-package (``__init__`` for the package itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def read_layers(text: str) -> tuple[dict[str, int], set[tuple[str, str]]]:
    """``({room: floor}, {(module, room) allowed upward})`` from the ``layers`` and ``layer-exceptions`` blocks."""
    floors: dict[str, int] = {}
    block = re.search(r"```layers\n(.*?)```", text, re.S)
    assert block, "docs/layers.md has no ```layers block"
    for line in block.group(1).splitlines():
        number, _, rest = line.partition(" ")
        for name in rest.partition(":")[2].split():
            assert name not in floors, f"room {name} is on two floors"
            floors[name] = int(number)
    exceptions = set()
    block = re.search(r"```layer-exceptions\n(.*?)```", text, re.S)
    for line in (block.group(1) if block else "").splitlines():
        if line.strip():
            module, _, target = (part.strip() for part in line.partition("->"))
            exceptions.add((module, target.split()[0]))
    return floors, exceptions


def upward_imports(graph: dict[str, set[str]], floors: dict[str, int],
                   exceptions: set[tuple[str, str]] = frozenset()) -> list[str]:  # fmt: skip
    """Each import of a room above the importer's floor, as ``"module (floor) -> module (floor)"``."""
    found = []
    for module, edges in sorted(graph.items()):
        for target in sorted(edges):
            low, high = floors[room(module)], floors[room(target)]
            if high > low and (module.removeprefix("evolvecoder_datasets."), room(target)) not in exceptions:
                found.append(f"{module} ({low}) -> {target} ({high})")
    return found


def test_the_layer_checker_finds_an_upward_import_and_honours_an_exception():
    floors, exceptions = read_layers("```layers\n0 ground: keys\n1 engines: llm\n```\n"
                                     "```layer-exceptions\nkeys -> llm  (a reason)\n```\n")
    graph = {"evolvecoder_datasets.keys": {"evolvecoder_datasets.llm.config"}, "evolvecoder_datasets.llm.config": set()}
    assert floors == {"keys": 0, "llm": 1} and exceptions == {("keys", "llm")}
    assert upward_imports(graph, floors) == ["evolvecoder_datasets.keys (0) -> evolvecoder_datasets.llm.config (1)"]
    assert upward_imports(graph, floors, exceptions) == []


def test_every_room_is_on_one_floor_of_the_documented_order_and_nothing_imports_upward():
    floors, exceptions = read_layers(LAYERS.read_text(encoding="utf-8"))
    graph = import_graph()
    rooms = {room(m) for m in graph}
    assert sorted(rooms - set(floors)) == []  # a new room must be placed in docs/layers.md
    assert sorted(set(floors) - rooms) == []  # and a removed one taken out
    assert floors["errors"] == floors["schema"] == 0 and floors["cli"] == max(floors.values())
    assert upward_imports(graph, floors, exceptions) == []
    # every exception is still needed (an import that went away takes its line with it)
    used = {(m.removeprefix("evolvecoder_datasets."), room(t)) for m, edges in graph.items() for t in edges}
    assert sorted(exceptions - used) == []
