"""What a gate returns, and the parse every static gate starts from.

Example:
    >>> from evolvecoder_datasets.code_instruct.gates.result import GateResult
    >>> GateResult.failed("weak_test", "no test function").reason
    'weak_test'
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

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


def parse_or_none(source: str) -> ast.Module | None:
    """The module ``source`` parses to, or None when it does not parse.

    Example:
        >>> parse_or_none("def (") is None
        True
    """
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None
