"""The settings of one code_instruct run (:class:`CodeInstructConfig`) and the version of the pipeline's logic.

A config is data: a frozen dataclass checked in ``__post_init__``, written next to the dataset it made
(``recipe.yaml``, the card's provenance) by :meth:`CodeInstructConfig.to_dict`, which stamps :data:`VERSION` into it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import ConfigError
from .seeds import SeedConfig

__all__ = ["VERSION", "CodeInstructConfig"]

#: Version of the pipeline logic; it enters the provenance of every task.
VERSION = "code-instruct-pipeline-1"


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
            the decontamination gate (``()`` disables it unless an index is passed to
            :func:`~.pipeline.generate_tasks`).
        ngram (`int`, defaults to 10): words per n-gram for decontamination.
        max_overlap (`float`, defaults to 0.02): tolerated share of benchmark n-grams in a problem.
        min_asserts (`int`, defaults to 3): non-trivial asserts a test needs.
        repo_label (`str`, *optional*): how the prompt names the repository (``"pallets/click"``); defaults to
            ``dist==version``.
        export_judged_inside (`bool`, defaults to `False`): also export (rows, Harbor folders) tasks whose
            verification was judged inside the solution's process (tests the split refuses, container backends;
            see :class:`~.tasks.Task`).

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
