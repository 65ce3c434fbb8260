"""A source tree's distribution name and version, read from its metadata files (nothing is imported or run).

``PKG-INFO`` / a wheel's ``METADATA``, ``pyproject.toml`` (with a fallback parser where ``tomllib`` is missing),
``setup.cfg`` and the literal arguments of ``setup()`` in ``setup.py``, first found first.

Example:
    >>> from evolvecoder_datasets.code_instruct.metadata import dist_metadata
    >>> dist_metadata("tests/data/code_instruct/tinytext")   # doctest: +SKIP
    ('tinytext', '0.1.0')
"""

from __future__ import annotations

import ast
import configparser
import email.parser
import os
import re
from pathlib import Path

__all__ = ["dist_metadata"]


def _read_toml(path: Path) -> dict:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError:
            return _toml_project_fallback(path.read_text(encoding="utf-8", errors="replace"))
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except (tomllib.TOMLDecodeError, OSError):
        return {}


def _toml_project_fallback(text: str) -> dict:
    """``[project]`` ``name``/``version`` strings, for Python 3.10 without ``tomli``."""
    block = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.MULTILINE | re.DOTALL)
    if not block:
        return {}
    project = {}
    for key in ("name", "version"):
        match = re.search(rf'^{key}\s*=\s*["\']([^"\']+)["\']', block.group(1), re.MULTILINE)
        if match:
            project[key] = match.group(1)
    return {"project": project}


def _metadata_file(path: Path) -> tuple[str | None, str | None]:
    message = email.parser.Parser().parsestr(path.read_text(encoding="utf-8", errors="replace"), headersonly=True)
    return message.get("Name"), message.get("Version")


def _setup_py(path: Path) -> tuple[str | None, str | None]:
    """``name=``/``version=`` string literals of a ``setup(...)`` call, read by AST (never executed)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except SyntaxError:
        return None, None
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "setup":
            for kw in node.keywords:
                if kw.arg in ("name", "version") and isinstance(kw.value, ast.Constant):
                    found[kw.arg] = str(kw.value.value)
    return found.get("name"), found.get("version")


def _dist_metadata(root: Path) -> tuple[str | None, str | None]:
    name = version = None

    def take(n: str | None, v: str | None) -> None:
        nonlocal name, version
        name = name or n
        version = version or v

    if (root / "PKG-INFO").is_file():
        take(*_metadata_file(root / "PKG-INFO"))
    for meta in sorted(root.glob("*.dist-info/METADATA")):
        take(*_metadata_file(meta))
    if (root / "pyproject.toml").is_file():
        project = _read_toml(root / "pyproject.toml").get("project", {})
        take(project.get("name"), project.get("version") if isinstance(project.get("version"), str) else None)
    if (root / "setup.cfg").is_file():
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(root / "setup.cfg", encoding="utf-8")
            version_value = parser.get("metadata", "version", fallback=None)
            take(parser.get("metadata", "name", fallback=None),
                 version_value if version_value and not version_value.startswith(("attr:", "file:")) else None)
        except configparser.Error:
            pass
    if (root / "setup.py").is_file():
        take(*_setup_py(root / "setup.py"))
    return name, version


def dist_metadata(root: str | os.PathLike) -> tuple[str | None, str | None]:
    """``(distribution name, version)`` of the tree at ``root``, either ``None`` when no metadata says.

    Example:
        >>> import tempfile, pathlib
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (root / "PKG-INFO").write_text("Metadata-Version: 2.1\\nName: demo\\nVersion: 1.2\\n")
        >>> dist_metadata(root)
        ('demo', '1.2')
    """
    return _dist_metadata(Path(root))
