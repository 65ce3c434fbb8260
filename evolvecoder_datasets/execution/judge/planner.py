"""The planner's expression side: which names are the judge's, and how an expression is split into probes.

A probe is a maximal subexpression that needs the program; it is sent to the sandbox as source and replaced, in
the judge's copy of the test, by a name no source code can spell (``_PROBE`` + its index).
"""

from __future__ import annotations

import ast
import copy

from .interpreter import _Interpreter
from .language import _BUILTIN_TABLE, _JUDGE_NAMES, _METHOD_NAMES, _MODULES, _PROBE
from .nodes import _MAX_UNROLL, _PLAN_BUDGET, _UNKNOWN, _Clean, _Inside, _literal_ast, _Unrolled
from .syntax import (_OPERATOR_NODES, _SUPPORTED_EXPR, _SUPPORTED_STMT, _bound_in, _free_names,
                     _Substitute)  # fmt: skip

class _ExpressionPlanner:
    def __init__(self, forced: set[str]) -> None:
        self.forced = forced  # names that must live in the sandbox (the sandbox's code reads them)
        self.judge_values: dict[str, ast.stmt] = {}  # judge-side bindings (values and helper functions)
        self.ever_judge: set[str] = set()  # every name the judge bound at some point (the sandbox may need it)
        self.judge_funcs: set[str] = set()
        self.modules: set[str] = set(_MODULES)
        self.steps: list[tuple[str, str]] = []
        self.body: list = []
        self.sandbox_reads: set[str] = set()
        self.data_names: set[str] = set()  # names the test's set-up binds to what a program call returned
        self.deferred: dict[str, ast.FunctionDef] = {}  # test helpers that call the program, not sent yet
        self.imported: dict[str, str] = {}  # names the test's own imports bound (not the judge's modules)
        self.inlining = 0
        self.env: dict = {}  # values of the judge's own bindings, known while planning (to unroll loops over them)
        self.in_try = False  # planning the body of a try the judge runs: program calls become probes
        self.unrolled = 0

    # -- classification ---------------------------------------------------------------------------------------
    def known(self, name: str, local: frozenset = frozenset()) -> bool:
        if name in local:
            return True
        if name in self.forced:
            return False
        return name in self.judge_values or name in _JUDGE_NAMES or name in self.modules

    def depends(self, node, local: frozenset = frozenset()) -> bool:
        return any(not self.known(n, local) for n in _free_names(node))

    def callable_in_judge(self, func, local: frozenset) -> bool:
        if isinstance(func, ast.Name):  # never a parameter: a test helper calling what it was given stays outside
            return func.id not in local and self.known(func.id, local) and (
                func.id in _BUILTIN_TABLE or func.id in self.judge_funcs)
        if isinstance(func, ast.Attribute):
            if isinstance(func.value, ast.Name) and func.value.id in self.modules and self.known(func.value.id, local):
                return func.attr in (_MODULES.get(func.value.id) or {})
            return func.attr in _METHOD_NAMES and self.supported(func.value, local)
        if isinstance(func, ast.Lambda):
            return self.supported(func, local)
        return False

    def supported(self, node, local: frozenset = frozenset()) -> bool:
        """Whether the judge can evaluate ``node`` by itself (no program names, only its language)."""
        for sub in ast.walk(node):
            if not isinstance(sub, _SUPPORTED_EXPR):
                return False
            if isinstance(sub, ast.Attribute) and sub.attr.startswith("__") and sub.attr != "__name__":
                return False
        inner = local | frozenset(_bound_in(node) if isinstance(node, (ast.Lambda,)) else ())
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                inner = inner | frozenset(_bound_in(sub))
        if self.depends(node, inner):
            return False
        return all(self.callable_in_judge(sub.func, inner) for sub in ast.walk(node) if isinstance(sub, ast.Call))

    def pure_function(self, fn: ast.FunctionDef) -> bool:
        """A helper the test defines from judge pieces only (e.g. LeetCode's ``assert_<name>(result, expected)``)."""
        if fn.decorator_list or fn.args.vararg or fn.args.kwarg or fn.args.posonlyargs or fn.args.kwonlyargs:
            return False
        local = frozenset(_bound_in(fn)) | {fn.name}
        for sub in ast.walk(fn):
            if sub is fn:
                continue
            if isinstance(sub, (ast.stmt,)) and not isinstance(sub, _SUPPORTED_STMT):
                return False
            if isinstance(sub, ast.expr) and not isinstance(sub, _SUPPORTED_EXPR):
                return False
            if isinstance(sub, ast.Attribute) and sub.attr.startswith("__") and sub.attr != "__name__":
                return False
        for sub in ast.walk(fn):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and not self.known(sub.id, local):
                return False
            if isinstance(sub, ast.Call) and not self.callable_in_judge(sub.func, local):
                return False
        return True

    # -- probes -------------------------------------------------------------------------------------------------
    def probe(self, node) -> ast.expr:
        src = ast.unparse(node)
        self.release(_free_names(node))
        self.sandbox_reads |= _free_names(node)
        k = len(self.steps)
        self.steps.append(("p", src))
        return ast.copy_location(ast.Name(id=f"{_PROBE}{k}", ctx=ast.Load()), node)

    def split(self, node, local: frozenset = frozenset()) -> ast.expr:
        """The judge's expression for ``node``, with program-dependent subexpressions replaced by probes."""
        if not self.depends(node, local):
            if self.supported(node, local):
                return node
            raise _Inside(f"outside the judge's language: {ast.unparse(node)[:80]}")
        if isinstance(node, _OPERATOR_NODES):
            return self._split_children(node, local)
        if isinstance(node, ast.Call):
            handed = [a for a in [*node.args, *(k.value for k in node.keywords)] if isinstance(a, ast.Name)
                      and not self.known(a.id, local) and a.id not in self.data_names]  # fmt: skip
            if handed:  # map(double, xs), sorted(xs, key=double): the program's function runs where it lives
                return self.probe(node)
            if self.callable_in_judge(node.func, local) and not isinstance(node.func, ast.Attribute):
                return self._split_children(node, local)
            func = node.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in self.modules \
                    and self.known(func.value.id, local):  # math.isclose(f(x), 0.5)  # fmt: skip
                return self._split_children(node, local)
            clean = self.clean_call(node, local)
            if clean is not None:
                return clean
            if isinstance(func, ast.Attribute) and func.attr in _METHOD_NAMES and self._value_like(func.value):
                receiver = self.split(func.value, local)
                args = [self.split(a, local) for a in node.args]
                keywords = [ast.keyword(arg=k.arg, value=self.split(k.value, local)) for k in node.keywords]
                return ast.copy_location(
                    ast.Call(func=ast.Attribute(value=receiver, attr=func.attr, ctx=ast.Load()), args=args,
                             keywords=keywords), node)  # fmt: skip
            return self.probe(node)
        if isinstance(node, ast.Subscript):
            if not self.depends(node.value, local) or self._value_like(node.value):
                value = self.split(node.value, local)
                return ast.copy_location(
                    ast.Subscript(value=value, slice=self.split(node.slice, local), ctx=ast.Load()), node)
            return self.probe(node)
        if isinstance(node, ast.Slice):
            parts = {k: (self.split(getattr(node, k), local) if getattr(node, k) is not None else None)
                     for k in ("lower", "upper", "step")}  # fmt: skip
            return ast.copy_location(ast.Slice(**parts), node)
        if isinstance(node, ast.Attribute) and self._value_like(node.value) and not node.attr.startswith("_"):
            return ast.copy_location(ast.Attribute(value=self.split(node.value, local), attr=node.attr,
                                                   ctx=ast.Load()), node)  # fmt: skip
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            split = self.comprehension(node, local) or self.unroll_comprehension(node, local)
            if split is not None:
                return split
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp, ast.Lambda, ast.NamedExpr,
                             ast.Await, ast.Yield, ast.YieldFrom)):
            raise _Inside("a comprehension or lambda that calls the program")
        return self.probe(node)

    def clean_call(self, node: ast.Call, local: frozenset):
        """``re.fullmatch(p, f(x))``, ``np.allclose(f(x), ref)``: a helper of a module the test imported, applied to
        the program's values. Run where the program is, it would be the program's patched copy of the module."""
        func = node.func
        root = func
        while isinstance(root, (ast.Attribute, ast.Call)):  # unittest.TestCase().assertEqual: through the calls too
            root = root.value if isinstance(root, ast.Attribute) else root.func
        if not isinstance(root, ast.Name) or root.id not in self.imported or root.id in local:
            return None
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return None
        if {n for n in _free_names(func)} != {root.id}:
            return None
        args = [self.split(a, local) for a in node.args]
        keywords = [ast.keyword(arg=k.arg, value=self.split(k.value, local)) for k in node.keywords]
        return ast.copy_location(_Clean(imports=self.imported[root.id], func=ast.unparse(func), args=args,
                                        keywords=keywords), node)  # fmt: skip

    def _value_like(self, node) -> bool:
        """Whether ``node`` yields a value the judge may take apart (a call result, not a program object's name).

        ``f(x).split()`` and ``f(x)[0]`` apply a builtin method or an index to what the program returned: the judge
        does that on the decoded value, so a ``str`` subclass with a lying ``split`` has no say. A name or a
        constructor call (``cache.get(1)``, ``Solution().count(3)``) is a program object whose methods are its own.
        """
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            return not name[:1].isupper()
        if isinstance(node, ast.Name):
            return node.id in self.data_names
        return isinstance(node, (ast.Subscript, ast.BinOp, ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set,
                                 ast.JoinedStr))  # fmt: skip

    def _split_children(self, node, local):
        new = type(node)()
        for name, value in ast.iter_fields(node):
            if isinstance(value, list):
                setattr(new, name, [self.split(v, local) if isinstance(v, ast.expr) else
                                    self._split_keyword(v, local) if isinstance(v, ast.keyword) else v
                                    for v in value])  # fmt: skip
            elif isinstance(value, ast.expr):
                setattr(new, name, self.split(value, local))
            else:
                setattr(new, name, value)
        return ast.copy_location(new, node)

    def _split_keyword(self, kw: ast.keyword, local):
        return ast.keyword(arg=kw.arg, value=self.split(kw.value, local))

    # -- statements -------------------------------------------------------------------------------------------
    def sandbox(self, stmt: ast.stmt) -> None:
        if self.in_try:
            raise _Inside("a try block that runs program statements")
        self.release(_free_names(stmt))
        self.sandbox_reads |= _free_names(stmt)
        self.steps.append(("x", ast.unparse(stmt)))

    def judge_stmt(self, stmt: ast.stmt) -> None:
        self.body.append((len(self.steps), stmt))
        self.ever_judge.update(self.judge_values)
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.FunctionDef, ast.Import, ast.ImportFrom)):
            names = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            if isinstance(stmt, ast.FunctionDef):
                names.add(stmt.name)
            try:
                _Interpreter([], budget=_PLAN_BUDGET).stmt(stmt, self.env)
            except Exception:  # noqa: BLE001 - unknown while planning: loops over it stay unrolled no further
                for name in names:
                    self.env.pop(name, None)

    def static_value(self, node, local: frozenset = frozenset()):
        """The value of a judge-only expression while planning, or ``_UNKNOWN``."""
        if self.depends(node, local) or not self.supported(node, local):
            return _UNKNOWN
        free = {n for n in _free_names(node) if n not in _BUILTIN_TABLE and n not in _MODULES}
        if not free <= set(self.env):
            return _UNKNOWN
        try:
            value = _Interpreter([], budget=_PLAN_BUDGET).eval(node, dict(self.env))
            return list(value) if hasattr(value, "__next__") else value  # a generator: once, as a list
        except Exception:  # noqa: BLE001
            return _UNKNOWN

    def bindings(self, target, value) -> dict | None:
        """``{name: ast constant}`` for one loop item, or None when it cannot be written as a literal."""
        if isinstance(target, ast.Name):
            node = _literal_ast(value)
            return None if node is None else {target.id: node}
        if isinstance(target, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in target.elts):
            try:
                items = list(value)
            except TypeError:
                return None
            if len(items) != len(target.elts):
                return None
            out: dict = {}
            for elt, item in zip(target.elts, items):
                sub = self.bindings(elt, item)
                if sub is None:
                    return None
                out.update(sub)
            return out
        return None

    def unroll_items(self, target, iterable) -> list | None:
        """Per item of a loop over a value known while planning, the bindings of its target; None when not."""
        if iterable is _UNKNOWN or isinstance(iterable, (str, bytes)) and len(iterable) > _MAX_UNROLL:
            return None
        try:
            items = list(iterable)
        except TypeError:
            return None
        if len(items) > _MAX_UNROLL:
            return None
        self.unrolled += len(items)
        if self.unrolled > _MAX_UNROLL * 4:
            return None
        out = []
        for item in items:
            bound = self.bindings(target, item)
            if bound is None:
                return None
            out.append(bound)
        return out

    def targets(self, target) -> list[str] | None:
        if isinstance(target, ast.Name):
            return [target.id]
        if isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts):
            return [e.id for e in target.elts]
        return None


    def unroll_comprehension(self, node, local: frozenset) -> ast.expr | None:
        """``all(f(x) == y for x, y in pairs)`` over pairs known while planning: one lazily judged item per pair."""
        if len(node.generators) != 1 or node.generators[0].is_async:
            return None
        gen = node.generators[0]
        items = self.unroll_items(gen.target, self.static_value(gen.iter, local))
        if items is None:
            return None
        parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        unrolled = []
        for bound in items:
            sub = _Substitute(bound)
            conds = [self.split(sub.visit(copy.deepcopy(c)), local) for c in gen.ifs]
            unrolled.append((conds, [self.split(sub.visit(copy.deepcopy(p)), local) for p in parts]))
        kind = {ast.ListComp: "list", ast.SetComp: "set", ast.GeneratorExp: "gen", ast.DictComp: "dict"}[type(node)]
        return ast.copy_location(_Unrolled(kind=kind, items=unrolled), node)

    def release(self, names: set[str]) -> None:
        """Send deferred helper definitions that sandbox code is about to read (and those they read)."""
        todo = [n for n in names if n in self.deferred]
        while todo:
            name = todo.pop()
            fn = self.deferred.pop(name, None)
            if fn is None:
                continue
            self.sandbox_reads |= _free_names(fn)
            self.steps.append(("x", ast.unparse(fn)))
            todo.extend(n for n in _free_names(fn) if n in self.deferred)

    def _pure_block(self, stmt) -> bool:
        fn = ast.FunctionDef(name="_block_", args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                             kw_defaults=[], defaults=[]), body=[stmt], decorator_list=[], returns=None,
                             type_params=[])  # fmt: skip
        return self.pure_function(fn)

    def unbind(self, name: str) -> None:
        self.data_names.discard(name)
        self.judge_values.pop(name, None)
        self.judge_funcs.discard(name)
        self.forced.add(name)


    def comprehension(self, node, local: frozenset) -> ast.expr | None:
        """``[tuple(p) for p in f(x)]``: only the first iterable needs the program; the rest is the judge's."""
        first = node.generators[0]
        inner = local | frozenset(_bound_in(node))
        rest = [first.target, *first.ifs, *node.generators[1:]]
        rest += [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        if any(g.is_async for g in node.generators) or not all(self.supported(r, inner) for r in rest
                                                               if not isinstance(r, ast.comprehension)):
            return None
        if not all(self.supported(g.iter, inner) and all(self.supported(c, inner) for c in g.ifs)
                   for g in node.generators[1:]):
            return None
        new = copy.copy(node)
        new.generators = [ast.comprehension(target=first.target, iter=self.split(first.iter, local), ifs=first.ifs,
                                            is_async=0), *node.generators[1:]]
        return ast.copy_location(new, node)

