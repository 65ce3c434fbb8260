"""Each problem's domain during a round, and the gate every new test passes: its inputs must lie inside it.

At a problem's first round its domain is derived (:func:`~evolvecoder_datasets.search.domain.problem_domain`: the
precondition shipped with its statement, else the shape its round-0 asserts show) and recorded in the ``domain``
column; later rounds read it back, so it never drifts with the tests the rounds add. The problem's own seed asserts
are judged by it then: one whose inputs the statement excludes is dropped from the suite and reported (the log's
``domain`` entry, ``seed_violations`` in the cell), never kept silently. Every writer's new tests then pass
:func:`admitted_tests` before they join a suite: the inputs of every call of the problem's function must be literal
and admitted, by the shape here and by a precondition in the sandbox (never in this process).

Example:
    >>> from evolvecoder_datasets.stages.support.domains import calls_in
    >>> calls_in("assert f(1, [2]) == 3 and f(0, []) == 0", "f"), calls_in("assert f(x) == 1", "f")
    ([(1, [2]), (0, [])], None)
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

from ...code_names import defined_names
from ...search.calls import CallShape, call_callee, literal_args, recover_call
from ...search.domain import Domain, infer_domain
from ...search.probes import ProbeProgram
from ...sources.constraints import constraints_precondition
from ...sources.statement_domains import statement_contract

__all__ = ["admitted_tests", "calls_in", "count_rules", "derive_domain", "problem_domain"]

#: Methods whose tests are the problem's own (round 0): their inputs define an inferred domain.
SEED_METHODS = ("seed", "refine", "unknown")


def calls_in(test: str, callee: str) -> list[tuple] | None:
    """The literal argument tuples of every call of ``callee`` in ``test`` (arithmetic on number literals counts:
    HumanEval writes ``is_multiply_prime(3 * 5 * 7)``), or ``None`` when one of them is not literal (it cannot be
    checked against a domain) or the test does not parse.

    Example:
        >>> calls_in("assert Solution().f(2) == 4", "Solution().f"), calls_in("assert g(3 * 5 * 7, -2 ** 3)", "g")
        ([(2,)], [(105, -8)])
    """
    try:
        tree = ast.parse(test)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and call_callee(node) == callee:
            args = literal_args(node)
            if args is None:
                args = _folded_args(node)
            if args is None:
                return None
            found.append(args)
    return found


_FOLD = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
         ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}


def _folded(node: ast.AST) -> Any:
    """The value of arithmetic on number literals (``3 * 5 * 7``, ``-2 ** 31``, ``10 ** 9 + 7``; small powers only)."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _folded(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp):
        left, right = _folded(node.left), _folded(node.right)
        if isinstance(node.op, ast.Pow) and type(right) is int and 0 <= right <= 64 and abs(left) <= 10**6:
            return left ** right
        if type(node.op) in _FOLD:
            return _FOLD[type(node.op)](left, right)
    raise ValueError("not arithmetic on literals")


def _folded_args(node: ast.Call) -> tuple | None:
    """A call's arguments where each is a literal or arithmetic on number literals, else ``None``."""
    if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
        return None
    out = []
    for arg in node.args:
        try:
            out.append(ast.literal_eval(arg))
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            try:
                out.append(_folded(arg))
            except (ValueError, TypeError, ArithmeticError, RecursionError):
                return None
    return tuple(out)


def count_rules(counts: dict[str, int], more: dict[str, int]) -> dict[str, int]:
    """``counts`` plus ``more``, rule by rule (a new dict).

    Example:
        >>> count_rules({"sign": 1}, {"sign": 2, "type": 1})
        {'sign': 3, 'type': 1}
    """
    out = dict(counts)
    for rule, n in more.items():
        out[rule] = out.get(rule, 0) + int(n)
    return out


def problem_domain(problem_id: str, seeds: Sequence[Sequence[Any]], *, source_contract: str | None = None,
                   question: str | None = None) -> Domain:
    """A problem's domain: the precondition its statement gives (``source_contract``, else the one shipped for its
    id: :func:`~evolvecoder_datasets.sources.statement_domains.statement_contract`), else one read from the
    ``Constraints:`` block of its ``question`` (how ``"constraints"``:
    :func:`~evolvecoder_datasets.sources.constraints.constraints_precondition`), else the shape its seeds show.

    Example:
        >>> problem_domain("HumanEval_39", [(1,), (2,)]).how
        'statement'
        >>> problem_domain("MyData_1", [(1,), (2,)]).how
        'inferred'
        >>> q = "Input: n = 3\\nConstraints:\\n- 0 <= n <= 30"
        >>> problem_domain("MyData_2", [(3,)], question=q).how
        'constraints'
    """
    if source_contract is None:
        source_contract = statement_contract(problem_id)
    if source_contract:
        return Domain("statement", contract=source_contract)
    parsed = constraints_precondition(question, seeds) if question else None
    if parsed:
        return Domain("constraints", contract=parsed)
    return infer_domain(seeds)


def derive_domain(problem_id: str, tests: Sequence[str], methods: Sequence[str], reference: str | None,
                  question: str | None = None) -> tuple[Domain, CallShape | None]:
    """A problem's domain and the call its own tests make (``None`` when no test calls a function with literal
    arguments), from its round-0 asserts (``methods``: each test's origin method).

    Example:
        >>> domain, call = derive_domain("X_1", ["assert f(2) == 4", "assert f(5) == 25"], ["seed", "seed"], None)
        >>> domain.how, call.callee, call.seeds, domain.violation((-1,))
        ('inferred', 'f', ((2,), (5,)), 'sign')
    """
    own = [t for t, m in zip(tests, methods) if m in SEED_METHODS] or list(tests)
    call = recover_call(own, defined=defined_names(reference) if reference else None)
    return problem_domain(problem_id, call.seeds if call else (), question=question), call


def admitted_tests(
    work: Sequence[tuple[Domain | None, str | None, Sequence[str]]], sandbox: Any, *, require_literal: bool = True,
) -> list[tuple[list[bool], dict[str, int]]]:
    """Per problem ``(domain, callee, tests)``, which tests lie inside the domain, and the rules the others break.

    A test is inside when every call of ``callee`` in it has literal arguments that the domain's shape admits and
    its precondition admits (one sandbox job per problem with a precondition; a job the sandbox could not run admits
    nothing). A test with a call whose arguments are not literal is ``unchecked``: outside when
    ``require_literal`` (new tests), inside otherwise (the problem's own). A problem without a domain or a callee
    admits every test.

    Example:
        >>> from evolvecoder_datasets.search.domain import infer_domain
        >>> admitted_tests([(infer_domain([(1,)]), "f", ["assert f(3) == 3", "assert f(-3) == 3"])], sandbox=None)
        [([True, False], {'sign': 1})]
    """
    from ...execution import Job

    out: list[tuple[list[bool], dict[str, int]]] = []
    pending: list[tuple[int, ProbeProgram, list[int]]] = []  # (problem, probe, owning test of each input)
    for domain, callee, tests in work:
        keep, counts = [True] * len(tests), {}
        out.append((keep, counts))
        if domain is None or callee is None or domain.how == "open":
            continue
        inputs, owners = [], []
        for j, test in enumerate(tests):
            calls = calls_in(test, callee)
            if calls is None:
                if require_literal:
                    keep[j] = False
                    counts["unchecked"] = counts.get("unchecked", 0) + 1
                continue
            for args in calls:
                rule = domain.violation(args)
                if rule is not None:
                    if keep[j]:
                        counts[rule] = counts.get(rule, 0) + 1
                    keep[j] = False
                elif domain.needs_sandbox:
                    inputs.append(args)
                    owners.append(j)
        if inputs:
            pending.append((len(out) - 1, ProbeProgram("", callee, inputs, precondition=domain.contract), owners))
    if pending:
        reports = sandbox.run_many([Job(probe.program(), tests=probe.admitted_tests(), timeout_s=1.0)
                                    for _, probe, _ in pending])
        for (k, _, owners), report, (domain, _, _) in zip(pending, reports, [work[k] for k, _, _ in pending]):
            keep, counts = out[k]
            passed = [False] * len(owners) if report.infra_error else list(report.passed)
            for j, ok in zip(owners, passed + [False] * (len(owners) - len(passed))):
                if not ok and keep[j]:
                    keep[j] = False
                    counts[domain.how] = counts.get(domain.how, 0) + 1
    return out
