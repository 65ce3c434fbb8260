"""The reduced suite: greedy set cover of the kills, and the final filter's option for it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from evolvecoder_datasets import passmatrix
from evolvecoder_datasets.errors import ConfigError


def _killed(M, columns):
    return (~M[:, list(columns)]).any(axis=1) if len(columns) else np.zeros(M.shape[0], bool)


def test_the_cover_keeps_every_kill_of_the_full_suite_on_random_matrices():
    rng = np.random.default_rng(3)
    for _ in range(300):
        M = rng.random((rng.integers(1, 15), rng.integers(1, 10))) < rng.uniform(0.3, 0.95)
        kept = passmatrix.cover_tests(M)
        assert np.array_equal(_killed(M, kept), _killed(M, range(M.shape[1])))
        assert list(kept) == sorted(set(kept.tolist()))


def test_the_greedy_cover_is_within_the_log_bound_of_the_smallest_cover():
    rng = np.random.default_rng(4)
    for _ in range(100):
        M = rng.random((8, 7)) < 0.7
        full = _killed(M, range(7))
        smallest = next(k for k in range(8) for cols in itertools.combinations(range(7), k)
                        if np.array_equal(_killed(M, cols), full))
        assert len(passmatrix.cover_tests(M)) <= smallest * (np.log(8) + 1)


def test_padding_adds_the_strongest_remaining_tests_up_to_at_least():
    M = np.array([[0, 1, 0, 1], [1, 1, 0, 1], [1, 1, 1, 1]], bool)  # test 0 kills 0; test 2 kills 0 and 1
    assert passmatrix.cover_tests(M).tolist() == [2]
    assert passmatrix.cover_tests(M, at_least=2).tolist() == [0, 2]
    assert passmatrix.cover_tests(M, among=[0, 1], at_least=5).tolist() == [0, 1]


def test_the_final_filter_covers_the_whole_pool_while_counting_only_samples():
    samples = np.array([[1, 1, 1, 1]], bool)          # one right sample: every test looks the same to it
    pool = np.array([[1, 1, 1, 1], [0, 1, 1, 1], [1, 1, 0, 1]], bool)  # plus two mutants
    groups = passmatrix.final_filter_outcome(samples, rng=np.random.default_rng(0), min_tests=1, max_per_group=1)
    cover = passmatrix.final_filter_outcome(samples, rng=np.random.default_rng(0), min_tests=1, reduce="cover",
                                            pool=pool)
    assert len(groups.kept) == 1
    assert cover.kept.tolist() == [0, 2]              # both mutants are still killed


def test_exempt_tests_survive_the_low_pass_rate_rule():
    M = np.array([[0, 1], [0, 1], [0, 0]], bool)
    assert passmatrix.final_filter_outcome(M, rng=np.random.default_rng(0), min_tests=1).kept.tolist() == [1]
    out = passmatrix.final_filter_outcome(M, rng=np.random.default_rng(0), min_tests=1, exempt=[0])
    assert out.kept.tolist() == [0, 1] and out.low_rate == 0


def test_an_unknown_rule_is_a_config_error():
    with pytest.raises(ConfigError):
        passmatrix.final_filter_outcome(np.ones((1, 1), bool), rng=np.random.default_rng(0), reduce="smallest")
