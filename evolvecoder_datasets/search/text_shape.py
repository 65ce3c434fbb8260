"""The shape of a stdin/stdout problem's input text: lines, tokens, and the counts that tie them together.

Contest inputs follow a handful of layouts: fixed lines (``n k``), a line of ``n`` values, ``m`` lines of the same
kind (edges, queries), a line that starts with its own length, ``t`` test cases of one layout, a word whose length a
number states. :func:`infer_shape` reads a layout that every seed input of a problem parses under, and per *slot* (a
position of the layout: one token of a fixed line, every element of a row, one column of a block) what the seeds show:
the kind (integer, decimal, word), the range, a word's alphabet and length, whether the values are distinct or
sorted, whether an index stays within a number of the header. :func:`check` reads an input text against a shape and
says which rule it breaks (``None``: valid); :func:`parse` and :func:`render` turn a text into editable values and
back, writing every count from the length of what it counts, so an edit never leaves ``n`` wrong.

This module is the **input validator** of problems that ship none: it imports only the standard library, and its
own source is the body of the validator program that runs in the sandbox
(:func:`~evolvecoder_datasets.search.text_inputs.validator_program`), so the caller never parses hostile text. The
shape is conservative: never wider than the seeds show, except where the statement states a bound
(:func:`~evolvecoder_datasets.search.text_inputs.statement_bounds`).

Example:
    >>> from evolvecoder_datasets.search.text_shape import check, infer_shape
    >>> shape = infer_shape(["3\\n1 2 3\\n", "2\\n5 4\\n"])
    >>> [segment["t"] for segment in shape["layout"]]
    ['fixed', 'row']
    >>> check(shape, "2\\n3 1\\n"), check(shape, "3\\n1 2\\n"), check(shape, "2\\n1 x\\n"), check(shape, "4\\n1 1 1 1\\n")
    (None, 'layout', 'kind', 'range')
"""

from __future__ import annotations

import re

_INT = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"-?[0-9]+\.[0-9]+\Z")
_CLASSES = ("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789")
_MAX_BODY_LINES = 8


def _kind(token):
    return "i" if _INT.match(token) else "f" if _FLOAT.match(token) else "w"


def lines_of(text):
    """The input's lines as token lists (``None`` for text that is not plain lines of tokens)."""
    if not isinstance(text, str) or "\r" in text or "\t" in text or "\x00" in text:
        return None
    body = text.removesuffix("\n")
    return [line.split(" ") if line else [] for line in body.split("\n")] if body else []


# -- layouts ---------------------------------------------------------------------------------------------------------
def _ints_before(segments, values, level_lines):
    """The integer tokens of fixed segments so far, latest first: ``(segment, token, value)``."""
    found = []
    for s in range(len(segments) - 1, -1, -1):
        if segments[s]["t"] == "fixed":
            for t in range(len(values[s]) - 1, -1, -1):
                if _kind(values[s][t]) == "i" and len(values[s][t]) < 7:
                    found.append((s, t, int(values[s][t])))
    return found


def _infer_level(lines, order):
    """One layout that reads ``lines`` whole, choosing at each line by ``order`` (``"row"`` or ``"block"`` first)."""
    segments, values, i = [], [], 0
    while i < len(lines):
        toks = lines[i]
        counts = _ints_before(segments, values, lines)
        same = len(toks) >= 1 and len({_kind(x) for x in toks}) == 1
        row = next(((s, t) for s, t, v in counts if same and v == len(toks) and v >= 1), None)
        block = None
        for s, t, v in counts:
            if v >= 1 and i + v <= len(lines) and len(toks) >= 1 and all(
                    [_kind(x) for x in lines[j]] == [_kind(x) for x in toks] for j in range(i, i + v)):
                block = (s, t, v)
                break
        tail = (len(toks) >= 2 and _kind(toks[0]) == "i" and len(toks[0]) < 7 and int(toks[0]) == len(toks) - 1
                and len({_kind(x) for x in toks[1:]}) == 1)
        choices = [("row", row), ("block", block)] if order == "row" else [("block", block), ("row", row)]
        chosen = next(((name, c) for name, c in choices if c is not None), None)
        if chosen and chosen[0] == "row":
            segments.append({"t": "row", "count": [chosen[1][0], chosen[1][1]], "kind": _kind(toks[0])})
            values.append(list(toks))
            i += 1
        elif chosen:
            s, t, v = chosen[1]
            segments.append({"t": "block", "count": [s, t], "kinds": [_kind(x) for x in toks]})
            values.append([list(lines[j]) for j in range(i, i + v)])
            i += v
        elif tail:
            segments.append({"t": "tail", "kind": _kind(toks[1])})
            values.append(list(toks[1:]))
            i += 1
        else:
            segments.append({"t": "fixed", "kinds": [_kind(x) for x in toks]})
            values.append(list(toks))
            i += 1
    return segments


def _count(layout, seg, out):
    """The number a segment's count slot holds (``None`` when it holds no usable count)."""
    s, t = seg["count"]
    if layout[s]["t"] != "fixed" or t >= len(out[s]) or not _INT.match(out[s][t]):
        return None
    n = int(out[s][t])
    return n if 0 <= n <= 10 ** 6 else None


def _read_level(layout, lines, i, out, loose=False, last=False):
    """Read ``layout`` from ``lines[i:]`` into ``out`` (one value per segment); the index after it, or ``None``.

    ``loose`` (what :func:`repair` reads with): a row or a line led by its length is read whole whatever its count
    says, and where nothing follows the level (``last``) its last block or list of test cases runs to the end."""
    for k, seg in enumerate(layout):
        kind = seg["t"]
        to_end = loose and last and k == len(layout) - 1 and kind in ("block", "repeat")
        n = 0
        if (kind in ("block", "repeat") and not to_end) or (kind == "row" and not loose):
            n = _count(layout, seg, out)
            if n is None:
                return None
        if kind in ("fixed", "row", "tail"):
            if i >= len(lines) or (kind == "fixed" and len(lines[i]) != len(seg["kinds"])):
                return None
            line = lines[i]
            if not loose and kind == "row" and len(line) != n:
                return None
            if not loose and kind == "tail" and (not line or not _INT.match(line[0]) or int(line[0]) != len(line) - 1):
                return None
            out.append(list(line[1:] if kind == "tail" else line))
            i += 1
        elif kind == "block":
            n = len(lines) - i if to_end else n
            if i + n > len(lines) or any(len(lines[j]) != len(seg["kinds"]) for j in range(i, i + n)):
                return None
            out.append([list(lines[j]) for j in range(i, i + n)])
            i += n
        else:  # repeat
            cases = []
            while (i < len(lines)) if to_end else (len(cases) < n):
                case = []
                i = _read_level(seg["body"], lines, i, case, loose)
                if i is None:
                    return None
                cases.append(case)
            out.append(cases)
    return i


def parse(shape, text):
    """``text`` as one value per segment of the shape's layout (``None`` when its layout does not read it).

    Example:
        >>> parse({"layout": [{"t": "fixed", "kinds": ["i"]}, {"t": "row", "count": [0, 0], "kind": "i"}]},
        ...       "2\\n7 8\\n")
        [['2'], ['7', '8']]
    """
    lines = lines_of(text)
    if lines is None:
        return None
    out = []
    end = _read_level(shape["layout"], lines, 0, out)
    return out if end == len(lines) else None


def _recount(layout, values):
    """Write every count from the length of what it counts (``False`` where two segments disagree on one)."""
    said = {}
    for k, seg in enumerate(layout):
        if seg["t"] in ("row", "block", "repeat"):
            s, t = seg["count"]
            n = len(values[k])
            if said.setdefault((s, t), n) != n:
                return False
            values[s][t] = str(n)
        if seg["t"] == "repeat":
            for case in values[k]:
                if not _recount(seg["body"], case):
                    return False
    return True


def _render_level(layout, values, out):
    for seg, value in zip(layout, values):
        if seg["t"] in ("fixed", "row"):
            out.append(" ".join(value))
        elif seg["t"] == "tail":
            out.append(" ".join([str(len(value))] + list(value)))
        elif seg["t"] == "block":
            out.extend(" ".join(line) for line in value)
        else:
            for case in value:
                _render_level(seg["body"], case, out)


def render(shape, values):
    """The text of parsed ``values`` with every count recomputed (``None`` where two lengths disagree on one count).

    Example:
        >>> layout = [{"t": "fixed", "kinds": ["i"]}, {"t": "row", "count": [0, 0], "kind": "i"}]
        >>> render({"layout": layout}, [["2"], ["7", "8", "9"]])
        '3\\n7 8 9\\n'
    """
    values = _copy(values)
    if not _recount(shape["layout"], values):
        return None
    out = []
    _render_level(shape["layout"], values, out)
    return "\n".join(out) + "\n"


def _copy(values):
    return [_copy(v) if isinstance(v, list) else v for v in values]


# -- repair: a proposed text's counts written from what follows them ---------------------------------------------------
def _loose_lines(text):
    """Lines of whitespace-separated tokens, blank lines at the end dropped (``None`` for what is not text)."""
    if not isinstance(text, str) or "\x00" in text:
        return None
    lines = [line.split() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def repair(shape, text):
    """``text`` read under the shape's layout with its counts ignored and written again from the length of what
    they count (the line of ``n`` values holds however many values follow; a last block or list of test cases
    runs to the end); ``None`` where the layout still does not read it. Nothing else changes: values out of range
    stay for :func:`check` to refuse.

    Example:
        >>> shape = {"layout": [{"t": "fixed", "kinds": ["i", "i"]}, {"t": "row", "count": [0, 0], "kind": "i"}]}
        >>> repair(shape, "2 1\\n3 4 5 6"), repair(shape, "7")
        ('4 1\\n3 4 5 6\\n', None)
    """
    lines = _loose_lines(text)
    if lines is None:
        return None
    values = []
    end = _read_level(shape["layout"], lines, 0, values, loose=True, last=True)
    return render(shape, values) if end == len(lines) else None


def _layouts(lines):
    found = []
    for order in ("row", "block"):
        layout = _infer_level(lines, order)
        if layout not in found:
            found.append(layout)
    # t test cases of one layout: the first line is t alone, the rest t bodies
    if len(lines) >= 2 and len(lines[0]) == 1 and _INT.match(lines[0][0]) and int(lines[0][0]) >= 1:
        t = int(lines[0][0])
        for k in range(1, min(_MAX_BODY_LINES, len(lines) - 1) + 1):
            for order in ("row", "block"):
                body = _infer_level(lines[1:1 + k], order)
                layout = [{"t": "fixed", "kinds": ["i"]}, {"t": "repeat", "count": [0, 0], "body": body}]
                if t >= 1 and layout not in found and _read_level(layout, lines, 0, []) == len(lines):
                    found.append(layout)
    return found


def _relations(layout):
    n = 0
    for seg in layout:
        n += seg["t"] != "fixed"
        if seg["t"] == "repeat":
            n += _relations(seg["body"])
    return n


# -- what each slot holds --------------------------------------------------------------------------------------------
def _slots(layout, values, prefix, out, headers):
    """Every token of ``values`` with its slot name, and the header integers it may be bounded by."""
    for k, (seg, value) in enumerate(zip(layout, values)):
        name = f"{prefix}{k}"
        if seg["t"] == "fixed":
            for t, token in enumerate(value):
                out.setdefault(f"{name}.{t}", []).append(([token], headers))
        elif seg["t"] in ("row", "tail"):
            out.setdefault(name, []).append((list(value), headers))
        elif seg["t"] == "block":
            for t in range(len(seg["kinds"])):
                out.setdefault(f"{name}.{t}", []).append(([line[t] for line in value], headers))
            out.setdefault(f"{name}.rows", []).append(([" ".join(line) for line in value], headers))
            out.setdefault(f"{name}.pairs", []).append((value, headers))
        else:
            inner = {**headers, **_level_headers(layout, values, prefix)}
            for case in value:
                _slots(seg["body"], case, f"{name}/", out, inner)
        if seg["t"] == "fixed":
            headers = {**headers, **_line_headers(name, value)}


def _level_headers(layout, values, prefix):
    """Every integer of a level's fixed lines by slot name: what the cases of a repeat in that level may refer to."""
    return {f"{prefix}{s}.{t}": int(tok) for s, sg in enumerate(layout) if sg["t"] == "fixed"
            for t, tok in enumerate(values[s]) if _INT.match(tok)}


def _line_headers(name, value):
    """The integers of fixed line ``name``: what the segments after it may refer to (an index, a width)."""
    return {f"{name}.{t}": int(tok) for t, tok in enumerate(value) if _INT.match(tok) and len(tok) < 19}


def _word_rule(tokens):
    chars = set("".join(tokens))
    allowed = "".join(c for c in _CLASSES if chars & set(c))
    allowed += "".join(sorted(chars - set(allowed)))
    return {"chars": allowed, "len": [min(map(len, tokens)), max(map(len, tokens))]}


def _slot_rule(instances, kind, bounds, rules=("distinct", "sorted", "index")):
    every = [tok for tokens, _ in instances for tok in tokens]
    rule = {"kind": kind}
    if kind == "w":
        rule.update(_word_rule(every) if every else {"chars": "", "len": [0, 0]})
        # a word as long as a header number in every instance (the rows of an n x m grid, a string of length n)
        names = set.intersection(*[set(h) for tokens, h in instances if tokens]) if every else set()
        for name in sorted(names):
            if all(len(tok) == h[name] for tokens, h in instances for tok in tokens):
                rule["width"] = name
                break
    elif every:
        nums = [int(x) if kind == "i" else float(x) for x in every]
        lo, hi = min(nums), max(nums)
        rule["range"] = _widened(lo, hi, bounds, kind)
        if kind == "f":
            rule["decimals"] = max(len(x.split(".")[1]) for x in every if "." in x) if any("." in x for x in every) else 0
        # an index bounded by a header number in every instance (a town <= n)
        if kind == "i" and lo >= 0 and "index" in rules:
            names = set.intersection(*[set(h) for _, h in instances]) if instances else set()
            for name in sorted(names):
                # bounded by it, and of its order (a town <= n, not a value <= some unrelated 10^9)
                if all(max(map(int, tokens)) <= h[name] < max(map(int, tokens)) * 4 + 4
                       for tokens, h in instances if tokens):
                    rule["le"] = name
                    break
    sizes = [len(tokens) for tokens, _ in instances]
    if max(sizes, default=0) >= 3:
        if "distinct" in rules and all(len(set(tokens)) == len(tokens) for tokens, _ in instances):
            rule["distinct"] = True
        if "sorted" in rules and kind in ("i", "f") and all(_sorted(tokens, kind) for tokens, _ in instances):
            rule["sorted"] = True
    return rule


def _sorted(tokens, kind):
    nums = [int(x) if kind == "i" else float(x) for x in tokens]
    return all(a <= b for a, b in zip(nums, nums[1:]))


def _widened(lo, hi, bounds, kind):
    """The tightest stated bound that holds every seed value; without one, what the seeds show (a non-negative slot
    stays non-negative, a positive one positive)."""
    fits = [b for b in bounds or () if b[0] <= lo and hi <= b[1]]
    if fits:
        best = min(fits, key=lambda b: b[1] - b[0])
        return [best[0], best[1]]
    return [lo, hi]


def infer_shape(inputs, bounds=(), max_chars=4096, rules=("distinct", "pairs", "sorted", "index", "order")):
    """The layout every input of ``inputs`` reads under, and per slot what they show (``None`` without one).

    Args:
        inputs: the problem's own inputs (its seeds).
        bounds: ``(low, high)`` pairs the statement states (:func:`~.text_inputs.statement_bounds`): a numeric slot
            may take the tightest of them that holds all its seed values; without one, only the seeds' range.
        max_chars: the longest input the shape admits.
        rules: which shapes every seed shares become rules (``distinct`` values or rows, ``pairs`` of columns
            never equal, ``sorted`` values, ``index``: values never past a header number, ``order``: a column never
            above another, as ``l <= r``); :func:`~.text_inputs.statement_rules` keeps those the statement states.

    Example:
        >>> shape = infer_shape(["3 2\\n1 2\\n2 3\\n"], bounds=[(1, 100)])
        >>> shape["layout"][1]["t"], shape["slots"]["1.0"]["range"], shape["slots"]["1.0"].get("le")
        ('block', [1, 100], '0.0')
    """
    parsed_lines = [lines_of(text) for text in inputs]
    if not parsed_lines or any(lines is None or not lines for lines in parsed_lines):
        return None
    candidates = []
    for lines in parsed_lines:
        for layout in _layouts(lines):
            if layout not in candidates:
                candidates.append(layout)
    readable = [layout for layout in candidates
                if all(_read_level(layout, lines, 0, []) == len(lines) for lines in parsed_lines)]
    if not readable:
        return None
    # the fewest segments (a block over a run of rows), then the most counts explained; the first seed's on a tie
    layout = min(readable, key=lambda lay: (len(lay), -_relations(lay)))
    values = []
    for lines in parsed_lines:
        out = []
        _read_level(layout, lines, 0, out)
        values.append(out)
    instances = {}
    for value in values:
        _slots(layout, value, "", instances, {})
    slots = {}
    for name, found in instances.items():
        if name.endswith(".pairs"):  # two integer columns no seed line sets equal (u != v), or in order (l <= r)
            lines = [line for block, _ in found for line in block]
            width = min((len(line) for line in lines), default=0)
            ints = [c for c in range(width) if all(_INT.match(x[c]) for x in lines)]
            pairs = [(a, b) for a in ints for b in ints if a != b] if len(lines) >= 3 else []
            differ = [[a, b] for a, b in pairs if a < b and "pairs" in rules and all(x[a] != x[b] for x in lines)]
            order = [[a, b] for a, b in pairs if "order" in rules and all(int(x[a]) <= int(x[b]) for x in lines)]
            if differ or order:
                slots[name] = {"kind": "pairs", "differ": differ, "order": order}
            continue
        if name.endswith(".rows"):
            if "distinct" in rules and max((len(t) for t, _ in found), default=0) >= 3 and all(
                    len(set(t)) == len(t) for t, _ in found):
                slots[name] = {"kind": "rows", "distinct": True}
            continue
        kinds = {_kind(tok) for tokens, _ in found for tok in tokens}
        kind = "i" if kinds <= {"i"} else "f" if kinds <= {"i", "f"} else "w"
        slots[name] = _slot_rule(found, kind, bounds, rules)
    return {"layout": layout, "slots": slots, "max_chars": int(max_chars),
            "max_lines": max(len(lines) for lines in parsed_lines) * 64 + 64}


# -- checking an input -----------------------------------------------------------------------------------------------
def _token_rule(rule, token):
    kind = rule.get("kind")
    if kind == "i":
        if not _INT.match(token) or len(token) > 40:
            return "kind"
        value = int(token)
    elif kind == "f":
        if not (_FLOAT.match(token) or _INT.match(token)) or len(token) > 40:
            return "kind"
        if "." in token and len(token.split(".")[1]) > max(rule.get("decimals", 0), 1):
            return "kind"
        value = float(token)
    else:
        if not token or any(c not in rule.get("chars", "") for c in token):
            return "charset"
        if "width" in rule:  # its length is a header number's, checked against it
            return None
        low, high = rule.get("len", [1, 1])
        return None if low <= len(token) <= high else "length"
    low, high = rule.get("range", [value, value])
    return None if low <= value <= high else "range"


def check(shape, text):
    """The rule ``text`` breaks (``"size"``, ``"layout"``, ``"kind"``, ``"range"``, ``"charset"``, ``"length"``
    (also a word whose length is not the header number it always equals, as a grid row and its ``m``),
    ``"distinct"``, ``"sorted"``, ``"index"``), or ``None`` when the shape admits it.

    Example:
        >>> shape = infer_shape(["3\\n1 3 2\\n", "2\\n5 5\\n"], bounds=[(1, 10)])
        >>> check(shape, "2\\n10 1\\n"), check(shape, "1\\n11\\n"), check(shape, "2\\n1\\n")
        (None, 'range', 'layout')
    """
    if not isinstance(text, str) or len(text) > shape.get("max_chars", 4096) or text.count("\n") > shape["max_lines"]:
        return "size"
    values = parse(shape, text)
    if values is None:
        return "layout"
    instances = {}
    _slots(shape["layout"], values, "", instances, {})
    for name, found in instances.items():
        rule = shape["slots"].get(name)
        if rule is None:
            continue
        for tokens, headers in found:
            if rule.get("kind") == "pairs":
                if any(line[a] == line[b] for line in tokens for a, b in rule.get("differ", ()) if max(a, b) < len(line)):
                    return "distinct"
                if any(max(a, b) < len(line) and _INT.match(line[a]) and _INT.match(line[b])
                       and int(line[a]) > int(line[b]) for line in tokens for a, b in rule.get("order", ())):
                    return "sorted"
                continue
            if rule.get("kind") == "rows":
                if rule.get("distinct") and len(set(tokens)) != len(tokens):
                    return "distinct"
                continue
            for token in tokens:
                broken = _token_rule(rule, token)
                if broken:
                    return broken
            if rule.get("distinct") and len(set(tokens)) != len(tokens):
                return "distinct"
            if rule.get("sorted") and not _sorted(tokens, rule["kind"]):
                return "sorted"
            bound = rule.get("le")
            if bound is not None and tokens and (bound not in headers or max(map(int, tokens)) > headers[bound]):
                return "index"
            width = rule.get("width")
            if width is not None and any(len(token) != headers.get(width) for token in tokens):
                return "length"
    return None
