"""Parsers that survive what models really write.

Model answers arrive wrapped in ``<think>`` blocks, fenced or surrounded by prose (both read by
:mod:`evolvecoder_datasets.chat`, the one reader of model text), cut off at ``max_tokens``, with single quotes,
trailing commas, Python literals, raw newlines inside strings, a test list given as one string, tests that are bare
comparisons, numbered, or not Python at all. Everything here is pure standard library and either
returns the parsed value or raises :class:`~evolvecoder_datasets.errors.LLMResponseError` whose ``reason`` is one of
:data:`REASONS` (stages record it as ``drop_reason``).

Example:
    >>> from evolvecoder_datasets.prompts.parsing import extract_json, clean_tests
    >>> text = "<think>hmm</think>Sure! ```json\\n{'tests': ['assert f(1) == 2', 'f(2) == 3',]}\\n```"
    >>> clean_tests(extract_json(text)["tests"]).tests
    ['assert f(1) == 2', 'assert f(2) == 3']
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..chat import fenced_blocks, strip_thinking
from ..errors import LLMResponseError

__all__ = [
    "REASONS",
    "strip_fences",
    "extract_json",
    "repair_json",
    "clean_tests",
    "CleanTests",
    "split_sections",
    "extract_asserts",
]

#: Reason codes carried by :class:`LLMResponseError` (and recorded as ``drop_reason``).
REASONS = {
    "empty": "the answer is empty (or only a reasoning block)",
    "no_json": "no JSON object or list in the answer",
    "invalid_json": "JSON-like text that no repair could parse",
    "wrong_shape": "JSON of the wrong shape (e.g. a list where an object was asked)",
    "missing_question": "no usable problem statement",
    "no_tests": "no usable assert test",
    "missing_section": "a required [Section] is absent or empty",
    "syntax_error": "a code section is not valid Python",
}

_LIST_MARKER = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)]|test\s*\d+\s*[:.)-])\s+", re.IGNORECASE)
_JSON_ESCAPES = set('"\\/bfnrtu')


def strip_fences(text: str, *, prefer: Sequence[str] = ("python", "py", "")) -> str:
    """The body of the best code fence (first with a preferred language, else the longest), or the text itself.

    Example:
        >>> strip_fences("Here:\\n```python\\ndef f():\\n    return 1\\n```\\nDone.")
        'def f():\\n    return 1'
    """
    blocks = fenced_blocks(text)
    if not blocks:
        return text.strip()
    for language in prefer:
        for lang, body in blocks:
            if lang == language:
                return body.strip()
    return max(blocks, key=lambda b: len(b[1]))[1].strip()


# -- JSON ----------------------------------------------------------------------------------------------------------


def _normalise(text: str) -> str:
    """Rewrite JSON-ish text into JSON: single-quoted strings, trailing commas, Python literals, bad escapes."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            buf = ['"']
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n:
                    nxt = text[j + 1]
                    buf.append("\\" + nxt if nxt in _JSON_ESCAPES else "\\\\" + nxt)
                    j += 2
                    continue
                buf.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(text[j], text[j]))
                j += 1
            out.append("".join(buf) + '"')
            i = j + 1
        elif ch == "'":
            j = i + 1
            buf = []
            while j < n and text[j] != "'":
                if text[j] == "\\" and j + 1 < n:
                    buf.append(text[j + 1] if text[j + 1] == "'" else text[j : j + 2])
                    j += 2
                    continue
                buf.append(text[j])
                j += 1
            raw = "".join(buf)
            try:
                value = ast.literal_eval("'" + raw.replace("'", "\\'") + "'")
            except (SyntaxError, ValueError):
                value = raw
            out.append(json.dumps(value, ensure_ascii=False))
            i = j + 1
        elif ch == ",":
            k = i + 1
            while k < n and text[k].isspace():
                k += 1
            if k < n and text[k] in "}]":
                i += 1  # trailing comma
                continue
            out.append(ch)
            i += 1
        elif ch.isalpha():
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            out.append({"True": "true", "False": "false", "None": "null"}.get(word, word))
            i = j
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def repair_json(text: str) -> str:
    """Close a JSON value cut off mid-way: drop the partial last element and close the open brackets.

    ``text`` must start at the opening ``{`` or ``[``. A complete value is returned up to its closing bracket.

    Example:
        >>> repair_json('{"question": "q", "tests": ["assert f(1) == 1", "assert f(2) =')
        '{"question": "q", "tests": ["assert f(1) == 1"]}'
    """
    return _repair(text)[0]


def _repair(text: str) -> tuple[str, bool]:
    """:func:`repair_json`'s result and whether the value closed by itself (``False``: brackets were made up)."""
    stack: list[str] = []
    in_string = escaped = False
    cut: tuple[int, tuple[str, ...]] | None = None
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if stack:
                stack.pop()
            if not stack:
                return text[: i + 1], True
        elif ch == ",":
            cut = (i, tuple(stack))
    if cut is not None:
        return text[: cut[0]] + "".join(reversed(cut[1])), False
    closing = "".join(reversed(stack))
    return text + ('"' if in_string else "") + closing, False


_UNPARSED = object()


def _json_or_literal(texts: Sequence[str], literal: str) -> Any:
    """The first of ``texts`` that parses as JSON, else ``literal`` read as a Python literal; ``_UNPARSED`` when
    neither parses."""
    for text in texts:
        try:
            return json.loads(text, strict=False)
        except ValueError:
            pass
    try:
        return ast.literal_eval(literal)
    except (SyntaxError, ValueError, MemoryError, RecursionError, TypeError):
        return _UNPARSED


def _loads(candidate: str) -> tuple[Any, bool]:
    """Parse JSON-ish text that starts at a bracket; returns the value and whether it was complete (not cut off)."""
    attempts = (candidate, _normalise(candidate))
    value = _json_or_literal(attempts, candidate)
    if value is not _UNPARSED:
        return value, True
    for attempt in attempts[::-1]:
        start = next((i for i, c in enumerate(attempt) if c in "{["), None)
        if start is None:
            continue
        fixed, complete = _repair(attempt[start:])
        value = _json_or_literal((fixed, _normalise(fixed)), fixed)
        if value is not _UNPARSED:
            return value, complete
    raise ValueError("unparseable")


def _json_starts(text: str, kinds: str) -> list[int]:
    return [i for i, c in enumerate(text) if c in kinds]


def _is_placeholder(value: Any) -> bool:
    """Whether a parsed value holds ``...`` (a format example echoed from the prompt, ``{"tests": [...]}``)."""
    if value is Ellipsis:
        return True
    if isinstance(value, dict):
        return any(_is_placeholder(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_is_placeholder(v) for v in value)
    return False


def extract_json(text: str, *, expect: type = dict, keys: Sequence[str] | None = None) -> Any:
    """Find and parse the JSON value (an object by default) in a model answer.

    Looks in each fenced block, then in the whole answer, at every ``{`` (or ``[``): each first as strict JSON,
    then normalised (single quotes, trailing commas, Python literals, bad escapes), then as a Python literal, then
    repaired if truncated. A value that closes by itself beats one whose end was made up, so a fence cut short by
    another fence inside a JSON string (a problem statement with a code example) does not win over the whole value.

    Args:
        text (`str`): the raw model answer.
        expect (`type`, defaults to `dict`): ``dict`` or ``list``; values of the other kind are skipped.
        keys (`Sequence[str]`, *optional*): for objects, the keys an answer is expected to have (any one, any case).
            Objects holding one are preferred; among complete ones, those with the most of the keys, and of those the
            last (models write a draft or echo the requested format before the final answer). Format echoes holding
            ``...`` come last.

    Raises:
        LLMResponseError: reason ``empty``, ``no_json`` (nothing JSON-like) or ``invalid_json`` (found, unparseable).

    Example:
        >>> extract_json('The answer is {"tests": ["assert g() == 0",]} as requested.')
        {'tests': ['assert g() == 0']}
        >>> extract_json('["assert h(1)"]', expect=list)
        ['assert h(1)']
        >>> extract_json('Format: {"tests": [...]}. Draft {"tests": ["x"]}, final {"tests": ["y"]}', keys=["tests"])
        {'tests': ['y']}
    """
    body = strip_thinking(text or "")
    if not body:
        raise LLMResponseError("the answer is empty", reason="empty")
    opener = "{" if expect is dict else "["
    candidates = [b for lang, b in fenced_blocks(body) if lang in ("json", "", "javascript", "python", "py")]
    candidates.append(body)
    wanted = {k.lower() for k in keys} if keys else None
    # rank: 0 complete with a wanted key, 1 cut off with one, 2 complete without, 3 cut off without, 4 placeholder
    best: dict[int, Any] = {}
    best_matched = 0
    seen_json_like = False
    for candidate in candidates:
        candidate = candidate.strip()
        starts = _json_starts(candidate, opener)
        if not starts:
            continue
        seen_json_like = True
        for start in starts[:20]:
            try:
                value, complete = _loads(candidate[start:])
            except ValueError:
                continue
            if not isinstance(value, expect):
                continue
            if _is_placeholder(value):
                best.setdefault(4, value)
                continue
            matched = len({str(k).lower() for k in value} & wanted) if wanted and isinstance(value, dict) else 0
            keyed = wanted is None or matched > 0
            rank = (0 if complete else 1) if keyed else (2 if complete else 3)
            if rank == 0 and wanted is None:
                return value  # no preference asked: the first complete value, as found
            if rank == 0:
                # the last complete answer with the most asked keys (an outer object beats the items it holds)
                if matched >= best_matched:
                    best[0], best_matched = value, matched
            else:
                best.setdefault(rank, value)
    if best:
        return best[min(best)]
    if not seen_json_like:
        raise LLMResponseError(f"no JSON {expect.__name__} in the answer", reason="no_json")
    raise LLMResponseError(f"found JSON-like text but could not parse a {expect.__name__}", reason="invalid_json")


# -- tests ---------------------------------------------------------------------------------------------------------


@dataclass
class CleanTests:
    """Result of :func:`clean_tests`.

    Args:
        tests (`list[str]`): usable, de-duplicated, syntactically valid assert tests.
        dropped (`dict[str, int]`): count of discarded items by reason (``syntax_error``, ``not_assert``,
            ``duplicate``, ``empty``).
    """

    tests: list[str] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)

    def drop(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1


def _split_statements(source: str) -> list[str] | None:
    """Top-level statements of ``source`` as source strings, or ``None`` if it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    return [ast.get_source_segment(source, node) or "" for node in tree.body]


def _as_assert(item: str) -> tuple[list[str], str | None]:
    """Turn one test item into assert statements; return (tests, drop_reason)."""
    text = strip_fences(item)
    text = text.strip().strip("`").strip()
    if not text:
        return [], "empty"
    text = _LIST_MARKER.sub("", text, count=1) if not text.startswith("assert") else text
    statements = _split_statements(text)
    if statements is None:
        # a lone assert with a trailing comment or semicolon chain that broke parsing: try line by line
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        if len(lines) > 1:
            out = [ln for ln in lines if ln.startswith("assert") and _split_statements(ln) is not None]
            return (out, None) if out else ([], "syntax_error")
        return [], "syntax_error"
    if not statements:
        return [], "empty"
    try:
        nodes = ast.parse(text).body
    except SyntaxError:  # pragma: no cover - parsed above
        return [], "syntax_error"
    if all(isinstance(node, ast.Assert) for node in nodes):
        return statements, None  # one or several independent asserts
    if len(nodes) == 1 and isinstance(nodes[0], ast.Expr) and isinstance(nodes[0].value, ast.Compare):
        return ["assert " + statements[0]], None  # a bare comparison: f(1) == 2
    if any(isinstance(node, ast.Assert) for node in ast.walk(ast.Module(body=nodes, type_ignores=[]))) and not any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for node in nodes
    ):
        return [text], None  # setup statements followed by an assert: keep as one self-contained test
    return [], "not_assert"


def clean_tests(items: Any) -> CleanTests:
    """Normalise a model's test list into independent, valid ``assert`` statements.

    Accepts a list of strings, a single string holding several asserts (one per line, or a code block), or a list
    of ``{"test": ...}``/``{"assert": ...}`` objects. Bare comparisons become asserts; numbering, bullets and fences
    are stripped; items holding several asserts are split; syntax errors, non-tests and duplicates are dropped and
    counted.

    Args:
        items (`list | str`): the ``tests`` value from the model.

    Example:
        >>> clean_tests("assert f(1) == 1\\nassert f(2) == 4\\nprint('hi')").tests
        ['assert f(1) == 1', 'assert f(2) == 4']
        >>> r = clean_tests(["1. f(3) == 9", "assert f(1) == 1", "assert f(1) == 1", "assert f(("])
        >>> r.tests, r.dropped
        (['assert f(3) == 9', 'assert f(1) == 1'], {'duplicate': 1, 'syntax_error': 1})
    """
    result = CleanTests()
    if isinstance(items, str):
        items = _string_to_items(items)
    elif isinstance(items, dict):
        items = list(items.values())
    elif not isinstance(items, Iterable):
        items = [items]
    seen: set[str] = set()
    for item in items:
        if isinstance(item, dict):
            item = next((v for k, v in item.items() if k.lower() in ("test", "assert", "code", "assertion")), None)
        if not isinstance(item, str):
            result.drop("not_assert" if item is not None else "empty")
            continue
        tests, reason = _as_assert(item)
        if reason is not None:
            result.drop(reason)
        for test in tests:
            key = " ".join(test.split())
            if key in seen:
                result.drop("duplicate")
                continue
            seen.add(key)
            result.tests.append(test)
    return result


def _string_to_items(text: str) -> list[str]:
    """Split a test list given as one string (JSON list text, code block, or lines) into items."""
    stripped = strip_thinking(text)
    if stripped.lstrip().startswith("["):
        try:
            value = extract_json(stripped, expect=list)
            return [str(v) for v in value]
        except LLMResponseError:
            pass
    body = strip_fences(stripped)
    statements = _split_statements(body)
    if statements is not None:
        return statements
    return [line for line in body.splitlines() if line.strip()]


def extract_asserts(text: str) -> list[str]:
    """Every valid top-level ``assert`` in free text or code fences, for answers that ignored the JSON format.

    Example:
        >>> extract_asserts("Tests:\\n```python\\nassert f(1) == 1\\nassert f(2) == 2\\n```")
        ['assert f(1) == 1', 'assert f(2) == 2']
    """
    body = strip_thinking(text or "")
    sources = [b for _, b in fenced_blocks(body)] or [body]
    found: list[str] = []
    for source in sources:
        statements = _split_statements(source)
        if statements is not None:
            found.extend(s for s in statements if s.startswith("assert"))
            continue
        for line in source.splitlines():
            line = _LIST_MARKER.sub("", line.strip(), count=1).strip("`").strip()
            if line.startswith("assert") and _split_statements(line) is not None:
                found.append(line)
    return found


# -- sections ------------------------------------------------------------------------------------------------------


def split_sections(text: str, names: Sequence[str]) -> dict[str, str]:
    """Split an answer into ``[Name]`` sections, tolerant of case, bold, heading marks and trailing colons.

    ``[Problem Description]``, ``**[problem description]**``, ``## Problem Description:`` and
    ``[PROBLEM DESCRIPTION]:`` all open the same section. Only the given names are recognised; text before the
    first marker is ignored. A name that appears twice keeps its last occurrence.

    Args:
        text (`str`): the raw answer.
        names (`Sequence[str]`): section names, e.g. ``["Problem Description", "Test", "Solution"]``.

    Example:
        >>> split_sections("**[test]**\\nassert 1\\n## Solution:\\nx = 1", ["Test", "Solution"])
        {'Test': 'assert 1', 'Solution': 'x = 1'}
    """
    body = strip_thinking(text or "")
    alternatives = "|".join(re.escape(n).replace(r"\ ", r"[ _]+") for n in sorted(names, key=len, reverse=True))
    marker = re.compile(
        r"^[ \t>#*_]*(?:\[\s*(?P<a>%s)\s*\]|(?P<b>%s))[ \t*_]*:?[ \t*_]*$" % (alternatives, alternatives),
        re.IGNORECASE | re.MULTILINE,
    )
    canonical = {re.sub(r"[ _]+", " ", n.lower()): n for n in names}
    hits = list(marker.finditer(body))
    sections: dict[str, str] = {}
    for k, hit in enumerate(hits):
        raw = hit.group("a") or hit.group("b")
        name = canonical[re.sub(r"[ _]+", " ", raw.lower())]
        end = hits[k + 1].start() if k + 1 < len(hits) else len(body)
        sections[name] = body[hit.end() : end].strip()
    return sections
