"""Planning entry points: :func:`plan_test` (one test, cached) and :func:`outside_share` (a suite)."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable

from ..._parse import parse
from .language import MAX_MESSAGE
from .nodes import TestPlan, _Inside
from .statements import _Planner
from .syntax import _FREE_CACHE
from .owned import owned_by_test, unshadowed_builtins


def _plan(source: str, tree: ast.Module) -> TestPlan:
    forced: set[str] = set()
    names, sources, unshadowed = *owned_by_test(tree), unshadowed_builtins(tree)
    for _ in range(8):
        planner = _Planner(set(forced))
        planner.test_names, planner.test_sources, planner.test_builtins = names, tuple(sources), unshadowed
        for i, stmt in enumerate(tree.body):
            planner.top = i
            planner.statement(stmt)
        # Judge-side bindings that the sandbox's code reads must live there too: re-plan with them forced there.
        need = {n for n in planner.sandbox_reads if n in planner.ever_judge} - forced
        if not need:
            if not planner.body:
                raise _Inside("no assert to judge")
            return TestPlan(source, True, planner.steps, planner.body)
        forced |= need
    raise _Inside("test bindings shared between the judge and the program")


@functools.lru_cache(maxsize=8192)
def plan_test(source: str) -> TestPlan:
    """Split one test into the program's part (sandbox steps) and the judge's part. Never raises.

    Example:
        >>> plan_test("assert abs(area(2) - 12.566) < 1e-3").steps
        [('p', 'area(2)')]
        >>> plan_test("for i in range(3):\\n    assert f(i) == i").steps
        [('p', 'f(0)'), ('p', 'f(1)'), ('p', 'f(2)')]
        >>> plan_test("for x in f(3):\\n    assert g(x) == x").outside
        False
        >>> plan_test("assert f(").invalid is not None
        True
    """
    try:
        tree = parse(source, "<test>", "exec")
        compile(tree, "<test>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError) as err:
        return TestPlan(source, False, invalid=f"test does not parse: {type(err).__name__}: {err}"[:MAX_MESSAGE])
    try:
        return _plan(source, tree)
    except _Inside as why:
        return TestPlan(source, False, reason=str(why))
    except RecursionError:
        return TestPlan(source, False, reason="test too deeply nested to split")
    finally:
        _FREE_CACHE.clear()


def outside_share(tests: Iterable[str]) -> float:
    """Fraction of ``tests`` whose verdict the judge decides outside the sandbox.

    Example:
        >>> outside_share(["assert f(1) == 2", "for x in f(2):\\n    assert g(x)"])
        0.5
    """
    tests = list(tests)
    return sum(plan_test(t).outside for t in tests) / len(tests) if tests else 1.0


# ---------------------------------------------------------------------------------------------------------------
# The interpreter: the judge's part, evaluated over decoded values.
