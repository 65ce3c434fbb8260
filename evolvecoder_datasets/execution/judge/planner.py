"""The planner's expression side: which names are the judge's, and how an expression is split into probes.

A probe is a maximal subexpression that needs the program; it is sent to the sandbox as source and replaced, in
the judge's copy of the test, by a name no source code can spell (``_PROBE`` + its index).
"""

from __future__ import annotations

import ast
import copy
import itertools
from dataclasses import dataclass, field

from .interpreter import _Interpreter
from .language import _BUILTIN_ATTRIBUTES, _BUILTIN_TABLE, _JUDGE_NAMES, _METHOD_NAMES, _MODULES, _PROBE, JudgeLimit
from .nodes import _MAX_UNROLL, _PLAN_BUDGET, _UNKNOWN, _Clean, _Inside, _literal_ast, _Unrolled
from .syntax import (
    _OPERATOR_NODES,
    _SUPPORTED_EXPR,
    _SUPPORTED_STMT,
    _bound_in,
    _free_names,
    _names,
    _substituted,
)

_IMMUTABLE = (int, float, complex, bool, str, bytes, type(None), range)
_WALRUS = ast.Pass()  # what judge_values holds for a name the judge binds inside an expression or a loop header


@dataclass
class _LoopFrame:
    """A loop being planned. ``guard``: the planner's guard depth at its passes; ``native``: the judge runs the loop
    itself (a break is its own); ``dynamic``: a break or continue that the judge decides at run time was planned."""

    guard: int
    native: bool = False
    dynamic: bool = False


@dataclass
class _TryFrame:
    """A try body being planned. Its probes run in the sandbox behind a flag: once a statement of the body that the
    judge always evaluates has raised there (a *setter*), the rest of the body is skipped in the sandbox as it is
    in Python, so a set-up statement after it does not run either."""

    flag: str
    level: int  # the planner's guard depth in the body: statements at it run unless an earlier one raised
    exact: bool  # the try itself always runs (not in a branch or pass the judge may skip)
    first: int | None = None  # the body's first step, which sets the flag
    judged: bool = False  # a judge statement of the body came first: a program statement may not follow it
    raw: dict = field(default_factory=dict)

    def render(self, k: int, *, setter: bool, discard: bool = False) -> str:
        src, flag, first = self.raw[k], self.flag, k == self.first
        if setter:
            body = f"(({flag} := 1), ({src}), ({flag} := 0))[{2 if discard else 1}]"
            return body if first else f"None if {flag} else {body}"
        return f"(({flag} := 0), ({src}))[1]" if first else f"None if {flag} else ({src})"


def _PROBE_PREFIXED(names) -> bool:  # noqa: N802 - a name the planner made (a probe's value) is no test name
    return any(n.startswith(_PROBE) for n in names)


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
        self.unrolled = 0
        # Where the judge decides control flow at run time, the sandbox cannot follow it: it runs every probe in
        # order (a probe is a value, evaluated eagerly as ``and``/``or`` operands are) but no set-up statement.
        self.guard = 0  # depth of blocks the judge may skip (a branch on a program value, a try body, a loop)
        self.settled = False  # a loop exit the judge decides was planned: no set-up statement may follow
        self.loops: list[_LoopFrame] = []  # loops being written out, innermost last
        self.try_frame: _TryFrame | None = None  # the try body being planned, whose probes carry a flag
        self.invariant: frozenset | None = None  # names a loop the judge runs binds: probes may not read them
        self.tries = 0

    def snapshot(self) -> tuple:
        """The planner's state, to try one way of planning and fall back to another."""
        return (len(self.steps), list(self.body), dict(self.judge_values), set(self.ever_judge),
                set(self.judge_funcs), set(self.modules), set(self.sandbox_reads), set(self.data_names),
                dict(self.deferred), dict(self.imported), dict(self.env), set(self.forced), self.settled,
                self.unrolled, self.tries, self.try_frame.first if self.try_frame else None)  # fmt: skip

    def restore(self, saved: tuple) -> None:
        (steps, body, self.judge_values, self.ever_judge, self.judge_funcs, self.modules, self.sandbox_reads,
         self.data_names, self.deferred, self.imported, self.env, self.forced, self.settled, self.unrolled,
         self.tries, first) = saved  # fmt: skip
        if self.try_frame is not None:
            self.try_frame.first = first
        del self.steps[steps:]
        self.body[:] = body

    def attempt(self, plan) -> bool:
        """Run ``plan()``; when it answers False or raises :class:`_Inside`, undo what it planned; answer which."""
        saved = self.snapshot()
        try:
            if plan():
                return True
        except _Inside:
            pass
        self.restore(saved)
        return False

    @property
    def conditional(self) -> bool:
        """Whether the statement being planned may not run (the judge decides, at run time, whether it does)."""
        return self.guard > 0 or any(frame.dynamic for frame in self.loops)

    def bind_judge(self, name: str) -> None:
        """``name`` is bound by the judge at a point only known at run time (a walrus, a loop target)."""
        if name in self.forced:
            raise _Inside(f"{name!r} is bound by the judge and read by the program")
        self.judge_values[name] = _WALRUS
        self.ever_judge.add(name)
        self.judge_funcs.discard(name)
        self.data_names.discard(name)
        self.env.pop(name, None)

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
        calls = []
        for sub in ast.walk(fn):
            if sub is fn:
                continue
            if isinstance(sub, ast.stmt):
                if not isinstance(sub, _SUPPORTED_STMT):
                    return False
            elif isinstance(sub, ast.expr):
                if not isinstance(sub, _SUPPORTED_EXPR):
                    return False
                if type(sub) is ast.Attribute and sub.attr.startswith("__") and sub.attr != "__name__":
                    return False
                if type(sub) is ast.Call:
                    calls.append(sub)
        if not all(self.known(name, local) for name in _names(fn)[0]):
            return False
        return all(self.callable_in_judge(call.func, local) for call in calls)

    # -- probes -------------------------------------------------------------------------------------------------
    test_names: frozenset = frozenset()  # names only the test's own code reaches (see owned.py)
    test_sources: tuple = ()  # (index, source) of the test's own top-level statements
    test_builtins: frozenset = frozenset()  # the builtins the test never rebinds
    top = 0  # index of the top-level statement being planned

    def test_part(self, node) -> ast.expr | None:
        """A part the judge's language cannot evaluate that reads none of the program's names (``ref(10)`` of an
        ``@lru_cache`` helper, ``heapq.nsmallest(2, xs)``, ``bytearray(b"ab")``, a name a ``while`` loop bound): an
        expected side. It runs in a fresh sandbox process that executed only the test's own statements before this
        one, never where the program is (a probe there would be the program's claim)."""
        free = _free_names(node)
        if not free <= self.test_names | self.test_builtins or _PROBE_PREFIXED(free):
            return None
        source = "\n".join(src for i, src in self.test_sources if i < self.top)
        return ast.copy_location(_Clean(imports=source, func=f"(lambda: {ast.unparse(node)})", args=[],
                                        keywords=[]), node)  # fmt: skip

    def probe(self, node, *, setter: bool = False, discard: bool = False) -> ast.expr:
        if not setter and not discard:
            part = self.test_part(node)
            if part is not None:
                return part
        if self.invariant is not None and not (type(node) is ast.Name and node.id not in self.invariant):
            raise _Inside("a program call inside a loop the judge runs over values known only at run time")
        src = ast.unparse(node)
        frame = self.try_frame
        if frame is not None:
            k = len(self.steps)
            frame.first = k if frame.first is None else frame.first
            frame.raw[k] = src
            src = frame.render(k, setter=setter, discard=discard)
        self.release(_free_names(node))
        self.sandbox_reads |= _free_names(node)
        k = len(self.steps)
        self.steps.append(("p", src))
        return ast.copy_location(ast.Name(id=f"{_PROBE}{k}", ctx=ast.Load()), node)

    def split(self, node, local: frozenset = frozenset()) -> ast.expr:
        """The judge's expression for ``node``, with program-dependent subexpressions replaced by probes."""
        if type(node) is ast.NamedExpr:  # (y := f(3)) == 4 and y > 0: bound by the judge, or where it is read
            name = node.target.id
            if name in self.forced:
                return self.probe(node)
            value = self.split(node.value, local)
            self.bind_judge(name)
            return ast.copy_location(ast.NamedExpr(target=node.target, value=value), node)
        if not local and type(node) is not ast.Name and self.depends(node, local):
            part = self.test_part(node)  # the largest part of the test's own that the judge cannot evaluate
            if part is not None:
                return part
        if not self.depends(node, local):
            if self.supported(node, local):
                for sub in ast.walk(node):  # a walrus in a comprehension binds in the enclosing scope
                    if type(sub) is ast.NamedExpr and sub.target.id not in local:
                        self.bind_judge(sub.target.id)
                return node
            raise _Inside(f"outside the judge's language: {ast.unparse(node)[:80]}")
        if isinstance(node, _OPERATOR_NODES):
            return self._split_children(node, local)
        if isinstance(node, ast.Call):
            handed = [a for a in [*node.args, *(k.value for k in node.keywords)] if isinstance(a, ast.Name)
                      and not self.known(a.id, local) and a.id not in self.data_names]  # fmt: skip
            if handed:  # map(double, xs), sorted(xs, key=double): the program's function runs where it lives
                return self.probe(node)
            if (type(node.func) is ast.Name and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2
                    and not node.keywords and self.depends(node.args[1], local)):  # fmt: skip
                # isinstance(obj, Base) with the program's class: its metaclass answers in Python too, and the
                # judge holds no class hierarchy of the program's
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
            if node.attr not in _BUILTIN_ATTRIBUTES and not local:
                # result.output of an object the program handed back (a property, a slot, a library's class):
                # read where it lives, as Python would; the judge reads builtin values' own attributes itself
                return self.probe(node)
            return ast.copy_location(ast.Attribute(value=self.split(node.value, local), attr=node.attr,
                                                   ctx=ast.Load()), node)  # fmt: skip
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            split: list = []
            if self.attempt(lambda: split.append(self.comprehension(node, local)) or split[-1] is not None):
                return split[-1]
            split.append(self.unroll_comprehension(node, local))
            if split[-1] is not None:
                return split[-1]
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp, ast.Lambda,
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
        if isinstance(node, ast.Name):  # what the program returned, or the judge's own value
            return node.id in self.data_names or node.id in self.judge_values and node.id not in self.forced \
                and node.id not in self.judge_funcs
        return isinstance(node, (ast.Subscript, ast.BinOp, ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set,
                                 ast.JoinedStr, ast.ListComp, ast.SetComp, ast.DictComp))  # fmt: skip

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
        if self.conditional or self.try_frame is not None:
            raise _Inside("a program statement in a block the judge may skip")
        if self.settled:
            raise _Inside("a program statement after a loop exit the judge decides")
        self.release(_free_names(stmt))
        self.sandbox_reads |= _free_names(stmt)
        self.steps.append(("x", ast.unparse(stmt)))

    def judge_stmt(self, stmt: ast.stmt) -> None:
        self.body.append((len(self.steps), stmt))
        frame = self.try_frame
        if frame is not None and self.guard == frame.level:
            value = getattr(stmt, "value", None)
            if not (type(stmt) in (ast.Expr, ast.Assign) and type(value) is ast.Name and value.id.startswith(_PROBE)):
                frame.judged = True
        self.ever_judge.update(self.judge_values)
        if not self.conditional:  # the judge's own code, run while planning: its values feed loops written out
            try:
                _Interpreter([], budget=_PLAN_BUDGET).stmt(stmt, self.env)
                return
            except Exception:  # noqa: BLE001 - it reads a probe, or fails: what it touched is unknown
                pass
        self.forget(stmt)

    def forget(self, stmt) -> None:
        """Drop from the planning values what ``stmt`` binds or could mutate (``xs.append(f(1))``)."""
        loaded, bound, _ = _names(stmt)
        names = set(bound) | ({stmt.name} if isinstance(stmt, ast.FunctionDef) else set())
        names.update(n for n in loaded if n in self.env and type(self.env[n]) not in _IMMUTABLE)
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
            items = list(itertools.islice(iterable, _MAX_UNROLL + 1))
        except (TypeError, JudgeLimit):
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
            conds = [self.split(_substituted(c, bound), local) for c in gen.ifs]
            unrolled.append((conds, [self.split(_substituted(p, bound), local) for p in parts]))
        kind = {ast.ListComp: "list", ast.SetComp: "set", ast.GeneratorExp: "gen", ast.DictComp: "dict"}[type(node)]
        return ast.copy_location(_Unrolled(kind=kind, items=unrolled), node)

    def release(self, names: set[str]) -> None:
        """Send deferred helper definitions that sandbox code is about to read (and those they read), each after
        the ones it reads: a decorator, a default or a base class is evaluated where the definition runs
        (``from functools import lru_cache`` goes before the ``@lru_cache`` function it decorates)."""
        stack = [(n, False) for n in sorted(names, reverse=True) if n in self.deferred]
        taken: set[str] = set()
        while stack:
            name, ready = stack.pop()
            fn = self.deferred.get(name)
            if fn is None:
                continue
            if ready:
                del self.deferred[name]
                self.sandbox_reads |= _free_names(fn)
                self.steps.append(("x", ast.unparse(fn)))
                continue
            if name in taken:  # already on its way (a helper that reads itself, or two that read each other)
                continue
            taken.add(name)
            stack.append((name, True))
            stack.extend((n, False) for n in sorted(_free_names(fn), reverse=True) if n in self.deferred and n not in taken)

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
        """``[tuple(p) for p in f(x)]``, ``all(w in f(x) for w in words)``: the judge runs the comprehension; the
        first iterable is split once, and the rest may read the program's values only by name (a probe of a name
        is the same on every pass; a call would not be)."""
        if any(g.is_async for g in node.generators):
            return None
        first = node.generators[0]
        # a walrus inside binds in the enclosing scope (the judge's), never in the comprehension's
        walrus = {sub.target.id for sub in ast.walk(node) if type(sub) is ast.NamedExpr}
        bound = frozenset(_bound_in(node)) - walrus
        inner = local | bound
        iterable = self.split(first.iter, local)
        saved, self.invariant = self.invariant, (self.invariant or frozenset()) | bound
        try:
            generators = [ast.comprehension(target=first.target, iter=iterable,
                                            ifs=[self.split(c, inner) for c in first.ifs], is_async=0)]
            for gen in node.generators[1:]:
                generators.append(ast.comprehension(target=gen.target, iter=self.split(gen.iter, inner),
                                                    ifs=[self.split(c, inner) for c in gen.ifs], is_async=0))
            new = copy.copy(node)
            new.generators = generators
            if isinstance(node, ast.DictComp):
                new.key, new.value = self.split(node.key, inner), self.split(node.value, inner)
            else:
                new.elt = self.split(node.elt, inner)
        finally:
            self.invariant = saved
        return ast.copy_location(new, node)

