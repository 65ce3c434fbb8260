"""Gates 2 to 4: the test imports ``task_module``; the solution uses the repository and does not shadow it.

Example:
    >>> from evolvecoder_datasets.code_instruct.gates.anchoring import check_imports_task_module
    >>> check_imports_task_module("import task_module\\ndef test_a():\\n    assert task_module.f()\\n").ok
    True
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from .result import GateResult
from .result import parse_or_none as _parse

__all__ = ["check_imports_task_module", "check_repo_anchoring", "check_symbol_collision", "top_level_definitions"]


def check_imports_task_module(test: str) -> GateResult:
    """Gate 2: the test must import ``task_module`` (``import task_module`` or ``from task_module import ...``).

    Example:
        >>> check_imports_task_module("from task_module import f\\ndef test_a():\\n    assert f(1) == 2\\n").ok
        True
        >>> check_imports_task_module("def test_a():\\n    assert 1\\n").reason
        'test_not_importing_task_module'
    """
    tree = _parse(test)
    if tree is None:
        return GateResult.failed("syntax_error", "the test does not parse")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(alias.name.split(".")[0] == "task_module" for alias in node.names):
            return GateResult.passed()
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "task_module":
            return GateResult.passed()
    return GateResult.failed("test_not_importing_task_module", "no `import task_module` / `from task_module import`")


def _annotation_nodes(tree: ast.AST) -> set[int]:
    """ids of every node inside a type annotation."""
    inside: set[int] = set()
    roots: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.returns is not None:
                roots.append(node.returns)
            for arg in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                        node.args.vararg, node.args.kwarg):  # fmt: skip
                if arg is not None and arg.annotation is not None:
                    roots.append(arg.annotation)
        elif isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
    for root in roots:
        inside.update(id(sub) for sub in ast.walk(root))
    return inside


def check_repo_anchoring(solution: str, import_names: Iterable[str]) -> GateResult:
    """Gate 3: the solution imports one of the repository's packages and really uses a name it imported.

    A use is a load of the bound name outside imports and type annotations (``click.echo(...)``,
    ``CliRunner()``, ``class P(attr.Attribute)``).

    Args:
        solution (`str`): the reference ``task_module`` source.
        import_names (`Iterable[str]`): the repository's top-level import names (``Repository.import_names``);
            a dotted name is a package inside a namespace, matched with its submodules only (``zope.interface``
            is anchored by ``from zope.interface import implementer`` or ``from zope import interface``, not by
            ``import zope.event``).

    Example:
        >>> check_repo_anchoring("import click\\ndef f(x: click.Context) -> None:\\n    return None\\n", ["click"]).detail
        'imports click but never uses an imported name outside annotations'
        >>> check_repo_anchoring("from click import style\\ndef f(s):\\n    return style(s, bold=True)\\n", ["click"]).ok
        True
    """
    packages = set(import_names)

    def ours(module: str) -> bool:  # dotted names are namespace members (``zope.interface``)
        return any(module == name or module.startswith(name + ".") for name in packages)

    tree = _parse(solution)
    if tree is None:
        return GateResult.failed("syntax_error", "the solution does not parse")
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if ours(alias.name):
                    bound.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for alias in node.names:
                if alias.name != "*" and (ours(node.module) or ours(f"{node.module}.{alias.name}")):
                    bound.add(alias.asname or alias.name)
    if not bound:
        return GateResult.failed("not_anchored", f"no import of {' / '.join(sorted(packages))}")
    annotations = _annotation_nodes(tree)
    for node in ast.walk(tree):
        is_load = isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
        if is_load and node.id in bound and id(node) not in annotations:
            return GateResult.passed()
    names = " / ".join(sorted(packages))
    return GateResult.failed("not_anchored", f"imports {names} but never uses an imported name outside annotations")


def top_level_definitions(source: str) -> list[str]:
    """Names a module defines at top level (functions, classes, assignments; not imports), in order.

    Example:
        >>> top_level_definitions("import os\\nX = 1\\ndef f(): pass\\nclass C: pass\\n")
        ['X', 'f', 'C']
    """
    tree = _parse(source)
    if tree is None:
        return []
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.extend(sub.id for sub in ast.walk(target) if isinstance(sub, ast.Name))
    return list(dict.fromkeys(names))


def check_symbol_collision(solution: str, public_symbols: Iterable[str]) -> GateResult:
    """Gate 4: no top-level definition of the solution may shadow a public symbol of the repository.

    Example:
        >>> check_symbol_collision("def echo(x):\\n    return x\\n", {"echo", "style"}).detail
        "redefines the repository's public name(s) ['echo']"
    """
    clash = sorted(set(top_level_definitions(solution)) & set(public_symbols))
    if clash:
        return GateResult.failed("symbol_collision", f"redefines the repository's public name(s) {clash}")
    return GateResult.passed()
