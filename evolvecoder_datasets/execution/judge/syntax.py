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


def _bound_in(node) -> frozenset:
    """Names ``node`` binds anywhere inside it (stores, deletions, parameters): a function's or a comprehension's
    locals, a block's own bindings."""
    return _names(node)[1]


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


def _substituted(node, mapping: dict):
    """``node`` with each name it reads that ``mapping`` holds replaced by a copy of its AST (parameters replaced by
    a call's arguments when a helper is inlined, loop names by an item's values when a loop is written out).

    Copy on write: a subtree that reads none of the names is shared, not copied (``copy.deepcopy`` of every
    statement of every pass was most of the planner's time). A name a lambda, function or comprehension inside
    binds for itself is its own there, not the one being replaced.
    """
    if not mapping or not _names(node)[0] & mapping.keys():
        return node
    t = type(node)
    if t is ast.Name:
        return ast.copy_location(_copied(mapping[node.id]), node) if type(node.ctx) is ast.Load else node
    outer = mapping
    if isinstance(node, _SCOPES):
        shadowed = _names(node)[1] & mapping.keys()
        if shadowed:
            mapping = {k: v for k, v in mapping.items() if k not in shadowed}
    new = t.__new__(t)
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            value = _substituted(value, mapping)
        elif type(value) is list:
            value = [_substituted(v, mapping) if isinstance(v, ast.AST) else v for v in value]
        setattr(new, name, value)
    for name in node._attributes:
        if hasattr(node, name):
            setattr(new, name, getattr(node, name))
    if mapping is not outer and t in (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp):
        first = copy.copy(new.generators[0])  # the first iterable is evaluated in the enclosing scope
        first.iter = _substituted(node.generators[0].iter, outer)
        new.generators = [first, *new.generators[1:]]
    return new


def _copied(node):
    """A full copy of a (small) AST, so no two places of a plan share a node that one of them could change."""
    t = type(node)
    new = t.__new__(t)
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            value = _copied(value)
        elif type(value) is list:
            value = [_copied(v) if isinstance(v, ast.AST) else v for v in value]
        setattr(new, name, value)
    for name in node._attributes:
        if hasattr(node, name):
            setattr(new, name, getattr(node, name))
    return new


_SCOPES = (ast.Lambda, ast.FunctionDef, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_FREE_CACHE: dict = {}  # id(node) -> (node, names): only for the duration of one plan_test call


def _free_names(node) -> frozenset:
    """Names ``node`` reads that it does not bind itself (comprehension targets, lambda and function parameters)."""
    return _names(node)[2]


def _names(node) -> tuple:
    """``(loaded, bound, free)`` names of ``node``'s subtree, computed bottom-up once per node and planning run (the
    planner asks about a node and then about its parts: walking each subtree again made planning quadratic)."""
    hit = _FREE_CACHE.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    t = type(node)
    loaded: set = set()
    bound: set = set()
    scoped: set = set()
    if t is ast.Name:
        (loaded if type(node.ctx) is ast.Load else bound).add(node.id)
    elif t is ast.arg:
        bound.add(node.arg)
    elif t is ast.AugAssign and type(node.target) is ast.Name:  # x += 1 reads x too
        loaded.add(node.target.id)
    if t is not ast.Constant:
        for field in node._fields:
            value = getattr(node, field, None)
            for child in (value if type(value) is list else (value,)):
                if isinstance(child, ast.AST) and not isinstance(child, (ast.expr_context, ast.operator, ast.cmpop,
                                                                          ast.boolop, ast.unaryop)):  # fmt: skip
                    c_loaded, c_bound, c_free = _names(child)
                    loaded |= c_loaded
                    bound |= c_bound
                    scoped |= c_loaded - c_free  # what scopes inside the child already took away
    if isinstance(node, _SCOPES):
        scoped |= bound
    result = (frozenset(loaded), frozenset(bound), frozenset(loaded - scoped))
    _FREE_CACHE[id(node)] = (node, result)
    return result
