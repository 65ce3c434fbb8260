"""Reading a store: rows of a revision, its statistics, the list of revisions, cards and terminal summaries."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import schema
from .._deps import datasets_bars_off
from ..cards import render_round_card, stats_summary
from ..errors import ConfigError
from .hub import _typed_hub_errors
from .names import (
    CARD_FILENAME,
    DROPPED_CONFIG,
    FIGURES_DIR,
    STATS_FILENAME,
    RoundInfo,
    _round_of,
    normalize_revision,
    round_branch,
)
from .open_store import _open_store
from .store import _merge_card, _Store

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset
    from huggingface_hub import DatasetCard

__all__ = ['describe_round', 'list_rounds', 'load_round', 'load_round_stats', 'rerender_card', 'round_folder']


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
        ConfigError: the revision has no config ``config`` (a revision without ``dropped`` removed no problem: its
            ``dropped`` loads as 0 rows).

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
        if names and config == DROPPED_CONFIG and config not in names:
            return _no_drops()  # a run that removed no problem publishes no (empty) dropped config
        if names and config not in names:
            raise ConfigError(f"{revision} of {store.repo_id} has no config {config!r} (configs: {names})")
        empty = _empty_split(card_data.get("dataset_info"), config, split)
        if empty is not None:
            return empty
    return store.load(commit, revision, config, split, cache_dir)


@_typed_hub_errors
def round_folder(repo_id: str | os.PathLike, round: int | str | None = None, *, token: str | bool | None = None,
                 cache_dir: str | None = None) -> str:
    """A folder holding exactly the files of one revision, for tools that read a dataset folder.

    ``datasets.load_dataset(store, revision="round2")`` cannot read a local store: the store is a bare git
    repository, ``load_dataset`` ignores ``revision`` for local paths, and it finds no data files there (it raises
    ``DataFilesNotFoundError``, never rows of another revision). ``load_dataset(round_folder(store, 2))`` is the
    path form that works: the commit is materialised once into
    ``<cache_dir or HF_DATASETS_CACHE>/evolvecoder_rounds/<sha>`` (the folder :func:`load_round` reads), so the
    round's configs (``default``, ``solutions``, ``dropped``) and its card, ``stats.json`` and figures are all
    there. For a Hub repository the folder is a ``snapshot_download`` of the revision.

    Args:
        repo_id (`str` or `os.PathLike`): a local store folder or a Hub dataset repository.
        round (`int` or `str`, *optional*): a round number, ``"round{r}"``, ``"main"`` (default), a tag or a sha.
        token (`str` or `bool`, *optional*): Hub token.
        cache_dir (`str`, *optional*): where local revisions are materialised (the ``datasets`` cache by default).

    Returns:
        `str`: the folder.

    Raises:
        RevisionNotFoundError: no such revision, repository or store.

    Example:
        >>> from datasets import load_dataset
        >>> from evolvecoder_datasets.rounds import round_folder
        >>> rows = load_dataset(round_folder("./my-run/store", 2), split="train")              # doctest: +SKIP
        >>> pool = load_dataset(round_folder("./my-run/store", 2), "solutions", split="train")  # doctest: +SKIP
    """
    revision = normalize_revision(round)
    store = _open_store(repo_id, token=token)
    commit = store.require(revision)
    if store.local:
        return str(store.materialise(commit, cache_dir))  # type: ignore[attr-defined]
    from huggingface_hub import snapshot_download

    return snapshot_download(str(repo_id), repo_type="dataset", revision=commit, token=token, cache_dir=cache_dir)


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
    # the fields and the example row the card shows (main before push_final holds no rows of its own)
    rows = None
    if final or name != "main":
        with datasets_bars_off():  # a re-rendered card prints nothing of the rows it reads
            rows = load_round(repo_id, name, token=token)
    card = render_round_card(stats, previous=previous, figures=store.list_files(commit, FIGURES_DIR),
                             repo_id=store.repo_id, local_store=store.local, final=final, template=template,
                             dataset=rows)
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


def _no_drops() -> Dataset:
    """The ``dropped`` config of a revision that removed no problem: no rows, its three string columns."""
    from datasets import Dataset, Features, Value

    return Dataset.from_dict({c: [] for c in schema.DROPPED_COLUMNS},
                             features=Features({c: Value("string") for c in schema.DROPPED_COLUMNS}))


def _dropped_table(store: _Store, commit: str, revision: str) -> str:
    """The ``dropped`` config of a revision as a terminal table (id, stage, reason)."""
    from huggingface_hub import DatasetCard

    raw = store.read(commit, CARD_FILENAME)
    configs = [c.get("config_name") for c in DatasetCard(raw.decode()).data.get("configs") or []] if raw else []
    if DROPPED_CONFIG not in configs:
        return "dropped problems: none"
    rows = load_round(store.repo_id, commit, DROPPED_CONFIG)
    if not len(rows):
        return "dropped problems: none"
    records = [(str(r[schema.ID]), str(r[schema.STAGE]), str(r[schema.REASON])) for r in rows]
    header = schema.DROPPED_COLUMNS
    widths = [max(len(x[i]) for x in [header, *records]) for i in range(3)]
    lines = [f"dropped problems: {len(records)}"]
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(rec, widths)).rstrip() for rec in [header, *records]]
    return "\n".join(lines)
