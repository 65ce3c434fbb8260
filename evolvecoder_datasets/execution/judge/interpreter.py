"""The judge's interpreter: a test's judge part evaluated over decoded values, never with ``eval``/``exec``.

An allowlist of nodes, builtins, modules and methods (:mod:`.language`), a step budget, and size guards on every
operation that could build a large value.
"""

from __future__ import annotations

import ast
import builtins
import collections
import copy
import functools

from .._wire_decode import CycleRef, ForeignObject, ProgramObject, Unjudged
from .expressions import _Compound
from .language import (
    _ATTRIBUTES,
    _BINOPS,
    _BUILTIN_TABLE,
    _CMPOPS,
    _MATERIALISING,
    _METHODS,
    _MODULES,
    _PROBE,
    _SINGLETONS,
    _STEP_BUDGET,
    JudgeLimit,
    _guard_binop,
    _guard_size,
    _padding_guard,
    _ProgramType,
    _result_guard,
    _same,
)
from .nodes import _Clean, _ExcInfo, _literal_ast, _Passes, _Search, _Unrolled

# ---------------------------------------------------------------------------------------------------------------


class _ProbeFailed(Exception):
    def __init__(self, status: str, message: str, chain: str = "", args: tuple | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.chain, self.raised_args = status, message, chain, args

    def as_exception(self) -> BaseException | None:
        """The exception the program raised, as the judge's ``except`` clauses see it: a class of the program's
        name under its nearest builtin base, carrying its message; None for what no ``except`` catches (a timeout,
        a crash, the sandbox's own verdicts)."""
        if self.status not in ("error", "fail") or not self.chain:
            return None
        own, *bases = self.chain.split(",")
        base = next((_BUILTIN_EXCEPTIONS[b] for b in [own, *bases] if b in _BUILTIN_EXCEPTIONS), Exception)
        text = self.message.partition(": ")[2] if ": " in self.message else ""
        args = self.raised_args
        if own != base.__name__:  # the program's class: its args as sent, its text as the sandbox printed it
            kind = _raised_class(own.rpartition(".")[2], base)
            raised = kind.__new__(kind)  # (its __init__, a builtin's, may want other arguments)
            raised.args, raised._judge_text = (text,) if args is None else args, text
            return raised
        raised = _builtin_raised(base, args) if args is not None else None
        if raised is not None and str(raised) == text:  # a builtin class prints its args: kept where they print
            return raised  # as the sandbox's text did
        try:
            return base(text)
        except Exception:  # noqa: BLE001 - an exception class that wants other arguments
            return base()


def _builtin_raised(base: type, args: tuple) -> BaseException | None:
    try:
        return base(*args)
    except Exception:  # noqa: BLE001 - an exception class that wants other arguments
        return None


_BUILTIN_EXCEPTIONS = {name: obj for name, obj in vars(builtins).items()
                       if isinstance(obj, type) and issubclass(obj, BaseException)}  # fmt: skip


@functools.lru_cache(maxsize=256)
def _raised_class(name: str, base: type) -> type:
    """A class named like the program's under its builtin base, whose text is the one the sandbox printed (the
    program's ``__str__`` ran there)."""
    return type(name if name.isidentifier() else "ProgramError", (base,), {"_judge_text": "", "__str__": _own_text})


def _own_text(raised: BaseException) -> str:
    return raised._judge_text


class _Return(Exception):
    def __init__(self, value) -> None:
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Stopped(Exception):
    """The judge reached a statement that needs a sandbox step after the set-up statement that failed there."""


_REGEX_SYNTAX = frozenset("\\.^$*+?{}[]|()")


class _Function:
    """A helper function or lambda the test defines, run by the interpreter (callable by judge builtins too)."""

    def __init__(self, interp: _Interpreter, params: list[str], defaults: list, body, env: dict, expr: bool) -> None:
        self.interp, self.params, self.defaults, self.body, self.env, self.expr = interp, params, defaults, body, env, expr

    def __call__(self, *args, **kwargs):
        if len(args) > len(self.params):
            raise TypeError("too many arguments")
        local = dict(self.env)
        bound = dict(zip(self.params, args))
        for key, value in kwargs.items():
            if key not in self.params or key in bound:
                raise TypeError(f"unexpected argument {key!r}")
            bound[key] = value
        first_default = len(self.params) - len(self.defaults)
        for i, name in enumerate(self.params):
            if name not in bound:
                if i < first_default:
                    raise TypeError(f"missing argument {name!r}")
                bound[name] = self.defaults[i - first_default]
        local.update(bound)
        if self.expr:
            return self.interp.eval(self.body, local)
        try:
            self.interp.block(self.body, local)
        except _Return as ret:
            return ret.value
        return None


_CLEAN_RESULTS: collections.OrderedDict = collections.OrderedDict()


class _Interpreter(_Compound):
    def __init__(self, probes: list, budget: int = _STEP_BUDGET) -> None:
        self.probes = probes
        self.steps = 0
        self.budget = budget
        # Identity in the sandbox of each probe's value: ``f(head) is head.next`` is a question about the program's
        # objects, which two decoded copies cannot answer by themselves.
        self.identity = {id(p[1]): p[2] for p in probes if p[0] == "v" and len(p) > 2}
        self.stopped: int | None = None  # the sandbox step where a set-up statement failed (see positioned)

    def positioned(self, items, env: dict) -> None:
        """``(position, statement)`` pairs, up to the first that needs a sandbox step after ``stopped``."""
        for position, stmt in items:
            if self.stopped is not None and position > self.stopped:
                raise _Stopped()
            self.stmt(stmt, env)

    def tick(self) -> None:
        self.steps += 1
        if self.steps > self.budget:
            raise JudgeLimit("the test takes too many steps to judge")

    # -- statements -------------------------------------------------------------------------------------------
    def block(self, stmts, env: dict) -> None:
        for stmt in stmts:
            self.stmt(stmt, env)

    def stmt(self, node, env: dict) -> None:
        self.tick()
        t = type(node)
        if t is ast.Assert:
            if not self.eval(node.test, env):
                message = ""
                if node.msg is not None:
                    try:
                        message = str(self.eval(node.msg, env))
                    except Exception:  # noqa: BLE001 - the message itself failed: keep the plain assertion
                        message = ""
                raise AssertionError(message)
        elif t is ast.Expr:
            self.eval(node.value, env)
        elif t is ast.Assign:
            value = self.eval(node.value, env)
            for target in node.targets:
                self.assign(target, value, env)
        elif t is ast.AnnAssign:
            if node.value is not None:
                self.assign(node.target, self.eval(node.value, env), env)
        elif t is ast.AugAssign:
            current = self.eval(_as_load(node.target), env)
            value = self.eval(node.value, env)
            _guard_binop(node.op, current, value)
            self.assign(node.target, _BINOPS[type(node.op)](current, value), env)
        elif t is ast.FunctionDef:
            env[node.name] = self.function(node, env)
        elif t is ast.Return:
            raise _Return(self.eval(node.value, env) if node.value is not None else None)
        elif t is ast.If:
            self.block(node.body if self.eval(node.test, env) else node.orelse, env)
        elif t is ast.For:
            for item in self.eval(node.iter, env):
                self.assign(node.target, item, env)
                if self.loop_body(node, env):
                    break
            else:
                self.block(node.orelse, env)
        elif t is ast.While:
            while self.eval(node.test, env):
                if self.loop_body(node, env):
                    break
            else:
                self.block(node.orelse, env)
        elif t is ast.Break:
            raise _Break()
        elif t is ast.Continue:
            raise _Continue()
        elif t is ast.Pass:
            pass
        elif t is ast.Try:
            self.try_stmt(node, env)
        elif t is _Passes:
            for items in node.passes:
                self.tick()
                try:
                    self.positioned(items, env)
                except _Break:
                    break
                except _Continue:
                    pass
            else:
                self.positioned(node.orelse, env)
        elif t is ast.Raise:
            exc = self.eval(node.exc, env) if node.exc is not None else AssertionError()
            if isinstance(exc, type) and issubclass(exc, BaseException):
                exc = exc()
            if not isinstance(exc, Exception):
                raise TypeError("exceptions must derive from BaseException")
            raise exc
        elif t in (ast.Import, ast.ImportFrom):
            for alias in node.names:
                if t is ast.Import:
                    env[(alias.asname or alias.name).partition(".")[0]] = _ModuleView(alias.name)
                else:
                    env[alias.asname or alias.name] = _MODULES[node.module][alias.name]
        else:  # pragma: no cover - the planner never hands other statements to the judge
            raise JudgeLimit(f"{t.__name__} is outside the judge's language")

    def try_stmt(self, node: ast.Try, env: dict) -> None:
        try:
            try:
                self.block(node.body, env)
            except (_Return, _Break, _Continue, _Stopped, JudgeLimit, Unjudged, MemoryError, RecursionError):
                raise
            except Exception as err:  # noqa: BLE001 - the program's exceptions and the test's own
                raised = err.as_exception() if isinstance(err, _ProbeFailed) else err
                if raised is None:
                    raise
                for handler in node.handlers:
                    kinds = self.eval(handler.type, env) if handler.type is not None else BaseException
                    if isinstance(raised, kinds):
                        if handler.name:
                            env[handler.name] = raised
                        self.block(handler.body, env)
                        break
                else:
                    raise
            else:
                self.block(node.orelse, env)
        finally:
            self.block(node.finalbody, env)

    def loop_body(self, node, env: dict) -> bool:
        """One pass of a loop's body; True when it breaks out of the loop."""
        self.tick()
        try:
            self.block(node.body, env)
        except _Break:
            return True
        except _Continue:
            pass
        return False

    def function(self, node, env: dict) -> _Function:
        """A helper the test defines, ``def`` or ``lambda``, closed over ``env``."""
        params = [a.arg for a in node.args.args]
        defaults = [self.eval(d, env) for d in node.args.defaults]
        return _Function(self, params, defaults, node.body, env, expr=type(node) is ast.Lambda)

    def assign(self, target, value, env: dict) -> None:
        t = type(target)
        if t is ast.Name:
            env[target.id] = value
        elif t in (ast.Tuple, ast.List):
            starred = [i for i, e in enumerate(target.elts) if isinstance(e, ast.Starred)]
            items = list(value)
            if starred:
                i = starred[0]
                after = len(target.elts) - i - 1
                if len(items) < len(target.elts) - 1:
                    raise ValueError("not enough values to unpack")
                parts = items[:i] + [items[i: len(items) - after]] + items[len(items) - after:]
                for elt, part in zip(target.elts, parts):
                    self.assign(elt.value if isinstance(elt, ast.Starred) else elt, part, env)
                return
            if len(items) != len(target.elts):
                raise ValueError(f"cannot unpack {len(items)} values into {len(target.elts)}")
            for elt, item in zip(target.elts, items):
                self.assign(elt, item, env)
        elif t is ast.Subscript:
            container = self.eval(target.value, env)
            _check_data(container)
            container[self.eval(target.slice, env)] = value
        else:
            raise JudgeLimit(f"assignment to {t.__name__} is outside the judge's language")

    # -- expressions ------------------------------------------------------------------------------------------
    def eval(self, node, env: dict):
        """The value of an expression: the commonest kinds here, the others by :data:`_EVALUATORS`."""
        self.tick()
        t = type(node)
        if t is ast.Constant:
            return node.value
        if t is ast.Name:
            name = node.id
            if name.startswith(_PROBE):
                entry = self.probes[int(name[len(_PROBE):])]
                if entry[0] == "v":
                    return entry[1]
                raise _ProbeFailed(*entry[1:])
            if name in env:
                return env[name]
            if name in _BUILTIN_TABLE:
                return _BUILTIN_TABLE[name]
            if name in _MODULES:
                return _ModuleView(name)
            raise NameError(f"name {name!r} is not defined")
        if t is ast.Compare:
            left = self.eval(node.left, env)
            for op, comparator in zip(node.ops, node.comparators):
                right = self.eval(comparator, env)
                kind = type(op)
                if kind is ast.Is or kind is ast.IsNot:
                    if self.same(left, right) != (kind is ast.Is):
                        return False
                elif not _CMPOPS[kind](left, right):
                    return False
                left = right
            return True
        if t is ast.BoolOp:
            is_and = type(node.op) is ast.And
            value = None
            for operand in node.values:
                value = self.eval(operand, env)
                if bool(value) != is_and:
                    return value
            return value
        if t is ast.UnaryOp:
            operand = self.eval(node.operand, env)
            op = type(node.op)
            if op is ast.Not:
                return not operand
            if op is ast.USub:
                return -operand
            if op is ast.UAdd:
                return +operand
            return ~operand
        if t is ast.BinOp:
            left, right = self.eval(node.left, env), self.eval(node.right, env)
            _guard_binop(node.op, left, right)
            return _BINOPS[type(node.op)](left, right)
        if t is ast.IfExp:
            return self.eval(node.body if self.eval(node.test, env) else node.orelse, env)
        if t in (ast.Tuple, ast.List, ast.Set):
            items = []
            for elt in node.elts:
                if type(elt) is ast.Starred:
                    items.extend(self.eval(elt.value, env))
                else:
                    items.append(self.eval(elt, env))
            return tuple(items) if t is ast.Tuple else items if t is ast.List else set(items)
        if t is ast.Subscript:
            value = self.eval(node.value, env)
            _check_data(value)
            return value[self.eval(node.slice, env)]
        if t is ast.Attribute:
            return self.attribute(self.eval(node.value, env), node.attr)
        if t is ast.Call:
            func = self.eval(node.func, env)
            args = []
            for a in node.args:
                if type(a) is ast.Starred:
                    args.extend(self.eval(a.value, env))
                else:
                    args.append(self.eval(a, env))
            if args and type(args[0]) is range and func in _MATERIALISING:
                _guard_size(len(args[0]))
            kwargs = {}
            for kw in node.keywords:
                if kw.arg is None:
                    kwargs.update(self.eval(kw.value, env))
                else:
                    kwargs[kw.arg] = self.eval(kw.value, env)
            return func(*args, **kwargs)
        evaluate = _EVALUATORS.get(t)
        if evaluate is None:
            raise JudgeLimit(f"{t.__name__} is outside the judge's language")
        return evaluate(self, node, env)

    clean = None  # set by judge(): runs a helper call in a process that never ran program code
    # (what a test's own part evaluated to, by test source and expression, is kept in _CLEAN_RESULTS: the same for
    # every program judged against the test, so one clean process serves a group of completions)

    def clean_call(self, node: _Clean, env: dict):
        args = [self.eval(a, env) for a in node.args]
        keywords = [(k.arg, self.eval(k.value, env)) for k in node.keywords]
        parts = [_literal_ast(v) for v in args] + [_literal_ast(v) for _, v in keywords]
        if any(p is None for p in parts) or self.clean is None:
            raise JudgeLimit(f"{node.func}() on values that cannot be handed to a clean process")
        call = ast.Call(func=ast.parse(node.func, mode="eval").body, args=parts[: len(args)],
                        keywords=[ast.keyword(arg=k, value=p) for (k, _), p in zip(keywords, parts[len(args):])])
        expression = ast.unparse(ast.fix_missing_locations(call))
        key = (node.imports, expression) if not args and not keywords else None  # a part of the test's own
        entry = _CLEAN_RESULTS.get(key) if key is not None else None
        if entry is None:
            entry = self.clean(node.imports, expression)
            if key is not None and (entry[0] == "v" or entry[1:2] in (("error",), ("fail",))):
                _CLEAN_RESULTS[key] = entry
                if len(_CLEAN_RESULTS) > 4096:
                    _CLEAN_RESULTS.popitem(last=False)
        else:
            _CLEAN_RESULTS.move_to_end(key)
            entry = copy.deepcopy(entry)  # the judge's operations may change what it holds
        if entry[0] == "v":
            return entry[1]
        raise _ProbeFailed(*entry[1:])

    def search(self, pattern, text) -> bool:
        """``re.search(pattern, text) is not None``, as ``pytest.raises(match=...)`` asks. A pattern with no regular
        expression syntax is a substring test here; any other runs in a clean sandbox process, where a catastrophic
        pattern costs that process its time limit, never the caller's."""
        if type(pattern) is not str or type(text) is not str:
            raise TypeError("match= takes a pattern string")
        if not _REGEX_SYNTAX.intersection(pattern):
            return pattern in text
        if self.clean is None:
            raise JudgeLimit("a match= pattern with regular expression syntax needs a clean process")
        entry = self.clean("import re", f"re.search({pattern!r}, {text!r}) is not None")
        if entry[0] == "v" and type(entry[1]) is bool:
            return entry[1]
        if entry[0] == "v":
            raise JudgeLimit("the pattern search returned no truth value")
        raise _ProbeFailed(*entry[1:])

    def raised_match(self, node: _Search, env: dict) -> bool:
        """``pytest.raises(match=...)``'s check: :meth:`search` of the evaluated pattern in the exception's text."""
        return self.search(self.eval(node.pattern, env), self.eval(node.text, env))

    def same(self, a, b) -> bool:
        """``is``: sandbox identities when both sides are probe values, else :func:`_same`."""
        ida, idb = self.identity.get(id(a)), self.identity.get(id(b))
        if ida is not None and idb is not None and type(a) not in _SINGLETONS and type(b) not in _SINGLETONS:
            return ida == idb
        return _same(a, b)

    def unrolled(self, node: _Unrolled, env: dict):
        def items():
            for conds, parts in node.items:
                self.tick()
                if all(self.eval(c, env) for c in conds):
                    yield [self.eval(p, env) for p in parts]

        if node.kind == "gen":  # lazy, as a generator is: all()/any() stop where Python would
            return (parts[0] for parts in items())
        if node.kind == "dict":
            return {k: v for k, v in items()}
        values = [parts[0] for parts in items()]
        return set(values) if node.kind == "set" else values

    def attribute(self, value, attr: str):
        if type(value) is _ModuleView:
            return value.get(attr)
        if type(value) is ProgramObject:
            if "__getattribute__" in value.own:  # its class answers value.x (or a property hides the field)
                raise Unjudged(f"{value.name}.{attr} is read by the program's own code, which the judge does not run")
            if attr in value.fields:
                return value.fields[attr]
            raise AttributeError(f"{value.name} object has no data attribute {attr!r} (its methods stay in the sandbox)")
        if isinstance(value, BaseException) and attr == "args":  # a raised exception's, as the sandbox sent them
            return value.args
        if type(value) is _ProgramType and attr == "__name__":
            return value.__name__
        if isinstance(value, type) and attr == "__name__":
            return value.__name__
        kind = type(value)
        if attr in _METHODS.get(kind, ()):
            method = getattr(value, attr)
            if attr in ("zfill", "center", "ljust", "rjust"):
                return _padding_guard(method)
            if attr in ("replace", "join", "expandtabs"):
                return _result_guard(method)
            return method
        if attr in _ATTRIBUTES.get(kind, ()):
            return getattr(value, attr)
        if isinstance(value, tuple) and attr in getattr(kind, "_fields", ()):  # a named tuple the wire rebuilt
            return getattr(value, attr)
        if isinstance(value, tuple) and attr in ("count", "index"):
            return getattr(value, attr)
        if kind in (dict, collections.Counter) and attr in _METHODS[dict]:
            return getattr(value, attr)
        raise AttributeError(f"{kind.__name__!s} value has no attribute {attr!r} in the judge's language")


def _check_data(value) -> None:
    if type(value) in (ProgramObject, ForeignObject, CycleRef, _ModuleView):
        raise TypeError(f"{value!r} cannot be indexed by the judge")


class _ModuleView:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def get(self, attr: str):
        table = _MODULES.get(self.name) or {}
        if attr not in table:
            raise AttributeError(f"{self.name}.{attr} is outside the judge's language")
        return table[attr]


def _as_load(target):
    if isinstance(target, ast.Name):
        return ast.Name(id=target.id, ctx=ast.Load())
    if isinstance(target, ast.Subscript):
        return ast.Subscript(value=target.value, slice=target.slice, ctx=ast.Load())
    raise JudgeLimit("augmented assignment to this target is outside the judge's language")


#: The expression kinds :meth:`_Interpreter.eval` does not evaluate in its own body, each with the method that does
#: (one dict lookup per node of these kinds; a kind in neither is outside the judge's language).
_EVALUATORS = {
    ast.Dict: _Interpreter.dict_display,
    ast.Slice: _Interpreter.slice_value,
    ast.Lambda: _Interpreter.function,
    ast.ListComp: _Interpreter.comprehension,
    ast.SetComp: _Interpreter.comprehension,
    ast.GeneratorExp: _Interpreter.comprehension,
    ast.DictComp: _Interpreter.comprehension,
    _Unrolled: _Interpreter.unrolled,
    _Clean: _Interpreter.clean_call,
    ast.NamedExpr: _Interpreter.named,
    _Search: _Interpreter.raised_match,
    _ExcInfo: _Interpreter.exc_info,
    ast.JoinedStr: _Interpreter.joined,
    ast.FormattedValue: _Interpreter.formatted,
}
