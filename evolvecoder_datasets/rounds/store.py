"""The store protocol both round stores follow (a local git folder, a Hub repository), and what they share."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import RevisionNotFoundError
from .names import _round_of

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset
    from huggingface_hub import DatasetCard


@dataclass
class _Part:
    """One config of a revision: the rows and the folder their shards go to."""

    dataset: Dataset
    data_dir: str


class _Store:
    """What both stores do; :func:`_open_store` picks one."""

    repo_id: str
    local: bool = False  # a folder (the card's loading snippet then uses load_round)

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


