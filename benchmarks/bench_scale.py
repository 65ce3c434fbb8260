"""Where a recipe run's executions go, per problem, at two sizes: does anything grow faster than the problems?

Run: .venv/bin/python benchmarks/bench_scale.py [--sizes 12 40] [--mutants 8] [--before /tmp/wt_base] [--engines local ray] [--json out.json]

Each size runs ``recipes/configs/search_only.yaml`` with ``rounds: 2``, ``mutants: 8`` (``--mutants``), the first N HumanEval
problems, ``store: none`` and no figures, in a fresh output folder with a fresh oracle cache, in a child process of its own (so the sandbox's
per-process counters start at zero). With ``--before TREE`` the same sizes run again on the code of another
checkout (a git worktree of the base commit), back to back, and the table shows both and their ratio.

Printed per size and tree:

- executions (tests and stdin cases sent to this machine's execution service) per problem, by stage: round-0
  execute, the rounds' search writer, reference checks (the statistics' reference verdicts), the fidelity oracle's
  build (candidates, value reads, the reference's own check of its asserts), labelling (pool, rewrites and domain
  variants on the oracle), the fidelity of each round (rewrites on the new tests), other;
- the oracle's share of all executions (build + labelling + each round's fidelity);
- the driver process's CPU (``resource.getrusage(RUSAGE_SELF)``, user + system, over the whole run) per execution
  and per job;
- the driver's CPU per problem by progress step of the recipe (each stage, the fidelity oracle, each round's
  measurements, publishing; a step's own CPU, without the steps nested in it; rounds added up), so what grows with
  the problems or the pool shows between the two sizes;
- an extrapolation to the paper's 22k problems x 64 programs per problem on one 64-core machine.

A stage is found by walking the caller's stack when a batch is sent (a few microseconds per request, the same for
both trees). The service's own CPU is not in the driver's figure: it is the per-execution cost the cores pay.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PAPER_PROBLEMS, PAPER_PROGRAMS, PAPER_CORES = 22_000, 64, 64

# function name on the caller's stack -> stage (the innermost match wins)
STAGES = {
    "_build_one": "oracle build", "build_oracles": "oracle build", "stdio_oracle": "oracle build",
    "label_programs": "labelling", "label_stdio_programs": "labelling",
    "_rewrite_matrix": "round fidelity", "final_rules": "round fidelity",
    "reference_verdicts": "reference checks", "_run_references": "reference checks",
    "search_tests": "rounds' search", "value_inputs": "rounds' search", "_value_one": "rounds' search",
    "execute_dataset": "round-0 execute",
}
ORDER = ["round-0 execute", "rounds' new tests", "rounds' search", "reference checks", "oracle build", "labelling", "round fidelity",
         "other"]
ORACLE = ("oracle build", "labelling", "round fidelity")


PHASE = ["rounds' new tests"]  # what the streamed jobs (threads "ecd-stream") belong to: round 0's, then the rounds'


def _stage() -> str:
    import threading

    if threading.current_thread().name.startswith("ecd-stream"):
        return PHASE[0]
    frame = sys._getframe(2)
    while frame is not None:
        stage = STAGES.get(frame.f_code.co_name)
        if stage is not None:
            return stage
        frame = frame.f_back
    return "other"


def _step_name(text: str) -> str:
    """A progress step's text without its round number or counts: ``round 1: the search`` -> ``round r: ...``."""
    import re

    return re.sub(r"\bround ?\d+", "round r", text.split(" (")[0]).strip()


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _patch_steps(driver: dict[str, float], main: dict[str, float] | None = None) -> None:
    """Count the driver process's CPU (all its threads) per progress step of the recipe, exclusive of the steps
    nested in it, into ``driver`` (step name -> CPU seconds); the CPU outside any step goes to ``outside steps``.
    ``main`` gets the main thread's own CPU per step (without Ray's client threads, which run with the wall time;
    without the streamed stages' threads either)."""
    import contextlib

    from evolvecoder_datasets.recipe import checkpoints, pipeline, progress

    stack: list[list] = []  # [name, start CPU, CPU of nested steps, start main-thread CPU, its nested steps']
    original = progress.stepping
    main = {} if main is None else main

    @contextlib.contextmanager
    def counted(text: str):
        stack.append([_step_name(text), _cpu_s(), 0.0, time.thread_time(), 0.0])
        try:
            with original(text):
                yield
        finally:
            name, start, inner, main_start, main_inner = stack.pop()
            spent, main_spent = _cpu_s() - start, time.thread_time() - main_start
            driver[name] = driver.get(name, 0.0) + spent - inner
            main[name] = main.get(name, 0.0) + main_spent - main_inner
            if stack:
                stack[-1][2] += spent
                stack[-1][4] += main_spent

    progress.stepping = checkpoints.stepping = pipeline.stepping = counted


def child(n: int, out: str, mutants: int = 8, engine: str = "local") -> None:
    """One recipe run of the first ``n`` HumanEval problems with ``mutants`` AST mutants per problem (``engine``
    ``ray``: on a private local Ray instance with this machine's cores); its counts and CPU written to ``out`` as
    JSON, with a digest of the rounds' suites (equal on both engines)."""
    root = tempfile.mkdtemp(prefix="ecd-bench-scale-")
    os.environ["HF_HOME"] = root
    os.environ["HF_DATASETS_CACHE"] = os.path.join(root, "datasets")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from datasets import disable_progress_bars

    import evolvecoder_datasets
    from evolvecoder_datasets.config import load_config
    from evolvecoder_datasets.execution import sandbox as sandbox_module
    from evolvecoder_datasets.recipe import run_recipe

    disable_progress_bars()
    by_stage: dict[str, dict[str, int]] = {}
    original = sandbox_module.Sandbox._execute_many

    def counted(self, jobs):
        entry = by_stage.setdefault(_stage(), {"jobs": 0, "tests": 0})
        entry["jobs"] += len(jobs)
        entry["tests"] += sum(j.size for j in jobs)
        return original(self, jobs)

    sandbox_module.Sandbox._execute_many = counted
    from evolvecoder_datasets.stages import execute as execute_module

    execute_dataset = execute_module.execute_dataset

    pool: list[float] = []

    def round0(*args, **kwargs):  # the recipe imports it when round 0 runs
        ds = args[0] if args else kwargs["ds"]
        pool.append(sum(len(s) for s in ds["solutions"]) / max(len(ds), 1))  # programs per problem, measured
        PHASE[0] = "round-0 execute"
        try:
            return execute_dataset(*args, **kwargs)
        finally:
            PHASE[0] = "rounds' new tests"

    execute_module.execute_dataset = round0
    overrides = {"output_dir": os.path.join(root, "run"), "rounds": 2, "mutants": mutants, "limit_per_source": n,
                 "store": "none", "figures": False}
    if engine == "ray":
        overrides["distributed"] = {"engine": "ray", "num_cpus": os.cpu_count(), "shard_size": 4, "progress": False,
                                    "object_store_memory_mb": 256, "temp_dir": tempfile.mkdtemp(prefix="r")}
    _, config = load_config(HERE.parent / "recipes" / "configs" / "search_only.yaml", overrides)
    driver: dict[str, float] = {}
    main_thread: dict[str, float] = {}
    _patch_steps(driver, main_thread)
    counts0 = sandbox_module.local_counts()
    usage0, wall0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    result = run_recipe(config, progress=False)
    usage1, wall1 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    driver["outside steps"] = (usage1.ru_utime - usage0.ru_utime) + (usage1.ru_stime - usage0.ru_stime) \
        - sum(driver.values())
    counts1 = sandbox_module.local_counts()
    fidelity = ((result.stats[-1] or {}).get("fidelity") or {}) if getattr(result, "stats", None) else {}
    import hashlib

    suites = [[list(ds[c]) for c in ("id", "tests", "pass_matrix", "test_origin")] for ds in result.rounds]
    Path(out).write_text(json.dumps({
        "tree": str(Path(evolvecoder_datasets.__file__).resolve().parent.parent), "problems": n,
        "by_stage": by_stage, "wall_s": wall1 - wall0, "driver_by_step": driver, "main_thread_by_step": main_thread,
        "cpu_s": (usage1.ru_utime - usage0.ru_utime) + (usage1.ru_stime - usage0.ru_stime),
        "jobs": counts1["jobs"] - counts0["jobs"], "tests": counts1["tests"] - counts0["tests"],
        "mutants": mutants, "programs_per_problem": pool[0] if pool else _programs_per_problem(result.rounds[0]),
        "oracle": fidelity.get("oracle", {}).get("problems"), "suite": fidelity.get("suite"),
        "sample": getattr(config.fidelity, "sample", None), "engine": engine,
        "suites_digest": hashlib.sha256(json.dumps(suites, sort_keys=True).encode()).hexdigest()[:16]}))


def _programs_per_problem(round0) -> float:
    """Programs per problem of round 0's pool (on Ray, where round 0 is not this process's ``execute_dataset``)."""
    return sum(len(s) for s in round0["solutions"]) / max(len(round0), 1)


def measure(n: int, tree: Path, mutants: int = 8, engine: str = "local") -> dict:
    """Run :func:`child` for ``n`` problems in a fresh interpreter importing the package from ``tree``."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    # a fresh oracle cache per run: each size and tree builds its own oracles (what a first run pays)
    with tempfile.TemporaryDirectory(prefix="bench-scale-oracles-") as cache:
        env = {**os.environ, "PYTHONPATH": str(tree), "EVOLVECODER_ORACLE_CACHE": os.path.join(cache, "oracles")}
        subprocess.run([sys.executable, __file__, "--child", str(n), "--out", out, "--mutants", str(mutants),
                        "--engine", engine], env=env, check=True)  # fmt: skip
    return json.loads(Path(out).read_text())


def summary(m: dict) -> dict:
    """Per-problem executions and jobs by stage, the oracle's share, the driver's CPU per execution and per job."""
    n, total = m["problems"], sum(e["tests"] for e in m["by_stage"].values())
    stages = {s: m["by_stage"].get(s, {"tests": 0})["tests"] / n for s in ORDER}
    jobs_by = {s: m["by_stage"].get(s, {"jobs": 0})["jobs"] / n for s in ORDER}
    oracle = sum(stages[s] for s in ORACLE)
    jobs = sum(e["jobs"] for e in m["by_stage"].values())
    return {"per_problem": stages, "jobs_by_stage": jobs_by, "total_per_problem": total / n,
            "oracle_share": oracle * n / total if total else 0,
            "driver_us_per_execution": 1e6 * m["cpu_s"] / max(total, 1), "driver_us_per_job": 1e6 * m["cpu_s"] / max(jobs, 1),
            "jobs_per_problem": jobs / n, "wall_s": m["wall_s"], "driver_cpu_s": m["cpu_s"],
            "driver_ms_per_problem_by_step": {k: 1e3 * v / n for k, v in (m.get("driver_by_step") or {}).items()}}


GROWING = ("round-0 execute", "rounds' new tests", "labelling", "round fidelity")  # one job or test per program


def _paper(per: dict, pool: float, sample: int | None) -> tuple[float, float]:
    """(everything, the oracle's part) at 22k problems x 64 programs from per-problem figures by stage."""
    scale = PAPER_PROGRAMS / pool
    oracle_problems = PAPER_PROBLEMS if sample is None else min(sample, PAPER_PROBLEMS)
    oracle = oracle_problems * sum(per[s] * (scale if s in GROWING else 1) for s in ORACLE)
    rest = PAPER_PROBLEMS * sum(per[s] * (scale if s in GROWING else 1) for s in ORDER if s not in ORACLE)
    return rest + oracle, oracle


def extrapolate(s: dict, pool: float, exec_per_s_per_core: float, sample: int | None) -> str:
    """The paper-scale run (22k problems, 64 programs each) from this run: what runs each program (round-0 execute,
    the rounds' new tests, labelling, the rewrites' fidelity) grows with the pool, the rest stays per problem, and
    the oracle's stages run on ``sample`` problems only (``None``: all). Tests per problem stay this run's."""
    executions, oracle = _paper(s["per_problem"], pool, sample)
    jobs, _ = _paper(s["jobs_by_stage"], pool, sample) if "jobs_by_stage" in s else (0.0, 0.0)
    service_h = executions / (exec_per_s_per_core * PAPER_CORES) / 3600
    driver_h = jobs * s["driver_us_per_job"] * 1e-6 / 3600
    return (f"{executions / 1e6:,.0f}M executions ({100 * oracle / executions:.1f}% the oracle's), {jobs / 1e6:.1f}M "
            f"jobs: service {service_h:.2f} h on {PAPER_CORES} cores at {exec_per_s_per_core:,.0f}/s/core; driver "
            f"{driver_h:.1f} h of one core at this run's CPU per job")


# progress steps whose driver work is per program of the pool (round 0 runs every program; the search writer's
# bookkeeping follows its targets, the programs the suite has not killed)
POOL_STEPS = ("round r: new tests", "round r: every program")


def driver_by_steps(steps_ms: dict[str, float], pool: float, sample: int | None) -> str:
    """The driver's CPU at 22k problems x 64 programs from its CPU per problem by step: the per-program steps scale
    with the pool, the fidelity oracle runs on ``sample`` problems only, the rest stays per problem."""
    scale = PAPER_PROGRAMS / pool
    oracle_problems = PAPER_PROBLEMS if sample is None else min(sample, PAPER_PROBLEMS)
    parts: dict[str, float] = {}
    for step, ms in steps_ms.items():
        if step.startswith("the fidelity oracle"):
            parts[step] = ms * oracle_problems / 1e3
        else:
            parts[step] = ms * PAPER_PROBLEMS * (scale if step.startswith(POOL_STEPS) else 1) / 1e3
    total = sum(parts.values())
    top = sorted(parts.items(), key=lambda kv: -kv[1])[:3]
    return (f"{total / 3600:.2f} h of one core; most: "
            + ", ".join(f"{name[:40]} {100 * s / total:.0f}%" for name, s in top))


def show(results: dict[str, dict[int, dict]], pool: float, rate: float, samples: dict[str, int | None]) -> None:
    trees = list(results)
    sizes = sorted({n for r in results.values() for n in r})
    header = "".join(f"{f'{t} N={n}':>18}" for n in sizes for t in trees)
    print(f"\n{'executions per problem':<28}{header}")
    rows = [(s, lambda x, s=s: f"{x['per_problem'][s]:,.0f}") for s in ORDER]
    rows += [("total", lambda x: f"{x['total_per_problem']:,.0f}"),
             ("oracle share", lambda x: f"{100 * x['oracle_share']:.0f}%"),
             ("jobs per problem", lambda x: f"{x['jobs_per_problem']:,.0f}"),
             ("driver CPU us / execution", lambda x: f"{x['driver_us_per_execution']:.1f}"),
             ("driver CPU us / job", lambda x: f"{x['driver_us_per_job']:.0f}"),
             ("driver CPU s", lambda x: f"{x['driver_cpu_s']:.1f}"), ("wall s", lambda x: f"{x['wall_s']:.0f}")]
    for label, fmt in rows:
        print(f"{label:<28}" + "".join(f"{fmt(results[t][n]):>18}" for n in sizes for t in trees))
    if len(trees) == 2 and not any(t.endswith("+ray") for t in trees):
        before, after = trees
        for n in sizes:
            b, a = results[before][n], results[after][n]
            print(f"N={n}: after/before  executions per problem {a['total_per_problem'] / b['total_per_problem']:.3f}, "
                  f"oracle build {a['per_problem']['oracle build'] / max(b['per_problem']['oracle build'], 1e-9):.3f}, "
                  f"labelling {a['per_problem']['labelling'] / max(b['per_problem']['labelling'], 1e-9):.3f}, "
                  f"driver CPU {a['driver_cpu_s'] / b['driver_cpu_s']:.3f}, wall {a['wall_s'] / b['wall_s']:.3f}")
    steps = sorted({k for r in results.values() for x in r.values() for k in x.get("driver_ms_per_problem_by_step", {})},
                   key=lambda k: -max(x.get("driver_ms_per_problem_by_step", {}).get(k, 0)
                                      for r in results.values() for x in r.values()))
    if steps:
        print(f"\n{'driver CPU ms per problem':<28}{header}")
        for step in steps:
            print(f"{step[:27]:<28}" + "".join(
                f"{results[t][n].get('driver_ms_per_problem_by_step', {}).get(step, 0):>18.1f}"
                for n in sizes for t in trees))
    largest = sizes[-1]
    for t in trees:
        steps_ms = results[t][largest].get("driver_ms_per_problem_by_step")
        if steps_ms:
            print(f"driver at paper scale ({t}, from N={largest}): {driver_by_steps(steps_ms, pool, samples.get(t))}")
    for t in trees:
        print(f"paper scale ({t}, from N={largest}): {extrapolate(results[t][largest], pool, rate, samples.get(t))}")


def pool_fit(runs: list[dict]) -> dict[str, tuple[float, float]]:
    """Per progress step, the driver's ms per problem as ``a + b x programs`` (least squares over ``runs``, one run
    per pool size at the same N): ``{step: (a, b)}``.

    Example:
        >>> fit = pool_fit([{"problems": 10, "programs_per_problem": 5.0, "driver_by_step": {"s": 0.2}},
        ...                 {"problems": 10, "programs_per_problem": 10.0, "driver_by_step": {"s": 0.3}}])
        >>> [round(x, 3) for x in fit["s"]]
        [10.0, 2.0]
    """
    xs = [r["programs_per_problem"] for r in runs]
    mean_x = sum(xs) / len(xs)
    spread = sum((x - mean_x) ** 2 for x in xs)
    fit = {}
    for step in sorted({k for r in runs for k in r["driver_by_step"]}):
        ys = [1e3 * r["driver_by_step"].get(step, 0.0) / r["problems"] for r in runs]
        mean_y = sum(ys) / len(ys)
        b = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / spread if spread else 0.0
        fit[step] = (mean_y - b * mean_x, b)
    return fit


def show_pool_fit(tree: str, runs: list[dict], sample: int | None) -> None:
    """The driver's CPU per problem by step at each measured pool, the per-program slope, and the driver at paper
    scale from the fit (the fidelity oracle on ``sample`` problems only; a step's slope taken as 0 where it fell)."""
    fit = pool_fit(runs)
    pools = "".join(f"{'P=' + format(r['programs_per_problem'], '.1f'):>10}" for r in runs)
    print(f"\ndriver CPU ms per problem ({tree}, N={runs[0]['problems']}, by programs per problem P)")
    print(f"{'step':<40}{pools}{'ms/program':>12}{'at P=64':>10}")
    total_s = 0.0
    oracle_problems = PAPER_PROBLEMS if sample is None else min(sample, PAPER_PROBLEMS)
    for step, (a, b) in sorted(fit.items(), key=lambda kv: -(kv[1][0] + max(kv[1][1], 0) * PAPER_PROGRAMS)):
        at64 = a + max(b, 0.0) * PAPER_PROGRAMS
        per = "".join(f"{1e3 * r['driver_by_step'].get(step, 0.0) / r['problems']:>10.1f}" for r in runs)
        print(f"{step[:39]:<40}{per}{b:>12.2f}{at64:>10.1f}")
        total_s += at64 * (oracle_problems if step.startswith("the fidelity oracle") else PAPER_PROBLEMS) / 1e3
    print(f"driver at paper scale ({tree}, fitted on the pool): {total_s / 3600:.2f} h of one core")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[12, 40])
    parser.add_argument("--before", type=Path, help="a checkout of the base commit, run back to back")
    parser.add_argument("--mutants", type=int, nargs="+", default=[8], help="AST mutants asked per problem (the "
                        "run's pool); with two or more, the largest size runs again at each, and the driver's CPU per "
                        "step is fitted against the programs per problem each pool really had")
    parser.add_argument("--pool", type=float, help="programs per problem in this run's pool for the extrapolation "
                        "(default: --mutants; the rewrites and variants stay per problem)")
    parser.add_argument("--from-json", type=Path, help="print the table of an earlier --json run, running nothing")
    parser.add_argument("--rate", type=float, default=1350.0,
                        help="fast-mode executions per second per core of the service (docs/scaling.md)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--engines", nargs="+", choices=["local", "ray"], default=["local"],
                        help="ray: on a private local Ray instance (columns '<tree>+ray'): the driver's CPU by step "
                        "where the stages run as shard tasks; its executions by stage count only the jobs the driver "
                        "sends; with both, each size's suites are compared between the engines")
    parser.add_argument("--engine", default="local", help=argparse.SUPPRESS)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.out, args.mutants[0], args.engine)
        return
    if args.pool is None:
        args.pool = float(args.mutants[0])
    if args.from_json:
        saved = json.loads(args.from_json.read_text())
        results = {t: {int(n): v for n, v in r.items()} for t, r in saved["summary"].items()}
        show(results, args.pool, args.rate, saved.get("samples", {}))
        return
    after_tree = HERE.parent
    trees = {"before": args.before, "after": after_tree} if args.before else {"after": after_tree}
    print(f"load before: {os.getloadavg()[0]:.2f}; trees: {', '.join(f'{k}={v}' for k, v in trees.items())}")
    runs = [(name if engine == "local" else f"{name}+ray", tree, engine)
            for engine in args.engines for name, tree in trees.items()]  # fmt: skip
    results = {name: {} for name, _, _ in runs}
    raw = {name: {} for name, _, _ in runs}
    for n in args.sizes:
        for name, tree, engine in runs:
            raw[name][n] = measure(n, tree, args.mutants[0], engine)
            results[name][n] = summary(raw[name][n])
            print(f"{name} N={n}: {results[name][n]['total_per_problem']:,.0f} executions per problem, "
                  f"{results[name][n]['wall_s']:.0f} s, fidelity {raw[name][n]['suite'] and {k: raw[name][n]['suite'][k] for k in ('tpr', 'tnr')}}",
                  flush=True)
    samples = {t: next(iter(raw[t].values())).get("sample") for t in raw}
    show(results, args.pool, args.rate, samples)
    for name in trees if len(args.engines) == 2 else ():
        for n in args.sizes:
            same = raw[name][n]["suites_digest"] == raw[f"{name}+ray"][n]["suites_digest"]
            print(f"{name} N={n}: the rounds' suites on Ray {'equal' if same else 'DIFFER FROM'} the local run's")
    pools: dict[str, list[dict]] = {}
    if len(args.mutants) > 1:
        largest = max(args.sizes)
        for name, tree, engine in runs:
            pools[name] = [raw[name][largest]] + [measure(largest, tree, m, engine) for m in args.mutants[1:]]
            show_pool_fit(name, pools[name], samples.get(name))
    print(f"load after: {os.getloadavg()[0]:.2f}")
    if args.json:
        args.json.write_text(json.dumps({"summary": results, "raw": raw, "samples": samples, "pools": pools},
                                        indent=1))


if __name__ == "__main__":
    main()
