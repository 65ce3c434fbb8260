"""Harbor's own linter over exported task folders, run from a separate virtualenv (Harbor needs Python >= 3.12).

Harbor (``pip install harbor``) is the agent-harness framework whose task format :func:`export_task_folders` writes.
It cannot live in this package's environment (it needs a newer Python), so :func:`ensure_harbor` builds it once in
a virtualenv of its own, made with the first Python >= 3.12 it finds (``$ECD_HARBOR_PYTHON``, then
``python3.13``/``python3.12`` on ``PATH``, then pyenv's versions folder), and :func:`harbor_lint` runs
``harbor lint --json --select ALL`` (every rule, including those off by default) and returns the findings.

From the shell (``scripts/setup.sh`` runs the first line)::

    python -m evolvecoder_datasets.code_instruct.harbor setup              # builds .cache/harbor-0.25.0
    python -m evolvecoder_datasets.code_instruct.harbor lint out/tasks/*   # prints the findings, exit 1 if any

Example:
    >>> from evolvecoder_datasets.code_instruct.harbor import ensure_harbor, harbor_lint
    >>> harbor = ensure_harbor(".cache/harbor-0.25.0")                     # doctest: +SKIP
    >>> harbor_lint(["out/tasks/tiny_textkit_0"], harbor=harbor)           # doctest: +SKIP
    []
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from ..errors import ConfigError, EnvironmentBuildError

__all__ = ["DEFAULT_HARBOR_DIR", "HARBOR_VERSION", "MIN_PYTHON", "ensure_harbor", "find_python", "harbor_lint"]

#: The Harbor release the exported task format is checked against.
HARBOR_VERSION = "0.25.0"
#: Harbor's lowest supported Python.
MIN_PYTHON = (3, 12)
#: Where ``setup`` builds Harbor's virtualenv, relative to the repository root (git-ignored).
DEFAULT_HARBOR_DIR = Path(".cache") / f"harbor-{HARBOR_VERSION}"


def _version_of(python: str) -> tuple[int, int] | None:
    try:
        proc = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True,
                              text=True, timeout=30, check=False)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    parts = proc.stdout.split()
    return (int(parts[0]), int(parts[1])) if proc.returncode == 0 and len(parts) == 2 else None


def find_python(minimum: tuple[int, int] = MIN_PYTHON) -> str | None:
    """A Python interpreter of at least version ``minimum`` that really runs, or `None`.

    Looks at ``$ECD_HARBOR_PYTHON``, then ``python3.13`` and ``python3.12`` on ``PATH`` (a pyenv shim that fails
    without ``PYENV_VERSION`` is skipped), then ``$PYENV_ROOT/versions/*/bin/python3.*`` (newest first).

    Example:
        >>> python = find_python()
        >>> python is None or python.startswith("/")
        True
    """
    candidates = [os.environ.get("ECD_HARBOR_PYTHON", "")]
    candidates += [shutil.which(f"python3.{minor}") or "" for minor in range(15, minimum[1] - 1, -1)]
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    if pyenv.is_dir():
        def key(path: Path) -> tuple[int, ...]:
            return tuple(int(n) for n in re.findall(r"\d+", path.parent.parent.name)[:3])

        found = [p for p in pyenv.glob("*/bin/python3.*") if re.fullmatch(r"python3\.\d+", p.name)]
        candidates += [str(p) for p in sorted(found, key=key, reverse=True)]
    for candidate in candidates:
        if candidate and (_version_of(candidate) or (0, 0)) >= minimum:
            return str(Path(candidate).absolute())
    return None


def ensure_harbor(folder: str | os.PathLike = DEFAULT_HARBOR_DIR, *, version: str = HARBOR_VERSION,
                  python: str | None = None, timeout_s: float = 900.0) -> Path:  # fmt: skip
    """The ``harbor`` executable of a virtualenv at ``folder``, built there first if needed (from PyPI).

    Args:
        folder (`str` or `os.PathLike`, defaults to :data:`DEFAULT_HARBOR_DIR`): the virtualenv; reused when it
            holds this Harbor version.
        version (`str`, defaults to :data:`HARBOR_VERSION`): the Harbor release.
        python (`str`, *optional*): interpreter to build it with; defaults to :func:`find_python`.
        timeout_s (`float`, defaults to 900): limit on ``pip install``.

    Raises:
        ConfigError: no Python >= 3.12 is found.
        EnvironmentBuildError: ``venv`` or ``pip install harbor`` failed.

    Example:
        >>> ensure_harbor(".cache/harbor-0.25.0")        # doctest: +SKIP
        PosixPath('.cache/harbor-0.25.0/bin/harbor')
    """
    root = Path(folder)
    harbor = root / "bin" / "harbor"
    stamp = root / "ecd-harbor-version"
    if harbor.is_file() and stamp.is_file() and stamp.read_text().strip() == version:
        return harbor
    python = python or find_python()
    if python is None:
        raise ConfigError("Harbor needs Python >= 3.12 and none was found: set ECD_HARBOR_PYTHON to one")
    shutil.rmtree(root, ignore_errors=True)
    steps = [([python, "-m", "venv", str(root)], "python -m venv"),
             ([str(root / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q",
               f"harbor=={version}"], f"pip install harbor=={version}")]  # fmt: skip
    for argv, what in steps:
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise EnvironmentBuildError(f"{what} failed: {err}") from err
        if proc.returncode != 0:
            raise EnvironmentBuildError(f"{what} failed:\n{(proc.stdout + proc.stderr)[-2000:]}")
    stamp.write_text(version + "\n")
    return harbor


def harbor_lint(folders: Iterable[str | os.PathLike], *, harbor: str | os.PathLike, select: str = "ALL",
                timeout_s: float = 300.0) -> list[dict]:  # fmt: skip
    """Run ``harbor lint --json`` on task folders; returns its findings (an empty list when there are none).

    Args:
        folders (`Iterable[str | os.PathLike]`): task folders.
        harbor (`str` or `os.PathLike`): the ``harbor`` executable (:func:`ensure_harbor`).
        select (`str`, defaults to ``"ALL"``): rule selection (``ALL``: also the rules off by default).
        timeout_s (`float`, defaults to 300): limit on the run.

    Raises:
        EnvironmentBuildError: ``harbor lint`` did not produce its JSON report.

    Example:
        >>> harbor_lint(["out/tasks/tiny_textkit_0"], harbor=".cache/harbor-0.25.0/bin/harbor")   # doctest: +SKIP
        []
    """
    paths = [str(Path(f)) for f in folders]
    if not paths:
        return []
    argv = [str(harbor), "lint", "--json", "--select", select, *paths]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    start = proc.stdout.find("[")
    try:
        findings = json.loads(proc.stdout[start:]) if start >= 0 else None
    except ValueError:
        findings = None
    if not isinstance(findings, list):
        raise EnvironmentBuildError(f"harbor lint gave no JSON report (exit {proc.returncode}):\n"
                                    f"{(proc.stdout + proc.stderr)[-2000:]}")  # fmt: skip
    return findings


def main(argv: list[str] | None = None) -> int:
    """``setup [FOLDER]`` builds Harbor's venv; ``lint FOLDER...`` prints findings and returns 1 when there are some."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["setup"]:
        print(ensure_harbor(args[1] if len(args) > 1 else DEFAULT_HARBOR_DIR))
        return 0
    if args[:1] == ["lint"] and len(args) > 1:
        findings = harbor_lint(args[1:], harbor=ensure_harbor())
        for finding in findings:
            print(json.dumps(finding))
        print(f"{len(findings)} finding(s) in {len(args) - 1} folder(s)")
        return 1 if findings else 0
    print(__doc__.split("From the shell")[1].split("Example:")[0].strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
