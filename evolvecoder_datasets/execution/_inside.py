"""Tests the judge could not split, compiled in the caller for the fork server (``T`` specs become ``M`` specs).

Such a test runs whole inside the sandbox with the older in-process hardening: every single comparison becomes a
call of the comparator (``a == b`` -> ``_ecd_cmp_("eq", a, b)``), every call result is reduced to the plain value it
holds (``_ecd_strip_(f(x))``), and the statements run in a function whose closure holds both, so a program cannot
swap them through ``globals()``. The AST work happens here, in the caller, and the server receives the compiled code
object in ``marshal`` form (the same interpreter runs both sides): the server never imports ``ast``, which was
~0.4 MB of the image every fork copies and every exit tears down.

Example:
    >>> spec = inside_spec("Tassert sorted(f(3)) == [1, 2, 3]")
    >>> spec[0]
    'M'
    >>> inside_spec("Tassert (")[:1]
    'E'
"""

from __future__ import annotations

import ast
import binascii
import functools
import marshal
import types

from ._forkserver.lines import MAX_MESSAGE
from ._forkserver.prepared import _CMP_NAME, _STRIP_NAME

_CMP_OPS = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge",
            ast.In: "in", ast.NotIn: "notin"}  # fmt: skip


class _HardenComparisons(ast.NodeTransformer):
    """``a OP b`` -> ``_ecd_cmp_("op", a, b)`` for single comparisons (chains keep Python semantics)."""

    def visit_Compare(self, node: ast.Compare):
        self.generic_visit(node)
        if len(node.ops) != 1 or type(node.ops[0]) not in _CMP_OPS:
            return node
        call = ast.Call(
            func=ast.Name(id=_CMP_NAME, ctx=ast.Load()),
            args=[ast.Constant(_CMP_OPS[type(node.ops[0])]), node.left, node.comparators[0]],
            keywords=[],
        )
        return ast.copy_location(call, node)


class _StripCalls(ast.NodeTransformer):
    """``f(x)`` -> ``_ecd_strip_(f(x))``: every call result in a test is seen as the plain value it holds."""

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        if type(node.func) is ast.Name and node.func.id in ("type", "isinstance", "issubclass") and node.args:
            # What a value's type is stays a question about the value as returned.
            first = node.args[0]
            if type(first) is ast.Call and type(first.func) is ast.Name and first.func.id == _STRIP_NAME:
                node.args[0] = first.args[0]
        wrapped = ast.Call(func=ast.Name(id=_STRIP_NAME, ctx=ast.Load()), args=[node], keywords=[])
        return ast.copy_location(wrapped, node)


def compile_inside(source: str) -> types.CodeType:
    """The code of ``_ecd_make_(cmp, strip)``, which returns the hardened test as a function of no arguments.

    Raises:
        SyntaxError, ValueError, TypeError, MemoryError, RecursionError: the test does not parse or compile.

    Example:
        >>> compile_inside("assert f(1) == 2").co_varnames[:2]
        ('_ecd_cmp_', '_ecd_strip_')
    """
    tree = ast.parse(source, "<test>", "exec")
    tree = _HardenComparisons().visit(_StripCalls().visit(tree))
    no_args = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
    inner = ast.FunctionDef(name="_ecd_test_", args=no_args, body=tree.body or [ast.Pass()], decorator_list=[],
                            returns=None, type_params=[])  # fmt: skip
    outer = ast.FunctionDef(
        name="_ecd_make_",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=_CMP_NAME), ast.arg(arg=_STRIP_NAME)], kwonlyargs=[],
                           kw_defaults=[], defaults=[]),
        body=[inner, ast.Return(value=ast.Name(id="_ecd_test_", ctx=ast.Load()))],
        decorator_list=[], returns=None, type_params=[],
    )  # fmt: skip
    module = ast.fix_missing_locations(ast.Module(body=[outer], type_ignores=[]))
    code = compile(module, "<test>", "exec", dont_inherit=True)
    return next(c for c in code.co_consts if isinstance(c, types.CodeType))


@functools.lru_cache(maxsize=4096)
def inside_spec(spec: str) -> str:
    """What the fork server receives for a test spec: a ``T`` spec (a whole test) becomes ``M`` + the base64
    ``marshal`` form of :func:`compile_inside`'s code, or ``E`` + why it does not compile; other specs pass as
    they are.

    Example:
        >>> inside_spec("Pp f(1)")
        'Pp f(1)'
    """
    if not spec.startswith("T"):
        return spec
    try:
        code = compile_inside(spec[1:])
    except SyntaxError as err:
        return f"Etest does not parse: SyntaxError: {err}"[: MAX_MESSAGE + 1]
    except (ValueError, TypeError, MemoryError, RecursionError) as err:
        return f"Etest does not compile: {type(err).__name__}: {err}"[: MAX_MESSAGE + 1]
    return "M" + binascii.b2a_base64(marshal.dumps(code), newline=False).decode("ascii")
