"""What a code reward computes and how its sandbox runs: :class:`RewardConfig` and the default preamble.

Example:
    >>> from evolvecoder_datasets.rewards import RewardConfig
    >>> RewardConfig(kind="pass_rate", mode="fast").default_name()
    'pass_rate_reward_fast'
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .. import schema
from ..errors import ConfigError
from ..execution.extract import STRATEGIES
from ..limits import SandboxSettings
from ..schema import TIME_LIMIT

__all__ = ["COMMON_IMPORTS", "KINDS", "RewardConfig"]

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


def _default_workers() -> int:
    """Usable cores shared by the trainer processes of this node (``LOCAL_WORLD_SIZE`` ranks)."""
    cores = len(os.sched_getaffinity(0))
    try:
        ranks = max(1, int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
    except ValueError:
        ranks = 1
    return max(1, cores // ranks)


@dataclass(frozen=True)
class RewardConfig(SandboxSettings):
    """What a code reward computes and how the sandbox runs the completions.

    The sandbox fields are those of :class:`~evolvecoder_datasets.limits.SandboxSettings` (the same names and
    defaults as the execute stage's), except ``preamble``, which defaults to :data:`COMMON_IMPORTS` here. Pass
    them by keyword.

    Args:
        kind (`str`, defaults to ``"binary"``): ``"binary"`` (1.0 when every test passes, else ``failing_value``)
            or ``"pass_rate"`` (fraction of tests passed). A binary reward's run stops at the first test that does
            not pass (its value is known there); a pass-rate reward runs every test.
        failing_value (`float`, defaults to 0.0): reward of a completion that fails any test or holds no code, for
            ``kind="binary"``; the verl-tool AceCoder reward uses -1.0. ``"pass_rate"`` gives 0.0 to code-less
            completions.
        mode (`str`, defaults to ``"isolated"``): sandbox mode. ``"isolated"`` runs every test in a fresh copy of
            the loaded program (tests cannot see each other's side effects); ``"fast"`` runs them in sequence in
            one process, several times cheaper.
        timeout_s (`float`, defaults to 1.0): CPU seconds one test may use: the ceiling of the rows' calibrated
            limits and the limit of rows without one.
        memory_mb (`int`, defaults to 1024): address-space limit of a solution process.
        workers (`int`, *optional*): programs run at once by this process's sandbox. Defaults to the usable cores
            divided by ``LOCAL_WORLD_SIZE``, so the ranks of one node share the cores without oversubscribing.
        preamble (`str`, *optional*, defaults to :data:`COMMON_IMPORTS`): code run before each program; ``None``
            runs programs exactly as written.
        isolation (`str`, defaults to ``"auto"``): sandbox isolation (``"bwrap"``, ``"unshare"``, ``"none"``,
            ``"auto"``).
        max_consecutive_timeouts (`int`, *optional*, defaults to 2): after this many timeouts in a row the
            program's remaining tests are not run and count as failed; ``None`` runs every test.
        limit_factor, limit_floor_s (`float`): calibration of limits (used where the execute stage measured them;
            see :class:`~evolvecoder_datasets.limits.SandboxSettings`).
        calibrate (`bool`, defaults to True): use the rows' ``limits_column`` values; False runs every test under
            ``timeout_s``.
        extract (`str`, defaults to ``"last"``): which fenced block :func:`extract_code` keeps (``"last"``,
            ``"first"``, ``"all"``, ``"longest"``), or ``"none"`` to run the completion text as it is.
        float_tol (`float`, *optional*): tolerance for numeric tokens of stdin/stdout answers.
        tests_column (`str`, defaults to ``"tests"``): column of assert lists.
        inputs_column (`str`, defaults to ``"inputs"``): column of stdin texts (stdin/stdout rows).
        outputs_column (`str`, defaults to ``"outputs"``): column of expected stdout texts.
        language_column (`str`, *optional*, defaults to ``"language"``): column of each row's language
            (``"python"``, ``"cpp"``; Python where absent or null); a C++ completion's ``cpp``-fenced block is the
            program.
        checker_column (`str`, *optional*, defaults to ``"checker"``): column of each stdin/stdout row's special
            judge (``{source, language, contract}`` or null, see :class:`~evolvecoder_datasets.execution.checkers.Checker`);
            a row's ``float_tol`` column, where present, is its tolerance in place of ``float_tol``.
        limits_column (`str`, *optional*, defaults to ``"time_limit_s"``): column of per-problem calibrated limits
            (CPU seconds or null), read when the batch has it; ``None`` ignores it.
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

    preamble: str | None = COMMON_IMPORTS
    kind: str = "binary"
    failing_value: float = 0.0
    extract: str = "last"
    float_tol: float | None = None
    tests_column: str = schema.TESTS
    inputs_column: str = schema.INPUTS
    outputs_column: str = schema.OUTPUTS
    language_column: str | None = schema.LANGUAGE
    checker_column: str | None = schema.CHECKER
    limits_column: str | None = TIME_LIMIT
    cache_size: int = 65536
    log_metrics: bool = True
    log_details: bool = True

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ConfigError(f"kind must be one of {KINDS}, got {self.kind!r}")
        super().__post_init__()
        if self.extract not in (*STRATEGIES, "none"):
            raise ConfigError(f"extract must be one of {(*STRATEGIES, 'none')}, got {self.extract!r}")
        if self.cache_size < 0:
            raise ConfigError(f"cache_size must be >= 0, got {self.cache_size!r}")

    def sandbox_settings(self) -> dict[str, Any]:
        """Keyword arguments of the per-process :func:`~evolvecoder_datasets.execution.shared_sandbox`.

        Example:
            >>> RewardConfig(mode="fast", workers=2).sandbox_settings()["mode"]
            'fast'
        """
        settings = super().sandbox_settings()
        settings["workers"] = self.workers or _default_workers()
        return settings

    def default_name(self) -> str:
        """The name TRL logs the reward under: ``code_reward`` or ``pass_rate_reward``, plus ``_fast`` in fast mode.

        Example:
            >>> RewardConfig(kind="pass_rate", mode="fast").default_name()
            'pass_rate_reward_fast'
        """
        base = "code_reward" if self.kind == "binary" else "pass_rate_reward"
        return base if self.mode == "isolated" else f"{base}_{self.mode}"
