"""A container :class:`~.backend.EnvironmentBackend`: the task folder's own Dockerfile, built and run by Docker or
Podman.

:class:`ContainerBackend` makes the environment of a repository in two steps. First a lock: the repository is
installed in a virtualenv (:class:`~.environment.VenvBackend`), which resolves its dependencies; what got installed
there, pinned, becomes the :class:`~.dockerfile.EnvironmentSpec`. Then the image: :func:`~.dockerfile.write_build_context`
writes the very build context a task folder exports (``Dockerfile``, ``requirements.txt``, ``src/``), and the engine
builds it (tagged by the spec's digest, so it is built once). Verification runs pytest inside that image: no network,
an unprivileged uid, memory, CPU and process limits, a read-only root with a private ``/tmp``; the work folder is
mounted at ``/app`` (the delivery contract's folder) and the verdict comes from the same signed result file the
virtualenv backend reads, through the same launcher and plugin.

Choose it with ``environment: container`` in a code_instruct recipe, or pass it to :func:`~.pipeline.generate_tasks`.
:func:`detect_engine` says which engine answers and why the others do not: a ``docker`` client without a reachable
daemon does not count. Building needs the base image (pulled by digest from its registry, or already present).

Example:
    >>> from evolvecoder_datasets.code_instruct.containers import ContainerBackend, detect_engine
    >>> engine, why_not = detect_engine()
    >>> engine is None or why_not == ""
    True
    >>> env = ContainerBackend().prepare(repo)                                    # doctest: +SKIP
    >>> ContainerBackend().run_pytest(env, {"test_a.py": "def test_a(): pass"})   # doctest: +SKIP
"""

from __future__ import annotations

import json
import math
import os
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..errors import ConfigError, EnvironmentBuildError, SandboxUnavailable
from .backend import EnvironmentBackend, RepoEnvironment, _Ended, _read_run, _stage_files
from .dockerfile import WORKDIR, EnvironmentSpec, environment_spec, write_build_context
from .environment import VenvBackend
from .repository import Repository, default_cache_dir
from .verdict import PytestRun, harness_args, new_key

__all__ = ["ENGINES", "ContainerBackend", "detect_engine"]

#: Container engines, in the order ``engine="auto"`` tries them.
ENGINES = ("docker", "podman")
_HARNESS = "/ecd/harness"
_RESULT = "/ecd/result"


def detect_engine(requested: str = "auto") -> tuple[str | None, str]:
    """``(path of a working engine, "")`` or ``(None, why none works)``.

    An engine works when its client is installed and ``<engine> info`` answers (a ``docker`` client whose daemon
    is not running does not work).

    Args:
        requested (`str`, defaults to ``"auto"``): ``"auto"`` (the first of :data:`ENGINES` that works),
            ``"docker"`` or ``"podman"``.

    Raises:
        ConfigError: an unknown engine name.

    Example:
        >>> path, reason = detect_engine("podman")
        >>> (path is None) == bool(reason)
        True
    """
    if requested not in ("auto", *ENGINES):
        raise ConfigError(f"unknown container engine {requested!r}; choose 'auto', 'docker' or 'podman'")
    reasons = []
    for name in ENGINES if requested == "auto" else (requested,):
        path = shutil.which(name)
        if path is None:
            reasons.append(f"{name}: not installed")
            continue
        try:
            proc = subprocess.run([path, "info"], capture_output=True, text=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired) as err:
            reasons.append(f"{name}: `{name} info` failed ({err})")
            continue
        if proc.returncode == 0:
            return path, ""
        last = next((line for line in reversed(proc.stderr.strip().splitlines()) if line.strip()), "no output")
        reasons.append(f"{name}: `{name} info` failed ({last.strip()[:200]})")
    return None, "; ".join(reasons)


class ContainerBackend(EnvironmentBackend):
    """Environments as container images built from the exported Dockerfile; pytest verdicts run inside them.

    Args:
        engine (`str`, defaults to ``"auto"``): ``"auto"``, ``"docker"`` or ``"podman"``.
        base_image (`str`, *optional*): digest-pinned python image; defaults to the one of :data:`~.dockerfile.BASE_IMAGES`
            for the lock's Python.
        lock (`VenvBackend`, *optional*): resolves and pins the dependencies; defaults to a :class:`VenvBackend`
            with ``cache_dir``.
        cache_dir (`str` or `os.PathLike`, *optional*): build contexts (and the default lock's venvs); defaults to
            ``$EVOLVECODER_CACHE/containers``.
        memory_mb (`int`, defaults to 4096): container memory limit.
        cpus (`float`, defaults to 1.0): container CPU limit.
        pids (`int`, defaults to 512): container process limit.
        user (`str`, defaults to ``"65534:65534"``): uid:gid tests run as.
        build_timeout_s (`float`, defaults to 1800): limit on one image build.
        build_args (`Sequence[str]`, defaults to ``()``): extra ``<engine> build`` arguments (``--network host``
            where the engine's build network cannot reach the package index).
        engine_args (`Sequence[str]`, defaults to ``()``): global engine options, put before every command
            (``("--runtime", "runc")`` where crun cannot drive the host's cgroups).
        work_root (`str` or `os.PathLike`, *optional*): parent of the per-run folders mounted into containers.

    Raises:
        ConfigError: an unknown engine or a limit out of range.

    Example:
        >>> backend = ContainerBackend(engine="podman", memory_mb=2048)
        >>> backend.name, backend.memory_mb
        ('container', 2048)
    """

    name = "container"

    def __init__(
        self,
        *,
        engine: str = "auto",
        base_image: str | None = None,
        lock: VenvBackend | None = None,
        cache_dir: str | os.PathLike | None = None,
        memory_mb: int = 4096,
        cpus: float = 1.0,
        pids: int = 512,
        user: str = "65534:65534",
        build_timeout_s: float = 1800.0,
        build_args: Sequence[str] = (),
        engine_args: Sequence[str] = (),
        work_root: str | os.PathLike | None = None,
    ) -> None:
        if engine not in ("auto", *ENGINES):
            raise ConfigError(f"unknown container engine {engine!r}; choose 'auto', 'docker' or 'podman'")
        if memory_mb < 64 or cpus <= 0 or pids < 16 or build_timeout_s <= 0:
            raise ConfigError("need memory_mb >= 64, cpus > 0, pids >= 16 and a positive build_timeout_s")
        self.engine_requested = engine
        self._engine: str | None = None
        self.base_image = base_image
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir() / "containers"
        self.lock = lock or VenvBackend(cache_dir=self.cache_dir / "locks")
        self.memory_mb = int(memory_mb)
        self.cpus = float(cpus)
        self.pids = int(pids)
        self.user = user
        self.build_timeout_s = float(build_timeout_s)
        self.build_args = tuple(build_args)
        self.engine_args = tuple(engine_args)
        self.work_root = Path(work_root) if work_root is not None else Path(tempfile.gettempdir())
        self._specs: dict[str, EnvironmentSpec] = {}

    def spec_of(self, env: RepoEnvironment) -> EnvironmentSpec | None:
        """The spec an environment of this backend was built from (what its task folders export)."""
        return self._specs.get(env.key)

    @property
    def engine(self) -> str:
        """Path of the engine in use (resolved on first use).

        Raises:
            SandboxUnavailable: no engine works here; the message says why for each.
        """
        if self._engine is None:
            path, reason = detect_engine(self.engine_requested)
            if path is None:
                raise SandboxUnavailable(f"no container engine works here ({reason}); use the venv backend")
            self._engine = path
        return self._engine

    # -- building -----------------------------------------------------------------------------------------------

    def _tool(self, argv: list[str], what: str, timeout_s: float) -> subprocess.CompletedProcess:
        try:
            proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout_s,
                                  check=False)  # fmt: skip
        except subprocess.TimeoutExpired as err:
            raise EnvironmentBuildError(f"{what} took more than {timeout_s:g} s") from err
        except OSError as err:
            raise EnvironmentBuildError(f"{what} could not start: {err}") from err
        if proc.returncode != 0:
            raise EnvironmentBuildError(f"{what} failed with exit code {proc.returncode}:\n"
                                        f"{(proc.stdout + proc.stderr)[-4000:]}")  # fmt: skip
        return proc

    def spec_for(self, repo: Repository) -> EnvironmentSpec:
        """Lock ``repo``'s dependencies in a virtualenv and return the spec the image is built from."""
        return environment_spec(repo, self.lock.prepare(repo), base_image=self.base_image)

    def prepare(self, repo: Repository) -> RepoEnvironment:
        """Build (once per spec digest) the image of ``repo`` from its exported build context.

        Raises:
            SandboxUnavailable: no container engine works here.
            EnvironmentBuildError: the lock, the build or the import check failed.
            ConfigError: no pinned base image is known for the lock's Python.

        Example:
            >>> env = ContainerBackend().prepare(open_repository("click-8.1.7.tar.gz"))   # doctest: +SKIP
            >>> env.root                                                                     # doctest: +SKIP
            'ecd-click:8.1.7-5b0c...'
        """
        self.engine  # noqa: B018 - refuse before the lock builds a virtualenv for nothing
        return self.prepare_spec(self.spec_for(repo))

    def prepare_spec(self, spec: EnvironmentSpec) -> RepoEnvironment:
        """Build (or reuse) the image of ``spec``; see :meth:`prepare`."""
        engine, tag = self.engine, spec.image_tag
        self._specs[spec.digest] = spec
        inspect = [engine, *self.engine_args, "image", "inspect", tag]
        if subprocess.run(inspect, capture_output=True, check=False).returncode != 0:
            context = write_build_context(spec, self.cache_dir / "contexts" / tag.replace(":", "-"))
            self._tool([engine, *self.engine_args, "build", *self.build_args, "--tag", tag, str(context)],
                       f"{Path(engine).name} build {tag}", self.build_timeout_s)  # fmt: skip
        probe = (
            "import importlib, importlib.metadata as md, json\n"
            f"importlib.import_module({spec.package!r})\n"
            f"print(json.dumps({{d: md.version(d) for d in ({spec.dist_name!r}, 'pytest')}}))\n"
        )
        proc = self._tool([engine, *self.engine_args, "run", "--rm", "--network", "none", *self._ulimits(), tag,
                           "python", "-c", probe], f"import {spec.package} in {tag}", 300)  # fmt: skip
        versions = json.loads(proc.stdout.strip().splitlines()[-1])
        return RepoEnvironment(backend=Path(engine).name, key=spec.digest, python="python", root=tag,
                               repository=f"{spec.dist_name}=={spec.version}", package=spec.package,
                               versions=versions, built_at=time.time())  # fmt: skip

    def prepare_context(self, context: str | os.PathLike, *, package: str) -> RepoEnvironment:
        """Build an existing build context as it is (a task folder's ``environment/``) and check ``package`` imports.

        Used to re-verify an exported task from its own files (:func:`~.export.verify_task_folder`): no lock, no
        rewrite, the folder's Dockerfile itself. The image is tagged by a hash of the context's files.

        Raises:
            SandboxUnavailable: no container engine works here.
            EnvironmentBuildError: the build or the import check failed.

        Example:
            >>> env = ContainerBackend().prepare_context("out/tasks/six_0/environment", package="six")  # doctest: +SKIP
        """
        from .dockerfile import _tree_hash

        engine, root = self.engine, Path(context)
        tag = f"ecd-task-env:{_tree_hash(root)[:12]}"
        if subprocess.run([engine, *self.engine_args, "image", "inspect", tag], capture_output=True,
                          check=False).returncode != 0:  # fmt: skip
            self._tool([engine, *self.engine_args, "build", *self.build_args, "--tag", tag, str(root)],
                       f"{Path(engine).name} build {root}", self.build_timeout_s)  # fmt: skip
        probe = (f"import importlib, importlib.metadata as md, json\nimportlib.import_module({package!r})\n"
                 "print(json.dumps({'pytest': md.version('pytest')}))\n")  # fmt: skip
        proc = self._tool([engine, *self.engine_args, "run", "--rm", "--network", "none", *self._ulimits(), tag,
                           "python", "-c", probe], f"import {package} in {tag}", 300)  # fmt: skip
        return RepoEnvironment(backend=Path(engine).name, key=tag.split(":")[1], python="python", root=tag,
                               repository=str(root), package=package,
                               versions=json.loads(proc.stdout.strip().splitlines()[-1]), built_at=time.time())

    def _ulimits(self) -> list[str]:
        # Engines default to ulimits above what an unprivileged host allows (podman: nofile 1048576), which
        # makes the runtime fail to start the container; ask for small, explicit ones.
        return ["--ulimit", "nofile=1024:1024", "--ulimit", f"nproc={self.pids}:{self.pids}"]

    # -- running ------------------------------------------------------------------------------------------------

    def run_command(self, env: RepoEnvironment, box: str | os.PathLike, *, name: str) -> list[str]:
        """The ``<engine> run`` command of one verification (the box holds ``work/``, ``harness/``, ``result/``).

        Example:
            >>> backend = ContainerBackend()
            >>> backend._engine = "/usr/bin/podman"
            >>> env = RepoEnvironment("podman", "k", "python", "ecd-demo:1-abc", "demo==1", "demo")
            >>> cmd = backend.run_command(env, "/tmp/box", name="ecd-verify-1")
            >>> cmd[:3], cmd[cmd.index("--network") + 1], cmd[cmd.index("--user") + 1], cmd[-6:-4]
            (['/usr/bin/podman', 'run', '--rm'], 'none', '65534:65534', ['ecd-demo:1-abc', 'python'])
        """
        box = Path(box)
        return [
            self.engine, *self.engine_args, "run", "--rm", "--name", name, "--network", "none", "--user", self.user,
            "--memory", f"{self.memory_mb}m", "--cpus", f"{self.cpus:g}", "--pids-limit", str(self.pids),
            *self._ulimits(),
            "--read-only", "--tmpfs", "/tmp:rw,size=512m", "--security-opt", "no-new-privileges",
            "--cap-drop", "ALL", "--workdir", WORKDIR,
            "--volume", f"{box / 'work'}:{WORKDIR}:rw", "--volume", f"{box / 'harness'}:{_HARNESS}:rw",
            "--volume", f"{box / 'result'}:{_RESULT}:rw",
            env.root, "python", "-I", "-S", f"{_HARNESS}/launch.py", f"{_HARNESS}/spec.json",
        ]  # fmt: skip

    def run_pytest(
        self, env: RepoEnvironment, files: Mapping[str, str], *, test_file: str | None = None, timeout_s: float = 180.0,
        collect_only: bool = False,
    ) -> PytestRun:
        """Run pytest on ``test_file`` inside the image, ``files`` in ``/app``; the verdict (or, ``collect_only``,
        the collection) as :class:`VenvBackend`.

        Raises:
            ConfigError: a path leaves the work folder, or no single test file can be chosen.
            SandboxUnavailable: no container engine works here.
        """
        return self._run_in_fresh_box(env, files, test_file, timeout_s, prefix="ecd-container-",
                                      collect_only=collect_only)  # fmt: skip

    def _run_in_box(
        self, box: Path, env: RepoEnvironment, files: Mapping[str, str], test_file: str, timeout_s: float, *,
        collect_only: bool = False,
    ) -> PytestRun:
        work, harness, result = box / "work", box / "harness", box / "result"
        for folder in (work, harness, result):
            folder.mkdir()
            os.chmod(folder, 0o777)  # the container's uid is not ours
        _stage_files(work, harness, files)
        key = new_key()
        child_env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HOME": "/tmp",
            "TMPDIR": "/tmp", "PYTHONPATH": _HARNESS, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "OMP_NUM_THREADS": "1", "ECD_VERDICT_PATH": f"{_RESULT}/verdict.json",
        }  # fmt: skip
        cpu = max(1, math.ceil(timeout_s))
        spec = {
            "limits": {"RLIMIT_CPU": (cpu, cpu + 1), "RLIMIT_CORE": (0, 0), "RLIMIT_NOFILE": (1024, 1024)},
            "uid": None,  # the engine already runs it as an unprivileged user
            "cwd": WORKDIR,
            "env": child_env,
            "argv": ["/usr/local/bin/python", "-m", "pytest",
                     *harness_args(f"{_HARNESS}/pytest.ini", WORKDIR, test_file, collect_only=collect_only)],
            "key": key,  # the launcher hands it to the plugin through a pipe, then removes this file
        }  # fmt: skip
        (harness / "spec.json").write_text(json.dumps(spec))
        name = f"ecd-verify-{secrets.token_hex(6)}"
        log_path = box / "log.txt"
        started = time.monotonic()
        timed_out = False
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(self.run_command(env, box, name=name), stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT)  # fmt: skip
            try:
                proc.wait(timeout=timeout_s + 30)  # container start-up is not the test's time
            except subprocess.TimeoutExpired:
                timed_out = True
                subprocess.run([self.engine, *self.engine_args, "kill", name], capture_output=True, timeout=60,
                               check=False)  # fmt: skip
                proc.kill()
            proc.wait()
        duration = time.monotonic() - started
        killed = proc.returncode in (137, 152, -9)  # SIGKILL or SIGXCPU through the engine
        ended = _Ended(proc.returncode, timed_out, killed, duration)
        return _read_run(result / "verdict.json", key, log_path, ended, test_file=test_file, collect_only=collect_only)
