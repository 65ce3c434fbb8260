"""Which problems get an oracle: a seeded draw by id, the same every round, on a rerun and in any order."""

from __future__ import annotations

import pytest

from evolvecoder_datasets.errors import ConfigError
from evolvecoder_datasets.search.oracle import FidelityConfig, oracle_sample

IDS = [f"HumanEval_{i}" for i in range(50)]


def test_the_sample_is_seeded_stable_and_order_free():
    picked = oracle_sample(IDS, FidelityConfig(sample=10))
    assert len(picked) == 10 and picked <= set(IDS)
    assert picked == oracle_sample(list(reversed(IDS)), FidelityConfig(sample=10))   # a rerun, another order
    assert picked != oracle_sample(IDS, FidelityConfig(sample=10, seed=2))          # the seed draws another
    assert oracle_sample(IDS, FidelityConfig(sample=9)) < picked                      # a smaller sample is nested


def test_a_run_no_larger_than_the_sample_measures_every_problem():
    assert oracle_sample(IDS, FidelityConfig()) == set(IDS)                           # default 200
    assert oracle_sample(IDS, FidelityConfig(sample=None)) == set(IDS)
    assert oracle_sample(IDS, FidelityConfig(sample=50)) == set(IDS)


def test_a_sample_below_one_is_refused():
    with pytest.raises(ConfigError):
        FidelityConfig(sample=0)
