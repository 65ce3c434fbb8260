"""Gate 7: a task already emitted with the same problem head or the same public solution symbols is a duplicate.

Example:
    >>> from evolvecoder_datasets.code_instruct.gates.dedup import Deduplicator
    >>> Deduplicator().check("Write f.", "def f():\\n    pass\\n").ok
    True
"""

from __future__ import annotations

import hashlib
import re

from .anchoring import top_level_definitions
from .result import GateResult

__all__ = ["Deduplicator"]


class Deduplicator:
    """Two fingerprints per emitted task: the normalised problem head and the sorted public symbols of the solution.

    The head is the first ``head_chars`` characters of the problem, lower-cased, with markup and punctuation
    removed and whitespace collapsed. The symbols are the solution's public top-level definitions (a solution
    defining none has no symbol fingerprint). :meth:`check` does not record anything; :meth:`add` does, once the
    task is emitted, so a candidate that later fails verification does not block a good one.

    Args:
        head_chars (`int`, defaults to 80): length of the problem head.

    Example:
        >>> dedup = Deduplicator()
        >>> dedup.add("Write `slugify(text)`.", "def slugify(text):\\n    return text\\n")
        >>> dedup.check("write slugify(text)!", "def other():\\n    pass\\n").detail
        'same problem head as an emitted task'
    """

    def __init__(self, head_chars: int = 80) -> None:
        self.head_chars = head_chars
        self.heads: set[str] = set()
        self.symbols: set[str] = set()

    def fingerprints(self, problem: str, solution: str) -> tuple[str, str | None]:
        """``(head_fingerprint, symbols_fingerprint or None)``."""
        text = re.sub(r"[^a-z0-9\s]", " ", problem.lower())
        head = " ".join(text.split())[: self.head_chars]
        names = sorted(name for name in top_level_definitions(solution) if not name.startswith("_"))
        head_fp = hashlib.sha256(head.encode()).hexdigest()
        symbols_fp = hashlib.sha256("\n".join(names).encode()).hexdigest() if names else None
        return head_fp, symbols_fp

    def check(self, problem: str, solution: str) -> GateResult:
        """Gate 7: fail when either fingerprint was already emitted."""
        head, symbols = self.fingerprints(problem, solution)
        if head in self.heads:
            return GateResult.failed("duplicate", "same problem head as an emitted task")
        if symbols is not None and symbols in self.symbols:
            return GateResult.failed("duplicate", "same public solution symbols as an emitted task")
        return GateResult.passed()

    def add(self, problem: str, solution: str) -> None:
        """Record an emitted task's fingerprints."""
        head, symbols = self.fingerprints(problem, solution)
        self.heads.add(head)
        if symbols is not None:
            self.symbols.add(symbols)
