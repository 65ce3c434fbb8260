"""The code_instruct pipeline: seed windows -> one LLM call each -> gates -> two-stage execution -> tasks.

For each seed window the model writes a problem, a pytest test and a reference ``task_module.py``
(:mod:`evolvecoder_datasets.prompts.code_instruct`). The static gates (:mod:`.gates`) run first; a survivor is
executed twice in the repository's environment: stage A without ``task_module.py`` must fail, stage B with it must
pass, both judged from the nonce-stamped verdict file (:mod:`.verdict`). A seed whose candidate is rejected
is asked again, up to ``max_attempts_per_seed`` calls (each attempt sends a different sampling seed, so the request
cache never replays the rejected answer). Calls for all active seeds go out together; verifications run in
parallel.

The pieces it drives have modules of their own: the settings in :mod:`.config`, the task record, its delivery
contract and the yield report in :mod:`.tasks`, the two stages in :mod:`.verification` (all importable from here).

Example:
    >>> from evolvecoder_datasets.code_instruct import CodeInstructConfig, VenvBackend, generate_tasks, open_repository
    >>> from evolvecoder_datasets.llm import LLMConfig
    >>> repo = open_repository("click-8.1.7.tar.gz")                                        # doctest: +SKIP
    >>> run = generate_tasks(repo, llm=LLMConfig(model="gpt-4o-mini", cache_dir="runs/ci"),
    ...                      environment=VenvBackend(), config=CodeInstructConfig(num_seeds=20))  # doctest: +SKIP
    >>> print(run.report)                                                                    # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import LLMRequestError, LLMResponseError, LLMUnavailableError
from ..prompts import code_instruct as prompt
from .backend import EnvironmentBackend, RepoEnvironment
from .config import VERSION, CodeInstructConfig
from .environment import VenvBackend
from .gates import DecontaminationIndex, Deduplicator, run_gates
from .repository import Repository, normalize_name
from .seeds import Snippet, sample_snippets
from .tasks import (  # noqa: F401 - importable from here too
    JUDGED_INSIDE,
    JUDGED_OUTSIDE,
    SOLUTION_FILE,
    TEST_FILE,
    CodeInstructRun,
    Task,
    YieldReport,
    inside_reason_key,
    instruction_for,
    tasks_from_runs,
)
from .verification import Verification, verify_task

if TYPE_CHECKING:  # pragma: no cover
    from ..llm import Backend, LLMConfig

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
    ledger = _open_ledger(repo, sample_snippets(repo, config.num_seeds, config=config.seeds))
    llm_backend, owned = _open_llm(llm)
    try:
        with ThreadPoolExecutor(max_workers=config.verify_workers, thread_name_prefix="ecd-verify") as pool:
            for attempt in range(1, config.max_attempts_per_seed + 1):
                if not ledger.active:
                    break
                order, completions = _ask(llm_backend, ledger, attempt, repo=repo, config=config)
                candidates = _gate(ledger, order, completions, attempt, repo=repo, config=config, index=index,
                                   dedup=dedup)  # fmt: skip
                _verify_and_emit(ledger, candidates, attempt, pool=pool, repo=repo, env=env, backend_env=backend_env,
                                 config=config, dedup=dedup)  # fmt: skip
    finally:
        if owned:
            llm_backend.close()
    return _close_ledger(ledger, repo, env, backend_env)


@dataclass
class _Ledger:
    """What a run has done so far: the seeds still asked, the tasks emitted, every rejection and the counts."""

    report: YieldReport
    active: dict[int, Snippet]
    emitted: dict[int, Task] = field(default_factory=dict)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    last_reason: dict[int, str] = field(default_factory=dict)

    def reject(
        self, i: int, attempt: int, reason: str, detail: str, parsed: prompt.CodeInstructResult | None = None
    ) -> None:
        """Count a rejected candidate of seed ``i`` and keep its record (with its sections, when it was parsed)."""
        self.report.skip_reasons[reason] += 1
        self.last_reason[i] = reason
        record = {"seed_index": self.active[i].index, "attempt": attempt, "reason": reason, "detail": detail}
        if parsed is not None:
            record.update(problem=parsed.problem, test=parsed.test, solution=parsed.solution)
        self.rejected.append(record)


def _open_ledger(repo: Repository, snippets: Sequence[Snippet | None]) -> _Ledger:
    """The ledger of a new run: every seed with a window is active; one without is counted as ``no_window``."""
    report = YieldReport(repository=repo.name, seeds_sampled=len(snippets))
    active: dict[int, Snippet] = {}
    for position, snippet in enumerate(snippets):
        if snippet is None:
            report.seeds_without_window += 1
            report.seed_outcomes["no_window"] += 1
        else:
            active[position] = snippet
    return _Ledger(report, active)


def _ask(
    llm_backend: Backend, ledger: _Ledger, attempt: int, *, repo: Repository, config: CodeInstructConfig
) -> tuple[list[int], Sequence[Any]]:
    """Ask the model once for every active seed, all at once; the seeds in order and their answers (or errors)."""
    order = sorted(ledger.active)
    requests = [
        prompt.build_request(
            ledger.active[i].text, repo=config.repo_label or repo.name, path=ledger.active[i].path,
            package=repo.package, temperature=config.temperature, max_tokens=config.max_tokens,
            seed=config.llm_seed + attempt - 1,
        )
        for i in order
    ]  # fmt: skip
    completions = llm_backend.generate(requests, return_exceptions=True, desc=f"code_instruct {attempt}")
    _stop_if_endpoint_down(completions, llm_backend)
    ledger.report.attempts += len(order)
    return order, completions


def _gate(
    ledger: _Ledger,
    order: Sequence[int],
    completions: Sequence[Any],
    attempt: int,
    *,
    repo: Repository,
    config: CodeInstructConfig,
    index: DecontaminationIndex | None,
    dedup: Deduplicator,
) -> list[tuple[int, prompt.CodeInstructResult, str]]:
    """Parse each answer and run the static gates on it; the survivors as ``(seed, parsed, model)``."""
    candidates: list[tuple[int, prompt.CodeInstructResult, str]] = []
    for i, completion in zip(order, completions):
        if isinstance(completion, BaseException):
            ledger.reject(i, attempt, "llm_error", f"{type(completion).__name__}: {completion}")
            continue
        try:
            parsed = prompt.parse(completion.text)
        except LLMResponseError as err:
            ledger.reject(i, attempt, err.reason, str(err))
            continue
        gate = run_gates(
            parsed.problem, parsed.test, parsed.solution,
            import_names=repo.import_names, public_symbols=repo.public_symbols,
            index=index, dedup=dedup, max_overlap=config.max_overlap, min_asserts=config.min_asserts,
        )  # fmt: skip
        if not gate.ok:
            ledger.reject(i, attempt, gate.reason or "gate", gate.detail, parsed)
            continue
        candidates.append((i, parsed, completion.model))
    return candidates


def _verify_and_emit(
    ledger: _Ledger,
    candidates: Sequence[tuple[int, prompt.CodeInstructResult, str]],
    attempt: int,
    *,
    pool: ThreadPoolExecutor,
    repo: Repository,
    env: RepoEnvironment,
    backend_env: EnvironmentBackend,
    config: CodeInstructConfig,
    dedup: Deduplicator,
) -> None:
    """Verify the candidates in parallel; emit a task for each one that passes and has no twin emitted before it."""
    ledger.report.verified += len(candidates)
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
            ledger.reject(i, attempt, result.reason or "verification", result.detail, parsed)
            continue
        dedup.add(parsed.problem, parsed.solution)
        snippet = ledger.active.pop(i)
        ledger.emitted[i] = _task(
            parsed, snippet, verification, repo=repo, env=env, model=model, attempt=attempt
        )
        ledger.report.emitted += 1
        ledger.report.seed_outcomes["emitted"] += 1
        if verification.judged == JUDGED_INSIDE:
            ledger.report.judged_inside[inside_reason_key(verification.inside_reason)] += 1


def _task(
    parsed: prompt.CodeInstructResult,
    snippet: Snippet,
    verification: Verification,
    *,
    repo: Repository,
    env: RepoEnvironment,
    model: str,
    attempt: int,
) -> Task:
    """The task record of a verified candidate of ``snippet``."""
    return Task(
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
        judged_reason=verification.inside_reason if verification.judged == JUDGED_INSIDE else "",
    )


def _close_ledger(
    ledger: _Ledger, repo: Repository, env: RepoEnvironment, backend_env: EnvironmentBackend
) -> CodeInstructRun:
    """Count each seed still active by its last rejection; the run, with the container recipe a backend built."""
    report = ledger.report
    for i in ledger.active:
        report.seed_outcomes[ledger.last_reason.get(i, "unanswered")] += 1
    spec_of = getattr(backend_env, "spec_of", None)  # a container backend knows the recipe it built the image from
    spec = spec_of(env) if callable(spec_of) else None
    emitted = ledger.emitted
    return CodeInstructRun([emitted[i] for i in sorted(emitted)], report, env, ledger.rejected, repo, spec)
