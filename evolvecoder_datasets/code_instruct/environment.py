"""Execution environments for repository tasks: build once per repository, then run pytest verdicts in a sandbox.

An :class:`EnvironmentBackend` does two things: :meth:`~EnvironmentBackend.prepare` an environment where the
repository is installed next to pytest (built once, reused while the source tree is unchanged), and
:meth:`~EnvironmentBackend.run_pytest` on a set of files in a private work folder inside that environment. The
verdict never comes from the exit code or the log: a small pytest plugin we ship writes every test's outcome to a
result file signed with a per-run random key it gets through a pipe, and only a complete, signed file counts
(``os._exit(0)`` in a solution leaves none and reads as a crash).

:class:`VenvBackend` builds a virtualenv (``python -m venv`` + ``pip install <repo> pytest``) and runs pytest with
the venv's interpreter under the same isolation as the sandbox (bubblewrap, else ``unshare``, else none with a
warning): no network, a private ``/tmp``, home folders hidden, rlimits, an unprivileged uid when started as root,
a scrubbed environment and a wall-clock kill of the whole process group. A container backend (Docker, Podman)
subclasses :class:`EnvironmentBackend` the same way: build an image in ``prepare``, mount the work folder in
``run_pytest`` and read the verdict with :func:`read_verdict`.

This module holds :class:`VenvBackend`. The interface, :class:`RepoEnvironment` and the per-run work box live in
:mod:`.backend`; :class:`PytestRun` and the reader of the verdict file in :mod:`.verdict` (all importable from here).

Example:
    >>> from evolvecoder_datasets.code_instruct import VenvBackend, open_repository
    >>> repo = open_repository("tests/data/code_instruct/tinytext")                           # doctest: +SKIP
    >>> backend = VenvBackend()                                                                 # doctest: +SKIP
    >>> env = backend.prepare(repo)                                                             # doctest: +SKIP
    >>> run = backend.run_pytest(env, {"test_x.py": "def test_ok():\\n    assert 1 + 1 == 2\\n"})  # doctest: +SKIP
    >>> run.status, run.tests                                                                   # doctest: +SKIP
    ('passed', {'test_x.py::test_ok': 'passed'})
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError, EnvironmentBuildError
from .backend import (  # noqa: F401 - importable from here too
    _LOG_TAIL,
    LAUNCHER_PATH,
    EnvironmentBackend,
    RepoEnvironment,
    _Ended,
    _killed,
    _read_run,
    _stage_files,
    _tail,
)
from .repository import Repository, default_cache_dir, normalize_name
from .verdict import (
    PLUGIN_MODULE,
    PLUGIN_PATH,
    RUN_STATUSES,
    PytestRun,
    harness_args,
    new_key,
    read_verdict,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..limits import SandboxSettings

__all__ = [
    "PLUGIN_MODULE",
    "PLUGIN_PATH",
    "RUN_STATUSES",
    "EnvironmentBackend",
    "PytestRun",
    "RepoEnvironment",
    "VenvBackend",
    "read_verdict",
]

# Bumped when the way environments are built changes, so that old ones are rebuilt.
_BUILD_VERSION = "venv-1"
# Not copied into the build staging folder (caches and local virtualenvs; never part of a build).
_COPY_SKIP = ("__pycache__", "*.pyc", ".tox", ".nox", ".venv", "venv", ".mypy_cache", ".pytest_cache")


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _traversable_by_others(path: Path) -> bool:
    """Whether every folder above ``path`` lets other users through (so a dropped uid can reach it)."""
    for parent in Path(path).resolve().parents:
        try:
            if not os.stat(parent).st_mode & 0o001:
                return False
        except OSError:
            return False
    return True


class VenvBackend(EnvironmentBackend):
    """A virtualenv per repository, built once (keyed by the source tree) and run under namespace isolation.

    Building runs ``pip install`` on the repository, which executes its build backend on the host (as any
    ``pip install`` does): open repositories you would install anyway. Verification runs are the untrusted part
    and always go through the sandbox.

    Args:
        cache_dir (`str` or `os.PathLike`, *optional*): where environments live; defaults to
            ``$EVOLVECODER_CACHE/envs`` (``~/.cache/evolvecoder_datasets/envs``).
        python (`str`, *optional*): interpreter that creates the virtualenvs; defaults to the current one.
        requirements (`Sequence[str]`, defaults to ``("pytest",)``): installed next to the repository.
        pip_args (`Sequence[str]`, defaults to ``()``): extra ``pip install`` arguments (``--index-url``,
            ``--find-links``, ``--no-build-isolation``...).
        isolation (`str`, defaults to ``"auto"``): ``"auto"``, ``"bwrap"``, ``"unshare"`` or ``"none"`` (see
            :func:`evolvecoder_datasets.execution.isolation.detect_isolation`).
        memory_mb (`int`, defaults to 4096): address-space limit of the pytest process.
        max_output_mb (`int`, defaults to 64): largest file (and log) the run may write.
        uid (`int` or `None`, defaults to 65534): uid pytest drops to when started as root; `None` keeps root.
        build_timeout_s (`float`, defaults to 1800): limit on the ``pip install``.
        work_root (`str` or `os.PathLike`, *optional*): parent of the per-run work folders (default: the system
            temporary folder); they are deleted after each run.

    Raises:
        ConfigError: a non-positive limit or an unknown isolation.

    Example:
        >>> backend = VenvBackend(cache_dir="/tmp/ecd-envs", pip_args=["--no-build-isolation"])
        >>> backend.name
        'venv'
    """

    name = "venv"

    def __init__(
        self,
        *,
        cache_dir: str | os.PathLike | None = None,
        python: str | None = None,
        requirements: Sequence[str] = ("pytest",),
        pip_args: Sequence[str] = (),
        isolation: str = "auto",
        memory_mb: int = 4096,
        max_output_mb: int = 64,
        uid: int | None = 65534,
        build_timeout_s: float = 1800.0,
        work_root: str | os.PathLike | None = None,
    ) -> None:
        from ..execution.isolation import ISOLATIONS

        if isolation not in ISOLATIONS:
            raise ConfigError(f"unknown isolation {isolation!r}; choose one of {ISOLATIONS}")
        if memory_mb < 64 or max_output_mb < 1 or build_timeout_s <= 0:
            raise ConfigError("memory_mb must be >= 64, max_output_mb >= 1 and build_timeout_s positive")
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir() / "envs"
        self.python = python or sys.executable
        self.requirements = tuple(requirements)
        self.pip_args = tuple(pip_args)
        self.isolation_requested = isolation
        self._isolation: str | None = None
        self.memory_mb = int(memory_mb)
        self.max_output_mb = int(max_output_mb)
        self.uid = uid
        self.build_timeout_s = float(build_timeout_s)
        self.work_root = Path(work_root) if work_root is not None else Path(tempfile.gettempdir())

    @property
    def isolation(self) -> str:
        """The isolation in use (resolved on first use)."""
        if self._isolation is None:
            from ..execution.isolation import detect_isolation

            self._isolation = detect_isolation(self.isolation_requested)
        return self._isolation

    # -- building -----------------------------------------------------------------------------------------------

    def environment_key(self, repo: Repository) -> str:
        """Hash of the source tree, the interpreter, the requirements and the pip arguments."""
        digest = hashlib.sha256()
        for part in (_BUILD_VERSION, repo.tree_hash(), os.path.realpath(self.python), sys.version,
                     *self.requirements, "|", *self.pip_args):  # fmt: skip
            digest.update(part.encode() + b"\0")
        return digest.hexdigest()[:16]

    def environment_path(self, repo: Repository) -> Path:
        """Folder of ``repo``'s virtualenv (it may not be built yet)."""
        stem = normalize_name(repo.dist_name)
        return self.cache_dir / f"{stem}-{repo.version}-{self.environment_key(repo)}"

    def prepare(self, repo: Repository) -> RepoEnvironment:
        """Build the virtualenv of ``repo``, or reuse it when one with the same key is complete.

        Concurrent callers (threads or processes) wait on a file lock; a half-built folder left by a crash is
        rebuilt.

        Args:
            repo (`Repository`): the repository to install.

        Returns:
            `RepoEnvironment`: the interpreter to run and the installed versions.

        Raises:
            EnvironmentBuildError: ``venv``, ``pip install`` or the import check failed (the message ends with the
                tail of the tool's output).

        Example:
            >>> env = VenvBackend().prepare(open_repository("click-8.1.7.tar.gz"))   # doctest: +SKIP
            >>> env.versions["pytest"] >= "8"                                          # doctest: +SKIP
            True
        """
        root = self.environment_path(repo)
        marker = root / "ecd-environment.json"
        with _file_lock(root.with_name(root.name + ".lock")):
            if marker.is_file():
                try:
                    return RepoEnvironment(**json.loads(marker.read_text()))
                except (ValueError, TypeError):
                    pass
            shutil.rmtree(root, ignore_errors=True)
            env = self._build(repo, root)
            marker.write_text(json.dumps(asdict(env), indent=1))
            return env

    def _run_tool(self, argv: list[str], what: str) -> str:
        try:
            proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False,
                                  timeout=self.build_timeout_s)  # fmt: skip
        except subprocess.TimeoutExpired as err:
            raise EnvironmentBuildError(f"{what} took more than {self.build_timeout_s:g} s") from err
        except OSError as err:
            raise EnvironmentBuildError(f"{what} could not start: {err}") from err
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr)[-_LOG_TAIL:]
            raise EnvironmentBuildError(f"{what} failed with exit code {proc.returncode}:\n{tail}")
        return proc.stdout

    def _build(self, repo: Repository, root: Path) -> RepoEnvironment:
        root.parent.mkdir(parents=True, exist_ok=True)
        self._run_tool([self.python, "-m", "venv", str(root)], "python -m venv")
        python = str(root / "bin" / "python")
        # pip builds a source tree in place, and setuptools leaves ``build/`` and ``*.egg-info`` there: that would
        # edit the user's checkout and change the tree hash, so the next prepare() would build again. Build from a
        # throwaway copy instead (VCS metadata kept: setuptools-scm and hatch-vcs read it).
        staging = None if repo.kind == "wheel" else root.with_name(root.name + ".src")
        try:
            if staging is None:
                target = str(Path(repo.origin).resolve())
            else:
                shutil.rmtree(staging, ignore_errors=True)
                shutil.copytree(repo.root, staging, symlinks=True, ignore=shutil.ignore_patterns(*_COPY_SKIP))
                target = str(staging)
            self._run_tool(
                [python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--progress-bar",
                 "off", target, *self.requirements, *self.pip_args],
                f"pip install {repo.name}",
            )  # fmt: skip
        finally:
            if staging is not None:
                shutil.rmtree(staging, ignore_errors=True)
        probe = (
            "import importlib, importlib.metadata as md, json, sys\n"
            f"importlib.import_module({repo.package!r})\n"
            "out = {}\n"
            f"for dist in ({repo.dist_name!r}, 'pytest'):\n"
            "    try:\n"
            "        out[dist] = md.version(dist)\n"
            "    except md.PackageNotFoundError:\n"
            "        out[dist] = ''\n"
            "print(json.dumps(out))\n"
        )
        versions = json.loads(self._run_tool([python, "-c", probe], f"import {repo.package}").strip().splitlines()[-1])
        if not versions.get("pytest"):
            raise EnvironmentBuildError(f"pytest is not installed in {root}; add it to requirements")
        return RepoEnvironment(
            backend=self.name,
            key=root.name.rsplit("-", 1)[-1],
            python=python,
            root=str(root),
            repository=repo.name,
            package=repo.package,
            versions=versions,
            built_at=time.time(),
        )

    # -- running ------------------------------------------------------------------------------------------------

    def sandbox_settings(self, env: RepoEnvironment) -> SandboxSettings | None:
        """A sandbox whose programs import the virtualenv's packages, under this backend's isolation and memory
        limit; ``None`` where the virtualenv is not one the sandbox's interpreter can use (another Python version,
        or gone).

        Example:
            >>> VenvBackend(memory_mb=2048).sandbox_settings(env).memory_mb   # doctest: +SKIP
            2048
        """
        from ..execution.isolation import env_site_paths
        from ..limits import SandboxSettings

        try:
            env_site_paths(env.root)
        except ConfigError:
            return None
        return SandboxSettings(python_env=os.path.abspath(env.root), memory_mb=self.memory_mb,
                               isolation=self.isolation_requested)  # fmt: skip

    def _command(self, argv: list[str], *, box: Path, env: RepoEnvironment) -> list[str]:
        from ..execution.isolation import bwrap_command, unshare_command

        # The venv (at the path the environment records, so a symlinked cache folder keeps working) and its base
        # interpreter are shown read-only; the box (work folder, result folder, private tmp) is the only writable
        # place. Everything else of the host stays out (see ``mount_plan``).
        base = str(Path(os.path.realpath(env.python)).parent.parent)
        options = {"read_only": [(os.path.realpath(env.root), env.root), base], "writable": [str(box)],
                   "chdir": str(box / "work")}  # fmt: skip
        if self.isolation == "bwrap":
            return bwrap_command(argv, **options)
        if self.isolation == "unshare":
            return unshare_command(argv, **options)
        return argv

    def run_pytest(
        self, env: RepoEnvironment, files: Mapping[str, str], *, test_file: str | None = None, timeout_s: float = 180.0,
        collect_only: bool = False,
    ) -> PytestRun:
        """Run pytest on ``test_file`` in a fresh work folder holding ``files``, inside the sandbox.

        Args:
            env (`RepoEnvironment`): from :meth:`prepare`.
            files (`Mapping[str, str]`): relative path -> text, e.g. ``{"test_task.py": ..., "task_module.py": ...}``.
            test_file (`str`, *optional*): which file to run; defaults to the only ``test_*.py`` among ``files``.
            timeout_s (`float`, defaults to 180): wall-clock limit (CPU limited to the same number of seconds).
            collect_only (`bool`, defaults to `False`): only collect (``pytest --collect-only``): the run's
                ``collected`` and ``listed`` say what pytest would run, and no test runs.

        Returns:
            `PytestRun`: the verdict read from the plugin's signed result file.

        Raises:
            ConfigError: a path leaves the work folder, or no single test file can be chosen.

        Example:
            >>> run = backend.run_pytest(env, {"test_t.py": "import os\\ndef test_a():\\n    os._exit(0)\\n"})  # doctest: +SKIP
            >>> run.status                                                                                  # doctest: +SKIP
            'crashed'
        """
        return self._run_in_fresh_box(env, files, test_file, timeout_s, prefix="ecd-verify-", collect_only=collect_only)

    def _run_in_box(
        self, box: Path, env: RepoEnvironment, files: Mapping[str, str], test_file: str, timeout_s: float, *,
        collect_only: bool = False,
    ) -> PytestRun:
        work, harness, result, tmp = (box / "work", box / "harness", box / "result", box / "tmp")
        for folder, mode in ((work, 0o777), (harness, 0o755), (result, 0o777), (tmp, 0o1777)):
            folder.mkdir()
            os.chmod(folder, mode)
        os.chmod(box, 0o755)
        _stage_files(work, harness, files)
        key = new_key()
        verdict_path = result / "verdict.json"
        child_env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "HOME": str(tmp),
            "TMPDIR": str(tmp),
            "PYTHONPATH": str(harness),
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "OMP_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1",
            "ECD_VERDICT_PATH": str(verdict_path),
        }
        pytest_argv = [env.python, "-m", "pytest", *harness_args(str(harness / "pytest.ini"), str(work), test_file,
                                                                 collect_only=collect_only)]  # fmt: skip
        cpu = max(1, math.ceil(timeout_s))
        memory, output = self.memory_mb * 1024 * 1024, self.max_output_mb * 1024 * 1024
        # (soft, hard): SIGXCPU at the soft CPU limit, SIGKILL one second later if it is ignored.
        limits = {
            "RLIMIT_AS": (memory, memory),
            "RLIMIT_CPU": (cpu, cpu + 1),
            "RLIMIT_FSIZE": (output, output),
            "RLIMIT_NOFILE": (1024, 1024),
            "RLIMIT_CORE": (0, 0),
        }
        uid = self.uid if os.geteuid() == 0 else None
        if uid is not None and self.isolation == "none" and not _traversable_by_others(Path(env.python)):
            uid = None  # the venv sits under a private folder the dropped uid could not read
        if uid is not None:
            limits["RLIMIT_NPROC"] = (512, 512)
        spec = {"limits": limits, "uid": uid, "cwd": str(work), "env": child_env, "argv": pytest_argv, "key": key}
        spec_path = harness / "spec.json"
        spec_path.touch(mode=0o600)  # the launcher reads it before dropping privileges, and removes it
        spec_path.write_text(json.dumps(spec))
        argv = [env.python, "-I", "-S", str(harness / "launch.py"), str(spec_path)]
        cmd = self._command(argv, box=box, env=env)
        log_path = box / "log.txt"
        started = time.monotonic()
        timed_out = False
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True, env={"PATH": child_env["PATH"], "LANG": "C.UTF-8"})  # fmt: skip
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        duration = time.monotonic() - started
        code = proc.returncode
        ended = _Ended(code, timed_out, _killed(code) and duration >= 0.9 * timeout_s, duration)
        return _read_run(verdict_path, key, log_path, ended, test_file=test_file, collect_only=collect_only)
