"""Seeded randomness per problem: the same draw in every process, batch size and Python version.

Example:
    >>> from evolvecoder_datasets.seeding import problem_rng
    >>> bool(problem_rng(0, "HumanEval_3", 1).integers(1000) == problem_rng(0, "HumanEval_3", 1).integers(1000))
    True
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np

__all__ = ["problem_rng", "stable_int"]


def stable_int(*parts: Any) -> int:
    """A 64-bit integer derived from ``parts`` that is the same in every process and Python version.

    Example:
        >>> stable_int("a", 1) == stable_int("a", 1), stable_int("a", 1) == stable_int("a", 2)
        (True, False)
    """
    digest = hashlib.sha256(json.dumps([str(p) for p in parts]).encode()).digest()
    return int.from_bytes(digest[:8], "little")


def problem_rng(seed: int, problem_id: str, *salt: Any) -> np.random.Generator:
    """A generator seeded by the run seed, the problem id and a salt (round, stage).

    Each problem draws from its own stream, so its choices do not depend on the batch size, on ``num_proc`` or
    on which other problems are in the dataset, and a recorded seed reproduces every choice.

    Args:
        seed (`int`): the run's seed.
        problem_id (`str`): the problem's ``id``.
        *salt: anything else that should give an independent stream (round number, stage name).

    Example:
        >>> problem_rng(0, "X_1", "finalize").permutation(3).tolist() == problem_rng(0, "X_1", "finalize").permutation(3).tolist()
        True
    """
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, stable_int(problem_id, *salt) & 0xFFFFFFFFFFFF])
