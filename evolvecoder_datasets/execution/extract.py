"""Getting a program out of a model's answer.

Models wrap code in prose, ``<think>`` blocks and fences in every spelling. :func:`extract_code` strips the
thinking and finds the fences with :mod:`evolvecoder_datasets.chat` (the one reader of model text, shared with the
test writers' parsers and the seed sources), takes a fenced Python block (the last one by default, as the verl-tool
AceCoder reward does), and when there is no fence falls back to the longest run of lines that parses as Python. It
never raises on garbage.

Example:
    >>> from evolvecoder_datasets.execution import extract_code
    >>> extract_code("<think>maybe ```python\\nx=0\\n```</think>Answer:\\n```python\\ndef f():\\n    return 1\\n```")
    'def f():\\n    return 1'
"""

from __future__ import annotations

import ast

from ..chat import completion_text, fenced_blocks, strip_thinking

__all__ = ["extract_code", "STRATEGIES"]

STRATEGIES = ("last", "first", "all", "longest")

_PYTHON_TAGS = {"python", "py", "python3", "py3", "sage", ""}
_LANGUAGE_TAGS = {"cpp": {"cpp", "c++", "cc", "cxx", "cplusplus"}}


def _longest_parseable_run(text: str, max_lines: int = 400) -> str:
    """Longest contiguous run of lines that parses as Python and contains a statement beyond a bare name."""
    lines = text.splitlines()
    best = ""
    n = len(lines)
    starts = [i for i, line in enumerate(lines) if line.strip() and not line.startswith((" ", "\t"))]
    for start in starts:
        # Try the longest end first; stop at the first that parses.
        for end in range(min(n, start + max_lines), start, -1):
            chunk = "\n".join(lines[start:end]).strip("\n")
            if len(chunk) <= len(best):
                break
            if _looks_like_code(chunk):
                best = chunk
                break
    return best


def _looks_like_code(chunk: str) -> bool:
    """Parses as Python and holds a statement beyond a bare name or constant."""
    try:
        tree = ast.parse(chunk)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom,
                          ast.Assign, ast.AugAssign, ast.Assert, ast.For, ast.While, ast.If, ast.With, ast.Return))
        for node in tree.body
    ) or any(isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) for node in tree.body)  # fmt: skip


def extract_code(completion: object, *, strategy: str = "last", language: str = "python") -> str:
    """Extract the program from a model completion.

    Args:
        completion (`str` or chat messages): the model output; a list of ``{"role", "content"}`` messages (as TRL
            passes conversational completions) uses the last assistant message.
        strategy (`str`, defaults to ``"last"``): which fenced block: ``"last"``, ``"first"``, ``"longest"``, or
            ``"all"`` (every Python block joined, for answers that split helpers and solution).
        language (`str`, defaults to ``"python"``): fences tagged with another language are ignored unless no
            Python-tagged or untagged block exists.

    Returns:
        `str`: the code, stripped of surrounding blank lines; ``""`` when nothing code-like is found.

    Example:
        >>> extract_code("Sure!\\n```py\\nprint(1)\\n```\\n```python\\nprint(2)\\n```", strategy="first")
        'print(1)'
        >>> extract_code("no code here at all")
        ''
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    text = completion_text(completion)
    if not text:
        return ""
    text = strip_thinking(text)
    blocks = fenced_blocks(text)
    wanted = _LANGUAGE_TAGS.get(language.lower(), {language.lower()}) | (
        _PYTHON_TAGS if language.lower() in _PYTHON_TAGS else {""})
    code_blocks = [body.strip("\n") for tag, body in blocks if tag in wanted and body.strip()]
    if not code_blocks:
        code_blocks = [body.strip("\n") for _, body in blocks if body.strip()]
    if code_blocks:
        if strategy == "first":
            return code_blocks[0]
        if strategy == "all":
            return "\n\n".join(code_blocks)
        if strategy == "longest":
            return max(code_blocks, key=len)
        return code_blocks[-1]
    stripped = text.strip("\n")
    if _looks_like_code(stripped):
        return stripped
    return _longest_parseable_run(text)


