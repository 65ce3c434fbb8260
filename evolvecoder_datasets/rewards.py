"""Reward functions for TRL's ``GRPOTrainer``, scored by running the completions in the sandbox.

TRL calls a reward function as ``f(prompts=..., completions=..., completion_ids=..., **kwargs)`` where ``kwargs``
carry every dataset column, one value per completion, plus ``trainer_state``, ``log_extra`` and ``log_metric``.
The functions here read the ``tests`` column (a list of ``assert`` strings per row) or, for stdin/stdout problems,
the ``inputs``/``outputs`` columns, and return one float per completion:

- :func:`code_reward`: 1.0 when every test passes, else 0.0 (``failing_value``; -1.0 as the verl-tool AceCoder
  reward uses is one :func:`make_code_reward` away).
- :func:`pass_rate_reward`: the fraction of tests passed.
- :func:`async_code_reward`, :func:`async_pass_rate_reward`: the same as coroutines, so TRL overlaps them with
  other async reward functions.

A completion gets ``None`` (TRL leaves it out of the advantage) when the sandbox itself failed or the row has no
tests, never a silent 0.0. Code is taken from the completion with :func:`~evolvecoder_datasets.execution.
extract_code` (thinking stripped, last Python block) and run after a preamble of common imports.

Each trainer process (one per rank) starts one sandbox on the first call, reuses it for every step and closes it
at exit; the trainer itself never forks. Identical ``(program, tests)`` pairs are run once: within a batch, across
reward functions that share settings (``code_reward`` and ``pass_rate_reward`` together cost one execution), and
across steps through a bounded per-process cache.

Example:
    >>> from datasets import load_dataset                                       # doctest: +SKIP
    >>> from trl import GRPOConfig, GRPOTrainer                                  # doctest: +SKIP
    >>> from evolvecoder_datasets.rewards import code_reward                     # doctest: +SKIP
    >>> trainer = GRPOTrainer(model="HuggingFaceTB/SmolLM2-135M-Instruct", reward_funcs=[code_reward],
    ...                       train_dataset=load_dataset("org/EvolveCoder-22k", revision="round3", split="train"),
    ...                       args=GRPOConfig(output_dir="out"))                 # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import sys
import threading
import weakref
from collections import Counter, OrderedDict, namedtuple
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from . import schema
from .chat import completion_text
from .errors import ConfigError, SandboxCrashed, SandboxError, SchemaError
from .execution import MODES, Job, extract_code, shared_sandbox
from .execution.extract import STRATEGIES

logger = logging.getLogger(__name__)

__all__ = [
    "COMMON_IMPORTS",
    "KINDS",
    "SYSTEM_PROMPT",
    "AsyncCodeReward",
    "CodeReward",
    "RewardCacheInfo",
    "RewardConfig",
    "async_code_reward",
    "async_pass_rate_reward",
    "build_prompts",
    "cache_info",
    "clear_cache",
    "code_reward",
    "make_code_reward",
    "make_pass_rate_reward",
    "pass_rate_reward",
    "with_prompts",
]

KINDS = ("binary", "pass_rate")

#: Imports run before every program by default. Models often write ``List[int]`` or ``Counter(...)`` without
#: importing them; other harnesses then fail every test, which teaches import hygiene instead of problem solving.
#: The names come from modules the fork server preloads, so the preamble costs microseconds per program.
COMMON_IMPORTS = (
    "from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Set, Tuple, Union\n"
    "from collections import Counter, OrderedDict, defaultdict, deque\n"
    "from functools import cache, lru_cache, reduce\n"
    "from itertools import accumulate, combinations, permutations, product\n"
    "from heapq import heapify, heappop, heappush\n"
    "from bisect import bisect_left, bisect_right\n"
    "import bisect, collections, functools, heapq, itertools, math, re, string\n"
)

#: System message of :func:`with_prompts`: one fenced block, as the rewards' default extraction expects.
SYSTEM_PROMPT = (
    "You are an expert Python programmer. Solve the problem. Reply with the complete solution in a single "
    "```python code block, with every import it needs, and nothing after the block."
)

_TRAINER_EXTRAS = ("trainer_state", "log_extra", "log_metric", "environments")


def _default_workers() -> int:
    """Usable cores shared by the trainer processes of this node (``LOCAL_WORLD_SIZE`` ranks)."""
    cores = len(os.sched_getaffinity(0))
    try:
        ranks = max(1, int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
    except ValueError:
        ranks = 1
    return max(1, cores // ranks)


@dataclass(frozen=True)
class RewardConfig:
    """What a code reward computes and how the sandbox runs the completions.

    Args:
        kind (`str`, defaults to ``"binary"``): ``"binary"`` (1.0 when every test passes, else ``failing_value``)
            or ``"pass_rate"`` (fraction of tests passed).
        failing_value (`float`, defaults to 0.0): reward of a completion that fails any test or holds no code, for
            ``kind="binary"``; the verl-tool AceCoder reward uses -1.0. ``"pass_rate"`` gives 0.0 to code-less
            completions.
        mode (`str`, defaults to ``"isolated"``): sandbox mode. ``"isolated"`` runs every test in a fresh copy of
            the loaded program (tests cannot see each other's side effects); ``"fast"`` runs them in sequence in
            one process, several times cheaper.
        timeout_s (`float`, defaults to 1.0): CPU seconds one test may use.
        memory_mb (`int`, defaults to 1024): address-space limit of a solution process.
        workers (`int`, *optional*): programs run at once by this process's sandbox. Defaults to the usable cores
            divided by ``LOCAL_WORLD_SIZE``, so the ranks of one node share the cores without oversubscribing.
        preamble (`str`, *optional*, defaults to :data:`COMMON_IMPORTS`): code run before each program; ``None``
            runs programs exactly as written.
        extract (`str`, defaults to ``"last"``): which fenced block :func:`extract_code` keeps (``"last"``,
            ``"first"``, ``"all"``, ``"longest"``), or ``"none"`` to run the completion text as it is.
        max_consecutive_timeouts (`int`, *optional*, defaults to 2): after this many timeouts in a row the
            program's remaining tests are not run and count as failed. A looping program then costs
            ``2 * timeout_s`` instead of one timeout per test; ``None`` runs every test.
        float_tol (`float`, *optional*): tolerance for numeric tokens of stdin/stdout answers.
        tests_column (`str`, defaults to ``"tests"``): column of assert lists.
        inputs_column (`str`, defaults to ``"inputs"``): column of stdin texts (stdin/stdout rows).
        outputs_column (`str`, defaults to ``"outputs"``): column of expected stdout texts.
        isolation (`str`, defaults to ``"auto"``): sandbox isolation (``"bwrap"``, ``"unshare"``, ``"none"``,
            ``"auto"``).
        cache_size (`int`, defaults to 65536): results of identical ``(program, tests)`` pairs kept per process
            (~0.8 KB each with 35 tests, so ~50 MB when full); 0 turns the cache off, duplicates within one batch
            still run once.
        log_metrics (`bool`, defaults to True): report per-batch figures through TRL's ``log_metric``.
        log_details (`bool`, defaults to True): add a per-completion outcome column through TRL's ``log_extra``.

    Raises:
        ConfigError: a value is unknown or out of range.

    Example:
        >>> RewardConfig(kind="pass_rate", mode="fast").kind
        'pass_rate'
        >>> RewardConfig(mode="quick")
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.errors.ConfigError: mode must be one of ('isolated', 'fast'), got 'quick'
    """

    kind: str = "binary"
    failing_value: float = 0.0
    mode: str = "isolated"
    timeout_s: float = 1.0
    memory_mb: int = 1024
    workers: int | None = None
    preamble: str | None = COMMON_IMPORTS
    extract: str = "last"
    max_consecutive_timeouts: int | None = 2
    float_tol: float | None = None
    tests_column: str = schema.TESTS
    inputs_column: str = schema.INPUTS
    outputs_column: str = schema.OUTPUTS
    isolation: str = "auto"
    cache_size: int = 65536
    log_metrics: bool = True
    log_details: bool = True

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ConfigError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.mode not in MODES:
            raise ConfigError(f"mode must be one of {MODES}, got {self.mode!r}")
        if self.extract not in (*STRATEGIES, "none"):
            raise ConfigError(f"extract must be one of {(*STRATEGIES, 'none')}, got {self.extract!r}")
        if not self.timeout_s > 0:
            raise ConfigError(f"timeout_s must be > 0, got {self.timeout_s!r}")
        if self.memory_mb < 64:
            raise ConfigError(f"memory_mb must be >= 64, got {self.memory_mb!r}")
        if self.workers is not None and self.workers < 1:
            raise ConfigError(f"workers must be >= 1, got {self.workers!r}")
        if self.max_consecutive_timeouts is not None and self.max_consecutive_timeouts < 1:
            raise ConfigError(f"max_consecutive_timeouts must be >= 1 or None, got {self.max_consecutive_timeouts!r}")
        if self.cache_size < 0:
            raise ConfigError(f"cache_size must be >= 0, got {self.cache_size!r}")

    def sandbox_settings(self) -> dict[str, Any]:
        """Keyword arguments of the per-process :func:`~evolvecoder_datasets.execution.shared_sandbox`.

        Example:
            >>> RewardConfig(mode="fast", workers=2).sandbox_settings()["mode"]
            'fast'
        """
        return {
            "workers": self.workers or _default_workers(),
            "timeout_s": float(self.timeout_s),
            "memory_mb": int(self.memory_mb),
            "mode": self.mode,
            "preamble": self.preamble,
            "isolation": self.isolation,
            "max_consecutive_timeouts": self.max_consecutive_timeouts,
        }

    def default_name(self) -> str:
        """The name TRL logs the reward under: ``code_reward`` or ``pass_rate_reward``, plus ``_fast`` in fast mode.

        Example:
            >>> RewardConfig(kind="pass_rate", mode="fast").default_name()
            'pass_rate_reward_fast'
        """
        base = "code_reward" if self.kind == "binary" else "pass_rate_reward"
        return base if self.mode == "isolated" else f"{base}_{self.mode}"


# -- results shared by every reward function of this process ---------------------------------------------------


@dataclass(frozen=True)
class _Outcome:
    """What a reward needs from one execution: per-test statuses, the first failure, or the sandbox's failure."""

    statuses: tuple[str, ...]
    first_problem: str = ""
    infra_error: str | None = None

    @classmethod
    def from_report(cls, report) -> _Outcome:
        problem = next((f"{s}: {m}" if m else s for s, m in zip(report.statuses, report.messages) if s != "pass"), "")
        # Interned: a kept outcome then costs one pointer per test, not one string.
        return cls(tuple(sys.intern(s) for s in report.statuses), problem[:200], report.infra_error)


class _OutcomeCache:
    """Bounded LRU of execution outcomes by job digest; a run in flight is a future that concurrent callers share.

    A caller :meth:`claim`s the digests it needs: it gets an outcome or a future for each, and runs the jobs whose
    futures it created, then :meth:`settle`s them. Every caller runs its own claims before waiting on anyone
    else's, so waiting never forms a cycle.
    """

    def __init__(self) -> None:
        self._entries: OrderedDict[bytes, Future | _Outcome] = OrderedDict()
        self._lock = threading.Lock()
        self.requests = 0
        self.runs = 0

    def claim(self, digests: Sequence[bytes], max_size: int) -> tuple[dict[bytes, Future | _Outcome], list[bytes]]:
        futures: dict[bytes, Future | _Outcome] = {}
        mine: list[bytes] = []
        with self._lock:
            self.requests += len(digests)
            for digest in digests:
                if digest in futures:
                    continue
                future = self._entries.get(digest)
                if future is None:
                    future = Future()
                    mine.append(digest)
                    if max_size:
                        self._entries[digest] = future
                else:
                    self._entries.move_to_end(digest)
                futures[digest] = future
            while len(self._entries) > max_size:
                oldest, entry = next(iter(self._entries.items()))
                if isinstance(entry, Future):  # never evict a run in flight: a waiter may be about to look it up
                    break
                del self._entries[oldest]
            self.runs += len(mine)
        return futures, mine

    def settle(self, digest: bytes, future: Future, outcome: _Outcome) -> None:
        """Resolve a claimed run; the cache keeps the bare outcome (a future costs ~1 KB more)."""
        future.set_result(outcome)
        with self._lock:
            if self._entries.get(digest) is future:
                self._entries[digest] = outcome

    def forget(self, digests: Sequence[bytes]) -> None:
        """Drop entries that must be recomputed next time (sandbox failures)."""
        with self._lock:
            for digest in digests:
                self._entries.pop(digest, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.requests = self.runs = 0


_OUTCOMES = _OutcomeCache()

RewardCacheInfo = namedtuple("RewardCacheInfo", ["requests", "runs", "size"])


def cache_info() -> RewardCacheInfo:
    """How many completions this process scored, how many programs actually ran, and how many results are kept.

    ``requests - runs`` completions were answered by an earlier identical ``(program, tests)`` run: a duplicate in
    the batch, the same batch scored by another reward function, or a completion seen in an earlier step.

    Example:
        >>> from evolvecoder_datasets import rewards
        >>> rewards.clear_cache()
        >>> rewards.code_reward(completions=["x = 1", "x = 1"], tests=[["assert x == 1"]] * 2)
        [1.0, 1.0]
        >>> rewards.cache_info()
        RewardCacheInfo(requests=2, runs=1, size=1)
    """
    with _OUTCOMES._lock:
        return RewardCacheInfo(_OUTCOMES.requests, _OUTCOMES.runs, len(_OUTCOMES._entries))


def clear_cache() -> None:
    """Forget every kept result and reset :func:`cache_info`'s counters (e.g. after changing the tests in place).

    Example:
        >>> from evolvecoder_datasets import rewards
        >>> rewards.clear_cache()
        >>> rewards.cache_info().size
        0
    """
    _OUTCOMES.clear()


def _digest(settings_key: str, job: Job) -> bytes:
    """Identity of an execution: the sandbox settings, the program and what it runs against."""
    h = hashlib.blake2b(digest_size=20)

    def put(text: str) -> None:
        data = text.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)

    put(settings_key)
    put(job.kind)
    put(job.program)
    if job.kind == "stdio":
        put(repr(job.float_tol))
        for pair in zip(job.inputs or (), job.outputs or ()):
            put(pair[0])
            put(pair[1])
    else:
        for test in job.tests or ():
            put(test)
    return h.digest()


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
        completions = list(completions or [])
        rows = self._prepare(completions, columns)
        self._execute(rows)
        rewards = [self._finish(row) for row in rows]
        self._log(rows, log_metric, log_extra)
        return rewards

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
        for column_name, values in ((cfg.tests_column, tests), (cfg.inputs_column, inputs),
                                    (cfg.outputs_column, outputs)):  # fmt: skip
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
            program = self._program(completion)
            if not program.strip():
                row.no_code = True
                continue
            if row_tests:
                row.job = Job(program, tests=row_tests)
            else:
                row.job = Job(program, inputs=row_inputs, outputs=row_outputs, float_tol=cfg.float_tol)
            row.digest = _digest(settings_key, row.job)
        return rows

    def _program(self, completion: Any) -> str:
        text = completion_text(completion)
        if self.config.extract == "none":
            return text
        return extract_code(text, strategy=self.config.extract)

    def _execute(self, rows: list[_Row]) -> None:
        runnable = [row for row in rows if row.job is not None]
        if not runnable:
            return
        futures, mine = _OUTCOMES.claim([row.digest for row in runnable], self.config.cache_size)
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
        return [_Outcome.from_report(report) for report in sandbox.run_many(jobs)]

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


def _as_list(value: Any, column: str, *, code: bool = False) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (str, bytes, dict)):
        raise SchemaError(f"column {column!r} must hold a list of strings per row, got a single {type(value).__name__}")
    items = list(value)
    if not code:  # stdin/stdout texts are compared, not run: a number or a list of lines reads as its text
        return [_case_text(item) for item in items]
    for item in items:
        if not isinstance(item, str):
            # str() of a dict, a number or None is an expression statement that always "passes": refuse it.
            raise SchemaError(f"column {column!r} must hold strings, got a {type(item).__name__}: {str(item)[:80]}")
    return items


def _case_text(value: Any) -> str:
    return value if isinstance(value, str) else "\n".join(map(str, value)) if isinstance(value, list) else str(value)


def _stdio_cases(value: Any, column: str) -> tuple[list[str], list[str], list[str]]:
    """``(asserts, inputs, outputs)`` of one row's tests value.

    Assert strings come back as the first list. Stdin/stdout cases stored in the tests column, as lists of
    ``{"input": ..., "output": ...}`` or as one ``{"inputs": [...], "outputs": [...]}`` (the APPS layout), come back
    as the other two.

    Example:
        >>> _stdio_cases([{"input": "1\\n", "output": "2\\n"}], "tests")
        ([], ['1\\n'], ['2\\n'])
    """
    if isinstance(value, dict):
        if "inputs" in value and "outputs" in value:
            ins, outs = value["inputs"] or [], value["outputs"] or []
            return [], [_case_text(x) for x in ins], [_case_text(x) for x in outs]
        raise SchemaError(f"column {column!r} holds a dict without 'inputs'/'outputs' lists: {str(value)[:80]}")
    if value is not None and not isinstance(value, (str, bytes)):
        items = list(value)
        if items and all(isinstance(item, dict) for item in items):
            if not all("input" in item and "output" in item for item in items):
                raise SchemaError(f"column {column!r} holds dicts without 'input'/'output' keys: {str(items[0])[:80]}")
            return [], [_case_text(item["input"]) for item in items], [_case_text(item["output"]) for item in items]
        value = items
    return _as_list(value, column, code=True), [], []


# -- ready-made functions with TRL's protocol --------------------------------------------------------------------

_DEFAULTS = {
    "code_reward": CodeReward(RewardConfig(kind="binary"), name="code_reward"),
    "pass_rate_reward": CodeReward(RewardConfig(kind="pass_rate"), name="pass_rate_reward"),
    "async_code_reward": AsyncCodeReward(RewardConfig(kind="binary"), name="async_code_reward"),
    "async_pass_rate_reward": AsyncCodeReward(RewardConfig(kind="pass_rate"), name="async_pass_rate_reward"),
}


def code_reward(
    prompts: list | None = None, completions: list | None = None, completion_ids: list | None = None, **kwargs: Any
) -> list[float | None]:
    """1.0 for a completion whose code passes every test of its row, 0.0 otherwise; ``None`` on sandbox failure.

    The default settings: isolated mode, 1 s of CPU per test, :data:`COMMON_IMPORTS` as preamble, the last Python
    block of the answer. Use :func:`make_code_reward` for others (``failing_value=-1.0``, ``mode="fast"``, ...).

    Args:
        prompts (`list`, *optional*): the prompts (unused).
        completions (`list`): model answers, strings or conversations.
        completion_ids (`list`, *optional*): token ids (unused).
        **kwargs: dataset columns (``tests``, or ``inputs``/``outputs``) and TRL's ``log_metric``/``log_extra``.

    Returns:
        `list[float | None]`: one reward per completion.

    Raises:
        SchemaError: the batch has neither a ``tests`` column nor ``inputs``/``outputs`` columns.

    Example:
        >>> from evolvecoder_datasets.rewards import code_reward
        >>> code_reward(completions=["```python\\ndef sq(x):\\n    return x * x\\n```", "def sq(x): return x"],
        ...             tests=[["assert sq(3) == 9"], ["assert sq(3) == 9"]])
        [1.0, 0.0]
    """
    return _DEFAULTS["code_reward"](prompts, completions, completion_ids, **kwargs)


def pass_rate_reward(
    prompts: list | None = None, completions: list | None = None, completion_ids: list | None = None, **kwargs: Any
) -> list[float | None]:
    """The fraction of its row's tests a completion's code passes; ``None`` on sandbox failure.

    Same settings as :func:`code_reward`; :func:`make_pass_rate_reward` builds variants.

    Args:
        prompts (`list`, *optional*): the prompts (unused).
        completions (`list`): model answers, strings or conversations.
        completion_ids (`list`, *optional*): token ids (unused).
        **kwargs: dataset columns (``tests``, or ``inputs``/``outputs``) and TRL's ``log_metric``/``log_extra``.

    Returns:
        `list[float | None]`: one reward per completion.

    Raises:
        SchemaError: the batch has neither a ``tests`` column nor ``inputs``/``outputs`` columns.

    Example:
        >>> from evolvecoder_datasets.rewards import pass_rate_reward
        >>> pass_rate_reward(completions=["def sq(x):\\n    return x * 3"],
        ...                  tests=[["assert sq(3) == 9", "assert sq(2) == 4"]])
        [0.5]
    """
    return _DEFAULTS["pass_rate_reward"](prompts, completions, completion_ids, **kwargs)


async def async_code_reward(
    prompts: list | None = None, completions: list | None = None, completion_ids: list | None = None, **kwargs: Any
) -> list[float | None]:
    """Coroutine form of :func:`code_reward`; TRL runs it concurrently with other async reward functions.

    Args:
        prompts (`list`, *optional*): the prompts (unused).
        completions (`list`): model answers, strings or conversations.
        completion_ids (`list`, *optional*): token ids (unused).
        **kwargs: dataset columns and TRL's extras, as for :func:`code_reward`.

    Raises:
        SchemaError: the batch has neither a ``tests`` column nor ``inputs``/``outputs`` columns.

    Example:
        >>> import asyncio
        >>> asyncio.run(async_code_reward(completions=["x = 1"], tests=[["assert x == 1"]]))
        [1.0]
    """
    return await _DEFAULTS["async_code_reward"](prompts, completions, completion_ids, **kwargs)


async def async_pass_rate_reward(
    prompts: list | None = None, completions: list | None = None, completion_ids: list | None = None, **kwargs: Any
) -> list[float | None]:
    """Coroutine form of :func:`pass_rate_reward`.

    Args:
        prompts (`list`, *optional*): the prompts (unused).
        completions (`list`): model answers, strings or conversations.
        completion_ids (`list`, *optional*): token ids (unused).
        **kwargs: dataset columns and TRL's extras, as for :func:`pass_rate_reward`.

    Raises:
        SchemaError: the batch has neither a ``tests`` column nor ``inputs``/``outputs`` columns.

    Example:
        >>> import asyncio
        >>> asyncio.run(async_pass_rate_reward(completions=["x = 1"], tests=[["assert x == 1", "assert x == 2"]]))
        [0.5]
    """
    return await _DEFAULTS["async_pass_rate_reward"](prompts, completions, completion_ids, **kwargs)


# -- the dataset side --------------------------------------------------------------------------------------------


def build_prompts(batch: dict[str, list], *, system_prompt: str | None = SYSTEM_PROMPT,
                  question_column: str = schema.QUESTION) -> dict[str, list]:  # fmt: skip
    """``Dataset.map(batched=True)`` function: a conversational ``prompt`` column from the question column.

    Reads ``question`` (or ``question_column``); writes ``prompt``: an optional system message and the question as
    the user message, the shape TRL's trainers take.

    Args:
        batch (`dict[str, list]`): a batch of problem rows.
        system_prompt (`str`, *optional*, defaults to :data:`SYSTEM_PROMPT`): system message; ``None`` for none.
        question_column (`str`, defaults to ``"question"``): column holding the problem statement.

    Raises:
        SchemaError: the batch has no ``question_column``.

    Example:
        >>> build_prompts({"question": ["Write add(a, b)."]}, system_prompt=None)
        {'prompt': [[{'role': 'user', 'content': 'Write add(a, b).'}]]}
    """
    schema.check_columns(batch, [question_column], stage="build_prompts")
    system = [{"role": "system", "content": system_prompt}] if system_prompt else []
    return {"prompt": [system + [{"role": "user", "content": q}] for q in batch[question_column]]}


def with_prompts(dataset, *, system_prompt: str | None = SYSTEM_PROMPT, question_column: str = schema.QUESTION,
                 num_proc: int | None = None):  # fmt: skip
    """The dataset with a conversational ``prompt`` column, ready for ``GRPOTrainer`` with these rewards.

    Published revisions hold ``id``, ``question`` and ``tests``; TRL needs ``prompt``. The other columns stay, so
    the rewards receive ``tests`` (or ``inputs``/``outputs``) for each completion.

    Args:
        dataset (`datasets.Dataset`): problem rows.
        system_prompt (`str`, *optional*, defaults to :data:`SYSTEM_PROMPT`): system message; ``None`` for none.
        question_column (`str`, defaults to ``"question"``): column holding the problem statement.
        num_proc (`int`, *optional*): processes for ``map``.

    Returns:
        `datasets.Dataset`

    Raises:
        SchemaError: the dataset has no ``question_column``.

    Example:
        >>> from datasets import load_dataset
        >>> from evolvecoder_datasets.rewards import with_prompts
        >>> ds = with_prompts(load_dataset("org/EvolveCoder-22k", revision="round3", split="train"))  # doctest: +SKIP
        >>> ds[0]["prompt"][-1]["role"]                                                                # doctest: +SKIP
        'user'
    """
    schema.check_columns(dataset.column_names, [question_column], stage="with_prompts")
    return dataset.map(
        build_prompts, batched=True, num_proc=num_proc, desc="prompts",
        fn_kwargs={"system_prompt": system_prompt, "question_column": question_column},
    )  # fmt: skip
