"""Greedy word wrapping that never breaks inside a word unless the word alone is too long."""

from __future__ import annotations

from .core import normalize_space


def _chunks(word: str, width: int) -> list[str]:
    return [word[i : i + width] for i in range(0, len(word), width)]


def wrap_words(text: str, width: int = 40, *, break_long_words: bool = True) -> list[str]:
    """Wrap ``text`` into lines of at most ``width`` characters.

    Whitespace is normalised first. Words longer than ``width`` are cut into pieces when ``break_long_words``,
    otherwise they stay whole on a line of their own.

    Raises:
        ValueError: ``width`` is smaller than 1.
    """
    if width < 1:
        raise ValueError("width must be at least 1")
    lines: list[str] = []
    current = ""
    for word in normalize_space(text).split(" "):
        if not word:
            continue
        pieces = _chunks(word, width) if break_long_words and len(word) > width else [word]
        for piece in pieces:
            if not current:
                current = piece
            elif len(current) + 1 + len(piece) <= width:
                current = f"{current} {piece}"
            else:
                lines.append(current)
                current = piece
    if current:
        lines.append(current)
    return lines


def justify(line: str, width: int) -> str:
    """Spread the spaces of ``line`` so that it is exactly ``width`` characters long."""
    words = line.split()
    if len(words) < 2 or len(line) >= width:
        return line
    gaps = len(words) - 1
    spaces = width - sum(len(word) for word in words)
    base, extra = divmod(spaces, gaps)
    out = []
    for i, word in enumerate(words[:-1]):
        out.append(word + " " * (base + (1 if i < extra else 0)))
    out.append(words[-1])
    return "".join(out)


def wrap_paragraphs(text: str, width: int = 40) -> list[list[str]]:
    """Wrap each blank-line-separated paragraph of ``text`` separately."""
    paragraphs = [p for p in text.split("\n\n") if p.strip()]
    return [wrap_words(p, width) for p in paragraphs]
