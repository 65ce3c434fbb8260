"""An in-process stand-in of the Hugging Face Hub HTTP API, for tests and offline demos.

:class:`HubStandIn` answers the requests that ``huggingface_hub`` and ``datasets`` send, inside the current
process: it is installed with ``huggingface_hub.set_client_factory`` (every ``HfApi`` call, ``hf_hub_download``,
``HfFileSystem`` and therefore ``Dataset.push_to_hub`` and ``load_dataset`` go through the shared client), so the
real client code runs end to end and nothing leaves the process.

What it serves: repository creation and info, branches (with a starting point), tags, refs, commit history,
the preupload endpoint, the Git LFS batch API with basic single-part uploads and verification, ndjson commits
(regular and LFS files, file and folder deletions, ``parentCommit`` checks), tree listings (recursive or not),
``paths-info`` and ``resolve`` downloads (``HEAD``, ``GET`` and byte ranges), with the Hub's error codes
(``RepoNotFound``, ``RevisionNotFound``, ``EntryNotFound``) in ``X-Error-Code`` headers.

What it does not cover: Xet storage (it switches ``HF_HUB_DISABLE_XET`` on while installed), multipart LFS
uploads, pull requests (``create_pr=True`` answers 400), authentication and private-repo access rules (tokens
are accepted and ignored), ``.gitattributes``-driven LFS rules (a fixed list of binary suffixes, NUL bytes in
the sample or 10 MB and more go to LFS), tree pagination, CDN redirects, the parquet-conversion bot
(``refs/convert/parquet`` never exists), discussions, Spaces and every other endpoint (they answer 501).

Example:
    >>> from datasets import Dataset, load_dataset
    >>> from evolvecoder_datasets.testing import HubStandIn
    >>> with HubStandIn() as hub:                                         # doctest: +SKIP
    ...     Dataset.from_dict({"x": [1, 2]}).push_to_hub("me/demo")
    ...     load_dataset("me/demo", split="train")["x"]
    [1, 2]
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote

__all__ = ["HubStandIn"]

_LFS_SUFFIXES = (
    ".parquet", ".arrow", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".bin", ".safetensors", ".pt", ".pth",
    ".npy", ".npz", ".zip", ".gz", ".tar", ".zst", ".gguf", ".pkl", ".h5", ".onnx", ".mp3", ".wav", ".mp4",
)
_LFS_MIN_SIZE = 10 * 1024 * 1024
_TYPE_PREFIXES = {"datasets": "dataset", "spaces": "space", "models": "model"}
_URL_PREFIX = {"dataset": "datasets/", "space": "spaces/", "model": ""}


def _git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _lfs_pointer(sha256: str, size: int) -> bytes:
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


class HubStandIn:
    """Serve the Hub HTTP API in-process so that the real ``huggingface_hub``/``datasets`` code runs offline.

    Used as a context manager: entering installs an ``httpx2`` client whose transport calls this object (through
    ``huggingface_hub.set_client_factory`` and ``set_async_client_factory``), switches offline mode off in
    ``huggingface_hub.constants`` and ``datasets.config`` (every request is answered in-process, none reaches a
    network), and disables Xet uploads; leaving restores all of them. State (repositories, commits, refs, LFS
    objects) lives in memory and survives re-entering the same instance.

    Args:
        user (`str`, *optional*, defaults to `"ecd-user"`):
            the namespace ``whoami`` reports and that repos created without a namespace land in.
        endpoint (`str`, *optional*):
            the endpoint to serve; defaults to ``huggingface_hub.constants.ENDPOINT`` at enter time. Requests to
            any other host fail with a connection error.

    Attributes:
        requests (`list[tuple[str, str]]`): every ``(method, path)`` served, in order, for assertions.

    Raises:
        MissingExtraError: ``huggingface_hub`` or its HTTP client ``httpx2`` is not importable.

    Example:
        >>> from huggingface_hub import HfApi
        >>> from evolvecoder_datasets.testing import HubStandIn
        >>> with HubStandIn(user="alice") as hub:
        ...     api = HfApi()
        ...     url = api.create_repo("alice/demo", repo_type="dataset")
        ...     api.create_branch("alice/demo", branch="round0", repo_type="dataset")
        ...     sorted(b.name for b in api.list_repo_refs("alice/demo", repo_type="dataset").branches)
        ['main', 'round0']
    """

    def __init__(self, *, user: str = "ecd-user", endpoint: str | None = None) -> None:
        self.user = user
        self._endpoint_arg = endpoint
        self.endpoint = endpoint or ""
        self.requests: list[tuple[str, str]] = []
        self._repos: dict[tuple[str, str], _Repo] = {}
        self._lfs: dict[str, bytes] = {}
        self._lock = threading.RLock()
        self._counter = 0
        self._saved: dict[str, Any] | None = None

    # ------------------------------------------------------------------ installation
    def __enter__(self) -> HubStandIn:
        from .._deps import require

        hub_http = require("huggingface_hub.utils._http", extra="core", feature="the Hub stand-in",
                           package="huggingface_hub")
        constants = require("huggingface_hub.constants", extra="core", package="huggingface_hub")
        require("httpx2", extra="core", feature="the Hub stand-in")
        try:
            import datasets.config as ds_config
        except ImportError:  # pragma: no cover - datasets is a core dependency
            ds_config = None
        self.endpoint = (self._endpoint_arg or constants.ENDPOINT).rstrip("/")
        self._saved = {
            "factory": hub_http._GLOBAL_CLIENT_FACTORY,
            "async_factory": hub_http._GLOBAL_ASYNC_CLIENT_FACTORY,
            "hub_offline": constants.HF_HUB_OFFLINE,
            "disable_xet": constants.HF_HUB_DISABLE_XET,
            "ds_offline": getattr(ds_config, "HF_HUB_OFFLINE", None),
            "ds_datasets_offline": getattr(ds_config, "HF_DATASETS_OFFLINE", None),
        }
        constants.HF_HUB_OFFLINE = False
        constants.HF_HUB_DISABLE_XET = True
        if ds_config is not None:
            ds_config.HF_HUB_OFFLINE = False
            ds_config.HF_DATASETS_OFFLINE = False
        hub_http.set_client_factory(self.client)
        hub_http.set_async_client_factory(self.async_client)
        return self

    def __exit__(self, *exc_info: object) -> None:
        import huggingface_hub.constants as constants
        import huggingface_hub.utils._http as hub_http

        saved, self._saved = self._saved, None
        if saved is None:
            return
        hub_http.set_client_factory(saved["factory"])
        hub_http.set_async_client_factory(saved["async_factory"])
        constants.HF_HUB_OFFLINE = saved["hub_offline"]
        constants.HF_HUB_DISABLE_XET = saved["disable_xet"]
        try:
            import datasets.config as ds_config
        except ImportError:  # pragma: no cover
            return
        ds_config.HF_HUB_OFFLINE = saved["ds_offline"]
        ds_config.HF_DATASETS_OFFLINE = saved["ds_datasets_offline"]

    def client(self):
        """A fresh ``httpx2.Client`` whose transport is this stand-in (what the client factory returns).

        Example:
            >>> from evolvecoder_datasets.testing import HubStandIn
            >>> hub = HubStandIn(endpoint="https://hub.test")
            >>> hub.client().get("https://hub.test/api/whoami-v2").json()["name"]
            'ecd-user'
        """
        import httpx2

        if not self.endpoint:
            self.endpoint = (self._endpoint_arg or "https://huggingface.co").rstrip("/")
        return httpx2.Client(transport=httpx2.MockTransport(self._handle), follow_redirects=True, timeout=None)

    def async_client(self):
        """A fresh ``httpx2.AsyncClient`` served by this stand-in (what the async client factory returns)."""
        import httpx2

        return httpx2.AsyncClient(transport=httpx2.MockTransport(self._handle), follow_redirects=True, timeout=None)

    # ------------------------------------------------------------------ introspection for tests
    def repo_ids(self, repo_type: str = "dataset") -> list[str]:
        """Ids of the repositories of ``repo_type`` created so far, sorted.

        Example:
            >>> HubStandIn().repo_ids()
            []
        """
        with self._lock:
            return sorted(repo_id for kind, repo_id in self._repos if kind == repo_type)

    def refs(self, repo_id: str, repo_type: str = "dataset") -> dict[str, dict[str, str]]:
        """``{"branches": {name: commit}, "tags": {name: commit}}`` of a repository.

        Raises:
            KeyError: the repository does not exist.
        """
        with self._lock:
            repo = self._repos[(repo_type, repo_id)]
            return {"branches": dict(repo.branches), "tags": dict(repo.tags)}

    def files(self, repo_id: str, revision: str = "main", repo_type: str = "dataset") -> dict[str, bytes]:
        """``{path: content}`` of every file at ``revision`` (LFS files resolved to their content).

        Raises:
            KeyError: the repository or the revision does not exist.
        """
        with self._lock:
            repo = self._repos[(repo_type, repo_id)]
            commit = self._resolve(repo, revision)
            return {path: self._content(f) for path, f in sorted(commit.files.items())}

    def ancestry(self, repo_id: str, revision: str = "main", repo_type: str = "dataset") -> list[str]:
        """Commit oids from ``revision`` back to the first commit (newest first).

        Raises:
            KeyError: the repository or the revision does not exist.
        """
        with self._lock:
            repo = self._repos[(repo_type, repo_id)]
            return [c.oid for c in self._history(repo, self._resolve(repo, revision))]

    # ------------------------------------------------------------------ dispatch
    def _handle(self, request):
        import httpx2

        url = request.url
        origin = f"{url.scheme}://{url.netloc.decode()}"
        if origin != self.endpoint:
            raise httpx2.ConnectError(f"the Hub stand-in only serves {self.endpoint}, not {origin}", request=request)
        raw_path = url.raw_path.decode().split("?", 1)[0]
        parts = [unquote(p) for p in raw_path.strip("/").split("/")] if raw_path.strip("/") else []
        query = {k: v[-1] for k, v in parse_qs(url.query.decode(), keep_blank_values=True).items()}
        with self._lock:
            self.requests.append((request.method, raw_path))
            try:
                status, body, headers = self._route(request, parts, query)
            except _HubHTTPError as err:
                headers = {"X-Error-Message": err.message}
                if err.code:
                    headers["X-Error-Code"] = err.code
                status, body = err.status, {"error": err.message}
        if isinstance(body, bytes | bytearray):
            content = bytes(body)
        else:
            content = json.dumps(body).encode()
            headers.setdefault("Content-Type", "application/json")
        if request.method == "HEAD":
            headers.setdefault("Content-Length", str(len(content)))
            return httpx2.Response(status, headers=headers, request=request)
        return httpx2.Response(status, headers=headers, content=content, request=request)

    def _route(self, request, parts: list[str], query: dict[str, str]):
        method = request.method
        if parts[:2] == ["api", "whoami-v2"]:
            return 200, {"type": "user", "name": self.user, "orgs": [], "auth": {"type": "access_token"}}, {}
        if parts[:2] == ["api", "validate-yaml"] and method == "POST":
            return self._validate_yaml(json.loads(request.content or b"{}").get("content", ""))
        if parts[:3] == ["api", "repos", "create"] and method == "POST":
            return self._create_repo(json.loads(request.content or b"{}"))
        if parts[:3] == ["api", "repos", "delete"] and method == "DELETE":
            return self._delete_repo(json.loads(request.content or b"{}"))
        if parts and parts[0] == "__lfs" and len(parts) >= 2:
            return self._lfs_object(request, parts[1], verify=len(parts) > 2)
        if len(parts) >= 4 and parts[0] == "api" and parts[1] in _TYPE_PREFIXES:
            repo = self._get_repo(_TYPE_PREFIXES[parts[1]], f"{parts[2]}/{parts[3]}")
            return self._api(request, repo, parts[4:], query)
        # File URLs: /{datasets/|spaces/|}{ns}/{name}/resolve/{rev}/{path} and the LFS batch endpoint.
        repo_type = _TYPE_PREFIXES.get(parts[0]) if parts else None
        rest = parts[1:] if repo_type and parts[0] != "models" else parts
        repo_type = repo_type if repo_type and parts[0] != "models" else "model"
        if len(rest) >= 5 and rest[1].endswith(".git") and rest[2:] == ["info", "lfs", "objects", "batch"]:
            repo = self._get_repo(repo_type, f"{rest[0]}/{rest[1][:-4]}")
            return self._lfs_batch(repo, json.loads(request.content))
        if len(rest) >= 5 and rest[2] == "resolve" and method in ("GET", "HEAD"):
            repo = self._get_repo(repo_type, f"{rest[0]}/{rest[1]}")
            return self._resolve_file(request, repo, rest[3], "/".join(rest[4:]))
        raise _HubHTTPError(501, f"the Hub stand-in does not serve {method} /{'/'.join(parts)}")

    def _api(self, request, repo: _Repo, action: list[str], query: dict[str, str]):
        method = request.method
        if not action and method == "GET":
            return self._repo_info(repo, "main")
        head, args = action[0], action[1:]
        if head == "revision" and method == "GET" and args:
            return self._repo_info(repo, "/".join(args))
        if head == "refs" and method == "GET":
            def ref(kind: str, name: str, oid: str) -> dict[str, str]:
                return {"name": name, "ref": f"refs/{kind}/{name}", "targetCommit": oid}

            return 200, {
                "branches": [ref("heads", n, o) for n, o in sorted(repo.branches.items())],
                "tags": [ref("tags", n, o) for n, o in sorted(repo.tags.items())],
                "converts": [],
                "pullRequests": [],
            }, {}
        if head == "branch" and args:
            name = "/".join(args)
            if method == "POST":
                return self._create_branch(repo, name, json.loads(request.content or b"{}"))
            if method == "DELETE":
                if name not in repo.branches:
                    raise _HubHTTPError(404, f"Branch {name} does not exist", "RevisionNotFound")
                if name == "main":
                    raise _HubHTTPError(403, "Cannot delete the main branch")
                del repo.branches[name]
                return 200, {}, {}
        if head == "tag" and args:
            name = "/".join(args)
            if method == "POST":
                payload = json.loads(request.content or b"{}")
                tag = payload.get("tag")
                if not tag:
                    raise _HubHTTPError(400, "a tag name is required")
                if tag in repo.tags:
                    raise _HubHTTPError(409, f"Tag {tag} already exists")
                repo.tags[tag] = self._resolve(repo, name).oid
                return 200, {}, {}
            if method == "DELETE":
                if name not in repo.tags:
                    raise _HubHTTPError(404, f"Tag {name} does not exist", "RevisionNotFound")
                del repo.tags[name]
                return 200, {}, {}
        if head == "commits" and method == "GET" and args:
            commit = self._resolve(repo, "/".join(args))
            return 200, [
                {"id": c.oid, "title": c.title, "message": c.message, "authors": [{"user": self.user}],
                 "date": c.date}
                for c in self._history(repo, commit)
            ], {}
        if head == "preupload" and method == "POST" and args:
            return self._preupload(repo, "/".join(args), json.loads(request.content), query)
        if head == "commit" and method == "POST" and args:
            return self._commit(repo, "/".join(args), request.content, query)
        if head == "tree" and method == "GET" and args:
            commit = self._resolve(repo, args[0])
            return self._tree(repo, commit, "/".join(args[1:]), query)
        if head == "paths-info" and method == "POST" and args:
            commit = self._resolve(repo, "/".join(args))
            form = parse_qs(request.content.decode())
            expand = form.get("expand", ["False"])[-1].lower() == "true"
            entries = [self._entry(repo, commit, p.strip("/"), expand) for p in form.get("paths", [])]
            return 200, [e for e in entries if e is not None], {}
        raise _HubHTTPError(501, f"the Hub stand-in does not serve {method} .../{'/'.join(action)}")

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

    # ------------------------------------------------------------------ uploads and commits
    @staticmethod
    def _regular(content: bytes) -> _File:
        return _File(size=len(content), blob_oid=_git_blob_oid(content), content=content)

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
                files[path] = _File(size=size, sha256=oid, blob_oid=_git_blob_oid(_lfs_pointer(oid, size)))
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

    # ------------------------------------------------------------------ reads
    def _content(self, f: _File) -> bytes:
        return self._lfs[f.sha256] if f.sha256 is not None else (f.content or b"")

    def _entry(self, repo: _Repo, commit: _Commit, path: str, expand: bool) -> dict[str, Any] | None:
        f = commit.files.get(path)
        if f is not None:
            entry: dict[str, Any] = {"type": "file", "oid": f.blob_oid, "size": f.size, "path": path}
            if f.sha256 is not None:
                entry["lfs"] = {"oid": f.sha256, "size": f.size,
                                "pointerSize": len(_lfs_pointer(f.sha256, f.size))}
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
