"""The container recipe of a verified environment: a Dockerfile and its build context, and a check of both.

A task is only as reproducible as the environment it was verified in. :func:`environment_spec` reads what that
environment really holds (the Python version, every installed distribution at its exact version, the source tree
of the repository and its hash) and :func:`write_build_context` turns it into a build context::

    Dockerfile         a digest-pinned python image of the same minor version, the pinned requirements, the
                       repository installed from its exact source, a non-root user ``agent``, WORKDIR /app
    requirements.txt   ``name==version`` of every distribution installed next to the repository (pytest included)
    src/               the repository's source tree, file for file the tree that was verified (same tree hash)

The same context serves the exported task folders (``environment/``) and :class:`~.containers.ContainerBackend`,
which builds it and verifies inside the image. :func:`check_build_context` is a static check (no engine needed).

Example:
    >>> from evolvecoder_datasets.code_instruct.dockerfile import environment_spec, write_build_context
    >>> spec = environment_spec(repo, env)                         # doctest: +SKIP
    >>> write_build_context(spec, "out/context")                   # doctest: +SKIP
    >>> print(open("out/context/Dockerfile").read())               # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import ConfigError, EnvironmentBuildError
from .backend import RepoEnvironment
from .repository import Repository, _tree_files, normalize_name

__all__ = [
    "AGENT_USER",
    "BASE_IMAGES",
    "SOURCE_DIR",
    "WORKDIR",
    "EnvironmentSpec",
    "base_image_for",
    "check_build_context",
    "environment_spec",
    "installed_requirements",
    "parse_dockerfile",
    "render_dockerfile",
    "write_build_context",
]

#: The delivery contract's working folder: the agent writes ``task_module.py`` here, the tests run here.
WORKDIR = "/app"
#: Where the build context's files go inside the image.
SOURCE_DIR = "/opt/task-env"
#: The unprivileged user agents run as.
AGENT_USER = "agent"
#: Official python images by ``major.minor``, pinned by digest. The digest is the one public Dockerfiles pin for
#: that tag; it was not pulled here (no registry is reachable from our machines). Pass ``base_image`` to use
#: another image (same minor version as the verified environment).
BASE_IMAGES = {
    "3.11": "python:3.11.7-slim-bookworm@sha256:637774748f62b832dc11e7b286e48cd716727ed04b45a0322776c01bc526afc3",
}
_DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[A-Za-z0-9_,.-]+\])?==([A-Za-z0-9._+!-]+)$")


@dataclass(frozen=True)
class EnvironmentSpec:
    """Everything a container needs to rebuild the environment a task was verified in.

    Args:
        dist_name (`str`): the repository's distribution name.
        version (`str`): its version.
        package (`str`): the import name checked at build time.
        source (`str`): the source tree to copy (the tree that was installed and verified).
        tree_hash (`str`): :meth:`Repository.tree_hash` of that tree.
        python_version (`str`): the verified interpreter's version (``"3.11.7"``).
        requirements (`tuple[str, ...]`): ``name==version`` of every other installed distribution.
        base_image (`str`): digest-pinned python image of the same minor version.
        verified_in (`str`): ``backend:key`` of the verified environment.

    Raises:
        ConfigError: a requirement that is not pinned with ``==``, or a base image without a sha256 digest.

    Example:
        >>> spec = EnvironmentSpec("demo", "1.0", "demo", "/src/demo", "ab" * 32, "3.11.7", ("pytest==8.3.2",),
        ...                        BASE_IMAGES["3.11"], "venv:0123")
        >>> spec.image_tag
        'ecd-demo:1.0-898500989846'
    """

    dist_name: str
    version: str
    package: str
    source: str
    tree_hash: str
    python_version: str
    requirements: tuple[str, ...]
    base_image: str
    verified_in: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "requirements", tuple(self.requirements))
        loose = [line for line in self.requirements if not _PIN.match(line)]
        if loose:
            raise ConfigError(f"requirements must be pinned as name==version; got {loose}")
        if not _DIGEST.search(self.base_image):
            raise ConfigError(f"base_image must be pinned by digest (image@sha256:<64 hex>); got {self.base_image!r}")

    @property
    def digest(self) -> str:
        """sha256 (12 hex) of everything that enters the image: it names the image and keys caches."""
        payload = {k: v for k, v in asdict(self).items() if k not in ("source", "verified_in")}
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:12]

    @property
    def image_tag(self) -> str:
        """``ecd-<dist>:<version>-<digest>``, the tag :class:`~.containers.ContainerBackend` builds."""
        version = re.sub(r"[^A-Za-z0-9_.-]", "_", self.version)[:60]
        return f"ecd-{normalize_name(self.dist_name)}:{version}-{self.digest}"


def base_image_for(python_version: str) -> str:
    """The pinned image of :data:`BASE_IMAGES` for a Python version (matched on ``major.minor``).

    Raises:
        ConfigError: no image is known for that version.

    Example:
        >>> base_image_for("3.11.7").split("@")[0]
        'python:3.11.7-slim-bookworm'
    """
    minor = ".".join(python_version.split(".")[:2])
    if minor not in BASE_IMAGES:
        raise ConfigError(
            f"no pinned base image is known for Python {python_version} (known: {sorted(BASE_IMAGES)}); pass "
            f"base_image='python:{python_version}-slim-bookworm@sha256:<digest>' for the interpreter the tasks were "
            "verified with"
        )
    return BASE_IMAGES[minor]


def installed_requirements(env: RepoEnvironment, *, exclude: Sequence[str] = ()) -> tuple[str, tuple[str, ...]]:
    """``(python_version, pins)`` of a virtualenv: ``pip freeze`` run with its own interpreter.

    ``pip``, ``setuptools`` and ``wheel`` are left out (as ``pip freeze`` does; the image has its own), so are the
    distributions named in ``exclude`` (the repository itself, installed from source).

    Args:
        env (`RepoEnvironment`): a virtualenv from :meth:`VenvBackend.prepare`.
        exclude (`Sequence[str]`, defaults to ``()``): distribution names to leave out.

    Raises:
        EnvironmentBuildError: the interpreter or pip cannot run, or a distribution is installed from a URL or a
            path (it could not be pinned).

    Example:
        >>> installed_requirements(env, exclude=["tiny-textkit"])      # doctest: +SKIP
        ('3.11.7', ('iniconfig==2.0.0', 'packaging==24.1', 'pluggy==1.5.0', 'pytest==8.3.2'))
    """
    script = (
        "import json, platform, subprocess, sys\n"
        "out = subprocess.run([sys.executable, '-m', 'pip', 'freeze', '--disable-pip-version-check'],\n"
        "                     capture_output=True, text=True, check=True).stdout\n"
        "print(json.dumps([platform.python_version(), out.splitlines()]))\n"
    )
    try:
        proc = subprocess.run([env.python, "-c", script], capture_output=True, text=True, timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise EnvironmentBuildError(f"cannot list the packages of {env.root}: {err}") from err
    if proc.returncode != 0:
        raise EnvironmentBuildError(f"pip freeze failed in {env.root}:\n{proc.stderr[-2000:]}")
    version, lines = json.loads(proc.stdout.strip().splitlines()[-1])
    skip = {normalize_name(name) for name in exclude}
    pins, loose = [], []
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name = re.split(r"[\s=@<>!~\[;]", line, maxsplit=1)[0]
        if normalize_name(name) in skip:
            continue
        (pins if _PIN.match(line) else loose).append(line)
    if loose:
        raise EnvironmentBuildError(f"{env.root} holds distributions that cannot be pinned by version: {loose}")
    return version, tuple(sorted(pins, key=str.lower))


def environment_spec(repo: Repository, env: RepoEnvironment, *, base_image: str | None = None) -> EnvironmentSpec:
    """The :class:`EnvironmentSpec` of ``repo`` as installed in the virtualenv ``env``.

    Args:
        repo (`Repository`): the repository the environment was built from.
        env (`RepoEnvironment`): the verified virtualenv (:meth:`VenvBackend.prepare`).
        base_image (`str`, *optional*): a digest-pinned image; defaults to :func:`base_image_for` the venv's Python.

    Raises:
        ConfigError: no pinned image is known for the venv's Python and none was given.
        EnvironmentBuildError: the venv's packages cannot be listed or pinned.

    Example:
        >>> spec = environment_spec(repo, VenvBackend().prepare(repo))   # doctest: +SKIP
        >>> spec.python_version, "pytest" in " ".join(spec.requirements)  # doctest: +SKIP
        ('3.11.7', True)
    """
    if repo.kind == "wheel":
        raise ConfigError(f"{repo.name} was opened from a wheel: a container recipe needs its source tree (an sdist)")
    python_version, pins = installed_requirements(env, exclude=[repo.dist_name])
    return EnvironmentSpec(
        dist_name=repo.dist_name,
        version=repo.version,
        package=repo.package,
        source=str(repo.root),
        tree_hash=repo.tree_hash(),
        python_version=python_version,
        requirements=pins,
        base_image=base_image or base_image_for(python_version),
        verified_in=f"{env.backend}:{env.key}",
    )


def render_dockerfile(spec: EnvironmentSpec) -> str:
    """The Dockerfile of :func:`write_build_context` (it expects ``requirements.txt`` and ``src/`` beside it).

    Example:
        >>> spec = EnvironmentSpec("demo", "1.0", "demo", "/src/demo", "ab" * 32, "3.11.7", ("pytest==8.3.2",),
        ...                        BASE_IMAGES["3.11"], "venv:0123")
        >>> [name for name, _ in parse_dockerfile(render_dockerfile(spec))]
        ['FROM', 'ENV', 'COPY', 'RUN', 'COPY', 'RUN', 'RUN', 'WORKDIR']
    """
    return "\n".join([
        f"# Environment of code_instruct tasks over {spec.dist_name} {spec.version}, as verified ({spec.verified_in}):",
        f"# Python {spec.python_version}; the repository from its exact source tree (tree sha256 {spec.tree_hash[:16]}...)",
        "# in src/; every other distribution pinned to the version installed where the tasks were verified.",
        "# Agents work in /app as the unprivileged user 'agent'.",
        f"FROM {spec.base_image}",
        "ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1",
        f"COPY requirements.txt {SOURCE_DIR}/requirements.txt",
        f"RUN python -m pip install --no-input --no-deps -r {SOURCE_DIR}/requirements.txt",
        f"COPY src {SOURCE_DIR}/src",
        f"RUN python -m pip install --no-input --no-deps {SOURCE_DIR}/src \\",
        f'    && python -c "import {spec.package}"',
        f"RUN useradd --create-home --uid 1000 {AGENT_USER} && mkdir -p {WORKDIR} && chown {AGENT_USER}:{AGENT_USER} {WORKDIR}",
        f"WORKDIR {WORKDIR}",
        "",
    ])  # fmt: skip


def write_build_context(spec: EnvironmentSpec, folder: str | os.PathLike) -> Path:
    """Write ``Dockerfile``, ``requirements.txt`` and ``src/`` (a copy of the verified tree) into ``folder``.

    The copy takes exactly the files :meth:`Repository.tree_hash` hashes, so the context's ``src/`` hashes the same;
    it is checked, and a tree that changed since it was verified is refused.

    Args:
        spec (`EnvironmentSpec`): from :func:`environment_spec`.
        folder (`str` or `os.PathLike`): created if needed; files already there are replaced.

    Returns:
        `Path`: the folder.

    Raises:
        ConfigError: the source tree no longer hashes to ``spec.tree_hash``.

    Example:
        >>> write_build_context(spec, "tasks/click_3/environment")       # doctest: +SKIP
        PosixPath('tasks/click_3/environment')
    """
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    source = Path(spec.source)
    target = out / "src"
    shutil.rmtree(target, ignore_errors=True)
    for path in _tree_files(source):
        dest = target / path.relative_to(source)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
    copied = _tree_hash(target)
    if copied != spec.tree_hash:
        raise ConfigError(f"{source} changed since its tasks were verified (tree hash {copied[:12]} != "
                          f"{spec.tree_hash[:12]}); verify again before exporting")  # fmt: skip
    (out / "requirements.txt").write_text("".join(f"{line}\n" for line in spec.requirements), encoding="utf-8")
    (out / "Dockerfile").write_text(render_dockerfile(spec), encoding="utf-8")
    return out


def _tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(_tree_files(root)):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def parse_dockerfile(text: str) -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` pairs of a Dockerfile: comments dropped, continuation lines joined.

    Raises:
        ConfigError: a line that does not start with a Dockerfile instruction.

    Example:
        >>> parse_dockerfile("# base\\nFROM python:3.11\\nRUN a \\\\\\n    && b\\n")
        [('FROM', 'python:3.11'), ('RUN', 'a && b')]
    """
    known = {"FROM", "RUN", "CMD", "LABEL", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT", "VOLUME", "USER",
             "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL", "MAINTAINER"}  # fmt: skip
    out: list[tuple[str, str]] = []
    pending = ""
    for number, raw in enumerate(text.splitlines(), 1):
        if not pending and (not raw.strip() or raw.lstrip().startswith("#")):
            continue
        line = raw.rstrip()
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        line = (pending + line.strip()).strip()
        pending = ""
        word, _, rest = line.partition(" ")
        if word.upper() not in known:
            raise ConfigError(f"Dockerfile line {number}: {word!r} is not a Dockerfile instruction")
        out.append((word.upper(), rest.strip()))
    if pending:
        raise ConfigError("Dockerfile ends inside a continued line")
    return out


def check_build_context(folder: str | os.PathLike) -> list[str]:
    """Problems of a build context, found without a container engine (an empty list when there are none).

    Checked: the Dockerfile parses; it has one ``FROM``, pinned by sha256 digest; every ``COPY``/``ADD`` source
    exists in the context; every ``pip install`` names only pinned requirements, requirement files whose lines are
    all ``name==version``, or paths inside the image; a ``WORKDIR`` is set and a non-root user is created.

    Example:
        >>> import pathlib, tempfile
        >>> ctx = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (ctx / "Dockerfile").write_text("FROM python:3.11\\nRUN pip install requests\\n")
        >>> for problem in check_build_context(ctx): print(problem)
        FROM python:3.11 is not pinned by a sha256 digest
        RUN installs unpinned requirement(s) ['requests']
        no WORKDIR: the agent's working folder is undefined
        no non-root user is created for the agent
    """
    root = Path(folder)
    try:
        instructions = parse_dockerfile((root / "Dockerfile").read_text(encoding="utf-8"))
    except OSError as err:
        return [f"no Dockerfile: {err}"]
    except ConfigError as err:
        return [str(err)]
    problems: list[str] = []
    froms = [args for name, args in instructions if name == "FROM"]
    if len(froms) != 1:
        problems.append(f"expected one FROM, found {len(froms)}")
    for image in froms:
        if not _DIGEST.search(image.split()[0]):
            problems.append(f"FROM {image} is not pinned by a sha256 digest")
    copied: dict[str, Path] = {}
    for name, args in instructions:
        if name in ("COPY", "ADD"):
            parts = [p for p in shlex.split(args) if not p.startswith("--")]
            for src in parts[:-1]:
                if not (root / src).exists():
                    problems.append(f"{name} source {src!r} is not in the build context")
                copied[parts[-1].rstrip("/")] = root / src
        elif name == "RUN":
            problems += _pip_problems(args, copied)
    if not any(name == "WORKDIR" for name, _ in instructions):
        problems.append("no WORKDIR: the agent's working folder is undefined")
    if not any(name == "RUN" and "useradd" in args for name, args in instructions):
        problems.append("no non-root user is created for the agent")
    return problems


def _pip_problems(command: str, copied: dict[str, Path]) -> list[str]:
    problems = []
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError as err:
        return [f"RUN {command!r} does not parse as a shell command: {err}"]
    commands: list[list[str]] = [[]]
    for token in tokens:
        if token in (";", "&&", "||", "&", "|"):
            commands.append([])
        else:
            commands[-1].append(token)
    for words in commands:
        if "pip" not in words or "install" not in words:
            continue
        args = words[words.index("install") + 1 :]
        loose = []
        i = 0
        while i < len(args):
            arg = args[i]
            if arg in ("-r", "--requirement"):
                image_path = args[i + 1] if i + 1 < len(args) else ""
                host = copied.get(image_path)
                if host is None or not host.is_file():
                    problems.append(f"requirements file {image_path!r} does not come from the build context")
                else:
                    lines = [ln.strip() for ln in host.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
                    loose += [ln for ln in lines if not _PIN.match(ln)]
                i += 2
                continue
            if not arg.startswith("-") and not arg.startswith("/") and not _PIN.match(arg):
                loose.append(arg)
            i += 1
        if loose:
            problems.append(f"RUN installs unpinned requirement(s) {loose}")
    return problems
