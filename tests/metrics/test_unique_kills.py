"""Kills no other method made: each failing program credited to a method only when every test it fails is that
method's; checked against a direct reading of the definition on random pools."""

from __future__ import annotations

import numpy as np
import pytest

from evolvecoder_datasets.errors import SchemaError
from evolvecoder_datasets.metrics import unique_kills

METHODS = ("seed", "adversarial", "discriminative", "search")


def _by_definition(origins, matrices):
    out = {}
    for row, M in zip(origins, matrices):
        methods = [o["method"] for o in row]
        credited = set()
        for m in methods:
            out.setdefault(m, {"programs": 0, "problems": 0})
        for program in M:
            killers = {m for m, passed in zip(methods, program) if not passed}
            if len(killers) == 1:
                (m,) = killers
                out[m]["programs"] += 1
                credited.add(m)
        for m in credited:
            out[m]["problems"] += 1
    return out


@pytest.mark.parametrize("seed", range(5))
def test_unique_kills_match_the_definition_on_random_pools(seed):
    rng = np.random.default_rng(seed)
    origins, matrices = [], []
    for _ in range(12):
        n_tests, n_programs = int(rng.integers(0, 9)), int(rng.integers(0, 7))
        origins.append([{"round": 1, "method": str(rng.choice(METHODS))} for _ in range(n_tests)])
        matrices.append((rng.random((n_programs, n_tests)) < 0.8).tolist())
    assert unique_kills(origins, matrices) == dict(sorted(_by_definition(origins, [np.asarray(m, bool).reshape(
        len(m), len(o)) for m, o in zip(matrices, origins)]).items()))


def test_a_matrix_that_disagrees_with_its_origins_is_a_schema_error():
    with pytest.raises(SchemaError):
        unique_kills([[{"round": 0, "method": "seed"}]], [[[True, False]]])
