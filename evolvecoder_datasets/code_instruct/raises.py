"""``pytest.raises`` checks on the library's own exceptions, rewritten so the judge decides them by name.

The judge matches a raised exception by its class name and builtin bases, and holds no class of the program's or of
a library's. A check like ``pytest.raises(tomli.TOMLDecodeError)``, or ``isinstance(info.value.__cause__,
tomli.TOMLDecodeError)`` after a ``pytest.raises(ValueError) as info``, therefore stayed inside. With the qualified
names learned in a clean process (:func:`~.exceptions.learn_exception_classes`), :func:`rewrite_raises` turns such a
block into a probe and plain asserts: the block's one statement runs as ``_ecd_raised(lambda: ...)`` in the program's
process, which returns what it raised as data (the qualified names of its class's MRO, its message, and the MRO of
its ``__cause__`` and ``__context__``: the program's claim, as raising is), and the judge compares those names with
the learned ones (``'tomli._parser.TOMLDecodeError' in raised[0]``, so a subclass matches as in Python). A block the
rewrite does not cover is left as it was.

Example:
    >>> import ast
    >>> body = ast.parse("with pytest.raises(ValueError) as info:\\n    f('a =')\\n"
    ...                  "assert isinstance(info.value.__cause__, tomli.TOMLDecodeError)\\n").body
    >>> out, changed = rewrite_raises(body, {"tomli.TOMLDecodeError": "tomli._parser.TOMLDecodeError"})
    >>> changed, ast.unparse(out[0])
    (True, "_ecd_raised1 = _ecd_raised(lambda: f('a ='))")
    >>> ast.unparse(out[-1])
    "assert _ecd_raised1[2] is not None and 'tomli._parser.TOMLDecodeError' in _ecd_raised1[2]"
"""

from __future__ import annotations

import ast
import builtins
import copy

from ..code_names import pytest_raises_item

__all__ = ["RAISED_HELPER", "rewrite_raises"]

_BUILTIN_EXCEPTIONS = frozenset(name for name, value in vars(builtins).items()
                                if isinstance(value, type) and issubclass(value, BaseException))  # fmt: skip
_PREFIX = "_ecd_raised"
# Where a checked exception's data sits in what the helper returns.
_MRO, _MESSAGE, _CAUSE, _CONTEXT = 0, 1, 2, 3

#: Appended to the sandbox's program when a test was rewritten: runs the block's statement, returns what it raised.
RAISED_HELPER = '''
def _ecd_raised(call):
    try:
        call()
    except BaseException as error:
        def names(kind):
            return [str(c.__module__) + "." + str(c.__qualname__) for c in type.__dict__["__mro__"].__get__(kind)]
        try:
            text = str(error)
        except Exception:
            text = ""
        cause, context = error.__cause__, error.__context__
        return (names(type(error)), text, names(type(cause)) if cause is not None else None,
                names(type(context)) if context is not None else None)
    return None
'''


class _Unsupported(Exception):
    """A use of the block's ``as`` name the rewrite does not cover: the block is left as it was."""


def rewrite_raises(body: list[ast.stmt], classes: dict[str, str]) -> tuple[list[ast.stmt], bool]:
    """``body`` with its ``pytest.raises`` blocks on learned (non-builtin) classes, or whose ``as`` name is checked
    against one or through ``__cause__``/``__context__``, rewritten as a probe and plain asserts; and whether any
    was. ``classes`` maps a class as the test writes it to its learned qualified name.

    Example:
        >>> out, changed = rewrite_raises(ast.parse("with pytest.raises(ValueError):\\n    f(1)\\n").body, {})
        >>> changed   # builtin classes only: the judge does it as it is
        False
    """
    counter = [0]
    if any(isinstance(n, ast.Name) and n.id.startswith(_PREFIX) for stmt in body for n in ast.walk(stmt)):
        return body, False
    out = _rewrite_block(list(body), classes, counter)
    return out, counter[0] > 0


def _rewrite_block(stmts: list[ast.stmt], classes: dict[str, str], counter: list[int]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for position, stmt in enumerate(stmts):
        if isinstance(stmt, (ast.If, ast.For, ast.While)):
            stmt = copy.copy(stmt)
            stmt.body = _rewrite_block(stmt.body, classes, counter)
            stmt.orelse = _rewrite_block(stmt.orelse, classes, counter)
        rewritten = _rewrite_with(stmt, stmts[position + 1:], classes, counter) if isinstance(stmt, ast.With) else None
        if rewritten is None:
            out.append(stmt)
            continue
        lines, rest = rewritten
        return out + lines + _rewrite_block(rest, classes, counter)
    return out


def _rewrite_with(stmt: ast.With, rest: list[ast.stmt], classes: dict[str, str], counter: list[int]):
    """``(new statements, the rest with the ``as`` name's uses rewritten)``, or ``None`` to keep the block."""
    found = pytest_raises_item(stmt) if len(stmt.body) == 1 else None
    if found is None:
        return None
    call, var = found
    keywords = {k.arg: k.value for k in call.keywords}
    kinds = [*call.args, *([keywords["expected_exception"]] if "expected_exception" in keywords else [])]
    if len(kinds) != 1 or set(keywords) - {"match", "expected_exception"} or (var is not None and
                                                                               not isinstance(var, ast.Name)):
        return None
    expected = _qualified(kinds[0], classes)
    action = _as_expression(stmt.body[0])
    if expected is None or action is None:
        return None
    name = f"{_PREFIX}{counter[0] + 1}"
    try:
        rest, special = _rewrite_uses(rest, var.id if var is not None else None, name, classes)
    except _Unsupported:
        return None
    if not special and all(q.startswith("builtins.") for q in expected):
        return None  # builtin classes and builtin checks: the judge does them as they are
    counter[0] += 1
    raised = ast.Name(id=name, ctx=ast.Load())
    lines = [_parse(f"{name} = _ecd_raised(lambda: {ast.unparse(action)})"),
             _parse(f"assert {name} is not None, 'DID NOT RAISE {_text(kinds[0])}'"),
             _parse(f"assert {_any_in(expected, name, _MRO)}, 'raised another exception than {_text(kinds[0])}'")]
    if "match" in keywords:
        lines += [_parse("import re"), ast.Assert(test=ast.Call(
            func=_parse("re.search", "eval"), args=[keywords["match"], ast.Subscript(
                value=raised, slice=ast.Constant(_MESSAGE), ctx=ast.Load())], keywords=[]),
            msg=ast.Constant("Regex pattern did not match."))]  # fmt: skip
    return [ast.fix_missing_locations(ast.copy_location(line, stmt)) for line in lines], rest


def _as_expression(stmt: ast.stmt) -> ast.expr | None:
    """The block's one statement as an expression a lambda can hold: a call, the value of an assignment to a name
    (never bound: it raised), ``obj.attr = v`` as ``setattr``, ``obj[k] = v`` as ``obj.__setitem__(k, v)``."""
    if isinstance(stmt, ast.Expr):
        return stmt.value
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return None
    target, value = stmt.targets[0], stmt.value
    if isinstance(target, ast.Name):
        return value
    if isinstance(target, ast.Attribute):
        return ast.Call(func=ast.Name(id="setattr", ctx=ast.Load()),
                        args=[target.value, ast.Constant(target.attr), value], keywords=[])  # fmt: skip
    if isinstance(target, ast.Subscript):
        return ast.Call(func=ast.Attribute(value=target.value, attr="__setitem__", ctx=ast.Load()),
                        args=[target.slice, value], keywords=[])  # fmt: skip
    return None


def _rewrite_uses(rest: list[ast.stmt], var: str | None, name: str, classes: dict[str, str]):
    """The statements after the block with each use of ``var`` (the ``as`` name) replaced by the helper's data, up
    to the statement that binds ``var`` again (another ``pytest.raises(...) as info``); whether one needed a learned
    class or the exception's cause/context. Raises :class:`_Unsupported` on any other use of ``var``."""
    if var is None:
        return rest, False
    end = next((i for i, stmt in enumerate(rest) if any(isinstance(n, ast.Name) and n.id == var
                                                        and isinstance(n.ctx, ast.Store) for n in ast.walk(stmt))),
               len(rest))  # fmt: skip
    swap = _Uses(var, name, classes)
    out = [swap.visit(copy.deepcopy(stmt)) for stmt in rest[:end]]
    if any(isinstance(n, ast.Name) and n.id == var for stmt in out for n in ast.walk(stmt)):
        raise _Unsupported(var)
    return [ast.fix_missing_locations(stmt) for stmt in out] + rest[end:], swap.special


class _Uses(ast.NodeTransformer):
    """The checks on ``pytest.raises``' ``as`` name that the rewrite knows, over the helper's data."""

    def __init__(self, var: str, name: str, classes: dict[str, str]) -> None:
        self.var, self.name, self.classes, self.special = var, name, classes, False

    def field(self, node: ast.expr) -> int | None:
        """``info.value`` -> the exception, ``.__cause__``/``.__context__`` -> those; which MRO list holds it."""
        chain = []
        while isinstance(node, ast.Attribute):
            chain.append(node.attr)
            node = node.value
        if not (isinstance(node, ast.Name) and node.id == self.var):
            return None
        chain = chain[::-1]
        return {("value",): _MRO, ("value", "__cause__"): _CAUSE, ("value", "__context__"): _CONTEXT,
                ("type",): _MRO}.get(tuple(chain))  # fmt: skip

    def data(self, position: int) -> str:
        return f"{self.name}[{position}]"

    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("isinstance", "issubclass") and len(node.args) == 2:
            position = self.field(node.args[0])
            expected = _qualified(node.args[1], self.classes)
            if position is not None and expected is not None:
                self.special = self.special or position != _MRO or any(not q.startswith("builtins.") for q in expected)
                guard = f"{self.data(position)} is not None and " if position != _MRO else ""
                return _parse(f"{guard}{_any_in(expected, self.name, position)}", "eval")
        if isinstance(func, ast.Name) and func.id == "str" and len(node.args) == 1 and self.field(node.args[0]) == _MRO:
            return _parse(self.data(_MESSAGE), "eval")
        return self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)):
            position, right = self.field(node.left), node.comparators[0]
            if position in (_CAUSE, _CONTEXT) and isinstance(right, ast.Constant) and right.value is None:
                self.special = True
                return _parse(f"{self.data(position)} {'is' if isinstance(node.ops[0], ast.Is) else 'is not'} None",
                              "eval")  # fmt: skip
            expected = _qualified(right, self.classes) if _chain(node.left) == (self.var, "type") else None
            if expected is not None and len(expected) == 1:
                self.special = self.special or not expected[0].startswith("builtins.")
                same = isinstance(node.ops[0], (ast.Is, ast.Eq))
                return _parse(f"{self.data(_MRO)}[0] {'==' if same else '!='} {expected[0]!r}", "eval")
        if _chain(node.left) == (self.var, "typename"):
            node.left = _parse(f"{self.data(_MRO)}[0].rpartition('.')[2]", "eval")
            return self.generic_visit(node)
        return self.generic_visit(node)


def _chain(node: ast.expr) -> tuple[str, ...]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return (node.id, *parts[::-1]) if isinstance(node, ast.Name) else ()


def _qualified(node: ast.expr, classes: dict[str, str]) -> list[str] | None:
    """The qualified names of a class expression (a tuple gives several); ``None`` when one is not known."""
    out = []
    for element in node.elts if isinstance(node, ast.Tuple) else [node]:
        text = _text(element)
        if isinstance(element, ast.Name) and element.id in _BUILTIN_EXCEPTIONS:
            out.append(f"builtins.{element.id}")
        elif text in classes:
            out.append(classes[text])
        else:
            return None
    return out or None


def _any_in(qualified: list[str], name: str, position: int) -> str:
    return " or ".join(f"{q!r} in {name}[{position}]" for q in qualified)


def _text(node: ast.expr) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001 - a node the unparser cannot render has no name to match
        return ""


def _parse(source: str, mode: str = "exec"):
    tree = ast.parse(source, mode=mode)
    return tree.body if mode == "eval" else tree.body[0]
