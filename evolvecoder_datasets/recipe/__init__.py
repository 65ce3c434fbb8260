"""The recipes as library calls: the EvolveCoder recipe (this package's top level) and code_instruct.

One concern per module: :mod:`~evolvecoder_datasets.recipe.config` (what a YAML file maps onto),
:mod:`~evolvecoder_datasets.recipe.seeds` (seed rows, dedup), :mod:`~evolvecoder_datasets.recipe.checkpoints`
(stage outputs saved with their keys), :mod:`~evolvecoder_datasets.recipe.measures` (the programs run to measure
the suites: reference verdicts, the fidelity oracle), :mod:`~evolvecoder_datasets.recipe.stats` (typed round
statistics, counted from those measurements; they run nothing) and
:mod:`~evolvecoder_datasets.recipe.pipeline` (the run and its publishing); :mod:`~evolvecoder_datasets.recipe.code_instruct`
is the repository-grounded recipe.

The CLI runs a recipe as ``evolvecoder-datasets run CONFIG.yaml``; ``recipes/evolvecoder.py`` is a thin script over
:func:`run_recipe`.

Example:
    >>> from evolvecoder_datasets.recipe import RecipeConfig, run_recipe, demo_config
    >>> result = run_recipe(demo_config("runs/demo"))  # doctest: +SKIP
    >>> print(result)  # doctest: +SKIP
    EvolveCoder run in runs/demo: 6 seeds -> 5 problems after round 0 -> 4 final problems (1 rounds)
"""

from __future__ import annotations

from .config import RecipeConfig, demo_config
from .pipeline import run, run_recipe
from .seeds import load_seeds

__all__ = ["RecipeConfig", "demo_config", "load_seeds", "run", "run_recipe"]
