"""The exception classes a test names, learned in a clean process of the task's environment.

A repository test checks the library's own errors: ``pytest.raises(tomli.TOMLDecodeError)``, or a ``ValueError``
whose ``__cause__`` is one. The judge knows the builtin classes only, so such a test stayed judged inside. What the
judge needs is each named class's identity, its qualified name (``tomli.TOMLDecodeError`` is
``tomli._parser.TOMLDecodeError``), and that must come from a process the solution never touched (a solution could
rebind ``tomli.TOMLDecodeError`` in its own). :func:`exception_references` reads the references off the test without
running it; :func:`learn_exception_classes` imports them in a fresh sandbox process of the task's environment, a job
with no solution in it, and reads each qualified name back bit by bit through pass/fail verdicts (the way
:mod:`evolvecoder_datasets.search.probes` reads values): nothing depends on the sandbox's messages. The split then
rewrites the checks to compare names (:mod:`.raises`).

Example:
    >>> refs = exception_references("import pytest, tomli\\nfrom task_module import f\\n\\ndef test_a():\\n"
    ...                             "    with pytest.raises(tomli.TOMLDecodeError):\\n        f('a =')\\n")
    >>> [(r.text, r.module, r.path) for r in refs]
    [('tomli.TOMLDecodeError', 'tomli', 'TOMLDecodeError')]
    >>> learn_exception_classes(refs, settings=settings)            # doctest: +SKIP
    {'tomli.TOMLDecodeError': 'tomli._parser.TOMLDecodeError'}
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # pragma: no cover
    from ..limits import SandboxSettings

__all__ = ["ExceptionReference", "exception_references", "learn_exception_classes"]

#: At most this many references are learned per test, and names longer than this are not read.
MAX_REFERENCES = 16
MAX_NAME = 200
_LENGTH_BITS = 8
_CHAR_BITS = 7
_QUALIFIED = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_<>][\w<>]*)*\Z")


class ExceptionReference(NamedTuple):
    """A class the test names, as written (``text``), and where it lives: ``module`` to import, then the attribute
    ``path`` from it."""

    text: str
    module: str
    path: str


def exception_references(test: str) -> tuple[ExceptionReference, ...]:
    """The non-builtin classes a pytest module names where an exception class is expected: ``pytest.raises(...)``,
    ``except ...``, ``isinstance``/``issubclass``'s second argument, ``<info>.type is ...``, reached through a
    module the test imports (never ``task_module``). Nothing runs.

    Example:
        >>> test = ("import attrs\\nfrom json import JSONDecodeError as Bad\\n\\ndef test_a():\\n"
        ...         "    assert isinstance(e, (Bad, attrs.exceptions.FrozenInstanceError, ValueError))\\n")
        >>> [r.text for r in exception_references(test)]
        ['Bad', 'attrs.exceptions.FrozenInstanceError']
    """
    try:
        tree = ast.parse(test.encode("utf-8", "surrogatepass"))  # as the split reads it (its coding cookie)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    bound = _imported_names(tree)
    found: dict[str, ExceptionReference] = {}
    for node in ast.walk(tree):
        for candidate in _class_positions(node):
            for element in candidate.elts if isinstance(candidate, ast.Tuple) else [candidate]:
                reference = _reference(element, bound)
                if reference is not None and len(found) < MAX_REFERENCES:
                    found.setdefault(reference.text, reference)
    return tuple(found.values())


def learn_exception_classes(references: Sequence[ExceptionReference], *, settings: SandboxSettings,
                            sandbox=None) -> dict[str, str]:  # fmt: skip
    """``{reference text: qualified name}`` of the references that are exception classes, imported in a fresh sandbox
    process under ``settings`` (the task's environment: ``settings.python_env``); a reference that does not import,
    is not an exception class or whose name does not read back is left out.

    Args:
        references (`Sequence[ExceptionReference]`): from :func:`exception_references`.
        settings (`SandboxSettings`): the sandbox the split tests run in.
        sandbox (`Sandbox`, *optional*): an open sandbox of those settings; defaults to the shared one.

    Example:
        >>> learn_exception_classes([ExceptionReference("json.JSONDecodeError", "json", "JSONDecodeError")],
        ...                         settings=settings)                          # doctest: +SKIP
        {'json.JSONDecodeError': 'json.decoder.JSONDecodeError'}
    """
    from ..execution import shared_sandbox

    references = list(references)[:MAX_REFERENCES]
    if not references:
        return {}
    program = _LEARNER + f"_ECD_REFERENCES = {[(r.module, r.path) for r in references]!r}\n"
    sandbox = sandbox if sandbox is not None else shared_sandbox(settings)
    lengths = _read_bits(sandbox, program, [(k, bit) for k in range(len(references)) for bit in range(_LENGTH_BITS)])
    if lengths is None:
        return {}
    sizes = [_number(lengths[k * _LENGTH_BITS:(k + 1) * _LENGTH_BITS]) for k in range(len(references))]
    positions = [(k, _LENGTH_BITS + i) for k, size in enumerate(sizes) for i in range(size * _CHAR_BITS)]
    bits = _read_bits(sandbox, program, positions) if positions else []
    if bits is None:
        return {}
    out, start = {}, 0
    for reference, size in zip(references, sizes):
        chunk = bits[start:start + size * _CHAR_BITS]
        start += size * _CHAR_BITS
        name = "".join(chr(_number(chunk[i:i + _CHAR_BITS])) for i in range(0, len(chunk), _CHAR_BITS))
        if size and _QUALIFIED.match(name):
            out[reference.text] = name
    return out


# The learning job's program: our code only (no solution), importing each referenced module in the sandbox.
_LEARNER = f'''
import importlib as _ecd_importlib


def _ecd_qualified(module, path):
    try:
        value = _ecd_importlib.import_module(module)
        for part in path.split("."):
            try:
                value = getattr(value, part)
            except AttributeError:
                module = module + "." + part
                value = _ecd_importlib.import_module(module)
        if not (isinstance(value, type) and issubclass(value, BaseException)):
            return ""
        name = value.__module__ + "." + value.__qualname__
    except Exception:
        return ""
    if len(name) > {MAX_NAME} or not name.isascii():
        return ""
    return name


_ECD_NAMES = {{}}


def _ecd_bit(k, position):
    if k not in _ECD_NAMES:
        _ECD_NAMES[k] = _ecd_qualified(*_ECD_REFERENCES[k])
    name = _ECD_NAMES[k]
    code = [len(name) >> ({_LENGTH_BITS} - 1 - i) & 1 for i in range({_LENGTH_BITS})]
    for char in name:
        code += [ord(char) >> ({_CHAR_BITS} - 1 - i) & 1 for i in range({_CHAR_BITS})]
    return position < len(code) and code[position] == 1
'''


def _read_bits(sandbox, program: str, positions: list[tuple[int, int]]) -> list[int] | None:
    """Each asked bit as a verdict (``assert _ecd_bit(k, i)``: pass = 1); ``None`` when a verdict is neither."""
    report = sandbox.run(program, [f"assert _ecd_bit({k}, {bit})" for k, bit in positions])
    if report.infra_error is not None or any(s not in ("pass", "fail") for s in report.statuses):
        return None
    return [1 if status == "pass" else 0 for status in report.statuses]


def _number(bits: Sequence[int]) -> int:
    value = 0
    for bit in bits:
        value = value << 1 | bit
    return value


def _imported_names(tree: ast.Module) -> dict[str, tuple[str, str]]:
    """Names the module's imports bind: ``name -> (module to import, attribute path from it)``."""
    bound: dict[str, tuple[str, str]] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    bound[alias.asname] = (alias.name, "")
                else:
                    bound[alias.name.split(".")[0]] = (alias.name.split(".")[0], "")
        elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
            for alias in stmt.names:
                if alias.name != "*":
                    bound[alias.asname or alias.name] = (stmt.module, alias.name)
    return {name: where for name, where in bound.items()
            if where[0].split(".")[0] not in ("task_module", "pytest", "_pytest", "builtins")}  # fmt: skip


def _class_positions(node: ast.AST) -> list[ast.expr]:
    """Where ``node`` expects an exception class."""
    if isinstance(node, ast.ExceptHandler) and node.type is not None:
        return [node.type]
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "raises" and isinstance(func.value, ast.Name):
            return [*node.args[:1], *(k.value for k in node.keywords if k.arg == "expected_exception")]
        if isinstance(func, ast.Name) and func.id in ("isinstance", "issubclass") and len(node.args) == 2:
            return [node.args[1]]
        if isinstance(func, ast.Attribute) and func.attr == "errisinstance":
            return list(node.args[:1])
    if isinstance(node, ast.Compare) and isinstance(node.left, ast.Attribute) and node.left.attr == "type":
        return list(node.comparators)
    return []


def _reference(node: ast.expr, bound: dict[str, tuple[str, str]]) -> ExceptionReference | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in bound:
        return None
    module, first = bound[node.id]
    path = ".".join([p for p in [first] if p] + parts[::-1])
    if not path:
        return None
    return ExceptionReference(".".join([node.id, *parts[::-1]]), module, path)
