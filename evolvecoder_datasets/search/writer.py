"""Search-written tests: new asserts found by input mutation, checked against the pool, valued by the reference.

The third test writer of an evolution round, beside the ``adversarial`` and ``discriminative`` prompts, and the
only one that needs no language model (test origin ``search``). For each problem with a reference solution:

1. :func:`~evolvecoder_datasets.search.inputs.recover_call` finds the function the asserts call and the
   literal arguments they pass it; :class:`~evolvecoder_datasets.search.inputs.InputMutator` derives new
   argument tuples from them (boundaries, empty/singleton/large collections, duplicates, sign, order, unicode,
   nested edits, crossover, the reference's own constants +-1), seeded from the run's seed, the problem id and
   the round;
2. the reference runs on each candidate **in the sandbox**; a candidate is usable when it returns plain data (a
   literal), the same twice, its first call within ``cpu_s`` (a CPU alarm of the probe's own ends a call there, so
   an input the reference never finishes costs ``cpu_s``, not a sandbox timeout);
3. the **targets** are the programs of the pool the current suite cannot reject (they pass every test) and the
   groups of programs it cannot tell apart (identical pass vectors); each target program runs on the usable
   candidates beside the reference, which says where it returns something else. All active problems' target runs
   go to the sandbox as one batch per generation, under the problem's calibrated limit (``SearchProblem.limit``,
   the one the pool will be judged by) plus the reference's share (:func:`probe_timeouts`). A survivor is asked
   only until it first disagrees (one kill is all it needs; the later questions cost nothing), a member of an alike
   group on every candidate;
4. candidates are kept greedily, the one that kills the most surviving programs and splits the most groups first,
   until no candidate adds anything, ``max_tests`` are kept, or the **budget** of executions (reference runs plus
   target-program runs) is spent; a new generation mutates the seeds and the inputs kept so far. A target that has
   returned the reference's value on ``retire_after`` usable inputs is **retired** as probably equivalent: most
   of what a suite lets survive is, and without retirement those programs ate most of the budget (on HumanEval's
   mutants it halves the executions for 15% fewer kills; ``benchmarks/RESULTS.md``). The first candidates sweep
   the boundaries of the constants a target changed (:func:`hot_constants`): the one generator that reads the pool;
5. the reference's return value on each kept input is read back from the sandbox
   (:func:`~evolvecoder_datasets.search.probes.read_values`) and written into an assert
   (``assert f(args) == value``; a float within the tolerance of :mod:`~evolvecoder_datasets.tolerance`,
   ``1e-6 + 1e-7*|v|``); the reference runs the new asserts
   once more, the ordinary way, and only those it passes are returned.

A problem without a reference, without a literal call in its tests, or with nothing to target gets no tests and a
reason (:data:`REASONS`). ``objective="random"`` is the baseline of the benchmark: the same generators and budget,
usable inputs kept in random order without running the pool.

Example:
    >>> from evolvecoder_datasets.execution import Sandbox
    >>> from evolvecoder_datasets.search.writer import SearchConfig, SearchProblem, search_tests
    >>> ref = "def clamp(x):\\n    return max(0, min(x, 10))\\n"
    >>> weak = "def clamp(x):\\n    return max(0, x)\\n"          # passes the seed test, wrong above 10
    >>> problem = SearchProblem("P_1", ref, ["assert clamp(5) == 5"], [weak], [[True]])
    >>> with Sandbox(workers=1, mode="fast") as sb:
    ...     [result] = search_tests([problem], SearchConfig(seed=0), sandbox=sb)
    >>> result.killed, len(result.tests) >= 1, result.reason
    (1, True, None)
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ..code_names import defined_names, normalise_test
from ..seeding import stable_int
from .calls import CallShape, recover_call, render_args
from .domain import infer_domain
from .inputs import InputMutator, reference_constants
from .probes import REFERENCE_TIMEOUT_FACTOR, ProbeProgram, read_values
from .problems import OBJECTIVES, REASONS, SearchConfig, SearchProblem, SearchResult
from .valued import value_assert

__all__ = ["OBJECTIVES", "REASONS", "SearchConfig", "SearchProblem", "SearchResult", "hot_constants", "probe_timeouts",
           "search_tests"]


class _State:
    """One problem's search in progress."""

    def __init__(self, problem: SearchProblem, call: CallShape, config: SearchConfig, round_: int) -> None:
        self.problem = problem
        self.call = call
        self.domain = problem.domain if problem.domain is not None else infer_domain(call.seeds)
        self.config = config
        self.result = SearchResult(problem.id, callee=call.callee)
        seed = stable_int(config.seed, problem.id, round_, "search")
        self.rng = random.Random(seed)
        self.mutator = InputMutator(call.seeds, seed=seed, explore=config.explore,
                                    constants=reference_constants(problem.reference or ""))
        self.seen = {repr(tuple(s)) for s in call.seeds}
        self.queue = self.mutator.sweep()  # boundary values first, then random edits (popped from the end)
        self.origin = {repr(a): "sweep" for a in self.queue}  # where a queued candidate came from
        self.pending_origin: list[str] = []
        self.kept: list[tuple] = []
        self.pending: list[tuple] = []  # this generation's candidates
        self.usable: list[int] = []  # indices into pending
        self.structured = False  # whether the structure edits were queued (before any target retires)
        self.boost = 0  # candidates the next generation draws at least (the structure edits)
        self.stale = 0  # generations that drew no new candidate
        self.idle = 0  # generations in a row that kept nothing
        self.outside_in_a_row = 0  # generations in a row whose every candidate was outside the domain
        self.admitted_seen = self.outside_seen = 0  # candidates the precondition admitted and rejected so far
        self.done = False
        M = np.asarray(problem.pass_matrix, dtype=bool).reshape(len(problem.programs), len(problem.tests))
        ok = np.ones(len(problem.tests), bool) if problem.reference_passes is None else np.asarray(
            problem.reference_passes, bool)
        survivors = M[:, ok].all(axis=1) if M.shape[0] else np.zeros(0, bool)
        self.alive = set(np.flatnonzero(survivors).tolist())
        self.agreed: dict[int, int] = {}  # per target: usable inputs on which it returned the reference's value
        self.groups: list[list[int]] = []
        if config.split:
            by_vector: dict[bytes, list[int]] = {}
            for p in np.flatnonzero(~survivors).tolist():
                by_vector.setdefault(M[p].tobytes(), []).append(p)
            self.groups = [g for g in by_vector.values() if len(g) > 1]
        self.result.survivors = len(self.alive)
        self.result.targets = len(self.target_programs())
        self.reference_timeout, self.target_timeout = probe_timeouts(problem, config)
        if config.objective == "mutants":
            # before those: the boundaries of the constants a target changed (a mutant that moved 12 to 13 is told
            # apart at 12 or 13, if anywhere), which inputs blind to the pool reach only by chance
            hot = hot_constants(problem.reference or "", [problem.programs[p] for p in self.target_programs()])
            if hot:
                hot_sweep = self.mutator.sweep(limit=32, constants=hot)
                self.origin.update((repr(a), "hot") for a in hot_sweep)
                self.queue += hot_sweep

    def target_programs(self) -> list[int]:
        return sorted(self.alive | {p for g in self.groups for p in g})

    @property
    def remaining(self) -> int:
        budget = self.config.budget if self.problem.budget is None else self.problem.budget
        return budget - self.result.executions

    def draw(self) -> bool:
        """Draw this generation's candidates; False when the search is over."""
        config = self.config
        if self.done or len(self.kept) >= config.max_tests:
            self.done = True
            return False
        if config.objective == "mutants":
            targets = len(self.target_programs())
            if not targets:
                self.done = True
                return False
            size = max(min(config.generation_size, max(1, config.generation_size // 4) << self.idle), self.boost)
            self.boost = 0
            n = min(size, self.remaining // (1 + targets))
        else:
            n = min(config.generation_size, self.remaining // (1 + len(self.problem.programs)))
        if n < 1:
            self.done = True
            return False
        if self.admitted_seen:  # a precondition rejects some candidates for free: draw enough that n get through
            n = min(4 * n, math.ceil(n * (self.admitted_seen + self.outside_seen) / self.admitted_seen))
        self.pending, self.pending_origin = [], []
        for _ in range(20 * n):
            queued = bool(self.queue)
            args = self.queue.pop() if queued else self.mutator.candidate()
            key = repr(args)
            # a repeat (most of the misses) is neither rendered nor has its origin named
            if key in self.seen or len(render_args(args)) > config.max_input_chars:
                continue
            origin = self.origin.get(key, "sweep") if queued else "+".join(["random", *sorted(self.mutator.tags)])
            self.seen.add(key)
            rule = self.domain.violation(args)
            if rule is not None:
                self.result.out_of_domain[rule] = self.result.out_of_domain.get(rule, 0) + 1
                continue
            self.pending.append(args)
            self.pending_origin.append(origin)
            if len(self.pending) == n:
                break
        if not self.pending:
            self.stale += 1
            self.done = self.stale >= 3
            return False
        self.result.candidates += len(self.pending)
        return True

    def probe(self) -> ProbeProgram:
        return ProbeProgram(self.problem.reference or "", self.call.callee, self.pending, cpu_s=self.config.cpu_s,
                            max_chars=self.config.max_value_chars, precondition=self.domain.contract)

    def usability_tests(self, probe: ProbeProgram) -> list[str]:
        """The usability questions, and where a precondition must run, the admission ones after them."""
        tests = probe.usable_tests()
        return tests + probe.admitted_tests() if self.domain.needs_sandbox else tests

    def spend(self, k: int, executions: int = 1, kills: int = 0) -> None:
        """Count ``executions`` and ``kills`` against the origin of pending candidate ``k`` (``by_origin``)."""
        row = self.result.by_origin.setdefault(self.pending_origin[k], [0, 0, 0])
        row[0] += executions
        row[1] += kills

    def take_usable(self, passed: Sequence[bool]) -> None:
        n = len(self.pending)
        admitted = [True] * n
        if len(passed) > n:  # the admission answers: a candidate the precondition rejects is out of the domain
            admitted = [bool(ok) for ok in passed[n:]] + [False] * max(0, 2 * n - len(passed))
            outside = admitted.count(False)
            self.admitted_seen += n - outside
            self.outside_seen += outside
            if outside:
                self.result.out_of_domain[self.domain.how] = self.result.out_of_domain.get(self.domain.how, 0) + outside
            passed = passed[:n]
        # a candidate outside the domain costs no execution: the precondition stops it before the reference runs
        self.result.executions += sum(admitted)
        for k in range(n):
            if admitted[k]:
                self.spend(k)
                self.result.by_origin[self.pending_origin[k]][2] += 1
        self.usable = [k for k, ok in enumerate(passed) if ok]
        self.result.usable += len(self.usable)
        if not any(admitted):
            # a generation wholly outside the domain spent nothing; a few in a row end the search (the mutator
            # keeps leaving the domain)
            self.outside_in_a_row += 1
            self.done = self.outside_in_a_row >= 4 * self.config.patience
            return
        self.outside_in_a_row = 0
        if not self.usable and self.config.objective == "mutants":
            self.idle += 1
            self.done = self.idle >= self.config.patience

    def pick(self, same: dict[int, list[bool]] | None, agreed: dict[int, int] | None = None) -> None:
        """Keep this generation's best candidates (``same[p][j]``: target ``p`` agrees with the reference on usable
        j, or was not asked), then retire the targets that agreed on ``retire_after`` inputs in all (``agreed[p]``:
        inputs this generation on which ``p`` ran and agreed)."""
        config = self.config
        if config.objective == "random":
            order = list(self.usable)
            self.rng.shuffle(order)
            for k in order:
                cost = len(self.problem.programs)
                if len(self.kept) >= config.max_tests or self.remaining < cost:
                    self.done = True
                    break
                self.result.executions += cost
                self.kept.append(self.pending[k])
            return
        assert same is not None
        kept_before = len(self.kept)
        self._greedy(same)
        self._retire(agreed or {})
        self.idle = 0 if len(self.kept) > kept_before else self.idle + 1
        if self.idle >= config.patience:
            self.done = True

    def _greedy(self, same: dict[int, list[bool]]) -> None:
        config = self.config
        open_ = set(range(len(self.usable)))
        while open_ and len(self.kept) < config.max_tests:
            best, best_gain = [], 0
            for j in sorted(open_):
                kills = sum(1 for p in self.alive if not same[p][j])
                splits = sum(1 for g in self.groups if len({same[p][j] for p in g}) > 1)
                gain = 2 * kills + splits
                if gain > best_gain:
                    best, best_gain = [j], gain
                elif gain == best_gain and gain > 0:
                    best.append(j)
            if not best:
                break
            j = self.rng.choice(best)
            open_.discard(j)
            killed = {p for p in self.alive if not same[p][j]}
            self.alive -= killed
            self.result.killed += len(killed)
            self.spend(self.usable[j], executions=0, kills=len(killed))
            groups = []
            for g in self.groups:
                parts = [[p for p in g if same[p][j]], [p for p in g if not same[p][j]]]
                if all(parts):
                    self.result.splits += 1
                groups.extend(part for part in parts if len(part) > 1)
            self.groups = groups
            args = self.pending[self.usable[j]]
            self.kept.append(args)
            self.mutator.add_parent(args)

    def _retire(self, agreed: dict[int, int]) -> None:
        for p, n in agreed.items():
            self.agreed[p] = self.agreed.get(p, 0) + n
        tired = {p for p in self.target_programs() if self.agreed.get(p, 0) >= self.config.retire_after}
        if not tired:
            return
        if not self.structured and self.config.structure_edits:
            # before the first retirement: one generation of structure edits (ties, duplicates, boundary sizes,
            # splices of seed values), the inputs random edits reach least often and that equivalent-looking
            # survivors most often need
            self.structured = True
            edits = [a for a in self.mutator.structured(limit=4 * self.config.structure_edits)
                     if repr(a) not in self.seen][: self.config.structure_edits]
            self.origin.update((repr(a), "structured") for a in edits)
            self.queue += edits
            self.boost = len(edits)  # the next generation asks all of them
            return
        self.result.retired += len(tired)
        self.alive -= tired
        self.groups = [g for g in ([p for p in g if p not in tired] for g in self.groups) if len(g) > 1]

    def write_tests(self, values: list[tuple[bool, str | None]]) -> list[str]:
        tests, seen = [], {normalise_test(t) for t in self.problem.tests}
        for args, (ok, text) in zip(self.kept, values):
            if not ok or text is None:
                continue
            test = value_assert(self.call.callee, args, text)
            key = normalise_test(test)
            if key not in seen:
                seen.add(key)
                tests.append(test)
        return tests


def probe_timeouts(problem: SearchProblem, config: SearchConfig) -> tuple[float, float]:
    """CPU seconds per probe test for ``problem``: ``(reference-only probes, target-program probes)``.

    A probe that runs only the reference (usability, value reads) needs what the usability test allows it: its CPU
    alarms end the reference's calls within ~3 x ``cpu_s``, so it runs under ``4 x cpu_s``. A target's probe test
    calls the target and the reference (at most ``cpu_s`` on a usable input): it runs under the problem's
    calibrated limit, the one the pool's run of a kept test is judged by, plus that share; under the fixed
    ``sandbox.timeout_s`` where the problem has no limit (the pool runs at it too). Both are capped by it. A
    timeout is read as it always was: the reference's input is not usable, the target disagrees.

    Example:
        >>> probe_timeouts(SearchProblem("P_1", "x = 1", [], [], [], limit=0.159), SearchConfig())
        (0.4, 0.259)
        >>> probe_timeouts(SearchProblem("P_1", "x = 1", [], [], []), SearchConfig())
        (0.4, 1.0)
    """
    ceiling = float(config.sandbox.timeout_s)
    reference = round(min(ceiling, REFERENCE_TIMEOUT_FACTOR * config.cpu_s), 6)
    limit = problem.limit
    if limit is None or not float(limit) > 0 or not math.isfinite(float(limit)):
        return reference, ceiling
    return reference, round(min(ceiling, float(limit) + config.cpu_s), 6)


def hot_constants(reference: str, programs: Sequence[str]) -> list[int]:
    """The integers some program writes and the reference does not, or the reverse: where a mutant changed a constant.

    Example:
        >>> hot_constants("def f(m):\\n    return 1 <= m <= 12", ["def f(m):\\n    return 1 <= m <= 13"])
        [12, 13]
    """
    ours = set(reference_constants(reference).get(int, []))
    hot: set[int] = set()
    for code in programs:
        hot |= set(reference_constants(code).get(int, [])) ^ ours
    return sorted(c for c in hot if abs(c) < 10**6)


def _start(problem: SearchProblem, config: SearchConfig, round_: int) -> _State | SearchResult:
    if not problem.reference:
        return SearchResult(problem.id, reason="no_reference")
    call = recover_call(problem.tests, defined=defined_names(problem.reference))
    if call is None or not call.seeds:
        return SearchResult(problem.id, reason="no_literal_call")
    state = _State(problem, call, config, round_)
    if config.objective == "mutants" and not state.target_programs():
        state.result.reason = "nothing_to_target"
        state.done = True
    return state


def _finish(state: _State, sandbox: Any, verify_sandbox: Any) -> None:
    """Read the reference's values on a problem's kept inputs, write the asserts, keep those the reference passes in
    a separate run (or say why there are none)."""
    result = state.result
    if not state.kept:
        result.reason = result.reason or ("no_usable_input" if not result.usable else "nothing_found")
        return
    probe = ProbeProgram(state.problem.reference or "", state.call.callee, state.kept,
                         cpu_s=state.config.cpu_s, max_chars=state.config.max_value_chars,
                         precondition=state.domain.contract)
    values = read_values(sandbox, probe, range(len(state.kept)), timeout_s=state.reference_timeout)
    result.reads += sum(13 + 8 * len(text.encode()) for ok, text in values if ok and text)
    tests = state.write_tests(values)
    if tests:
        passed = verify_sandbox.run(state.problem.reference, tests).passed
        result.tests = [t for t, ok in zip(tests, passed) if ok]
        result.rejected = len(tests) - len(result.tests)
    if not result.tests:
        result.reason = "unreadable"


def search_tests(
    problems: Sequence[SearchProblem],
    config: SearchConfig = SearchConfig(),
    *,
    round: int = 1,
    sandbox: Any = None,
    verify_sandbox: Any = None,
    progress: bool = False,
) -> list[SearchResult]:
    """Search new asserts for each problem (all problems advance together, so the sandbox's workers stay busy).

    Args:
        problems (`Sequence[SearchProblem]`): the problems, each with its reference, suite, pool and pass matrix.
        config (`SearchConfig`, *optional*): budget, objective, seed.
        round (`int`, defaults to 1): the round number (it seeds the candidates with the problem id).
        sandbox (`Sandbox`, *optional*): where the probes run; by default a shared sandbox of ``config.sandbox``
            (fast mode; a program stops after two timeouts in a row, and its remaining probes then count for
            nothing).
        verify_sandbox (`Sandbox`, *optional*): where the reference runs the written asserts (default: ``sandbox``).
        progress (`bool`, defaults to `False`): show a progress bar of the problems whose search is over.

    Returns:
        `list[SearchResult]`: one per problem, in order.

    Example:
        >>> from evolvecoder_datasets.search.writer import SearchProblem, search_tests
        >>> search_tests([SearchProblem("P_2", None, ["assert f(1) == 1"], [], [])])[0].reason
        'no_reference'
    """
    from ..execution import Job

    if sandbox is None:
        from ..execution import shared_sandbox

        sandbox = shared_sandbox(config.sandbox)
    verify_sandbox = verify_sandbox or sandbox
    started = [_start(p, config, round) for p in problems]
    states = [s for s in started if isinstance(s, _State) and not s.done]
    bar = None
    if progress and states:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(states), desc=f"search round {round}", unit="problem")
    while True:
        active = [s for s in states if s.draw()]
        if bar is not None:
            bar.update(sum(s.done for s in states) - bar.n)
        active = [s for s in active if not s.done]
        if not active:
            if all(s.done for s in states):
                break
            continue
        probes = [s.probe() for s in active]
        reports = sandbox.run_many([Job(p.program(), tests=s.usability_tests(p), timeout_s=s.reference_timeout)
                                    for s, p in zip(active, probes)])
        for state, report in zip(active, reports):
            state.take_usable(report.passed)
        # one batch of every active problem's target runs: a survivor is asked until it first disagrees (it only
        # needs killing once), a member of an alike group on every input (a split needs both answers)
        jobs, owners = [], []
        for state, probe in zip(active, probes):
            if state.config.objective == "random" or not state.usable:
                continue
            asked = {True: probe.first_tests(state.usable), False: probe.same_tests(state.usable)}
            for p in state.target_programs():
                first = p in state.alive
                jobs.append(Job(probe.program(state.problem.programs[p]), tests=asked[first],
                                timeout_s=state.target_timeout))
                owners.append((state, p, first))
        reports = sandbox.run_many(jobs) if jobs else []
        same: dict[int, dict[int, list[bool]]] = {}
        agreed: dict[int, dict[int, int]] = {}
        for (state, p, first), report in zip(owners, reports):
            statuses = report.statuses
            if report.infra_error:
                # a sandbox failure says nothing about the program: agreement (no kill), every run counted as spent
                agree, ran = [True] * len(statuses), len(statuses)
            elif first:
                # an error is a question skipped after the first disagreement (the probe catches the program's own
                # exceptions and answers False): not run, not counted, read as agreement
                agree = [s in ("pass", "unexecuted", "error") for s in statuses]
                ran = sum(s not in ("error", "unexecuted") for s in statuses)
            else:
                # a test left unexecuted after repeated timeouts says nothing: agreement, credited with no kill
                agree = [s in ("pass", "unexecuted") for s in statuses]
                ran = len(statuses)
            state.result.executions += ran
            for j, status in enumerate(statuses):  # each usable candidate's share, by where it came from
                if report.infra_error or not first or status not in ("error", "unexecuted"):
                    state.spend(state.usable[j])
            same.setdefault(id(state), {})[p] = agree
            agreed.setdefault(id(state), {})[p] = sum(s == "pass" for s in statuses)
        for state in active:
            if state.config.objective == "random":
                state.pick(None)
            elif state.usable:
                state.pick(same.get(id(state), {}), agreed.get(id(state), {}))

    workers = sandbox.settings.worker_count if sandbox is not None else 1
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(lambda state: _finish(state, sandbox, verify_sandbox), states))
    if bar is not None:
        bar.update(len(states) - bar.n)
        bar.close()
    return [s.result if isinstance(s, _State) else s for s in started]
