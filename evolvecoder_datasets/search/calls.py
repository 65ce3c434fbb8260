"""The call a problem's asserts make: which function they test, and the literal arguments they pass it.

The search writer, the fidelity oracle and the model writers' input mode all start here: :func:`recover_call`
finds the callee (``has_close_elements``, or a LeetCode ``Solution().two_sum``) and its literal argument tuples;
:func:`call_callee` and :func:`literal_args` read one call with the same rules (the model's proposed calls are read
with them too); :func:`render_args` writes arguments back as source. Pure Python on syntax trees and literals.

Example:
    >>> from evolvecoder_datasets.search.calls import recover_call, render_args
    >>> call = recover_call(["assert add([1, 2], 3) == [4, 5]", "assert add([], 0) == []"])
    >>> call.callee, [render_args(a) for a in call.seeds]
    ('add', ['[1, 2], 3', '[], 0'])
"""

from __future__ import annotations

import ast
import builtins
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["CallShape", "call_callee", "literal_args", "recover_call", "render_args"]

_BUILTIN_NAMES = frozenset(dir(builtins))


@dataclass(frozen=True)
class CallShape:
    """The call a problem's tests make, and the literal arguments they make it with.

    Attributes:
        callee (`str`): source of the called expression, e.g. ``"add"`` or ``"Solution().two_sum"``.
        seeds (`tuple[tuple, ...]`): distinct literal argument tuples found in the tests (all of one arity).
        calls (`int`): calls of ``callee`` with literal arguments found (duplicates included).

    Example:
        >>> CallShape("f", ((1, "a"), (2, "b")), calls=3).arity
        2
    """

    callee: str
    seeds: tuple[tuple, ...]
    calls: int

    @property
    def arity(self) -> int:
        """Number of positional arguments."""
        return len(self.seeds[0]) if self.seeds else 0


def call_callee(node: ast.Call) -> str | None:
    """``name`` or ``Name().method`` callees; anything else (builtins, attributes of values) is not a candidate.

    Example:
        >>> import ast
        >>> call_callee(ast.parse("Solution().f(1)", mode="eval").body), call_callee(ast.parse("len(x)", mode="eval").body)
        ('Solution().f', None)
    """
    func = node.func
    if isinstance(func, ast.Name):
        return None if func.id in _BUILTIN_NAMES else func.id
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and not func.value.args
        and not func.value.keywords
        and func.value.func.id not in _BUILTIN_NAMES
    ):
        return f"{func.value.func.id}().{func.attr}"
    return None


def literal_args(node: ast.Call) -> tuple | None:
    """The call's positional arguments as values when every one is a literal (no keywords, no ``*args``), else
    ``None``.

    Example:
        >>> import ast
        >>> literal_args(ast.parse("f(1, [2, 'a'])", mode="eval").body), literal_args(ast.parse("f(x)", mode="eval").body)
        ((1, [2, 'a']), None)
    """
    if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
        return None
    try:
        return tuple(ast.literal_eval(a) for a in node.args)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def recover_call(tests: Sequence[str], *, defined: set[str] | None = None) -> CallShape | None:
    """The function the tests exercise and the literal argument tuples they pass it.

    Every call in every test whose callee is a plain name (not a builtin) or ``Name().method`` and whose positional
    arguments are all literals (``ast.literal_eval`` reads them) counts. The callee called most often wins (ties: the
    first met); its argument tuples of the most common arity are the seeds.

    Args:
        tests (`Sequence[str]`): the problem's tests (asserts; snippets that do not parse are skipped).
        defined (`set[str]`, *optional*): names the reference solution defines; a callee must start with one.

    Returns:
        `CallShape` or `None`: ``None`` when no test calls a candidate function with literal arguments.

    Example:
        >>> shape = recover_call(["assert sorted(Solution().two_sum([2, 7], 9)) == [0, 1]"], defined={"Solution"})
        >>> shape.callee, shape.seeds, shape.arity
        ('Solution().two_sum', (([2, 7], 9),), 2)
    """
    found: dict[str, list[tuple]] = {}
    for test in tests:
        try:
            tree = ast.parse(test)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            callee = call_callee(node)
            if callee is None or (defined is not None and callee.split("(")[0] not in defined):
                continue
            args = literal_args(node)
            if args is not None:
                found.setdefault(callee, []).append(args)
    if not found:
        return None
    callee = max(found, key=lambda c: len(found[c]))  # max keeps the first of equals: insertion order
    arity = Counter(len(a) for a in found[callee]).most_common(1)[0][0]
    seeds: dict[str, tuple] = {}
    for args in found[callee]:
        if len(args) == arity:
            seeds.setdefault(repr(args), args)
    return CallShape(callee=callee, seeds=tuple(seeds.values()), calls=len(found[callee]))


def render_args(args: Sequence[Any]) -> str:
    """Source text of an argument list: ``(1, [2])`` -> ``"1, [2]"``.

    Example:
        >>> render_args((1, "a", [2.5]))
        "1, 'a', [2.5]"
    """
    return ", ".join(repr(a) for a in args)
