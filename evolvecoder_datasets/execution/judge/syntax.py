"""AST helpers of the planner: which nodes and statements the judge evaluates, names a node reads and binds."""

from __future__ import annotations

import ast
import copy

from .nodes import _ExcInfo, _Search

_SUPPORTED_EXPR = (
    ast.Constant, ast.Name, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare,
    ast.IfExp, ast.Subscript, ast.Slice, ast.Attribute, ast.Call, ast.Lambda, ast.ListComp, ast.SetComp,
    ast.DictComp, ast.GeneratorExp, ast.JoinedStr, ast.FormattedValue, ast.Starred, ast.keyword, ast.comprehension,
    ast.arguments, ast.arg, ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop, ast.NamedExpr,
    _Search, _ExcInfo,
)  # fmt: skip
_SUPPORTED_STMT = (ast.Assert, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return, ast.If, ast.For,
                   ast.While, ast.Break, ast.Continue, ast.Pass, ast.Raise)  # fmt: skip
_OPERATOR_NODES = (ast.Compare, ast.BoolOp, ast.UnaryOp, ast.BinOp, ast.IfExp, ast.Tuple, ast.List, ast.Set,
                   ast.Dict, ast.JoinedStr, ast.FormattedValue, ast.Starred)  # fmt: skip


def _bound_in(node) -> set[str]:
    """Names a function body or a comprehension binds locally."""
    names = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            names.add(sub.id)
        elif isinstance(sub, ast.arg):
            names.add(sub.arg)
    return names


class _DropAnnotations(ast.NodeTransformer):
    """Annotations are documentation to the judge (``list[Any]`` needs no ``typing``)."""

    def visit_arg(self, node: ast.arg):
        node.annotation = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef):
        self.generic_visit(node)
        node.returns = None
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign):
        if node.value is None:
            return ast.copy_location(ast.Pass(), node)
        target = self.visit(node.target)
        return ast.copy_location(ast.Assign(targets=[target], value=self.visit(node.value)), node)


class _Substitute(ast.NodeTransformer):
    """Parameters replaced by the call's arguments (inlining ``check(candidate)``)."""

    def __init__(self, mapping: dict) -> None:
        self.mapping = mapping

    def visit_Name(self, node: ast.Name):
        if isinstance(node.ctx, ast.Load) and node.id in self.mapping:
            return ast.copy_location(copy.deepcopy(self.mapping[node.id]), node)
        return node


_SCOPES = (ast.Lambda, ast.FunctionDef, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_FREE_CACHE: dict = {}  # id(node) -> (node, names): only for the duration of one plan_test call


def _free_names(node) -> frozenset:
    """Names ``node`` reads that it does not bind itself (comprehension targets, lambda and function parameters)."""
    hit = _FREE_CACHE.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    loaded, scopes = set(), []
    for sub in ast.walk(node):
        t = type(sub)
        if t is ast.Name:
            if type(sub.ctx) is ast.Load:
                loaded.add(sub.id)
        elif t is ast.Constant:
            continue
        elif isinstance(sub, _SCOPES):
            scopes.append(sub)
    for sub in scopes:
        loaded -= _bound_in(sub)
    names = frozenset(loaded)
    _FREE_CACHE[id(node)] = (node, names)
    return names

