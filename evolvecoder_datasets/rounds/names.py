"""Names of a round store: branches, revisions, file names, and what a push or a listing reports.

Example:
    >>> from evolvecoder_datasets.rounds.names import round_branch, normalize_revision
    >>> round_branch(2), normalize_revision(3)
    ('round2', 'round3')
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError

__all__ = ['RoundCommit', 'RoundInfo', 'is_local_store', 'normalize_revision', 'round_branch', 'split_repo_revision']


STATS_FILENAME = "stats.json"
RECIPE_FILENAME = "recipe.yaml"
CARD_FILENAME = "README.md"
FIGURES_DIR = "figures"
SOLUTIONS_CONFIG = "solutions"
DROPPED_CONFIG = "dropped"
_ROUND_RE = re.compile(r"^round(\d+)$")


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


