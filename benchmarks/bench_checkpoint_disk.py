"""Disk used by a recipe run's stage checkpoints, per problem and per stage.

Run: .venv/bin/python benchmarks/bench_checkpoint_disk.py [--problems 40] [--rounds 2] [--mutants 8]

The recipe runs end to end on HumanEval seeds against a loopback OpenAI-compatible server that answers instantly
(the refine stage keeps the seeds' own asserts, the pool is a stub program per model sample plus AST mutants, the
test writer proposes nothing), so the checkpoints hold what a real run's hold, minus the LLM's text. It prints,
per folder under ``<output_dir>/stages``, the bytes of the saved dataset and of any other file written into it
(``datasets`` writes the next stage's ``Dataset.map`` cache next to its input's data files), and the totals per
problem.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = tempfile.mkdtemp(prefix="ecd-bench-checkpoints-")
os.environ.setdefault("HF_HOME", ROOT)
os.environ["HF_DATASETS_CACHE"] = os.path.join(ROOT, "datasets")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from datasets import disable_progress_bars

from evolvecoder_datasets.llm import LLMConfig
from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
from evolvecoder_datasets.recipe import RecipeConfig, run_recipe
from evolvecoder_datasets.stages.evolve import EvolveConfig
from evolvecoder_datasets.stages.execute import ExecuteConfig
from evolvecoder_datasets.stages.finalize import FinalizeConfig
from evolvecoder_datasets.stages.refine import RefineConfig
from evolvecoder_datasets.stages.sample import ModelSpec
from evolvecoder_datasets.stages.support.resources import close_backends


def answer(body: dict) -> str | list[str]:
    """Instant answers: a stub program per solve sample, no new tests for the test writer."""
    if body.get("model") == "pool":
        return ["```python\ndef unused():\n    return None\n```"] * int(body.get("n", 1))
    return '{"tests": []}'


def folder_bytes(folder: Path) -> tuple[int, int]:
    """``(saved, other)``: bytes of the files ``save_to_disk`` wrote, and of anything else in the folder."""
    saved = other = 0
    for path in folder.rglob("*"):
        if not path.is_file():
            continue
        if path.name.startswith("cache-"):
            other += path.stat().st_size
        else:
            saved += path.stat().st_size
    return saved, other


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--mutants", type=int, default=8)
    parser.add_argument("--samples", type=int, default=8, help="stub samples per problem")
    args = parser.parse_args()
    disable_progress_bars()
    output = Path(ROOT) / "run"
    with ScriptedOpenAIServer(answer) as server:
        llm = LLMConfig(model="writer", base_url=server.base_url, max_retries=0)
        config = RecipeConfig(
            output_dir=str(output), store="none", sources=("humaneval",), limit_per_source=args.problems,
            dedup=False, rounds=args.rounds, llm=llm, models=(ModelSpec("pool", llm.replace(model="pool"),
                                                                        n=args.samples),),
            mutants=args.mutants, refine=RefineConfig(ask=False, min_tests=1), evolve=EvolveConfig(num_tests=3),
            finalize=FinalizeConfig(min_tests=1), execute=ExecuteConfig(mode="fast", workers=2), figures=False,
        )
        run_recipe(config)
    close_backends()
    rows, total_saved, total_other = [], 0, 0
    for folder in sorted(p for p in (output / "stages").iterdir() if p.is_dir() and not p.name.startswith(".")):
        saved, other = folder_bytes(folder)
        total_saved += saved
        total_other += other
        rows.append((folder.name, saved, other))
    n = args.problems
    print(f"{'stage':<14}{'saved KB/problem':>18}{'other KB/problem':>18}")
    for name, saved, other in rows:
        print(f"{name:<14}{saved / n / 1024:>18.1f}{other / n / 1024:>18.1f}")
    print(f"{'total':<14}{total_saved / n / 1024:>18.1f}{total_other / n / 1024:>18.1f}")
    print(json.dumps({"problems": n, "stages": len(rows), "saved_bytes": total_saved, "other_bytes": total_other,
                      "bytes_per_problem": (total_saved + total_other) / n}))


if __name__ == "__main__":
    main()
