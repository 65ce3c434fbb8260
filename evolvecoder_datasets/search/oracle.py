"""An oracle per problem, kept apart from the suite: many reference-valued inputs that label programs right or wrong.

The oracle of a problem is a set of asserts ``assert f(args) == value`` (a float within the shared tolerance of
:mod:`~evolvecoder_datasets.tolerance`) over inputs generated independently of the published tests, valued by the
reference. It is never used to choose, keep or publish a test: it only says, for each program of the pool (model
samples, mutants, rewrites), whether it agrees with the reference on every one of its inputs (**right**) or not
(**wrong**), so that a suite's true-positive and true-negative rates can be measured
(:mod:`evolvecoder_datasets.metrics.fidelity`).

How it is built, per problem with a reference and a literal call in its tests
(:func:`~evolvecoder_datasets.search.inputs.recover_call`):

1. candidates: the seed inputs themselves, a boundary sweep of the reference's constants (each +-1, in numbers
   and in digits inside strings; one number at a time, then two at once), the structure edits of the seeds (ties, duplicates, boundary sizes, splices of
   seed values: :meth:`~evolvecoder_datasets.search.inputs.InputMutator.structured`), and random type-aware
   edits with twice the search's exploration; where the programs to label are given, the constants they change
   (the search's :func:`~evolvecoder_datasets.search.writer.hot_constants`) are swept as well, and the seeds are
   scaled (every number times 2 ... 100: magnitudes and differences the seeds do not reach); all from a random
   stream of their own (``FidelityConfig.seed`` with
   the problem id and ``"oracle"``, never the search's); the usable ones are taken from the sources in turn;
2. the reference runs each candidate **in the sandbox**, with no other program in its process (up to 64 candidates
   a stdin case, the answers printed: :func:`~evolvecoder_datasets.search.oracle_values.read_usable`); an input is
   usable when the
   reference returns plain data, the same twice, the cheaper of the two calls within ``cpu_s`` (the search's
   usability test, :class:`~evolvecoder_datasets.search.probes.ProbeProgram` with ``cheaper_call``; a CPU
   alarm of the process's own, 3 x ``cpu_s``, ends an input the reference never finishes; a top-level float is
   compared with the shared
   tolerance; a float inside a list, tuple or dict exactly, so a right program whose nested floats differ in the
   last bits is labelled wrong: the oracle errs towards calling programs wrong, which the fidelity figures show as
   accepted wrong programs, never as rejected right ones);
3. the reference's values on every usable input where they compress (``zlib``) into ``cheap_bytes``, else on a
   spread of ``inputs`` of them, are read back many to a stdin case from a process that ran nothing but the
   reference (:func:`~evolvecoder_datasets.search.oracle_values.read_reference_values`: its stdout, bounded by the
   service), and parsed with ``ast.literal_eval`` on the trusted side (a value read through pass/fail verdicts
   cost ~8 executions a compressed byte);
4. the asserts are written, and the reference must pass each in a separate run (those it fails are dropped).

Programs are then labelled by running them against the oracle's asserts in the sandbox like any test (the judge
decides outside; the expected values never enter a process that ran program code), stopping at the first
failure (:func:`label_programs`). Up to ``batch`` asserts make one test (``assert (a) and (b) ...``) while the
reference's CPU on them stays within ``cpu_s``, so each test still gives a right program ``timeout_s / cpu_s``
times the reference's time (10x by default), as one assert did; the reference checks its asserts the same way. A problem without a reference (LeetCode seeds), without a literal call, or where
no input is usable has no oracle and a reason (:data:`REASONS`): its programs have no label, never a guess.

Example:
    >>> from evolvecoder_datasets.execution import Sandbox
    >>> from evolvecoder_datasets.search.oracle import FidelityConfig, OracleProblem, build_oracles, label_programs
    >>> ref = "def clamp(x):\\n    return max(0, min(x, 10))\\n"
    >>> with Sandbox(workers=1, mode="fast") as sb:
    ...     [oracle] = build_oracles([OracleProblem("P_1", ref, ["assert clamp(5) == 5"])],
    ...                              FidelityConfig(inputs=40), sandbox=sb)
    ...     labels = label_programs([oracle], [[ref, "def clamp(x):\\n    return max(0, x)\\n"]], sandbox=sb)
    >>> oracle.reason, len(oracle.tests) > 10, labels[0].tolist()
    (None, True, [1, 0])
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .._parse import literal
from ..checks import check_fraction, check_positive
from ..code_names import defined_names
from ..errors import ConfigError
from ..limits import SandboxSettings
from ..seeding import stable_int
from ..tolerance import float_assert
from .calls import recover_call, render_args
from .domain import Domain, infer_domain
from .inputs import InputMutator, reference_constants
from .oracle_cache import OracleCache, oracle_key, program_key
from .oracle_values import read_reference_values, read_usable
from .probes import ProbeProgram
from .writer import hot_constants

__all__ = ["REASONS", "FidelityConfig", "Oracle", "OracleProblem", "build_oracles", "label_programs", "oracle_sample"]

_VERSION = "5"  # 4: values read many to a case, asserts judged in groups; 5: the usability alarm counts system time

#: Why a problem has no oracle.
REASONS = {
    "no_reference": "the problem has no confirmed reference solution: nothing to value inputs with",
    "no_literal_call": "no test calls a function of the reference with literal arguments",
    "no_usable_input": "the reference returned no plain, deterministic, quick value on any candidate",
    "unreadable": "the reference's values could not be read back, or it failed its own oracle asserts",
}

@dataclass(frozen=True)
class FidelityConfig:
    """Settings of the oracle and of the fidelity figures (YAML section ``fidelity:`` of a recipe).

    Args:
        enabled (`bool`, defaults to `True`): build an oracle per problem with a reference and report each round's
            fidelity (``stats.json``, the card, ``inspect``).
        inputs (`int`, defaults to 300): most oracle inputs per problem (usable ones, valued by the reference)
            where the values are costly to read; see ``cheap_bytes``.
        cheap_bytes (`int`, defaults to 1024): where the compressed values of every usable candidate fit in this
            many bytes (booleans, small numbers), the oracle keeps them all, not just ``inputs``: a larger oracle only
            where its values are small (0: always ``inputs``).
        candidates (`int`, defaults to 900): most candidate inputs drawn per problem (each costs one reference run).
        seed (`int`, defaults to 1): seed of the oracle's own random stream (with the problem id); never the search's.
        explore (`float`, defaults to 0.4): probability of an edit outside the seeds' observed domain (the search
            uses 0.2).
        cpu_s (`float`, defaults to 0.1): CPU seconds the reference may take on an input for it to be usable.
        sandbox (`SandboxSettings`, defaults to ``SandboxSettings(mode="fast")``): the sandbox the oracle is built
            and programs are labelled in, in the one form every config embeds
            (:class:`~evolvecoder_datasets.limits.SandboxSettings`). Its ``timeout_s`` is the CPU seconds per
            oracle assert when labelling a program (generous: a right program slower than the reference is still
            right; the suite's calibrated limit is what the fidelity measures). In a recipe the sandbox is the
            execute stage's with this ``mode`` and ``timeout_s``. The flat keys of older YAML
            (``fidelity: {timeout_s: 2.0}``) go under ``sandbox`` (:data:`FLAT_KEYS`,
            :func:`~evolvecoder_datasets.config.nest_flat_keys`).
        max_value_chars (`int`, defaults to 200): longest ``repr`` of a value the oracle keeps.
        max_input_chars (`int`, defaults to 300): longest rendered argument list.
        rewrites (`bool`, defaults to `True`): add the semantics-preserving rewrites of the reference
            (:mod:`evolvecoder_datasets.mutants.rewrites`) as right programs that are not the reference; each is
            checked against the oracle first, and they never join the published pool.
        max_listed (`int`, defaults to 20): problems listed by name in the statistics for each kind of error.
        sample (`int` or `None`, defaults to 200): at most this many problems get an oracle, drawn by
            :func:`oracle_sample` (seeded by ``seed`` and each problem's id: the same problems every round and on a
            rerun) from those with a reference; the others count as ``not_sampled``, never as errors. A run of at
            most ``sample`` problems measures every one; a larger run pays for a fixed number, and the figures carry
            their 95% intervals. ``None``: every problem.
        batch (`int`, defaults to 32): most oracle asserts joined into one test (``assert (a) and (b) ...``, judged
            outside like any assert) when labelling a program and when the reference checks them, while the
            reference's CPU on the group stays within ``cpu_s``; 1: one assert a test.
        cache (`bool`, defaults to `True`): keep each problem's oracle and its programs' labels across runs
            (:mod:`~evolvecoder_datasets.search.oracle_cache`: keyed by everything the oracle depends on, in
            ``$EVOLVECODER_ORACLE_CACHE`` or ``<cache root>/oracles``), so a rerun or another recipe on the same
            problems builds none again. It changes no figure and is not part of an oracle's cache key (a run's own
            saved oracle, ``stages/fidelity_oracle.json``, is keyed by the whole section: switching it rebuilds that
            once).
        version (`str`): bump when the oracle changes.

    Raises:
        ConfigError: a count below 1, a fraction outside [0, 1], ``sandbox`` not a ``SandboxSettings``, or
            ``cpu_s >= sandbox.timeout_s``.

    Example:
        >>> FidelityConfig(inputs=64).candidates, FidelityConfig().sandbox.mode, FidelityConfig().sandbox.timeout_s
        (900, 'fast', 1.0)
    """

    enabled: bool = True
    inputs: int = 300
    cheap_bytes: int = 1024
    candidates: int = 900
    seed: int = 1
    explore: float = 0.4
    cpu_s: float = 0.1
    sandbox: SandboxSettings = field(default_factory=lambda: SandboxSettings(mode="fast"))
    max_value_chars: int = 200
    max_input_chars: int = 300
    rewrites: bool = True
    max_listed: int = 20
    sample: int | None = 200
    batch: int = 32
    cache: bool = True
    version: str = f"oracle-{_VERSION}"

    #: Keys the config took before its sandbox settings were nested, and the field that holds each now
    #: (:func:`~evolvecoder_datasets.config.nest_flat_keys`): ``fidelity: {timeout_s: 2.0}`` reads as
    #: ``fidelity: {sandbox: {timeout_s: 2.0}}``.
    FLAT_KEYS: ClassVar[dict[str, str]] = {"timeout_s": "sandbox"}

    def __post_init__(self) -> None:
        for name in ("inputs", "candidates", "max_value_chars", "max_input_chars", "batch"):
            check_positive(name, getattr(self, name))
        check_positive("max_listed", self.max_listed, minimum=0)
        if self.sample is not None:
            check_positive("sample", self.sample)
        check_positive("cheap_bytes", self.cheap_bytes, minimum=0)
        check_fraction("explore", self.explore)
        if not isinstance(self.sandbox, SandboxSettings):
            raise ConfigError(f"FidelityConfig.sandbox must be a SandboxSettings, got {type(self.sandbox).__name__}")
        if not (0 < self.cpu_s < self.sandbox.timeout_s):
            raise ConfigError("FidelityConfig needs 0 < cpu_s < sandbox.timeout_s")


def oracle_sample(ids: Sequence[str], config: FidelityConfig = FidelityConfig()) -> set[str]:
    """The problems of ``ids`` that get an oracle: all of them when ``config.sample`` is `None` or not below their
    number, else the ``sample`` whose seeded hash (``config.seed`` with the id) is smallest. Each problem's rank
    depends on its id alone, so the draw is the same every round, on a rerun, and in any order of ``ids``.

    Example:
        >>> from evolvecoder_datasets.search.oracle import FidelityConfig, oracle_sample
        >>> ids = [f"P_{i}" for i in range(10)]
        >>> picked = oracle_sample(ids, FidelityConfig(sample=3))
        >>> len(picked), picked == oracle_sample(ids[::-1], FidelityConfig(sample=3))
        (3, True)
    """
    unique = list(dict.fromkeys(str(i) for i in ids))
    if config.sample is None or config.sample >= len(unique):
        return set(unique)
    return set(sorted(unique, key=lambda pid: (stable_int(config.seed, pid, "fidelity-sample"), pid))[: config.sample])


@dataclass
class OracleProblem:
    """A problem as the oracle sees it: its id, its reference (or `None`), its seed tests (for the call) and,
    optionally, the programs it will label (their constants that differ from the reference's are swept too, as
    differential testing does: inputs from the programs under test, never from the published tests).

    Example:
        >>> OracleProblem("P_1", None, []).reference is None
        True
    """

    id: str
    reference: str | None
    tests: list[str]
    programs: list[str] = field(default_factory=list)
    domain: Domain | None = None  # the inputs the problem defines (None: the shape its seeds show)


@dataclass
class Oracle:
    """One problem's oracle.

    Attributes:
        id (`str`): the problem id.
        tests (`list[str]`): the oracle's asserts (the reference passes each).
        callee (`str` or `None`): the call they make.
        candidates (`int`): candidate inputs drawn.
        usable (`int`): candidates the reference handled.
        reads (`int`): executions (stdin cases) spent asking which candidates are usable and reading values back.
        reason (`str` or `None`): why there is no oracle (a key of :data:`REASONS`).
        cpu (`list[float]`): per assert, the CPU seconds the reference's usability question took (two calls): how
            many asserts :func:`label_programs` joins into one test.
        cache_key (`str` or `None`): its key in the oracle cache where :func:`build_oracles` was given one.

    Example:
        >>> Oracle("P_1", reason="no_reference").available
        False
    """

    id: str
    tests: list[str] = field(default_factory=list)
    callee: str | None = None
    candidates: int = 0
    usable: int = 0
    reads: int = 0
    reason: str | None = None
    cpu: list[float] = field(default_factory=list)
    cache_key: str | None = field(default=None, compare=False, repr=False)

    @property
    def available(self) -> bool:
        """Whether the oracle can label programs."""
        return self.reason is None and bool(self.tests)


def _candidates(problem: OracleProblem, call: Any, config: FidelityConfig, domain: Domain) -> list[list[tuple]]:
    """The candidates by source: the seeds, the boundary sweep of the reference's constants (one number, then two at
    once), the structure edits, the random edits (about a third of ``candidates`` for the sweeps together, a third
    for the structure edits, the rest random; distinct across sources)."""
    seed = stable_int(config.seed, problem.id, "oracle")
    mutator = InputMutator(call.seeds, seed=seed, explore=config.explore,
                           constants=reference_constants(problem.reference or ""))
    seen: set[str] = set()

    def fresh(items) -> list[tuple]:
        out = []
        for args in items:
            key = repr(args)
            if key not in seen and len(render_args(args)) <= config.max_input_chars:
                seen.add(key)
                if domain.violation(args) is None:
                    out.append(args)
        return out

    third = max(1, config.candidates // 3)
    structured = sorted(mutator.structured(limit=third), key=_smallest_size)  # lengths 0, 1, 2 first
    sources = [fresh(tuple(s) for s in call.seeds), fresh(mutator.sweep(limit=third // 2)),
               fresh(mutator.sweep_pairs(limit=third // 2)), fresh(structured),
               fresh(_scaled(call.seeds, limit=third // 4))]
    hot = hot_constants(problem.reference or "", problem.programs) if problem.programs else []
    if hot:  # the constants the programs to label write and the reference does not (or the reverse)
        sources.insert(1, fresh(mutator.sweep(limit=third // 2, constants=hot)
                                + mutator.sweep_pairs(limit=third // 2, constants=hot)))
    room = config.candidates - sum(map(len, sources))
    randoms: list[tuple] = []
    for _ in range(20 * max(room, 0)):
        if len(randoms) >= room:
            break
        randoms += fresh([mutator.candidate()])
    return sources + [randoms]


def _smallest_size(args: tuple) -> int:
    """The length of the shortest string or collection among ``args`` (3 where none is shorter): boundary sizes."""
    return min([len(a) for a in args if isinstance(a, (str, list, tuple, dict, set))] + [3])


_SCALES = (2, 3, 5, 7, 9, 10, 11, 13, 15, 21, 25, 100)


def _scale(value: Any, k: int) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value * k
    if isinstance(value, (list, tuple)):
        return type(value)(_scale(v, k) for v in value)
    if isinstance(value, dict):
        return {key: _scale(v, k) for key, v in value.items()}
    return value


def _scaled(seeds: Sequence[tuple], limit: int) -> list[tuple]:
    """The seeds at larger scales: every number in a seed (nested too; not digits in strings) times ``k``, for
    ``k`` in :data:`_SCALES` (odd, composite and prime factors): the same shape with magnitudes, lengths and
    differences the seeds do not reach (an interval of length 9 or 33 where the seeds' are at most 8, an odd
    composite where the seeds hold primes and evens)."""
    out: dict[str, tuple] = {}
    for k in _SCALES:
        for seed in seeds:
            args = tuple(_scale(v, k) for v in seed)
            if args != tuple(seed):
                out.setdefault(repr(args), args)
    return list(out.values())[:limit]


def _spread(groups: list[list[int]], limit: int) -> list[int]:
    """Up to ``limit`` indices taken from the groups in turn (seeds first), so no source crowds out another."""
    out: list[int] = list(groups[0][:limit])
    rest = [list(g) for g in groups[1:]]
    while len(out) < limit and any(rest):
        for g in rest:
            if g and len(out) < limit:
                out.append(g.pop(0))
    return out


def _assert(callee: str, args: tuple, text: str) -> str | None:
    try:
        value = literal(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if repr(value) != text:
        return None
    call = f"{callee}({render_args(args)})"
    return float_assert(call, text) if type(value) is float else f"assert {call} == {text}"


def _chunks(cpu: Sequence[float], n: int, config: FidelityConfig) -> list[list[int]]:
    """Consecutive groups of at most ``config.batch`` of ``n`` asserts whose reference CPU (``cpu``; unknown: a group
    of its own) stays within ``config.cpu_s``: judged as one test under ``timeout_s``, a group gives a right program
    at least ``timeout_s / cpu_s`` times the reference's time, as one assert did."""
    groups: list[list[int]] = []
    spent = 0.0
    for i in range(n):
        cost = cpu[i] if i < len(cpu) else config.cpu_s
        if not groups or len(groups[-1]) >= config.batch or spent + cost > config.cpu_s:
            groups.append([])
            spent = 0.0
        groups[-1].append(i)
        spent += cost
    return groups


def _joined(tests: Sequence[str], group: Sequence[int]) -> str:
    """One assert of many (``assert (a) and (b) ...``): the judge plans it outside like any assert."""
    if len(group) == 1:
        return tests[group[0]]
    return "assert " + " and ".join(f"({tests[i][len('assert '):]})" for i in group)


def _verify(sandbox: Any, reference: str, tests: list[str], cpu: list[float], config: FidelityConfig) -> list[bool]:
    """Whether the reference passes each assert: by groups (:func:`_chunks`), and one by one inside a group it
    does not pass."""
    if not tests:
        return []
    groups = _chunks(cpu, len(tests), config)
    passed = [False] * len(tests)
    report = sandbox.run(reference, [_joined(tests, g) for g in groups])
    retry = []
    for group, ok in zip(groups, report.passed):
        if ok:
            for i in group:
                passed[i] = True
        elif len(group) > 1:
            retry += group
    if retry:
        for i, ok in zip(retry, sandbox.run(reference, [tests[i] for i in retry]).passed):
            passed[i] = ok
    return passed


def _build_one(problem: OracleProblem, config: FidelityConfig, sandbox: Any, verify: Any) -> Oracle:
    if not problem.reference:
        return Oracle(problem.id, reason="no_reference")
    call = recover_call(problem.tests, defined=defined_names(problem.reference))
    if call is None or not call.seeds:
        return Oracle(problem.id, reason="no_literal_call")
    oracle = Oracle(problem.id, callee=call.callee)
    domain = problem.domain if problem.domain is not None else infer_domain(call.seeds)
    sources = _candidates(problem, call, config, domain)
    inputs = [args for group in sources for args in group]
    oracle.candidates = len(inputs)
    # usable as the search's, but a float may sit inside a list, tuple or dict (compared exactly), and the cheaper
    # of the reference's two calls decides (one CPU alarm of 3 x cpu_s over both)
    probe = ProbeProgram(problem.reference, call.callee, inputs, cpu_s=config.cpu_s, max_chars=config.max_value_chars,
                         nested_floats=True, cheaper_call=True, precondition=domain.contract)
    costs, oracle.reads = read_usable(sandbox, probe, len(inputs))
    usable = sorted(costs)
    oracle.usable = len(usable)
    if not usable:
        oracle.reason = "no_usable_input"
        return oracle
    ok, groups, start = set(usable), [], 0
    for group in sources:
        groups.append([k for k in range(start, start + len(group)) if k in ok])
        start += len(group)
    # the values of every usable input where they are cheap (compressed within cheap_bytes), else of a spread of
    # `inputs` of them: read many a case through the reference's own stdout (oracle_values), never bit by bit
    everything = bool(config.cheap_bytes) and len(usable) > config.inputs
    chosen = usable if everything else _spread(groups, config.inputs)
    lines, spent = read_reference_values(sandbox, probe, chosen, max_chars=config.max_value_chars)
    oracle.reads += spent
    if everything and (lines is None or len(zlib.compress("\n".join(lines).encode("utf-8"), 9)) > config.cheap_bytes):
        read = dict(zip(usable, lines or ()))
        chosen = _spread(groups, config.inputs)
        if lines is None:  # the spread alone, as the budget asks
            lines, spent = read_reference_values(sandbox, probe, chosen, max_chars=config.max_value_chars)
            oracle.reads += spent
        else:
            lines = [read[k] for k in chosen]
    usable = chosen
    if lines is None:
        oracle.reason = "unreadable"
        return oracle
    written = [(t, costs[k]) for k, text in zip(usable, lines) if (t := _assert(call.callee, inputs[k], text))]
    tests, cpu = [t for t, _ in written], [c for _, c in written]
    passed = _verify(verify, problem.reference, tests, cpu, config)
    oracle.tests = [t for t, ok in zip(tests, passed) if ok]
    oracle.cpu = [c for c, ok in zip(cpu, passed) if ok]
    if not oracle.tests:
        oracle.reason = "unreadable"
    return oracle


def build_oracles(
    problems: Sequence[OracleProblem],
    config: FidelityConfig = FidelityConfig(),
    *,
    sandbox: Any = None,
    verify_sandbox: Any = None,
    cache: OracleCache | None = None,
) -> list[Oracle]:
    """Build each problem's oracle (problems in parallel, one per sandbox worker), or read it from ``cache``.

    Args:
        problems (`Sequence[OracleProblem]`): id, reference and seed tests of each problem.
        config (`FidelityConfig`, *optional*): how many inputs, which seed.
        sandbox (`Sandbox`, *optional*): where the reference runs (default: a shared sandbox of
            ``config.sandbox``, fast mode with a ceiling of ``timeout_s`` unless set otherwise). Use fast mode: the
            values are computed one test each, then read by later tests of the same process.
        verify_sandbox (`Sandbox`, *optional*): where the reference runs the written asserts (default: ``sandbox``).
        cache (`OracleCache`, *optional*): oracles kept across runs
            (:class:`~evolvecoder_datasets.search.oracle_cache.OracleCache`): a problem whose key is there is read
            back (``reads`` 0: nothing ran), the others are built and kept. Each oracle's ``cache_key`` then names
            it, so :func:`label_programs` reads and keeps its labels there too.

    Returns:
        `list[Oracle]`: one per problem, in order.

    Example:
        >>> from evolvecoder_datasets.search.oracle import OracleProblem, build_oracles
        >>> build_oracles([OracleProblem("LeetCode_1", None, ["assert Solution().f(1) == 1"])])[0].reason
        'no_reference'
    """
    keys = [oracle_key(p, config) if cache is not None and p.reference else None for p in problems]
    kept = [cache.get(k) if k else None for k in keys]  # a key only where there is a cache
    found: list[Oracle | None] = [Oracle(**entry) if entry else None for entry in kept]
    todo = [i for i, oracle in enumerate(found) if oracle is None]
    if sandbox is None and any(problems[i].reference for i in todo):
        from ..execution import shared_sandbox

        sandbox = shared_sandbox(config.sandbox)
    verify = verify_sandbox or sandbox
    workers = sandbox.settings.worker_count if sandbox is not None else 1
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for i, oracle in zip(todo, pool.map(lambda i: _build_one(problems[i], config, sandbox, verify), todo)):
            found[i] = oracle
            if keys[i] and oracle.available:
                cache.put(keys[i], dataclasses.asdict(oracle))  # the cache keeps the fields it reads back
    for oracle, key in zip(found, keys):
        oracle.cache_key = key if oracle.available else None
    return found


def label_programs(
    oracles: Sequence[Oracle],
    programs: Sequence[Sequence[str]],
    config: FidelityConfig = FidelityConfig(),
    *,
    sandbox: Any = None,
    cache: OracleCache | None = None,
) -> list[np.ndarray | None]:
    """Per problem, which programs agree with the reference on every oracle input (right) and which do not.

    Each program runs against its problem's oracle asserts in the sandbox (verdicts decided by the judge outside),
    stopping at the first that does not pass (asserts joined in groups: see ``FidelityConfig.batch``). A program is
    right when it passes every one: a wrong value, an exception, a timeout under ``config.sandbox.timeout_s`` or a
    crash makes it wrong (the program's doing). A run the sandbox itself failed (``infra_error``) says nothing about the program: it stays unlabelled.

    Args:
        oracles (`Sequence[Oracle]`): from :func:`build_oracles`.
        programs (`Sequence[Sequence[str]]`): per problem, the programs to label.
        config (`FidelityConfig`, *optional*): the per-assert time limit.
        sandbox (`Sandbox`, *optional*): where the programs run (default: a shared sandbox of ``config.sandbox``).
        cache (`OracleCache`, *optional*): where an oracle read from or kept in it (its ``cache_key``) finds the
            labels of programs it labelled before (by their text; those are not run again) and keeps the new ones.

    Returns:
        `list[numpy.ndarray | None]`: per problem, an ``int8`` array over its programs: 1 right, 0 wrong, -1
        unlabelled (a sandbox failure); `None` where the problem has no oracle.

    Example:
        >>> from evolvecoder_datasets.search.oracle import Oracle, label_programs
        >>> label_programs([Oracle("P_1", reason="no_reference")], [["x = 1"]])
        [None]
    """
    from ..execution import Job

    out: list[np.ndarray | None] = [np.zeros(len(codes), dtype=np.int8) if oracle.available else None
                                    for oracle, codes in zip(oracles, programs)]
    jobs, owners = [], []
    for k, (oracle, codes) in enumerate(zip(oracles, programs)):
        if oracle.available:
            joined = [_joined(oracle.tests, g) for g in _chunks(oracle.cpu, len(oracle.tests), config)]
            known = cache.labels_of(oracle.cache_key, codes) if cache is not None else [None] * len(codes)
            for i, (code, kept) in enumerate(zip(codes, known)):
                if kept is not None:
                    out[k][i] = kept
                    continue
                jobs.append(Job(code, tests=joined, timeout_s=config.sandbox.timeout_s, stop_on_failure=True))
                owners.append((k, i))
    if not jobs:
        return out
    if sandbox is None:
        from ..execution import shared_sandbox

        sandbox = shared_sandbox(config.sandbox)
    for (k, i), report in zip(owners, sandbox.run_many(jobs)):
        out[k][i] = -1 if report.infra_error else int(report.all_passed)
    if cache is not None:
        new: dict[int, dict[str, int]] = {}
        for k, i in owners:
            if oracles[k].cache_key:
                new.setdefault(k, {})[program_key(programs[k][i])] = int(out[k][i])
        for k, labels in new.items():
            cache.put_labels(oracles[k].cache_key, labels)
    return out
