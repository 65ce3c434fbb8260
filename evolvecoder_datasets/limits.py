"""Sandbox settings: the one set every entry point embeds, and per-problem calibrated limits.

Two things live here, because both decide how long a program may run:

- :class:`SandboxSettings`, every setting of a :class:`~evolvecoder_datasets.execution.Sandbox` with its only
  default and its only check. The sandbox takes it whole (``Sandbox(settings, **overrides)``), and the execute
  stage (:class:`~evolvecoder_datasets.stages.execute.ExecuteConfig`), the rewards
  (:class:`~evolvecoder_datasets.rewards.RewardConfig`) and everything built on them (evolution rounds, reference
  checks, mutation scores) *are* ``SandboxSettings`` (they subclass it), so a YAML key reaches the fork server
  under one name, with one default and one meaning. In particular a program that times out
  ``max_consecutive_timeouts`` (2) times in a row has its remaining tests marked ``unexecuted``, in every entry
  point. This module is on the ground floor (``docs/layers.md``): it imports nothing of the package but errors.
- Calibration. A fixed 1 s limit is far from what a test needs (most HumanEval asserts run in microseconds), and a
  looping program burns the whole limit on every test it is run against. A problem's limit is calibrated from its
  reference solution's measured CPU time: ``factor x`` the slowest test the reference passes, at least ``floor``,
  at most the fixed ``timeout_s`` (which stays the ceiling, and the fallback where no calibration exists). Limits
  are rounded up to a fixed ladder of values so that the noise of one measurement rarely changes them. They travel
  with the dataset in the optional column ``time_limit_s`` (:data:`~evolvecoder_datasets.schema.TIME_LIMIT`;
  seconds, or null), written by the execute stage and read by the evolution rounds and the rewards.

Example:
    >>> from evolvecoder_datasets.limits import SandboxSettings
    >>> settings = SandboxSettings(timeout_s=1.0, limit_factor=10.0, limit_floor_s=0.1)
    >>> settings.calibrated_limit([0.0004, 0.002])       # the reference's CPU seconds per passed test
    0.1
    >>> settings.calibrated_limit([0.03])                # 10 x 0.03 = 0.3, rounded up the ladder
    0.318
    >>> settings.calibrated_limit([0.5]), settings.calibrated_limit([])   # capped at the ceiling; no calibration
    (1.0, None)
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError


__all__ = ["MODES", "SandboxSettings", "limit_ladder"]

#: How a sandbox runs a program's tests: ``"isolated"`` (a fresh copy of the loaded program per test) or
#: ``"fast"`` (the tests in sequence in one process).
MODES = ("isolated", "fast")

_STEPS_PER_DOUBLING = 6  # ladder ratio 2 ** (1/6) ~ 1.12: a limit moves only when a measurement moves > 12%

#: The calibration floor where ``limit_floor_s`` is not given (CPU seconds), unless ``timeout_s`` is shorter.
_DEFAULT_FLOOR_S = 0.1


def limit_ladder(seconds: float, floor_s: float) -> float:
    """``seconds`` rounded up to the ladder ``floor_s * 2 ** (k / 6)`` (k = 0, 1, ...), to the millisecond.

    Calibrated limits come from measurements, which vary a little from run to run; on a ladder they rarely change.

    Example:
        >>> limit_ladder(0.05, 0.1), limit_ladder(0.1, 0.1), limit_ladder(0.15, 0.1)
        (0.1, 0.1, 0.159)
    """
    if seconds <= floor_s:
        return round(floor_s, 3)
    k = math.ceil(_STEPS_PER_DOUBLING * math.log2(seconds / floor_s) - 1e-9)
    return math.ceil(floor_s * 2 ** (k / _STEPS_PER_DOUBLING) * 1000) / 1000


@dataclass(frozen=True)
class SandboxSettings:
    """How untrusted programs run: one policy for the execute stage, the evolution rounds and the rewards.

    Args:
        timeout_s (`float`, defaults to 1.0): CPU seconds one test may use: the ceiling of every calibrated limit,
            and the limit of problems without one.
        memory_mb (`int`, defaults to 1024): address-space limit of a solution process.
        mode (`str`, defaults to ``"isolated"``): ``"isolated"`` (a fresh copy of the loaded program per test) or
            ``"fast"`` (tests in sequence in one process).
        workers (`int`, *optional*): fork servers, i.e. programs run at once. Defaults to the usable cores (the
            rewards divide them between the ranks of a node).
        preamble (`str`, *optional*): code run before each program (e.g. ``"from typing import List"``).
        isolation (`str`, defaults to ``"auto"``): ``"bwrap"``, ``"unshare"``, ``"none"`` or ``"auto"``.
        max_consecutive_timeouts (`int`, *optional*, defaults to 2): after this many timeouts in a row a program's
            remaining tests are marked ``unexecuted`` (they count as failed). A looper then costs two limits, not
            one per test. ``None`` runs every test.
        limit_factor (`float`, defaults to 10.0): a calibrated limit is this many times the reference's slowest
            passed test (CPU time).
        limit_floor_s (`float`, *optional*): the smallest calibrated limit (CPU seconds): fork, judge and
            measurement noise of a microsecond test stay far below it. Defaults to 0.1, or ``timeout_s`` where that
            is shorter (:attr:`floor_s`); a floor given above ``timeout_s`` is an error.
        calibrate (`bool`, defaults to True): use calibrated limits where a problem has one (the execute stage also
            measures them where a confirmed reference exists); False runs everything under ``timeout_s``.
        wall_timeout_s (`float`, *optional*): wall-clock backstop per test for programs that sleep or block.
            Defaults to ``4 * timeout_s + 1.0`` (:attr:`wall_limit_s`).
        load_timeout_s (`float`, *optional*): CPU seconds for compiling and loading the program. Defaults to
            ``max(timeout_s, 2.0)`` (:attr:`load_limit_s`).
        max_output_bytes (`int`, defaults to 1 MiB): file-size limit, and the stdout cap of stdin/stdout programs.
        max_processes (`int`, defaults to 32): process limit of the sandbox uid (effective when run as root).
        max_open_files (`int`, defaults to 64): open-file limit.
        max_value_bytes (`int`, defaults to 4 MiB): the largest encoded value a probe may send to the judge.
        python_env (`str`, *optional*): a virtualenv built with this interpreter whose installed packages programs
            import, in place of this interpreter's (its package folders are shown read-only inside the sandbox and
            are the only ones on the path): a repository's environment, for code_instruct tasks. Test helpers'
            clean processes see the same packages.

    Raises:
        ConfigError: a value is out of range or unknown.

    Example:
        >>> SandboxSettings(mode="fast").sandbox_settings()["max_consecutive_timeouts"]
        2
        >>> SandboxSettings(limit_floor_s=2.0)
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.errors.ConfigError: limit_floor_s must be > 0 and <= timeout_s (1.0), got 2.0
    """

    timeout_s: float = 1.0
    memory_mb: int = 1024
    mode: str = "isolated"
    workers: int | None = None
    preamble: str | None = None
    isolation: str = "auto"
    max_consecutive_timeouts: int | None = 2
    limit_factor: float = 10.0
    limit_floor_s: float | None = None
    calibrate: bool = True
    wall_timeout_s: float | None = None
    load_timeout_s: float | None = None
    max_output_bytes: int = 1 << 20
    max_processes: int = 32
    max_open_files: int = 64
    max_value_bytes: int = 4 << 20
    python_env: str | None = None

    #: The fields a :class:`~evolvecoder_datasets.execution.Sandbox` runs by (the others choose a job's limit).
    SANDBOX_FIELDS = ("workers", "timeout_s", "memory_mb", "mode", "preamble", "isolation", "max_consecutive_timeouts",
                      "wall_timeout_s", "load_timeout_s", "max_output_bytes", "max_processes", "max_open_files",
                      "max_value_bytes", "python_env")  # fmt: skip

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(f"mode must be one of {MODES}, got {self.mode!r}")
        if not self.timeout_s > 0:
            raise ConfigError(f"timeout_s must be > 0, got {self.timeout_s!r}")
        if self.memory_mb < 64:
            raise ConfigError(f"memory_mb must be >= 64, got {self.memory_mb!r}")
        if self.workers is not None and self.workers < 1:
            raise ConfigError(f"workers must be >= 1, got {self.workers!r}")
        for name in ("wall_timeout_s", "load_timeout_s"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ConfigError(f"{name} must be > 0 or None, got {value!r}")
        for name, least in (("max_output_bytes", 1), ("max_processes", 1), ("max_open_files", 8),
                            ("max_value_bytes", 1)):  # fmt: skip
            if getattr(self, name) < least:
                raise ConfigError(f"{name} must be >= {least}, got {getattr(self, name)!r}")
        if self.python_env is not None and not (isinstance(self.python_env, str) and os.path.isabs(self.python_env)):
            raise ConfigError(f"python_env must be an absolute path to a virtualenv, got {self.python_env!r}")
        if self.max_consecutive_timeouts is not None and self.max_consecutive_timeouts < 1:
            raise ConfigError(f"max_consecutive_timeouts must be >= 1 or None, got {self.max_consecutive_timeouts!r}")
        if not self.limit_factor >= 1.0:
            raise ConfigError(f"limit_factor must be >= 1, got {self.limit_factor!r}")
        if self.limit_floor_s is not None and not 0 < self.limit_floor_s <= self.timeout_s:
            raise ConfigError(f"limit_floor_s must be > 0 and <= timeout_s ({self.timeout_s}), "
                              f"got {self.limit_floor_s!r}")  # fmt: skip

    def sandbox_settings(self) -> dict[str, Any]:
        """The settings a sandbox runs by, as keyword arguments (``Sandbox(**...)``, ``shared_sandbox(**...)``).

        Example:
            >>> SandboxSettings(mode="fast").sandbox_settings()["mode"], len(SandboxSettings().sandbox_settings())
            ('fast', 14)
        """
        return {name: getattr(self, name) for name in self.SANDBOX_FIELDS}

    def for_sandbox(self) -> SandboxSettings:
        """The settings a sandbox runs by, as a plain :class:`SandboxSettings`: the sandbox fields kept, the
        calibration fields (which choose a job's limit, never the sandbox's) and a config's own fields dropped.

        Example:
            >>> from evolvecoder_datasets.stages.execute import ExecuteConfig
            >>> ExecuteConfig(mode="fast", statuses=False).for_sandbox() == SandboxSettings(mode="fast")
            True
            >>> SandboxSettings(timeout_s=0.5, limit_floor_s=0.5).for_sandbox() == SandboxSettings(timeout_s=0.5)
            True
        """
        return SandboxSettings(**self.sandbox_settings())

    @property
    def worker_count(self) -> int:
        """``workers``, or the usable cores of this machine when unset.

        Example:
            >>> SandboxSettings(workers=3).worker_count
            3
        """
        return self.workers or len(os.sched_getaffinity(0))

    @property
    def floor_s(self) -> float:
        """The smallest calibrated limit: ``limit_floor_s``, or 0.1 s capped by ``timeout_s``.

        Example:
            >>> SandboxSettings().floor_s, SandboxSettings(timeout_s=0.05).floor_s, SandboxSettings(limit_floor_s=0.2).floor_s
            (0.1, 0.05, 0.2)
        """
        if self.limit_floor_s is not None:
            return float(self.limit_floor_s)
        return min(_DEFAULT_FLOOR_S, float(self.timeout_s))

    @property
    def wall_limit_s(self) -> float:
        """The wall-clock backstop per test: ``wall_timeout_s``, or ``4 * timeout_s + 1.0``.

        Example:
            >>> SandboxSettings(timeout_s=0.5).wall_limit_s, SandboxSettings(wall_timeout_s=9.0).wall_limit_s
            (3.0, 9.0)
        """
        return float(self.wall_timeout_s) if self.wall_timeout_s else self.default_wall_s(self.timeout_s)

    @staticmethod
    def default_wall_s(timeout_s: float) -> float:
        """The wall-clock backstop of a test allowed ``timeout_s`` CPU seconds where none is set: ``4 * timeout_s +
        1.0``. Written once: :attr:`wall_limit_s` and the engine's shrunken backstop of a job with a lower limit of
        its own both use it.

        Example:
            >>> SandboxSettings.default_wall_s(0.5), SandboxSettings.default_wall_s(1)
            (3.0, 5.0)
        """
        return 4 * float(timeout_s) + 1.0

    @property
    def load_limit_s(self) -> float:
        """CPU seconds to compile and load a program: ``load_timeout_s``, or ``max(timeout_s, 2.0)``.

        Example:
            >>> SandboxSettings(timeout_s=0.5).load_limit_s, SandboxSettings(timeout_s=3.0).load_limit_s
            (2.0, 3.0)
        """
        return float(self.load_timeout_s) if self.load_timeout_s else max(float(self.timeout_s), 2.0)

    def calibrated_limit(self, reference_cpu_s: Iterable[float]) -> float | None:
        """The limit for a problem whose reference used ``reference_cpu_s`` CPU seconds on the tests it passed.

        ``None`` (no calibration: ``timeout_s`` applies) when there is no measurement.

        Example:
            >>> SandboxSettings(limit_factor=4.0, limit_floor_s=0.05).calibrated_limit([0.001, 0.02])
            0.09
        """
        measured = [float(c) for c in reference_cpu_s if c is not None and c >= 0 and math.isfinite(c)]
        if not measured:
            return None
        return min(float(self.timeout_s), limit_ladder(self.limit_factor * max(measured), self.floor_s))

    def job_timeout(self, limit: float | None) -> float | None:
        """The ``Job.timeout_s`` for a problem's stored limit: ``None`` (the sandbox's ``timeout_s``) without one
        or with calibration off, else the limit capped by ``timeout_s``.

        Example:
            >>> SandboxSettings().job_timeout(0.2), SandboxSettings().job_timeout(5.0), SandboxSettings().job_timeout(None)
            (0.2, 1.0, None)
            >>> SandboxSettings(calibrate=False).job_timeout(0.2) is None
            True
        """
        if not self.calibrate or limit is None:
            return None
        try:
            value = float(limit)
        except (TypeError, ValueError):
            return None
        if not value > 0 or not math.isfinite(value):
            return None
        return min(value, float(self.timeout_s))
