"""The reward callables: :class:`CodeReward`, :class:`AsyncCodeReward` and the factories that build them.

Example:
    >>> from evolvecoder_datasets.rewards import make_code_reward
    >>> make_code_reward(mode="fast", failing_value=-1.0).__name__
    'code_reward_fast'
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from .. import schema
from ..chat import completion_text
from ..errors import ConfigError, SandboxCrashed, SandboxError, SchemaError
from ..execution import Job, extract_code, shared_sandbox
from ..execution.checkers import Checker
from ..execution.languages import language
from .cache import _OUTCOMES, _digest, _Outcome
from .columns import _as_list, _case_options, _stdio_cases
from .config import RewardConfig

logger = logging.getLogger("evolvecoder_datasets.rewards")

__all__ = ["AsyncCodeReward", "CodeReward", "ScoredCompletion", "make_code_reward", "make_pass_rate_reward"]

_TRAINER_EXTRAS = ("trainer_state", "log_extra", "log_metric", "environments")

_HEALTHY: weakref.WeakSet = weakref.WeakSet()

def _check_health(sandbox) -> None:
    """Run a trivial program once per sandbox: a preamble or a sandbox that fails it would fail every completion.

    Without this check a broken setup (a preamble importing a module the sandbox cannot see, a read-only mount
    missing) trains on a reward of 0.0 for everything. It raises instead, on the first step.
    """
    if sandbox in _HEALTHY:
        return
    report = sandbox.run("pass", ["assert True"])
    if report.infra_error is not None:
        raise SandboxCrashed(report.infra_error)
    if report.statuses != ["pass"]:
        raise SandboxError(
            "the sandbox cannot run a trivial program with this preamble "
            f"({report.statuses[0]}: {report.messages[0]}); every completion would fail. Check the preamble."
        )
    _HEALTHY.add(sandbox)


# -- the reward functions ----------------------------------------------------------------------------------------


@dataclass
class _Row:
    """One completion on its way to a reward."""

    reward: float | None = None
    outcome: str = ""  # short text for the completions table
    job: Job | None = None
    digest: bytes = b""
    result: _Outcome | None = None
    no_code: bool = False
    unscored: str = ""  # why the row gets None (not the sandbox's failure)
    infra: bool = False  # the sandbox failed on this row
    counts: Counter = field(default_factory=Counter)


@dataclass(frozen=True)
class ScoredCompletion:
    """One completion's reward with what decided it (see :meth:`CodeReward.score_details`).

    Args:
        reward (`float`, *optional*): the reward; ``None`` where the sandbox failed or the row has no tests.
        outcome (`str`): short text, the same as the ``<name>/outcome`` column TRL logs (``"3/4 passed (fail 1;
            first: ...)"``, ``"no code found"``, ``"sandbox failure: ..."``).
        infra (`bool`): the sandbox itself failed on this completion (its reward is ``None``, not the program's).
    """

    reward: float | None
    outcome: str
    infra: bool = False


class CodeReward:
    """A TRL reward function that runs each completion's code against its row's tests in the sandbox.

    Instances are plain picklable callables (they hold only their config); the sandbox is per process and starts
    on the first call. TRL logs the reward under ``__name__``.

    Args:
        config (`RewardConfig`, *optional*): what to compute and how to run; defaults to ``RewardConfig()``.
        name (`str`, *optional*): the logged name; defaults to ``config.default_name()``.

    Raises:
        ConfigError: ``config`` is not a :class:`RewardConfig`.

    Example:
        >>> reward = CodeReward(RewardConfig(kind="pass_rate", mode="fast", workers=1), name="tests_passed")
        >>> reward(completions=["```python\\ndef inc(x):\\n    return x + 1\\n```"],
        ...        tests=[["assert inc(1) == 2", "assert inc(2) == 4"]])
        [0.5]
    """

    def __init__(self, config: RewardConfig | None = None, *, name: str | None = None) -> None:
        if config is None:
            config = RewardConfig()
        if not isinstance(config, RewardConfig):
            raise ConfigError(f"config must be a RewardConfig, got {type(config).__name__}")
        self.config = config
        self.__name__ = self.__qualname__ = name or config.default_name()
        self._warned: set[str] = set()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.__name__!r}, config={self.config!r})"

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config, "__name__": self.__name__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["config"], name=state["__name__"])

    def __call__(
        self, prompts: list | None = None, completions: list | None = None, completion_ids: list | None = None,
        **kwargs: Any,
    ) -> list[float | None]:  # fmt: skip
        """Score ``completions`` with TRL's reward-function protocol (see :meth:`score`)."""
        return self.score(completions, **kwargs)

    @property
    def sandbox(self):
        """This process's sandbox for these settings (started by the first job, closed at exit)."""
        return shared_sandbox(**self.config.sandbox_settings())

    def score(
        self,
        completions: Sequence[Any] | None,
        *,
        log_metric: Callable[[str, float], None] | None = None,
        log_extra: Callable[[str, list], None] | None = None,
        **columns: Any,
    ) -> list[float | None]:
        """One reward per completion, ``None`` where the sandbox failed or the row has no tests.

        Args:
            completions (`list`): strings, or conversations (lists of ``{"role", "content"}`` messages) whose last
                assistant message holds the answer.
            log_metric (`Callable[[str, float], None]`, *optional*): TRL's metric logger; receives
                ``<name>/pass_rate``, ``<name>/solved``, ``<name>/timeout_rate``, ``<name>/extraction_failures``
                and ``<name>/infra_failures`` per batch.
            log_extra (`Callable[[str, list], None]`, *optional*): TRL's completions-table logger; receives a
                ``<name>/outcome`` column.
            **columns: dataset columns, one value per completion: ``tests`` (list of assert strings) or
                ``inputs``/``outputs`` (lists of stdin/stdout texts); other keys are ignored.

        Returns:
            `list[float | None]`: rewards in the order of ``completions``.

        Raises:
            SchemaError: no test column is present, or a column does not have one value per completion.
            SandboxUnavailable: the configured isolation cannot run on this machine.
            SandboxError: the sandbox cannot run even a trivial program with the configured preamble.

        Example:
            >>> reward = make_code_reward(mode="fast", failing_value=-1.0, workers=1)
            >>> reward.score([[{"role": "assistant", "content": "```python\\nx = 1\\n```"}], "no code here"],
            ...              tests=[["assert x == 1"], ["assert x == 1"]])
            [1.0, -1.0]
        """
        rows, rewards = self._scored(completions, columns)
        self._log(rows, log_metric, log_extra)
        return rewards

    def score_details(self, completions: Sequence[Any] | None, **columns: Any) -> list[ScoredCompletion]:
        """:meth:`score` with each completion's outcome and whether the sandbox failed on it (for services that
        answer other trainers, whose conventions for an infrastructure failure differ from TRL's ``None``).

        Args:
            completions (`list`): as for :meth:`score`.
            **columns: dataset columns, as for :meth:`score`.

        Returns:
            `list[ScoredCompletion]`: in the order of ``completions``.

        Raises:
            SchemaError: as for :meth:`score`.

        Example:
            >>> reward = make_code_reward(mode="fast", workers=1)
            >>> [(s.reward, s.outcome) for s in reward.score_details(["x = 1"], tests=[["assert x == 1"]])]
            [(1.0, '1/1 passed')]
        """
        rows, rewards = self._scored(completions, columns)
        return [ScoredCompletion(reward, row.outcome, row.infra) for row, reward in zip(rows, rewards)]

    def _scored(self, completions: Sequence[Any] | None, columns: dict[str, Any]) -> tuple[list[_Row], list]:
        rows = self._prepare(list(completions or []), columns)
        self._execute(rows)
        return rows, [self._finish(row) for row in rows]

    # -- steps of score() ----------------------------------------------------------------------------------------
    def _prepare(self, completions: list, columns: dict[str, Any]) -> list[_Row]:
        cfg = self.config
        n = len(completions)
        tests = columns.get(cfg.tests_column)
        inputs = columns.get(cfg.inputs_column)
        outputs = columns.get(cfg.outputs_column)
        if tests is None and inputs is None:
            present = sorted(k for k in columns if k not in _TRAINER_EXTRAS)
            raise SchemaError(
                f"{self.__name__} needs a {cfg.tests_column!r} column (assert strings) or "
                f"{cfg.inputs_column!r}/{cfg.outputs_column!r} columns (stdin/stdout cases); "
                f"the dataset passed {present}"
            )
        limits = columns.get(cfg.limits_column) if cfg.limits_column and cfg.calibrate else None
        languages = columns.get(cfg.language_column) if cfg.language_column else None
        checkers = columns.get(cfg.checker_column) if cfg.checker_column else None
        tolerances = columns.get(schema.FLOAT_TOL)
        for column_name, values in ((cfg.tests_column, tests), (cfg.inputs_column, inputs),
                                    (cfg.outputs_column, outputs), (cfg.limits_column, limits),
                                    (cfg.language_column, languages), (cfg.checker_column, checkers),
                                    (schema.FLOAT_TOL, tolerances)):  # fmt: skip
            if values is not None and len(values) != n:
                raise SchemaError(f"column {column_name!r} has {len(values)} values for {n} completions")
        settings_key = repr(sorted(cfg.sandbox_settings().items()))
        rows = []
        for i, completion in enumerate(completions):
            row = _Row()
            rows.append(row)
            row_tests, row_inputs, row_outputs = _stdio_cases(tests[i] if tests is not None else None,
                                                              cfg.tests_column)  # fmt: skip
            if not row_inputs:
                row_inputs = _as_list(inputs[i] if inputs is not None else None, cfg.inputs_column)
                row_outputs = _as_list(outputs[i] if outputs is not None else None, cfg.outputs_column)
            if not row_tests and not row_inputs:
                row.unscored = "no tests"
                continue
            if not row_tests and len(row_inputs) != len(row_outputs):
                row.unscored = f"stdin/stdout cases that do not pair up: {len(row_inputs)} inputs, {len(row_outputs)} outputs"
                continue
            carried = _case_options(tests[i]) if tests is not None else {}  # beside the cases, as verl sends them
            lang = (languages[i] if languages is not None else None) or carried.get("language") or "python"
            try:
                cell = checkers[i] if checkers is not None and checkers[i] is not None else carried.get("checker")
                checker = Checker.from_value(cell) if not row_tests else None
                language(lang)
            except ConfigError as err:
                row.unscored = f"a row that cannot be judged: {err}"
                continue
            program = self._program(completion, lang)
            if not program.strip():
                row.no_code = True
                continue
            # A row's calibrated limit (capped by timeout_s); a binary reward stops at the first test not passed.
            limit = cfg.job_timeout(limits[i]) if limits is not None else None
            stop = cfg.kind == "binary"
            if row_tests:
                row.job = Job(program, tests=row_tests, timeout_s=limit, stop_on_failure=stop)
            else:
                tol = next((t for t in (tolerances[i] if tolerances is not None else None,
                                        carried.get("float_tol"), cfg.float_tol) if t is not None), None)  # fmt: skip
                row.job = Job(program, inputs=row_inputs, outputs=row_outputs, float_tol=tol, timeout_s=limit,
                              stop_on_failure=stop, language=lang, checker=checker)  # fmt: skip
            row.digest = _digest(settings_key, row.job)
        return rows

    def _program(self, completion: Any, lang: str = "python") -> str:
        text = completion_text(completion)
        if self.config.extract == "none":
            return text
        return extract_code(text, strategy=self.config.extract, language=lang)

    def _execute(self, rows: list[_Row]) -> None:
        runnable = [row for row in rows if row.job is not None]
        if not runnable:
            return
        futures, mine = _OUTCOMES.claim([row.digest for row in runnable], self.config.cache_size,
                                        complete=self.config.kind != "binary")  # fmt: skip
        if mine:
            jobs = {row.digest: row.job for row in runnable}
            try:
                outcomes = self._run_jobs([jobs[d] for d in mine])
            except BaseException as err:
                _OUTCOMES.forget(mine)
                for digest in mine:
                    futures[digest].set_exception(err)
                raise
            for digest, outcome in zip(mine, outcomes):
                _OUTCOMES.settle(digest, futures[digest], outcome)
            _OUTCOMES.forget([d for d, outcome in zip(mine, outcomes) if outcome.infra_error is not None])
        for row in runnable:
            entry = futures[row.digest]
            row.result = entry.result() if isinstance(entry, Future) else entry

    def _run_jobs(self, jobs: list[Job]) -> list[_Outcome]:
        sandbox = self.sandbox
        try:
            sandbox.start()
            _check_health(sandbox)
        except SandboxCrashed as err:  # the servers would not start or run: the infrastructure's fault
            logger.error("%s: the sandbox failed (%s); these completions get no reward", self.__name__, err)
            return [_Outcome(("crash",) * job.size, "", f"sandbox failed: {err}") for job in jobs]
        return [_Outcome.from_report(report, stopped_early=job.stop_on_failure)
                for job, report in zip(jobs, sandbox.run_many(jobs))]  # fmt: skip

    def _finish(self, row: _Row) -> float | None:
        cfg = self.config
        failing = cfg.failing_value if cfg.kind == "binary" else 0.0
        if row.unscored:
            self._warn_once(row.unscored)
            row.outcome = row.unscored
            return None
        if row.no_code:
            row.outcome = "no code found"
            row.reward = failing
            return failing
        result = row.result
        assert result is not None
        row.counts = Counter(result.statuses)
        if result.infra_error is not None:
            row.infra = True
            row.outcome = f"sandbox failure: {result.infra_error}"[:200]
            return None
        total = len(result.statuses)
        passed = row.counts["pass"]
        others = ", ".join(f"{status} {count}" for status, count in sorted(row.counts.items()) if status != "pass")
        row.outcome = f"{passed}/{total} passed" + (f" ({others}; first: {result.first_problem})" if others else "")
        if cfg.kind == "binary":
            row.reward = 1.0 if total and passed == total else failing
        else:
            row.reward = passed / total if total else 0.0
        return row.reward

    def _log(self, rows: list[_Row], log_metric, log_extra) -> None:
        if not rows:
            return
        name = self.__name__
        if log_extra is not None and self.config.log_details:
            log_extra(f"{name}/outcome", [row.outcome for row in rows])
        if log_metric is None or not self.config.log_metrics:
            return
        log_metric(f"{name}/extraction_failures", sum(row.no_code for row in rows) / len(rows))
        log_metric(f"{name}/infra_failures", sum(row.infra for row in rows) / len(rows))
        scored = [row for row in rows if row.reward is not None]
        if scored:
            totals = [sum(row.counts.values()) for row in scored]
            passed = [row.counts["pass"] for row in scored]
            log_metric(f"{name}/pass_rate", sum(p / t if t else 0.0 for p, t in zip(passed, totals)) / len(scored))
            log_metric(f"{name}/solved", sum(bool(t) and p == t for p, t in zip(passed, totals)) / len(scored))
        executed = [row for row in rows if row.counts and not row.infra]
        cells = sum(sum(row.counts.values()) for row in executed)
        if cells:
            log_metric(f"{name}/timeout_rate", sum(row.counts["timeout"] for row in executed) / cells)

    def _warn_once(self, reason: str) -> None:
        kind = reason.split(":", 1)[0]
        if kind not in self._warned:
            self._warned.add(kind)
            logger.warning("%s: a row has %s; its completions get None (left out by TRL)", self.__name__, reason)


class AsyncCodeReward(CodeReward):
    """The coroutine form of :class:`CodeReward`: TRL awaits it alongside other async reward functions.

    The sandbox work runs in a thread, so the trainer's event loop stays free while programs execute.

    Args:
        config (`RewardConfig`, *optional*): what to compute and how to run; defaults to ``RewardConfig()``.
        name (`str`, *optional*): the logged name; defaults to ``config.default_name()``.

    Example:
        >>> import asyncio
        >>> reward = AsyncCodeReward(RewardConfig(mode="fast", workers=1))
        >>> asyncio.run(reward(completions=["x = 2"], tests=[["assert x == 2"]]))
        [1.0]
    """

    async def __call__(  # type: ignore[override]
        self, prompts: list | None = None, completions: list | None = None, completion_ids: list | None = None,
        **kwargs: Any,
    ) -> list[float | None]:  # fmt: skip
        """Score ``completions`` without blocking the event loop (see :meth:`CodeReward.score`)."""
        return await asyncio.to_thread(self.score, completions, **kwargs)


def make_code_reward(
    *,
    kind: str = "binary",
    asynchronous: bool = False,
    name: str | None = None,
    **settings: Any,
) -> CodeReward:
    """Build a reward function with chosen settings, named for what it computes.

    Args:
        kind (`str`, defaults to ``"binary"``): ``"binary"`` or ``"pass_rate"``.
        asynchronous (`bool`, defaults to False): return an :class:`AsyncCodeReward` (a coroutine function to TRL).
        name (`str`, *optional*): the name TRL logs the reward under; defaults to ``code_reward`` or
            ``pass_rate_reward``, with ``_fast`` appended in fast mode.
        **settings: any other :class:`RewardConfig` field (``failing_value``, ``mode``, ``timeout_s``,
            ``preamble``, ``extract``, ``workers``, ...).

    Returns:
        `CodeReward`: a picklable callable with TRL's reward-function protocol.

    Raises:
        ConfigError: a setting is unknown or out of range.

    Example:
        >>> reward = make_code_reward(mode="fast", failing_value=-1.0, timeout_s=2.0)
        >>> reward.__name__
        'code_reward_fast'
    """
    known = set(RewardConfig.__dataclass_fields__)
    unknown = sorted(set(settings) - known)
    if unknown:
        raise ConfigError(f"unknown reward settings {unknown}; known: {sorted(known - {'kind'})}")
    config = RewardConfig(kind=kind, **settings)
    cls = AsyncCodeReward if asynchronous else CodeReward
    return cls(config, name=name)


def make_pass_rate_reward(*, asynchronous: bool = False, name: str | None = None, **settings: Any) -> CodeReward:
    """Build a pass-rate reward (fraction of tests passed); :func:`make_code_reward` with ``kind="pass_rate"``.

    Args:
        asynchronous (`bool`, defaults to False): return an :class:`AsyncCodeReward`.
        name (`str`, *optional*): the logged name; defaults to ``pass_rate_reward`` (``_fast`` in fast mode).
        **settings: any other :class:`RewardConfig` field.

    Raises:
        ConfigError: a setting is unknown or out of range.

    Example:
        >>> make_pass_rate_reward(timeout_s=0.5).__name__
        'pass_rate_reward'
    """
    return make_code_reward(kind="pass_rate", asynchronous=asynchronous, name=name, **settings)
