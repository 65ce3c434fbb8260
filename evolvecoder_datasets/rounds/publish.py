"""Publishing: a round as branch ``round{r}`` (:func:`push_round`), the final dataset on ``main`` (:func:`push_final`)."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import schema
from ..cards import headline, render_round_card
from ..errors import ConfigError
from .hub import _typed_hub_errors
from .names import (
    DROPPED_CONFIG,
    FIGURES_DIR,
    RECIPE_FILENAME,
    SOLUTIONS_CONFIG,
    STATS_FILENAME,
    RoundCommit,
    round_branch,
)
from .open_store import _open_store
from .store import _Part, _Store

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset
    from huggingface_hub import DatasetCard

logger = logging.getLogger(__name__)

__all__ = ['push_final', 'push_round']


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


    figure_files = _figure_files(figures)
    stats = _plain(stats)
    if card is None:
        card = render_round_card(stats, previous=previous, figures=list(figure_files), repo_id=store.repo_id,
                                 local_store=store.local, final=final, dataset=parts["default"].dataset)
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
    if dropped is not None and len(dropped):  # no empty config: `datasets` cannot load a split of 0 rows
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
    """Publish the final round on ``main`` with exactly the published columns ``id``, ``question``, ``tests``, the
    calibrated ``time_limit_s`` where the rows have one (the limit their tests were verified under, which the
    rewards read), and, where the rows are stdin/stdout problems,
    :data:`~evolvecoder_datasets.schema.STDIO_PUBLISHED_COLUMNS`.

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
    if schema.INPUTS in ds.column_names and any(ds[schema.INPUTS]):  # stdin problems: what judges them, too
        columns += [c for c in schema.STDIO_PUBLISHED_COLUMNS if c in ds.column_names]
    elif schema.TIME_LIMIT in ds.column_names and any(v is not None for v in ds[schema.TIME_LIMIT]):
        columns.append(schema.TIME_LIMIT)  # a trainer on main judges under the limit the rounds verified with
    _check_dropped(dropped, "push_final")
    store = _open_store(repo_id, token=token)
    store.ensure(private=private)
    if stats is None:
        source_round = store.resolve(round_branch(round))
        stats = store.read_json(source_round, STATS_FILENAME) if source_round else {}
    published = ds.select_columns(columns)
    full_stats = {**dict(stats), "round": round, "final_round": round, "num_problems": len(published)}
    parts = {"default": _Part(published, "data")}
    if dropped is not None and len(dropped):  # no empty config: `datasets` cannot load a split of 0 rows
        parts[DROPPED_CONFIG] = _Part(dropped.select_columns(list(schema.DROPPED_COLUMNS)), DROPPED_CONFIG)
    return _publish(store, "main", parts, stats=full_stats, previous=None,
                    card=card, config=config, figures=figures, final=True, tag=tag, tag_stem="final",
                    message=commit_message or f"Final dataset (round {round})", max_shard_size=max_shard_size)


