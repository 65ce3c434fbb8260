"""The planner's statement side: where each statement of a test runs (sandbox set-up, judge, written out)."""

from __future__ import annotations

import ast
import copy

from ...code_names import pytest_raises_item
from .language import _METHOD_NAMES, _MODULES, _PROBE
from .nodes import _MAX_UNROLL, _UNKNOWN, _ExcInfo, _Inside, _literal_ast, _Passes, _Search
from .planner import _ExpressionPlanner, _LoopFrame, _TryFrame
from .syntax import _bound_in, _DropAnnotations, _free_names, _substituted


class _Jump(Exception):
    """A ``break``/``continue`` reached on every path while a loop is written out: the planner follows it."""

    def __init__(self, is_break: bool) -> None:
        super().__init__()
        self.is_break = is_break


def _stores(nodes) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)
            and isinstance(n.ctx, (ast.Store, ast.Del))}  # fmt: skip


def _jumps_out(stmt) -> bool:
    """Whether ``stmt`` holds a ``break``/``continue`` of a loop around it (not one of a loop inside it)."""
    todo = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Break, ast.Continue)):
            return True
        if isinstance(node, (ast.For, ast.While)) and node is not stmt:
            todo.extend(node.orelse)  # (a break in the else of an inner loop is the outer loop's)
        elif isinstance(node, (ast.For, ast.While)):  # (``stmt`` itself: its body's jumps are its own)
            todo.extend(node.orelse)
        elif isinstance(node, ast.stmt) and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            todo.extend(n for n in ast.iter_child_nodes(node) if isinstance(n, (ast.stmt, ast.excepthandler)))
        elif isinstance(node, ast.excepthandler):
            todo.extend(node.body)
    return False


def _exits(stmt) -> bool:
    """Whether ``stmt`` returns or yields (from the test's top level, only inside a helper that is not inlined)."""
    return any(isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom)) for n in ast.walk(stmt))


class _Planner(_ExpressionPlanner):
    def statement(self, stmt: ast.stmt) -> None:
        """Plan one statement of the test: a simple one by its kind (:data:`_STATEMENTS`), any other as a block."""
        handler = _STATEMENTS.get(type(stmt))
        if handler is None:
            self.plan_block(stmt)
        else:
            handler(self, stmt)

    def plan_import(self, stmt) -> None:
        """``import m`` / ``from m import f``: the judge's own module, a name it may read, or the sandbox's."""
        for alias in stmt.names:
            bound = (alias.asname or alias.name).partition(".")[0]
            one = copy.copy(stmt)
            one.names = [alias]
            self.deferred[bound] = one  # reaches the sandbox only if its code reads the name
            judge_ok = isinstance(stmt, ast.Import) and alias.name in _MODULES and bound not in self.forced
            if isinstance(stmt, ast.ImportFrom) and stmt.module in _MODULES and stmt.level == 0 \
                    and alias.name in (_MODULES[stmt.module] or {}) and bound not in self.forced:  # fmt: skip
                self.judge_values[bound] = stmt
                self.judge_funcs.add(bound)
                self.judge_stmt(ast.copy_location(ast.ImportFrom(module=stmt.module, names=[alias], level=0), stmt))
            elif judge_ok:
                self.modules.add(bound)
            else:
                self.modules.discard(bound)
                self.judge_values.pop(bound, None)
                self.forced.add(bound)
                if stmt.level == 0 if isinstance(stmt, ast.ImportFrom) else True:
                    one = copy.copy(stmt)
                    one.names = [alias]
                    self.imported[bound] = ast.unparse(one)

    def plan_assert(self, stmt: ast.Assert) -> None:
        """``assert``: the judge's, with its program part split into probes."""
        test = self.split(stmt.test)
        msg = stmt.msg if stmt.msg is not None and self.supported(stmt.msg) else None
        self.judge_stmt(ast.copy_location(ast.Assert(test=test, msg=msg), stmt))

    def plan_def(self, stmt: ast.FunctionDef) -> None:
        """``def``: a helper of the judge's when it is pure, else one the sandbox gets when its code calls it."""
        if not getattr(stmt, "_plain", False):  # in place, once: the tree is this plan's own
            stmt = _DropAnnotations().visit(stmt)
            stmt._plain = True
        if stmt.name not in self.forced and self.pure_function(stmt):
            self.judge_values[stmt.name] = stmt
            self.judge_funcs.add(stmt.name)
            self.judge_stmt(stmt)
        else:
            # Sent to the sandbox only when its code calls it: a ``check(candidate)`` that the test calls once
            # is inlined instead, and its expected values stay here.
            self.unbind(stmt.name)
            self.deferred[stmt.name] = stmt

    def plan_assign(self, stmt) -> None:
        """``x = ...`` (plain or annotated): bound by the judge, as a probe, or in the sandbox."""
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        value = stmt.value
        if value is None:
            return
        names = [self.targets(t) for t in targets]
        if len(targets) == 1 and names[0] and isinstance(value, (ast.Tuple, ast.List)) and \
                isinstance(targets[0], (ast.Tuple, ast.List)) and len(names[0]) == len(value.elts) and \
                not any(isinstance(e, ast.Starred) for e in value.elts):  # fmt: skip
            for name, part in zip(names[0], value.elts):  # a, b = (1, [2]): one binding each
                self.statement(ast.copy_location(
                    ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=part), stmt))
            return
        flat = [n for group in names if group for n in group]
        if all(names) and not self.depends(value) and self.supported(value) and not (set(flat) & self.forced):
            for name in flat:
                self.judge_values[name] = stmt
                self.judge_funcs.discard(name)
            if isinstance(value, ast.Lambda) and len(flat) == 1:  # ref = lambda n: 2 * n: a helper like a def
                self.judge_funcs.add(flat[0])
            self.judge_stmt(stmt)
            return
        judged_here = self.conditional or self.try_frame is not None
        # r = f(x) in a try or a branch: the judge binds the value (a program object, ``Thing()``, keeps its
        # methods only where it lives: the sandbox binds it, below)
        program_object = isinstance(value, (ast.Call, ast.Name)) and not self._value_like(value)
        if all(names) and judged_here and not set(flat) & self.forced and not program_object:
            split = self.split(value)
            if self.at_try_top():
                self.try_setter(split, discard=False)
            self.judge_stmt(ast.copy_location(ast.Assign(targets=targets, value=split), stmt))
            for name in flat:
                self.bind_judge(name)
            return
        if self.at_try_top() and not self.try_frame.judged and len(flat) == 1 and len(targets) == 1 \
                and isinstance(targets[0], ast.Name):  # fmt: skip
            # obj = Thing(bad) in a try body, read later by the program: bound in the sandbox by a walrus
            self.unbind(flat[0])
            walrus = ast.NamedExpr(target=ast.Name(id=flat[0], ctx=ast.Store()), value=value)
            self.judge_stmt(ast.copy_location(ast.Expr(value=self.probe(walrus, setter=True, discard=True)),
                                              stmt))  # fmt: skip
            return
        if all(names):
            for name in flat:
                self.unbind(name)
            if self._value_like(value):
                self.data_names.update(flat)
            self.sandbox(stmt)
            return
        self.plan_store(stmt, targets, value)

    def plan_store(self, stmt, targets: list, value) -> None:
        """``a[0] = ...``, ``obj.attr = ...``: where the container lives decides."""
        bases = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        if bases and all(self.known(b) for b in bases) and self.supported(value):
            self.judge_stmt(stmt)
            return
        target = targets[0]
        if (self.at_try_top() and not self.try_frame.judged and len(targets) == 1
                and type(target) is ast.Attribute and not any(self.known(b) for b in bases)
                and not _free_names(value) & set(self.judge_values)):  # fmt: skip
            # obj.low = 2 in a try body (a validator that refuses it): the assignment as a probe whose error the
            # judge catches; its value holds nothing of the judge's
            store = ast.Call(func=ast.Name(id="setattr", ctx=ast.Load()),
                             args=[target.value, ast.Constant(target.attr), value], keywords=[])  # fmt: skip
            self.judge_stmt(ast.copy_location(ast.Expr(value=self.probe(ast.copy_location(store, stmt),
                                                                        setter=True, discard=True)), stmt))
            return
        self.sandbox(stmt)

    def plan_augassign(self, stmt: ast.AugAssign) -> None:
        """``x += ...``: the judge's accumulator when it holds the name, else the sandbox's."""
        target = stmt.target
        if isinstance(target, ast.Name) and self.known(target.id) and self.supported(stmt.value):
            self.judge_stmt(stmt)
        elif isinstance(target, ast.Name) and target.id in self.judge_values and target.id not in self.forced:
            # total += f(x): the judge's own accumulator, the program's part a probe
            self.judge_stmt(ast.copy_location(ast.AugAssign(target=target, op=stmt.op,
                                                            value=self.split(stmt.value)), stmt))  # fmt: skip
        else:
            if isinstance(target, ast.Name):
                self.unbind(target.id)
            self.sandbox(stmt)

    def plan_expr(self, stmt: ast.Expr) -> None:
        """An expression statement: an inlined helper call, the judge's, a try body's probe, or the sandbox's."""
        value = stmt.value
        if isinstance(value, ast.Constant):
            return  # a docstring or a bare constant
        inlined = self.inline(value)
        if inlined is not None:
            self.inlining += 1
            if self.inlining > 8:
                raise _Inside("helpers nested too deeply to inline")
            for inner in inlined:
                self.statement(inner)
            self.inlining -= 1
            return
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in self.judge_funcs:
            self.judge_stmt(ast.copy_location(ast.Expr(value=self.split(value)), stmt))
            return
        func = value.func if isinstance(value, ast.Call) else None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.attr in _METHOD_NAMES \
                and func.value.id in self.judge_values and func.value.id not in self.forced:  # fmt: skip
            # seen.append(g(x)): a builtin method of the judge's own value, the program's part a probe
            self.judge_stmt(ast.copy_location(ast.Expr(value=self.split(value)), stmt))
            return
        clean = self.clean_call(value, frozenset()) if isinstance(value, ast.Call) else None
        if clean is not None:  # unittest.TestCase().assertEqual(f(1), 3), np.testing.assert_allclose(...)
            self.judge_stmt(ast.copy_location(ast.Expr(value=clean), stmt))
            return
        if self.depends(value) and self.at_try_top() and not self.try_frame.judged:
            # parse('x') in a try body: a probe whose error the judge catches
            self.judge_stmt(ast.copy_location(ast.Expr(value=self.probe(value, setter=True, discard=True)),
                                              stmt))  # fmt: skip
        elif self.depends(value):
            self.sandbox(stmt)
        elif self.supported(value):
            self.judge_stmt(stmt)
        else:
            raise _Inside("a statement outside the judge's language")

    def plan_pass(self, stmt: ast.Pass) -> None:
        """``pass``: nothing to plan."""

    def plan_block(self, stmt: ast.stmt) -> None:
        """A compound statement (``if``, loops, ``try``, ``with``, ``raise``, classes): the judge's, written out, or
        the sandbox's."""
        if isinstance(stmt, ast.Raise) and self._pure_block(stmt):
            self.judge_stmt(stmt)
            return
        if isinstance(stmt, ast.With):
            stmt = self.raises_as_try(stmt) or stmt
        if isinstance(stmt, ast.Try) and self.attempt(lambda: self.plan_try(stmt)):
            return
        has_assert = any(isinstance(s, (ast.Assert, ast.Raise)) for s in ast.walk(stmt))
        jumps = bool(self.loops) and _jumps_out(stmt)
        if jumps and not isinstance(stmt, (ast.If, ast.For, ast.While)):
            raise _Inside("a break or continue in a block the judge cannot follow")
        own = frozenset(_bound_in(stmt)) - self.forced  # (what the block binds itself, unless the program's)
        if isinstance(stmt, (ast.If, ast.For, ast.While)) and not jumps and not self.depends(stmt, own) and \
                self._pure_block(stmt):  # fmt: skip
            self.judge_stmt(stmt)
            return
        # a block that checks, jumps, or updates the judge's own values (total += f(x)) is the judge's to plan
        mine = has_assert or jumps or isinstance(stmt, (ast.For, ast.While, ast.If)) and any(
            type(n) is ast.Name and n.id in self.judge_values and n.id not in self.judge_funcs for n in ast.walk(stmt))
        if isinstance(stmt, ast.For) and mine and not _exits(stmt) and (
                self.attempt(lambda: self.judge_loop(stmt)) or self.attempt(lambda: self.unroll_loop(stmt))):
            return
        if isinstance(stmt, ast.While) and mine and not _exits(stmt) and (
                self.attempt(lambda: self.unroll_while(stmt)) or self.attempt(lambda: self.judge_loop(stmt))):
            return
        judge_only = has_assert or jumps or self.conditional or self.try_frame is not None
        if isinstance(stmt, ast.If) and (mine or judge_only):
            condition = self.static_value(stmt.test)
            if condition is not _UNKNOWN:
                for inner in stmt.body if condition else stmt.orelse:
                    self.statement(inner)
                return
            if self.attempt(lambda: self.plan_if(stmt)):
                return
            if judge_only:  # no sandbox to fall back on: planned again, to fail with its own reason
                self.plan_if(stmt)
        if has_assert or jumps:
            raise _Inside(f"a {type(stmt).__name__.lower()} block with asserts that call the program")
        for name in _bound_in(stmt) | ({stmt.name} if isinstance(stmt, (ast.ClassDef, ast.AsyncFunctionDef)) else set()):
            self.unbind(name)
        self.sandbox(stmt)

    def plan_if(self, stmt: ast.If) -> bool:
        """``if f(3) != 9: raise AssertionError(...)``: the condition's program part is a probe, both branches are the
        judge's (their probes run whether or not the branch is taken, as values; no set-up statement may)."""
        test = self.split(stmt.test)
        body, orelse = self.guarded(stmt.body), self.guarded(stmt.orelse)
        self.judge_stmt(ast.copy_location(ast.If(test=test, body=body, orelse=orelse), stmt))
        return True

    def at_try_top(self) -> bool:
        """Whether the statement being planned is one the judge always runs once its try body gets there."""
        frame = self.try_frame
        return frame is not None and frame.exact and self.guard == frame.level and not any(
            loop.dynamic for loop in self.loops)  # fmt: skip

    def try_setter(self, split, *, discard: bool) -> None:
        """A try body's statement whose whole value is one probe: its error, if any, ends the body in the sandbox."""
        if type(split) is ast.Name and split.id.startswith(_PROBE):
            k = int(split.id[len(_PROBE):])
            self.steps[k] = ("p", self.try_frame.render(k, setter=True, discard=discard))
        else:
            self.try_frame.judged = True

    def guarded(self, stmts: list) -> list:
        """Plan ``stmts`` as a block the judge may skip: no set-up statement, program calls only as probes."""
        saved, self.body = self.body, []
        self.guard += 1
        try:
            for inner in stmts:
                self.statement(inner)
            return [s for _, s in self.body]
        finally:
            self.body = saved
            self.guard -= 1

    def jump(self, stmt) -> None:
        frame = self.loops[-1] if self.loops else None
        if frame is None:
            raise _Inside("a break or continue outside a loop the judge writes out")
        if not frame.native and self.guard == frame.guard and not frame.dynamic:
            raise _Jump(type(stmt) is ast.Break)
        frame.dynamic = not frame.native
        self.judge_stmt(stmt)

    def judge_loop(self, stmt) -> bool:
        """``for x in f(3): assert x > 0``, ``while i < len(r): ...``: the judge runs the loop itself. Its header and
        body may read the program's values only by name (one probe, the same on every pass): a program call would
        have to run once per pass, which only writing the loop out can do."""
        bound = frozenset(_stores([stmt]))
        saved_inv = self.invariant
        frame = _LoopFrame(guard=self.guard + 1, native=True)
        try:
            if isinstance(stmt, ast.For):
                iterable = self.split(stmt.iter)
                self.invariant = (saved_inv or frozenset()) | bound
                test = None
            else:
                self.invariant = (saved_inv or frozenset()) | bound
                test = self.split(stmt.test)
            for name in sorted(bound):
                self.bind_judge(name)
            self.loops.append(frame)
            body = self.guarded(stmt.body)
            self.loops.pop()
            self.invariant = saved_inv
            orelse = self.guarded(stmt.orelse)
        finally:
            if self.loops and self.loops[-1] is frame:
                self.loops.pop()
            self.invariant = saved_inv
        if test is None:
            loop = ast.For(target=stmt.target, iter=iterable, body=body, orelse=orelse, type_comment=None)
        else:
            loop = ast.While(test=test, body=body, orelse=orelse)
        self.judge_stmt(ast.copy_location(loop, stmt))
        return True

    def unroll_loop(self, stmt: ast.For) -> bool:
        """``for x, want in [(2, 4), (3, 9)]: assert f(x) == want`` as one copy of the body per item.

        Only over a value the judge knows while planning (a literal, a range, ``itertools.product`` of those, a
        binding of its own), with a body that does not rebind the loop's names: then the loop's inputs go to the
        sandbox inside the probes, and its expected values stay here. A ``break``/``continue`` that every path
        reaches is followed here; one under a condition the judge decides at run time makes the copies a
        :class:`_Passes`, which the judge runs as a loop (and no set-up statement may follow it inside the loop).
        """
        if _stores([stmt.target]) & _stores(stmt.body):
            return False
        items = self.unroll_items(stmt.target, self.static_value(stmt.iter))
        if items is None:
            return False
        start, outer = len(self.steps), self.body
        frame = _LoopFrame(guard=self.guard)
        passes: list = []
        broke = False
        self.loops.append(frame)
        try:
            for bound in items:
                self.body = []
                passes.append(self.body)
                try:
                    for inner in stmt.body:
                        self.statement(_substituted(inner, bound))
                except _Jump as jump:
                    if jump.is_break:
                        broke = True
                        break
        finally:
            self.loops.pop()
            self.body = outer
        if not frame.dynamic:  # every pass runs whole: the copies are the loop
            for items_of_pass in passes:
                self.body.extend(items_of_pass)
            if not broke:  # (without a break, a for loop's else always runs: it follows the copies)
                for inner in stmt.orelse:
                    self.statement(inner)
            return True
        self.body = []
        self.guard += 1
        try:
            for inner in stmt.orelse:
                self.statement(inner)
            orelse = self.body
        finally:
            self.body = outer
            self.guard -= 1
        self.body.append((start, ast.copy_location(_Passes(passes=passes, orelse=orelse), stmt)))
        self.ever_judge.update(self.judge_values)
        return True

    def raises_as_try(self, stmt: ast.With) -> ast.Try | None:
        """``with pytest.raises(E, match=p) as info: body`` as ``try: body / except E as e: [info = ...]
        [assert re.search(p, str(e))] / else: raise AssertionError``."""
        found = pytest_raises_item(stmt)
        if found is None:
            return None
        call, var = found
        keywords = {k.arg: k.value for k in call.keywords}
        if None in keywords or set(keywords) - {"match", "expected_exception"} or var is not None and not \
                isinstance(var, ast.Name):  # fmt: skip
            return None
        kinds = [*call.args, *([keywords["expected_exception"]] if "expected_exception" in keywords else [])]
        if len(kinds) != 1:
            return None
        caught = "\x00exc"  # a name no test can spell
        body: list = []
        if var is not None:
            exc = _ExcInfo(exc=ast.Name(id=caught, ctx=ast.Load()))
            body.append(ast.Assign(targets=[ast.Name(id=var.id, ctx=ast.Store())], value=exc))
        if "match" in keywords:
            text = ast.Call(func=ast.Name(id="str", ctx=ast.Load()), args=[ast.Name(id=caught, ctx=ast.Load())],
                            keywords=[])  # fmt: skip
            body.append(ast.Assert(test=_Search(pattern=keywords["match"], text=text),
                                   msg=ast.Constant("Regex pattern did not match.")))  # fmt: skip
        fail = ast.Raise(exc=ast.Call(func=ast.Name(id="AssertionError", ctx=ast.Load()),
                                      args=[ast.Constant("DID NOT RAISE")], keywords=[]), cause=None)
        handler = ast.ExceptHandler(type=kinds[0], name=caught, body=body or [ast.Pass()])
        return ast.fix_missing_locations(
            ast.copy_location(ast.Try(body=stmt.body, handlers=[handler], orelse=[fail], finalbody=[]), stmt))

    def plan_try(self, stmt: ast.Try) -> bool:
        """``try: f(bad) / except ValueError: pass / else: assert False``: the calls in the body become probes, the
        judge runs the try with the program's exceptions as values of the program's class name under its nearest
        builtin base. The body's probes carry a flag in the sandbox (see :class:`_TryFrame`), so a program statement
        of the body (``obj = Thing(bad)``, ``obj.run()``) runs there only where Python would run it; handlers,
        else and finally are blocks the judge may skip."""
        if self.try_frame is not None or any(h.type is not None and not self.supported(h.type) for h in stmt.handlers):
            return False
        self.tries += 1
        frame = _TryFrame(flag=f"_judge_try{self.tries}", level=self.guard + 1, exact=not self.conditional)
        self.try_frame = frame
        try:
            body = self.guarded(stmt.body)
        finally:
            self.try_frame = None
        if not body:
            return False
        handlers = []
        for handler in stmt.handlers:  # its name (except E as e) is the judge's own value in its body
            if handler.name:
                self.bind_judge(handler.name)
            handlers.append(ast.copy_location(ast.ExceptHandler(type=handler.type, name=handler.name,
                                                                body=self.guarded(handler.body) or [ast.Pass()]),
                                              handler))  # fmt: skip
        orelse, finalbody = self.guarded(stmt.orelse), self.guarded(stmt.finalbody)
        self.judge_stmt(ast.copy_location(ast.Try(body=body, handlers=handlers, orelse=orelse,
                                                  finalbody=finalbody), stmt))  # fmt: skip
        return True

    def unroll_while(self, stmt: ast.While) -> bool:
        """``x = 1; while x < 4: assert f(x) == x * x; x += 1``: a loop whose condition the judge can follow while
        planning (it reads only the judge's own bindings, which the body updates) is written out pass by pass. A
        ``break``/``continue`` is followed where every path reaches it; one the judge decides at run time would
        leave the planner's values behind the judge's, so such a loop is not written out (run by the caller via
        :meth:`attempt`, which undoes a loop it could not follow to its end)."""
        if stmt.orelse or self.depends(stmt.test) or self.static_value(stmt.test) is _UNKNOWN:
            return False
        frame = _LoopFrame(guard=self.guard)
        self.loops.append(frame)
        try:
            for _ in range(_MAX_UNROLL):
                condition = self.static_value(stmt.test)
                if condition is _UNKNOWN:
                    return False
                if not condition:
                    return True
                self.unrolled += 1
                if self.unrolled > _MAX_UNROLL * 4:
                    return False
                try:
                    for inner in stmt.body:
                        # the judge's own names, as this pass sees them, written in (so probes carry values)
                        known = {n: _literal_ast(self.env[n]) for n in _free_names(inner) if n in self.env
                                 and n in self.judge_values and not isinstance(self.judge_values[n], ast.FunctionDef)}
                        if any(v is None for v in known.values()):
                            return False
                        self.statement(_substituted(inner, known))
                        if frame.dynamic:
                            return False
                except _Jump as jump:
                    if jump.is_break:
                        return True
            return False
        finally:
            self.loops.pop()

    def inline(self, call) -> list | None:
        """The body of a deferred test helper called as a statement with plain arguments, parameters substituted.

        Its result is dropped (a statement), so a final ``return <value>`` is evaluated as an expression; a helper
        it defines itself stays a helper, provided it does not rebind the outer parameters being substituted.
        """
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in self.deferred):
            return None
        fn = self.deferred[call.func.id]
        if not isinstance(fn, ast.FunctionDef):
            return None
        params = [a.arg for a in fn.args.args]
        if call.keywords or fn.decorator_list or fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs or \
                len(call.args) != len(params) or fn.args.defaults:  # fmt: skip
            return None
        if not all(isinstance(a, (ast.Name, ast.Constant)) for a in call.args):
            return None
        body = list(fn.body)
        if body and isinstance(body[-1], ast.Return):
            last = body.pop()
            if last.value is not None and not isinstance(last.value, ast.Constant):
                body.append(ast.copy_location(ast.Expr(value=last.value), last))
        todo = list(body)
        while todo:  # this helper's own statements and expressions (nested helpers: only what they bind)
            sub = todo.pop()
            if isinstance(sub, (ast.FunctionDef, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                                ast.GeneratorExp)):  # fmt: skip
                if _bound_in(sub) & set(params) or isinstance(sub, ast.FunctionDef) and sub.name in params:
                    return None
                if isinstance(sub, (ast.FunctionDef, ast.Lambda)):
                    continue
            if isinstance(sub, (ast.Return, ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.AsyncFunctionDef,
                                ast.ClassDef)):  # fmt: skip
                return None
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)) and sub.id in params:
                return None
            todo.extend(ast.iter_child_nodes(sub))
        mapping = dict(zip(params, call.args))
        return [_substituted(s, mapping) for s in body]


_STATEMENTS = {  # the statement kinds planned by a method of their own (any other is a block, see plan_block)
    ast.Import: _Planner.plan_import,
    ast.ImportFrom: _Planner.plan_import,
    ast.Assert: _Planner.plan_assert,
    ast.FunctionDef: _Planner.plan_def,
    ast.Assign: _Planner.plan_assign,
    ast.AnnAssign: _Planner.plan_assign,
    ast.AugAssign: _Planner.plan_augassign,
    ast.Expr: _Planner.plan_expr,
    ast.Pass: _Planner.plan_pass,
    ast.Break: _Planner.jump,
    ast.Continue: _Planner.jump,
}
