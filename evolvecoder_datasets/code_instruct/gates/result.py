"""What a gate returns, and the parse every static gate starts from (the stages' own, :func:`parse_or_none`).

Example:
    >>> from evolvecoder_datasets.code_instruct.gates.result import GateResult
    >>> GateResult.failed("weak_test", "no test function").reason
    'weak_test'
"""

from __future__ import annotations

from dataclasses import dataclass

from ..._parse import parse_or_none

__all__ = ["GateResult", "parse_or_none"]


@dataclass(frozen=True)
class GateResult:
    """The outcome of one gate (or of all of them).

    Args:
        ok (`bool`): whether the task passed.
        reason (`str`, *optional*): the skip reason (a key of :data:`SKIP_REASONS`) when it did not.
        detail (`str`, defaults to ``""``): what exactly failed, for humans.
    """

    ok: bool
    reason: str | None = None
    detail: str = ""

    @classmethod
    def passed(cls) -> GateResult:
        """A passing result.

        Example:
            >>> GateResult.passed().ok
            True
        """
        return cls(True)

    @classmethod
    def failed(cls, reason: str, detail: str = "") -> GateResult:
        """A failing result with a reason from :data:`~evolvecoder_datasets.code_instruct.gates.SKIP_REASONS`.

        Example:
            >>> GateResult.failed("duplicate").ok
            False
        """
        return cls(False, reason, detail)
