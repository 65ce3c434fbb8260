"""Loading a round revision from a local store: `load_round` (cold and warm) against a fresh `git clone` + `load_dataset`.

Run: .venv/bin/python benchmarks/bench_rounds.py [--rows 20000] [--repeats 5]
The baseline is what a user does without the store's cache: clone the branch, then load the folder.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = tempfile.mkdtemp(prefix="ecd-bench-rounds-")
os.environ.setdefault("HF_HOME", ROOT)
os.environ["HF_DATASETS_CACHE"] = os.path.join(ROOT, "datasets")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from datasets import Dataset, disable_progress_bars, load_dataset  # noqa: E402

from evolvecoder_datasets.rounds import load_round, push_round  # noqa: E402


def rows(n: int) -> Dataset:
    return Dataset.from_dict({
        "id": [f"TACO_{i}" for i in range(n)],
        "question": [f"Write f{i}(x) returning x squared plus {i}." * 4 for i in range(n)],
        "tests": [[f"assert f{i}({t}) == {t * t + i}" for t in range(15)] for i in range(n)],
    })


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    disable_progress_bars()
    store = Path(ROOT) / "store"
    push_round(rows(args.rows), store, 0)
    push_round(rows(args.rows), store, 1)

    def baseline() -> None:
        with tempfile.TemporaryDirectory(dir=ROOT) as tmp:
            subprocess.run(["git", "clone", "-q", "--branch", "round1", "--depth", "1", f"file://{store}", tmp],
                           check=True)
            load_dataset(tmp, split="train", cache_dir=os.path.join(tmp, ".cache"))

    base = [timed(baseline) for _ in range(args.repeats)]
    cold = [timed(lambda i=i: load_round(store, 1, cache_dir=os.path.join(ROOT, f"cold{i}"))) for i in range(args.repeats)]
    load_round(store, 1)
    warm = [timed(lambda: load_round(store, 1)) for _ in range(args.repeats)]
    b, c, w = (statistics.median(x) for x in (base, cold, warm))
    print(f"rows={args.rows} repeats={args.repeats} (median seconds)")
    print(f"baseline git clone + load_dataset : {b:.3f}s")
    print(f"load_round cold (archive + build) : {c:.3f}s  ({b / c:.2f}x baseline speed)")
    print(f"load_round warm (cache hit)       : {w:.3f}s  ({b / w:.2f}x baseline speed)")


if __name__ == "__main__":
    main()
