"""Search-written tests on HumanEval: how many surviving AST mutants one and two search rounds kill, against random
inputs from the same generators given the same executions.

Run: .venv/bin/python benchmarks/bench_search.py [--problems N] [--budget 2000] [--retire-after 24] [--workers 2]
     [--survivors 30] [--json out.json] [--no-random] [--structure-edits 16] [--limits-baseline REV]

For every HumanEval problem: the pool is every AST mutant of the canonical solution (``mutants.generate_mutants``);
the suite is the problem's split asserts; the search draws inside the problem's domain (the precondition shipped with
its statement, as the evolve box derives it; issue 35), and at the end every search test is checked against it
(``outside_statement_domain``). Per round:

* **search** (``objective="mutants"``) writes up to ``max_tests`` asserts per problem, spending at most ``budget``
  probe executions (reference runs of candidates + surviving-mutant runs of usable candidates, each survivor asked
  until it first disagrees, and retired after ``retire_after`` agreements as probably equivalent);
* the new asserts run against the whole pool (what a round does with every new test; counted as spent);
* **random** (``objective="random"``): same generators, each problem given exactly the executions the search
  spent on it (probes + pool run), usable inputs kept in random order, each costing one pool run.

Kills are counted from the ordinary pass matrix of the new asserts (not from the probes); ``search_by_origin``
splits the search's probe executions, probe kills and candidates by where each candidate came from (the sweep, the
hot constants, the structure edits before retirement, random edits, and the random edits that used a splice or a
tie). Afterwards every search
assert runs against the canonical solutions in a fresh isolated-mode sandbox, and a seeded sample of the mutants
still surviving is written with a long random differential run (a witness input where one is found) for hand
classification (``--survivor-file``).

``--limits-baseline REV`` measures something else (issue 22): one search round per side, in one process and one
sandbox, the search of git revision ``REV`` (its ``search/writer.py`` and ``search/probes.py``, or
``stages/search.py`` and ``stages/search_probes.py`` before issue 26 moved them; loaded from ``git show``:
every probe at the flat ``timeout_s``) against this checkout's (probes under each problem's calibrated limit,
measured first as the execute stage does: 10 x the reference's slowest passed assert, at least 0.1 s). Per side:
CPU of the probe tests that timed out, CPU of all probe tests, CPU of the sandbox's processes, the kept tests per
problem; then how many problems keep identical tests, among those where neither side's probes timed out, and
whether every kept test passes the reference under the problem's limit.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import importlib.util
import json
import os
import random
import re
import subprocess
import sys
import time

import numpy as np

from evolvecoder_datasets.execution import Job, Sandbox
from evolvecoder_datasets.limits import SandboxSettings
from evolvecoder_datasets.mutants import generate_mutants
from evolvecoder_datasets.sources.humaneval import read_humaneval_records, split_check
from evolvecoder_datasets.search.inputs import InputMutator, recover_call, reference_constants
from evolvecoder_datasets.search.probes import ProbeProgram
from evolvecoder_datasets.search.writer import SearchConfig, SearchProblem, search_tests


def load(n: int | None):
    problems = []
    for record in read_humaneval_records()[:n]:
        reference = record["prompt"] + record["canonical_solution"]
        tests = split_check(record["test"], record["entry_point"]).tests
        mutants = generate_mutants(reference)
        pid = record["task_id"].replace("/", "_")
        problems.append({"id": pid, "reference": reference, "tests": tests, "mutants": mutants,
                         "domain": _domain(pid, tests)})
    return problems


def _domain(pid: str, tests: list[str]):
    """The problem's domain as the evolve box derives it (the precondition shipped with HumanEval's statement); None
    on a checkout before problem domains, whose search draws without one."""
    try:
        from evolvecoder_datasets.stages.support.domains import problem_domain
    except ImportError:
        return None
    call = recover_call(tests)
    return problem_domain(pid, call.seeds if call else ())


def matrix(sb: Sandbox, programs: list[str], tests: list[str]) -> np.ndarray:
    if not programs or not tests:
        return np.zeros((len(programs), len(tests)), bool)
    return sb.pass_matrix(programs, tests)


def run_round(sb, problems, suites, config, round_, budgets=None):
    """One search round over all problems; returns results, new-test matrices and executions spent per problem."""
    inputs = []
    for k, p in enumerate(problems):
        domain = {"domain": p["domain"]} if p.get("domain") is not None else {}
        inputs.append(SearchProblem(p["id"], p["reference"], suites[k], [m.code for m in p["mutants"]],
                                    p["M"], budget=None if budgets is None else budgets[k], **domain))
    results = search_tests(inputs, config, round=round_, sandbox=sb)
    jobs, owners = [], []
    for k, (p, r) in enumerate(zip(problems, results)):
        for i, m in enumerate(p["mutants"]):
            if r.tests:
                jobs.append((m.code, r.tests))
                owners.append((k, i))
    reports = sb.run_many(jobs)
    new = [np.zeros((len(p["mutants"]), len(r.tests)), bool) for p, r in zip(problems, results)]
    for (k, i), report in zip(owners, reports):
        new[k][i] = report.passed
    spent = [r.executions + len(p["mutants"]) * len(r.tests) for p, r in zip(problems, results)]
    return results, new, spent


def survivors_of(M: np.ndarray) -> np.ndarray:
    return M.all(axis=1) if M.shape[1] else np.ones(M.shape[0], bool)


def witness_search(sb, problem, mutant_code, seed, n=400):
    """A long differential run (a boundary sweep, then random edits with more exploration than the search's): the
    first input where the mutant and the reference disagree, if any."""
    call = recover_call(problem["tests"])
    if call is None:
        return None, 0
    mutator = InputMutator(call.seeds, seed=seed, explore=0.5, constants=reference_constants(problem["reference"]))
    inputs, seen = [], set()
    queue = mutator.sweep(limit=n // 2)
    for _ in range(20 * n):
        args = queue.pop() if queue else mutator.candidate()
        if repr(args) not in seen and len(repr(args)) < 2000:
            seen.add(repr(args))
            inputs.append(args)
        if len(inputs) == n:
            break
    probe = ProbeProgram(problem["reference"], call.callee, inputs, cpu_s=0.2, max_chars=5000)
    usable = sb.run(probe.program(), probe.usable_tests()).passed
    idx = [k for k, ok in enumerate(usable) if ok]
    same = sb.run(probe.program(mutant_code), probe.same_tests(idx)).passed if idx else []
    for k, ok in zip(idx, same):
        if not ok:
            return inputs[k], len(idx)
    return None, len(idx)


# Where a revision keeps the search's probes and writer, and how their relative imports read from this checkout's
# ``evolvecoder_datasets.search``: issue 26 moved them out of ``stages/``, and the three helpers they import
# (``checks``, ``code_names``, ``seeding``) from ``stages/`` through ``stages/support/`` to the ground floor.
_SEARCH_LAYOUTS = (
    ("evolvecoder_datasets/search/probes.py", "evolvecoder_datasets/search/writer.py",
     (("from .probes import", "from ._baseline_probes import"),
      ("from ..stages.support.checks import", "from ..checks import"),
      ("from ..stages.support.code_names import", "from ..code_names import"),
      ("from ..stages.support.seeding import", "from ..seeding import"))),
    ("evolvecoder_datasets/stages/search_probes.py", "evolvecoder_datasets/stages/search.py",
     (("from .search_probes import", "from ._baseline_probes import"),
      ("from .search_inputs import", "from .inputs import"),
      ("from .checks import", "from ..checks import"),
      ("from .code_names import", "from ..code_names import"),
      ("from .seeding import", "from ..seeding import"))),
)


def load_search_at(rev: str):
    """The ``search_tests`` and ``SearchConfig`` of git revision ``rev`` (its search writer and probes; the rest of
    the package is this checkout's), as modules of their own."""
    package = "evolvecoder_datasets.search"
    for probes, writer, renames in _SEARCH_LAYOUTS:
        if subprocess.run(["git", "cat-file", "-e", f"{rev}:{writer}"], capture_output=True).returncode == 0:
            break
    else:
        raise SystemExit(f"{rev} has no search writer")
    modules = {}
    for name, path in (("probes", probes), ("writer", writer)):
        source = subprocess.run(["git", "show", f"{rev}:{path}"], check=True, capture_output=True, text=True).stdout
        for old, new in renames:
            source = source.replace(old, new)
        full = f"{package}._baseline_{name}"
        module = importlib.util.module_from_spec(importlib.util.spec_from_loader(full, loader=None))
        module.__package__ = package
        sys.modules[full] = module
        exec(compile(source, f"{rev}:{path}", "exec"), module.__dict__)  # noqa: S102 (our own code, from git)
        modules[name] = module
    return modules["writer"]


class ProbeMeter:
    """A sandbox that counts, per problem, the CPU of the probe tests that timed out, of those that took 0.05 s
    or more without a timeout, and of all tests it ran."""

    _REF = re.compile(r"^_ECD_REF = _ecd_load\((.*), '<reference>'\)$", re.MULTILINE)

    def __init__(self, sandbox, references: dict[str, str]):
        self.sandbox = sandbox
        self.settings = sandbox.settings
        self.by_reference = {repr(ref): pid for pid, ref in references.items()}
        self.by_program = {ref: pid for pid, ref in references.items()}
        self.problems: dict[str, dict[str, float]] = {}

    def _note(self, program: str, report) -> None:
        found = self._REF.search(program)
        pid = self.by_reference.get(found.group(1)) if found else self.by_program.get(program)
        row = self.problems.setdefault(pid or "?", {"timeouts": 0, "timeout_cpu_s": 0.0, "slow_cpu_s": 0.0,
                                                    "cpu_s": 0.0, "tests": 0})
        cpu = report.cpu_s or [0.0] * len(report.statuses)
        for status, c in zip(report.statuses, cpu):
            row["tests"] += 1
            row["cpu_s"] += c
            if status == "timeout":
                row["timeouts"] += 1
                row["timeout_cpu_s"] += c
            elif c >= 0.05:  # a slow test that ended without a timeout (the usability test's CPU alarm, mostly)
                row["slow_cpu_s"] += c

    def run(self, program, tests):
        report = self.sandbox.run(program, tests)
        self._note(program, report)
        return report

    def run_many(self, jobs, **kwargs):
        jobs = [j if isinstance(j, Job) else Job(j[0], tests=list(j[1])) for j in jobs]
        reports = self.sandbox.run_many(jobs, **kwargs)
        for job, report in zip(jobs, reports):
            self._note(job.program, report)
        return reports

    def total(self, key: str) -> float:
        return sum(row[key] for row in self.problems.values())


def descendants_cpu_s() -> float:
    """CPU seconds of this process's descendants: the live ones (with what they reaped) and those it reaped."""
    children: dict[int, list[int]] = {}
    stats: dict[int, list[str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        stats[int(entry)] = fields
        children.setdefault(int(fields[1]), []).append(int(entry))
    ticks = os.sysconf("SC_CLK_TCK")
    total, todo = 0.0, list(children.get(os.getpid(), []))
    while todo:
        pid = todo.pop()
        fields = stats[pid]
        total += sum(int(x) for x in fields[11:15]) / ticks  # utime stime cutime cstime
        todo += children.get(pid, [])
    times = os.times()
    return total + times.children_user + times.children_system


def compare_limits(args) -> None:
    """One search round with the baseline's flat probe limit against this checkout's calibrated limits."""
    t0 = time.perf_counter()
    load_start = os.getloadavg()
    baseline = load_search_at(args.limits_baseline)
    problems = load(args.problems)
    print(f"{len(problems)} problems, {sum(len(p['mutants']) for p in problems)} mutants; baseline "
          f"{args.limits_baseline} (search version {baseline.SearchConfig().version}) against this checkout "
          f"({SearchConfig().version})")
    settings = SandboxSettings()  # the execute stage's calibration: factor 10, floor 0.1 s, ceiling 1 s
    figures: dict = {"problems": len(problems), "baseline": args.limits_baseline, "sides": {}}
    kept: dict[str, list[list[str]]] = {}
    meters: dict[str, ProbeMeter] = {}
    with Sandbox(workers=args.workers, mode="fast", timeout_s=1.0, max_consecutive_timeouts=2) as sb:
        for p in problems:
            p["M"] = matrix(sb, [m.code for m in p["mutants"]], p["tests"])
        calibration = sb.run_many([(p["reference"], p["tests"]) for p in problems])
        for p, report in zip(problems, calibration):
            p["limit"] = settings.calibrated_limit(c for s, c in zip(report.statuses, report.cpu_s) if s == "pass")
        limits = [p["limit"] for p in problems]
        figures["limits"] = {"calibrated": sum(x is not None for x in limits),
                             "median_s": float(np.median([x for x in limits if x is not None])),
                             "at_floor": sum(x == settings.limit_floor_s for x in limits)}
        print(f"calibrated limits: {figures['limits']}")
        references = {p["id"]: p["reference"] for p in problems}
        for side, module in (("flat", baseline), ("calibrated", None)):
            meter = ProbeMeter(sb, references)
            if module is None:
                config = SearchConfig(budget=args.budget, max_tests=args.max_tests, seed=args.seed, split=False,
                                      retire_after=args.retire_after, structure_edits=args.structure_edits)
                inputs = [SearchProblem(p["id"], p["reference"], list(p["tests"]), [m.code for m in p["mutants"]],
                                        p["M"], limit=p["limit"]) for p in problems]
                run = search_tests
            else:
                config = module.SearchConfig(budget=args.budget, max_tests=args.max_tests, seed=args.seed,
                                             split=False, retire_after=args.retire_after,
                                             structure_edits=args.structure_edits)
                inputs = [module.SearchProblem(p["id"], p["reference"], list(p["tests"]),
                                               [m.code for m in p["mutants"]], p["M"]) for p in problems]
                run = module.search_tests
            cpu0, driver0, wall0 = descendants_cpu_s(), time.process_time(), time.perf_counter()
            results = run(inputs, config, round=1, sandbox=meter)
            row = {
                "probe_timeouts": int(meter.total("timeouts")),
                "timeout_cpu_s": round(meter.total("timeout_cpu_s"), 2),
                "slow_not_timeout_cpu_s": round(meter.total("slow_cpu_s"), 2),
                "probe_test_cpu_s": round(meter.total("cpu_s"), 2),
                "probe_tests": int(meter.total("tests")),
                "sandbox_process_cpu_s": round(descendants_cpu_s() - cpu0, 2),
                "driver_cpu_s": round(time.process_time() - driver0, 2),
                "wall_s": round(time.perf_counter() - wall0, 1),
                "tests_kept": sum(len(r.tests) for r in results),
                "probe_killed": sum(r.killed for r in results),
                "executions": sum(r.executions for r in results),
                "problems_with_timeouts": sum(1 for row in meter.problems.values() if row["timeouts"]),
            }
            figures["sides"][side] = row
            kept[side] = [list(r.tests) for r in results]
            meters[side] = meter
            print(side, json.dumps(row))
        flat, new = figures["sides"]["flat"], figures["sides"]["calibrated"]
        figures["timeout_cpu_cut"] = round(flat["timeout_cpu_s"] / new["timeout_cpu_s"], 1) \
            if new["timeout_cpu_s"] else None
        no_limit = [k for k, p in enumerate(problems)
                    if not any(meters[s].problems.get(p["id"], {}).get("timeouts") for s in meters)]
        same = [k for k in no_limit if kept["flat"][k] == kept["calibrated"][k]]
        figures["identical_where_no_timeout"] = [len(same), len(no_limit)]
        figures["identical_all"] = [sum(a == b for a, b in zip(kept["flat"], kept["calibrated"])), len(problems)]
        figures["differing_where_no_timeout"] = [problems[k]["id"] for k in no_limit if k not in same]
        figures["differing_all"] = [p["id"] for p, a, b in zip(problems, kept["flat"], kept["calibrated"]) if a != b]
        figures["with_timeouts"] = {side: sorted(pid for pid, row in meter.problems.items() if row["timeouts"])
                                    for side, meter in meters.items()}
        # every kept test against the reference, isolated mode, under the problem's calibrated limit (not raised)
        jobs, owners = [], []
        for p, tests in zip(problems, kept["calibrated"]):
            if tests:
                jobs.append(Job(p["reference"], tests=tests, timeout_s=settings.job_timeout(p["limit"])))
                owners.append(p["id"])
    with Sandbox(workers=args.workers, mode="isolated", timeout_s=1.0) as iso:
        reports = iso.run_many(jobs)
    figures["reference_under_limit"] = [sum(sum(r.passed) for r in reports), sum(len(j.tests) for j in jobs)]
    figures["seconds"] = round(time.perf_counter() - t0, 1)
    figures["load_average_start_end"] = [round(load_start[0], 2), round(os.getloadavg()[0], 2)]
    print(json.dumps({k: v for k, v in figures.items() if k != "sides"}))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(figures, handle, indent=2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=None, help="first N HumanEval problems (default: all 164)")
    parser.add_argument("--budget", type=int, default=2000, help="probe executions per problem and round")
    parser.add_argument("--max-tests", type=int, default=8, help="search tests kept per problem and round")
    parser.add_argument("--retire-after", type=int, default=SearchConfig.retire_after,
                        help="agreements after which a surviving mutant is given up as probably equivalent")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--survivors", type=int, default=30, help="surviving mutants to sample for inspection")
    parser.add_argument("--survivor-file", default="benchmarks/search_survivors.md")
    parser.add_argument("--json", default=None, help="also write the figures here")
    parser.add_argument("--no-random", action="store_true", help="skip the random baseline (search figures only)")
    parser.add_argument("--structure-edits", type=int, default=getattr(SearchConfig, "structure_edits", 0),
                        help="structure edits asked before a survivor retires (0: the search before issue 24)")
    parser.add_argument("--limits-baseline", default=None, metavar="REV",
                        help="instead: one search round of git revision REV (flat probe limit) against this "
                             "checkout's (calibrated limits): timeout CPU, kept tests (issue 22)")
    args = parser.parse_args()
    if args.limits_baseline:
        compare_limits(args)
        return

    t0 = time.perf_counter()
    load_start = os.getloadavg()
    problems = load(args.problems)
    n_mutants = sum(len(p["mutants"]) for p in problems)
    print(f"{len(problems)} problems, {n_mutants} mutants, {sum(len(p['tests']) for p in problems)} asserts")
    figures: dict = {"problems": len(problems), "mutants": n_mutants, "budget": args.budget,
                     "retire_after": args.retire_after, "rounds": []}
    search_cfg = SearchConfig(budget=args.budget, max_tests=args.max_tests, seed=args.seed, split=False,
                              retire_after=args.retire_after,
                              **({"structure_edits": args.structure_edits}
                                 if "structure_edits" in SearchConfig.__dataclass_fields__ else {}))
    random_cfg = SearchConfig(budget=args.budget, max_tests=10_000, seed=args.seed, objective="random")
    # a mutant that times out twice in a row is stopped (its remaining cells fail): it has failed already
    with Sandbox(workers=args.workers, mode="fast", timeout_s=1.0, max_consecutive_timeouts=2) as sb:
        for p in problems:
            p["M"] = matrix(sb, [m.code for m in p["mutants"]], p["tests"])
        start_survivors = [survivors_of(p["M"]) for p in problems]
        figures["survivors_original"] = int(sum(s.sum() for s in start_survivors))
        figures["killed_original"] = n_mutants - figures["survivors_original"]
        print(f"original asserts: {figures['killed_original']} killed, {figures['survivors_original']} survive "
              f"({time.perf_counter() - t0:.0f} s)")
        suites = [list(p["tests"]) for p in problems]
        search_tests_all: list[list[str]] = [[] for _ in problems]
        for round_ in range(1, args.rounds + 1):
            before = [survivors_of(p["M"]) for p in problems]
            t = time.perf_counter()
            results, new, spent = run_round(sb, problems, suites, search_cfg, round_)
            search_s = time.perf_counter() - t
            killed = sum(int((b & ~survivors_of(n)).sum()) for b, n in zip(before, new))
            t = time.perf_counter()
            if args.no_random:
                r_results, r_new = [], [np.zeros((len(p["mutants"]), 0), bool) for p in problems]
            else:
                r_results, r_new, _r_spent = run_round(sb, problems, suites, random_cfg, round_, budgets=spent)
            random_s = time.perf_counter() - t
            r_killed = 0 if args.no_random else sum(int((b & ~survivors_of(n)).sum()) for b, n in zip(before, r_new))
            row = {
                "round": round_,
                "survivors_before": int(sum(b.sum() for b in before)),
                "search_killed": killed,
                "search_tests": sum(len(r.tests) for r in results),
                "search_probe_executions": sum(r.executions for r in results),
                "search_executions": sum(spent),
                "search_reads": sum(r.reads for r in results),
                "search_rejected": sum(r.rejected for r in results),
                "search_probe_killed": sum(r.killed for r in results),
                "search_retired": sum(r.retired for r in results),
                "search_candidates": sum(r.candidates for r in results),
                "search_seconds": round(search_s, 1),
                "random_killed": r_killed,
                "random_tests": sum(len(r.tests) for r in r_results),
                "random_executions": sum(r_r.executions for r_r in r_results),
                "random_seconds": round(random_s, 1),
                "reasons": {},
                "killed_ids": sorted(f"{p['id']}#{i}" for p, b, n in zip(problems, before, new)
                                     for i in np.flatnonzero(b & ~survivors_of(n)).tolist()),
            }
            origins: dict[str, list[int]] = {}  # where the probe executions went: [executions, kills, candidates]
            for r in results:
                for origin, counts in r.by_origin.items():
                    origins[origin] = [x + y for x, y in zip(origins.get(origin, [0, 0, 0]), counts)]
            row["search_by_origin"] = dict(sorted(origins.items(), key=lambda kv: -kv[1][0]))
            for r in results:
                if r.reason:
                    row["reasons"][r.reason] = row["reasons"].get(r.reason, 0) + 1
            per_k = lambda k, e: 1000 * k / e if e else 0.0
            row["search_kills_per_1k"] = round(per_k(killed, row["search_executions"]), 2)
            row["random_kills_per_1k"] = round(per_k(r_killed, row["random_executions"]), 2)
            row["ratio"] = round(row["search_kills_per_1k"] / row["random_kills_per_1k"], 2) \
                if row["random_kills_per_1k"] else None
            figures["rounds"].append(row)
            print(json.dumps({k: v for k, v in row.items() if k != "killed_ids"}))
            for k, (p, r) in enumerate(zip(problems, results)):  # the search's tests join the suite
                suites[k] += r.tests
                search_tests_all[k] += r.tests
                p["M"] = np.hstack([p["M"], new[k]])
    # every search test against the canonical solution, in a separate isolated-mode run
    with Sandbox(workers=args.workers, mode="isolated", timeout_s=1.0) as iso:
        jobs = [(p["reference"], tests) for p, tests in zip(problems, search_tests_all) if tests]
        reports = iso.run_many(jobs)
    total = sum(len(t) for t in search_tests_all)
    passed = sum(sum(r.passed) for r in reports)
    statuses: dict[str, int] = {}
    for r in reports:
        for status, count in r.counts().items():
            statuses[status] = statuses.get(status, 0) + count
    figures["canonical_check"] = {"tests": total, "passed": passed, "statuses": statuses,
                                  "infra_errors": sorted({r.infra_error for r in reports if r.infra_error})}
    print(f"canonical check (isolated mode, separate run): {passed}/{total} search tests pass "
          f"{figures['canonical_check']}")
    # every search test against the problem's statement domain (the preconditions shipped for HumanEval), in the sandbox
    try:
        from evolvecoder_datasets.stages.support.domains import admitted_tests, problem_domain
    except ImportError:  # a checkout before problem domains (run with PYTHONPATH at an older revision)
        problem_domain = None
    with Sandbox(workers=args.workers, mode="fast", timeout_s=1.0) as sb:
        work = []
        for p, tests in zip(problems, search_tests_all if problem_domain else ()):
            call = recover_call(p["tests"])
            work.append((problem_domain(p["id"], call.seeds if call else ()), call.callee if call else None, tests))
        gates = admitted_tests(work, sb) if work else []
    figures["search_tests"] = {p["id"]: tests for p, tests in zip(problems, search_tests_all) if tests}
    if problem_domain is None:
        print("search tests outside the statement domain: not measured here (this checkout has no domains; "
              "the tests are in the JSON under search_tests)")
    else:
        outside = {p["id"]: sum(not ok for ok in keep) for p, (keep, _) in zip(problems, gates) if not all(keep)}
        figures["outside_statement_domain"] = {"tests": sum(outside.values()), "problems": outside}
        print(f"search tests outside the statement domain: {sum(outside.values())} in {len(outside)} problems "
              f"{outside}")
    figures["survivors_final"] = int(sum(survivors_of(p["M"]).sum() for p in problems))
    # a sample of the mutants still alive, with a long random differential run, for classification by hand
    alive = [(k, i) for k, p in enumerate(problems) for i in np.flatnonzero(survivors_of(p["M"])).tolist()]
    sample = random.Random(args.seed).sample(alive, min(args.survivors, len(alive)))
    lines = ["# Surviving mutants after the search rounds (seeded sample)", ""]
    witnesses = 0
    with Sandbox(workers=1, mode="fast", timeout_s=1.0) as sb:
        for k, i in sorted(sample):
            p, m = problems[k], problems[k]["mutants"][i]
            witness, tried = witness_search(sb, p, m.code, seed=args.seed + 7)
            witnesses += witness is not None
            diff = "\n".join(difflib.unified_diff(ast.unparse(ast.parse(p["reference"])).splitlines(), m.code.splitlines(), lineterm="",
                                                  n=1))
            lines += [f"## {p['id']} mutant {i}: {m.operator} {m.description} (line {m.lineno})", "",
                      f"random differential: {tried} usable inputs, witness: {witness!r}", "", "```diff", diff,
                      "```", ""]
    with open(args.survivor_file, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines))
    figures["survivor_sample"] = {"size": len(sample), "with_witness": witnesses}
    figures["seconds"] = round(time.perf_counter() - t0, 1)
    figures["load_average_start_end"] = [round(load_start[0], 2), round(os.getloadavg()[0], 2)]
    print(f"survivors: {figures['survivors_original']} -> {figures['survivors_final']}; sample of {len(sample)}: "
          f"{witnesses} with a witness input (written to {args.survivor_file}); total {figures['seconds']} s, "
          f"load average at start and end {figures['load_average_start_end']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(figures, handle, indent=2)


if __name__ == "__main__":
    main()
