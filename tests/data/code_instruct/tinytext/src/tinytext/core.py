"""Word splitting, whitespace normalisation, slugs and word statistics."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field

_WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?")
_SPACE = re.compile(r"\s+")


def normalize_space(text: str) -> str:
    """Collapse every run of whitespace to one space and strip both ends."""
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    return _SPACE.sub(" ", text).strip()


def split_words(text: str, *, lower: bool = False) -> list[str]:
    """Words of ``text``: runs of ASCII letters and digits, with an optional apostrophe suffix."""
    words = _WORD.findall(text)
    if lower:
        words = [word.lower() for word in words]
    return words


def _ascii_fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return decomposed.encode("ascii", "ignore").decode("ascii")


def slugify(text: str, *, separator: str = "-", max_length: int | None = None) -> str:
    """A lower-case ASCII slug of ``text``.

    Accents are folded (``"Crème"`` -> ``"creme"``), words are joined by ``separator`` and the result is cut at
    ``max_length`` characters without leaving a trailing separator.
    """
    if not separator or separator.isalnum():
        raise ValueError("separator must be a non-empty, non-alphanumeric string")
    if max_length is not None and max_length < 1:
        raise ValueError("max_length must be positive")
    words = split_words(_ascii_fold(text).replace("'", ""), lower=True)
    slug = separator.join(words)
    if max_length is not None and len(slug) > max_length:
        slug = slug[:max_length].rstrip(separator)
    return slug


@dataclass
class TextStats:
    """Word statistics of one text.

    Attributes:
        words: number of words.
        unique: number of distinct lower-cased words.
        counts: occurrences of each lower-cased word.
    """

    words: int = 0
    unique: int = 0
    counts: Counter = field(default_factory=Counter)

    @classmethod
    def of(cls, text: str) -> "TextStats":
        """Statistics of ``text``."""
        counts = Counter(split_words(text, lower=True))
        return cls(words=sum(counts.values()), unique=len(counts), counts=counts)

    def most_common(self, n: int = 3) -> list[tuple[str, int]]:
        """The ``n`` most frequent words, ties broken alphabetically."""
        if n < 0:
            raise ValueError("n must be non-negative")
        ranked = sorted(self.counts.items(), key=lambda item: (-item[1], item[0]))
        return ranked[:n]

    def merge(self, other: "TextStats") -> "TextStats":
        """Statistics of both texts together."""
        counts = self.counts + other.counts
        return TextStats(words=self.words + other.words, unique=len(counts), counts=counts)

    def lexical_density(self) -> float:
        """Distinct words per word (0.0 for an empty text)."""
        return self.unique / self.words if self.words else 0.0
