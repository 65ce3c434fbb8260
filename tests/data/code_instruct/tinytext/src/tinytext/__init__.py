"""tinytext: small text utilities used as a repository fixture."""

from .core import TextStats, normalize_space, slugify, split_words
from .wrap import wrap_words

__all__ = ["TextStats", "normalize_space", "slugify", "split_words", "wrap_words"]
__version__ = "0.3.1"
