"""What the search writer takes and gives: its settings, a problem as it sees one, what it did for one, and why a
problem got no tests. The search itself is :mod:`~evolvecoder_datasets.search.writer` (which re-exports these names).

Example:
    >>> from evolvecoder_datasets.search.problems import SearchConfig, SearchProblem, SearchResult
    >>> SearchConfig(budget=500).budget, SearchResult("P_1").tests
    (500, [])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..checks import check_fraction, check_positive
from ..errors import ConfigError
from ..limits import SandboxSettings
from .domain import Domain

__all__ = ["OBJECTIVES", "REASONS", "SearchConfig", "SearchProblem", "SearchResult"]

_VERSION = "8"  # 8: the usability alarm counts system time (ITIMER_PROF)
OBJECTIVES = ("mutants", "random")

#: Why a problem got no search tests.
REASONS = {
    "no_reference": "the problem has no confirmed reference solution to compute expected values",
    "no_literal_call": "no test calls a function of the reference with literal arguments",
    "nothing_to_target": "every program fails some test and no two behave alike: nothing left to kill or split",
    "no_usable_input": "the reference returned no plain, deterministic, quick value on any candidate",
    "nothing_found": "no candidate within the budget killed or split a target",
    "unreadable": "the reference's values could not be read back or its tests failed it",
}


@dataclass(frozen=True)
class SearchConfig:
    """Settings of the search test writer (they enter the ``datasets`` fingerprint through ``EvolveConfig``).

    Args:
        budget (`int`, defaults to 2000): executions per problem and round: one per reference run of a candidate,
            one per target program run on a usable candidate (``objective="random"``: one per pool program per
            kept test). Reading values and the final reference check are counted apart.
        generation_size (`int`, defaults to 32): most candidates drawn per generation; the first generation draws
            a quarter of it and each generation that keeps nothing doubles it, so easy kills cost little.
        patience (`int`, defaults to 3): stop a problem after this many generations in a row that kept nothing (its
            targets are probably equivalent to the reference); the rest of its budget is not spent.
        max_tests (`int`, defaults to 8): tests kept per problem and round.
        objective (`str`, defaults to ``"mutants"``): ``"mutants"`` keeps inputs that kill surviving programs or split
            programs the suite cannot tell apart; ``"random"`` keeps usable inputs in random order (the baseline).
        split (`bool`, defaults to `True`): also target groups of programs with identical pass vectors.
        retire_after (`int`, defaults to 24): a target program that returned what the reference returns on this
            many usable inputs is retired as probably equivalent to it, and costs nothing more this round (most
            mutants left alive by a suite are equivalent: spending on them is what made a search no better than
            random inputs per execution).
        structure_edits (`int`, defaults to 16): before the first target of a problem retires, this many structure
            edits of the seeds and kept inputs (:meth:`InputMutator.structured`: ties, duplicates, boundary sizes,
            splices of seed values) are asked first; 0 retires at once.
        explore (`float`, defaults to 0.2): probability of an edit outside the seeds' observed domain.
        cpu_s (`float`, defaults to 0.1): CPU seconds the reference may take on an input for it to be usable.
        max_value_chars (`int`, defaults to 300): longest ``repr`` of an expected value.
        max_input_chars (`int`, defaults to 300): longest rendered argument list.
        max_stdin_chars (`int`, defaults to 2000): longest stdin text of a stdin/stdout case
            (:mod:`~evolvecoder_datasets.search.stdio_writer`).
        max_stdout_chars (`int`, defaults to 2000): longest expected stdout of one.
        seed (`int`, defaults to 0): base of every random choice (with the problem id and round).
        sandbox (`SandboxSettings`, defaults to ``SandboxSettings(mode="fast")``): the sandbox of the search's own
            probe runs (choices only; the kept tests are judged by the round's sandbox settings), in the one form
            every config embeds (:class:`~evolvecoder_datasets.limits.SandboxSettings`, with its defaults and
            checks). Its ``mode`` is the probes' mode; its ``timeout_s`` is the ceiling of every probe's CPU
            seconds per test, and the limit of a target program's probes on a problem without a calibrated limit
            (``SearchProblem.limit``: where the execute stage also judges at the fixed limit). Probes of a problem
            with one run under it plus ``cpu_s`` (the reference's share of a probe test); probes that run only the
            reference, under ``4 x cpu_s`` (:data:`~evolvecoder_datasets.search.probes.REFERENCE_TIMEOUT_FACTOR`).
            In a recipe the probes' sandbox is the execute stage's with this ``mode`` and ``timeout_s``. YAML
            written before the settings were nested (``search: {mode: fast, timeout_s: 1.0}``) still reads: the
            flat keys go under ``sandbox`` (:data:`FLAT_KEYS`, :func:`~evolvecoder_datasets.config.nest_flat_keys`).
        version (`str`): bump when the search changes, so cached rounds are recomputed.

    Raises:
        ConfigError: a count below 1, an unknown objective, ``explore`` outside [0, 1], ``sandbox`` not a
            ``SandboxSettings``, or ``cpu_s`` not below ``sandbox.timeout_s``.

    Example:
        >>> SearchConfig(budget=500, max_tests=4).version
        'search-8'
        >>> SearchConfig().sandbox.mode, SearchConfig().sandbox.timeout_s
        ('fast', 1.0)
    """

    budget: int = 2000
    generation_size: int = 32
    patience: int = 3
    max_tests: int = 8
    objective: str = "mutants"
    split: bool = True
    retire_after: int = 24
    structure_edits: int = 16
    explore: float = 0.2
    cpu_s: float = 0.1
    max_value_chars: int = 300
    max_input_chars: int = 300
    max_stdin_chars: int = 2000
    max_stdout_chars: int = 2000
    seed: int = 0
    sandbox: SandboxSettings = field(default_factory=lambda: SandboxSettings(mode="fast"))
    version: str = f"search-{_VERSION}"

    #: Keys the config took before its sandbox settings were nested, and the field that holds each now: YAML
    #: ``search: {mode: fast}`` reads as ``search: {sandbox: {mode: fast}}``
    #: (:func:`~evolvecoder_datasets.config.nest_flat_keys`).
    FLAT_KEYS: ClassVar[dict[str, str]] = {"mode": "sandbox", "timeout_s": "sandbox"}

    def __post_init__(self) -> None:
        for name in ("budget", "generation_size", "patience", "max_tests", "max_value_chars", "max_input_chars",
                     "max_stdin_chars", "max_stdout_chars", "retire_after"):
            check_positive(name, getattr(self, name))
        check_positive("structure_edits", self.structure_edits, minimum=0)
        check_fraction("explore", self.explore)
        if self.objective not in OBJECTIVES:
            raise ConfigError(f"SearchConfig.objective must be one of {OBJECTIVES}, got {self.objective!r}")
        if not isinstance(self.sandbox, SandboxSettings):
            raise ConfigError(f"SearchConfig.sandbox must be a SandboxSettings, got {type(self.sandbox).__name__}")
        if not (0 < self.cpu_s < self.sandbox.timeout_s):
            raise ConfigError("SearchConfig needs 0 < cpu_s < sandbox.timeout_s")


@dataclass
class SearchProblem:
    """One problem as the search sees it.

    Args:
        id (`str`): the problem id (it seeds the problem's random stream).
        reference (`str` or `None`): the reference solution; ``None`` gets no tests.
        tests (`list[str]`): the current suite.
        programs (`list[str]`): the pool (samples, mutants).
        pass_matrix (array-like): ``(len(programs), len(tests))`` verdicts of the current suite.
        reference_passes (`list[bool]`, *optional*): the reference's verdict per test; tests it fails are ignored
            when deciding which programs survive (default: it passes all).
        budget (`int`, *optional*): this problem's budget instead of ``SearchConfig.budget`` (a benchmark gives a
            baseline exactly what the search spent).
        limit (`float`, *optional*): the problem's calibrated CPU seconds per test (the ``time_limit_s`` column),
            under which the pool will run the kept tests; ``None``: ``SearchConfig.sandbox.timeout_s``, as for the pool.
        domain (`Domain`, *optional*): the inputs the problem defines
            (:func:`~evolvecoder_datasets.search.domain.problem_domain`); a candidate it does not admit is never
            valued nor kept. ``None``: the shape its seeds show (:func:`~evolvecoder_datasets.search.domain.infer_domain`;
            :func:`~evolvecoder_datasets.stages.support.domains.problem_domain` gives the precondition shipped for
            its id, as the evolve box does).

    Example:
        >>> p = SearchProblem("P_1", "def f(x):\\n    return x", ["assert f(1) == 1"], ["def f(x):\\n    return 1"], [[True]],
        ...                   limit=0.1)
        >>> p.programs, p.budget, p.limit
        (['def f(x):\\n    return 1'], None, 0.1)
    """

    id: str
    reference: str | None
    tests: list[str]
    programs: list[str]
    pass_matrix: Any
    reference_passes: list[bool] | None = None
    budget: int | None = None
    limit: float | None = None
    domain: Domain | None = None


@dataclass
class SearchResult:
    """What the search did for one problem.

    Attributes:
        id (`str`): the problem id.
        tests (`list[str]`): the new asserts (the reference passed each in a separate run), in the order kept.
        reason (`str` or `None`): why there are none (a key of :data:`REASONS`), else ``None``.
        callee (`str` or `None`): the call the tests make.
        targets (`int`): programs targeted at the start (survivors plus members of indistinguishable groups).
        survivors (`int`): programs passing every test at the start.
        killed (`int`): survivors a kept input separates from the reference (as the probes saw it).
        splits (`int`): groups of alike programs a kept input split.
        retired (`int`): targets given up as probably equivalent (``SearchConfig.retire_after``).
        candidates (`int`): distinct candidate inputs drawn.
        usable (`int`): candidates the reference handled (plain, deterministic, quick).
        executions (`int`): probe executions spent (counted against ``budget``).
        reads (`int`): tiny tests spent reading expected values back.
        rejected (`int`): written asserts the reference failed in the final check (dropped).
        out_of_domain (`dict[str, int]`): candidates left out because the problem's domain does not admit them, by
            the rule they break (:data:`~evolvecoder_datasets.search.domain.DOMAIN_RULES`; a precondition's
            rejections under its ``how``).
        by_origin (`dict[str, list[int]]`): per origin of a candidate (``sweep``, ``hot``, ``structured``,
            ``random``, or ``random+`` the newer edits it used: ``splice``, ``tie``, ``tie_extreme``,
            ``tie_arguments``), ``[executions, kills, candidates]``: where the budget went.

    Example:
        >>> SearchResult("P_1", reason="no_reference").tests, REASONS["no_reference"][:25]
        ([], 'the problem has no confir')
    """

    id: str
    tests: list[str] = field(default_factory=list)
    reason: str | None = None
    callee: str | None = None
    targets: int = 0
    survivors: int = 0
    killed: int = 0
    splits: int = 0
    retired: int = 0
    candidates: int = 0
    usable: int = 0
    executions: int = 0
    reads: int = 0
    rejected: int = 0
    out_of_domain: dict[str, int] = field(default_factory=dict)
    by_origin: dict[str, list[int]] = field(default_factory=dict)
