"""How a fork server is walled off: bubblewrap, then ``unshare``, then nothing (with a loud warning).

Both namespace levels build the same filesystem from an **allowlist** (:func:`mount_plan`): an empty root on which
only the interpreter's folders, the package folders the server puts on its path, this package, the shared libraries
(``/usr/lib*``, ``/lib*``, ``/usr/local/lib``) and ``/etc/ld.so.cache`` are bound read-only, with a fresh ``/dev``,
a fresh ``/proc`` and private tmpfs on ``/tmp``, ``/var/tmp`` and ``/dev/shm``. Nothing else of the host exists
inside: no home folders, no checkout (``.git`` included), no ``/run`` and its sockets, no ``/work``, ``/srv`` or
``/opt``. Both also give the server its own network (a loopback of its own, nothing else), PID, IPC, UTS and
cgroup namespaces, a private devpts, a new session and ``no_new_privs``, and kill it when the thread that started
it dies. bubblewrap builds it itself; without bubblewrap, ``unshare`` creates the namespaces and a small
stdlib bootstrap (``_mountns.py``) builds the same tree and pivots into it. When neither can, ``auto`` falls to
``none`` with an :class:`IsolationWarning` and the report says ``isolation: none``. Either way the solution
children drop to an unprivileged uid when the server runs as root. ``docs/threat-model.md`` says what each level
guarantees and what it does not.

Example:
    >>> from evolvecoder_datasets.execution.isolation import detect_isolation
    >>> detect_isolation("auto") in {"bwrap", "unshare", "none"}
    True
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import shutil
import subprocess
import sys
import warnings
from collections.abc import Iterable
from pathlib import Path

from ..errors import ConfigError, SandboxUnavailable

ISOLATIONS = ("auto", "bwrap", "unshare", "none")
SERVER_PACKAGE = Path(__file__).with_name("_forkserver")  # the fork server, a stdlib-only package
MOUNTNS_SCRIPT = Path(__file__).with_name("_mountns.py")

# Environment the server starts with; nothing of the caller's reaches it (the server gives its children their own).
# LD_BIND_NOW: the dynamic loader resolves every symbol when the server starts. Lazily, each test's process resolved
# again the functions only tests call (their first call in each process), ~12 page faults per test measured.
BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
            "LD_BIND_NOW": "1"}  # fmt: skip

# Shared libraries the interpreter, its C extension modules (ssl, sqlite3, decimal, ctypes...) and compiled packages
# (numpy) load, and the dynamic loader itself. Where one of these is a symlink on the host (merged /usr), the same
# symlink is made inside.
SYSTEM_FOLDERS = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/libx32", "/usr/local/lib",
                  "/lib", "/lib64", "/lib32", "/libx32")  # fmt: skip
SYSTEM_FILES = ("/etc/ld.so.cache",)
# Private, empty, writable only by the server (the solution uid cannot leave anything in them for a later program).
PRIVATE_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm")
_KERNEL_FOLDERS = ("/dev", "/proc")


class IsolationWarning(RuntimeWarning):
    """Emitted when solutions run without namespace isolation."""


@dataclasses.dataclass(frozen=True)
class Mount:
    """One step of building the sandbox's filesystem, applied in plan order on an empty root.

    ``kind`` is ``"ro"`` / ``"rw"`` (bind ``source`` at ``dest``), ``"symlink"`` (``dest`` points at ``source``),
    ``"tmpfs"`` (private, ``size_mb`` large, mode 0755, owned by the server), ``"dir"`` (a folder, mode 0755, so an
    unprivileged uid can reach the binds below it), ``"dev"`` (a minimal fresh ``/dev``) or ``"proc"`` (a fresh
    procfs of the sandbox's PID namespace).

    Example:
        >>> Mount("ro", "/usr/lib", "/usr/lib").depth
        2
    """

    kind: str
    dest: str
    source: str = ""
    size_mb: int = 0

    @property
    def depth(self) -> int:
        return len(Path(self.dest).parts) - 1


def _python() -> str:
    # The real interpreter, not a shim: pyenv's shim costs ~150 ms per start and may resolve elsewhere.
    return os.path.realpath(sys.executable)


def _python_roots() -> list[str]:
    """Folders the interpreter and its packages live in, bound read-only into the sandbox.

    Only what the fork server needs: the base prefixes (the interpreter and its standard library), the package
    folders it puts on its path, and this package. A virtualenv's own prefix is not needed (the server starts the
    real interpreter and gets the venv's site-packages through ``ECD_SITE_PATHS``), and neither is the caller's
    ``sys.path`` at large: a script started from ``/tmp`` puts ``/tmp`` there, and binding it back would hand
    solutions the host's ``/tmp`` instead of a private one.
    """
    roots = {sys.base_prefix, sys.base_exec_prefix, str(SERVER_PACKAGE.parent.parent), str(Path(_python()).parent.parent)}
    roots.update(p for p in site_paths().split(os.pathsep) if p)
    return _outermost(os.path.realpath(r) for r in roots if r and os.path.isdir(r))


def _outermost(paths: Iterable[str]) -> list[str]:
    kept: list[str] = []
    for path in sorted(set(paths), key=len):
        if not any(_within(path, k) for k in kept):
            kept.append(path)
    return kept


def _within(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or lies below it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _pairs(paths: Iterable[str | tuple[str, str]]) -> list[tuple[str, str]]:
    """``(source, dest)`` pairs from plain paths (bound at their real path) or explicit pairs."""
    out = []
    for item in paths:
        if isinstance(item, (str, os.PathLike)):
            source = dest = os.path.realpath(item)
        else:
            source, dest = os.path.realpath(item[0]), os.path.abspath(item[1])
        if dest == "/" or any(_within(dest, k) for k in _KERNEL_FOLDERS):
            raise ConfigError(f"cannot bind {source!r} at {dest!r}: the sandbox's / and {_KERNEL_FOLDERS} are its own")
        out.append((source, dest))
    return out


def mount_plan(
    *,
    tmp_size_mb: int = 512,
    read_only: Iterable[str | tuple[str, str]] = (),
    writable: Iterable[str | tuple[str, str]] = (),
) -> list[Mount]:
    """The sandbox's filesystem as an ordered list of :class:`Mount` steps (the allowlist both namespace levels apply).

    Args:
        tmp_size_mb (`int`, defaults to 512): size of each private tmpfs (``/tmp``, ``/var/tmp``, ``/dev/shm``).
        read_only (iterable of `str` or `(source, dest)`, *optional*): more host folders or files to show read-only
            (a plain path is bound at its real path).
        writable (iterable of `str` or `(source, dest)`, *optional*): host folders to show writable.

    Returns:
        `list[Mount]`: parents before children, so a later step never hides an earlier one.

    Raises:
        ConfigError: an extra bind targets ``/``, ``/dev`` or ``/proc``.

    Example:
        >>> plan = mount_plan()
        >>> [m.kind for m in plan if m.dest == "/tmp"], any(m.dest == "/root" and m.kind == "ro" for m in plan)
        (['tmpfs'], False)
    """
    steps: dict[str, Mount] = {}
    steps["/dev"] = Mount("dev", "/dev")
    steps["/proc"] = Mount("proc", "/proc")
    for folder in PRIVATE_FOLDERS:
        steps[folder] = Mount("tmpfs", folder, size_mb=tmp_size_mb)
    binds: list[tuple[str, str, str]] = []  # (kind, source, dest)
    for folder in SYSTEM_FOLDERS:
        if os.path.islink(folder):
            steps[folder] = Mount("symlink", folder, os.readlink(folder))
        elif os.path.isdir(folder):
            binds.append(("ro", folder, folder))
    binds += [("ro", f, f) for f in SYSTEM_FILES if os.path.isfile(f) and not os.path.islink(f)]
    binds += [("ro", root, root) for root in _python_roots() if root != "/"]
    binds += [("ro", s, d) for s, d in _pairs(read_only)]
    binds += [("rw", s, d) for s, d in _pairs(writable)]
    bound: list[str] = []
    # Outermost first; a bind inside another bind of the same source tree adds nothing (a writable one still counts).
    for kind, source, dest in sorted(binds, key=lambda b: (len(b[2]), b[0] != "rw")):
        covered = next((b for b in bound if _within(dest, b)), None)
        same_tree = covered is not None and source == steps[covered].source.rstrip("/") + dest[len(covered) :]
        if same_tree and steps[covered].kind == "ro" and kind == "ro":
            continue
        steps[dest] = Mount(kind, dest, source)
        bound.append(dest)
    # Folders leading to each step: made 0755 (bubblewrap would make them 0700, closed to the solution uid) unless a
    # mounted folder already provides them.
    for dest in list(steps):
        for parent in map(str, Path(dest).parents):
            if parent == "/" or parent in steps:
                continue
            if any(_within(parent, m.dest) for m in steps.values() if m.kind in ("ro", "rw", "dev", "proc", "symlink")):
                continue
            steps[parent] = Mount("dir", parent)
    order = {"dev": 0, "proc": 0, "tmpfs": 1, "dir": 2, "symlink": 2, "ro": 3, "rw": 3}
    return sorted(steps.values(), key=lambda m: (m.depth, order[m.kind], m.dest))


def _bwrap_mounts(plan: list[Mount]) -> list[str]:
    args: list[str] = []
    for m in plan:
        if m.kind == "dev":
            args += ["--dev", m.dest]
        elif m.kind == "proc":
            args += ["--proc", m.dest]
        elif m.kind == "tmpfs":
            args += ["--size", str(m.size_mb * 1024 * 1024), "--tmpfs", m.dest]
        elif m.kind == "dir":
            args += ["--perms", "0755", "--dir", m.dest]
        elif m.kind == "symlink":
            args += ["--symlink", m.source, m.dest]
        else:
            args += ["--ro-bind" if m.kind == "ro" else "--bind", m.source, m.dest]
    return args


def bwrap_command(
    python_args: list[str],
    *,
    tmp_size_mb: int = 512,
    read_only: Iterable[str | tuple[str, str]] = (),
    writable: Iterable[str | tuple[str, str]] = (),
    chdir: str = "/tmp",
    packages: str | None = None,
) -> list[str]:
    """The bubblewrap command line that starts ``python_args`` inside the sandbox (see :func:`mount_plan`).

    Args:
        python_args (`list[str]`): the command to run inside.
        tmp_size_mb (`int`, defaults to 512): size of each private tmpfs.
        read_only, writable: extra binds, as in :func:`mount_plan`.
        chdir (`str`, defaults to ``"/tmp"``): working folder inside.
        packages (`str`, *optional*): the ``ECD_SITE_PATHS`` a fork server inside reads (default: this
            interpreter's, :func:`site_paths`).

    Example:
        >>> cmd = bwrap_command(["/usr/bin/python3", "-c", "pass"])
        >>> cmd[0].endswith("bwrap") and "--unshare-net" in cmd and ["--ro-bind", "/", "/"] != cmd[1:4]
        True
    """
    cmd = [shutil.which("bwrap") or "bwrap"]
    cmd += _bwrap_mounts(mount_plan(tmp_size_mb=tmp_size_mb, read_only=read_only, writable=writable))
    cmd += [
        "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--die-with-parent", "--new-session", "--clearenv",
    ]  # fmt: skip
    for key, value in BASE_ENV.items():
        cmd += ["--setenv", key, value]
    packages = site_paths() if packages is None else packages
    cmd += ["--setenv", "ECD_WORKROOT", "/tmp", "--setenv", "ECD_SITE_PATHS", packages, "--chdir", chdir, "--"]
    return cmd + python_args


def unshare_command(
    python_args: list[str],
    *,
    tmp_size_mb: int = 512,
    read_only: Iterable[str | tuple[str, str]] = (),
    writable: Iterable[str | tuple[str, str]] = (),
    chdir: str = "/tmp",
) -> list[str]:
    """The ``unshare`` command line: the namespaces bubblewrap would make, then the same filesystem (see
    :func:`mount_plan`) built by a small bootstrap, which pivots into it and execs ``python_args``.

    Network, PID, IPC, UTS and mount namespaces always, a cgroup namespace where the kernel has them, and a user
    namespace (mapped to root inside) when not run as root. The bootstrap refuses to exec anything when a step fails, so an ``unshare`` that cannot give these
    guarantees fails its probe (:func:`isolation_available`) instead of running programs with less. The command's
    environment reaches ``python_args`` unchanged: give it a clean one.

    Args:
        python_args (`list[str]`): the command to run inside.
        tmp_size_mb, read_only, writable, chdir: as in :func:`bwrap_command`.

    Example:
        >>> cmd = unshare_command(["python3"])
        >>> cmd[cmd.index("unshare") + 1 :][:2] in (["--net", "--pid"], ["--user", "--map-root-user"])
        True
    """
    cmd = ["unshare", "--net", "--pid", "--fork", "--kill-child", "--mount", "--ipc", "--uts"]
    if os.path.exists("/proc/self/ns/cgroup"):  # as bubblewrap's --unshare-cgroup-try: hide the host's cgroup paths
        cmd.append("--cgroup")
    if os.geteuid() != 0:
        cmd[1:1] = ["--user", "--map-root-user"]
    cmd = _die_with_parent() + cmd
    plan = mount_plan(tmp_size_mb=tmp_size_mb, read_only=read_only, writable=writable)
    steps = [str(field) for m in plan for field in (m.kind, m.dest, m.source, m.size_mb)]
    own_userns = "1" if os.geteuid() != 0 else "0"
    bootstrap = [_python(), "-I", "-S", "-B", str(MOUNTNS_SCRIPT), chdir, own_userns, str(len(plan)), *steps]
    return cmd + ["--", *bootstrap, "--", *python_args]


def _die_with_parent() -> list[str]:
    """A prefix after which the command gets SIGKILL when the thread that started it dies (bubblewrap's
    ``--die-with-parent``; ``unshare --kill-child`` then takes the namespace down). Measured: without it, a host
    killed mid-job left ``unshare``, the bootstrap, the server and the program running."""
    if shutil.which("setpriv"):
        return ["setpriv", "--pdeathsig", "KILL", "--"]
    # No setpriv (util-linux without it): the same in a few lines of Python. A parent that died before prctl ran
    # would go unnoticed, hence the check of getppid afterwards.
    trampoline = ("import ctypes, os, sys; ctypes.CDLL(None).prctl(1, 9, 0, 0, 0); "
                  "os.getppid() == int(sys.argv[1]) or os._exit(1); os.execvp(sys.argv[2], sys.argv[2:])")  # fmt: skip
    return [_python(), "-I", "-S", "-c", trampoline, str(os.getpid())]


#: The last argument of a fork server whose programs import another environment (``python_env``).
PYTHON_ENV_MARKER = "--python-env="
SIDE_SERVER_MARKER = "--side-server="


def server_command(isolation: str, python_env: str | None = None, extra_read_only: Iterable[str] = (),
                   role: str | None = None) -> list[str]:
    """Full command that starts a fork server under ``isolation`` (one of ``bwrap``, ``unshare``, ``none``).

    With ``python_env`` (a virtualenv of this interpreter's version), programs import that environment's packages
    instead of this interpreter's: its package folders are bound read-only and are the only ones on the path.
    ``extra_read_only`` binds more host folders read-only (a toolchain server's compilers); ``role`` (``toolchain``,
    ``checker``) marks a server that never runs programs, so listings of program servers leave it out
    (``SIDE_SERVER_MARKER``; the server ignores it).

    Example:
        >>> server_command("none")[1:4]
        ['-I', '-S', '-B']
    """
    # Imported as a module, not run as a script: a script run keeps ~3 MB more of the heap alive (measured:
    # RssAnon 10.0 MB against 6.8-7.2 MB), and every fork and exit of the server's children pays for each page.
    # The folder leaves sys.path again at once (the package has imported all its modules by then): a solution's
    # `import report` must not find our modules.
    bootstrap = (f"import sys; sys.path.insert(0, {str(SERVER_PACKAGE.parent)!r}); import _forkserver; "
                 "del sys.path[0]; _forkserver.main()")
    args = [_python(), "-I", "-S", "-B", "-c", bootstrap]
    packages = _packages(python_env)
    binds = list(extra_read_only)  # this interpreter's package folders are bound anyway (_python_roots)
    if python_env:  # the server ignores it; listings of the default servers leave such servers out by it
        args.append(PYTHON_ENV_MARKER + python_env)
        binds += [p for p in packages.split(os.pathsep) if p]
    if role:
        args.append(SIDE_SERVER_MARKER + role)
    if isolation == "bwrap":
        return bwrap_command(args, read_only=binds, packages=packages)
    if isolation == "unshare":
        return unshare_command(args, read_only=binds)
    if isolation == "none":
        return args
    raise ConfigError(f"unknown isolation {isolation!r}; choose one of {ISOLATIONS}")


def site_paths() -> str:
    """The interpreter's package folders, for a fork server started with ``-S`` (``os.pathsep``-joined).

    Real paths: the sandbox binds each folder at its real path, so a virtualenv reached through a symlink (or under
    a folder the sandbox replaces, like ``/tmp``) is found inside at the same place as outside.

    Example:
        >>> any("site-packages" in p for p in site_paths().split(":"))
        True
    """
    import site

    paths = []
    for entry in [*site.getsitepackages(), site.getusersitepackages()]:
        if entry and os.path.isdir(entry) and os.path.realpath(entry) not in paths:
            paths.append(os.path.realpath(entry))
    return os.pathsep.join(paths)


# Asked of an environment's own interpreter: its version and its package folders (``.pth`` paths included, so
# an editable install of the repository is found).
_ENV_PROBE = (
    "import json, os, site, sys\n"
    "dirs = [p for p in site.getsitepackages() if os.path.isdir(p)]\n"
    "extra = [p for p in sys.path if p and os.path.isdir(p) and p not in dirs\n"
    "         and not p.startswith((sys.prefix, sys.base_prefix))]\n"
    "print(json.dumps({'version': sys.version, 'dirs': dirs + extra}))\n"
)


@functools.lru_cache(maxsize=64)
def env_site_paths(python_env: str) -> str:
    """The package folders of the virtualenv ``python_env`` (``os.pathsep``-joined real paths), asked of its own
    interpreter once per process.

    Raises:
        ConfigError: ``python_env`` has no ``bin/python``, its interpreter does not answer, or it is another
            Python version than this one (the fork server runs this interpreter).

    Example:
        >>> import sys
        >>> any(p.endswith("site-packages") for p in env_site_paths(sys.prefix).split(":"))
        True
    """
    python = os.path.join(python_env, "bin", "python")
    if not os.path.isfile(python):
        raise ConfigError(f"python_env {python_env!r} is not a virtualenv (no bin/python)")
    try:
        proc = subprocess.run([python, "-I", "-c", _ENV_PROBE], stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=60, env=BASE_ENV, check=False)  # fmt: skip
        answer = json.loads(proc.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError) as err:
        raise ConfigError(f"python_env {python_env!r}: its interpreter did not answer ({err})") from err
    if answer.get("version") != sys.version:
        raise ConfigError(f"python_env {python_env!r} runs Python {str(answer.get('version')).split()[0]}; the "
                          f"sandbox runs {sys.version.split()[0]}: build it with this interpreter")
    paths: list[str] = []
    for entry in answer.get("dirs") or ():
        real = os.path.realpath(str(entry))
        if os.path.isdir(real) and real not in paths:
            paths.append(real)
    return os.pathsep.join(paths)


def server_env(python_env: str | None = None) -> dict[str, str]:
    """Environment of a fork server started without bubblewrap (which sets its own).

    Example:
        >>> sorted(server_env())[:2]
        ['ECD_SITE_PATHS', 'ECD_WORKROOT']
    """
    return {**BASE_ENV, "ECD_WORKROOT": "/tmp", "ECD_SITE_PATHS": _packages(python_env)}


def _packages(python_env: str | None) -> str:
    """The ``ECD_SITE_PATHS`` of a fork server: ``python_env``'s package folders, or this interpreter's."""
    return env_site_paths(python_env) if python_env else site_paths()


# What a probe checks from inside, beyond starting: host files are gone and the private folders start empty.
_PROBE = (
    "import os, sys\n"
    "hidden = [p for p in sys.argv[1:] if os.path.lexists(p)]\n"
    "tmp = all(os.listdir(p) == [] for p in ('/var/tmp', '/dev/shm'))\n"
    "print('ok' if not hidden and tmp else f'exposed: {hidden} private-tmp: {tmp}')\n"
)


def _probe_args() -> list[str]:
    # Host files that must not exist inside (never part of the allowlist): if one shows, the filesystem was not built.
    allowed = [m.dest for m in mount_plan() if m.kind in ("ro", "rw", "symlink")]
    try:
        here = os.getcwd()
    except OSError:  # the caller's working folder was removed
        here = "/"
    candidates = ("/etc/passwd", "/etc/hostname", os.path.join(here, ".git"))
    outside = [p for p in candidates if os.path.lexists(p) and not any(_within(p, a) for a in allowed)]
    return [_python(), "-I", "-S", "-c", _PROBE, *outside]


def _works(cmd: list[str]) -> tuple[bool, str]:
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=20, env=BASE_ENV, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return False, str(err)
    ok = proc.returncode == 0 and proc.stdout.strip() == b"ok"
    return ok, (proc.stdout + proc.stderr).decode(errors="replace").strip()[-300:]


# Why a probe said no, per level (the last probe in this process), for the warning and the error message.
_PROBE_FAILURES: dict[str, str] = {}


@functools.cache
def isolation_available(isolation: str) -> bool:
    """Whether ``isolation`` can start a Python here with its guarantees in place (probed once per process, ~10-60 ms).

    The probe runs inside the sandbox and checks that host files outside the allowlist (``/etc/passwd``,
    ``/etc/hostname``, the working folder's ``.git``) are not there and that the private folders start empty: an
    ``unshare`` whose bootstrap cannot build the filesystem, or a bubblewrap that would expose them, says no.

    Example:
        >>> isolation_available("none")
        True
    """
    if isolation == "none":
        return True
    if isolation not in ("bwrap", "unshare"):
        raise ConfigError(f"unknown isolation {isolation!r}; choose one of {ISOLATIONS}")
    if shutil.which(isolation) is None:
        _PROBE_FAILURES[isolation] = f"{isolation} is not on PATH"
        return False
    build = bwrap_command if isolation == "bwrap" else unshare_command
    ok, detail = _works(build(_probe_args()))
    if not ok:
        _PROBE_FAILURES[isolation] = detail or "the probe printed nothing"
    return ok


def _why_not(isolation: str) -> str:
    detail = _PROBE_FAILURES.get(isolation)
    return f"{isolation}: {detail}" if detail else f"{isolation}: unavailable"


def detect_isolation(requested: str = "auto") -> str:
    """Resolve ``requested`` to the isolation that will be used.

    ``auto`` takes the strongest available (``bwrap``, then ``unshare``, which builds the same filesystem) and warns
    (:class:`IsolationWarning`) when that is ``none``. An explicit choice that cannot run raises.

    Raises:
        ConfigError: ``requested`` is not one of ``auto``, ``bwrap``, ``unshare``, ``none``.
        SandboxUnavailable: the explicit choice cannot run on this machine.

    Example:
        >>> detect_isolation("none")
        'none'
    """
    if requested not in ISOLATIONS:
        raise ConfigError(f"unknown isolation {requested!r}; choose one of {ISOLATIONS}")
    if requested != "auto":
        if not isolation_available(requested):
            hint = " (apt-get install -y bubblewrap)" if requested == "bwrap" else ""
            raise SandboxUnavailable(f"isolation {requested!r} cannot run on this machine{hint}: {_why_not(requested)}")
        return requested
    for candidate in ("bwrap", "unshare"):
        if isolation_available(candidate):
            return candidate
    warnings.warn(
        "No namespace isolation is available: neither bubblewrap nor unshare (user and mount namespaces) can build "
        "the sandbox here, so untrusted programs run with ISOLATION 'none': only rlimits, a fresh work folder and, "
        "as root, a uid drop. They can read every host file their uid can, write the host's /tmp, /var/tmp and "
        "/dev/shm, and reach the network. Verdicts are still decided outside the program. Install bubblewrap "
        f"(apt-get install -y bubblewrap) or allow user namespaces to isolate. Why: {_why_not('bwrap')}; "
        f"{_why_not('unshare')}",
        IsolationWarning,
        stacklevel=3,
    )
    return "none"
