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
  round. ``load_dataset(folder, revision=...)`` ignores ``revision`` for local paths (and finds no data files in
  a bare repository), so :func:`load_round` materialises the commit (``git archive``) into a cache folder keyed by
  its sha and loads that, a second load being a ``datasets`` cache hit; :func:`round_folder` returns that folder
  for any tool that reads a dataset folder (``load_dataset(round_folder(store, 2))``).

One concern per module: :mod:`~.names` (branches, revisions, file names), :mod:`~.store` (the protocol both stores
follow), :mod:`~.local` (the git-backed folder), :mod:`~.hub` (the Hub repository), :mod:`~.publish`
(:func:`push_round`, :func:`push_final`) and :mod:`~.load` (loading, listing, cards, summaries).

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

from .load import describe_round, list_rounds, load_round, load_round_stats, rerender_card, round_folder
from .names import RoundCommit, is_local_store, normalize_revision, split_repo_revision
from .publish import push_final, push_round

__all__ = [
    "RoundCommit",
    "describe_round",
    "is_local_store",
    "list_rounds",
    "load_round",
    "load_round_stats",
    "normalize_revision",
    "push_final",
    "push_round",
    "rerender_card",
    "round_folder",
    "split_repo_revision",
]
