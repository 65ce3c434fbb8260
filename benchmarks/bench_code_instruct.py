"""code_instruct benchmark: the price and the payoff of sandboxed, nonce-checked verification, and gate throughput.

Part 1, verification, side by side in one process on the tinytext fixture's virtualenv:

* baseline (Repo2RLEnv style): ``<venv>/bin/python -m pytest`` in a temporary folder, no isolation, the verdict
  read from the exit code and the log (``"passed"`` in the summary, no ``"failed"``/``"error"``);
* ours: :meth:`VenvBackend.run_pytest` (bubblewrap, rlimits, uid drop, launcher, verdict plugin, nonce).

Each side runs the same good task (stage B) ``--runs`` times, alternating; the median wall time per run and the
ratio are reported. Then both judge four hostile or broken solutions; a verdict is correct when only the honest
solution passes.

Part 1b, where the verdicts are decided: :func:`verify_task` judged inside (both stages by pytest, in the
solution's interpreter) against judged outside (the test split into planned asserts, stages A and B in the sandbox
with the repository's venv as the programs' environment, then pytest once as written), interleaved; then both on
the hostile solutions and two forgeries of pytest's verdict.

Part 2, static gates: candidates per second through :func:`run_gates` (all gates, with the HumanEval +
LeetCode n-gram index), and the index build time.

Part 3 (``--real``), yield on real repositories: the sdists of tomli 2.0.1, six 1.16.0 and attrs 23.2.0 from PyPI
(``pip download --no-binary :all: --no-deps``), five seed windows each, answered over HTTP by a scripted competent
model (hand-written tasks per library in ``tests/data/code_instruct/answers/<library>/``, a few planted bad first
attempts among them). Per repository: environment build time, LLM calls, emitted tasks, yield, skip reasons and wall
time per task. Then every emitted task is exported and checked from its folder alone: ``harbor lint`` (when Harbor's
venv exists), a virtualenv rebuilt from ``environment/`` only (the Dockerfile's pinned requirements and ``src/``),
the two verification stages from ``tests/`` and ``solution/patch.diff``, and Harbor's own scripts (``solve.sh``,
``test.sh``): reward 0 without ``task_module.py``, 1 after ``solve.sh``.

Run:
    .venv/bin/python benchmarks/bench_code_instruct.py [--runs 10]
    .venv/bin/python benchmarks/bench_code_instruct.py --real [--out runs/bench_code_instruct]
"""

from __future__ import annotations

import argparse
import functools
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evolvecoder_datasets.code_instruct import (
    DecontaminationIndex,
    Deduplicator,
    VenvBackend,
    open_repository,
    run_gates,
    verify_task_folder,
)
from evolvecoder_datasets.prompts import code_instruct

ANSWERS = ROOT / "tests" / "data" / "code_instruct" / "answers" / "tinytext"
HOSTILE = {
    "honest": None,
    "os._exit(0) at import": "import os\nos._exit(0)\n",
    "sys.exit(0) at import": "import sys\nsys.exit(0)\n",
    "prints a fake summary, then os._exit(0)": "import os\nprint('3 passed in 0.01s')\nos._exit(0)\n",
    "wrong answer": "import tinytext\n\ndef caption_lines(text, width, prefix='> '):\n    return []\n",
}


def baseline_run(python: str, files: dict[str, str], timeout_s: float = 60.0) -> bool:
    """Plain pytest in a temporary folder; pass = exit code 0 and a summary with passes and no failures."""
    work = Path(tempfile.mkdtemp(prefix="bench-baseline-"))
    try:
        for name, text in files.items():
            (work / name).write_text(text)
        proc = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_task.py"], cwd=work,
                              capture_output=True, text=True, timeout=timeout_s, check=False)  # fmt: skip
        log = proc.stdout + proc.stderr
        return proc.returncode == 0 and "failed" not in log and "error" not in log.lower().replace("0 errors", "")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _print_interleaved(what: str, sides: dict, runs: int, first: str) -> None:
    """Run each side's call ``runs`` times, interleaved (load spikes hit every side alike); print the medians and
    their ratio to the first side's."""
    times: dict[str, list[float]] = {side: [] for side in sides}
    for _ in range(runs):
        for side, call in sides.items():
            started = time.perf_counter()
            assert call(), side
            times[side].append(time.perf_counter() - started)
    base = statistics.median(next(iter(times.values())))
    print(f"\n{what}, median wall time of {runs} interleaved runs:")
    for side, values in times.items():
        median = statistics.median(values)
        print(f"  {side:<52} {median * 1000:7.0f} ms  {median / base:5.2f}x {first}")


def part_verification(runs: int) -> None:
    backend = VenvBackend()
    repo = open_repository(ROOT / "tests" / "data" / "code_instruct" / "tinytext")
    env = backend.prepare(repo)
    task = code_instruct.parse((ANSWERS / "good_caption.txt").read_text())
    files = {"test_task.py": task.test, "task_module.py": task.solution}
    print(f"isolation: {backend.isolation}; python: {env.python}")
    baseline_run(env.python, files)
    backend.run_pytest(env, files)  # warm both paths (page cache, bwrap probe)
    plain = VenvBackend(isolation="none", uid=None)
    sides = {
        "baseline (plain pytest, exit code + log)": lambda: baseline_run(env.python, files),
        "ours without isolation (launcher + plugin)": lambda: plain.run_pytest(env, files).passed,
        f"ours ({backend.isolation} + limits + uid + plugin)": lambda: backend.run_pytest(env, files).passed,
    }
    _print_interleaved("stage B run of one task", sides, runs, "baseline")
    print("\nverdicts on hostile or broken solutions (pass?):")
    print(f"  {'solution':<42} {'baseline':>9} {'ours':>6}")
    correct = {"baseline": 0, "ours": 0}
    for name, solution in HOSTILE.items():
        candidate = dict(files, **({} if solution is None else {"task_module.py": solution}))
        b = baseline_run(env.python, candidate)
        o = backend.run_pytest(env, candidate).passed
        expected = solution is None
        correct["baseline"] += b == expected
        correct["ours"] += o == expected
        print(f"  {name:<42} {b!s:>9} {o!s:>6}")
    print(f"  correct verdicts: baseline {correct['baseline']}/{len(HOSTILE)}, ours {correct['ours']}/{len(HOSTILE)}")


class _PytestOnly(VenvBackend):
    """A backend whose environments the sandbox cannot reach: :func:`verify_task` verifies with two pytest runs,
    judged inside (as every task was before issue 23)."""

    def sandbox_settings(self, env):
        return None


FORGERS = {
    "forges the verdict plugin": (
        "import sys\n_p = sys.modules.get('ecd_verdict')\n"
        "if _p is not None:\n    _p._record = lambda nodeid, outcome: _p._RESULTS.__setitem__(nodeid, 'passed')\n"
        "def caption_lines(text, width, prefix='> '):\n    return []\n"),
    "returns a list equal to everything": (
        "class _Yes(list):\n    def __eq__(self, other):\n        return True\n    __hash__ = None\n"
        "def caption_lines(text, width, prefix='> '):\n    return _Yes()\n"),
}


def part_outside(runs: int) -> None:
    """Part 1b: the whole two-stage verification, judged inside (two pytest runs) against judged outside (the split
    test in the sandbox, stages A and B, then pytest once as written), interleaved; then both on forgeries."""
    from evolvecoder_datasets.code_instruct import verify_task

    inside, outside = _PytestOnly(), VenvBackend()
    env = outside.prepare(open_repository(ROOT / "tests" / "data" / "code_instruct" / "tinytext"))
    task = code_instruct.parse((ANSWERS / "good_caption.txt").read_text())
    sides = {"judged inside (pytest A + B)": inside, "judged outside (sandbox A + B, pytest as written)": outside}
    for backend in sides.values():  # warm: the sandbox service, its fork servers of the venv, page cache
        verify_task(task.test, task.solution, environment=env, backend=backend)
    def verified(backend, judged):
        verification = verify_task(task.test, task.solution, environment=env, backend=backend)
        return verification.result.ok and verification.judged == judged

    calls = {side: functools.partial(verified, backend, "outside" if backend is outside else "inside")
             for side, backend in sides.items()}  # fmt: skip
    _print_interleaved("verify_task of one task (3 test functions)", calls, runs, "inside")
    print("\nverified? (only the honest solution should be)")
    print(f"  {'solution':<42} {'inside':>7} {'outside':>8}")
    for name, solution in {"honest": task.solution, **{k: v for k, v in HOSTILE.items() if v}, **FORGERS}.items():
        verdicts = [verify_task(task.test, solution, environment=env, backend=b).result.ok for b in sides.values()]
        print(f"  {name:<42} {verdicts[0]!s:>7} {verdicts[1]!s:>8}")


def part_gates() -> None:
    started = time.perf_counter()
    index = DecontaminationIndex.from_benchmarks(["humaneval", "leetcode"])
    build = time.perf_counter() - started
    repo = open_repository(ROOT / "tests" / "data" / "code_instruct" / "tinytext")
    parsed = []
    for path in sorted(ANSWERS.glob("*.txt")):
        try:
            parsed.append(code_instruct.parse(path.read_text()))
        except ValueError:
            continue
    rounds = 200
    started = time.perf_counter()
    for _ in range(rounds):
        dedup = Deduplicator()
        for task in parsed:
            result = run_gates(task.problem, task.test, task.solution, import_names=repo.import_names,
                               public_symbols=repo.public_symbols, index=index, dedup=dedup)  # fmt: skip
            if result.ok:
                dedup.add(task.problem, task.solution)
    elapsed = time.perf_counter() - started
    n = rounds * len(parsed)
    print(f"\nstatic gates: {n} candidates in {elapsed:.2f} s = {n / elapsed:,.0f} candidates/s "
          f"(index of {len(index):,} n-grams built in {build:.2f} s)")  # fmt: skip


#: Scripted answers per seed window (attempt by attempt), by pinned sdist.
REAL_SCRIPTS = {
    "tomli==2.0.1": [["good_flatten"], ["oracle_fails_lookup", "good_lookup"], ["good_decimal"],
                     ["unreached_asserts", "good_validity"], ["good_merge"]],
    "six==1.16.0": [["good_text_list"], ["good_sorted_pairs"], ["weak_two_asserts", "good_registry"],
                    ["collision_ensure_text", "good_hex_bytes"], ["good_utf8_chunks"]],
    "attrs==23.2.0": [["good_frozen_point"], ["good_interval"], ["good_public_dict"],
                      ["not_anchored_dataclass", "good_bump_all"], ["good_field_table"]],
}  # fmt: skip


def _reward(folder: Path, work: Path, logs: Path, bin_dir: str) -> str:
    env = {"PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin"}
    subprocess.run(["bash", str(folder / "tests" / "test.sh"), str(work), str(logs)], env=env, capture_output=True,
                   timeout=300, check=False)  # fmt: skip
    return (logs / "reward.txt").read_text().strip() if (logs / "reward.txt").is_file() else "missing"


def check_folder(folder: Path, env_cache: str | None = None) -> dict:
    """Everything a harness would need, from the folder alone: rebuilt venv, both stages, solve.sh + test.sh."""
    from evolvecoder_datasets.code_instruct.repository import _read_toml

    pins = (folder / "environment" / "requirements.txt").read_text().split()
    package = _read_toml(folder / "task.toml")["metadata"]["package"]
    backend = VenvBackend(cache_dir=env_cache, requirements=tuple(pins), pip_args=("--no-deps",))
    started = time.perf_counter()
    env = backend.prepare(open_repository(folder / "environment" / "src", package=package))
    build = time.perf_counter() - started
    started = time.perf_counter()
    verdict = verify_task_folder(folder, backend=backend)
    stages = time.perf_counter() - started
    scratch = Path(tempfile.mkdtemp(prefix="bench-folder-"))
    try:
        (scratch / "empty").mkdir()
        without = _reward(folder, scratch / "empty", scratch / "logs-empty", env.root + "/bin")
        (scratch / "solved").mkdir()
        subprocess.run(["bash", str(folder / "solution" / "solve.sh"), str(scratch / "solved")], capture_output=True,
                       timeout=60, check=True)  # fmt: skip
        with_solution = _reward(folder, scratch / "solved", scratch / "logs-solved", env.root + "/bin")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {"ok": verdict.result.ok, "stage_a": verdict.stage_a.status,
            "stage_b": verdict.stage_b.status if verdict.stage_b else None, "reward_without": without,
            "reward_with": with_solution, "env_build_s": build, "stages_s": stages}  # fmt: skip


def harbor_flow_in_containers(folder: Path, container) -> dict:
    """Harbor's flow with the folder's own image: solve.sh as user ``agent`` in one container, then test.sh as root in a
    separate verifier container that only gets /app/task_module.py (the artifact), /tests and /logs/verifier."""
    from evolvecoder_datasets.code_instruct.repository import _read_toml

    package = _read_toml(folder / "task.toml")["metadata"]["package"]
    started = time.perf_counter()
    env = container.prepare_context(folder / "environment", package=package)
    build = time.perf_counter() - started
    engine = [container.engine, *container.engine_args, "run", "--rm", "--network", "none", *container._ulimits()]
    scratch = Path(tempfile.mkdtemp(prefix="bench-harbor-"))
    rewards = {}
    try:
        for solved in (False, True):
            agent_app, verifier_app, logs = (scratch / f"{n}-{solved}" for n in ("agent-app", "verifier-app", "logs"))
            for path in (agent_app, verifier_app, logs):
                path.mkdir()
                path.chmod(0o777)
            if solved:
                subprocess.run([*engine, "--user", "agent", "-v", f"{folder / 'solution'}:/solution:ro",
                                "-v", f"{agent_app}:/app", env.root, "bash", "/solution/solve.sh"],
                               capture_output=True, timeout=300, check=True)  # fmt: skip
            for artifact in agent_app.iterdir():  # what artifacts = ["/app/task_module.py"] hands over
                shutil.copyfile(artifact, verifier_app / artifact.name)
            subprocess.run([*engine, "-v", f"{folder / 'tests'}:/tests:ro", "-v", f"{verifier_app}:/app",
                            "-v", f"{logs}:/logs/verifier", env.root, "bash", "/tests/test.sh"],
                           capture_output=True, timeout=300, check=False)  # fmt: skip
            reward = logs / "reward.txt"
            rewards[solved] = reward.read_text().strip() if reward.is_file() else "missing"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {"image_build_s": build, "reward_without": rewards[False], "reward_with": rewards[True], "env": env}


def part_real(out: Path, env_cache: str | None = None, container=None) -> None:
    from evolvecoder_datasets.code_instruct import (
        CodeInstructConfig,
        SeedConfig,
        VenvBackend,
        export_task_folders,
        generate_tasks,
        sample_snippets,
    )
    from evolvecoder_datasets.code_instruct.harbor import DEFAULT_HARBOR_DIR, harbor_lint
    from evolvecoder_datasets.code_instruct.repository import default_cache_dir, fetch_sdist
    from evolvecoder_datasets.llm import LLMConfig
    from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer  # fmt: skip

    answers = ROOT / "tests" / "data" / "code_instruct" / "answers"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    backend = VenvBackend(cache_dir=env_cache)
    seeds = SeedConfig(seed=0)
    rows, runs, total = [], [], None
    for requirement, script in REAL_SCRIPTS.items():
        library = requirement.split("==")[0]
        archive = fetch_sdist(requirement, default_cache_dir() / "bench-sdists")
        repo = open_repository(archive, cache_dir=out / "sources")
        started = time.perf_counter()
        backend.prepare(repo)
        env_s = time.perf_counter() - started
        snippets = sample_snippets(repo, len(script), config=seeds)
        by_text = {s.text.rstrip(): attempts for s, attempts in zip(snippets, script)}

        def respond(body, by_text=by_text, library=library):
            prompt = body["messages"][-1]["content"]
            shown = max((text for text in by_text if text in prompt), key=len)
            attempts = by_text[shown]  # past the script, the model repeats its last answer
            return (answers / library / f"{attempts[min(body['seed'], len(attempts) - 1)]}.txt").read_text()

        config = CodeInstructConfig(num_seeds=len(script), seeds=seeds, max_attempts_per_seed=3)
        with ScriptedOpenAIServer(respond) as server:
            llm = LLMConfig(model="scripted-competent", base_url=server.base_url, max_retries=0,
                            cache_dir=str(out / "llm-cache"))  # fmt: skip
            started = time.perf_counter()
            run = generate_tasks(repo, llm=llm, environment=backend, config=config)
            pipeline_s = time.perf_counter() - started
        runs.append(run)
        total = run.report if total is None else total.merge(run.report)
        rows.append((repo.name, run.report, env_s, pipeline_s, [s.path for s in snippets]))
        print(run.report, flush=True)
    judged = Counter(task.judged for run in runs for task in run.tasks)
    print(f"judged: {dict(judged)}")
    folders = export_task_folders(runs, out / "tasks", include_judged_inside=True)  # the inside ones too, to check
    print(f"\n{'repository':<16} {'seeds':>5} {'calls':>5} {'emitted':>7} {'yield':>6} {'env build':>9} "
          f"{'pipeline':>8} {'s/task':>6}  skip reasons")  # fmt: skip
    for name, report, env_s, pipeline_s, _ in rows:
        per_task = pipeline_s / report.emitted if report.emitted else float("nan")
        print(f"{name:<16} {report.seeds_sampled:>5} {report.attempts:>5} {report.emitted:>7} "
              f"{report.yield_rate:>6.1%} {env_s:>8.1f}s {pipeline_s:>7.1f}s {per_task:>6.2f}  "
              f"{dict(report.skip_reasons)}")  # fmt: skip
    print(f"{'total':<16} {total.seeds_sampled:>5} {total.attempts:>5} {total.emitted:>7} {total.yield_rate:>6.1%}"
          f"  seeds: {dict(total.seed_outcomes)}")  # fmt: skip
    harbor = Path(ROOT / DEFAULT_HARBOR_DIR / "bin" / "harbor")
    if harbor.is_file():
        findings = harbor_lint(folders, harbor=harbor)
        print(f"\nharbor lint --select ALL over {len(folders)} folders: {len(findings)} finding(s)")
        for finding in findings:
            print(f"  {json.dumps(finding)}")
    else:
        print(f"\nharbor lint skipped: no Harbor venv at {harbor.parent.parent} (scripts/setup.sh builds it)")
    print(f"\nre-verification of every exported folder from its own files ({len(folders)} folders):")
    outcomes: Counter = Counter()
    for folder in folders:
        result = check_folder(folder, env_cache)
        outcomes["all good" if result["ok"] and result["reward_without"] == "0" and result["reward_with"] == "1"
                 else "PROBLEM"] += 1  # fmt: skip
        print(f"  {folder.name:<14} stage A {result['stage_a']:<7} stage B {result['stage_b']:<7} reward without "
              f"{result['reward_without']} / after solve.sh {result['reward_with']}   (venv from folder "
              f"{result['env_build_s']:5.1f}s, stages {result['stages_s']:4.1f}s)")  # fmt: skip
    print(f"  {dict(outcomes)}")
    if container is None:
        return
    print(f"\nthe same folders in containers ({Path(container.engine).name} {' '.join(container.engine_args)}, "
          f"build {' '.join(container.build_args)}): the folder's Dockerfile built as it is, both stages inside, "
          "then solve.sh as `agent` and test.sh in a separate verifier container:")  # fmt: skip
    outcomes = Counter()
    for folder in folders:
        flow = harbor_flow_in_containers(folder, container)
        started = time.perf_counter()
        verdict = verify_task_folder(folder, backend=container)
        stages = time.perf_counter() - started
        good = verdict.result.ok and flow["reward_without"] == "0" and flow["reward_with"] == "1"
        outcomes["all good" if good else "PROBLEM"] += 1
        print(f"  {folder.name:<14} stage A {verdict.stage_a.status:<7} stage B "
              f"{verdict.stage_b.status if verdict.stage_b else '-':<7} reward without {flow['reward_without']} / "
              f"after solve.sh {flow['reward_with']}   (image {flow['image_build_s']:5.1f}s, stages {stages:4.1f}s)")  # fmt: skip
    print(f"  {dict(outcomes)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--real", action="store_true", help="part 3 only: yield on three real sdists")
    parser.add_argument("--out", default=str(ROOT / "runs" / "bench_code_instruct"), help="part 3's run folder")
    parser.add_argument("--env-cache", help="part 3's virtualenv cache (an empty folder measures cold builds)")
    parser.add_argument("--container-base", help="part 3: also build every folder's Dockerfile with this local "
                        "digest-pinned python image as FROM (podman/docker build --from) and verify inside")
    parser.add_argument("--engine-args", default="", help="global container engine options, e.g. '--runtime runc'")
    args = parser.parse_args()
    if args.real:
        container = None
        if args.container_base:
            from evolvecoder_datasets.code_instruct import ContainerBackend

            container = ContainerBackend(engine_args=args.engine_args.split(), build_args=("--from", args.container_base),
                                         cache_dir=Path(args.out).with_name("bench_code_instruct_containers"))  # fmt: skip
        part_real(Path(args.out), args.env_cache, container)
        return
    part_verification(args.runs)
    part_outside(args.runs)
    part_gates()


if __name__ == "__main__":
    main()
