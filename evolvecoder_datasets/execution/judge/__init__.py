"""The judge: decides every verdict in a process that never runs program code (the execution service's judge
processes, never the caller's).

A test is model-written Python, and the program under test is hostile until proven otherwise. So a test is split
before anything runs (:func:`plan_test`):

* **probes** — the maximal subexpressions that need the program (``f(x)``, ``Solution().two_sum(nums, 9)``, a
  name the program or the test's set-up code bound) plus the set-up statements that feed them. Only these go to the
  sandbox. They hold the *inputs* of the test, never its expected side.
* **the judge's part** — the assert itself, the expected values, the comparisons, tolerances, ``sorted``/``set``/
  ``abs``/``math.isclose`` and any helper function the test defines from such pieces. It runs here, in a small
  interpreter of an allowlisted expression language over the values the probes send back (decoded by
  :mod:`._wire`, strict and bounded: no pickle, nothing callable).

A test that cannot be split that way (a program call per item of a value only the program knows, a program
statement in a block the judge may skip) is *inside*: it runs whole in the sandbox with the older in-process hardening, and its report says so
(:attr:`ExecutionReport.judged`). :func:`outside_share` counts how many tests of a suite are judged outside.

Example:
    >>> plan = plan_test("assert sorted(f([3, 1])) == [1, 3]")
    >>> plan.outside, plan.steps
    (True, [('p', 'f([3, 1])')])
    >>> judge(plan, encode_entries([("v", [3, 1])]))
    ('pass', '')
    >>> judge(plan, encode_entries([("v", [3, 2])]))
    ('fail', 'AssertionError')

Layout: :mod:`.language` (what the judge's language allows), :mod:`.nodes` (a plan and its judge-only nodes),
:mod:`.syntax` (AST helpers), :mod:`.planner` and :mod:`.statements` (the split of a test's expressions and
statements), :mod:`.plan` (:func:`plan_test`, :func:`outside_share`), :mod:`.interpreter` and
:mod:`.expressions` (the judge's part, evaluated: the hot expression kinds inline, the rarer ones by a table),
:mod:`.owned` (the names and statements of a test that no program name reaches), :mod:`.verdict` (the sandbox's
report read, and :func:`judge`).
"""

from __future__ import annotations

from .language import JUDGED_INSIDE, JUDGED_OUTSIDE
from .plan import outside_share, plan_test
from .verdict import encode_entries, judge, read_entries

__all__ = ["plan_test", "judge", "encode_entries", "read_entries", "outside_share", "JUDGED_OUTSIDE", "JUDGED_INSIDE"]
