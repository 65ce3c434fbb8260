"""The recipe's execute stage here and on Ray at equal cores, side by side in one process; and Ray Data beside it.

Run: .venv/bin/python benchmarks/bench_recipe_ray.py [--problems 64] [--mutants 15] [--rounds 3] [--shard-size 8]

The workload is what the recipe's round 0 executes: HumanEval problems (their seed asserts) with a pool of the
reference plus AST mutants (the recipe's sample stage with ``mutants``, no LLM), in the recipe's default isolated
mode. Each round times, on the same dataset:

- local: the recipe's execute step with no ``distributed`` section (``execute_dataset``, one fork server per core);
- ray: the same step with ``distributed: {engine: ray}`` on a private local Ray instance with as many CPUs, warm
  (``execute_distributed``: one coarse task per shard, each driving its own fork server);
- ray-data: Ray Data ``map_batches`` over an actor pool (one actor per core, each keeping one sandbox), the
  alternative issue 13 asks to weigh.

Every round checks that the three give the same pass matrices. Ray's cold start and first (worker warm-up) run are
reported on the side; each Ray round gets a fresh shard store (written as in a first run), so every round computes.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = tempfile.mkdtemp(prefix="ecd-bench-recipe-ray-")
os.environ.setdefault("HF_HOME", ROOT)
os.environ["HF_DATASETS_CACHE"] = os.path.join(ROOT, "datasets")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _timing import timed
from datasets import Dataset, disable_progress_bars

from evolvecoder_datasets.distributed import DistributedConfig, init_ray
from evolvecoder_datasets.llm import LLMConfig
from evolvecoder_datasets.recipe import RecipeConfig, load_seeds
from evolvecoder_datasets.recipe.pipeline import _execute
from evolvecoder_datasets.stages.execute import ExecuteConfig, execute
from evolvecoder_datasets.stages.sample import SampleConfig, sample_dataset


def pool(problems: int, mutants: int) -> Dataset:
    """HumanEval seeds with the recipe's pool: the reference's AST mutants (sampled by the recipe's sample stage)."""
    config = RecipeConfig(sources=("humaneval",), limit_per_source=problems, mutants=mutants, dedup=False,
                          llm=LLMConfig(model="unused"))
    seeds = load_seeds(config)
    seeds = seeds.add_column("reference_solutions", seeds["solutions"]).add_column("reference_ok", [True] * len(seeds))
    pooled = sample_dataset(seeds.remove_columns(["solutions"]), SampleConfig(mutants=mutants, seed=0))
    return Dataset.from_list(pooled.select_columns(["id", "tests", "solutions"]).to_list())  # in memory: no cache


class ExecuteActor:
    """A Ray Data actor that keeps one sandbox (one fork server) for every batch it gets."""

    def __init__(self, config: ExecuteConfig) -> None:
        self.config = dataclasses.replace(config, workers=1)

    def __call__(self, batch):
        import pyarrow as pa

        columns = batch.to_pydict()
        out = execute(columns, config=self.config)
        return pa.table({"id": columns["id"], "pass_matrix": out["pass_matrix"]})


def run_ray_data(ray, ds: Dataset, config: ExecuteConfig, cores: int, batch_size: int) -> dict[str, list]:
    # one block per batch, so every actor gets work; sliced here, as an all-to-all repartition would need a CPU
    # that the actors hold (it waited forever on 2 cores)
    table = ds.data.table
    data = ray.data.from_arrow([table.slice(i, batch_size) for i in range(0, len(ds), batch_size)])
    out = data.map_batches(ExecuteActor, fn_constructor_kwargs={"config": config}, batch_size=batch_size,
                           batch_format="pyarrow", concurrency=cores, num_cpus=1)
    rows = sorted(out.take_all(), key=lambda row: order[row["id"]])
    return {"pass_matrix": [[list(map(bool, r)) for r in row["pass_matrix"]] for row in rows]}


order: dict[str, int] = {}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--problems", type=int, default=64)
    parser.add_argument("--mutants", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--shard-size", type=int, default=8)
    parser.add_argument("--no-ray-data", action="store_true")
    args = parser.parse_args()
    disable_progress_bars()
    cores = len(os.sched_getaffinity(0))
    ds = pool(args.problems, args.mutants)
    order.update({pid: i for i, pid in enumerate(ds["id"])})
    executions = sum(len(s) * len(t) for s, t in zip(ds["solutions"], ds["tests"]))
    execute_cfg = ExecuteConfig(mode="isolated", timeout_s=1.0, statuses=False)
    engine = DistributedConfig(engine="ray", num_cpus=cores, cpus_per_task=1, shard_size=args.shard_size,
                               progress=False)
    base = {"output_dir": os.path.join(ROOT, "run"), "llm": LLMConfig(model="unused"), "mutants": args.mutants,
            "execute": execute_cfg, "batch_size": args.shard_size}
    local_cfg = RecipeConfig(**base)

    def on_ray() -> RecipeConfig:
        """The recipe on Ray with a fresh shard store (as a first run has): every round computes every shard."""
        store = tempfile.mkdtemp(dir=ROOT, prefix="shards-")
        return RecipeConfig(**base, distributed=dataclasses.replace(engine, results_dir=store))

    cold_start, ray = timed(lambda: init_ray(engine))
    if not args.no_ray_data:
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        context.print_on_execution_start = False
    first_run, _ = timed(lambda: _execute(ds, on_ray()))
    first_data = 0.0
    if not args.no_ray_data:
        first_data, _ = timed(lambda: run_ray_data(ray, ds, execute_cfg, cores, args.shard_size))

    times: dict[str, list[float]] = {"local": [], "ray": [], "ray-data": []}
    for _ in range(args.rounds):
        local_s, local = timed(lambda: _execute(ds, local_cfg))
        ray_cfg = on_ray()
        ray_s, remote = timed(lambda cfg=ray_cfg: _execute(ds, cfg))
        assert list(remote["pass_matrix"]) == list(local["pass_matrix"]), "engines disagree"
        times["local"].append(local_s)
        times["ray"].append(ray_s)
        print(f"round: local {local_s:.1f} s, ray {ray_s:.1f} s", flush=True)
        if not args.no_ray_data:
            data_s, data = timed(lambda: run_ray_data(ray, ds, execute_cfg, cores, args.shard_size))
            assert data["pass_matrix"] == list(local["pass_matrix"]), "Ray Data disagrees"
            times["ray-data"].append(data_s)
            print(f"round: ray-data {data_s:.1f} s", flush=True)
    ray.shutdown()

    median = {name: statistics.median(values) for name, values in times.items() if values}
    print(f"workload: {len(ds)} HumanEval problems x (reference + {args.mutants} mutants) x their asserts = "
          f"{executions:,} isolated executions, {cores} cores, shard/batch {args.shard_size}, median of {args.rounds}")
    print(f"ray cold start {cold_start:.1f} s; first shard-scheduler run {first_run:.1f} s; "
          f"first Ray Data run {first_data:.1f} s")
    print("| engine | median | executions/s | vs local |")
    print("|---|---|---|---|")
    for name, value in median.items():
        print(f"| {name} | {value:.2f} s | {executions / value:,.0f} | {value / median['local']:.2f}x time |")


if __name__ == "__main__":
    main()
