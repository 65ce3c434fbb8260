"""pass@k against the exact binomial formula, the round tables on real `datasets` rows, and real PNG figures."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
pytest.importorskip("hypothesis", reason="the property tests need the dev extra: pip install -e '.[dev]'")
from hypothesis import given
from hypothesis import strategies as st

from evolvecoder_datasets import metrics
from evolvecoder_datasets.errors import ConfigError, SchemaError
from evolvecoder_datasets.mutants import MutationScore


def exact_pass_at_k(n: int, c: int, k: int) -> float:
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


@st.composite
def samples(draw, max_n: int = 300):
    n = draw(st.integers(1, max_n))
    c = draw(st.integers(0, n))
    k = draw(st.integers(1, n))
    return n, c, k


@given(st.lists(samples(), min_size=1, max_size=20))
def test_pass_at_k_matches_the_exact_binomial_formula(cases):
    for k in sorted({k for _, _, k in cases}):
        subset = [(n, c) for n, c, kk in cases if kk == k]
        got = metrics.pass_at_k([n for n, _ in subset], [c for _, c in subset], k)
        for value, (n, c) in zip(got.tolist(), subset):
            assert value == pytest.approx(exact_pass_at_k(n, c, k), rel=1e-11, abs=1e-13)


def test_pass_at_k_is_exact_for_k_one_and_stable_for_large_pools():
    assert metrics.pass_at_k(64, 8, 1).item() == 0.125
    assert metrics.pass_at_k(100_000, 1, 10).item() == pytest.approx(1e-4, rel=1e-6)
    assert metrics.pass_at_k(100_000, 3, 50_000).item() == pytest.approx(exact_pass_at_k(100_000, 3, 50_000))


def test_pass_at_k_defines_small_pools_and_empty_problems():
    got = metrics.pass_at_k([0, 3, 3, 5], [0, 0, 2, 5], 8)
    assert np.isnan(got[0])
    assert got[1:].tolist() == [0.0, 1.0, 1.0]  # k clamped to n: 0 correct never passes
    assert metrics.pass_at_k(np.full((2, 3), 10), np.zeros((2, 3), dtype=int), 4).shape == (2, 3)
    with pytest.raises(ConfigError):
        metrics.pass_at_k(5, 6, 1)
    with pytest.raises(ConfigError):
        metrics.pass_at_k(5, 1, 0)


def test_any_of_first_k_is_the_released_order_dependent_variant():
    correct = [[False, False, True], [True, False], [], [False] * 9 + [True]]
    assert metrics.any_of_first_k(correct, 2).tolist()[:2] == [0.0, 1.0]
    assert np.isnan(metrics.any_of_first_k(correct, 2)[2])
    assert metrics.any_of_first_k(correct, 8).tolist()[3] == 0.0  # a correct 10th sample is invisible at k=8
    # The unbiased estimator sees the same pool as 1 in 10 correct.
    assert metrics.pass_at_k(10, 1, 8).item() == pytest.approx(0.8)
    matrix = np.array([[0, 1], [0, 0]], dtype=bool)
    assert metrics.any_of_first_k(matrix, 1).tolist() == [0.0, 0.0]
    assert metrics.any_of_first_k(matrix, 2).tolist() == [1.0, 0.0]


@pytest.fixture()
def pool():
    """A two-problem solution pool, as it is stored in Arrow (round-tripped through `datasets`)."""
    datasets = pytest.importorskip("datasets")
    rows = [
        {
            "id": "TACO_1",
            "source": "TACO",
            "tests": ["assert f(1) == 1", "assert f(2) == 2", "assert f(3) == 3"],
            "test_origin": [
                {"round": 0, "method": "refine"},
                {"round": 1, "method": "adversarial"},
                {"round": 1, "method": "discriminative"},
            ],
            "solutions": [{"model": "small", "sample": i, "code": "..."} for i in range(2)]
            + [{"model": "big", "sample": i, "code": "..."} for i in range(2)],
            "pass_matrix": [[True, True, True], [True, False, True], [True, True, True], [True, True, True]],
        },
        {
            "id": "LeetCode_7",
            "source": "LeetCode",
            "tests": ["assert g() is None"],
            "test_origin": [{"round": 0, "method": "seed"}],
            "solutions": [
                {"model": "small", "sample": 0, "code": "..."},
                {"model": "big", "sample": 0, "code": "..."},
            ],
            "pass_matrix": [[False], [True]],
        },
    ]
    return datasets.Dataset.from_list(rows)[:]


def test_source_table_counts_problems_and_mean_tests_by_source(pool):
    rows = metrics.source_table(pool["source"], pool["tests"])
    assert rows == [
        {"source": "LeetCode", "problems": 1, "mean_tests": 1.0, "total_tests": 1},
        {"source": "TACO", "problems": 1, "mean_tests": 3.0, "total_tests": 3},
        {"source": "all", "problems": 2, "mean_tests": 2.0, "total_tests": 4},
    ]
    with pytest.raises(SchemaError):
        metrics.source_table(["a"], [])


def test_difficulty_table_uses_perfect_solutions_per_round(pool):
    round0 = [np.asarray(m)[:, :1] for m in pool["pass_matrix"]]  # round 0 had only the first test
    rows = metrics.difficulty_table({0: round0, 1: pool["pass_matrix"]}, ks=(1, 2))
    assert [r["round"] for r in rows] == [0, 1]
    assert rows[0]["pass@1"] == pytest.approx((1.0 + 0.5) / 2)
    assert rows[1]["pass@1"] == pytest.approx((0.75 + 0.5) / 2)
    assert rows[1]["pass@2"] == pytest.approx((1.0 + 1.0) / 2)
    assert all(isinstance(v, (int, float)) for r in rows for v in r.values())


def test_method_table_compares_generated_and_retained_tests(pool):
    retained = [origins[:1] for origins in pool["test_origin"]]
    rows = metrics.method_table(pool["test_origin"], retained)
    assert [(r["round"], r["method"], r["generated"], r["retained"]) for r in rows] == [
        (0, "refine", 1, 1),
        (0, "seed", 1, 1),
        (1, "adversarial", 1, 0),
        (1, "discriminative", 1, 0),
    ]
    assert rows[2]["retention"] == 0.0
    with pytest.raises(SchemaError):
        metrics.method_table([[{"method": "seed"}]], [])


def test_per_model_table_scores_each_model_on_its_own_samples(pool):
    rows = metrics.per_model_table(pool["solutions"], pool["pass_matrix"], ks=(1, 2))
    assert [r["model"] for r in rows] == ["big", "small"]
    big, small = rows
    assert big == {"model": "big", "problems": 2, "samples": 3, "pass@1": 1.0, "pass@2": 1.0}
    assert small["pass@1"] == pytest.approx((0.5 + 0.0) / 2)
    assert small["pass@2"] == pytest.approx((1.0 + 0.0) / 2)  # one sample for problem 2: k clamped
    with pytest.raises(SchemaError):
        metrics.per_model_table([[{"model": "a"}]], [[[True], [False]]])


def test_mutation_table_pools_results_per_round():
    a = MutationScore(score=0.5, killed=2, considered=4)
    rows = metrics.mutation_table({2: [a, {"killed": 0, "considered": 0}], 1: a})
    assert [r["round"] for r in rows] == [1, 2]
    assert rows[1] == {
        "round": 2,
        "problems": 2,
        "killed": 2,
        "considered": 4,
        "score": 0.5,
        "mean_problem_score": 0.5,
    }


def test_figures_are_written_as_png_files(pool, tmp_path):
    pytest.importorskip("matplotlib")
    tables = {
        "difficulty": metrics.difficulty_table({0: pool["pass_matrix"], 1: pool["pass_matrix"]}),
        "methods": metrics.method_table(pool["test_origin"], pool["test_origin"]),
        "per_model": metrics.per_model_table(pool["solutions"], pool["pass_matrix"]),
        "mutation": metrics.mutation_table(
            {0: {"killed": 1, "considered": 3}, 1: {"killed": 3, "considered": 3}}
        ),
    }
    paths = metrics.save_figures(tmp_path / "figures", **tables)
    assert sorted(paths) == ["difficulty", "methods", "mutation_score", "per_model"]
    for path in paths.values():
        data = path.read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 2000
    assert metrics.save_figures(tmp_path / "none", difficulty=[]) == {}


@pytest.mark.parametrize("k", [0, -1, None, "2", 2.5, float("nan"), float("inf"), True])
def test_pass_at_k_refuses_a_k_that_is_not_a_positive_integer_with_a_typed_error(k):
    with pytest.raises(ConfigError, match="k must be an integer >= 1"):
        metrics.pass_at_k(4, 1, k)


def test_pass_at_k_accepts_integral_floats_and_numpy_integers_for_k():
    assert metrics.pass_at_k(4, 1, 2.0).item() == metrics.pass_at_k(4, 1, np.int64(2)).item() == 0.5


@pytest.mark.parametrize(("n", "c"), [(2.5, 1), (4, 0.5), (None, 1), ("4", 1), ([4, 4], [1, 2, 3])])
def test_pass_at_k_refuses_counts_that_are_not_whole_numbers_or_do_not_match(n, c):
    with pytest.raises(ConfigError, match="pass_at_k"):
        metrics.pass_at_k(n, c, 1)


def test_pass_at_k_edge_cases_follow_the_documented_definition():
    n, c = [3, 3, 5, 5, 5, 10], [0, 1, 0, 5, 5, 1]
    assert metrics.pass_at_k(n, c, 5).tolist() == [0.0, 1.0, 0.0, 1.0, 1.0, pytest.approx(0.5)]
    assert metrics.pass_at_k([4.0, 10], [1, 1], 1).tolist() == [0.25, 0.1]
