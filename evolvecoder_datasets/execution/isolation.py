"""How a fork server is walled off: bubblewrap, then ``unshare``, then nothing (with a loud warning).

bubblewrap gives a read-only view of ``/`` with the home folders and ``/run`` hidden, a private ``/tmp``, no
network, its own PID/IPC/UTS namespaces, a cleared environment, and dies with its parent. ``unshare`` gives the
network, PID and mount namespaces (private ``/proc``) but leaves the filesystem as it is, so the uid drop carries
the rest. Either way the solution children drop to an unprivileged uid when the server runs as root.

Example:
    >>> from evolvecoder_datasets.execution.isolation import detect_isolation
    >>> detect_isolation("auto") in {"bwrap", "unshare", "none"}
    True
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

from ..errors import ConfigError, SandboxUnavailable

ISOLATIONS = ("auto", "bwrap", "unshare", "none")
SERVER_SCRIPT = Path(__file__).with_name("_forkserver.py")

# Environment the server (and so every solution) starts with; nothing of the caller's reaches it.
BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}


class IsolationWarning(RuntimeWarning):
    """Emitted when solutions run without namespace isolation."""


def _python() -> str:
    # The real interpreter, not a shim: pyenv's shim costs ~150 ms per start and may resolve elsewhere.
    return os.path.realpath(sys.executable)


def _python_roots() -> list[str]:
    """Folders the interpreter and its packages live in (re-exposed when the home folders are hidden).

    Only what the fork server needs: the prefixes, the package folders it puts on its path, and this package. Not
    the caller's ``sys.path`` at large: a script started from ``/tmp`` puts ``/tmp`` there, and binding it back would
    hand solutions the host's ``/tmp`` instead of a private one.
    """
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, str(SERVER_SCRIPT.parent.parent)}
    roots.add(str(Path(_python()).parent.parent))
    roots.update(p for p in site_paths().split(os.pathsep) if p)
    # Keep only the outermost folders.
    ordered = sorted({os.path.realpath(r) for r in roots if r and os.path.isdir(r)}, key=len)
    kept: list[str] = []
    for root in ordered:
        if not any(root == k or root.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(root)
    return kept


def bwrap_command(python_args: list[str], *, tmp_size_mb: int = 512) -> list[str]:
    """The bubblewrap command line that starts ``python_args`` inside the sandbox.

    Example:
        >>> cmd = bwrap_command(["/usr/bin/python3", "-c", "pass"])
        >>> cmd[0].endswith("bwrap") and "--unshare-net" in cmd
        True
    """
    cmd = [
        shutil.which("bwrap") or "bwrap",
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--size", str(tmp_size_mb * 1024 * 1024), "--tmpfs", "/tmp",
    ]  # fmt: skip
    hidden = [p for p in {os.path.expanduser("~"), "/root", "/home", "/run", "/var/run"} if os.path.isdir(p)]
    for path in sorted(hidden):
        if os.path.islink(path):
            continue
        cmd += ["--tmpfs", path]
    made: set[str] = set()
    for root in _python_roots():
        # The private /tmp hides a checkout or virtualenv that lives there (CI clones often do) like a home folder.
        hider = next((h for h in [*hidden, "/tmp"] if root.startswith(h.rstrip("/") + "/")), None)
        if hider is None:  # outside the hidden folders (a hidden folder itself is never bound back whole)
            continue
        # bwrap would create the folders leading to the bind with mode 0700, unreadable by the sandbox uid.
        parts = Path(root).relative_to(hider).parts[:-1]
        for i in range(1, len(parts) + 1):
            folder = os.path.join(hider, *parts[:i])
            if folder not in made:
                made.add(folder)
                cmd += ["--perms", "0755", "--dir", folder]
        cmd += ["--ro-bind", root, root]
    cmd += [
        "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--die-with-parent", "--new-session", "--clearenv",
    ]  # fmt: skip
    for key, value in BASE_ENV.items():
        cmd += ["--setenv", key, value]
    cmd += ["--setenv", "ECD_WORKROOT", "/tmp", "--setenv", "ECD_SITE_PATHS", site_paths(), "--chdir", "/tmp", "--"]
    return cmd + python_args


def unshare_command(python_args: list[str]) -> list[str]:
    """The ``unshare`` command line (network, PID and mount namespaces; user namespace when not root).

    Example:
        >>> unshare_command(["python3"])[:2]
        ['unshare', '--net']
    """
    cmd = ["unshare", "--net", "--pid", "--fork", "--kill-child", "--mount", "--mount-proc", "--ipc", "--uts"]
    if os.geteuid() != 0:
        cmd[1:1] = ["--user", "--map-root-user"]
    return cmd + ["--"] + python_args


def server_command(isolation: str) -> list[str]:
    """Full command that starts a fork server under ``isolation`` (one of ``bwrap``, ``unshare``, ``none``)."""
    # Imported as a module, not run as a script: a script run keeps ~3 MB more of the heap alive (measured:
    # RssAnon 10.0 MB against 6.8-7.2 MB), and every fork and exit of the server's children pays for each page.
    # The folder leaves sys.path again at once: a solution's `import report` must not find our modules.
    bootstrap = (f"import sys; sys.path.insert(0, {str(SERVER_SCRIPT.parent)!r}); import _forkserver; "
                 "del sys.path[0]; _forkserver.main()")
    args = [_python(), "-I", "-S", "-B", "-c", bootstrap]
    if isolation == "bwrap":
        return bwrap_command(args)
    if isolation == "unshare":
        return unshare_command(args)
    if isolation == "none":
        return args
    raise ConfigError(f"unknown isolation {isolation!r}; choose one of {ISOLATIONS}")


def site_paths() -> str:
    """The interpreter's package folders, for a fork server started with ``-S`` (``os.pathsep``-joined).

    Example:
        >>> any("site-packages" in p for p in site_paths().split(":"))
        True
    """
    import site

    paths = []
    for entry in [*site.getsitepackages(), site.getusersitepackages()]:
        if entry and os.path.isdir(entry) and entry not in paths:
            paths.append(entry)
    return os.pathsep.join(paths)


def server_env() -> dict[str, str]:
    """Environment of a fork server started without bubblewrap (which sets its own)."""
    return {**BASE_ENV, "ECD_SITE_PATHS": site_paths()}


def _works(cmd: list[str]) -> bool:
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=20, env=BASE_ENV)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0 and proc.stdout.strip() == b"ok"


@functools.lru_cache(maxsize=None)
def isolation_available(isolation: str) -> bool:
    """Whether ``isolation`` can start a Python here (probed once per process, ~10-60 ms).

    Example:
        >>> isolation_available("none")
        True
    """
    probe = [_python(), "-I", "-S", "-c", "print('ok')"]
    if isolation == "none":
        return True
    if isolation == "bwrap":
        return shutil.which("bwrap") is not None and _works(bwrap_command(probe))
    if isolation == "unshare":
        return shutil.which("unshare") is not None and _works(unshare_command(probe))
    raise ConfigError(f"unknown isolation {isolation!r}; choose one of {ISOLATIONS}")


def detect_isolation(requested: str = "auto") -> str:
    """Resolve ``requested`` to the isolation that will be used.

    ``auto`` takes the strongest available and warns (:class:`IsolationWarning`) when that is ``none``. An explicit
    choice that cannot run raises.

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
            raise SandboxUnavailable(f"isolation {requested!r} cannot run on this machine{hint}")
        return requested
    for candidate in ("bwrap", "unshare"):
        if isolation_available(candidate):
            return candidate
    warnings.warn(
        "No namespace isolation is available (install bubblewrap: apt-get install -y bubblewrap). Untrusted programs "
        "will run with only rlimits and, as root, a uid drop: they can reach the network and the filesystem.",
        IsolationWarning,
        stacklevel=3,
    )
    return "none"
