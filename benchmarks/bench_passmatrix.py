"""Program selection and filters: our vectorised numpy versus plain-Python loops written as the released code runs.

Run: .venv/bin/python benchmarks/bench_passmatrix.py

Each case checks that both sides give the same answer, then reports the median time of several repeats and
the ratio baseline / ours (higher is better for us).
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
import time
from collections import defaultdict

import numpy as np

from evolvecoder_datasets import metrics
from evolvecoder_datasets import passmatrix as pm


def best_triple_loops(rows: list[list[bool]], candidates: list[int]) -> tuple[int, ...]:
    """The released search: every triple, pairwise distances recounted in Python."""

    def dist(a, b):
        return sum(x != y for x, y in zip(rows[a], rows[b]))

    best, best_min, best_total = None, -1, -1
    for a, b, c in itertools.combinations(candidates, 3):
        d1, d2, d3 = dist(a, b), dist(a, c), dist(b, c)
        m, t = min(d1, d2, d3), d1 + d2 + d3
        if m > best_min or (m == best_min and t > best_total):
            best, best_min, best_total = (a, b, c), m, t
    return best


def best_triple_table(rows: list[list[bool]], candidates: list[int]) -> tuple[int, ...]:
    """A fairer plain-Python baseline: distances counted once into a table, then every triple."""
    D = {(a, b): sum(x != y for x, y in zip(rows[a], rows[b])) for a in candidates for b in candidates}
    best, best_key = None, (-1, -1)
    for a, b, c in itertools.combinations(candidates, 3):
        d1, d2, d3 = D[a, b], D[a, c], D[b, c]
        key = (min(d1, d2, d3), d1 + d2 + d3)
        if key > best_key:
            best, best_key = (a, b, c), key
    return best


def final_filter_loops(rows: list[list[bool]], rnd: random.Random) -> int:
    """The released final filter: per-test rates, grouping by tuple, random sample per group."""
    n, t = len(rows), len(rows[0])
    columns = [[rows[i][j] for i in range(n)] for j in range(t)]
    low = {j for j, col in enumerate(columns) if sum(col) / len(col) < 0.1}
    groups = defaultdict(list)
    for j, col in enumerate(columns):
        if j not in low:
            groups[tuple(col)].append(j)
    kept = []
    for members in groups.values():
        kept += members if len(members) <= 5 else rnd.sample(members, 5)
    return len(kept)


def pass_at_k_comb(ns, cs, k):
    return [1.0 if n - c < k else 1 - math.comb(n - c, k) / math.comb(n, k) for n, c in zip(ns, cs)]


def timeit(fn, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    rng = np.random.default_rng(0)
    print("| case | baseline (plain Python) | ours (numpy) | ratio |")
    print("|---|---:|---:|---:|")

    # 1. the band search: 64 solutions all in the band, 40 tests -> C(64, 3) = 41,664 triples
    M = rng.random((66, 40)) < rng.uniform(0.45, 0.85, size=66)[:, None]
    M[:2] = True  # the two top solutions, outside the band
    rows = M.tolist()
    band = list(range(2, 66))
    expected = best_triple_loops(rows, band)
    got = pm.select_adversarial(M, rng=np.random.default_rng(0))
    assert got.indices.tolist() == sorted([0, 1, *expected]), (got, expected)
    base = timeit(lambda: best_triple_loops(rows, band), repeats=3)
    ours = timeit(lambda: pm.select_adversarial(M, rng=np.random.default_rng(0)), repeats=9)
    print(
        f"| adversarial selection, 64 in band x 40 tests | {base * 1e3:.0f} ms | {ours * 1e3:.2f} ms | {base / ours:.0f}x |"
    )
    assert best_triple_table(rows, band) == expected
    base = timeit(lambda: best_triple_table(rows, band), repeats=3)
    print(
        f"| same, baseline with a precomputed distance table | {base * 1e3:.0f} ms | {ours * 1e3:.2f} ms "
        f"| {base / ours:.0f}x |"
    )

    # 2. the final filter on a 64 x 200 matrix with many duplicate columns
    M = rng.random((64, 40)) < 0.6
    M = M[:, rng.integers(0, 40, size=200)]
    rows = M.tolist()
    assert final_filter_loops(rows, random.Random(0)) == len(
        pm.final_filter_outcome(M, rng=np.random.default_rng(0), min_tests=0).kept
    )
    base = timeit(lambda: final_filter_loops(rows, random.Random(0)))
    ours = timeit(lambda: pm.final_filter_outcome(M, rng=np.random.default_rng(0)), repeats=9)
    print(
        f"| final filter, 64 x 200 tests | {base * 1e3:.2f} ms | {ours * 1e3:.2f} ms | {base / ours:.1f}x |"
    )

    # 3. pass@k for 20,000 problems of 64 samples
    ns = [64] * 20_000
    cs = rng.integers(0, 65, size=20_000).tolist()
    ref = pass_at_k_comb(ns, cs, 8)
    assert np.allclose(metrics.pass_at_k(ns, cs, 8), ref, rtol=1e-10, atol=1e-12)
    base = timeit(lambda: pass_at_k_comb(ns, cs, 8))
    n_arr, c_arr = np.asarray(ns), np.asarray(cs)
    ours = timeit(lambda: metrics.pass_at_k(n_arr, c_arr, 8), repeats=9)
    print(
        f"| pass@8, 20,000 problems x 64 samples | {base * 1e3:.1f} ms | {ours * 1e3:.2f} ms | {base / ours:.0f}x |"
    )


if __name__ == "__main__":
    main()
