"""pass@k, per-round difficulty, per-model tables and their figures.

Tables are plain lists of dicts (``str``, ``int``, ``float`` values), ready for a card template, a
``datasets.Dataset.from_list`` or a JSON file. Figures are PNG files drawn with matplotlib (extra ``viz``, imported
only when a figure is drawn) and returned as paths.

The estimator of pass@k is the unbiased one of Chen et al. (2021), ``1 - C(n-c, k) / C(n, k)``, computed in a
numerically stable product form. The released EvolveCoder statistics use a different quantity, "any of the
first k samples is correct"; it is here too, under the name :func:`any_of_first_k`, for comparisons.

One module per concern: :mod:`.passk` (estimators), :mod:`.tables` (per-round tables), :mod:`.figures` (PNGs),
:mod:`.fidelity` (a suite's TPR/TNR against oracle labels).

Example:
    >>> from evolvecoder_datasets.metrics import pass_at_k, difficulty_table
    >>> pass_at_k(n=[10, 10, 3], c=[0, 5, 1], k=4).round(4).tolist()
    [0.0, 0.9762, 1.0]
    >>> rows = difficulty_table({0: [[[1, 1], [0, 1]]], 1: [[[1, 0], [0, 1]]]}, ks=(1,))
    >>> [(r["round"], r["pass@1"]) for r in rows]
    [(0, 0.5), (1, 0.0)]
"""

from __future__ import annotations

from .figures import plot_difficulty, plot_methods, plot_mutation_scores, plot_per_model, save_figures
from .passk import any_of_first_k, pass_at_k, solution_counts
from .tables import difficulty_table, method_table, mutation_table, per_model_table, source_table, unique_kills

__all__ = [
    "any_of_first_k",
    "difficulty_table",
    "method_table",
    "unique_kills",
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
