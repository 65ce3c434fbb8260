"""pass@k, per-round difficulty, per-model tables and their figures.

Tables are plain lists of dicts (``str``, ``int``, ``float`` values), ready for a card template, a
``datasets.Dataset.from_list`` or a JSON file. Figures are PNG files drawn with matplotlib (extra ``viz``, imported
only when a figure is drawn) and returned as paths.

The estimator of pass@k is the unbiased one of Chen et al. (2021), ``1 - C(n-c, k) / C(n, k)``, computed in a
numerically stable product form. The released EvolveCoder statistics use a different quantity, "any of the
first k samples is correct"; it is here too, under the name :func:`any_of_first_k`, for comparisons.

Example:
    >>> from evolvecoder_datasets.metrics import pass_at_k, difficulty_table
    >>> pass_at_k(n=[10, 10, 3], c=[0, 5, 1], k=4).round(4).tolist()
    [0.0, 0.9762, 1.0]
    >>> rows = difficulty_table({0: [[[1, 1], [0, 1]]], 1: [[[1, 0], [0, 1]]]}, ks=(1,))
    >>> [(r["round"], r["pass@1"]) for r in rows]
    [(0, 0.5), (1, 0.0)]
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._deps import require
from .errors import ConfigError, SchemaError

__all__ = [
    "any_of_first_k",
    "difficulty_table",
    "method_table",
    "mutation_table",
    "pass_at_k",
    "per_model_table",
    "plot_difficulty",
    "plot_methods",
    "plot_mutation_scores",
    "plot_per_model",
    "save_figures",
    "solution_counts",
    "source_table",
]

DEFAULT_KS = (1, 4, 8)


def _check_k(k: Any) -> int:
    """``k`` as an int >= 1 (an integral float or numpy integer is accepted); anything else is a ConfigError."""
    try:
        integral = not isinstance(k, bool | str | bytes) and float(k) == int(k)
    except (TypeError, ValueError, OverflowError):  # None, text, nan, inf
        integral = False
    if not integral or int(k) < 1:
        raise ConfigError(f"k must be an integer >= 1, got {k!r}")
    return int(k)


def _counts(values: Any, name: str) -> np.ndarray:
    """Sample counts as int64, refusing what a cast would silently change (2.5 samples, text, None)."""
    raw = np.asarray(values)
    try:
        as_int = raw.astype(np.int64)
    except (TypeError, ValueError, OverflowError) as err:
        raise ConfigError(f"pass_at_k: {name} must hold whole numbers, got {raw.dtype} values") from err
    if raw.dtype.kind not in "biu" and not np.array_equal(raw, as_int):
        raise ConfigError(f"pass_at_k: {name} must hold whole numbers, got {raw.dtype} values")
    return as_int


def pass_at_k(n: Any, c: Any, k: int) -> np.ndarray:
    """Unbiased pass@k per problem, from ``n`` samples of which ``c`` are correct.

    ``1 - C(n-c, k) / C(n, k)``, computed as ``1 - prod_{i=n-c+1}^{n} (1 - k/i)`` with cumulative log sums, so
    it is accurate to ~1e-12 for any ``n`` and vectorised over problems (pass@1 is exactly ``c / n``).

    Edge cases (defined so that averages over problems stay meaningful):
    - ``c == 0``: 0.0; ``n - c < k``: 1.0 (every draw of k holds a correct sample);
    - ``n < k``: k is clamped to n, i.e. the chance that one of all n samples is correct: 1.0 when ``c > 0``,
      else 0.0 (the naive formula, as in the HumanEval code, returns 1.0 even for ``c == 0``);
    - ``n == 0``: ``nan`` (no evidence); use ``numpy.nanmean`` to average.

    Args:
        n (`int` or array-like of `int`): samples per problem.
        c (`int` or array-like of `int`): correct samples per problem; broadcast against ``n``.
        k (`int`): the k of pass@k, >= 1.

    Returns:
        `numpy.ndarray`: float64 array of the broadcast shape of ``n`` and ``c``.

    Raises:
        ConfigError: ``k`` is not an integer >= 1, ``n`` or ``c`` is not whole numbers, some ``c`` is negative or
            larger than its ``n``, or ``n`` and ``c`` do not broadcast.

    Example:
        >>> from evolvecoder_datasets.metrics import pass_at_k
        >>> float(pass_at_k(64, 8, 1))
        0.125
        >>> pass_at_k([0, 2, 2], [0, 0, 1], 8).tolist()
        [nan, 0.0, 1.0]
    """
    k = _check_k(k)
    n_counts, c_counts = _counts(n, "n"), _counts(c, "c")
    try:
        n_arr, c_arr = np.broadcast_arrays(n_counts, c_counts)
    except ValueError as err:
        raise ConfigError(f"pass_at_k: n and c do not match in shape ({err})") from err
    if np.any(c_arr < 0) or np.any(c_arr > n_arr):
        raise ConfigError("pass_at_k needs 0 <= c <= n for every problem")
    out = np.where(c_arr > 0, 1.0, 0.0)
    out[n_arr == 0] = np.nan
    general = (c_arr > 0) & (n_arr - c_arr >= k)
    if general.any() and k == 1:
        out[general] = c_arr[general] / n_arr[general]  # exact: pass@1 is the fraction correct
    elif general.any():
        ng, cg = n_arr[general], c_arr[general]
        i = np.arange(1, int(ng.max()) + 1, dtype=np.float64)
        terms = np.where(i > k, np.log1p(-k / np.maximum(i, k + 1)), 0.0)
        cumulative = np.concatenate([[0.0], np.cumsum(terms)])
        out[general] = -np.expm1(cumulative[ng] - cumulative[ng - cg])
    return out


def any_of_first_k(correct: Sequence[Sequence[bool]] | np.ndarray, k: int) -> np.ndarray:
    """1.0 when one of the first ``k`` samples of a problem is correct, else 0.0 (the released code's pass@k).

    This depends on the order of the samples and has a higher variance than :func:`pass_at_k`; it is provided
    to compare with the numbers of the released EvolveCoder statistics, not as the default.

    Args:
        correct (`Sequence[Sequence[bool]]` or `numpy.ndarray`): per problem, per sample, whether the sample is
            correct; rows may differ in length. A row shorter than ``k`` uses all its samples.
        k (`int`): how many leading samples count, >= 1.

    Returns:
        `numpy.ndarray`: float64 per problem; ``nan`` for a problem with no samples.

    Raises:
        ConfigError: ``k`` < 1.

    Example:
        >>> from evolvecoder_datasets.metrics import any_of_first_k
        >>> any_of_first_k([[0, 0, 1], [1, 0, 0], []], k=2).tolist()
        [0.0, 1.0, nan]
    """
    k = _check_k(k)
    if isinstance(correct, np.ndarray) and correct.ndim == 2:
        out = correct[:, :k].any(axis=1).astype(np.float64)
        if correct.shape[1] == 0:
            out[:] = np.nan
        return out
    return np.array([float(any(row[:k])) if len(row) else np.nan for row in correct], dtype=np.float64)


def solution_counts(pass_matrices: Iterable[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Samples ``n`` and perfect samples ``c`` (pass every test) per problem.

    Args:
        pass_matrices (`Iterable[array-like]`): one ``(solutions, tests)`` boolean matrix per problem, e.g. the
            ``pass_matrix`` column. A problem without tests has no perfect solution (no evidence).

    Returns:
        `tuple[numpy.ndarray, numpy.ndarray]`: int64 arrays ``n`` and ``c``.

    Raises:
        SchemaError: a matrix is not 2-D boolean.

    Example:
        >>> from evolvecoder_datasets.metrics import solution_counts
        >>> n, c = solution_counts([[[1, 1], [1, 0]], [[0, 1]]])
        >>> n.tolist(), c.tolist()
        ([2, 1], [1, 0])
    """
    from .passmatrix import as_pass_matrix

    ns, cs = [], []
    for matrix in pass_matrices:
        M = as_pass_matrix(matrix)
        ns.append(M.shape[0])
        cs.append(int(M.all(axis=1).sum()) if M.shape[1] else 0)
    return np.asarray(ns, dtype=np.int64), np.asarray(cs, dtype=np.int64)


def _mean_pass_at(n: np.ndarray, c: np.ndarray, ks: Sequence[int]) -> dict[str, float]:
    out = {}
    for k in ks:
        values = pass_at_k(n, c, k) if len(n) else np.zeros(0)
        out[f"pass@{k}"] = float(np.nanmean(values)) if np.isfinite(values).any() else float("nan")
    return out


def source_table(
    sources: Sequence[str], tests: Sequence[Sequence[str]] | Sequence[int]
) -> list[dict[str, Any]]:
    """Problems and mean tests per problem, by source, plus an ``"all"`` row (the paper's Table 2).

    Args:
        sources (`Sequence[str]`): the ``source`` column (or id prefixes such as ``"TACO"``).
        tests (`Sequence[Sequence[str]]` or `Sequence[int]`): the ``tests`` column, or test counts.

    Returns:
        `list[dict]`: rows ``{"source", "problems", "mean_tests", "total_tests"}`` sorted by source, then
        ``"all"``.

    Raises:
        SchemaError: the two columns differ in length.

    Example:
        >>> from evolvecoder_datasets.metrics import source_table
        >>> source_table(["TACO", "LeetCode", "TACO"], [["a", "b"], ["c"], ["d", "e", "f", "g"]])[-1]
        {'source': 'all', 'problems': 3, 'mean_tests': 2.3333333333333335, 'total_tests': 7}
    """
    if len(sources) != len(tests):
        raise SchemaError(f"{len(sources)} sources but {len(tests)} test lists")
    counts = [t if isinstance(t, (int, np.integer)) else len(t) for t in tests]
    totals: dict[str, list[int]] = defaultdict(list)
    for source, count in zip(sources, counts):
        totals[str(source)].append(int(count))
    rows = [
        {"source": s, "problems": len(v), "mean_tests": sum(v) / len(v), "total_tests": sum(v)}
        for s, v in sorted(totals.items())
    ]
    total = sum(counts)
    rows.append(
        {
            "source": "all",
            "problems": len(counts),
            "mean_tests": total / len(counts) if counts else float("nan"),
            "total_tests": int(total),
        }
    )
    return rows


def difficulty_table(
    rounds: Mapping[int, Iterable[Any]], *, ks: Sequence[int] = DEFAULT_KS
) -> list[dict[str, Any]]:
    """Mean unbiased pass@k of the solution pool per round (the paper's Figure 4).

    A sample counts as correct when it passes every test of that round, so pass@k falls as the suites harden.

    Args:
        rounds (`Mapping[int, Iterable[array-like]]`): round -> the pass matrices of its problems.
        ks (`Sequence[int]`, *optional*, defaults to `(1, 4, 8)`): the k values.

    Returns:
        `list[dict]`: rows ``{"round", "problems", "pass@1", "pass@4", "pass@8"}``, by round.

    Raises:
        ConfigError: a k is < 1.
        SchemaError: a matrix is not 2-D boolean.

    Example:
        >>> from evolvecoder_datasets.metrics import difficulty_table
        >>> difficulty_table({0: [[[1], [1]]], 1: [[[1], [0]]]}, ks=(1,))
        [{'round': 0, 'problems': 1, 'pass@1': 1.0}, {'round': 1, 'problems': 1, 'pass@1': 0.5}]
    """
    rows = []
    for r in sorted(rounds):
        n, c = solution_counts(rounds[r])
        rows.append({"round": int(r), "problems": len(n), **_mean_pass_at(n, c, ks)})
    return rows


def _origin_counts(origins: Iterable[Iterable[Mapping[str, Any]]]) -> Counter:
    counts: Counter = Counter()
    for row in origins:
        for origin in row:
            try:
                counts[(int(origin["round"]), str(origin["method"]))] += 1
            except (KeyError, TypeError) as err:
                raise SchemaError(f"test_origin entries need 'round' and 'method', got {origin!r}") from err
    return counts


def method_table(
    generated: Iterable[Iterable[Mapping[str, Any]]], retained: Iterable[Iterable[Mapping[str, Any]]]
) -> list[dict[str, Any]]:
    """Generated versus retained tests per round and method (the paper's Figure 5).

    Args:
        generated (`Iterable[Iterable[dict]]`): the ``test_origin`` column before the final filter (rounds only
            append tests, so the last round's dataset holds every generated test).
        retained (`Iterable[Iterable[dict]]`): the ``test_origin`` column after the final filter.

    Returns:
        `list[dict]`: rows ``{"round", "method", "generated", "retained", "retention"}`` sorted by round and
        method; ``retention`` is retained / generated.

    Raises:
        SchemaError: an origin lacks ``round`` or ``method``.

    Example:
        >>> from evolvecoder_datasets.metrics import method_table
        >>> gen = [[{"round": 0, "method": "refine"}] * 4 + [{"round": 1, "method": "adversarial"}] * 2]
        >>> kept = [[{"round": 0, "method": "refine"}] * 3 + [{"round": 1, "method": "adversarial"}]]
        >>> [(r["method"], r["generated"], r["retained"], r["retention"]) for r in method_table(gen, kept)]
        [('refine', 4, 3, 0.75), ('adversarial', 2, 1, 0.5)]
    """
    made, kept = _origin_counts(generated), _origin_counts(retained)
    rows = []
    for key in sorted(set(made) | set(kept)):
        g, r = made.get(key, 0), kept.get(key, 0)
        rows.append(
            {
                "round": key[0],
                "method": key[1],
                "generated": g,
                "retained": r,
                "retention": r / g if g else float("nan"),
            }
        )
    return rows


def per_model_table(
    solutions: Iterable[Sequence[Mapping[str, Any]]],
    pass_matrices: Iterable[Any],
    *,
    ks: Sequence[int] = DEFAULT_KS,
) -> list[dict[str, Any]]:
    """Mean unbiased pass@k per model that sampled the pool (the paper's Figure 6).

    Args:
        solutions (`Iterable[Sequence[dict]]`): the ``solutions`` column: per problem, one ``{"model", ...}``
            per row of the pass matrix.
        pass_matrices (`Iterable[array-like]`): the ``pass_matrix`` column, aligned with ``solutions``.
        ks (`Sequence[int]`, *optional*, defaults to `(1, 4, 8)`): the k values.

    Returns:
        `list[dict]`: rows ``{"model", "problems", "samples", "pass@1", ...}`` sorted by model.

    Raises:
        SchemaError: a problem's solution list and pass matrix disagree in length.
        ConfigError: a k is < 1.

    Example:
        >>> from evolvecoder_datasets.metrics import per_model_table
        >>> sols = [[{"model": "a"}, {"model": "a"}, {"model": "b"}]]
        >>> per_model_table(sols, [[[1, 1], [0, 1], [1, 1]]], ks=(1,))
        [{'model': 'a', 'problems': 1, 'samples': 2, 'pass@1': 0.5}, {'model': 'b', 'problems': 1, 'samples': 1, 'pass@1': 1.0}]
    """
    from .passmatrix import as_pass_matrix

    counts: dict[str, tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
    for problem, (sols, matrix) in enumerate(zip(solutions, pass_matrices, strict=True)):
        M = as_pass_matrix(matrix)
        if M.shape[0] != len(sols):
            raise SchemaError(f"problem {problem}: {len(sols)} solutions but {M.shape[0]} pass-matrix rows")
        perfect = M.all(axis=1) if M.shape[1] else np.zeros(M.shape[0], dtype=bool)
        per_model: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for sol, ok in zip(sols, perfect.tolist()):
            slot = per_model[str(sol["model"])]
            slot[0] += 1
            slot[1] += int(ok)
        for model, (n, c) in per_model.items():
            counts[model][0].append(n)
            counts[model][1].append(c)
    rows = []
    for model in sorted(counts):
        n, c = (np.asarray(x, dtype=np.int64) for x in counts[model])
        rows.append({"model": model, "problems": len(n), "samples": int(n.sum()), **_mean_pass_at(n, c, ks)})
    return rows


def mutation_table(scores: Mapping[int, Any]) -> list[dict[str, Any]]:
    """Mutation score per round, pooled over problems.

    Args:
        scores (`Mapping[int, Iterable[MutationScore | dict]]`): round -> the per-problem results of
            :func:`evolvecoder_datasets.mutants.mutation_score` (objects or their ``as_dict()``), or a single
            result per round.

    Returns:
        `list[dict]`: rows ``{"round", "problems", "killed", "considered", "score", "mean_problem_score"}``;
        ``score`` pools all mutants, ``mean_problem_score`` averages per problem (problems without mutants
        are left out of it).

    Example:
        >>> from evolvecoder_datasets.metrics import mutation_table
        >>> mutation_table({1: [{"killed": 3, "considered": 4}, {"killed": 1, "considered": 1}]})
        [{'round': 1, 'problems': 2, 'killed': 4, 'considered': 5, 'score': 0.8, 'mean_problem_score': 0.875}]
    """
    rows = []
    for r in sorted(scores):
        results = scores[r]
        if not isinstance(results, (list, tuple)):
            results = [results]
        dicts = [x.as_dict() if hasattr(x, "as_dict") else dict(x) for x in results]
        killed = sum(int(d["killed"]) for d in dicts)
        considered = sum(int(d["considered"]) for d in dicts)
        per_problem = [int(d["killed"]) / int(d["considered"]) for d in dicts if int(d["considered"])]
        rows.append(
            {
                "round": int(r),
                "problems": len(dicts),
                "killed": killed,
                "considered": considered,
                "score": killed / considered if considered else float("nan"),
                "mean_problem_score": float(np.mean(per_problem)) if per_problem else float("nan"),
            }
        )
    return rows


# ---------------------------------------------------------------- figures


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

    Args:
        rows (`Sequence[dict]`): the rows of :func:`difficulty_table`.
        folder (`str` or `os.PathLike`): where to write the PNG (created if missing).

    Returns:
        `pathlib.Path`: the PNG file.

    Raises:
        MissingExtraError: matplotlib is not installed (``pip install 'evolvecoder-datasets[viz]'``).

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
    """Grouped bars of generated and retained tests per round and method, saved as ``methods.png``.

    Args:
        rows (`Sequence[dict]`): the rows of :func:`method_table`.
        folder (`str` or `os.PathLike`): where to write the PNG (created if missing).

    Returns:
        `pathlib.Path`: the PNG file.

    Raises:
        MissingExtraError: matplotlib is not installed.

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
    """Grouped bars of pass@k per model, saved as ``per_model.png``.

    Args:
        rows (`Sequence[dict]`): the rows of :func:`per_model_table`.
        folder (`str` or `os.PathLike`): where to write the PNG (created if missing).

    Returns:
        `pathlib.Path`: the PNG file.

    Raises:
        MissingExtraError: matplotlib is not installed.

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
    """Line plot of the mutation score per round, saved as ``mutation_score.png``.

    Args:
        rows (`Sequence[dict]`): the rows of :func:`mutation_table`.
        folder (`str` or `os.PathLike`): where to write the PNG (created if missing).

    Returns:
        `pathlib.Path`: the PNG file.

    Raises:
        MissingExtraError: matplotlib is not installed.

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


def save_figures(
    folder: str | os.PathLike,
    *,
    difficulty: Sequence[Mapping[str, Any]] | None = None,
    methods: Sequence[Mapping[str, Any]] | None = None,
    per_model: Sequence[Mapping[str, Any]] | None = None,
    mutation: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Path]:
    """Draw every figure whose table is given (and not empty) into ``folder``.

    Args:
        folder (`str` or `os.PathLike`): where to write the PNGs (created if missing).
        difficulty (`Sequence[dict]`, *optional*): rows of :func:`difficulty_table`.
        methods (`Sequence[dict]`, *optional*): rows of :func:`method_table`.
        per_model (`Sequence[dict]`, *optional*): rows of :func:`per_model_table`.
        mutation (`Sequence[dict]`, *optional*): rows of :func:`mutation_table`.

    Returns:
        `dict[str, pathlib.Path]`: figure name (``"difficulty"``, ``"methods"``, ``"per_model"``,
        ``"mutation_score"``) -> PNG path, for the card template.

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
    ):
        if rows:
            drawn[name] = plot(rows, folder)
    return drawn
