"""The Hub stand-in's read path: tree listings, paths-info entries and ``resolve`` downloads (with ranges).

Example:
    >>> from evolvecoder_datasets.testing import HubStandIn
    >>> HubStandIn().files  # doctest: +ELLIPSIS
    <bound method HubStandIn.files of ...>
"""

from __future__ import annotations

import hashlib
from typing import Any

from .hub_model import (
    _Commit,
    _File,
    _HubHTTPError,
    _Repo,
    lfs_pointer,
)

__all__: list[str] = []


class _ReadsApi:
    """Methods of :class:`~evolvecoder_datasets.testing.HubStandIn` (which holds the state they read and change)."""

    _repos: dict[tuple[str, str], _Repo]
    _lfs: dict[str, bytes]
    _counter: int
    user: str
    endpoint: str

    # ------------------------------------------------------------------ reads
    def _content(self, f: _File) -> bytes:
        return self._lfs[f.sha256] if f.sha256 is not None else (f.content or b"")

    def _entry(self, repo: _Repo, commit: _Commit, path: str, expand: bool) -> dict[str, Any] | None:
        f = commit.files.get(path)
        if f is not None:
            entry: dict[str, Any] = {"type": "file", "oid": f.blob_oid, "size": f.size, "path": path}
            if f.sha256 is not None:
                entry["lfs"] = {"oid": f.sha256, "size": f.size,
                                "pointerSize": len(lfs_pointer(f.sha256, f.size))}
        else:
            children = sorted((p, x.blob_oid) for p, x in commit.files.items() if p.startswith(path + "/"))
            if not children or not path:
                return None
            tree_oid = hashlib.sha1(repr(children).encode()).hexdigest()
            entry = {"type": "directory", "oid": tree_oid, "size": 0, "path": path}
        if expand:
            last = self._last_commit(repo, commit, path)
            entry["lastCommit"] = {"id": last.oid, "title": last.title, "date": last.date}
        return entry

    def _last_commit(self, repo: _Repo, commit: _Commit, path: str) -> _Commit:
        def snapshot(c: _Commit) -> list[tuple[str, str]]:
            return sorted((p, f.blob_oid) for p, f in c.files.items() if p == path or p.startswith(path + "/"))

        current, state = commit, snapshot(commit)
        for older in self._history(repo, commit):
            if snapshot(older) != state:
                break
            current = older
        return current

    def _tree(self, repo: _Repo, commit: _Commit, path: str, query: dict[str, str]):
        path = path.strip("/")
        recursive = query.get("recursive", "False").lower() == "true"
        expand = query.get("expand", "False").lower() == "true"
        if path and path in commit.files:
            raise _HubHTTPError(400, f"{path} is a file, not a folder")
        prefix = f"{path}/" if path else ""
        below = [p for p in commit.files if p.startswith(prefix)]
        if path and not below:
            raise _HubHTTPError(404, f"{path} does not exist on {commit.oid}", "EntryNotFound")
        names: set[str] = set()
        for p in below:
            rel = p[len(prefix):].split("/")
            if recursive:
                names.update(prefix + "/".join(rel[: i + 1]) for i in range(len(rel)))
            else:
                names.add(prefix + rel[0])
        entries = [self._entry(repo, commit, name, expand) for name in sorted(names)]
        return 200, [e for e in entries if e is not None], {}

    def _resolve_file(self, request, repo: _Repo, revision: str, path: str):
        commit = self._resolve(repo, revision)
        f = commit.files.get(path)
        if f is None:
            raise _HubHTTPError(404, f"Entry not found: {path}", "EntryNotFound")
        data = self._content(f)
        headers = {"X-Repo-Commit": commit.oid, "ETag": f'"{f.blob_oid}"', "Accept-Ranges": "bytes",
                   "Content-Type": "application/octet-stream"}
        if f.sha256 is not None:
            headers["X-Linked-Etag"] = f'"{f.sha256}"'
            headers["X-Linked-Size"] = str(f.size)
        status = 200
        range_header = request.headers.get("Range")
        if range_header and range_header.startswith("bytes="):
            first, _, last = range_header[len("bytes="):].split(",")[0].partition("-")
            if first == "":
                start, end = max(0, len(data) - int(last)), len(data) - 1
            else:
                start, end = int(first), min(int(last), len(data) - 1) if last else len(data) - 1
            if start >= len(data) and len(data) > 0:
                raise _HubHTTPError(416, "Requested range not satisfiable")
            headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
            data, status = data[start : end + 1], 206
        headers["Content-Length"] = str(len(data))
        return status, data, headers
