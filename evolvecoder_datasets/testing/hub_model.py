"""The Hub stand-in's data: repositories, commits and files as git and Git LFS see them, and its HTTP error.

Example:
    >>> from evolvecoder_datasets.testing.hub_model import git_blob_oid
    >>> git_blob_oid(b"")   # git's empty blob
    'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391'
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

__all__ = ["git_blob_oid", "lfs_pointer"]

_LFS_SUFFIXES = (
    ".parquet", ".arrow", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".bin", ".safetensors", ".pt", ".pth",
    ".npy", ".npz", ".zip", ".gz", ".tar", ".zst", ".gguf", ".pkl", ".h5", ".onnx", ".mp3", ".wav", ".mp4",
)
_LFS_MIN_SIZE = 10 * 1024 * 1024
_TYPE_PREFIXES = {"datasets": "dataset", "spaces": "space", "models": "model"}
_URL_PREFIX = {"dataset": "datasets/", "space": "spaces/", "model": ""}


def git_blob_oid(data: bytes) -> str:
    """The git object id of a blob with ``data``.

    Example:
        >>> len(git_blob_oid(b"x"))
        40
    """
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer(sha256: str, size: int) -> bytes:
    """The Git LFS pointer file of an object.

    Example:
        >>> lfs_pointer("ab", 3).splitlines()[-1]
        b'size 3'
    """
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()


@dataclass(frozen=True)
class _File:
    """One file of a commit: regular files keep their bytes, LFS files point into the LFS store."""

    size: int
    blob_oid: str  # git oid of the content (regular) or of the pointer file (LFS)
    sha256: str | None = None  # set for LFS files
    content: bytes | None = None  # set for regular files

    @property
    def is_lfs(self) -> bool:
        return self.sha256 is not None


@dataclass
class _Commit:
    oid: str
    parent: str | None
    files: dict[str, _File]
    title: str
    message: str
    date: str


@dataclass
class _Repo:
    repo_type: str
    repo_id: str
    private: bool
    commits: dict[str, _Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)


class _HubHTTPError(Exception):
    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
