"""Seed sampling: seeded random windows of a repository's own code, worth writing a task about.

A seed is a window of 30-200 consecutive lines of one source file. Files are picked uniformly among those that
match the include globs, match no exclude glob and are long enough; tests, docs, examples, build scripts and
``__init__`` files are excluded by default. A window is rejected when most of its lines are blank, comments,
docstrings or imports, and another is drawn. Seed ``i`` of a run depends only on ``(seed, i)``, so a run that asks
for more seeds extends the previous list instead of reshuffling it.

Example:
    >>> from evolvecoder_datasets.code_instruct import SeedConfig, open_repository, sample_snippets
    >>> repo = open_repository("tests/data/code_instruct/tinytext")                        # doctest: +SKIP
    >>> snippets = sample_snippets(repo, 4, config=SeedConfig(seed=0))                      # doctest: +SKIP
    >>> snippets[0].path, snippets[0].end_line - snippets[0].start_line + 1 >= 30           # doctest: +SKIP
    ('src/tinytext/core.py', True)
"""

from __future__ import annotations

import ast
import fnmatch
import random
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError
from .repository import Repository, _tree_files

__all__ = ["SeedConfig", "Snippet", "eligible_files", "line_kinds", "sample_snippets"]

DEFAULT_EXCLUDE = (
    "tests/*", "*/tests/*", "test/*", "*/test/*", "testing/*", "*/testing/*", "test_*.py", "*/test_*.py",
    "*_test.py", "conftest.py", "*/conftest.py", "docs/*", "*/docs/*", "doc/*", "examples/*", "*/examples/*",
    "example/*", "benchmarks/*", "*/benchmarks/*", "scripts/*", "setup.py", "noxfile.py", "*/__init__.py",
    "__init__.py", "*/_version.py", "*/__main__.py", "build/*", ".*/*",
)  # fmt: skip


@dataclass(frozen=True)
class SeedConfig:
    """How seed windows are drawn.

    Args:
        seed (`int`, defaults to 0): the run's seed; window ``i`` depends only on ``(seed, i)``.
        min_lines (`int`, defaults to 30): shortest window.
        max_lines (`int`, defaults to 200): longest window.
        include (`tuple[str, ...]`, defaults to ``("*.py",)``): globs (on the path relative to the repository root,
            ``/``-separated) a file must match.
        exclude (`tuple[str, ...]`, defaults to :data:`DEFAULT_EXCLUDE`): globs that rule a file out.
        package_only (`bool`, defaults to `True`): only files inside the repository's importable packages.
        min_code_fraction (`float`, defaults to 0.5): least share of lines that are code (not blank, comment,
            docstring or import) for a window to be kept.
        max_draws (`int`, defaults to 50): windows drawn for one seed before it is given up.

    Raises:
        ConfigError: ``min_lines`` < 1, ``max_lines`` < ``min_lines``, a fraction outside [0, 1], or
            ``max_draws`` < 1.

    Example:
        >>> SeedConfig(seed=3, min_lines=40).max_lines
        200
    """

    seed: int = 0
    min_lines: int = 30
    max_lines: int = 200
    include: tuple[str, ...] = ("*.py",)
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    package_only: bool = True
    min_code_fraction: float = 0.5
    max_draws: int = 50

    def __post_init__(self) -> None:
        if self.min_lines < 1 or self.max_lines < self.min_lines:
            raise ConfigError(f"need 1 <= min_lines <= max_lines; got {self.min_lines}, {self.max_lines}")
        if not 0.0 <= self.min_code_fraction <= 1.0:
            raise ConfigError(f"min_code_fraction must lie in [0, 1]; got {self.min_code_fraction}")
        if self.max_draws < 1:
            raise ConfigError(f"max_draws must be at least 1; got {self.max_draws}")
        object.__setattr__(self, "include", tuple(self.include))
        object.__setattr__(self, "exclude", tuple(self.exclude))


@dataclass(frozen=True)
class Snippet:
    """One window of a repository file.

    Args:
        path (`str`): the file, relative to the repository root (``/``-separated).
        start_line (`int`): first line, 1-based.
        end_line (`int`): last line, inclusive.
        text (`str`): the lines themselves.
        index (`int`): the seed index it was drawn for.
        code_fraction (`float`): share of lines that are code.
    """

    path: str
    start_line: int
    end_line: int
    text: str = field(repr=False)
    index: int = 0
    code_fraction: float = 1.0

    @property
    def lines(self) -> str:
        """``"start-end"``, as provenance records it."""
        return f"{self.start_line}-{self.end_line}"


def _matches(rel: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(rel, pattern) for pattern in patterns)


def eligible_files(repo: Repository, config: SeedConfig | None = None) -> list[str]:
    """Relative paths of the files seeds may be drawn from, sorted (deterministic across machines).

    Args:
        repo (`Repository`): the repository.
        config (`SeedConfig`, *optional*): globs and the ``package_only`` switch.

    Example:
        >>> eligible_files(open_repository("tests/data/code_instruct/tinytext"))   # doctest: +SKIP
        ['src/tinytext/core.py', 'src/tinytext/wrap.py']
    """
    config = config or SeedConfig()
    roots = [Path(p) for p in repo.package_dirs] if config.package_only else [repo.root]
    found = set()
    for root in roots:
        candidates = [root] if root.is_file() else _tree_files(root)
        for path in candidates:
            if path.suffix != ".py":
                continue
            rel = path.relative_to(repo.root).as_posix()
            if _matches(rel, config.include) and not _matches(rel, config.exclude):
                found.add(rel)
    return sorted(found)


def line_kinds(source: str) -> list[str]:
    """Classify each line of a Python file: ``code``, ``blank``, ``comment``, ``docstring`` or ``import``.

    Docstrings and multi-line imports are found with the AST of the whole file (a window alone may not parse);
    a file that does not parse falls back to line-by-line rules.

    Args:
        source (`str`): the file's text.

    Example:
        >>> line_kinds("'''Doc.'''\\nimport os\\n\\n# note\\nx = 1  # one\\n")
        ['docstring', 'import', 'blank', 'comment', 'code']
    """
    lines = source.splitlines()
    kinds = []
    for line in lines:
        stripped = line.strip()
        if not stripped:
            kinds.append("blank")
        elif stripped.startswith("#"):
            kinds.append("comment")
        else:
            kinds.append("code")
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        for i, line in enumerate(lines):
            if kinds[i] == "code" and line.lstrip().startswith(("import ", "from ")):
                kinds[i] = "import"
        return kinds

    def mark(node: ast.AST, kind: str) -> None:
        for number in range(node.lineno, (node.end_lineno or node.lineno) + 1):
            if kinds[number - 1] == "code":
                kinds[number - 1] = kind

    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mark(node, "import")
        elif isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                mark(first, "docstring")
    return kinds


def _draw(repo: Repository, files: list[str], index: int, config: SeedConfig, cache: dict) -> Snippet | None:
    rng = random.Random(f"{config.seed}:{index}")
    for _ in range(config.max_draws):
        rel = files[rng.randrange(len(files))]
        if rel not in cache:
            text = (repo.root / rel).read_text(encoding="utf-8", errors="replace")
            cache[rel] = (text.splitlines(), line_kinds(text))
        lines, kinds = cache[rel]
        if len(lines) < config.min_lines:
            continue
        size = rng.randint(config.min_lines, min(config.max_lines, len(lines)))
        start = rng.randrange(len(lines) - size + 1)
        window = kinds[start : start + size]
        fraction = sum(kind == "code" for kind in window) / size
        if fraction < config.min_code_fraction:
            continue
        text = "\n".join(lines[start : start + size]) + "\n"
        return Snippet(rel, start + 1, start + size, text, index=index, code_fraction=round(fraction, 4))
    return None


def sample_snippets(
    repo: Repository, n: int, *, config: SeedConfig | None = None, start: int = 0
) -> list[Snippet | None]:
    """Draw the seed windows ``start .. start + n - 1`` of a run.

    Args:
        repo (`Repository`): the repository.
        n (`int`): how many seeds.
        config (`SeedConfig`, *optional*): seed, window sizes, globs and the code-fraction threshold.
        start (`int`, defaults to 0): index of the first seed (to extend an earlier run).

    Returns:
        `list[Snippet | None]`: one entry per seed; `None` where ``max_draws`` windows were all rejected.

    Raises:
        ConfigError: ``n`` is negative, or no file is eligible (the message lists the globs).

    Example:
        >>> snippets = sample_snippets(open_repository("click-8.1.7.tar.gz"), 10)   # doctest: +SKIP
        >>> sum(s is not None for s in snippets)                                      # doctest: +SKIP
        10
    """
    config = config or SeedConfig()
    if n < 0:
        raise ConfigError(f"n must be non-negative; got {n}")
    files = eligible_files(repo, config)
    if not files:
        raise ConfigError(
            f"no file of {repo.name} is eligible for seeds (include={config.include}, exclude={config.exclude}, "
            f"package_only={config.package_only})"
        )
    cache: dict = {}
    return [_draw(repo, files, index, config, cache) for index in range(start, start + n)]
