"""The code_instruct pipeline: seed windows -> one LLM call each -> gates -> two-stage execution -> tasks.

For each seed window the model writes a problem, a pytest test and a reference ``task_module.py``
(:mod:`evolvecoder_datasets.prompts.code_instruct`). The static gates (:mod:`.gates`) run first; a survivor is
executed twice in the repository's environment: stage A without ``task_module.py`` must fail, stage B with it must
pass, both judged from the nonce-stamped verdict file (:mod:`.environment`). A seed whose candidate is rejected
is asked again, up to ``max_attempts_per_seed`` calls (each attempt sends a different sampling seed, so the request
cache never replays the rejected answer). Calls for all active seeds go out together; verifications run in
parallel.

Example:
    >>> from evolvecoder_datasets.code_instruct import CodeInstructConfig, VenvBackend, generate_tasks, open_repository
    >>> from evolvecoder_datasets.llm import LLMConfig
    >>> repo = open_repository("click-8.1.7.tar.gz")                                        # doctest: +SKIP
    >>> run = generate_tasks(repo, llm=LLMConfig(model="gpt-4o-mini", cache_dir="runs/ci"),
    ...                      environment=VenvBackend(), config=CodeInstructConfig(num_seeds=20))  # doctest: +SKIP
    >>> print(run.report)                                                                    # doctest: +SKIP
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, LLMRequestError, LLMResponseError, LLMUnavailableError
from ..prompts import code_instruct as prompt
from .environment import EnvironmentBackend, PytestRun, RepoEnvironment, VenvBackend
from .gates import DecontaminationIndex, Deduplicator, GateResult, run_gates
from .repository import Repository, normalize_name
from .seeds import SeedConfig, Snippet, sample_snippets
from .split import TEST_TIMEOUT_S, NotSplittable, SplitSuite, split_pytest_module, split_settings

if TYPE_CHECKING:  # pragma: no cover
    from ..llm import Backend, LLMConfig

logger = logging.getLogger(__name__)

__all__ = [
    "SOLUTION_FILE",
    "TEST_FILE",
    "VERSION",
    "CodeInstructConfig",
    "CodeInstructRun",
    "Task",
    "Verification",
    "YieldReport",
    "generate_tasks",
    "instruction_for",
    "tasks_from_runs",
    "verify_task",
]

#: Version of the pipeline logic; it enters the provenance of every task.
VERSION = "code-instruct-pipeline-1"
#: A verdict decided in the process that ran the solution (pytest's).
JUDGED_INSIDE = "inside"
#: Verdicts decided by the sandbox's judge, in a process that never ran the solution.
JUDGED_OUTSIDE = "outside"
TEST_FILE = "test_task.py"
SOLUTION_FILE = "task_module.py"


@dataclass(frozen=True)
class CodeInstructConfig:
    """Settings of one code_instruct run (data, so that it can be recorded next to the dataset).

    Args:
        num_seeds (`int`, defaults to 50): seed windows to draw per repository.
        max_attempts_per_seed (`int`, defaults to 3): LLM calls per seed before it is given up.
        temperature (`float`, defaults to 0.7): sampling temperature.
        max_tokens (`int`, defaults to 2048): completion budget per call.
        llm_seed (`int`, defaults to 0): sampling seed of attempt 1; attempt ``k`` sends ``llm_seed + k - 1``.
        verify_timeout_s (`float`, defaults to 180): wall-clock limit of each verification stage.
        verify_workers (`int`, defaults to 2): verification runs in parallel.
        seeds (`SeedConfig`, *optional*): window sizes, globs and the run seed.
        decontamination (`tuple[str, ...]`, defaults to ``("humaneval", "leetcode")``): benchmarks indexed for
            the decontamination gate (``()`` disables it unless an index is passed to :func:`generate_tasks`).
        ngram (`int`, defaults to 10): words per n-gram for decontamination.
        max_overlap (`float`, defaults to 0.02): tolerated share of benchmark n-grams in a problem.
        min_asserts (`int`, defaults to 3): non-trivial asserts a test needs.
        repo_label (`str`, *optional*): how the prompt names the repository (``"pallets/click"``); defaults to
            ``dist==version``.
        export_judged_inside (`bool`, defaults to `False`): also export (rows, Harbor folders) tasks whose
            verification was judged inside the solution's process (tests the split refuses, container backends;
            see :class:`Task`).

    Raises:
        ConfigError: a count below 1, a timeout that is not positive, or a temperature outside [0, 2].

    Example:
        >>> CodeInstructConfig(num_seeds=10, seeds=SeedConfig(seed=7)).max_attempts_per_seed
        3
    """

    num_seeds: int = 50
    max_attempts_per_seed: int = 3
    temperature: float = 0.7
    max_tokens: int = 2048
    llm_seed: int = 0
    verify_timeout_s: float = 180.0
    verify_workers: int = 2
    seeds: SeedConfig = field(default_factory=SeedConfig)
    decontamination: tuple[str, ...] = ("humaneval", "leetcode")
    ngram: int = 10
    max_overlap: float = 0.02
    min_asserts: int = 3
    repo_label: str | None = None
    export_judged_inside: bool = False

    def __post_init__(self) -> None:
        for name in ("num_seeds", "max_attempts_per_seed", "max_tokens", "verify_workers", "min_asserts"):
            if int(getattr(self, name)) < 1:
                raise ConfigError(f"{name} must be at least 1; got {getattr(self, name)}")
        if self.verify_timeout_s <= 0:
            raise ConfigError(f"verify_timeout_s must be positive; got {self.verify_timeout_s}")
        if not 0.0 <= self.temperature <= 2.0:
            raise ConfigError(f"temperature must lie in [0, 2]; got {self.temperature}")
        if isinstance(self.seeds, dict):
            object.__setattr__(self, "seeds", SeedConfig(**self.seeds))
        object.__setattr__(self, "decontamination", tuple(self.decontamination))

    def to_dict(self) -> dict[str, Any]:
        """Plain data (for ``recipe.yaml`` and the card's provenance)."""
        data = asdict(self)
        data["seeds"] = {k: list(v) if isinstance(v, tuple) else v for k, v in data["seeds"].items()}
        data["decontamination"] = list(self.decontamination)
        data["version"] = VERSION
        return data


@dataclass(frozen=True)
class Task:
    """One emitted, execution-verified task.

    Args:
        id (`str`): ``<distribution>_<seed index>``.
        problem (`str`): the problem description as the model wrote it.
        instruction (`str`): the problem plus the delivery contract (:func:`instruction_for`).
        test (`str`): the pytest module (``test_task.py``).
        solution (`str`): the reference module (``task_module.py``).
        repo (`str`): the distribution name.
        repo_version (`str`): its version.
        package (`str`): the import name the task uses.
        path (`str`): the seed file.
        start_line (`int`): first line of the seed window.
        end_line (`int`): last line of the seed window.
        model (`str`): the model that wrote it.
        attempts (`int`): LLM calls spent on this seed, this one included.
        seed_index (`int`): the seed window's index in the run.
        stage_a (`dict[str, str]`): per-test outcomes without the solution.
        stage_b (`dict[str, str]`): per-test outcomes with the solution.
        environment (`str`): ``backend:key`` of the environment that verified it.
        judged (`str`, defaults to ``"inside"``): where the verdicts that verified it were decided: ``"outside"``
            when the test was split into planned asserts and the sandbox's judge decided both stages
            (:func:`verify_task`); ``"inside"`` when pytest did, in the interpreter that imported
            ``task_module.py``, where a solution can reach the verdict plugin and forge its file. The exports leave
            ``"inside"`` tasks out unless asked (``CodeInstructConfig.export_judged_inside``; see
            docs/threat-model.md).
    """

    id: str
    problem: str
    instruction: str
    test: str
    solution: str
    repo: str
    repo_version: str
    package: str
    path: str
    start_line: int
    end_line: int
    model: str
    attempts: int
    seed_index: int
    stage_a: dict[str, str] = field(default_factory=dict)
    stage_b: dict[str, str] = field(default_factory=dict)
    environment: str = ""
    judged: str = JUDGED_INSIDE


@dataclass
class YieldReport:
    """What a run drew, asked, rejected and emitted.

    Attributes:
        repository (`str`): ``dist==version`` (or ``"<n> repositories"`` after :meth:`merge`).
        seeds_sampled (`int`): seed windows requested.
        seeds_without_window (`int`): seeds for which no acceptable window was found.
        attempts (`int`): LLM calls (= candidates).
        verified (`int`): candidates that reached execution.
        emitted (`int`): tasks emitted.
        skip_reasons (`Counter`): per rejected candidate, its reason.
        seed_outcomes (`Counter`): per seed, ``"emitted"`` or the reason of its last rejection.
    """

    repository: str = ""
    seeds_sampled: int = 0
    seeds_without_window: int = 0
    attempts: int = 0
    verified: int = 0
    emitted: int = 0
    skip_reasons: Counter = field(default_factory=Counter)
    seed_outcomes: Counter = field(default_factory=Counter)

    @property
    def yield_rate(self) -> float:
        """Emitted tasks per LLM call (0.0 when nothing was asked)."""
        return self.emitted / self.attempts if self.attempts else 0.0

    def merge(self, other: YieldReport) -> YieldReport:
        """The sum of two reports (e.g. over repositories)."""
        names = [n for n in (self.repository, other.repository) if n]
        return YieldReport(
            repository=", ".join(names),
            seeds_sampled=self.seeds_sampled + other.seeds_sampled,
            seeds_without_window=self.seeds_without_window + other.seeds_without_window,
            attempts=self.attempts + other.attempts,
            verified=self.verified + other.verified,
            emitted=self.emitted + other.emitted,
            skip_reasons=self.skip_reasons + other.skip_reasons,
            seed_outcomes=self.seed_outcomes + other.seed_outcomes,
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain data, with the yield rate and the reasons sorted by count."""
        return {
            "repository": self.repository,
            "seeds_sampled": self.seeds_sampled,
            "seeds_without_window": self.seeds_without_window,
            "attempts": self.attempts,
            "verified": self.verified,
            "emitted": self.emitted,
            "yield_rate": round(self.yield_rate, 4),
            "skip_reasons": dict(self.skip_reasons.most_common()),
            "seed_outcomes": dict(self.seed_outcomes.most_common()),
        }

    def __str__(self) -> str:
        lines = [
            f"code_instruct yield for {self.repository or '?'}",
            f"  seeds sampled        {self.seeds_sampled} ({self.seeds_without_window} without a usable window)",
            f"  LLM calls            {self.attempts}",
            f"  reached execution    {self.verified}",
            f"  emitted              {self.emitted} ({self.yield_rate:.1%} of calls)",
        ]
        if self.skip_reasons:
            lines.append("  skipped candidates by reason:")
            lines += [f"    {reason:<32} {count}" for reason, count in self.skip_reasons.most_common()]
        return "\n".join(lines)


@dataclass
class CodeInstructRun:
    """The result of :func:`generate_tasks`.

    Attributes:
        tasks (`list[Task]`): emitted tasks, in seed order.
        report (`YieldReport`): the counts.
        environment (`RepoEnvironment`): the environment tasks were verified in.
        rejected (`list[dict]`): one record per rejected candidate (seed, attempt, reason, detail, and the parsed
            sections when there were any), for inspection.
        repository (`Repository`, *optional*): the repository the tasks are grounded in (task folders copy its
            source tree into their container recipe).
        environment_spec (`EnvironmentSpec`, *optional*): the container recipe of the environment, when the backend
            built one (:class:`~.containers.ContainerBackend`); for a virtualenv it is read at export time.
    """

    tasks: list[Task]
    report: YieldReport
    environment: RepoEnvironment
    rejected: list[dict[str, Any]] = field(default_factory=list)
    repository: Repository | None = None
    environment_spec: Any = None


@dataclass(frozen=True)
class Verification:
    """The two stages of one candidate.

    Args:
        result (`GateResult`): passed, or the reason it failed.
        stage_a (`PytestRun`): the run without ``task_module.py``.
        stage_b (`PytestRun` or `None`): the run with it (not run when stage A already disqualified the task).
        judged (`str`, defaults to ``"inside"``): ``"outside"`` where the sandbox's judge decided both stages'
            verdicts (the test was split into planned asserts), ``"inside"`` where pytest did.
    """

    result: GateResult
    stage_a: PytestRun
    stage_b: PytestRun | None = None
    judged: str = "inside"


def instruction_for(problem: str, repo: Repository | None = None, *, package: str | None = None) -> str:
    """The task as an agent receives it: the problem and an explicit delivery contract.

    Args:
        problem (`str`): the problem description.
        repo (`Repository`, *optional*): names the installed package and its version in the contract.
        package (`str`, *optional*): the import name, when no repository is given.

    Example:
        >>> text = instruction_for("Write `double(x)`.", package="click")
        >>> text.splitlines()[0], "`task_module.py`" in text, "`click`" in text
        ('Write `double(x)`.', True, True)
    """
    if repo is not None:
        uses = f"the installed `{repo.package}` package ({repo.dist_name} {repo.version})"
    elif package:
        uses = f"the installed `{package}` package"
    else:
        uses = "the installed packages"
    contract = (
        f"Write your implementation to `{SOLUTION_FILE}` in the current working directory; the tests import it "
        f"with `from task_module import ...`. You may use {uses}. Do not edit the tests."
    )
    return f"{problem.strip()}\n\n## Delivery\n\n{contract}"


def verify_task(
    test: str,
    solution: str,
    *,
    environment: RepoEnvironment,
    backend: EnvironmentBackend,
    timeout_s: float = 180.0,
    test_timeout_s: float = TEST_TIMEOUT_S,
) -> Verification:
    """Stage A (the test without ``task_module.py`` must fail) then stage B (with it, every test must pass).

    Where the test's shape allows (:func:`~.split.split_pytest_module`) and the backend's environment can be reached
    by the sandbox (:meth:`~.environment.EnvironmentBackend.sandbox_settings`), both stages are judged outside the
    solution's process: each ``test_*`` function runs as planned asserts in the sandbox, whose programs import the
    repository's environment, and the verdicts are decided by the judge (``Verification.judged == "outside"``).
    pytest then runs the module once with the solution, so the exported test passes as written. Otherwise both
    stages are pytest runs, judged inside (a solution there can reach the verdict plugin; see docs/threat-model.md).

    Stage A counts as failing only on a collection error or a failed or errored test; a run where every test
    passed, skipped or xfailed, or where nothing was collected, is ``test_passes_without_solution``.

    Args:
        test (`str`): the pytest module.
        solution (`str`): the reference ``task_module`` source.
        environment (`RepoEnvironment`): from ``backend.prepare(repo)``.
        backend (`EnvironmentBackend`): runs the stages.
        timeout_s (`float`, defaults to 180): wall-clock limit per pytest stage.
        test_timeout_s (`float`, defaults to 10): CPU limit per test function where the test is judged outside
            (loading the solution and its imports gets three times as much).

    Returns:
        `Verification`: passed, or failed with ``test_passes_without_solution``, ``stage_a_no_verdict``,
        ``missing_module``, ``solution_fails_test``, ``no_tests_collected``, ``verify_timeout`` or ``verify_crashed``.

    Example:
        >>> v = verify_task(test, solution, environment=env, backend=VenvBackend())   # doctest: +SKIP
        >>> v.result.ok, v.stage_a.status, v.stage_b.status, v.judged                  # doctest: +SKIP
        (True, 'failed', 'passed', 'outside')
    """
    suite = _split_or_none(test)
    settings = backend.sandbox_settings(environment) if suite is not None else None
    if suite is None or settings is None:
        return _verify_with_pytest(test, solution, environment=environment, backend=backend, timeout_s=timeout_s)
    settings = split_settings(settings, test_timeout_s=test_timeout_s)
    stage_a = _judged_outside(suite, "", settings)
    if stage_a.status in ("timeout", "crashed"):
        return Verification(GateResult.failed("stage_a_no_verdict", stage_a.status), stage_a)
    if not any(o in ("failed", "error") for o in stage_a.tests.values()):
        return Verification(GateResult.failed("test_passes_without_solution", str(stage_a.counts())), stage_a)
    stage_b = _judged_outside(suite, suite.program(solution), settings)
    failed = _stage_b_failure(stage_b, f"{stage_b.counts()}: {stage_b.log_tail[:300]}")
    if failed is not None:  # never handed to pytest instead: a solution that forges pytest's verdict would pass
        return Verification(failed, stage_a, stage_b, JUDGED_OUTSIDE)
    as_written = backend.run_pytest(environment, {TEST_FILE: test, SOLUTION_FILE: solution}, test_file=TEST_FILE,
                                    timeout_s=timeout_s)  # fmt: skip
    failed = _stage_b_failure(as_written, f"the sandbox passed it, pytest did not: "
                                          f"{as_written.counts() or as_written.collect_errors or as_written.status}")
    if failed is not None:
        return Verification(failed, stage_a, as_written)
    judged = JUDGED_OUTSIDE if stage_b.judged_outside else JUDGED_INSIDE
    return Verification(GateResult.passed(), stage_a, stage_b, judged)


_FAILED = {"failed": "solution_fails_test", "no_tests": "no_tests_collected", "timeout": "verify_timeout",
           "crashed": "verify_crashed"}  # fmt: skip


def _split_or_none(test: str) -> SplitSuite | None:
    try:
        return split_pytest_module(test, test_file=TEST_FILE)
    except NotSplittable:
        return None


def _judged_outside(suite, program: str, settings) -> PytestRun:
    """One stage in the sandbox: ``program`` against the suite's tests, as a :class:`PytestRun` (outcomes per
    pytest id; ``judged_outside`` says whether the judge decided every one). A failure of the sandbox itself is
    ``crashed`` (the candidate is not verified), never a reason to let pytest decide: where solutions keep the
    server's uid, a program can bring its fork server down, and pytest is where a forgery passes."""
    from ..execution import shared_sandbox

    report = shared_sandbox(settings).run(program, list(suite.tests))
    if report.infra_error is not None:
        logger.warning("the sandbox failed on a split test (the candidate is not verified): %s", report.infra_error)
        return PytestRun("crashed", log_tail=str(report.infra_error)[:4000])
    words = {"pass": "passed", "fail": "failed"}
    tests = {name: words.get(status, "error") for name, status in zip(suite.names, report.statuses)}
    seen = set(report.statuses)
    if seen == {"pass"}:
        status = "passed"
    elif seen & {"fail", "error"}:
        status = "failed"
    elif "timeout" in seen:
        status = "timeout"
    else:  # the program's process died (``os._exit``, a signal) before a test's verdict
        status = "crashed"
    log = "\n".join(f"{name}: {status} {message}".rstrip()
                     for name, status, message in zip(suite.names, report.statuses, report.messages))  # fmt: skip
    missing = tuple(dict.fromkeys(m.group(1) for m in map(_NO_MODULE.search, report.messages) if m))
    return PytestRun(status, tests, duration_s=sum(report.cpu_s), log_tail=log[-4000:], missing_modules=missing,
                     judged_outside=all(j == "outside" for j in report.judged))  # fmt: skip


_NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")


def _verify_with_pytest(
    test: str, solution: str, *, environment: RepoEnvironment, backend: EnvironmentBackend, timeout_s: float
) -> Verification:
    """Both stages as pytest runs in the repository's environment (judged inside)."""
    stage_a = backend.run_pytest(environment, {TEST_FILE: test}, test_file=TEST_FILE, timeout_s=timeout_s)
    if stage_a.status in ("timeout", "crashed"):
        return Verification(GateResult.failed("stage_a_no_verdict", stage_a.status), stage_a)
    # Stage A must really fail: a collection error or a failed/errored test. Skips, xfails and "nothing collected"
    # (``pytest.importorskip("task_module")``, a skip marker set when the import fails) prove nothing.
    really_failed = bool(stage_a.collect_errors) or any(o in ("failed", "error") for o in stage_a.tests.values())
    if not really_failed:
        detail = str(stage_a.counts() or stage_a.status)
        return Verification(GateResult.failed("test_passes_without_solution", detail), stage_a)
    files = {TEST_FILE: test, SOLUTION_FILE: solution}
    stage_b = backend.run_pytest(environment, files, test_file=TEST_FILE, timeout_s=timeout_s)
    failed = _stage_b_failure(stage_b, str(stage_b.counts() or stage_b.collect_errors or stage_b.status))
    return Verification(failed or GateResult.passed(), stage_a, stage_b)


def _stage_b_failure(run: PytestRun, detail: str) -> GateResult | None:
    """Why a run with the solution does not verify it (``None``: every test passed)."""
    missing = [name for name in run.missing_modules if name.split(".")[0] != "task_module"]
    if run.status == "failed" and missing:
        return GateResult.failed("missing_module", f"no module named {missing}")
    if run.status != "passed":
        return GateResult.failed(_FAILED[run.status], detail)
    return None


def _open_llm(llm: LLMConfig | Backend) -> tuple[Backend, bool]:
    from ..llm import LLMConfig, make_backend

    if isinstance(llm, LLMConfig):
        return make_backend(llm), True
    return llm, False


def _stop_if_endpoint_down(completions: Sequence[Any], backend: Backend) -> None:
    """Raise when the endpoint itself is failing, rather than record ``llm_error`` for seed after seed.

    A refused credential (401/403) on any request, or a failure of every request of the batch, is the endpoint's
    state, not one seed's bad luck: going on would spend the whole run retrying. The answers that did arrive are
    cached, so the rerun resumes.
    """
    failures = [c for c in completions if isinstance(c, LLMRequestError)]
    if not failures:
        return
    refused = [c for c in failures if c.status in (401, 403)]
    if refused or len(failures) == len(completions):
        first = (refused or failures)[0]
        url = getattr(backend, "url", "")
        what = f"every one of {len(completions)} request(s)" if not refused else "a request"
        raise LLMUnavailableError(f"model {backend.model!r}{f' at {url}' if url else ''}: {what} failed; stopping "
                                  f"(answers received so far are cached): {first}",
                                  url=url, model=backend.model, status=first.status) from first


def generate_tasks(
    repo: Repository,
    *,
    llm: LLMConfig | Backend,
    environment: EnvironmentBackend | None = None,
    config: CodeInstructConfig | None = None,
    index: DecontaminationIndex | None = None,
    dedup: Deduplicator | None = None,
) -> CodeInstructRun:
    """Generate execution-verified tasks grounded in ``repo``.

    Args:
        repo (`Repository`): from :func:`open_repository`.
        llm (`LLMConfig` or `Backend`): the model; a config is opened (and closed) here, a backend is used as is.
        environment (`EnvironmentBackend`, *optional*): builds the repository's environment and runs the stages;
            defaults to a :class:`VenvBackend`.
        config (`CodeInstructConfig`, *optional*): counts, sampling, gates and timeouts.
        index (`DecontaminationIndex`, *optional*): benchmark n-grams; built from ``config.decontamination`` when
            omitted (and that is non-empty).
        dedup (`Deduplicator`, *optional*): share one across repositories to deduplicate a whole dataset.

    Returns:
        `CodeInstructRun`: the tasks, the yield report and the rejected candidates.

    Raises:
        EnvironmentBuildError: the repository's environment cannot be built.
        ConfigError: no file of the repository is eligible for seeds.
        MissingExtraError: a decontamination benchmark's package is not installed (extra ``data``).

    Example:
        >>> run = generate_tasks(repo, llm=LLMConfig(backend="transformers"),
        ...                      config=CodeInstructConfig(num_seeds=2))        # doctest: +SKIP
        >>> run.report.to_dict()["seeds_sampled"]                               # doctest: +SKIP
        2
    """
    config = config or CodeInstructConfig()
    backend_env = environment or VenvBackend()
    if index is None and config.decontamination:
        index = DecontaminationIndex.from_benchmarks(config.decontamination, n=config.ngram)
    dedup = dedup if dedup is not None else Deduplicator()
    env = backend_env.prepare(repo)
    snippets = sample_snippets(repo, config.num_seeds, config=config.seeds)
    report = YieldReport(repository=repo.name, seeds_sampled=len(snippets))
    rejected: list[dict[str, Any]] = []
    emitted: dict[int, Task] = {}
    active: dict[int, Snippet] = {}
    for position, snippet in enumerate(snippets):
        if snippet is None:
            report.seeds_without_window += 1
            report.seed_outcomes["no_window"] += 1
        else:
            active[position] = snippet
    last_reason: dict[int, str] = {}

    def reject(i: int, attempt: int, reason: str, detail: str, parsed: prompt.CodeInstructResult | None = None) -> None:
        report.skip_reasons[reason] += 1
        last_reason[i] = reason
        record = {"seed_index": active[i].index, "attempt": attempt, "reason": reason, "detail": detail}
        if parsed is not None:
            record.update(problem=parsed.problem, test=parsed.test, solution=parsed.solution)
        rejected.append(record)

    llm_backend, owned = _open_llm(llm)
    try:
        with ThreadPoolExecutor(max_workers=config.verify_workers, thread_name_prefix="ecd-verify") as pool:
            for attempt in range(1, config.max_attempts_per_seed + 1):
                if not active:
                    break
                order = sorted(active)
                requests = [
                    prompt.build_request(
                        active[i].text, repo=config.repo_label or repo.name, path=active[i].path, package=repo.package,
                        temperature=config.temperature, max_tokens=config.max_tokens,
                        seed=config.llm_seed + attempt - 1,
                    )
                    for i in order
                ]  # fmt: skip
                completions = llm_backend.generate(requests, return_exceptions=True, desc=f"code_instruct {attempt}")
                _stop_if_endpoint_down(completions, llm_backend)
                report.attempts += len(order)
                candidates: list[tuple[int, prompt.CodeInstructResult, str]] = []

                for i, completion in zip(order, completions):
                    if isinstance(completion, BaseException):
                        reject(i, attempt, "llm_error", f"{type(completion).__name__}: {completion}")
                        continue
                    try:
                        parsed = prompt.parse(completion.text)
                    except LLMResponseError as err:
                        reject(i, attempt, err.reason, str(err))
                        continue
                    gate = run_gates(
                        parsed.problem, parsed.test, parsed.solution,
                        import_names=repo.import_names, public_symbols=repo.public_symbols,
                        index=index, dedup=dedup, max_overlap=config.max_overlap, min_asserts=config.min_asserts,
                    )  # fmt: skip
                    if not gate.ok:
                        reject(i, attempt, gate.reason or "gate", gate.detail, parsed)
                        continue
                    candidates.append((i, parsed, completion.model))
                report.verified += len(candidates)
                futures = [
                    pool.submit(verify_task, parsed.test, parsed.solution, environment=env, backend=backend_env,
                                timeout_s=config.verify_timeout_s)
                    for _, parsed, _ in candidates
                ]  # fmt: skip
                for (i, parsed, model), future in zip(candidates, futures):
                    verification = future.result()
                    result = verification.result
                    if result.ok:
                        result = dedup.check(parsed.problem, parsed.solution)  # a twin emitted in this batch
                    if not result.ok:
                        reject(i, attempt, result.reason or "verification", result.detail, parsed)
                        continue
                    dedup.add(parsed.problem, parsed.solution)
                    snippet = active.pop(i)
                    emitted[i] = Task(
                        id=f"{normalize_name(repo.dist_name).replace('-', '_')}_{snippet.index}",
                        problem=parsed.problem,
                        instruction=instruction_for(parsed.problem, repo),
                        test=parsed.test,
                        solution=parsed.solution,
                        repo=repo.dist_name,
                        repo_version=repo.version,
                        package=repo.package,
                        path=snippet.path,
                        start_line=snippet.start_line,
                        end_line=snippet.end_line,
                        model=model,
                        attempts=attempt,
                        seed_index=snippet.index,
                        stage_a=verification.stage_a.tests,
                        stage_b=verification.stage_b.tests if verification.stage_b else {},
                        environment=f"{env.backend}:{env.key}",
                        judged=verification.judged,
                    )
                    report.emitted += 1
                    report.seed_outcomes["emitted"] += 1
    finally:
        if owned:
            llm_backend.close()
    for i in active:
        report.seed_outcomes[last_reason.get(i, "unanswered")] += 1
    spec_of = getattr(backend_env, "spec_of", None)  # a container backend knows the recipe it built the image from
    spec = spec_of(env) if callable(spec_of) else None
    return CodeInstructRun([emitted[i] for i in sorted(emitted)], report, env, rejected, repo, spec)


def tasks_from_runs(runs: Sequence[CodeInstructRun]) -> list[Task]:
    """All tasks of several runs, in order (one run per repository)."""
    return [task for run in runs for task in run.tasks]
