"""Figures of the round tables: PNG files drawn with matplotlib (extra ``viz``, imported only when drawing).

Every ``plot_*`` function takes the rows of its table (:mod:`evolvecoder_datasets.metrics.tables`) and a folder
(created if missing), writes one PNG named after the figure and returns its :class:`pathlib.Path`; each raises
:class:`~evolvecoder_datasets.errors.MissingExtraError` when matplotlib is not installed
(``pip install 'evolvecoder-datasets[viz]'``).

Example:
    >>> from evolvecoder_datasets.metrics.figures import save_figures
    >>> save_figures("figures", difficulty=[{"round": 0, "problems": 3, "pass@1": 0.4}])  # doctest: +SKIP
    {'difficulty': PosixPath('figures/difficulty.png')}
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._deps import require

__all__ = ["plot_difficulty", "plot_fidelity", "plot_methods", "plot_mutation_scores", "plot_per_model", "save_figures"]


def _figure(width: float = 5.0, height: float = 3.2):
    """A matplotlib Figure bound to the Agg canvas; no pyplot, so no global backend state is touched."""
    require("matplotlib", extra="viz", feature="round figures")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=120, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save(fig, folder: str | os.PathLike, name: str) -> Path:
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    target = path / name
    fig.savefig(target, format="png")
    return target


def _label_round_axes(ax, rounds: Sequence[int], ylabel: str) -> None:
    """Finish a per-round line plot: the rounds as x ticks, a rate in [0, 1] on the y axis, the legend."""
    ax.set_xlabel("round")
    ax.set_ylabel(ylabel)
    ax.set_xticks(rounds)
    ax.set_ylim(0, 1)
    ax.legend()


def _k_columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    return [key for key in rows[0] if key.startswith("pass@")] if rows else []


def plot_difficulty(rows: Sequence[Mapping[str, Any]], folder: str | os.PathLike) -> Path:
    """Line plot of pass@k per round from :func:`difficulty_table`, saved as ``difficulty.png``.

    Example:
        >>> from evolvecoder_datasets.metrics import difficulty_table, plot_difficulty
        >>> rows = difficulty_table({0: [[[1], [1]]], 1: [[[1], [0]]]})
        >>> plot_difficulty(rows, "figures")  # doctest: +SKIP
        PosixPath('figures/difficulty.png')
    """
    fig = _figure()
    ax = fig.add_subplot()
    rounds = [r["round"] for r in rows]
    for key in _k_columns(rows):
        ax.plot(rounds, [r[key] for r in rows], marker="o", label=key)
    _label_round_axes(ax, rounds, "pass@k of the solution pool")
    return _save(fig, folder, "difficulty.png")


def plot_methods(rows: Sequence[Mapping[str, Any]], folder: str | os.PathLike) -> Path:
    """Grouped bars of generated and retained tests per round and method (rows of :func:`method_table`), saved as
    ``methods.png``.

    Example:
        >>> from evolvecoder_datasets.metrics import method_table, plot_methods
        >>> rows = method_table([[{"round": 1, "method": "adversarial"}]], [[]])
        >>> plot_methods(rows, "figures")  # doctest: +SKIP
        PosixPath('figures/methods.png')
    """
    fig = _figure(max(5.0, 0.9 * len(rows) + 2))
    ax = fig.add_subplot()
    labels = [f"r{r['round']} {r['method']}" for r in rows]
    x = np.arange(len(rows))
    ax.bar(x - 0.2, [r["generated"] for r in rows], width=0.4, label="generated")
    ax.bar(x + 0.2, [r["retained"] for r in rows], width=0.4, label="retained")
    ax.set_xticks(x, labels, rotation=30, ha="right")
    ax.set_ylabel("tests")
    ax.legend()
    return _save(fig, folder, "methods.png")


def plot_per_model(rows: Sequence[Mapping[str, Any]], folder: str | os.PathLike) -> Path:
    """Grouped bars of pass@k per model (rows of :func:`per_model_table`), saved as ``per_model.png``.

    Example:
        >>> from evolvecoder_datasets.metrics import per_model_table, plot_per_model
        >>> rows = per_model_table([[{"model": "a"}]], [[[1]]])
        >>> plot_per_model(rows, "figures")  # doctest: +SKIP
        PosixPath('figures/per_model.png')
    """
    keys = _k_columns(rows)
    fig = _figure(max(5.0, 0.8 * len(rows) * max(1, len(keys)) / 2 + 2))
    ax = fig.add_subplot()
    x = np.arange(len(rows))
    width = 0.8 / max(1, len(keys))
    for j, key in enumerate(keys):
        ax.bar(x + (j - (len(keys) - 1) / 2) * width, [r[key] for r in rows], width=width, label=key)
    ax.set_xticks(x, [r["model"] for r in rows], rotation=30, ha="right")
    ax.set_ylim(0, 1)
    ax.set_ylabel("pass@k")
    if keys:
        ax.legend()
    return _save(fig, folder, "per_model.png")


def plot_mutation_scores(rows: Sequence[Mapping[str, Any]], folder: str | os.PathLike) -> Path:
    """Line plot of the mutation score per round (rows of :func:`mutation_table`), saved as ``mutation_score.png``.

    Example:
        >>> from evolvecoder_datasets.metrics import mutation_table, plot_mutation_scores
        >>> rows = mutation_table({0: {"killed": 5, "considered": 9}, 1: {"killed": 8, "considered": 9}})
        >>> plot_mutation_scores(rows, "figures")  # doctest: +SKIP
        PosixPath('figures/mutation_score.png')
    """
    fig = _figure()
    ax = fig.add_subplot()
    rounds = [r["round"] for r in rows]
    ax.plot(rounds, [r["score"] for r in rows], marker="o", label="pooled")
    ax.plot(
        rounds, [r["mean_problem_score"] for r in rows], marker="s", linestyle="--", label="mean per problem"
    )
    _label_round_axes(ax, rounds, "mutants killed")
    return _save(fig, folder, "mutation_score.png")


def plot_fidelity(rows: Sequence[Mapping[str, Any]], folder: str | os.PathLike) -> Path:
    """Line plot of the suite's TPR and TNR against the oracle per round (rows of
    :func:`~evolvecoder_datasets.metrics.fidelity.rate_rows`; a ``"final"`` row is drawn after the last round),
    saved as ``fidelity.png``. Undefined rates (no program of that label) are left out, never drawn as 0.

    Example:
        >>> from evolvecoder_datasets.metrics.fidelity import Confusion, rate_rows
        >>> rows = rate_rows({"0": Confusion(tp=5, tn=8, fp=2).as_dict(), "1": Confusion(tp=5, tn=10).as_dict()})
        >>> plot_fidelity(rows, "figures")  # doctest: +SKIP
        PosixPath('figures/fidelity.png')
    """
    fig = _figure()
    ax = fig.add_subplot()
    x = list(range(len(rows)))
    labels = [str(r["round"]) for r in rows]
    for key, marker, name in (("tpr", "o", "TPR: right programs accepted"), ("tnr", "s", "TNR: wrong programs rejected")):
        points = [(i, r[key]) for i, r in zip(x, rows) if r.get(key) is not None]
        if points:
            ax.plot([p[0] for p in points], [p[1] for p in points], marker=marker, label=name)
    ax.set_xticks(x, labels)
    ax.set_xlabel("round")
    ax.set_ylabel("share of the labelled pool")
    ax.set_ylim(0, 1.05)
    ax.legend(loc="lower right")
    return _save(fig, folder, "fidelity.png")


def save_figures(
    folder: str | os.PathLike,
    *,
    difficulty: Sequence[Mapping[str, Any]] | None = None,
    methods: Sequence[Mapping[str, Any]] | None = None,
    per_model: Sequence[Mapping[str, Any]] | None = None,
    mutation: Sequence[Mapping[str, Any]] | None = None,
    fidelity: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Path]:
    """Draw every figure whose table is given (and not empty) into ``folder``.

    Args:
        folder (`str` or `os.PathLike`): where to write the PNGs (created if missing).
        difficulty (`Sequence[dict]`, *optional*): rows of :func:`difficulty_table`.
        methods (`Sequence[dict]`, *optional*): rows of :func:`method_table`.
        per_model (`Sequence[dict]`, *optional*): rows of :func:`per_model_table`.
        mutation (`Sequence[dict]`, *optional*): rows of :func:`mutation_table`.
        fidelity (`Sequence[dict]`, *optional*): rows of :func:`~evolvecoder_datasets.metrics.fidelity.rate_rows`.

    Returns:
        `dict[str, pathlib.Path]`: figure name (``"difficulty"``, ``"methods"``, ``"per_model"``,
        ``"mutation_score"``, ``"fidelity"``) -> PNG path, for the card template.

    Raises:
        MissingExtraError: matplotlib is not installed.

    Example:
        >>> from evolvecoder_datasets.metrics import difficulty_table, save_figures
        >>> figures = save_figures("card/figures", difficulty=difficulty_table({0: [[[1]]]}))  # doctest: +SKIP
        >>> sorted(figures)  # doctest: +SKIP
        ['difficulty']
    """
    drawn: dict[str, Path] = {}
    for name, rows, plot in (
        ("difficulty", difficulty, plot_difficulty),
        ("methods", methods, plot_methods),
        ("per_model", per_model, plot_per_model),
        ("mutation_score", mutation, plot_mutation_scores),
        ("fidelity", fidelity, plot_fidelity),
    ):
        if rows:
            drawn[name] = plot(rows, folder)
    return drawn
