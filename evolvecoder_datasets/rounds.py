"""Publish and load the revisions of an EvolveCoder run: one branch ``round{r}`` per round, ``main`` = the result.

Each round is a branch created **from the previous round's commit** (``push_to_hub(revision=...)`` alone would
branch from ``main``'s head), so ``git log round3`` walks back through rounds 2, 1 and 0. A round revision holds
the problem rows as the default config (``data/train-*.parquet``), the solution pool and pass matrices as config
``solutions`` (``solutions/train-*.parquet``), the rendered card (``README.md`` with ``configs:`` front matter),
``stats.json``, the recipe configuration ``recipe.yaml`` and the figures under ``figures/``; every push is tagged
(``round{r}-v{n}``), so a re-pushed round keeps its earlier versions reachable. ``main`` carries the final round
with exactly the published columns ``id``, ``question``, ``tests`` (plus ``source`` if asked).

The same API serves two stores, picked from ``repo_id``:

- a Hub dataset repository (``"org/name"``), written with the real ``Dataset.push_to_hub`` and ``HfApi``;
- a **local store** when ``repo_id`` is a folder (a ``pathlib.Path``, a path starting with ``/``, ``./``,
  ``../`` or ``~``, or an existing directory): a bare git repository with the Hub's layout, one commit per
  round. ``load_dataset(folder, revision=...)`` silently ignores ``revision``, so :func:`load_round`
  materialises the commit (``git archive``) into a cache folder keyed by its sha and loads that, a second load
  being a ``datasets`` cache hit.

Example:
    >>> from datasets import Dataset
    >>> from evolvecoder_datasets.rounds import push_round, load_round, list_rounds
    >>> rows = {"id": ["TACO_1"], "question": ["def f(x): ..."], "tests": [["assert f(1) == 1"]]}
    >>> pushed = push_round(Dataset.from_dict(rows), "./my-run", round=0, stats={"num_problems": 1})  # doctest: +SKIP
    >>> load_round("./my-run", round=0)["id"]                                                    # doctest: +SKIP
    ['TACO_1']
    >>> [info.revision for info in list_rounds("./my-run")]                                       # doctest: +SKIP
    ['round0', 'main']
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import io
import json
import logging
import math
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import schema
from .errors import ConfigError, EvolveCoderError, RevisionNotFoundError, RoundStoreError

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset
    from huggingface_hub import DatasetCard

__all__ = [
    "RoundCommit",
    "RoundInfo",
    "round_branch",
    "normalize_revision",
    "split_repo_revision",
    "is_local_store",
    "push_round",
    "push_final",
    "load_round",
    "load_round_stats",
    "list_rounds",
    "rerender_card",
    "describe_round",
]

logger = logging.getLogger(__name__)

STATS_FILENAME = "stats.json"
RECIPE_FILENAME = "recipe.yaml"
CARD_FILENAME = "README.md"
FIGURES_DIR = "figures"
SOLUTIONS_CONFIG = "solutions"
DROPPED_CONFIG = "dropped"
_ROUND_RE = re.compile(r"^round(\d+)$")
_GITATTRIBUTES = b"*.parquet binary\n*.png binary\n*.jpg binary\n"
_GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "evolvecoder-datasets",
    "GIT_AUTHOR_EMAIL": "evolvecoder-datasets@localhost",
    "GIT_COMMITTER_NAME": "evolvecoder-datasets",
    "GIT_COMMITTER_EMAIL": "evolvecoder-datasets@localhost",
}


# ---------------------------------------------------------------------------- names
@dataclass(frozen=True)
class RoundCommit:
    """What a push produced.

    Attributes:
        repo_id (`str`): the Hub repository or the local store folder.
        revision (`str`): the branch (``round{r}`` or ``main``).
        commit (`str`): the sha of the last commit of the push.
        tag (`str` or `None`): the tag put on that commit.
    """

    repo_id: str
    revision: str
    commit: str
    tag: str | None = None


@dataclass(frozen=True)
class RoundInfo:
    """One revision of a store, as :func:`list_rounds` reports it.

    Attributes:
        revision (`str`): ``round{r}`` or ``main``.
        round (`int` or `None`): the round number (``None`` for ``main``).
        commit (`str`): the branch head.
        tags (`list[str]`): tags pointing at that commit.
        stats (`dict`): the revision's ``stats.json`` (empty when absent).
    """

    revision: str
    round: int | None
    commit: str
    tags: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)


def round_branch(round: int) -> str:
    """The branch name of a round.

    Raises:
        ConfigError: ``round`` is not a non-negative int.

    Example:
        >>> round_branch(2)
        'round2'
    """
    if isinstance(round, bool) or not isinstance(round, int) or round < 0:
        raise ConfigError(f"round must be a non-negative int, got {round!r}")
    return f"round{round}"


def normalize_revision(revision: str | int | None) -> str:
    """``None`` → ``"main"``, ``3`` or ``"3"`` → ``"round3"``; anything else (a branch, tag or sha) unchanged.

    Example:
        >>> [normalize_revision(r) for r in (None, 3, "3", "round1", "main")]
        ['main', 'round3', 'round3', 'round1', 'main']
    """
    if revision is None:
        return "main"
    if isinstance(revision, int) and not isinstance(revision, bool):
        return round_branch(revision)
    text = str(revision).strip()
    # ASCII digits only ("³".isdigit() is true); "03" is round 3, the branch is named without the zero.
    return f"round{int(text)}" if text.isascii() and text.isdigit() and len(text) < 7 else text


def split_repo_revision(text: str) -> tuple[str, str]:
    """Split ``REPO@REV`` (the CLI's notation) into the repository and a normalised revision (default ``main``).

    Example:
        >>> split_repo_revision("org/run@2")
        ('org/run', 'round2')
        >>> split_repo_revision("./store")
        ('./store', 'main')
    """
    repo, sep, rev = text.rpartition("@")
    if not sep or not repo:
        return text, "main"
    return repo, normalize_revision(rev)


def is_local_store(repo_id: str | os.PathLike) -> bool:
    """Whether ``repo_id`` names a local store (a folder) rather than a Hub repository.

    Example:
        >>> is_local_store("./runs/evolve"), is_local_store("org/EvolveCoder-22k"), is_local_store("runs/x/store")
        (True, False, True)
    """
    if isinstance(repo_id, os.PathLike):
        return True
    text = str(repo_id)
    # A Hub id is "name" or "org/name"; a path with more parts ("runs/demo/store") can only be a folder.
    return text.startswith(("/", "./", "../", "~", "file://")) or os.path.isdir(text) or text.count("/") >= 2


def _round_of(revision: str) -> int | None:
    match = _ROUND_RE.match(revision)
    return int(match.group(1)) if match else None


# ---------------------------------------------------------------------------- stores
@dataclass
class _Part:
    """One config of a revision: the rows and the folder their shards go to."""

    dataset: Dataset
    data_dir: str


class _Store:
    """What both stores do; :func:`_open_store` picks one."""

    repo_id: str

    def ensure(self, *, private: bool | None) -> None: ...
    def resolve(self, revision: str) -> str | None: ...
    def branches(self) -> dict[str, str]: ...
    def tags(self) -> dict[str, str]: ...
    def create_branch(self, branch: str, start: str) -> None: ...
    def delete_branch(self, branch: str) -> None: ...
    def is_ancestor(self, ancestor: str, commit: str) -> bool: ...
    def read(self, commit: str, path: str) -> bytes | None: ...
    def list_files(self, commit: str, folder: str) -> list[str]: ...
    def tag(self, name: str, commit: str, message: str) -> None: ...
    def write_revision(self, branch: str, parts: dict[str, _Part], card: DatasetCard, files: dict[str, bytes],
                       message: str, max_shard_size: int) -> str: ...
    def write_files(self, branch: str, files: dict[str, bytes], message: str) -> str: ...
    def load(self, commit: str, revision: str, config: str, split: str, cache_dir: str | None) -> Dataset: ...

    def read_json(self, commit: str, path: str) -> dict[str, Any]:
        raw = self.read(commit, path)
        return json.loads(raw) if raw else {}

    def require(self, revision: str) -> str:
        sha = self.resolve(revision)
        if sha is None:
            rounds = sorted((b for b in self.branches() if _round_of(b) is not None), key=_round_of)
            raise RevisionNotFoundError(
                f"revision {revision!r} not found in {self.repo_id} (rounds: {rounds or 'none'})"
            )
        return sha


def _open_store(repo_id: str | os.PathLike, token: str | bool | None = None) -> _Store:
    if is_local_store(repo_id):
        text = str(repo_id)
        return _LocalStore(Path(text.removeprefix("file://")).expanduser())
    return _HubStore(str(repo_id), token=token)


def _merge_card(card: DatasetCard, generated: DatasetCard | None, keep_configs: Sequence[str]) -> DatasetCard:
    """``card`` with the ``configs``/``dataset_info`` metadata of ``generated``, restricted to ``keep_configs``."""
    from huggingface_hub import DatasetCard

    merged = DatasetCard(str(card))
    if generated is None:
        return merged
    for key in ("configs", "dataset_info"):
        value = generated.data.get(key)
        if value is None:
            continue
        entries = value if isinstance(value, list) else [value]
        # `datasets` writes a lone default config without `config_name`, but reads a list of entries only when
        # every entry names its config: name them all, or the next push_to_hub on this branch fails.
        entries = [{"config_name": e.get("config_name", "default"), **e} for e in entries
                   if isinstance(e, Mapping) and e.get("config_name", "default") in keep_configs]
        if entries:
            merged.data[key] = entries
    return merged


def _configs_metadata(parts: dict[str, _Part], shard_sizes: dict[str, int]) -> tuple[list, list]:
    from datasets import DatasetInfo, SplitDict, SplitInfo

    configs, infos = [], []
    for name, part in parts.items():
        configs.append({"config_name": name, "data_files": [{"split": "train", "path": f"{part.data_dir}/train-*"}]})
        splits = SplitDict()
        splits.add(SplitInfo(name="train", num_bytes=part.dataset.data.nbytes, num_examples=len(part.dataset)))
        info = DatasetInfo(features=part.dataset.features, splits=splits, download_size=shard_sizes[name],
                           dataset_size=part.dataset.data.nbytes, config_name=name)
        infos.append({"config_name": name, **info._to_yaml_dict()})
    return configs, infos


class _LocalStore(_Store):
    """A bare git repository in a folder, with the Hub's file layout; one commit per push."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.repo_id = str(path)

    # -- git plumbing
    def _git(self, *args: str, input: bytes | None = None, env: Mapping[str, str] | None = None,
             check: bool = True) -> subprocess.CompletedProcess:
        full_env = {**os.environ, **_GIT_IDENTITY, "GIT_DIR": str(self.path), **(env or {})}
        try:
            proc = subprocess.run(["git", *args], input=input, env=full_env, capture_output=True)
        except FileNotFoundError as err:
            raise RoundStoreError("the local round store needs the `git` executable on PATH") from err
        if check and proc.returncode != 0:
            raise RoundStoreError(f"git {' '.join(args[:2])} failed in {self.path}: "
                                  f"{proc.stderr.decode(errors='replace').strip()}")
        return proc

    def _is_repo(self) -> bool:
        return (self.path / "HEAD").is_file() and (self.path / "objects").is_dir()

    def ensure(self, *, private: bool | None) -> None:
        if self._is_repo():
            return
        if self.path.exists() and any(self.path.iterdir()):
            raise RoundStoreError(f"{self.path} exists and is not a round store (a bare git repository)")
        self.path.mkdir(parents=True, exist_ok=True)
        self._git("init", "--quiet", "--bare", "--initial-branch=main")
        with tempfile.TemporaryDirectory(prefix="ecd-store-") as tmp:
            (Path(tmp) / ".gitattributes").write_bytes(_GITATTRIBUTES)
            self._commit("main", None, {".gitattributes": Path(tmp) / ".gitattributes"}, keep_parent=False,
                         message="Initialise the round store")

    def _require_repo(self) -> None:
        if not self._is_repo():
            raise RevisionNotFoundError(f"no round store at {self.path}")

    def resolve(self, revision: str) -> str | None:
        self._require_repo()
        proc = self._git("rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}", check=False)
        if proc.returncode != 0:
            return None
        return proc.stdout.decode().strip() or None

    def _refs(self, namespace: str) -> dict[str, str]:
        self._require_repo()
        out = self._git("for-each-ref", "--format=%(refname:strip=2)%09%(objectname)%09%(*objectname)",
                        namespace).stdout.decode()
        refs = {}
        for line in out.splitlines():
            name, obj, peeled = line.split("\t")
            refs[name] = peeled or obj
        return refs

    def branches(self) -> dict[str, str]:
        return self._refs("refs/heads")

    def tags(self) -> dict[str, str]:
        return self._refs("refs/tags")

    def create_branch(self, branch: str, start: str) -> None:
        self._git("update-ref", f"refs/heads/{branch}", start, "0" * 40)

    def delete_branch(self, branch: str) -> None:
        self._git("update-ref", "-d", f"refs/heads/{branch}")

    def is_ancestor(self, ancestor: str, commit: str) -> bool:
        return self._git("merge-base", "--is-ancestor", ancestor, commit, check=False).returncode == 0

    def read(self, commit: str, path: str) -> bytes | None:
        proc = self._git("cat-file", "blob", f"{commit}:{path}", check=False)
        return proc.stdout if proc.returncode == 0 else None

    def list_files(self, commit: str, folder: str) -> list[str]:
        out = self._git("ls-tree", "-r", "-z", "--name-only", commit, "--", folder.rstrip("/") + "/").stdout
        return sorted(p for p in out.decode().split("\0") if p)

    def tag(self, name: str, commit: str, message: str) -> None:
        self._git("tag", "--force", "--annotate", "--message", message, name, commit)

    def _commit(self, branch: str, parent: str | None, files: dict[str, Path], *, keep_parent: bool,
                message: str) -> str:
        """Commit ``files`` (repository path -> local file) on ``branch``, on top of ``parent``'s tree or not."""
        entries: dict[str, tuple[str, str]] = {}
        if keep_parent and parent:
            listing = self._git("ls-tree", "-r", "-z", parent).stdout.decode()
            for item in filter(None, listing.split("\0")):
                meta, path = item.split("\t", 1)
                mode, _, sha = meta.split(" ")
                entries[path] = (mode, sha)
        if files:
            paths = list(files)
            shas = self._git("hash-object", "-w", "--stdin-paths",
                             input="".join(f"{files[p]}\n" for p in paths).encode()).stdout.decode().split()
            entries.update({p: ("100644", sha) for p, sha in zip(paths, shas)})
        with tempfile.TemporaryDirectory(prefix="ecd-index-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            info = "".join(f"{mode} {sha}\t{path}\n" for path, (mode, sha) in sorted(entries.items()))
            self._git("update-index", "--add", "--index-info", input=info.encode(), env=env)
            tree = self._git("write-tree", env=env).stdout.decode().strip()
        if parent and tree == self._git("rev-parse", f"{parent}^{{tree}}").stdout.decode().strip():
            return parent  # nothing changed: no empty commit (the Hub skips them too)
        args = ["commit-tree", tree, "-m", message] + (["-p", parent] if parent else [])
        commit = self._git(*args).stdout.decode().strip()
        # Compare-and-swap on the branch head: a concurrent writer makes this fail instead of losing a commit.
        self._git("update-ref", f"refs/heads/{branch}", commit, parent or "0" * 40)
        return commit

    def write_revision(self, branch, parts, card, files, message, max_shard_size):
        parent = self.require(branch)
        with tempfile.TemporaryDirectory(prefix="ecd-round-") as tmp:
            staging = Path(tmp)
            to_commit: dict[str, Path] = {}
            shard_sizes: dict[str, int] = {}
            for name, part in parts.items():
                n = max(1, math.ceil(part.dataset.data.nbytes / max_shard_size)) if len(part.dataset) else 1
                n = min(n, max(1, len(part.dataset)))
                shard_sizes[name] = 0
                for index in range(n):
                    rel = f"{part.data_dir}/train-{index:05d}-of-{n:05d}.parquet"
                    (staging / rel).parent.mkdir(parents=True, exist_ok=True)
                    part.dataset.shard(num_shards=n, index=index, contiguous=True).to_parquet(str(staging / rel))
                    shard_sizes[name] += (staging / rel).stat().st_size
                    to_commit[rel] = staging / rel
            configs, infos = _configs_metadata(parts, shard_sizes)
            final_card = _merge_card(card, None, list(parts))
            final_card.data["configs"] = configs
            final_card.data["dataset_info"] = infos
            blobs = {CARD_FILENAME: str(final_card).encode(), ".gitattributes": _GITATTRIBUTES, **files}
            for rel, data in blobs.items():
                (staging / rel).parent.mkdir(parents=True, exist_ok=True)
                (staging / rel).write_bytes(data)
                to_commit[rel] = staging / rel
            return self._commit(branch, parent, to_commit, keep_parent=False, message=message)

    def write_files(self, branch, files, message):
        parent = self.require(branch)
        with tempfile.TemporaryDirectory(prefix="ecd-files-") as tmp:
            to_commit = {}
            for index, (rel, data) in enumerate(files.items()):
                local = Path(tmp) / f"{index}"
                local.write_bytes(data)
                to_commit[rel] = local
            return self._commit(branch, parent, to_commit, keep_parent=True, message=message)

    def materialise(self, commit: str, cache_dir: str | None) -> Path:
        """Extract ``commit``'s files once into ``<cache>/evolvecoder_rounds/<sha>`` and return that folder."""
        from datasets import config as ds_config

        root = Path(cache_dir or ds_config.HF_DATASETS_CACHE) / "evolvecoder_rounds"
        target = root / commit
        if target.is_dir():
            return target
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{commit[:12]}-", dir=root))
        try:
            archive = self._git("archive", "--format=tar", commit).stdout
            with tarfile.open(fileobj=io.BytesIO(archive), mode="r:") as tar:
                if hasattr(tarfile, "data_filter"):
                    tar.extractall(tmp, filter="data")
                else:  # pragma: no cover - Python < 3.10.12
                    tar.extractall(tmp)
            try:
                os.rename(tmp, target)
            except OSError:
                if not target.is_dir():  # pragma: no cover - a real failure, not a concurrent materialisation
                    raise
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        return target

    def load(self, commit, revision, config, split, cache_dir):
        from datasets import load_dataset

        folder = self.materialise(commit, cache_dir)
        return load_dataset(str(folder), name=config, split=split, cache_dir=cache_dir)


class _HubStore(_Store):
    """A dataset repository on the Hub, written with ``Dataset.push_to_hub`` and ``HfApi``."""

    def __init__(self, repo_id: str, token: str | bool | None) -> None:
        from huggingface_hub import HfApi

        self.repo_id = repo_id
        self.token = token
        self.api = HfApi(token=token)

    def ensure(self, *, private: bool | None) -> None:
        from huggingface_hub.errors import RepositoryNotFoundError

        try:
            self.repo_id = self.api.repo_info(self.repo_id, repo_type="dataset").id
        except RepositoryNotFoundError:
            self.repo_id = self.api.create_repo(self.repo_id, repo_type="dataset", private=private,
                                                exist_ok=True).repo_id

    def resolve(self, revision: str) -> str | None:
        from huggingface_hub.errors import RepositoryNotFoundError
        from huggingface_hub.errors import RevisionNotFoundError as HubRevisionNotFound

        try:
            return self.api.repo_info(self.repo_id, repo_type="dataset", revision=revision).sha
        except HubRevisionNotFound:
            return None
        except RepositoryNotFoundError as err:
            raise RevisionNotFoundError(f"dataset repository {self.repo_id} not found on the Hub") from err

    def _refs(self):
        from huggingface_hub.errors import RepositoryNotFoundError

        try:
            return self.api.list_repo_refs(self.repo_id, repo_type="dataset")
        except RepositoryNotFoundError as err:
            raise RevisionNotFoundError(f"dataset repository {self.repo_id} not found on the Hub") from err

    def branches(self) -> dict[str, str]:
        return {ref.name: ref.target_commit for ref in self._refs().branches}

    def tags(self) -> dict[str, str]:
        return {ref.name: ref.target_commit for ref in self._refs().tags}

    def create_branch(self, branch: str, start: str) -> None:
        self.api.create_branch(self.repo_id, branch=branch, revision=start, repo_type="dataset")

    def delete_branch(self, branch: str) -> None:
        self.api.delete_branch(self.repo_id, branch=branch, repo_type="dataset")

    def is_ancestor(self, ancestor: str, commit: str) -> bool:
        history = self.api.list_repo_commits(self.repo_id, repo_type="dataset", revision=commit)
        return any(c.commit_id == ancestor for c in history)

    def read(self, commit: str, path: str) -> bytes | None:
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import EntryNotFoundError

        try:
            local = hf_hub_download(self.repo_id, path, repo_type="dataset", revision=commit, token=self.token)
        except EntryNotFoundError:
            return None
        return Path(local).read_bytes()

    def list_files(self, commit: str, folder: str) -> list[str]:
        from huggingface_hub.errors import EntryNotFoundError

        try:
            entries = self.api.list_repo_tree(self.repo_id, path_in_repo=folder.rstrip("/"), recursive=True,
                                              revision=commit, repo_type="dataset")
            return sorted(e.path for e in entries if hasattr(e, "size") and not hasattr(e, "tree_id"))
        except EntryNotFoundError:
            return []

    def tag(self, name: str, commit: str, message: str) -> None:
        if name in self.tags():
            self.api.delete_tag(self.repo_id, tag=name, repo_type="dataset")
        self.api.create_tag(self.repo_id, tag=name, revision=commit, tag_message=message, repo_type="dataset")

    def _card_at(self, commit: str) -> DatasetCard | None:
        from huggingface_hub import DatasetCard

        raw = self.read(commit, CARD_FILENAME)
        return DatasetCard(raw.decode()) if raw is not None else None

    def write_revision(self, branch, parts, card, files, message, max_shard_size):
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete

        for name, part in parts.items():
            part.dataset.push_to_hub(self.repo_id, config_name=name, data_dir=part.data_dir, revision=branch,
                                     token=self.token, max_shard_size=max_shard_size,
                                     commit_message=f"{message}: config {name}")
        head = self.require(branch)
        generated = self._card_at(head)
        operations: list = []
        # Configs of an earlier round that this push does not carry (e.g. no solution pool) are removed.
        for entry in (generated.data.get("configs") or []) if generated else []:
            stale = entry.get("config_name", "default")
            if stale in parts:
                continue
            folders = {str(f["path"]).split("/")[0] for f in entry.get("data_files", []) if isinstance(f, dict)}
            for folder in folders:
                operations.extend(CommitOperationDelete(p) for p in self.list_files(head, folder))
        if RECIPE_FILENAME not in files and generated is not None and self.read(head, RECIPE_FILENAME) is not None:
            operations.append(CommitOperationDelete(RECIPE_FILENAME))  # a recipe of an earlier round only
        kept_figures = {p for p in files if p.startswith(FIGURES_DIR + "/")}
        operations.extend(CommitOperationDelete(p) for p in self.list_files(head, FIGURES_DIR) if p not in kept_figures)
        final_card = _merge_card(card, generated, list(parts))
        operations.append(CommitOperationAdd(CARD_FILENAME, str(final_card).encode()))
        operations.extend(CommitOperationAdd(path, data) for path, data in files.items())
        info = self.api.create_commit(self.repo_id, operations=operations, commit_message=message,
                                      repo_type="dataset", revision=branch, parent_commit=head)
        return info.oid

    def write_files(self, branch, files, message):
        from huggingface_hub import CommitOperationAdd

        head = self.require(branch)
        info = self.api.create_commit(self.repo_id, repo_type="dataset", revision=branch, parent_commit=head,
                                      operations=[CommitOperationAdd(p, d) for p, d in files.items()],
                                      commit_message=message)
        return info.oid

    def load(self, commit, revision, config, split, cache_dir):
        from datasets import load_dataset

        return load_dataset(self.repo_id, name=config, revision=revision, split=split, token=self.token,
                            cache_dir=cache_dir)


# ---------------------------------------------------------------------------- helpers shared by the pushes
def _config_bytes(config: Any) -> bytes | None:
    import yaml

    if config is None:
        return None
    if isinstance(config, (str, os.PathLike)) and Path(config).is_file():
        return Path(config).read_bytes()
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        data = dataclasses.asdict(config)
    elif hasattr(config, "to_dict"):
        data = config.to_dict()
    elif isinstance(config, Mapping):
        data = dict(config)
    else:
        raise ConfigError(f"config must be a dataclass, a mapping, an object with to_dict() or a YAML file path; "
                          f"got {type(config).__name__}")
    return yaml.safe_dump(json.loads(json.dumps(data, default=str)), sort_keys=False).encode()


def _check_dropped(dropped: Dataset | None, stage: str) -> None:
    if dropped is not None:
        schema.check_columns(dropped.column_names, schema.DROPPED_COLUMNS, stage=f"{stage} (dropped)")


def _figure_files(figures: Sequence[str | os.PathLike]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for fig in figures:
        path = Path(fig)
        if not path.is_file():
            raise ConfigError(f"figure {str(path)!r} does not exist")
        out[f"{FIGURES_DIR}/{path.name}"] = path.read_bytes()
    return out


def _plain(value: Any) -> Any:
    """``value`` as JSON-ready Python: numpy scalars and arrays become numbers and lists, keys strings, tuples lists.

    ``json.dumps(default=str)`` alone would store a numpy integer as the *string* ``"3"``, which the next round
    then reads back as text (its card and deltas break); a float stays a float, NaN included.
    """
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, str | bool | int | float) or value is None:
        return value
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy scalars and arrays
        return _plain(value.tolist())
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


def _version_tag_of(store: _Store, stem: str, commit: str) -> str | None:
    """The ``{stem}-v{n}`` tag already on ``commit`` (the highest n), if any."""
    pattern = re.compile(rf"^{re.escape(stem)}-v(\d+)$")
    on_commit = [(int(m.group(1)), name) for name, sha in store.tags().items()
                 if sha == commit and (m := pattern.match(name))]
    return max(on_commit)[1] if on_commit else None


def _next_tag(store: _Store, stem: str) -> str:
    pattern = re.compile(rf"^{re.escape(stem)}-v(\d+)$")
    versions = [int(m.group(1)) for name in store.tags() if (m := pattern.match(name))]
    return f"{stem}-v{max(versions, default=0) + 1}"


def _as_card(card: Any) -> DatasetCard:
    from huggingface_hub import DatasetCard

    if isinstance(card, DatasetCard):
        return card
    if isinstance(card, str):
        return DatasetCard(card)
    raise ConfigError(f"card must be a DatasetCard or the README text, got {type(card).__name__}")


def _publish(
    store: _Store,
    branch: str,
    parts: dict[str, _Part],
    *,
    stats: dict[str, Any],
    previous: dict[str, Any] | None,
    card: Any,
    config: Any,
    figures: Sequence[str | os.PathLike],
    final: bool,
    tag: bool | str,
    tag_stem: str,
    message: str,
    max_shard_size: int | str,
) -> RoundCommit:
    from datasets.utils.py_utils import convert_file_size_to_int

    from .cards import headline, render_round_card

    figure_files = _figure_files(figures)
    stats = _plain(stats)
    if card is None:
        card = render_round_card(stats, previous=previous, figures=list(figure_files), repo_id=store.repo_id,
                                 final=final)
    files = {STATS_FILENAME: json.dumps(stats, indent=2, sort_keys=True, default=str).encode(), **figure_files}
    recipe = _config_bytes(config)
    if recipe is not None:
        files[RECIPE_FILENAME] = recipe
    commit = store.write_revision(branch, parts, _as_card(card), files, message,
                                  convert_file_size_to_int(max_shard_size))
    tag_name = None
    if tag:
        # Re-pushing identical content yields the same commit; it keeps its version tag instead of gaining
        # a second one, so round{r}-v{n} counts distinct versions and a retried push is idempotent.
        reused = None if isinstance(tag, str) else _version_tag_of(store, tag_stem, commit)
        tag_name = tag if isinstance(tag, str) else (reused or _next_tag(store, tag_stem))
        if reused is None:
            head = headline(stats)
            store.tag(tag_name, commit, f"{message}: {head['problems']} problems, {head['tests']} tests")
    return RoundCommit(repo_id=store.repo_id, revision=branch, commit=commit, tag=tag_name)


def _transport_errors() -> tuple[type[BaseException], ...]:
    """The exception classes a Hub call raises when the Hub is unreachable or refuses the request."""
    found: list[type[BaseException]] = []
    for module, name in (("huggingface_hub.errors", "HfHubHTTPError"), ("huggingface_hub.errors",
                         "OfflineModeIsEnabled"), ("httpx2", "HTTPError"), ("httpx", "HTTPError"),
                         ("requests", "RequestException")):
        try:
            found.append(getattr(__import__(module, fromlist=[name]), name))
        except (ImportError, AttributeError):
            continue
    return tuple(found)


def _typed_hub_errors(fn):
    """Turn what ``huggingface_hub``/``httpx`` raise into this library's typed errors, naming the repository.

    An invalid repository id (e.g. ``"@1"`` or a typo in a local path that then reads as a Hub id) becomes a
    :class:`ConfigError`; an unreachable Hub, offline mode or a refused request (401, 403, 5xx) a
    :class:`RoundStoreError`, so the CLI prints one ``error:`` line instead of a traceback.
    """
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except EvolveCoderError:
            raise
        except Exception as err:
            from huggingface_hub.errors import HFValidationError

            repo = signature.bind_partial(*args, **kwargs).arguments.get("repo_id")
            detail = " ".join(str(err).split()) or type(err).__name__
            if isinstance(err, HFValidationError):
                raise ConfigError(f"{repo!r} is neither a Hub dataset repository id nor a local store path "
                                  f"(use ./name for a folder): {detail}") from err
            if isinstance(err, _transport_errors()):
                raise RoundStoreError(f"the Hub request for {repo!r} failed ({type(err).__name__}): {detail}") from err
            raise

    return wrapper


# ---------------------------------------------------------------------------- public API
@_typed_hub_errors
def push_round(
    ds: Dataset,
    repo_id: str | os.PathLike,
    round: int,
    *,
    solutions: Dataset | None = None,
    dropped: Dataset | None = None,
    stats: Mapping[str, Any] | None = None,
    card: DatasetCard | str | None = None,
    config: Any = None,
    figures: Sequence[str | os.PathLike] = (),
    tag: bool | str = True,
    token: str | bool | None = None,
    private: bool | None = None,
    commit_message: str | None = None,
    max_shard_size: int | str = "500MB",
) -> RoundCommit:
    """Publish round ``round`` as branch ``round{round}``, created from the previous round's commit.

    Round 0 branches from ``main``; round ``r > 0`` needs ``round{r-1}`` to exist. Re-pushing a round commits on
    top of its branch; if that branch no longer descends from the previous round (the previous round was
    re-pushed), it is recreated from the previous round's head (the earlier pushes stay reachable by their tags).

    Args:
        ds (`datasets.Dataset`): problem rows (at least ``id``, ``question``, ``tests``), pushed as the default config.
        repo_id (`str` or `os.PathLike`): a Hub dataset repository (``"org/name"``) or a local store folder.
        round (`int`): the round number (0 = after refinement).
        solutions (`datasets.Dataset`, *optional*): solution-pool rows (``id``, ``solutions``, ``pass_matrix``,
            ...), pushed as config ``solutions``.
        dropped (`datasets.Dataset`, *optional*): the problems removed so far (``id``, ``stage``, ``reason``),
            pushed as config ``dropped``.
        stats (`Mapping[str, Any]`, *optional*): the round's statistics (keys of
            :data:`evolvecoder_datasets.cards.STATS_KEYS`), committed as ``stats.json`` and rendered in the card.
        card (`huggingface_hub.DatasetCard` or `str`, *optional*): the card; rendered from ``stats`` (with the
            previous round's ``stats.json`` for the deltas) when omitted.
        config (*optional*): the recipe configuration (dataclass, mapping, ``to_dict()`` object or YAML file),
            committed as ``recipe.yaml``.
        figures (`Sequence[str | os.PathLike]`, *optional*): image files (e.g. from ``metrics.py``), committed
            under ``figures/`` and shown in the card.
        tag (`bool` or `str`, *optional*, defaults to `True`): tag the commit ``round{r}-v{n}`` (next free n), a
            given name, or not at all.
        token (`str` or `bool`, *optional*): Hub token (Hub repositories only).
        private (`bool`, *optional*): visibility when the Hub repository is created.
        commit_message (`str`, *optional*): defaults to ``"Round {r}"``.
        max_shard_size (`int` or `str`, *optional*, defaults to `"500MB"`): parquet shard size.

    Returns:
        `RoundCommit`: the branch, its new head and the tag.

    Raises:
        ConfigError: bad ``round``, ``card``, ``config`` or a missing figure file.
        SchemaError: ``ds`` lacks a published column.
        RevisionNotFoundError: ``round{r-1}`` does not exist.
        RoundStoreError: the local store cannot be written (no ``git``, a folder that is not a store).

    Example:
        >>> from datasets import Dataset
        >>> from evolvecoder_datasets.rounds import push_round
        >>> rows = Dataset.from_dict({"id": ["TACO_1"], "question": ["def f(x): ..."], "tests": [["assert f(1)"]]})
        >>> push_round(rows, "./my-run", round=0, stats={"num_problems": 1}).revision   # doctest: +SKIP
        'round0'
    """
    branch = round_branch(round)
    schema.check_columns(ds.column_names, schema.PUBLISHED_COLUMNS, stage="push_round")
    if solutions is not None:
        schema.check_columns(solutions.column_names, [schema.ID], stage="push_round (solutions)")
    _check_dropped(dropped, "push_round")
    store = _open_store(repo_id, token=token)
    store.ensure(private=private)
    base_revision = "main" if round == 0 else round_branch(round - 1)
    base = store.require(base_revision)
    previous = store.read_json(base, STATS_FILENAME) if round > 0 else None
    head = store.resolve(branch)
    if head is not None and not store.is_ancestor(base, head):
        logger.warning("%s does not descend from %s's head any more; recreating it from there", branch,
                       base_revision)
        store.delete_branch(branch)
        head = None
    if head is None:
        store.create_branch(branch, base)
    parts = {"default": _Part(ds, "data")}
    if solutions is not None:
        parts[SOLUTIONS_CONFIG] = _Part(solutions, SOLUTIONS_CONFIG)
    if dropped is not None:
        parts[DROPPED_CONFIG] = _Part(dropped, DROPPED_CONFIG)
    full_stats = {**dict(stats or {}), "round": round}
    return _publish(store, branch, parts, stats=full_stats, previous=previous, card=card, config=config,
                    figures=figures, final=False, tag=tag, tag_stem=branch,
                    message=commit_message or f"Round {round}", max_shard_size=max_shard_size)


@_typed_hub_errors
def push_final(
    ds: Dataset,
    repo_id: str | os.PathLike,
    *,
    round: int,
    keep_source: bool = False,
    dropped: Dataset | None = None,
    stats: Mapping[str, Any] | None = None,
    card: DatasetCard | str | None = None,
    config: Any = None,
    figures: Sequence[str | os.PathLike] = (),
    tag: bool | str = True,
    token: str | bool | None = None,
    private: bool | None = None,
    commit_message: str | None = None,
    max_shard_size: int | str = "500MB",
) -> RoundCommit:
    """Publish the final round on ``main`` with exactly the published columns ``id``, ``question``, ``tests``.

    Args:
        ds (`datasets.Dataset`): the final problem rows; other columns are dropped.
        repo_id (`str` or `os.PathLike`): a Hub dataset repository or a local store folder.
        round (`int`): the round these rows come from (recorded in ``stats.json`` as ``final_round``).
        keep_source (`bool`, *optional*, defaults to `False`): also keep the ``source`` column.
        dropped (`datasets.Dataset`, *optional*): every problem the run removed (``id``, ``stage``, ``reason``),
            pushed as config ``dropped``.
        stats (`Mapping[str, Any]`, *optional*): statistics for the card; defaults to ``round{round}``'s
            ``stats.json`` when that branch exists.
        card (`huggingface_hub.DatasetCard` or `str`, *optional*): the card; rendered when omitted.
        config (*optional*): the recipe configuration, committed as ``recipe.yaml``.
        figures (`Sequence[str | os.PathLike]`, *optional*): image files shown in the card.
        tag (`bool` or `str`, *optional*, defaults to `True`): tag the commit ``final-v{n}``, a given name, or not.
        token (`str` or `bool`, *optional*): Hub token.
        private (`bool`, *optional*): visibility when the Hub repository is created.
        commit_message (`str`, *optional*): defaults to ``"Final dataset (round {r})"``.
        max_shard_size (`int` or `str`, *optional*, defaults to `"500MB"`): parquet shard size.

    Returns:
        `RoundCommit`: ``main``, its new head and the tag.

    Raises:
        ConfigError: bad ``round``, ``card``, ``config`` or figure.
        SchemaError: ``ds`` lacks a published column (or ``source`` with ``keep_source=True``).
        RoundStoreError: the local store cannot be written.

    Example:
        >>> from evolvecoder_datasets.rounds import push_final, load_round
        >>> push_final(final_rows, "./my-run", round=3)                # doctest: +SKIP
        >>> load_round("./my-run").column_names                        # doctest: +SKIP
        ['id', 'question', 'tests']
    """
    round_branch(round)
    columns = list(schema.PUBLISHED_COLUMNS) + ([schema.SOURCE] if keep_source else [])
    schema.check_columns(ds.column_names, columns, stage="push_final")
    _check_dropped(dropped, "push_final")
    store = _open_store(repo_id, token=token)
    store.ensure(private=private)
    if stats is None:
        source_round = store.resolve(round_branch(round))
        stats = store.read_json(source_round, STATS_FILENAME) if source_round else {}
    published = ds.select_columns(columns)
    full_stats = {**dict(stats), "round": round, "final_round": round, "num_problems": len(published)}
    parts = {"default": _Part(published, "data")}
    if dropped is not None:
        parts[DROPPED_CONFIG] = _Part(dropped.select_columns(list(schema.DROPPED_COLUMNS)), DROPPED_CONFIG)
    return _publish(store, "main", parts, stats=full_stats, previous=None,
                    card=card, config=config, figures=figures, final=True, tag=tag, tag_stem="final",
                    message=commit_message or f"Final dataset (round {round})", max_shard_size=max_shard_size)


@_typed_hub_errors
def load_round(
    repo_id: str | os.PathLike,
    round: int | str | None = None,
    config: str = "default",
    *,
    split: str = "train",
    token: str | bool | None = None,
    cache_dir: str | None = None,
) -> Dataset:
    """Load one config of a round revision (``round=None`` loads ``main``).

    On the Hub this is ``load_dataset(repo_id, config, revision=f"round{r}")``. For a local store the commit is
    materialised once into ``<cache_dir or HF_DATASETS_CACHE>/evolvecoder_rounds/<sha>`` and loaded from there;
    loading it again is a ``datasets`` cache hit.

    Args:
        repo_id (`str` or `os.PathLike`): a Hub dataset repository or a local store folder.
        round (`int` or `str`, *optional*): a round number, ``"round{r}"``, ``"main"``, a tag or a commit sha.
        config (`str`, *optional*, defaults to `"default"`): ``"default"`` (problems) or ``"solutions"``.
        split (`str`, *optional*, defaults to `"train"`): the split.
        token (`str` or `bool`, *optional*): Hub token.
        cache_dir (`str`, *optional*): the ``datasets`` cache folder.

    Returns:
        `datasets.Dataset`

    Raises:
        RevisionNotFoundError: no such revision (or no such repository or store).
        ConfigError: the revision has no config ``config``.

    Example:
        >>> from evolvecoder_datasets.rounds import load_round
        >>> pool = load_round("org/evolve-run", round=2, config="solutions")   # doctest: +SKIP
    """
    revision = normalize_revision(round)
    store = _open_store(repo_id, token=token)
    commit = store.require(revision)
    raw_card = store.read(commit, CARD_FILENAME)
    if raw_card is not None:
        from huggingface_hub import DatasetCard

        card_data = DatasetCard(raw_card.decode()).data
        names = [c.get("config_name", "default") for c in card_data.get("configs") or []]
        if names and config not in names:
            raise ConfigError(f"{revision} of {store.repo_id} has no config {config!r} (configs: {names})")
        empty = _empty_split(card_data.get("dataset_info"), config, split)
        if empty is not None:
            return empty
    return store.load(commit, revision, config, split, cache_dir)


def _empty_split(dataset_info: Any, config: str, split: str) -> Dataset | None:
    """A 0-row split recorded in the card's ``dataset_info``, as an empty Dataset with its features.

    ``load_dataset`` refuses a split whose only file has no rows ("corresponds to no data"), so a round whose
    filters dropped every problem could be pushed but not loaded back.
    """
    from datasets import Dataset, DatasetInfo

    entries = dataset_info if isinstance(dataset_info, list) else [dataset_info] if dataset_info else []
    for entry in entries:
        if not isinstance(entry, Mapping) or entry.get("config_name", "default") != config:
            continue
        splits = {s.get("name"): s for s in entry.get("splits") or [] if isinstance(s, Mapping)}
        if split not in splits or splits[split].get("num_examples") != 0 or not entry.get("features"):
            return None
        info = DatasetInfo._from_yaml_dict({k: v for k, v in entry.items() if k != "config_name"})
        return Dataset.from_dict({name: [] for name in info.features}, features=info.features)
    return None


@_typed_hub_errors
def load_round_stats(repo_id: str | os.PathLike, round: int | str | None = None, *,
                     token: str | bool | None = None) -> dict[str, Any]:
    """The ``stats.json`` of a revision (an empty dict when the revision has none).

    Args:
        repo_id (`str` or `os.PathLike`): a Hub dataset repository or a local store folder.
        round (`int` or `str`, *optional*): a round number, ``"round{r}"``, ``"main"`` (default), a tag or a sha.
        token (`str` or `bool`, *optional*): Hub token.

    Raises:
        RevisionNotFoundError: no such revision.

    Example:
        >>> from evolvecoder_datasets.rounds import load_round_stats
        >>> load_round_stats("./my-run", 1)["round"]     # doctest: +SKIP
        1
    """
    store = _open_store(repo_id, token=token)
    return store.read_json(store.require(normalize_revision(round)), STATS_FILENAME)


@_typed_hub_errors
def list_rounds(repo_id: str | os.PathLike, *, token: str | bool | None = None) -> list[RoundInfo]:
    """The round branches (in round order) and ``main``, with their heads, tags and statistics.

    Args:
        repo_id (`str` or `os.PathLike`): a Hub dataset repository or a local store folder.
        token (`str` or `bool`, *optional*): Hub token.

    Raises:
        RevisionNotFoundError: no such repository or store.

    Example:
        >>> from evolvecoder_datasets.rounds import list_rounds
        >>> [(i.revision, i.stats.get("num_problems")) for i in list_rounds("./my-run")]   # doctest: +SKIP
        [('round0', 120), ('round1', 112), ('main', 104)]
    """
    store = _open_store(repo_id, token=token)
    branches = store.branches()
    tags_by_commit: dict[str, list[str]] = {}
    for name, commit in store.tags().items():
        tags_by_commit.setdefault(commit, []).append(name)
    names = sorted((b for b in branches if _round_of(b) is not None), key=_round_of)
    if "main" in branches:
        names.append("main")
    return [
        RoundInfo(revision=name, round=_round_of(name), commit=branches[name],
                  tags=sorted(tags_by_commit.get(branches[name], [])),
                  stats=store.read_json(branches[name], STATS_FILENAME))
        for name in names
    ]


@_typed_hub_errors
def rerender_card(
    repo_id: str | os.PathLike,
    revision: str | int | None = None,
    *,
    template: str | os.PathLike = "round",
    push: bool = False,
    token: str | bool | None = None,
) -> DatasetCard:
    """Render a revision's card again from its ``stats.json`` and figures (e.g. after a template change).

    The ``configs`` and ``dataset_info`` metadata of the committed card are kept.

    Args:
        repo_id (`str` or `os.PathLike`): a Hub dataset repository or a local store folder.
        revision (`str` or `int`, *optional*): a round number, ``"round{r}"`` or ``"main"`` (default).
        template (`str` or `os.PathLike`, *optional*, defaults to `"round"`): template stem or path.
        push (`bool`, *optional*, defaults to `False`): commit the new ``README.md`` to the branch.
        token (`str` or `bool`, *optional*): Hub token.

    Returns:
        `huggingface_hub.DatasetCard`

    Raises:
        RevisionNotFoundError: no such revision.
        ConfigError: ``push=True`` on a revision that is not a branch or on ``main`` before
            :func:`push_final`, or an unknown template.

    Example:
        >>> from evolvecoder_datasets.rounds import rerender_card
        >>> print(rerender_card("./my-run", 1).content[:40])   # doctest: +SKIP
    """
    from huggingface_hub import DatasetCard

    from .cards import render_round_card

    name = normalize_revision(revision)
    store = _open_store(repo_id, token=token)
    commit = store.require(name)
    stats = store.read_json(commit, STATS_FILENAME)
    number = _round_of(name)
    previous = None
    if number:
        prev_commit = store.resolve(round_branch(number - 1))
        previous = store.read_json(prev_commit, STATS_FILENAME) if prev_commit else None
    final = "final_round" in stats  # main holds round branches' data until push_final has run
    if push and name == "main" and not final:
        raise ConfigError(f"{store.repo_id}@main holds no published dataset yet (push_final has not run): pushing a "
                          "card there would describe a round as the final dataset; re-render a round branch")
    card = render_round_card(stats, previous=previous, figures=store.list_files(commit, FIGURES_DIR),
                             repo_id=store.repo_id, final=final, template=template)
    raw = store.read(commit, CARD_FILENAME)
    committed = DatasetCard(raw.decode()) if raw is not None else None
    keep = [c.get("config_name", "default") for c in (committed.data.get("configs") or [])] if committed else []
    card = _merge_card(card, committed, keep)
    if push:
        if name not in store.branches():
            raise ConfigError(f"cannot push a card to {name!r}: it is not a branch of {store.repo_id}")
        store.write_files(name, {CARD_FILENAME: str(card).encode()}, f"Re-render the card of {name}")
    return card


@_typed_hub_errors
def describe_round(repo_id: str | os.PathLike, revision: str | int | None = None, *,
                   dropped: bool = False, token: str | bool | None = None) -> str:
    """A terminal rendering of a revision's statistics, with the deltas from the previous round.

    Args:
        repo_id (`str` or `os.PathLike`): a Hub dataset repository or a local store folder.
        revision (`str` or `int`, *optional*): a round number, ``"round{r}"``, ``"main"`` (default), a tag or a sha.
        dropped (`bool`, *optional*, defaults to `False`): also list every removed problem with its stage and
            reason (the revision's ``dropped`` config).
        token (`str` or `bool`, *optional*): Hub token.

    Raises:
        RevisionNotFoundError: no such revision.

    Example:
        >>> from evolvecoder_datasets.rounds import describe_round
        >>> print(describe_round("./my-run", 1))      # doctest: +SKIP
        round 1: 112 problems, 2,013 tests (17.97 per problem)
    """
    from .cards import stats_summary

    name = normalize_revision(revision)
    store = _open_store(repo_id, token=token)
    commit = store.require(name)
    stats = store.read_json(commit, STATS_FILENAME)
    if not stats:
        return f"{name} of {store.repo_id} ({commit[:10]}) has no {STATS_FILENAME}"
    number = _round_of(name)
    previous = None
    if number:
        prev_commit = store.resolve(round_branch(number - 1))
        previous = store.read_json(prev_commit, STATS_FILENAME) if prev_commit else None
    text = f"{name} of {store.repo_id} ({commit[:10]})\n" + stats_summary(stats, previous=previous)
    if dropped:
        text += "\n\n" + _dropped_table(store, commit, name)
    return text


def _dropped_table(store: _Store, commit: str, revision: str) -> str:
    """The ``dropped`` config of a revision as a terminal table (id, stage, reason)."""
    from huggingface_hub import DatasetCard

    raw = store.read(commit, CARD_FILENAME)
    configs = [c.get("config_name") for c in DatasetCard(raw.decode()).data.get("configs") or []] if raw else []
    if DROPPED_CONFIG not in configs:
        return f"{revision} has no {DROPPED_CONFIG!r} config: it records no removed problem"
    rows = load_round(store.repo_id, commit, DROPPED_CONFIG)
    if not len(rows):
        return "dropped problems: none"
    records = [(str(r[schema.ID]), str(r[schema.STAGE]), str(r[schema.REASON])) for r in rows]
    header = ("id", "stage", "reason")
    widths = [max(len(x[i]) for x in [header, *records]) for i in range(3)]
    lines = [f"dropped problems: {len(records)}"]
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(rec, widths)).rstrip() for rec in [header, *records]]
    return "\n".join(lines)
