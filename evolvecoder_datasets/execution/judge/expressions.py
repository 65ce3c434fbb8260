"""The judge interpreter's compound expressions: dict displays, slices, f-strings, the walrus, comprehensions, and
what ``pytest.raises(...) as info`` binds.

:class:`_Compound` is mixed into :class:`.interpreter._Interpreter`, whose ``eval`` hands these kinds over through
its dispatch table (``interpreter._EVALUATORS``); each evaluates its parts with that ``eval``, so every part is a
step of the test's budget, as it always was.
"""

from __future__ import annotations

import ast

from .._wire_decode import ProgramObject


class _Compound:
    """Mixed into :class:`.interpreter._Interpreter`: the expression kinds its ``eval`` reaches by its table."""

    def dict_display(self, node: ast.Dict, env: dict) -> dict:
        """``{k: v, **more}``: each key and value in order, a ``**`` part merged where it stands."""
        out = {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                out.update(self.eval(value, env))
            else:
                out[self.eval(key, env)] = self.eval(value, env)
        return out

    def slice_value(self, node: ast.Slice, env: dict) -> slice:
        """``lower:upper:step`` in a subscript, as a ``slice`` of its evaluated bounds."""
        return slice(*(self.eval(p, env) if p is not None else None for p in (node.lower, node.upper, node.step)))

    def named(self, node: ast.NamedExpr, env: dict):
        """``(y := value)``: binds ``y`` in ``env`` and is the value."""
        value = env[node.target.id] = self.eval(node.value, env)
        return value

    def exc_info(self, node, env: dict) -> ProgramObject:
        """What ``pytest.raises(E) as info`` binds: the exception as ``info.value``, its class as ``info.type``."""
        exc = self.eval(node.exc, env)
        return ProgramObject("ExceptionInfo", (("value", exc), ("type", type(exc)),
                                               ("typename", type(exc).__name__)))  # fmt: skip

    def joined(self, node: ast.JoinedStr, env: dict) -> str:
        """An f-string: the text of each of its parts, joined."""
        return "".join(str(self.eval(v, env)) for v in node.values)

    def formatted(self, node: ast.FormattedValue, env: dict) -> str:
        """One ``{value!conversion:spec}`` of an f-string."""
        value = self.eval(node.value, env)
        if node.conversion == ord("r"):
            value = repr(value)
        elif node.conversion == ord("s"):
            value = str(value)
        elif node.conversion == ord("a"):
            value = ascii(value)
        spec = self.eval(node.format_spec, env) if node.format_spec is not None else ""
        return format(value, spec)

    def comprehension(self, node, env: dict):
        """A list, set or dict comprehension or a generator expression, item by item (a walrus inside binds in
        ``env``, as in Python)."""
        if type(node) is ast.GeneratorExp:
            return self.lazy_generator(node, env)
        local = dict(env)
        t = type(node)
        if t is ast.DictComp:  # the key, then the value, as Python evaluates them
            out = dict(self._produced(node, local, lambda: (self.eval(node.key, local), self.eval(node.value, local))))
        else:
            items = list(self._produced(node, local, lambda: self.eval(node.elt, local)))
            out = set(items) if t is ast.SetComp else items
        for sub in ast.walk(node):  # a walrus in a comprehension binds in the enclosing scope, as in Python
            if type(sub) is ast.NamedExpr and sub.target.id in local:
                env[sub.target.id] = local[sub.target.id]
        return out

    def lazy_generator(self, node: ast.GeneratorExp, env: dict):
        """A generator expression, item by item as it is read (``all(x < 10 for x in naturals())`` stops at the
        first false item, as in Python, and reads no further into an iterator the program returned)."""
        local = dict(env)
        bound = [sub.target.id for sub in ast.walk(node) if type(sub) is ast.NamedExpr]

        def item():
            value = self.eval(node.elt, local)
            for name in bound:  # a walrus inside binds in the enclosing scope, as in Python
                if name in local:
                    env[name] = local[name]
            return value

        return self._produced(node, local, item)

    def _produced(self, node, local: dict, make):
        """What ``make()`` gives at each innermost step of a comprehension's ``for``/``if`` clauses, as it is read
        (the clauses bind their targets in ``local``)."""

        def items(i: int):
            if i == len(node.generators):
                self.tick()
                yield make()
                return
            gen = node.generators[i]
            for item in self.eval(gen.iter, local):
                self.tick()
                self.assign(gen.target, item, local)
                if all(self.eval(cond, local) for cond in gen.ifs):
                    yield from items(i + 1)

        return items(0)
