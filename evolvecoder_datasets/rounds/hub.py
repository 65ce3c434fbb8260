"""The Hub round store (``Dataset.push_to_hub`` and ``HfApi``), and the typed errors of Hub calls."""

from __future__ import annotations

import functools
import inspect
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError, EvolveCoderError, RevisionNotFoundError, RoundStoreError
from .names import CARD_FILENAME, FIGURES_DIR, RECIPE_FILENAME
from .store import _merge_card, _Store

if TYPE_CHECKING:  # pragma: no cover
    from huggingface_hub import DatasetCard


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


