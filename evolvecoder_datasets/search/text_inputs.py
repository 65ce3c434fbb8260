"""New stdin inputs for a stdin/stdout problem: mutations of its seed inputs that keep their layout, and the
validator that admits only inputs of the problem's shape.

:class:`TextMutator` edits the parsed seeds (:mod:`.text_shape`) the way contest tests differ from samples: a number
at a bound of its slot or next to it, a row or block resized (to one element, to none where the count allows it,
doubled, to the most the size cap allows) with its count rewritten, elements sorted, reversed, all equal or at the
extreme, a word shortened, repeated or reversed, a test case duplicated; each candidate is checked against the shape
before it is offered, and the inputs kept so far become parents too. Numbers come from the slot's range, which is the
tightest bound the statement states (:func:`statement_bounds`) that holds every seed value, or only what the seeds
show; so every edit stays inside the problem.

:func:`validator_program` is the shape's checker as a Python program under the testlib validator contract (read the
input on stdin, exit 0 printing nothing when it is valid): it runs in the sandbox like any other program, so an input
a model wrote is never parsed in the caller.

Example:
    >>> import random
    >>> from evolvecoder_datasets.search.text_inputs import TextMutator, statement_bounds
    >>> from evolvecoder_datasets.search.text_shape import check, infer_shape
    >>> bounds = statement_bounds("The first line holds $n$ ($1 \\\\le n \\\\le 100$), then $n$ values $0 \\\\le a_i \\\\le 9$.")
    >>> bounds
    [(1, 100), (0, 9)]
    >>> shape = infer_shape(["3\\n1 2 3\\n", "2\\n4 0\\n"], bounds)
    >>> texts = TextMutator(shape, ["3\\n1 2 3\\n", "2\\n4 0\\n"], random.Random(0)).draw(20)
    >>> len(texts), all(check(shape, t) is None for t in texts)
    (20, True)
"""

from __future__ import annotations

import inspect
import json
import random
import re
from collections.abc import Sequence
from typing import Any

from . import text_shape
from .text_shape import check, parse, render

__all__ = ["TextMutator", "repair_program", "statement_bounds", "statement_rules", "validator_program"]

_NUMBER = r"10\^-?\d+|-?\d+(?:\.\d+)?(?:\s*\*\s*10\^-?\d+)?"
_REL = r"<=|<"
_NAMES = r"[A-Za-z_][\w']*(?:\s*,\s*[A-Za-z_][\w']*)*"
_CHAIN = re.compile(rf"({_NUMBER})\s*({_REL})\s*(?:{_NAMES})\s*({_REL})\s*({_NUMBER})")
_ABS = re.compile(rf"\|\s*[A-Za-z_][\w']*\s*\|\s*({_REL})\s*({_NUMBER})")
_UPPER = re.compile(rf"(?<![<>=\w\d.|])\s*[A-Za-z_][\w']*(?:\s*,\s*[A-Za-z_][\w']*)*\s*({_REL})\s*({_NUMBER})")


def _number(text: str) -> float:
    text = text.replace(" ", "")
    if "*10^" in text:
        mantissa, power = text.split("*10^")
        value = float(mantissa) * 10 ** int(power)
    elif text.startswith("10^"):
        value = 10.0 ** int(text[3:])
    else:
        value = float(text)
    return int(value) if value == int(value) and abs(value) < 1e18 else value


def _normal(question: str) -> str:
    text = question.replace("$", " ").replace("\\,", "").replace("\\!", "").replace("~", " ")
    for words, sign in ((r"\\leqslant|\\leq|\\le\b|≤|⩽|&le;", "<="), (r"\\geqslant|\\geq|\\ge\b|≥|⩾|&ge;", ">="),
                        (r"\\lt\b|&lt;", "<"), (r"\\gt\b|&gt;", ">"), (r"\\cdot|\\times|·|×", "*")):
        text = re.sub(words, sign, text)
    text = re.sub(r"10\s*\^\s*\{\s*(-?\d+)\s*\}", r"10^\1", text)
    text = re.sub(r"10\s*\^\s*(-?\d+)", r"10^\1", text)
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)  # 100,000
    text = re.sub(r"\\(?:mathrm|text|mathit|operatorname)\{([^}]*)\}", r"\1", text)
    text = re.sub(r"_\{([^}]*)\}", r"_\1", text)
    return text.replace("{", " ").replace("}", " ")


def statement_bounds(question: str) -> list[tuple[Any, Any]]:
    """The ``(low, high)`` bounds a statement states (``1 <= n <= 2 * 10^5``, ``|k| <= 10^9``, LaTeX or plain),
    in the order they appear, each once; a strict ``<`` moves an integer bound by one.

    Example:
        >>> statement_bounds("$1 \\\\le n, m \\\\le 2 \\\\cdot 10^5$, $|a_i| \\\\le 10^{9}$ and 0 < r <= 1000")
        [(1, 200000), (1, 1000), (1e-09, 1000.0), (-1000000000, 1000000000)]
    """
    text = _normal(question or "")
    found: list[tuple[Any, Any]] = []
    for match in _CHAIN.finditer(text):
        low, high = _number(match.group(1)), _number(match.group(4))
        pairs = [(low, high)]
        if match.group(2) == "<" or match.group(3) == "<":  # an integer moves by one, a real by a hair
            pairs = [(low + (match.group(2) == "<"), high - (match.group(3) == "<")),
                     (low + 1e-9 * (match.group(2) == "<"), high - 1e-9 * (match.group(3) == "<"))]
        found += [(a, b) for a, b in pairs if a <= b and (a, b) not in found]
    for match in _ABS.finditer(text):
        high = _number(match.group(2))
        if match.group(1) == "<" and isinstance(high, int):
            high -= 1
        if (-high, high) not in found:
            found.append((-high, high))
    return found


_RULE_WORDS = {
    "distinct": re.compile(r"distinct|different|unique|pairwise|permutation", re.IGNORECASE),
    "pairs": re.compile(r"distinct|different|\\neq?\b|≠|!=|not equal", re.IGNORECASE),
    "sorted": re.compile(r"sorted|increasing|decreasing|ascending|descending|non-?decreasing", re.IGNORECASE),
    # a value never past a header number: a bound by a name (``\le n``), or things numbered from 1 to n
    "index": re.compile(r"(?:\\leq?|≤|<=)\s*[A-Za-z]\b(?!\s*[\\≤<_^(\w])|numbered|index|indices|vertex|vertices|"
                        r"node|town|cit(?:y|ies)|permutation", re.IGNORECASE),
    # one value never above another: a relation between two names (``l \le r``)
    "order": re.compile(r"\b[A-Za-z](?:_\w+)?\s*(?:\\leq?\b|≤|<=|<)\s*[A-Za-z](?:_\w+)?\b"),
}


def statement_rules(question: str) -> tuple[str, ...]:
    """Which of the seeds' shared shapes (``distinct``, ``pairs`` of columns never equal, ``sorted``, ``index``: a
    value never past a number of the header, ``order``: a column never above another) the shape keeps: all of them where the statement states no bound (it says too little to go by), else only those it
    speaks of. A statement that bounds ``a_i`` and never says *distinct* allows equal values, however distinct its
    samples happen to be.

    Example:
        >>> statement_rules("Print n numbers."), statement_rules(r"$1 \\le a_i \\le 10$, pairwise distinct")
        (('distinct', 'pairs', 'sorted', 'index', 'order'), ('distinct', 'pairs'))
    """
    if not statement_bounds(question):
        return tuple(_RULE_WORDS)
    return tuple(rule for rule, words in _RULE_WORDS.items() if words.search(question or ""))


def validator_program(shape: dict[str, Any]) -> str:
    """The shape's checker as a Python program under the testlib validator contract: it reads the input on stdin and
    exits 0 printing nothing when the shape admits it, 1 when not (the rule broken goes to stderr).

    Example:
        >>> from evolvecoder_datasets.execution import Sandbox
        >>> from evolvecoder_datasets.search.text_shape import infer_shape
        >>> program = validator_program(infer_shape(["2\\n1 2\\n", "1\\n5\\n"]))
        >>> with Sandbox(workers=1) as sb:
        ...     sb.run_stdio(program, ["1\\n3\\n", "2\\n1\\n", "1\\n99\\n"], ["", "", ""]).passed
        [True, False, False]
    """
    return (inspect.getsource(text_shape) + "\n\nimport json as _json, sys as _sys\n"
            f"_SHAPE = _json.loads({json.dumps(json.dumps(shape))})\n"
            "try:\n    _TEXT = _sys.stdin.buffer.read(_SHAPE['max_chars'] * 4 + 4).decode('utf-8')\n"
            "except UnicodeDecodeError:\n    _sys.exit(1)\n"
            "_BROKEN = check(_SHAPE, _TEXT)\n"
            "if _BROKEN is not None:\n    _sys.stderr.write('invalid input: ' + _BROKEN + '\\n')\n    _sys.exit(1)\n")


def repair_program(shape: dict[str, Any]) -> str:
    """A program that prints its stdin text with the counts written again from what they count
    (:func:`~.text_shape.repair`), or exits 1 where the shape's layout does not read the text even so. A model's
    text only meets it in the sandbox, run as a valuing job (the report's ``outputs``).

    Example:
        >>> from evolvecoder_datasets.execution import Sandbox
        >>> from evolvecoder_datasets.search.text_shape import infer_shape
        >>> program = repair_program(infer_shape(["2\\n1 2\\n", "1\\n5\\n"]))
        >>> with Sandbox(workers=1) as sb:
        ...     report = sb.value_stdio(program, ["3\\n4 5\\n", "x"])
        >>> report.statuses[0], report.outputs[0]
        ('pass', '2\\n4 5\\n')
    """
    return (inspect.getsource(text_shape) + "\n\nimport json as _json, sys as _sys\n"
            f"_SHAPE = _json.loads({json.dumps(json.dumps(shape))})\n"
            "try:\n    _TEXT = _sys.stdin.buffer.read(_SHAPE['max_chars'] * 4 + 4).decode('utf-8')\n"
            "except UnicodeDecodeError:\n    _sys.exit(1)\n"
            "_FIXED = repair(_SHAPE, _TEXT)\n"
            "if _FIXED is None:\n    _sys.exit(1)\n"
            "_sys.stdout.write(_FIXED)\n")


# -- the mutator -----------------------------------------------------------------------------------------------------
class TextMutator:
    """New inputs of a problem's shape, edited from its seeds and from the inputs kept so far.

    Args:
        shape (`dict`): the problem's shape (:func:`~.text_shape.infer_shape`).
        seeds (`Sequence[str]`): its own inputs (those the shape does not read are left out).
        rng (`random.Random`): the source of every choice.
    """

    def __init__(self, shape: dict[str, Any], seeds: Sequence[str], rng: random.Random) -> None:
        self.shape = shape
        self.rng = rng
        self.parents = [p for p in (parse(shape, s) for s in seeds) if p is not None]
        self.seen = {text for text in seeds}

    def add(self, text: str) -> None:
        """Make a kept input a parent of later candidates."""
        parsed = parse(self.shape, text)
        if parsed is not None:
            self.parents.append(parsed)
        self.seen.add(text)

    def draw(self, k: int, *, tries: int = 20) -> list[str]:
        """Up to ``k`` new inputs the shape admits, none seen before."""
        out: list[str] = []
        for _ in range(k * tries):
            if len(out) >= k or not self.parents:
                break
            values = text_shape._copy(self.rng.choice(self.parents))
            for _ in range(1 if self.rng.random() < 0.6 else self.rng.randint(2, 3)):
                self._edit(self.shape["layout"], values, "", values)
            if not text_shape._recount(self.shape["layout"], values):
                continue
            self._fit(self.shape["layout"], values, "", {})
            text = render(self.shape, values)
            if text is None or text in self.seen or check(self.shape, text) is not None:
                continue
            self.seen.add(text)
            out.append(text)
        return out

    # -- edits -------------------------------------------------------------------------------------------------
    def _fit(self, layout: list[dict], values: list, prefix: str, headers: dict[str, int]) -> None:
        """Give every word whose length is a header number's (a grid row and its ``m``) that length again, after
        edits changed the number or the word: cut, or padded from the word's alphabet (the walk of ``_slots``)."""
        for k, (seg, value) in enumerate(zip(layout, values)):
            name = f"{prefix}{k}"
            if seg["t"] == "fixed":
                value[:] = [self._fitted(f"{name}.{t}", tok, headers) for t, tok in enumerate(value)]
            elif seg["t"] in ("row", "tail"):
                value[:] = [self._fitted(name, tok, headers) for tok in value]
            elif seg["t"] == "block":
                for line in value:
                    line[:] = [self._fitted(f"{name}.{t}", tok, headers) for t, tok in enumerate(line)]
            else:
                inner = {**headers, **text_shape._level_headers(layout, values, prefix)}
                for case in value:
                    self._fit(seg["body"], case, f"{name}/", inner)
            if seg["t"] == "fixed":
                headers = {**headers, **text_shape._line_headers(name, value)}

    def _fitted(self, slot: str, token: str, headers: dict[str, int]) -> str:
        rule = self.shape["slots"].get(slot) or {}
        n = headers.get(rule.get("width"))  # type: ignore[arg-type]
        if n is None or not 0 < n <= self.shape.get("max_chars", 4096):
            return token
        chars = rule.get("chars") or "a"
        return token[:n] + "".join(self.rng.choice(chars) for _ in range(n - len(token)))

    def _places(self, layout: list[dict], values: list, prefix: str) -> list[tuple]:
        counts = {tuple(seg["count"]) for seg in layout if "count" in seg}
        places: list[tuple] = []
        for k, seg in enumerate(layout):
            name = f"{prefix}{k}"
            if seg["t"] == "fixed":
                places += [("token", values[k], t, f"{name}.{t}") for t in range(len(values[k])) if (k, t) not in counts]
            elif seg["t"] in ("row", "tail"):
                places.append(("list", values[k], name, k))
            elif seg["t"] == "block":
                places.append(("block", values[k], name, k))
            else:
                places.append(("repeat", values[k], name, k))
        return places

    def _edit(self, layout: list[dict], values: list, prefix: str, top: list) -> None:
        places = self._places(layout, values, prefix)
        if not places:
            return
        place = self.rng.choice(places)
        kind = place[0]
        if kind == "token":
            _, tokens, t, slot = place
            tokens[t] = self._value(slot, tokens[t], top)
        elif kind == "list":
            _, tokens, slot, k = place
            self._edit_list(layout, values, k, tokens, slot, top)
        elif kind == "block":
            _, lines, name, k = place
            self._edit_block(layout, values, k, lines, name, top)
        else:
            _, cases, name, k = place
            seg = layout[k]
            roll = self.rng.random()
            if cases and roll < 0.3:
                cases.append(text_shape._copy(self.rng.choice(cases)))
            elif len(cases) > 1 and roll < 0.5:
                del cases[self.rng.randrange(len(cases))]
            elif cases:
                case = self.rng.choice(cases)
                self._edit(seg["body"], case, f"{name}/", top)

    def _edit_list(self, layout, values, k, tokens, slot, top) -> None:
        roll = self.rng.random()
        if roll < 0.3 and "count" in layout[k] or roll < 0.3 and layout[k]["t"] == "tail":
            self._resize(layout, values, k, lambda: self._value(slot, self._pick(tokens), top))
        elif roll < 0.5 and tokens:
            self._reorder(tokens)
        elif roll < 0.65 and tokens:
            value = self._value(slot, self._pick(tokens), top)
            tokens[:] = [value] * len(tokens)
        elif tokens:
            i = self.rng.randrange(len(tokens))
            tokens[i] = self._value(slot, tokens[i], top)

    def _edit_block(self, layout, values, k, lines, name, top) -> None:
        roll = self.rng.random()
        if roll < 0.35:
            width = len(layout[k]["kinds"])
            template = self._pick(lines)

            def fresh() -> list[str]:
                if template and self.rng.random() < 0.5:
                    return list(self._pick(lines) or template)
                return [self._value(f"{name}.{c}", template[c] if template else None, top) for c in range(width)]

            self._resize(layout, values, k, fresh)
        elif roll < 0.5 and lines:
            self._reorder(lines)
        elif lines and all(lines):
            line = self.rng.choice(lines)
            c = self.rng.randrange(len(line))
            line[c] = self._value(f"{name}.{c}", line[c], top)
            if self.rng.random() < 0.3:  # the whole column at that value
                for other in lines:
                    other[c] = line[c]

    def _resize(self, layout, values, k, fresh) -> None:
        """Resize segment ``k`` and every segment counted by the same number, keeping them the same length."""
        seg = layout[k]
        n = len(values[k])
        count = tuple(seg["count"]) if "count" in seg else None
        rule = self.shape["slots"].get(f"{count[0]}.{count[1]}", {}) if count else {}
        low, high = rule.get("range", [0, max(2 * n, 4)])
        room = max(1, self.shape.get("max_chars", 4096) // (2 * max(1, _width(values[k]))))
        target = self.rng.choice([low, low + 1, 1, 2, n - 1, n + 1, 2 * n, min(high, room)])
        target = max(low, min(int(target), high, room))
        linked = [j for j, s in enumerate(layout) if count is not None and tuple(s.get("count", ())) == count] or [k]
        for j in linked:
            items = values[j]
            if target < len(items):
                keep = sorted(self.rng.sample(range(len(items)), target))
                items[:] = [items[i] for i in keep]
            while len(items) < target:
                items.append(fresh() if j == k or not items else text_shape._copy(self.rng.choice(items)))

    def _reorder(self, items: list) -> None:
        how = self.rng.choice(("sort", "desc", "reverse", "shuffle", "swap"))
        key = _sort_key
        if how == "sort":
            items.sort(key=key)
        elif how == "desc":
            items.sort(key=key, reverse=True)
        elif how == "reverse":
            items.reverse()
        elif how == "shuffle":
            self.rng.shuffle(items)
        elif len(items) >= 2:
            i, j = self.rng.sample(range(len(items)), 2)
            items[i], items[j] = items[j], items[i]

    def _pick(self, items: list) -> Any:
        return self.rng.choice(items) if items else None

    def _value(self, slot: str, old: Any, top: list) -> str:
        """A new token for ``slot``: at or next to a bound of its range, next to the old value, or anywhere in it."""
        rule = self.shape["slots"].get(slot) or {}
        kind = rule.get("kind")
        if kind == "w":
            return self._word(rule, str(old or ""))
        if kind not in ("i", "f"):
            return str(old) if old is not None else "0"
        low, high = rule.get("range", [0, 0])
        cap = _header(top, rule.get("le"))
        if cap is not None:
            high = min(high, cap)
        if kind == "i":
            low, high = int(low), int(high)
            near = int(old) if old is not None and text_shape._INT.match(str(old)) else low
            choices = [low, high, low + 1, high - 1, near + 1, near - 1, 0, 1, -1, near * 2, near // 2,
                       self.rng.randint(low, high) if high >= low else low]
            value = max(low, min(high, self.rng.choice(choices)))
            return str(value)
        decimals = max(int(rule.get("decimals", 0)), 1)
        near = float(old) if old is not None and _is_float(str(old)) else float(low)
        choices = [low, high, near * 2, near / 2, near + 10 ** -decimals, near - 10 ** -decimals,
                   self.rng.uniform(float(low), float(high))]
        value = max(float(low), min(float(high), float(self.rng.choice(choices))))
        return f"{value:.{decimals}f}"

    def _word(self, rule: dict, old: str) -> str:
        chars = rule.get("chars") or "a"
        low, high = rule.get("len", [1, max(1, len(old))])
        how = self.rng.choice(("one", "same", "reverse", "change", "long", "short"))
        if how == "one":
            word = self.rng.choice(chars)
        elif how == "same":
            word = (old[:1] or chars[0]) * max(low, len(old))
        elif how == "reverse":
            word = old[::-1]
        elif how == "change" and old:
            i = self.rng.randrange(len(old))
            word = old[:i] + self.rng.choice(chars) + old[i + 1:]
        elif how == "long":
            word = "".join(self.rng.choice(chars) for _ in range(high))
        else:
            word = old[: max(low, 1)]
        if not low <= len(word) <= high:
            word = (word + chars[0] * low)[: max(low, min(len(word), high))]
        return word


def _width(items: list) -> int:
    if not items:
        return 1
    first = items[0]
    return sum(len(x) + 1 for x in first) if isinstance(first, list) else len(str(first)) + 1


def _sort_key(item: Any) -> Any:
    if isinstance(item, list):
        return [_sort_key(x) for x in item]
    text = str(item)
    return (0, float(text), "") if _is_float(text) else (1, 0.0, text)


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _header(top: list, name: str | None) -> int | None:
    """The value of the top-level header token ``name`` (``"0.1"``) in ``top``, where it is one."""
    if not name or "/" in name:
        return None
    s, t = (int(x) for x in name.split("."))
    try:
        token = top[s][t]
    except (IndexError, TypeError):
        return None
    return int(token) if isinstance(token, str) and text_shape._INT.match(token) else None
