"""Repository intake: a source tree (a checkout, an sdist or a wheel), its package names and public symbols.

The distribution name (what ``pip install`` takes) and the import name (what ``import`` takes) often differ:
``attrs`` installs the packages ``attr`` and ``attrs``, ``PyYAML`` installs ``yaml``. :func:`open_repository` reads
the distribution name and version from the metadata it finds (``PKG-INFO``, ``pyproject.toml``, ``setup.cfg``,
``setup.py``, a wheel's ``METADATA``), then finds the importable top-level packages on disk (``src/`` layout or
flat) and picks the main one. Public symbols come from the main package's ``__init__`` by AST only: nothing of the
repository is imported or executed here.

Archives are downloaded and extracted by :mod:`.archives`; the metadata is read by :mod:`.metadata`.

Example:
    >>> from evolvecoder_datasets.code_instruct import open_repository
    >>> repo = open_repository("tests/data/code_instruct/tinytext")            # doctest: +SKIP
    >>> repo.dist_name, repo.package, "slugify" in repo.public_symbols          # doctest: +SKIP
    ('tinytext', 'tinytext', True)
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import RepositoryError
from .archives import _ARCHIVE_SUFFIXES, _extract, default_cache_dir, fetch_sdist
from .metadata import _dist_metadata, _read_toml

__all__ = [
    "BUILD_FILES",
    "Repository",
    "check_installable",
    "default_cache_dir",
    "fetch_sdist",
    "find_packages",
    "normalize_name",
    "open_repository",
    "public_symbols",
]

# Top-level folders that are never the package, whatever they contain.
_NOT_PACKAGES = {
    "test", "tests", "testing", "doc", "docs", "example", "examples", "benchmark", "benchmarks", "bench", "scripts",
    "tools", "build", "dist", "site-packages", "node_modules", "artwork", "changelog.d", "requirements",
}  # fmt: skip
_NOT_MODULES = {"setup", "conftest", "noxfile", "tasks", "fabfile", "manage", "versioneer", "docs_conf"}


def normalize_name(name: str) -> str:
    """PEP 503 normalisation: lower case, runs of ``-``, ``_`` and ``.`` become ``-``.

    Example:
        >>> normalize_name("Flask_SQLAlchemy"), normalize_name("zope.interface")
        ('flask-sqlalchemy', 'zope-interface')
    """
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Repository:
    """A Python repository opened for task generation.

    Args:
        root (`Path`): the source tree (for an archive: where it was extracted).
        dist_name (`str`): the distribution name, as ``pip install`` takes it (``"attrs"``).
        version (`str`): the version from the metadata, or ``"unknown"``.
        package (`str`): the main import name (``"attr"`` or ``"attrs"`` for attrs; see :func:`find_packages`).
        import_names (`tuple[str, ...]`): every top-level importable package or module the tree ships.
        package_dirs (`tuple[Path, ...]`): where each of ``import_names`` lives (a folder or a ``.py`` file).
        public_symbols (`frozenset[str]`): public top-level names of every package in ``import_names`` (AST,
            see :func:`public_symbols`).
        origin (`str`): the path or archive it was opened from.
        kind (`str`): ``"checkout"``, ``"sdist"`` or ``"wheel"``.

    Example:
        >>> repo = open_repository("tests/data/code_instruct/tinytext")     # doctest: +SKIP
        >>> repo.name                                                          # doctest: +SKIP
        'tinytext==0.3.1'
    """

    root: Path
    dist_name: str
    version: str
    package: str
    import_names: tuple[str, ...]
    package_dirs: tuple[Path, ...] = field(repr=False)
    public_symbols: frozenset[str] = field(repr=False)
    origin: str = ""
    kind: str = "checkout"

    @property
    def name(self) -> str:
        """``dist==version`` (or just the distribution name when the version is unknown)."""
        return self.dist_name if self.version == "unknown" else f"{self.dist_name}=={self.version}"

    @property
    def package_dir(self) -> Path:
        """Folder (or module file) of the main package."""
        return self.package_dirs[self.import_names.index(self.package)]

    def tree_hash(self) -> str:
        """sha256 over the relative paths and bytes of the tree's files (``.git`` and caches skipped).

        It keys environments built from this tree: an edit anywhere invalidates them.
        """
        digest = hashlib.sha256()
        for path in sorted(_tree_files(self.root)):
            rel = path.relative_to(self.root).as_posix()
            digest.update(rel.encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        return digest.hexdigest()


def _tree_files(root: Path):
    skip = {".git", ".hg", ".svn", "__pycache__", ".tox", ".nox", ".venv", "venv", ".mypy_cache", ".pytest_cache"}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in skip)
        for name in filenames:
            if not name.endswith((".pyc", ".pyo")):
                path = Path(dirpath) / name
                if path.is_file() and not path.is_symlink():
                    yield path


# -- packages and symbols -----------------------------------------------------------------------------------------


def _is_namespace_declaration(init: Path) -> bool:
    """Whether an ``__init__.py`` only declares a pkgutil/pkg_resources namespace (``extend_path``)."""
    try:
        text = init.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return "extend_path" in text or "declare_namespace" in text


def _namespace_members(folder: Path, prefix: str, depth: int = 3) -> dict[str, Path]:
    """Regular packages and modules under a namespace folder, as dotted names (``zope.interface``)."""
    found: dict[str, Path] = {}
    if depth == 0:
        return found
    for entry in sorted(folder.iterdir()):
        name = entry.name
        if entry.is_dir() and name.isidentifier() and name.lower() not in _NOT_PACKAGES:
            init = entry / "__init__.py"
            if init.is_file() and not _is_namespace_declaration(init):
                found[f"{prefix}.{name}"] = entry
            elif not init.is_file() or _is_namespace_declaration(init):
                found.update(_namespace_members(entry, f"{prefix}.{name}", depth - 1))
        elif entry.suffix == ".py" and entry.stem.isidentifier() and entry.stem != "__init__":
            found[f"{prefix}.{entry.stem}"] = entry
    return found


def find_packages(root: str | os.PathLike, *, dist_name: str | None = None) -> dict[str, Path]:
    """Top-level importable packages and modules of a source tree: ``{import_name: folder or file}``.

    Looks in ``src/`` when it holds packages, else at the root; skips tests, docs, examples, build scripts and
    anything that is not a valid identifier. Namespace packages are resolved to the regular packages inside them,
    under dotted names: a PEP 420 folder without ``__init__.py`` (``src/zope/interface/__init__.py`` gives
    ``zope.interface``) and a pkgutil / pkg_resources namespace (an ``__init__.py`` calling ``extend_path`` or
    ``declare_namespace``). At the top level of a flat layout, a folder without ``__init__.py`` counts as a namespace
    only when the distribution name starts with it (``zope.interface``, ``jaraco-functools``), since such folders are
    usually not packages at all.

    Args:
        root (`str` or `os.PathLike`): the source tree.
        dist_name (`str`, *optional*): the distribution name, which admits a flat-layout namespace folder.

    Example:
        >>> import pathlib, tempfile
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> (root / "src" / "acme" / "widgets").mkdir(parents=True)
        >>> _ = (root / "src" / "acme" / "widgets" / "__init__.py").write_text("def run(): ...\\n")
        >>> sorted(find_packages(root))
        ['acme.widgets']
    """
    root = Path(root)
    wanted = normalize_name(dist_name or "")
    found: dict[str, Path] = {}
    for base in (root / "src", root):
        if not base.is_dir():
            continue
        in_src = base.name == "src" and base != root
        for entry in sorted(base.iterdir()):
            name = entry.name
            if entry.is_dir():
                if not name.isidentifier() or name.lower() in _NOT_PACKAGES:
                    continue
                init = entry / "__init__.py"
                if init.is_file() and not _is_namespace_declaration(init):
                    found.setdefault(name, entry)
                elif in_src or init.is_file() or wanted.startswith(normalize_name(name) + "-"):
                    for dotted, path in _namespace_members(entry, name).items():
                        found.setdefault(dotted, path)
            elif (entry.suffix == ".py" and entry.stem.isidentifier() and entry.stem not in _NOT_MODULES
                  and not entry.stem.startswith("test_") and not entry.stem.endswith("_test")):  # fmt: skip
                found.setdefault(entry.stem, entry)  # a single-module distribution (``six.py``, not ``test_six.py``)
        if found:
            break
    return found


def _init_less_folders(root: Path) -> list[str]:
    """Top-level folders holding Python files but no ``__init__.py`` (namespace candidates, for error messages)."""
    names = []
    for base in (root / "src", root):
        if base.is_dir():
            for entry in sorted(base.iterdir()):
                if (entry.is_dir() and entry.name.isidentifier() and entry.name.lower() not in _NOT_PACKAGES
                        and not (entry / "__init__.py").exists() and any(entry.rglob("*.py"))):  # fmt: skip
                    names.append(entry.relative_to(root).as_posix())
    return names


#: Files that make a source tree installable with ``pip install <tree>``.
BUILD_FILES = ("pyproject.toml", "setup.py", "setup.cfg")


def check_installable(root: str | os.PathLike) -> None:
    """Refuse a source tree that ``pip install`` cannot build, before any environment is made.

    A tree needs ``setup.py``, or ``setup.cfg``, or a ``pyproject.toml`` with a ``[build-system]`` or ``[project]``
    table (a ``pyproject.toml`` holding only tool settings makes setuptools build a nameless ``UNKNOWN``
    distribution). Wheels are installable by construction and are not checked.

    Args:
        root (`str` or `os.PathLike`): the source tree.

    Raises:
        RepositoryError: no build file, or a ``pyproject.toml`` that declares nothing to build.

    Example:
        >>> import pathlib, tempfile
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> check_installable(root)
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.errors.RepositoryError: ... has no pyproject.toml, setup.py or setup.cfg ...
    """
    root = Path(root)
    if (root / "setup.py").is_file() or (root / "setup.cfg").is_file():
        return
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        raise RepositoryError(
            f"{root} has no pyproject.toml, setup.py or setup.cfg at its root, so pip cannot install it and no "
            "task environment can be built; open the folder that holds the build files (or a release sdist/wheel)"
        )
    data = _read_toml(pyproject)
    if "build-system" not in data and "project" not in data:
        raise RepositoryError(
            f"{pyproject} declares neither [build-system] nor [project] and there is no setup.py or setup.cfg: "
            "pip would build a nameless 'UNKNOWN' distribution; add the build metadata first"
        )


def _choose_package(dist_name: str | None, packages: dict[str, Path]) -> str:
    wanted = normalize_name(dist_name or "")
    by_norm = {normalize_name(name): name for name in packages}
    if wanted in by_norm:
        return by_norm[wanted]
    for candidate in (wanted.replace("-", ""), wanted.split("-")[-1], wanted.removeprefix("python-"),
                      wanted.removeprefix("py")):
        if candidate in by_norm:
            return by_norm[candidate]
    # The largest package is the main one (helpers like ``_version`` modules are small).
    return max(packages, key=lambda name: (_count_py(packages[name]), name))


def _count_py(path: Path) -> int:
    return sum(1 for _ in path.rglob("*.py")) if path.is_dir() else 1


def _literal_names(node: ast.AST) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple)) and all(
        isinstance(elt, ast.Constant) and isinstance(elt.value, str) for elt in node.elts
    ):
        return [elt.value for elt in node.elts]
    return None


def public_symbols(package_path: str | os.PathLike, *, _seen: set[Path] | None = None) -> frozenset[str]:
    """Public top-level names of a package's ``__init__.py`` (or of a module file), read by AST.

    A literal ``__all__`` (also built with ``+=`` or ``.extend``) wins. Otherwise every top-level definition,
    assignment and import binding whose name does not start with ``_``; ``from .sub import *`` pulls in the
    public names of ``sub``.

    Args:
        package_path (`str` or `os.PathLike`): a package folder or a ``.py`` module.

    Example:
        >>> import pathlib, tempfile
        >>> pkg = pathlib.Path(tempfile.mkdtemp()) / "demo"; pkg.mkdir()
        >>> _ = (pkg / "__init__.py").write_text("from .core import Thing as Thing\\ndef helper(): ...\\n_x = 1\\n")
        >>> sorted(public_symbols(pkg))
        ['Thing', 'helper']
    """
    path = Path(package_path)
    init = path / "__init__.py" if path.is_dir() else path
    seen = _seen if _seen is not None else set()
    if init in seen or not init.is_file():
        return frozenset()
    seen.add(init)
    try:
        tree = ast.parse(init.read_text(encoding="utf-8", errors="replace"))
    except SyntaxError:
        return frozenset()
    declared: list[str] | None = None
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            declared = _literal_names(node.value) or declared
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == "__all__":
            declared = (declared or []) + (_literal_names(node.value) or [])
        elif (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
              and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "extend"
              and isinstance(node.value.func.value, ast.Name) and node.value.func.value.id == "__all__"
              and node.value.args):
            declared = (declared or []) + (_literal_names(node.value.args[0]) or [])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name):
                        names.add(sub.id)
        elif isinstance(node, ast.Import):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    if node.level and path.is_dir():
                        sub = path.joinpath(*(node.module or "").split("."))
                        target = sub if sub.is_dir() else sub.with_suffix(".py")
                        names.update(public_symbols(target, _seen=seen))
                else:
                    names.add(alias.asname or alias.name)
    chosen = declared if declared is not None else names
    return frozenset(name for name in chosen if not name.startswith("_"))


def open_repository(
    source: str | os.PathLike,
    *,
    package: str | None = None,
    cache_dir: str | os.PathLike | None = None,
) -> Repository:
    """Open a checkout, an sdist or a wheel as a :class:`Repository`.

    Args:
        source (`str` or `os.PathLike`): a source folder, or an archive (``.tar.gz``, ``.zip``, ``.whl``), which
            is extracted once under ``cache_dir`` (keyed by its sha256; links, devices and paths leaving the tree
            are refused).
        package (`str`, *optional*): the main import name, when the heuristic (normalised distribution name, then
            the largest package) picks the wrong one; a dotted name selects a package inside a namespace
            (``"zope.interface"``).
        cache_dir (`str` or `os.PathLike`, *optional*): where archives are extracted. Defaults to
            ``$EVOLVECODER_CACHE/sources`` (``~/.cache/evolvecoder_datasets/sources``).

    Returns:
        `Repository`: names, version, packages and public symbols.

    Raises:
        RepositoryError: the path does not exist, the archive is unsafe or broken, a source tree has no build files
            (:func:`check_installable`), no importable package is found (the message names folders that look like
            PEP 420 namespace packages), or ``package`` is not one of them.

    Example:
        >>> repo = open_repository("downloads/attrs-23.2.0.tar.gz")     # doctest: +SKIP
        >>> repo.dist_name, repo.version, repo.import_names              # doctest: +SKIP
        ('attrs', '23.2.0', ('attr', 'attrs'))
    """
    origin = Path(source)
    if not origin.exists():
        raise RepositoryError(f"repository source {str(origin)!r} does not exist")
    kind = "checkout"
    root = origin.resolve()
    if origin.is_file():
        if not origin.name.endswith(_ARCHIVE_SUFFIXES):
            raise RepositoryError(f"{origin.name!r} is neither a folder nor an sdist/wheel archive")
        kind = "wheel" if origin.name.endswith(".whl") else "sdist"
        base = Path(cache_dir) if cache_dir is not None else default_cache_dir() / "sources"
        root = _extract(origin.resolve(), base)
    elif (root / "PKG-INFO").is_file():
        kind = "sdist"
    if kind != "wheel":
        check_installable(root)
    dist_name, version = _dist_metadata(root)
    packages = find_packages(root, dist_name=dist_name)
    if package is not None and package not in packages and "." in package:
        # A namespace member named explicitly (``package="zope.interface"``) is taken as given when it exists.
        target = next((base.joinpath(*package.split(".")) for base in (root / "src", root)
                       if base.joinpath(*package.split(".")).is_dir()), None)  # fmt: skip
        if target is not None and (target / "__init__.py").is_file():
            packages[package] = target
    if not packages:
        hint = ""
        candidates = _init_less_folders(root)
        if candidates:
            hint = (f"; {candidates} hold Python files but no __init__.py and hold no regular package either: if "
                    "one is a PEP 420 namespace package, pass package='<namespace>.<name>' naming the package inside it")
        raise RepositoryError(f"no importable package found in {root} (looked in src/ and at the top level){hint}")
    if package is not None and package not in packages:
        raise RepositoryError(f"package {package!r} is not in {root}; found {sorted(packages)}")
    main = package or _choose_package(dist_name, packages)
    names = tuple(sorted(packages))
    return Repository(
        root=root,
        dist_name=dist_name or main,
        version=version or "unknown",
        package=main,
        import_names=names,
        package_dirs=tuple(packages[n] for n in names),
        public_symbols=frozenset().union(*(public_symbols(packages[n]) for n in names)),
        origin=str(source),
        kind=kind,
    )
