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

The server is split by concern: this module installs it and routes requests; :mod:`.hub_model` holds the data
(repos, commits, files), :mod:`.hub_refs` repositories and refs, :mod:`.hub_uploads` the write path,
:mod:`.hub_reads` the read path.

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

import json
import threading
from typing import Any
from urllib.parse import parse_qs, unquote

from .hub_model import _TYPE_PREFIXES, _HubHTTPError, _Repo
from .hub_reads import _ReadsApi
from .hub_refs import _RefsApi
from .hub_uploads import _UploadsApi

__all__ = ["HubStandIn"]

class HubStandIn(_RefsApi, _UploadsApi, _ReadsApi):
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
