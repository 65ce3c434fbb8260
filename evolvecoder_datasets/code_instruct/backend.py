"""The interface every environment backend implements, the environment it builds, and the work box it fills.

:class:`EnvironmentBackend` is all the pipeline talks to: :meth:`~EnvironmentBackend.prepare` returns a
:class:`RepoEnvironment`, :meth:`~EnvironmentBackend.run_pytest` a :class:`~.verdict.PytestRun`. The helpers here are
what every backend's run shares (:class:`~.environment.VenvBackend` and :class:`~.containers.ContainerBackend`): a
fresh folder per run, the run's files and the verdict harness staged into it, and the tail of the log.

Example:
    >>> RepoEnvironment(backend="venv", key="k", python="py", root="/envs/x", repository="x==1", package="x").versions
    {}
"""

from __future__ import annotations

import abc
import dataclasses
import os
import shutil
import signal
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError
from .repository import Repository
from .verdict import PLUGIN_MODULE, PLUGIN_PATH, PytestRun, read_verdict

if TYPE_CHECKING:  # pragma: no cover
    from ..limits import SandboxSettings

__all__ = ["EnvironmentBackend", "RepoEnvironment"]

LAUNCHER_PATH = Path(__file__).with_name("_launch.py")
_LOG_TAIL = 4000
#: How much of a collect-only run's output is read for the test ids it lists, and how many lines of it.
MAX_LISTING_BYTES = 1 << 20
MAX_LISTING_LINES = 20_000


@dataclass(frozen=True)
class RepoEnvironment:
    """A built environment where one repository is installed next to pytest.

    Args:
        backend (`str`): the backend that built it (``"venv"``).
        key (`str`): hash of everything that went into the build (source tree, interpreter, requirements).
        python (`str`): the interpreter to run inside it.
        root (`str`): its folder (the virtualenv).
        repository (`str`): ``dist==version`` of the repository.
        package (`str`): the import name verified importable after the build.
        versions (`dict[str, str]`): installed versions of the repository's distribution and of pytest.
        built_at (`float`): Unix time of the build.
    """

    backend: str
    key: str
    python: str
    root: str
    repository: str
    package: str
    versions: dict[str, str] = field(default_factory=dict)
    built_at: float = 0.0


class EnvironmentBackend(abc.ABC):
    """Builds per-repository environments and runs sandboxed pytest verdicts in them.

    Subclasses implement :meth:`prepare` and :meth:`run_pytest`; the pipeline only talks to this interface.
    """

    #: Short name recorded in the environment and the provenance of every task.
    name: str = "base"

    @abc.abstractmethod
    def prepare(self, repo: Repository) -> RepoEnvironment:
        """Build (or reuse) the environment of ``repo``.

        Raises:
            EnvironmentBuildError: the repository or pytest cannot be installed, or the package does not import.
        """

    @abc.abstractmethod
    def run_pytest(
        self, env: RepoEnvironment, files: Mapping[str, str], *, test_file: str | None = None, timeout_s: float = 180.0,
        collect_only: bool = False,
    ) -> PytestRun:
        """Write ``files`` (relative path -> text) to a fresh work folder and run pytest on ``test_file`` there
        (``collect_only``: ``pytest --collect-only``, which fills :attr:`~.verdict.PytestRun.collected` and
        :attr:`~.verdict.PytestRun.listed` and runs no test).

        Raises:
            ConfigError: a file path leaves the work folder, or ``test_file`` is not among ``files``.
        """

    def sandbox_settings(self, env: RepoEnvironment) -> SandboxSettings | None:
        """Settings of a sandbox whose programs import ``env``'s packages, so split tests can be judged outside the
        solution's process (:func:`~.verification.verify_task`); ``None`` where the host's sandbox cannot reach this
        backend's environments (a container image): its tasks are verified by pytest, judged inside.

        Example:
            >>> VenvBackend().sandbox_settings(env).python_env == env.root   # doctest: +SKIP
            True
        """
        return None

    def _run_in_fresh_box(
        self, env: RepoEnvironment, files: Mapping[str, str], test_file: str | None, timeout_s: float, *, prefix: str,
        collect_only: bool = False,
    ) -> PytestRun:
        """What every backend's :meth:`run_pytest` does around its own run: check the request, make a fresh folder
        under ``self.work_root``, hand it to ``self._run_in_box`` and remove it afterwards."""
        if timeout_s <= 0:
            raise ConfigError(f"timeout_s must be positive; got {timeout_s}")
        test_file = test_file or _only_test_file(files)
        if test_file not in files:
            raise ConfigError(f"test_file {test_file!r} is not among the files {sorted(files)}")
        self.work_root.mkdir(parents=True, exist_ok=True)
        box = Path(tempfile.mkdtemp(prefix=prefix, dir=self.work_root)).resolve()
        try:
            return self._run_in_box(box, env, files, test_file, timeout_s, collect_only=collect_only)
        finally:
            shutil.rmtree(box, ignore_errors=True)


def _stage_files(work: Path, harness: Path, files: Mapping[str, str]) -> None:
    """Write a run's files under ``work`` (a path that leaves it is refused) and the verdict harness (plugin,
    launcher, an empty ``pytest.ini``) into ``harness``: what every backend's box holds before pytest starts."""
    for rel, text in files.items():
        target = (work / rel).resolve()
        if work not in target.parents:
            raise ConfigError(f"file path {rel!r} leaves the work folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    shutil.copyfile(PLUGIN_PATH, harness / f"{PLUGIN_MODULE}.py")
    shutil.copyfile(LAUNCHER_PATH, harness / "launch.py")
    (harness / "pytest.ini").write_text("[pytest]\n")


@dataclasses.dataclass(frozen=True)
class _Ended:
    """How a harness process ended, as the caller saw it (never from the process's own account)."""

    code: int | None
    timed_out: bool  # the caller's wall-clock limit fired
    limit_hit: bool  # the process was killed by its CPU limit (a timeout when there is no verdict)
    duration_s: float


def _read_run(result: Path, key: str, log_path: Path, ended: _Ended, *, test_file: str,
              collect_only: bool) -> PytestRun:  # fmt: skip
    """The :class:`PytestRun` of a finished harness run: the signed result file (none: a timeout or a crash), and
    for a passed run pytest's exit code as the caller saw it must be 0 too (a passed account from a process that then
    ended otherwise is a failure). A collect-only run also gets the ids its output listed, read with bounds."""
    tail = _tail(log_path)
    verdict = None if ended.timed_out else read_verdict(result, key, collect_only=collect_only)
    if verdict is None:
        slow = ended.timed_out or ended.limit_hit
        return PytestRun("timeout" if slow else "crashed", exit_code=ended.code, duration_s=ended.duration_s,
                         log_tail=tail)  # fmt: skip
    status = verdict.status
    if status == "passed" and ended.code != 0:
        status = "failed"
    listed = _listed_ids(log_path, test_file) if collect_only else ()
    return dataclasses.replace(verdict, status=status, exit_code=ended.code, duration_s=ended.duration_s,
                               log_tail=tail, listed=listed)  # fmt: skip


def _killed(code: int | None) -> bool:
    """Whether an exit code says SIGXCPU or SIGKILL: bwrap and container engines report 128 + signal, a bare
    process a negative code."""
    return code is not None and abs(code) % 128 in (signal.SIGXCPU, signal.SIGKILL)


def _listed_ids(path: Path, test_file: str) -> tuple[str, ...]:
    """The test ids a ``pytest --collect-only -q`` run printed (lines ``<test_file>::...``): at most
    :data:`MAX_LISTING_BYTES` of its output and :data:`MAX_LISTING_LINES` lines are read, a line over 2,000
    characters is dropped. The output is the run's (hostile) account; the caller compares it, never trusts it."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_LISTING_BYTES)
    except OSError:
        return ()
    prefix = f"{test_file}::"
    lines = data.decode("utf-8", "replace").splitlines()[:MAX_LISTING_LINES]
    return tuple(line for line in lines if line.startswith(prefix) and len(line) <= 2_000)


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - _LOG_TAIL))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _only_test_file(files: Mapping[str, str]) -> str:
    tests = [rel for rel in files if Path(rel).name.startswith("test_") and rel.endswith(".py")]
    if len(tests) != 1:
        raise ConfigError(f"pass test_file: expected exactly one test_*.py among {sorted(files)}")
    return tests[0]
