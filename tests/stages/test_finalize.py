"""The final filter: pruned tests stay aligned with origins and matrices; every drop has a reason."""

from __future__ import annotations

import numpy as np
import pytest
pytest.importorskip("hypothesis", reason="the property tests need the dev extra: pip install -e '.[dev]'")
from hypothesis import given, settings
from hypothesis import strategies as st

from evolvecoder_datasets.stages.finalize import FinalizeConfig, finalize


def _row(M, models=None):
    n_tests = len(M[0]) if M else 0
    models = models or ["m"] * len(M)
    return {
        "id": ["X"],
        "tests": [[f"assert t{j}" for j in range(n_tests)]],
        "test_origin": [[{"round": j % 3, "method": "refine"} for j in range(n_tests)]],
        "pass_matrix": [M],
        "statuses": [[["pass" if c else "fail" for c in row] for row in M]],
        "solutions": [[{"model": m, "sample": 0, "code": ""} for m in models]],
    }


def test_low_rate_and_duplicate_tests_are_pruned_and_counted():
    M = [[True, True, True, False], [True, True, True, False], [False, False, True, False]]
    out = finalize(_row(M), config=FinalizeConfig(min_tests=1, max_per_group=1))
    assert out["final_low_rate_tests"] == [1] and out["final_duplicate_tests"] == [1]
    assert len(out["tests"][0]) == 2 and out["drop_reason"] == [None]


def test_too_many_perfect_solutions_drop_the_problem_with_a_reason():
    out = finalize(_row([[True] * 6] * 4), config=FinalizeConfig(min_tests=1, max_perfect=3))
    assert out["drop_reason"] == ["too_many_perfect"]


def test_mutants_do_not_count_as_solutions():
    M = [[True, True], [False, False], [False, False]]
    out = finalize(_row(M, ["m", "mutant", "mutant"]), config=FinalizeConfig(min_tests=1, max_perfect=0))
    assert out["drop_reason"] == ["too_many_perfect"]  # one perfect LLM sample, mutants ignored
    out = finalize(_row(M, ["m", "mutant", "mutant"]), config=FinalizeConfig(min_tests=1, max_perfect=1))
    assert out["drop_reason"] == [None] and out["final_perfect"] == [1]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(0, 12), st.integers(0, 2**31 - 1))
def test_kept_columns_stay_aligned(n_solutions, n_tests, seed):
    M = np.random.default_rng(seed).random((n_solutions, n_tests)) < 0.5
    out = finalize(_row(M.tolist()) if n_tests else {**_row([[]] * n_solutions), "tests": [[]]},
                   config=FinalizeConfig(min_tests=2, max_perfect=4, seed=seed))
    tests, origins, matrix = out["tests"][0], out["test_origin"][0], out["pass_matrix"][0]
    assert len(tests) == len(origins)
    assert all(len(row) == len(tests) for row in matrix)
    assert all(len(row) == len(tests) for row in out["statuses"][0])
    assert out["drop_reason"][0] in (None, "too_few_tests", "too_many_perfect")
    if out["drop_reason"][0] is None:
        kept = [int(t.split("t")[-1]) for t in tests]
        assert kept == sorted(kept) and np.array_equal(np.asarray(matrix, bool).reshape(n_solutions, -1), M[:, kept])
