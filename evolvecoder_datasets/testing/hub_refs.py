"""The Hub stand-in's repositories and refs: create and delete repos, branches, revisions, history, repo info.

Example:
    >>> from evolvecoder_datasets.testing import HubStandIn
    >>> HubStandIn().repo_ids()
    []
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from .hub_model import (
    _URL_PREFIX,
    _Commit,
    _HubHTTPError,
    _Repo,
)

__all__: list[str] = []


class _RefsApi:
    """Methods of :class:`~evolvecoder_datasets.testing.HubStandIn` (which holds the state they read and change)."""

    _repos: dict[tuple[str, str], _Repo]
    _lfs: dict[str, bytes]
    _counter: int
    user: str
    endpoint: str

    # ------------------------------------------------------------------ repositories and refs
    def _get_repo(self, repo_type: str, repo_id: str) -> _Repo:
        repo = self._repos.get((repo_type, repo_id))
        if repo is None:
            raise _HubHTTPError(404, f"Repository Not Found for url: {repo_type} {repo_id}", "RepoNotFound")
        return repo

    @staticmethod
    def _validate_yaml(content: str):
        import yaml

        match = re.match(r"^---\s*\n(.*?)\n---\s*(\n|$)", content, flags=re.DOTALL)
        if match is None:
            return 200, {"errors": [], "warnings": [{"message": "empty or missing yaml metadata"}]}, {}
        try:
            metadata = yaml.safe_load(match.group(1))
        except yaml.YAMLError as err:
            return 400, {"errors": [{"message": f"invalid YAML: {err}"}], "warnings": []}, {}
        if metadata is not None and not isinstance(metadata, dict):
            return 400, {"errors": [{"message": "the metadata must be a mapping"}], "warnings": []}, {}
        return 200, {"errors": [], "warnings": []}, {}

    def _create_repo(self, payload: dict[str, Any]):
        repo_type = payload.get("type") or "model"
        name = payload.get("name")
        if not name:
            raise _HubHTTPError(400, "a repository name is required")
        repo_id = f"{payload.get('organization') or self.user}/{name}"
        url = f"{self.endpoint}/{_URL_PREFIX.get(repo_type, '')}{repo_id}"
        if (repo_type, repo_id) in self._repos:
            raise _HubHTTPError(409, "You already created this repo")
        repo = _Repo(repo_type=repo_type, repo_id=repo_id, private=bool(payload.get("private")))
        self._repos[(repo_type, repo_id)] = repo
        first = self._new_commit(None, {".gitattributes": self._regular(b"*.parquet filter=lfs diff=lfs merge=lfs -text\n")},
                                 "initial commit", "")
        repo.commits[first.oid] = first
        repo.branches["main"] = first.oid
        return 200, {"url": url, "name": repo_id, "id": repo_id}, {}

    def _delete_repo(self, payload: dict[str, Any]):
        repo_id = f"{payload.get('organization') or self.user}/{payload.get('name')}"
        key = (payload.get("type") or "model", repo_id)
        if key not in self._repos:
            raise _HubHTTPError(404, f"Repository Not Found: {repo_id}", "RepoNotFound")
        del self._repos[key]
        return 200, {}, {}

    def _create_branch(self, repo: _Repo, name: str, payload: dict[str, Any]):
        if name in repo.branches:
            raise _HubHTTPError(409, f"Reference refs/heads/{name} already exists")
        start = payload.get("startingPoint") or "main"
        repo.branches[name] = self._resolve(repo, start).oid
        return 200, {}, {}

    def _resolve(self, repo: _Repo, revision: str) -> _Commit:
        for prefix, table in (("refs/heads/", repo.branches), ("refs/tags/", repo.tags)):
            if revision.startswith(prefix) and revision[len(prefix):] in table:
                return repo.commits[table[revision[len(prefix):]]]
        oid = repo.branches.get(revision) or repo.tags.get(revision)
        if oid is None and revision in repo.commits:
            oid = revision
        if oid is None:
            raise _HubHTTPError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        return repo.commits[oid]

    def _history(self, repo: _Repo, commit: _Commit) -> Iterator[_Commit]:
        current: _Commit | None = commit
        while current is not None:
            yield current
            current = repo.commits.get(current.parent) if current.parent else None

    def _repo_info(self, repo: _Repo, revision: str):
        commit = self._resolve(repo, revision)
        return 200, {
            "id": repo.repo_id,
            "author": repo.repo_id.split("/")[0],
            "sha": commit.oid,
            "private": repo.private,
            "disabled": False,
            "gated": False,
            "lastModified": commit.date,
            "tags": [],
            "siblings": [{"rfilename": path} for path in sorted(commit.files)],
        }, {}
