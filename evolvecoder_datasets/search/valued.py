"""Asserts from inputs: each input valued by the problem's reference in the sandbox, never by whoever proposed it.

The search writer and the model writers in input mode meet here. Given argument tuples for a problem's callee
(mutated by the search, or proposed by a model), :func:`value_inputs` asks the reference, in the sandbox, which of
them it handles (plain data, the same twice, within ``cpu_s``), reads its value on each of those back through
pass/fail verdicts (:func:`~evolvecoder_datasets.search.probes.read_values`) and writes one assert per input with
:func:`value_assert`. Inputs the reference raises on, loops on or answers with something that is not plain data give
no test: they are counted as ``unusable``. Inputs outside the problem's domain (``ValueRequest.domain``) give none
either, counted by the rule they break in ``out_of_domain``. Every assert is correct about the reference by construction; the caller
still runs them on the reference the ordinary way before keeping any (the evolve stage does, for every method).

Example:
    >>> from evolvecoder_datasets.execution import Sandbox
    >>> from evolvecoder_datasets.search.valued import ValueRequest, value_inputs
    >>> ref = "def half(x):\\n    if x % 2:\\n        raise ValueError(x)\\n    return x // 2\\n"
    >>> with Sandbox(workers=1, mode="fast") as sb:
    ...     [found] = value_inputs([ValueRequest(ref, "half", [(4,), (3,), (-8,)])], sb)
    >>> found.tests, found.unusable
    (['assert half(4) == 2', 'assert half(-8) == -4'], 1)
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..tolerance import float_assert
from .calls import render_args
from .domain import Domain
from .probes import ProbeProgram, read_values

__all__ = ["ValueRequest", "ValuedInputs", "value_assert", "value_inputs"]


def value_assert(callee: str, args: Sequence[Any], value_text: str) -> str:
    """The assert that ``callee(*args)`` returns the literal ``value_text`` (a float within the shared tolerance of
    :mod:`~evolvecoder_datasets.tolerance`, anything else exactly).

    Example:
        >>> value_assert("f", (1, "a"), "[1, 2]"), value_assert("g", (), "0.5")
        ("assert f(1, 'a') == [1, 2]", 'assert abs(g() - 0.5) <= 1.05e-06')
    """
    call = f"{callee}({render_args(args)})"
    if type(ast.literal_eval(value_text)) is float:
        return float_assert(call, value_text)
    return f"assert {call} == {value_text}"


@dataclass
class ValueRequest:
    """One problem's inputs to value.

    Args:
        reference (`str`): the reference solution.
        callee (`str`): the call the tests make (``"f"``, ``"Solution().f"``).
        inputs (`list[tuple]`): argument tuples.
        cpu_s (`float`, *optional*): CPU seconds the reference may take on one of them (default: the call's
            ``cpu_s``); a problem whose calibrated limit is higher gives that, so a slow reference still values.
        domain (`Domain`, *optional*): the inputs the problem defines; the others give no test and are counted in
            ``out_of_domain`` (``None``: every input is a candidate).
    """

    reference: str
    callee: str
    inputs: list[tuple]
    cpu_s: float | None = None
    domain: Domain | None = None


@dataclass
class ValuedInputs:
    """What valuing one problem's inputs gave.

    Attributes:
        tests (`list[str]`): one assert per usable input whose value was read, in the inputs' order.
        inputs (`list[tuple]`): the argument tuple of each test.
        unusable (`int`): inputs the reference raised on, did not finish within ``cpu_s``, answered differently
            twice or with a value that is not plain data.
        unreadable (`int`): usable inputs whose value could not be read back.
        out_of_domain (`dict[str, int]`): inputs the problem's domain does not admit, by rule
            (:data:`~evolvecoder_datasets.search.domain.DOMAIN_RULES`); they are not counted as unusable.
    """

    tests: list[str] = field(default_factory=list)
    inputs: list[tuple] = field(default_factory=list)
    unusable: int = 0
    unreadable: int = 0
    out_of_domain: dict[str, int] = field(default_factory=dict)


def value_inputs(requests: Sequence[ValueRequest], sandbox: Any, *, cpu_s: float = 0.1,
                 max_chars: int = 300) -> list[ValuedInputs]:
    """Value every request's inputs with its reference in ``sandbox`` and write the asserts.

    The usability questions of all problems go to the sandbox as one batch; values are read per problem, as many
    at once as the sandbox has workers.

    Args:
        requests (`Sequence[ValueRequest]`): per problem, its reference, callee and inputs.
        sandbox (`Sandbox`): an open sandbox (``mode="fast"`` is the quick choice: only the reference runs).
        cpu_s (`float`, defaults to 0.1): CPU seconds the reference may take on one input (a request's own
            ``cpu_s`` wins).
        max_chars (`int`, defaults to 300): longest ``repr`` of a value that becomes a test.

    Returns:
        `list[ValuedInputs]`: one per request, in order.

    Example:
        >>> value_inputs([ValueRequest("def f(x):\\n    return x", "f", [])], sandbox=None)[0].tests
        []
    """
    from ..execution import Job

    out = [ValuedInputs() for _ in requests]
    admitted = [_admitted(r, out[k]) for k, r in enumerate(requests)]
    probes = [ProbeProgram(r.reference, r.callee, inputs, cpu_s=r.cpu_s or cpu_s, max_chars=max_chars,
                           precondition=r.domain.contract if r.domain is not None else None)
              for r, inputs in zip(requests, admitted)]
    asked = [k for k, inputs in enumerate(admitted) if inputs]
    if not asked:
        return out
    reports = sandbox.run_many([Job(probes[k].program(), tests=probes[k].usable_tests() + probes[k].admitted_tests(),
                                    timeout_s=probes[k].reference_timeout()) for k in asked])
    usable: dict[int, list[int]] = {}
    for k, report in zip(asked, reports):
        n = len(admitted[k])
        passed = list(report.passed)
        ok = [] if report.infra_error else [j for j, good in enumerate(passed[:n]) if good]
        outside = 0 if report.infra_error or requests[k].domain is None else sum(not good for good in passed[n:])
        if outside:
            how = requests[k].domain.how
            out[k].out_of_domain[how] = out[k].out_of_domain.get(how, 0) + outside
        usable[k] = ok
        out[k].unusable = n - len(ok) - outside

    def read(k: int) -> None:
        if not usable[k]:
            return
        values = read_values(sandbox, probes[k], usable[k], timeout_s=probes[k].reference_timeout())
        for j, (ok, text) in zip(usable[k], values):
            if not ok or text is None:
                out[k].unreadable += 1
                continue
            args = admitted[k][j]
            out[k].tests.append(value_assert(requests[k].callee, args, text))
            out[k].inputs.append(args)

    workers = sandbox.settings.worker_count if sandbox is not None else 1
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(read, asked))
    return out


def _admitted(request: ValueRequest, found: ValuedInputs) -> list[tuple]:
    """The request's inputs whose shape its domain admits; the others are counted by the rule they break."""
    if request.domain is None:
        return list(request.inputs)
    kept = []
    for args in request.inputs:
        rule = request.domain.violation(args)
        if rule is None:
            kept.append(args)
        else:
            found.out_of_domain[rule] = found.out_of_domain.get(rule, 0) + 1
    return kept
