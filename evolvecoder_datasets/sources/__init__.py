"""Seed sources: adapters from each public problem set's own layout to one seed-row schema.

Package-shipped sets load offline (``load_humaneval()``, ``load_leetcode()``); Hub-backed sets take the
``datasets.Dataset`` you loaded (``from_taco(load_dataset("BAAI/TACO", split="train"))``). Every adapter
returns rows with the columns of :data:`SEED_COLUMNS` (see :mod:`evolvecoder_datasets.sources.base`).
Names load on first access, so importing this package imports neither ``datasets`` nor any adapter.

Example:
    >>> from evolvecoder_datasets.sources import load_humaneval, load_leetcode, merge_sources
    >>> seeds = merge_sources(load_humaneval(), load_leetcode())  # doctest: +SKIP
    >>> sorted(set(seeds["source"]))  # doctest: +SKIP
    ['HumanEval', 'LeetCode']
"""

from __future__ import annotations

from .._lazy import lazy_exports

# Public name -> module of this package that defines it.
_ATTRIBUTES = {
    "SEED_COLUMNS": "base",
    "seed_features": "base",
    "load_humaneval": "humaneval",
    "from_humaneval": "humaneval",
    "split_check": "humaneval",
    "load_leetcode": "leetcode",
    "load_problem_package": "problem_package",
    "load_problem_packages": "problem_package",
    "from_apps": "apps",
    "from_taco": "apps",
    "from_code_contests": "code_contests",
    "from_codeforces": "codeforces",
    "from_primeintellect": "primeintellect",
    "from_evolvecoder_seed": "evolvecoder_seed",
    "adapt_layout": "layouts",
    "layout_of": "layouts",
    "mark_exact_duplicates": "exact",
    "merge_sources": "exact",
}

__all__ = list(_ATTRIBUTES)


__getattr__, __dir__ = lazy_exports(__name__, _ATTRIBUTES, __all__)
