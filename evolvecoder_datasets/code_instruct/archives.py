"""Source archives: download a pinned sdist with pip, and extract an sdist or wheel once (unsafe members refused).

Example:
    >>> from evolvecoder_datasets.code_instruct.archives import default_cache_dir
    >>> default_cache_dir().is_absolute()
    True
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from ..errors import RepositoryError

__all__ = ["default_cache_dir", "fetch_sdist"]

_ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar", ".zip", ".whl")


def _extract(archive: Path, cache_dir: Path) -> Path:
    """Extract ``archive`` once under ``cache_dir`` (keyed by its sha256) and return the tree's root."""
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()[:16]
    stem = archive.name
    for suffix in _ARCHIVE_SUFFIXES:
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    target = cache_dir / f"{stem}-{digest}"
    if not (target / ".ecd-extracted").exists():
        staging = cache_dir / f".{stem}-{digest}-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        try:
            if archive.name.endswith((".zip", ".whl")):
                with zipfile.ZipFile(archive) as zf:
                    for member in zf.namelist():
                        _check_member(member, archive)
                    zf.extractall(staging)
            else:
                with tarfile.open(archive) as tf:
                    members = tf.getmembers()
                    for member in members:
                        _check_member(member.name, archive)
                        if not (member.isfile() or member.isdir()):
                            raise RepositoryError(f"{archive.name} holds a link or device {member.name!r}; refused")
                    safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
                    tf.extractall(staging, members=members, **safe)
        except (tarfile.TarError, zipfile.BadZipFile, OSError) as err:
            shutil.rmtree(staging, ignore_errors=True)
            raise RepositoryError(f"cannot extract {archive}: {err}") from err
        (staging / ".ecd-extracted").write_text(str(archive))
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
    entries = [p for p in target.iterdir() if p.name != ".ecd-extracted"]
    # An sdist holds one folder `name-version/`; a wheel holds the packages directly.
    if len(entries) == 1 and entries[0].is_dir() and not archive.name.endswith(".whl"):
        return entries[0]
    return target


def _check_member(name: str, archive: Path) -> None:
    if name.startswith(("/", "\\")) or ".." in Path(name).parts:
        raise RepositoryError(f"{archive.name} holds an unsafe path {name!r}; refused")


def default_cache_dir() -> Path:
    """``$EVOLVECODER_CACHE`` or ``~/.cache/evolvecoder_datasets``: where sources and environments are kept.

    Example:
        >>> default_cache_dir().name in {"evolvecoder_datasets"} or True
        True
    """
    from .._cache import cache_root

    return cache_root()


def fetch_sdist(
    requirement: str, dest: str | os.PathLike, *, pip_args: tuple[str, ...] = (), timeout_s: float = 900.0
) -> Path:
    """Download the source distribution of ``requirement`` with ``pip download`` (no dependencies), once.

    Args:
        requirement (`str`): a pinned requirement, e.g. ``"click==8.1.7"``.
        dest (`str` or `os.PathLike`): folder for the archive; an archive already there is reused.
        pip_args (`tuple[str, ...]`, defaults to ``()``): extra ``pip download`` arguments (``--index-url``...).
        timeout_s (`float`, defaults to 900): limit on the download (pip may build metadata, which installs the
            project's build backend).

    Returns:
        `Path`: the ``.tar.gz`` / ``.zip`` archive.

    Raises:
        RepositoryError: ``requirement`` is not pinned with ``==``, or pip failed.

    Example:
        >>> fetch_sdist("click==8.1.7", "downloads")        # doctest: +SKIP
        PosixPath('downloads/click-8.1.7.tar.gz')
    """
    name, sep, version = requirement.partition("==")
    if not sep or not name.strip() or not version.strip():
        raise RepositoryError(f"pin the version to download an sdist: {requirement!r} (e.g. 'click==8.1.7')")
    folder = Path(dest)
    folder.mkdir(parents=True, exist_ok=True)
    stem = "[-_.]+".join(re.escape(part) for part in re.split(r"[-_.]+", name.strip()))  # any PEP 503 spelling

    def existing() -> Path | None:
        pattern = re.compile(rf"^{stem}-{re.escape(version.strip())}\.(tar\.gz|zip)$", re.IGNORECASE)
        return next((p for p in sorted(folder.iterdir()) if pattern.match(p.name)), None)

    found = existing()
    if found is not None:
        return found
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--disable-pip-version-check",
           "-d", str(folder), requirement, *pip_args]  # fmt: skip
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as err:
        raise RepositoryError(f"pip download {requirement} took more than {timeout_s:g} s") from err
    found = existing()
    if proc.returncode != 0 or found is None:
        raise RepositoryError(f"pip download {requirement} failed:\n{(proc.stdout + proc.stderr)[-2000:]}")
    return found
