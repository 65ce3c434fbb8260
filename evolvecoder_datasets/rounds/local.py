"""The local round store: a bare git repository in a folder with the Hub's layout, one commit per push."""

from __future__ import annotations

import io
import math
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Mapping
from pathlib import Path

from ..errors import RevisionNotFoundError, RoundStoreError
from .names import CARD_FILENAME
from .store import _configs_metadata, _merge_card, _Store

_GITATTRIBUTES = b"*.parquet binary\n*.png binary\n*.jpg binary\n"
_GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "evolvecoder-datasets",
    "GIT_AUTHOR_EMAIL": "evolvecoder-datasets@localhost",
    "GIT_COMMITTER_NAME": "evolvecoder-datasets",
    "GIT_COMMITTER_EMAIL": "evolvecoder-datasets@localhost",
}


# The store folder is what a `datasets` user passes to `load_dataset` first, and `load_dataset` reads a local folder's
# files, never a git revision: this README's configs point at no file, so the error it raises names the call that
# reads the store (instead of "no data files found"); the text says the same to a person listing the folder.
STORE_README = """---
configs:
- config_name: default
  data_files: "THIS-IS-AN-EVOLVECODER-ROUND-STORE--load_dataset-cannot-read-its-revisions--use--evolvecoder_datasets.\
rounds.load_round(store,round=N)--or--load_dataset(evolvecoder_datasets.rounds.round_folder(store,'roundN'))"
---
# An EvolveCoder round store

This folder is a bare git repository: one branch per round (`round0`, `round1`, ...) and `main` for the published
dataset. `datasets.load_dataset` reads a local folder's files, not its git revisions, so load a revision with

```python
from evolvecoder_datasets.rounds import load_round, round_folder
ds = load_round("path/to/store", round=1)        # or round=None for main
from datasets import load_dataset
ds = load_dataset(round_folder("path/to/store", "round1"), split="train")
```

or list them with `evolvecoder-datasets rounds path/to/store`.
"""


class _LocalStore(_Store):
    """A bare git repository in a folder, with the Hub's file layout; one commit per push."""

    local = True

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

    def _write_pointer(self) -> None:
        """The README a `load_dataset(store)` meets (outside git: the repository never holds it)."""
        readme = self.path / CARD_FILENAME
        if not readme.is_file():
            readme.write_text(STORE_README)

    def ensure(self, *, private: bool | None) -> None:
        if self._is_repo():
            self._write_pointer()
            return
        if self.path.exists() and any(self.path.iterdir()):
            raise RoundStoreError(f"{self.path} exists and is not a round store (a bare git repository)")
        self.path.mkdir(parents=True, exist_ok=True)
        self._git("init", "--quiet", "--bare", "--initial-branch=main")
        with tempfile.TemporaryDirectory(prefix="ecd-store-") as tmp:
            (Path(tmp) / ".gitattributes").write_bytes(_GITATTRIBUTES)
            self._commit("main", None, {".gitattributes": Path(tmp) / ".gitattributes"}, keep_parent=False,
                         message="Initialise the round store")
        self._write_pointer()

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


