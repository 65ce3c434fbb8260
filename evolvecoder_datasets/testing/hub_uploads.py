"""The Hub stand-in's write path: preupload, the Git LFS batch API and objects, ndjson commits.

Example:
    >>> from evolvecoder_datasets.testing import HubStandIn
    >>> HubStandIn()._regular(b"hi").size
    2
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from typing import Any

from .hub_model import (
    _LFS_MIN_SIZE,
    _LFS_SUFFIXES,
    _URL_PREFIX,
    _Commit,
    _File,
    _HubHTTPError,
    _Repo,
    git_blob_oid,
    lfs_pointer,
)

__all__: list[str] = []


class _UploadsApi:
    """Methods of :class:`~evolvecoder_datasets.testing.HubStandIn` (which holds the state they read and change)."""

    _repos: dict[tuple[str, str], _Repo]
    _lfs: dict[str, bytes]
    _counter: int
    user: str
    endpoint: str

    # ------------------------------------------------------------------ uploads and commits
    @staticmethod
    def _regular(content: bytes) -> _File:
        return _File(size=len(content), blob_oid=git_blob_oid(content), content=content)

    def _new_commit(self, parent: str | None, files: dict[str, _File], title: str, message: str) -> _Commit:
        self._counter += 1
        digest = hashlib.sha1()
        digest.update(f"{parent}\n{title}\n{message}\n{self._counter}\n".encode())
        for path, f in sorted(files.items()):
            digest.update(f"{path}\0{f.blob_oid}\n".encode())
        date = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
        return _Commit(oid=digest.hexdigest(), parent=parent, files=files, title=title, message=message, date=date)

    def _preupload(self, repo: _Repo, revision: str, payload: dict[str, Any], query: dict[str, str]):
        if query.get("create_pr"):
            raise _HubHTTPError(400, "the Hub stand-in does not support pull requests")
        try:
            commit = self._resolve(repo, revision)
        except _HubHTTPError:
            commit = None  # uploading to a branch that the commit will create
        answers = []
        for entry in payload.get("files", []):
            path, size = entry["path"], int(entry["size"])
            sample = base64.b64decode(entry.get("sample", ""))
            lfs = size >= _LFS_MIN_SIZE or path.lower().endswith(_LFS_SUFFIXES) or b"\0" in sample
            existing = commit.files.get(path) if commit else None
            oid = None
            if existing is not None:
                oid = existing.sha256 if existing.is_lfs else existing.blob_oid
            answers.append({"path": path, "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False,
                            "oid": oid})
        return 200, {"files": answers, "commitOid": commit.oid if commit else None}, {}

    def _lfs_batch(self, repo: _Repo, payload: dict[str, Any]):
        if payload.get("operation") != "upload":
            raise _HubHTTPError(501, "the Hub stand-in only serves LFS uploads through the batch API")
        objects = []
        for obj in payload.get("objects", []):
            oid, size = obj["oid"], int(obj["size"])
            answer: dict[str, Any] = {"oid": oid, "size": size, "authenticated": True}
            if oid not in self._lfs:
                href = f"{self.endpoint}/__lfs/{oid}"
                answer["actions"] = {"upload": {"href": href, "header": {}},
                                     "verify": {"href": f"{href}/verify", "header": {}}}
            objects.append(answer)
        return 200, {"transfer": "basic", "objects": objects}, {}

    def _lfs_object(self, request, oid: str, *, verify: bool):
        if verify:
            if oid not in self._lfs:
                raise _HubHTTPError(404, f"LFS object {oid} was never uploaded")
            return 200, {"success": True}, {}
        if request.method != "PUT":
            raise _HubHTTPError(405, "LFS objects are uploaded with PUT")
        data = bytes(request.content)
        if hashlib.sha256(data).hexdigest() != oid:
            raise _HubHTTPError(400, f"uploaded content does not hash to {oid}")
        self._lfs[oid] = data
        return 200, b"", {}

    def _commit(self, repo: _Repo, revision: str, body: bytes, query: dict[str, str]):
        if query.get("create_pr"):
            raise _HubHTTPError(400, "the Hub stand-in does not support pull requests")
        lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
        if not lines or lines[0].get("key") != "header":
            raise _HubHTTPError(400, "a commit starts with a header line")
        header = lines[0]["value"]
        head = self._resolve(repo, revision)
        if revision not in repo.branches:
            raise _HubHTTPError(400, f"commits go to a branch; {revision!r} is not one")
        parent_commit = header.get("parentCommit")
        if parent_commit and parent_commit != head.oid:
            raise _HubHTTPError(412, f"parentCommit {parent_commit} is not the head of {revision} ({head.oid})")
        files = dict(head.files)
        for line in lines[1:]:
            key, value = line["key"], line["value"]
            path = value["path"].strip("/")
            if key == "file":
                content = value["content"]
                files[path] = self._regular(base64.b64decode(content) if value.get("encoding") == "base64"
                                            else content.encode())
            elif key == "lfsFile":
                oid, size = value["oid"], int(value["size"])
                if oid not in self._lfs:
                    raise _HubHTTPError(422, f"LFS object {oid} for {path} was not uploaded")
                files[path] = _File(size=size, sha256=oid, blob_oid=git_blob_oid(lfs_pointer(oid, size)))
            elif key == "deletedFile":
                if path not in files:
                    raise _HubHTTPError(404, f"A file with this name doesn't exist: {path}", "EntryNotFound")
                del files[path]
            elif key == "deletedFolder":
                doomed = [p for p in files if p.startswith(path + "/")]
                if not doomed:
                    raise _HubHTTPError(404, f"A folder with this name doesn't exist: {path}", "EntryNotFound")
                for p in doomed:
                    del files[p]
            else:
                raise _HubHTTPError(400, f"unknown commit operation {key!r}")
        commit = self._new_commit(head.oid, files, header.get("summary", ""), header.get("description", ""))
        repo.commits[commit.oid] = commit
        repo.branches[revision] = commit.oid
        prefix = _URL_PREFIX.get(repo.repo_type, "")
        return 200, {"success": True, "commitOid": commit.oid, "pullRequestUrl": None,
                     "commitUrl": f"{self.endpoint}/{prefix}{repo.repo_id}/commit/{commit.oid}"}, {}
