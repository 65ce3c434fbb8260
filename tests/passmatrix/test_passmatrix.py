"""Each pass-matrix rule, proved on random matrices (hypothesis) and on the degenerate cases."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
pytest.importorskip("hypothesis", reason="the property tests need the dev extra: pip install -e '.[dev]'")
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from evolvecoder_datasets import passmatrix as pm
from evolvecoder_datasets.errors import ConfigError, SchemaError


def matrices(max_solutions: int = 12, max_tests: int = 10, min_solutions: int = 0, min_tests: int = 0):
    shapes = st.tuples(st.integers(min_solutions, max_solutions), st.integers(min_tests, max_tests))
    return shapes.flatmap(lambda shape: arrays(np.bool_, shape))


seeds = st.integers(0, 2**32 - 1)
DEGENERATE = {
    "no_solutions": np.zeros((0, 6), dtype=bool),
    "no_tests": np.zeros((7, 0), dtype=bool),
    "nothing": np.zeros((0, 0), dtype=bool),
    "all_pass": np.ones((8, 6), dtype=bool),
    "all_fail": np.zeros((8, 6), dtype=bool),
    "three_solutions": np.array([[1, 0, 1, 1], [1, 1, 1, 1], [0, 0, 1, 0]], dtype=bool),
}


def columns_groups(M: np.ndarray) -> dict[tuple, list[int]]:
    groups: dict[tuple, list[int]] = {}
    for j in range(M.shape[1]):
        groups.setdefault(tuple(M[:, j].tolist()), []).append(j)
    return groups


# ---------------------------------------------------------------- rates, distances, input checking


@given(matrices())
def test_pass_rates_are_column_and_row_means(M):
    n, t = M.shape
    rates = pm.test_pass_rates(M)
    assert rates.shape == (t,)
    for j in range(t):
        assert rates[j] == (M[:, j].sum() / n if n else 0.0)
    sol = pm.solution_pass_rates(M)
    assert sol.shape == (n,)
    for i in range(n):
        assert sol[i] == (M[i].sum() / t if t else 0.0)


@given(matrices(max_tests=40))
def test_hamming_distances_match_elementwise_count(M):
    D = pm.hamming_distances(M)
    n = M.shape[0]
    assert D.shape == (n, n)
    for i, j in itertools.product(range(n), repeat=2):
        assert D[i, j] == int((M[i] != M[j]).sum())


def test_nested_lists_from_arrow_are_accepted_and_bad_shapes_rejected():
    assert pm.as_pass_matrix([[True, False], [0, 1]]).dtype == np.bool_
    assert pm.as_pass_matrix([]).shape == (0, 0)
    with pytest.raises(SchemaError):
        pm.as_pass_matrix([[True, False], [True]])
    with pytest.raises(SchemaError):
        pm.as_pass_matrix([True, False])
    with pytest.raises(SchemaError):
        pm.as_pass_matrix([[2, 0]])
    with pytest.raises(ValueError):  # SchemaError is also a ValueError
        pm.as_pass_matrix([["yes"]])


# ---------------------------------------------------------------- hide


@given(matrices(), st.floats(0, 1), st.one_of(st.none(), st.floats(0, 1)))
def test_hide_tests_keeps_exactly_the_tests_inside_the_rate_window(M, low, high):
    visible = pm.hide_tests(M, low, max_pass_rate=high)
    rates = pm.test_pass_rates(M)
    expected = [j for j in range(M.shape[1]) if rates[j] >= low and (high is None or rates[j] <= high)]
    assert visible.tolist() == expected


def test_hide_tests_uses_a_strict_lower_cut_at_one_in_ten():
    M = np.zeros((10, 3), dtype=bool)
    M[0, 0] = True  # 0.1 exactly: visible
    M[:, 2] = True
    assert pm.hide_tests(M).tolist() == [0, 2]
    assert pm.hide_tests(M, max_pass_rate=0.95).tolist() == [0]


def test_hide_tests_hides_everything_without_solutions_and_rejects_bad_rates():
    assert pm.hide_tests(DEGENERATE["no_solutions"]).tolist() == []
    assert pm.hide_tests(DEGENERATE["no_solutions"], 0.0).tolist() == list(range(6))
    with pytest.raises(ConfigError):
        pm.hide_tests(DEGENERATE["all_pass"], 1.5)


# ---------------------------------------------------------------- dedupe


@given(matrices(), st.integers(1, 4), seeds)
def test_dedupe_keeps_min_of_keep_and_group_size_per_identical_column(M, keep, seed):
    kept = pm.dedupe_tests(M, rng=np.random.default_rng(seed), keep=keep)
    assert kept.tolist() == sorted(set(kept.tolist()))  # ascending, no repeats
    kept_set = set(kept.tolist())
    groups = columns_groups(M) if M.shape[0] else {(): list(range(M.shape[1]))}
    for members in groups.values():
        assert len(kept_set & set(members)) == min(keep, len(members))


@given(matrices(min_tests=1), seeds)
def test_dedupe_among_restricts_candidates_but_keeps_original_numbering(M, seed):
    among = pm.hide_tests(M)
    kept = pm.dedupe_tests(M, rng=np.random.default_rng(seed), among=among)
    assert set(kept.tolist()) <= set(among.tolist())
    sub = pm.dedupe_tests(M[:, among], rng=np.random.default_rng(seed))
    assert len(sub) == len(kept)


def test_dedupe_is_reproducible_per_seed_and_random_across_seeds():
    M = np.ones((4, 10), dtype=bool)
    first = [pm.dedupe_tests(M, rng=np.random.default_rng(s)).tolist() for s in range(200)]
    again = [pm.dedupe_tests(M, rng=np.random.default_rng(s)).tolist() for s in range(200)]
    assert first == again
    chosen = Counter(k[0] for k in first)
    assert set(chosen) == set(range(10))  # every representative gets its chance
    assert max(chosen.values()) < 45  # ~20 expected each


def test_dedupe_rejects_keep_below_one_and_out_of_range_indices():
    rng = np.random.default_rng(0)
    with pytest.raises(ConfigError):
        pm.dedupe_tests(DEGENERATE["all_pass"], rng=rng, keep=0)
    with pytest.raises(ConfigError):
        pm.dedupe_tests(DEGENERATE["all_pass"], rng=rng, among=[0, 6])


# ---------------------------------------------------------------- adversarial selection


def adversarial_by_brute_force(M: np.ndarray) -> list[int] | None:
    """The released rule on the band path, written plainly; None when the band holds fewer than three."""
    n, t = M.shape
    rates = [M[i].sum() / t if t else 0.0 for i in range(n)]
    top = sorted(range(n), key=lambda i: -rates[i])[:2]
    band = [i for i in range(n) if i not in top and 0.4 <= rates[i] < 0.9]
    if len(band) < 3:
        return None
    best, best_key = None, None
    for a, b, c in itertools.combinations(band, 3):
        d = [int((M[x] != M[y]).sum()) for x, y in ((a, b), (a, c), (b, c))]
        key = (min(d), sum(d))
        if best_key is None or key > best_key:
            best, best_key = (a, b, c), key
    return sorted(top + list(best))


@settings(max_examples=300)
@given(matrices(max_solutions=16, max_tests=12), seeds)
def test_adversarial_selection_matches_the_released_rule_and_never_crashes(M, seed):
    sel = pm.select_adversarial(M, rng=np.random.default_rng(seed))
    n = M.shape[0]
    assert len(sel) == min(n, 5)
    assert sel.indices.tolist() == sorted(set(sel.indices.tolist()))
    expected = adversarial_by_brute_force(M)
    if expected is not None:
        assert sel.indices.tolist() == expected
        assert sel.notes == ()
    else:
        assert pm.RANDOM_FALLBACK in sel.notes
    rates = pm.solution_pass_rates(M)
    if n:
        assert rates[sel.indices].max() == rates.max()  # the best program is always shown
    assert (pm.TOO_FEW_SOLUTIONS in sel.notes) == (n < 5)


def test_adversarial_fallback_draws_above_min_rate_then_fills_from_the_rest():
    M = np.zeros((8, 10), dtype=bool)
    M[0, :] = True  # rate 1.0
    M[1, :9] = True  # 0.9 (outside the half-open band)
    M[2, :2] = True  # 0.2: eligible for the fallback
    M[3, :1] = True  # 0.1: not eligible (rate must exceed 0.1)
    sel = pm.select_adversarial(M, rng=np.random.default_rng(0))
    assert sel.notes == (pm.RANDOM_FALLBACK, pm.FILLED_FROM_REST)
    assert {0, 1, 2, 3} <= set(sel.indices.tolist())  # the fill prefers the higher rate (0.1) first
    assert len(sel) == 5 and sel.improvised


def test_adversarial_band_triple_search_is_exact_on_a_large_band():
    rng = np.random.default_rng(7)
    rates = rng.uniform(0.45, 0.85, size=70)
    M = rng.random((70, 40)) < rates[:, None]
    sel = pm.select_adversarial(M, rng=rng)
    assert sel.indices.tolist() == adversarial_by_brute_force(M)


def test_adversarial_selection_with_other_counts_uses_the_general_exact_search():
    rng = np.random.default_rng(3)
    M = rng.random((12, 15)) < 0.65
    sel = pm.select_adversarial(M, rng=rng, n_top=1, n_diverse=4, band=(0.0, 1.0))
    top = int(np.argmax(pm.solution_pass_rates(M)))
    D = pm.hamming_distances(M)

    def key(combo):
        d = [D[a, b] for a, b in itertools.combinations(combo, 2)]
        return (min(d), sum(d))

    band = [i for i in range(12) if i != top]
    best = max(itertools.combinations(band, 4), key=key)  # first best in lexicographic order
    assert sel.indices.tolist() == sorted([top, *best])


@pytest.mark.parametrize("name", sorted(DEGENERATE))
def test_selections_handle_degenerate_matrices(name):
    M = DEGENERATE[name]
    for fn in (pm.select_adversarial, pm.select_similar):
        sel = fn(M, rng=np.random.default_rng(0))
        assert len(sel) == min(M.shape[0], 5)
        assert sel.indices.dtype == np.int64


# ---------------------------------------------------------------- similar selection


@settings(max_examples=300)
@given(matrices(max_solutions=14, max_tests=6), seeds)
def test_similar_selection_takes_a_duplicate_group_then_the_closest(M, seed):
    sel = pm.select_similar(M, rng=np.random.default_rng(seed))
    n = M.shape[0]
    assert len(sel) == min(n, 5)
    if n <= 5:
        return
    D = pm.hamming_distances(M)
    rows = [tuple(r) for r in M.tolist()]
    counts = Counter(rows)
    chosen = sel.indices.tolist()
    if max(counts.values()) < 2:
        assert sel.notes == (pm.NO_DUPLICATES,)
        total = D.sum(axis=1)
        assert sorted(total[chosen]) == sorted(total)[:5]
        return
    assert sel.notes[0] == pm.DUPLICATE_GROUP

    def explained_by(group):
        members = [i for i in range(n) if rows[i] == group]
        if len(members) >= 5:
            return all(rows[i] == group for i in chosen)
        if not set(members) <= set(chosen):
            return False
        others = sorted(D[members[0], i] for i in range(n) if i not in members)
        picked = sorted(D[members[0], i] for i in chosen if i not in members)
        return picked == others[: len(picked)]

    # Some duplicated pass vector among the chosen programs explains the whole choice.
    assert any(explained_by(r) for r in {rows[i] for i in chosen} if counts[r] >= 2)


def test_similar_selection_picks_groups_in_proportion_to_their_size():
    M = np.array([[1, 0]] * 4 + [[0, 1]] * 2 + [[1, 1]], dtype=bool)  # groups of 4 and 2, one loner
    big = 0
    for seed in range(600):
        sel = pm.select_similar(M, rng=np.random.default_rng(seed), k=2)
        assert sel.notes == (pm.DUPLICATE_GROUP,)
        big += set(sel.indices.tolist()) <= {0, 1, 2, 3}
    assert 0.58 < big / 600 < 0.75  # 2/3 expected


def test_similar_selection_is_reproducible_per_seed():
    M = np.random.default_rng(1).random((30, 8)) < 0.5
    a = [pm.select_similar(M, rng=np.random.default_rng(s)).indices.tolist() for s in range(20)]
    b = [pm.select_similar(M, rng=np.random.default_rng(s)).indices.tolist() for s in range(20)]
    assert a == b


# ---------------------------------------------------------------- final filter


@settings(max_examples=300)
@given(matrices(max_solutions=70, max_tests=20), seeds)
def test_final_filter_applies_rate_group_and_problem_rules(M, seed):
    out = pm.final_filter_outcome(M, rng=np.random.default_rng(seed))
    short = pm.final_filter(M, rng=np.random.default_rng(seed))
    rates = pm.test_pass_rates(M)
    kept = out.kept.tolist()
    assert kept == sorted(set(kept))
    assert all(rates[j] >= 0.1 for j in kept)
    good = [j for j in range(M.shape[1]) if rates[j] >= 0.1]
    per_group = Counter(tuple(M[:, j].tolist()) for j in kept)
    all_groups = Counter(tuple(M[:, j].tolist()) for j in good)
    assert all(per_group[g] == min(5, size) for g, size in all_groups.items())
    perfect = int(M[:, kept].all(axis=1).sum()) if M.shape[0] else 0
    assert out.perfect == perfect
    expected_reason = "too_few_tests" if len(kept) < 5 else ("too_many_perfect" if perfect > 60 else None)
    assert out.drop_reason == expected_reason
    assert (short is None) == out.dropped
    if short is not None:
        assert short.tolist() == kept
    assert out.low_rate + out.duplicates + len(kept) == M.shape[1]


@pytest.mark.parametrize(
    "name, reason",
    [
        ("no_solutions", "too_few_tests"),  # no evidence: every rate is 0
        ("no_tests", "too_few_tests"),
        ("nothing", "too_few_tests"),
        ("all_pass", None),  # six identical tests: five kept; eight perfect programs is not too many
        ("all_fail", "too_few_tests"),
        ("three_solutions", "too_few_tests"),
    ],
)
def test_final_filter_handles_degenerate_problems(name, reason):
    out = pm.final_filter_outcome(DEGENERATE[name], rng=np.random.default_rng(0))
    assert out.drop_reason == reason
    if name == "all_pass":
        assert len(out.kept) == 5 and out.perfect == 8 and out.duplicates == 1


def test_final_filter_drops_problems_with_more_than_sixty_perfect_solutions():
    rng = np.random.default_rng(0)
    varied = np.ones((60, 5), dtype=bool)
    varied[np.arange(5), np.arange(5)] = False  # five distinct tests, 55 perfect solutions
    kept = pm.final_filter(varied, rng=rng)
    assert kept is not None and kept.tolist() == [0, 1, 2, 3, 4]
    assert pm.final_filter(np.ones((60, 5), dtype=bool), rng=rng) is not None  # 60 perfect: kept
    more = np.vstack([varied, np.ones((6, 5), dtype=bool)])  # 61 perfect
    assert pm.final_filter(more, rng=rng) is None
    assert pm.final_filter_outcome(more, rng=rng).drop_reason == "too_many_perfect"
    assert pm.final_filter(more, rng=rng, max_perfect=61) is not None


def test_final_filter_thresholds_are_validated():
    with pytest.raises(ConfigError):
        pm.final_filter(DEGENERATE["all_pass"], rng=np.random.default_rng(0), max_per_group=0)
    with pytest.raises(ConfigError):
        pm.final_filter(DEGENERATE["all_pass"], rng=np.random.default_rng(0), min_pass_rate=-0.1)
