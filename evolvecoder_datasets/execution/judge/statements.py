"""The planner's statement side: where each statement of a test runs (sandbox set-up, judge, written out)."""

from __future__ import annotations

import ast
import copy

from .language import _MODULES
from .nodes import _MAX_UNROLL, _UNKNOWN, _Inside, _literal_ast
from .planner import _ExpressionPlanner
from .syntax import _bound_in, _DropAnnotations, _free_names, _Substitute


class _Planner(_ExpressionPlanner):
    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
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
            return
        if isinstance(stmt, ast.Assert):
            test = self.split(stmt.test)
            msg = stmt.msg if stmt.msg is not None and self.supported(stmt.msg) else None
            self.judge_stmt(ast.copy_location(ast.Assert(test=test, msg=msg), stmt))
            return
        if isinstance(stmt, ast.FunctionDef):
            stmt = _DropAnnotations().visit(stmt)  # in place: idempotent, and the tree is this plan's own
            if stmt.name not in self.forced and self.pure_function(stmt):
                self.judge_values[stmt.name] = stmt
                self.judge_funcs.add(stmt.name)
                self.judge_stmt(stmt)
            else:
                # Sent to the sandbox only when its code calls it: a ``check(candidate)`` that the test calls once
                # is inlined instead, and its expected values stay here.
                self.unbind(stmt.name)
                self.deferred[stmt.name] = stmt
            return
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
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
            if all(names) and self.in_try and not set(flat) & self.forced:  # r = f(x) inside try: judged here
                self.judge_stmt(ast.copy_location(ast.Assign(targets=targets, value=self.split(value)), stmt))
                for name in flat:
                    self.judge_values[name] = stmt
                    self.ever_judge.add(name)
                return
            if all(names):
                for name in flat:
                    self.unbind(name)
                if self._value_like(value):
                    self.data_names.update(flat)
                self.sandbox(stmt)
                return
            # a[0] = ..., obj.attr = ...: where the container lives decides
            bases = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            if bases and all(self.known(b) for b in bases) and self.supported(value):
                self.judge_stmt(stmt)
            else:
                self.sandbox(stmt)
            return
        if isinstance(stmt, ast.AugAssign):
            target = stmt.target
            if isinstance(target, ast.Name) and self.known(target.id) and self.supported(stmt.value):
                self.judge_stmt(stmt)
            else:
                if isinstance(target, ast.Name):
                    self.unbind(target.id)
                self.sandbox(stmt)
            return
        if isinstance(stmt, ast.Expr):
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
            clean = self.clean_call(value, frozenset()) if isinstance(value, ast.Call) else None
            if clean is not None:  # unittest.TestCase().assertEqual(f(1), 3), np.testing.assert_allclose(...)
                self.judge_stmt(ast.copy_location(ast.Expr(value=clean), stmt))
                return
            if self.depends(value) and self.in_try:  # parse('x') inside try: a probe whose error the judge catches
                self.judge_stmt(ast.copy_location(ast.Expr(value=self.split(value)), stmt))
            elif self.depends(value):
                self.sandbox(stmt)
            elif self.supported(value):
                self.judge_stmt(stmt)
            else:
                raise _Inside("a statement outside the judge's language")
            return
        if isinstance(stmt, ast.Pass):
            return
        if isinstance(stmt, ast.Raise) and self._pure_block(stmt):
            self.judge_stmt(stmt)
            return
        if isinstance(stmt, ast.With):
            stmt = self.raises_as_try(stmt) or stmt
        if isinstance(stmt, ast.Try) and self.plan_try(stmt):
            return
        has_assert = any(isinstance(s, (ast.Assert, ast.Raise)) for s in ast.walk(stmt))
        if isinstance(stmt, (ast.If, ast.For, ast.While)) and not self.depends(stmt) and self._pure_block(stmt):
            self.judge_stmt(stmt)
            return
        if isinstance(stmt, ast.For) and has_assert and self.unroll_loop(stmt):
            return
        if isinstance(stmt, ast.While) and has_assert and self.unroll_while(stmt):
            return
        if isinstance(stmt, ast.If) and has_assert and self.depends(stmt.test) and all(
                self._pure_block(s) for s in (*stmt.body, *stmt.orelse)):  # fmt: skip
            # if f(3) != 9: raise AssertionError(...): the condition's program part is a probe, the rest is ours
            self.judge_stmt(ast.copy_location(ast.If(test=self.split(stmt.test), body=stmt.body,
                                                     orelse=stmt.orelse), stmt))  # fmt: skip
            return
        if isinstance(stmt, ast.If) and has_assert:
            condition = self.static_value(stmt.test)
            if condition is not _UNKNOWN:
                for inner in stmt.body if condition else stmt.orelse:
                    self.statement(inner)
                return
        if has_assert:
            raise _Inside(f"a {type(stmt).__name__.lower()} block with asserts that call the program")
        for name in _bound_in(stmt) | ({stmt.name} if isinstance(stmt, (ast.ClassDef, ast.AsyncFunctionDef)) else set()):
            self.unbind(name)
        self.sandbox(stmt)

    def unroll_loop(self, stmt: ast.For) -> bool:
        """``for x, want in [(2, 4), (3, 9)]: assert f(x) == want`` as one copy of the body per item.

        Only over a value the judge knows while planning (a literal, a range, a binding of its own), with a body
        that neither rebinds the loop's names nor breaks out: then the loop's inputs go to the sandbox inside the
        probes, and its expected values stay here.
        """
        if any(isinstance(n, (ast.Break, ast.Continue, ast.Return, ast.Yield, ast.YieldFrom)) for n in ast.walk(stmt)):
            return False  # (without a break, a for loop's else always runs: it follows the copies)
        targets = {n.id for n in ast.walk(stmt.target) if isinstance(n, ast.Name)}
        assigned = {n.id for s in stmt.body for n in ast.walk(s) if isinstance(n, ast.Name)
                    and isinstance(n.ctx, (ast.Store, ast.Del))}  # fmt: skip
        if targets & assigned:
            return False
        items = self.unroll_items(stmt.target, self.static_value(stmt.iter))
        if items is None:
            return False
        for bound in items:
            for inner in stmt.body:
                self.statement(_Substitute(bound).visit(copy.deepcopy(inner)))
        for inner in stmt.orelse:
            self.statement(inner)
        return True

    def raises_as_try(self, stmt: ast.With) -> ast.Try | None:
        """``with pytest.raises(E): body`` as ``try: body / except E: pass / else: raise AssertionError``."""
        if len(stmt.items) != 1 or stmt.items[0].optional_vars is not None:
            return None
        call = stmt.items[0].context_expr
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "raises"
                and isinstance(call.func.value, ast.Name) and call.func.value.id == "pytest"
                and len(call.args) == 1 and not call.keywords):  # match= would need a regex on the program's text
            return None
        fail = ast.Raise(exc=ast.Call(func=ast.Name(id="AssertionError", ctx=ast.Load()),
                                      args=[ast.Constant("DID NOT RAISE")], keywords=[]), cause=None)
        handler = ast.ExceptHandler(type=call.args[0], name=None, body=[ast.Pass()])
        return ast.copy_location(ast.Try(body=stmt.body, handlers=[handler], orelse=[fail], finalbody=[]), stmt)

    def plan_try(self, stmt: ast.Try) -> bool:
        """``try: f(bad) / except ValueError: pass / else: assert False``: the calls in the body become probes (the
        sandbox records what they raised and goes on), the judge runs the try with the program's exceptions as
        values of the program's class name under its nearest builtin base. Handlers, else and finally must be the
        judge's own code; the body may not run program statements whose effects the sandbox would need."""
        for handler in stmt.handlers:
            if handler.type is not None and not self.supported(handler.type):
                return False
        if not all(self._pure_block(s) for s in (*stmt.orelse, *stmt.finalbody)):
            return False
        for handler in stmt.handlers:  # its name (except E as e) is the judge's own value in its body
            params = [ast.arg(arg=handler.name)] if handler.name else []
            fn = ast.FunctionDef(name="_handler_", args=ast.arguments(posonlyargs=[], args=params, kwonlyargs=[],
                                 kw_defaults=[], defaults=[]), body=handler.body, decorator_list=[], returns=None,
                                 type_params=[])  # fmt: skip
            if not self.pure_function(fn):
                return False
        saved_body, saved_try = self.body, self.in_try
        self.body, self.in_try = [], True
        try:
            for inner in stmt.body:
                self.statement(inner)
            body = [s for _, s in self.body]
        except _Inside:
            self.body, self.in_try = saved_body, saved_try
            raise
        self.body, self.in_try = saved_body, saved_try
        if not body:
            return False
        self.judge_stmt(ast.copy_location(ast.Try(body=body, handlers=stmt.handlers, orelse=stmt.orelse,
                                                  finalbody=stmt.finalbody), stmt))  # fmt: skip
        return True

    def unroll_while(self, stmt: ast.While) -> bool:
        """``x = 1; while x < 4: assert f(x) == x * x; x += 1``: a loop whose condition the judge can follow while
        planning (it reads only the judge's own bindings, which the body updates) is written out pass by pass."""
        if stmt.orelse or any(isinstance(n, (ast.Break, ast.Continue, ast.Return)) for n in ast.walk(stmt)):
            return False
        if self.depends(stmt.test) or self.static_value(stmt.test) is _UNKNOWN:
            return False
        start, steps, env = len(self.body), len(self.steps), dict(self.env)
        snapshot = (set(self.judge_values), set(self.forced), set(self.judge_funcs))
        for _ in range(_MAX_UNROLL):
            condition = self.static_value(stmt.test)
            if condition is _UNKNOWN:
                break
            if not condition:
                return True
            self.unrolled += 1
            if self.unrolled > _MAX_UNROLL * 4:
                break
            for inner in stmt.body:
                # the judge's own names, as this pass sees them, written in (so probes carry values, not names)
                known = {n: _literal_ast(self.env[n]) for n in _free_names(inner) if n in self.env
                         and n in self.judge_values and not isinstance(self.judge_values[n], ast.FunctionDef)}
                if any(v is None for v in known.values()):
                    break
                self.statement(_Substitute(known).visit(copy.deepcopy(inner)))
            else:
                continue
            break
        # Could not follow it to the end: undo what was written out; the loop runs whole inside.
        del self.body[start:]
        del self.steps[steps:]
        self.env = env
        self.judge_values = {k: v for k, v in self.judge_values.items() if k in snapshot[0]}
        self.forced, self.judge_funcs = snapshot[1], snapshot[2]
        return False

    def inline(self, call) -> list | None:
        """The body of a deferred test helper called as a statement with plain arguments, parameters substituted."""
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
        for sub in ast.walk(fn):
            if sub is not fn and isinstance(sub, (ast.Return, ast.FunctionDef, ast.Lambda, ast.Global, ast.Nonlocal,
                                                 ast.Yield, ast.YieldFrom)):  # fmt: skip
                if not (isinstance(sub, ast.Return) and sub.value is None):
                    return None
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store) and sub.id in params:
                return None
        mapping = dict(zip(params, call.args))
        return [_Substitute(mapping).visit(copy.deepcopy(s)) for s in fn.body if not isinstance(s, ast.Return)]

