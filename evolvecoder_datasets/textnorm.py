"""The normal form of a text and its hash: what makes two problem statements exact duplicates.

Normalisation lower-cases, folds Unicode compatibility forms (NFKC) and collapses every run of whitespace, so
re-flowed or re-indented copies of a statement hash alike. The exact-duplicate pass of the sources
(:func:`evolvecoder_datasets.sources.exact.mark_exact_duplicates`) and the semantic pass of the dedup stage
(:func:`evolvecoder_datasets.stages.dedup.deduplicate`, which hashes before embedding) both key texts by it.

Example:
    >>> from evolvecoder_datasets.textnorm import normalize_text, text_hash
    >>> normalize_text("  Two\\tSum\\n\\n")
    'two sum'
    >>> text_hash("Two Sum") == text_hash("two   sum ")
    True
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

__all__ = ["normalize_text", "text_hash"]

_WHITESPACE = re.compile(r"\s+")


def normalize_text(text: str | None) -> str:
    """Lower-case, NFKC-fold and collapse whitespace.

    Example:
        >>> normalize_text("Ｆｉｎｄ  the MAX")
        'find the max'
    """
    if not text:
        return ""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip()


def text_hash(text: str | None) -> str:
    """Hex BLAKE2b-128 digest of :func:`normalize_text` (stable across processes and runs).

    Example:
        >>> len(text_hash("abc"))
        32
    """
    return hashlib.blake2b(normalize_text(text).encode("utf-8"), digest_size=16).hexdigest()
