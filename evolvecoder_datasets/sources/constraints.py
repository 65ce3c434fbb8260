"""A precondition from the constraints a statement lists (LeetCode's and contest statements' ``Constraints:`` block).

Statements from LeetCode (all 1,209 of the package-shipped set) and from contest archives end with a block such as::

    Constraints:
    - 2 <= nums.length <= 10^4
    - -10^9 <= nums[i] <= 10^9
    - s consists of lowercase English letters.
    - All the integers of nums are unique.

:func:`constraints_precondition` turns the lines it can read into ``def precondition(<parameters>)``: chains of
comparisons over parameters, their lengths, their elements (``nums[i]``, ``grid[i][j]``, ``words[i].length``) and
names a line defines (``n == nums.length``); character classes (``consists of lowercase English letters``, digits,
quoted characters); unique and sorted elements. Parameter names come from the statement's first ``Input:`` line
(``nums = [2,7,11,15], target = 9``), in order; the types of each argument from the problem's own inputs. A line it
cannot read (``Only one valid answer exists.``) is not enforced and is listed in the precondition's comments; a
statement without one readable line gives ``None``. A line that one of the problem's own inputs breaks is not
enforced either (an exception stated elsewhere, a relation misread, or a test the statement excludes: the tests win
here). The precondition is code and runs only in the sandbox, like a shipped one.

Example:
    >>> q = "Input: nums = [2,7], target = 9\\nConstraints:\\n- 2 <= nums.length <= 10^4\\n- -10^9 <= nums[i] <= 10^9"
    >>> src = constraints_precondition(q, [([2, 7], 9)])
    >>> ns = {}; exec(src, ns)
    >>> ns["precondition"]([1, 2], 3), ns["precondition"]([1], 3), ns["precondition"]([1, 10**10], 3)
    (True, False, False)
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

__all__ = ["constraints_precondition", "statement_parameters"]

_BLOCK = re.compile(r"Constraints?\s*:?\**\s*\n(.*?)(?:\n\s*\n\s*(?:\*\*|Follow|Note|Example)|\Z)",
                    re.DOTALL | re.IGNORECASE)
_INPUT = re.compile(r"Input\**\s*:?\**\s*`?([^\n`]*)")
_TERM = re.compile(r"^([A-Za-z_]\w*)((?:\[[a-z]\])*)(\.length)?$")
_OPS = ("<=", ">=", "==", "!=", "<", ">")
_SPLIT = re.compile(r"\s*(<=|>=|==|!=|<|>)\s*")
_CLASSES = {"lowercase": "abcdefghijklmnopqrstuvwxyz", "uppercase": "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
            "digit": "0123456789", "space": " "}


def statement_parameters(question: str) -> list[str]:
    """The parameter names of the statement's first ``Input:`` line, in order (``[]`` without one).

    Example:
        >>> statement_parameters("Example 1:\\nInput: nums = [1,2], k = 3\\nOutput: 4")
        ['nums', 'k']
    """
    match = _INPUT.search(question or "")
    if not match:
        return []
    return re.findall(r"(?:^|,)\s*([A-Za-z_]\w*)\s*=", match.group(1))


def _clean(line: str) -> str:
    line = re.sub(r"<sup>\s*([^<]*)</sup>", r"^\1", line)
    line = re.sub(r"</?\w+>", "", line).replace("`", "").replace("**", "").replace("\u2264", "<=")
    return line.strip().rstrip(".").strip()


_ATOM = re.compile(r"\s*(\d{1,12})(?:\s*\^\s*(\d{1,2}))?\s*")


def _number(text: str) -> str | None:
    """An integer bound written as ``10^9``, ``-2^31``, ``2^31 - 1``, ``2 * 10^4``, ``10^9 + 7`` (atoms of at most 12
    digits, exponents of at most 2 digits, joined by ``*``, ``+``, ``-``), as Python source; else ``None``.

    Example:
        >>> _number("-2^31"), _number("2 * 10^4"), _number("10^9 + 7"), _number("n")
        ('-2147483648', '20000', '1000000007', None)
    """
    text = text.strip()
    sign = -1 if text.startswith("-") else 1
    text = text.lstrip("-")
    total, term, op, pos = 0, None, "+", 0
    while pos <= len(text):
        match = _ATOM.match(text, pos)
        if not match:
            return None
        value = int(match.group(1)) ** int(match.group(2) or 1)
        term = value if term is None else term * value
        pos = match.end()
        if pos == len(text):
            total = total + term if op == "+" else total - term
            break
        if text[pos] == "*":
            pos += 1
            continue
        if text[pos] not in "+-":
            return None
        total = total + term if op == "+" else total - term
        op, term = text[pos], None
        pos += 1
    value = sign * total
    return repr(value) if abs(value) < 10**40 else None


def _values(term: str, params: list[str], aliases: dict[str, str]) -> str | None:
    """A Python expression for the list of values ``term`` stands for (one element for a plain name)."""
    if term in aliases:
        return f"[{aliases[term]}]"
    match = _TERM.match(term)
    if not match or match.group(1) not in params:
        return None
    name, indices, length = match.group(1), match.group(2).count("["), bool(match.group(3))
    expr = f"[{name}]"
    for _ in range(indices):
        expr = f"_ecd_flat({expr})"
    return f"[len(v) for v in {expr}]" if length else expr


def _chain(line: str, params: list[str], aliases: dict[str, str]) -> str | None:
    """A check for a comparison chain (``1 <= m, n <= 200``; ``n == nums.length`` defines ``n`` instead)."""
    parts = _SPLIT.split(line)
    terms, ops = parts[0::2], parts[1::2]
    if len(terms) < 2 or any(op not in _OPS for op in ops):
        return None
    if len(terms) == 2 and ops[0] == "==":  # n == nums.length: an alias, unless both sides are known
        for new, other in ((terms[0], terms[1]), (terms[1], terms[0])):
            if _TERM.match(new) and new not in params and new not in aliases:
                values = _values(other, params, aliases)
                if values and "_ecd_flat" not in values:
                    aliases[new] = f"{values}[0]"
                    return "True"
    sides: list[list[tuple[bool, str]]] = []  # per term: (is a list of values, source)
    for term in terms:
        options = []
        for name in (t.strip() for t in term.split(",")):
            number = _number(name)
            options.append((False, number) if number is not None else (True, _values(name, params, aliases)))
        if any(value is None for _, value in options) or (len(options) > 1 and not all(v for v, _ in options)):
            return None
        sides.append(options)
    checks = []
    for k, op in enumerate(ops):
        # an ordering compares numbers only; == and != compare anything
        num = (lambda v: f"_ecd_num({v}) and ") if op not in ("==", "!=") else (lambda v: "")
        for la, a in sides[k]:
            for lb, b in sides[k + 1]:
                if la and lb:
                    checks.append(f"all({num('x')}{num('y')}x {op} y for x in {a} for y in {b})")
                elif la:
                    checks.append(f"all({num('x')}x {op} {b} for x in {a})")
                elif lb:
                    checks.append(f"all({num('y')}{a} {op} y for y in {b})")
    return " and ".join(checks) if checks else None


def _consists(line: str, params: list[str]) -> str | None:
    """A character-set check for ``s consists of ...`` (every class and quoted character named), else ``None``."""
    match = re.match(r"^(.+?)\s+(?:consists?|contains?)\s+(?:of\s+)?(?:only\s+)?(.*)$", line, re.IGNORECASE)
    if not match:
        return None
    subjects = [s.strip() for s in re.split(r",|\band\b", match.group(1)) if s.strip()]
    rest = match.group(2).lower()
    allowed = set(re.findall(r"'(.)'", match.group(2))) | set(re.findall(r'"(.)"', match.group(2)))
    rest = re.sub(r"'.'|\".\"", " ", rest)
    words = set(re.findall(r"[a-z]+", rest))
    if "english" in words and "letters" in words and not words & {"lowercase", "uppercase"}:
        words |= {"lowercase", "uppercase"}
    for word, chars in (("lowercase", "lowercase"), ("uppercase", "uppercase"), ("digits", "digit"),
                        ("digit", "digit"), ("spaces", "space"), ("space", "space")):
        if word in words:
            allowed |= set(_CLASSES[chars])
    known = {"english", "letters", "letter", "lowercase", "uppercase", "digits", "digit", "only", "and", "or",
             "spaces", "space", "the", "characters", "both", "of", "a", "single"}
    if not allowed or words - known:
        return None
    checks = []
    for subject in subjects:
        values = _values(subject, params, {})
        if values is None:
            return None
        checks.append(f"all(set(v) <= _ecd_set({''.join(sorted(allowed))!r}) for v in _ecd_strs({values}))")
    return " and ".join(checks)


def _shape_rule(line: str, params: list[str]) -> str | None:
    """Unique or sorted elements (``All the integers of nums are unique``, ``nums is sorted in ascending order``;
    ``nums[i] is sorted``: each of its lists), else ``None``."""
    low = line.lower()
    names = [p for p in params if re.search(rf"\b{re.escape(p.lower())}\b", low)]
    if len(names) != 1:
        return None
    name = names[0]
    each = re.search(rf"\b{re.escape(name.lower())}\[[a-z]\]", low) is not None
    groups = f"{name}" if each else f"[{name}]"
    if re.search(r"\ball\b", low) and re.search(r"\bare\s+(unique|distinct|pairwise distinct)\b", low):
        return f"all(len(set(map(repr, g))) == len(g) for g in [_ecd_flat({groups})])" if not each else \
            f"all(len(set(map(repr, g))) == len(g) for g in {groups})"
    if re.search(r"\bsorted in (strictly )?(ascending|non-decreasing|increasing) order\b", low):
        op = "<" if "strictly" in low else "<="
        return f"all(all(a {op} b for a, b in zip(g, g[1:])) for g in {groups})"
    return None


_HELPERS = '''
def _ecd_flat(values):
    out = []
    for v in values:
        if not isinstance(v, (list, tuple, str)):
            raise TypeError("not a sequence")
        out.extend(v)
    return out

def _ecd_num(x):
    return type(x) in (int, float) and x == x

def _ecd_set(chars):
    return set(chars)

def _ecd_strs(values):
    # the strings inside values (a grid of characters is a list of lists of strings); anything else is not one
    out = []
    for v in values:
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            out.extend(_ecd_strs(v))
        else:
            raise TypeError("not a string")
    return out
'''


def constraints_precondition(question: str, seeds: Sequence[Sequence[Any]]) -> str | None:
    """``def precondition(...)`` from the statement's ``Constraints:`` block and its ``Input:`` parameter names, with
    the argument types the problem's own inputs use (``seeds``), or ``None`` (no block, no names, the names do not
    match the inputs' arity, or no line could be read).

    Example:
        >>> q = "Input: s = \\"ab\\"\\nConstraints:\\n- 1 <= s.length <= 5\\n- s consists of lowercase English letters."
        >>> src = constraints_precondition(q, [("ab",)])
        >>> ns = {}; exec(src, ns); ns["precondition"]("abc"), ns["precondition"]("aB"), ns["precondition"]("")
        (True, False, False)
    """
    block = _BLOCK.search(question or "")
    params = statement_parameters(question)
    seeds = [tuple(s) for s in seeds]
    if not block or not params or not seeds or any(len(s) != len(params) for s in seeds):
        return None
    aliases: dict[str, str] = {}
    checks, skipped = [], []
    for raw in block.group(1).splitlines():
        raw = raw.strip()
        if not raw.startswith(("-", "*", "•")):
            continue
        line = _clean(re.sub(r"^[-*•]\s+", "", raw))
        check = (_chain(line, params, aliases) if any(op in line for op in _OPS) else None) \
            or _consists(line, params) or _shape_rule(line, params)
        if check and check != "True":
            checks.append((line, check))
        elif check is None:
            skipped.append(line)
    from ..search.domain import SHAPE_CHECKER, infer_domain

    # a line the problem's own inputs break is a misreading (an exception stated on another line, a pairwise
    # relation read as all pairs) or a test the statement excludes: either way it is not enforced. Evaluating the
    # checks here is safe: they are our templates over identifiers, integers and quoted characters only.
    helpers: dict[str, Any] = {}
    exec(compile(_HELPERS, "<constraints>", "exec"), helpers)  # our own text
    kept = []
    for line, check in checks:
        test = f"lambda {', '.join(params)}: {check}"
        try:
            fn = eval(compile(test, "<constraint>", "eval"), dict(helpers))  # our template, see above
            agrees = all(fn(*seed) for seed in seeds)
        except Exception:
            agrees = False
        if agrees:
            kept.append((line, check))
        else:
            skipped.append(f"{line} (the problem's own inputs break it)")
    checks = kept
    if not checks:
        return None

    types = [{kind: {} for kind in spec} for spec in infer_domain(seeds).shape]
    body = ["    try:", "        if _ecd_shape_violation(_ECD_TYPES, (" + ", ".join(params) + ",)) is not None:",
            "            return False"]
    for line, check in checks:
        body += [f"        # {line}", f"        if not ({check}):", "            return False"]
    body += ["    except Exception:", "        return False", "    return True"]
    head = [f"# {len(checks)} constraint lines of the statement enforced"]
    head += [f"# not enforced: {line}" for line in skipped]
    return "\n".join(head + [SHAPE_CHECKER, _HELPERS, f"_ECD_TYPES = {json.dumps(types)}", "",
                             f"def precondition({', '.join(params)}):", *body]) + "\n"
