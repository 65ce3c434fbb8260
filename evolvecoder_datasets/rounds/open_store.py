"""Pick the store a repository id names: a local folder or a Hub dataset repository."""

from __future__ import annotations

import os
from pathlib import Path

from .hub import _HubStore
from .local import _LocalStore
from .names import is_local_store
from .store import _Store


def _open_store(repo_id: str | os.PathLike, token: str | bool | None = None) -> _Store:
    """The store ``repo_id`` names (see :func:`~evolvecoder_datasets.rounds.names.is_local_store`)."""
    if is_local_store(repo_id):
        text = str(repo_id)
        return _LocalStore(Path(text.removeprefix("file://")).expanduser())
    return _HubStore(str(repo_id), token=token)


