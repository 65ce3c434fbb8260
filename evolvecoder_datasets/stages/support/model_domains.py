"""Preconditions written by the test-writer model, for problems whose source ships none, checked before use.

At a problem's first round, where no precondition ships with its statement and a model is configured
(``EvolveConfig.domain_from_model``), the model is asked for one (:mod:`~evolvecoder_datasets.prompts.domain`). The
answer is code and runs only in the sandbox, where it must pass two checks before it replaces the inferred domain:

- it admits every input of the problem's own asserts (a statement reading that excludes the problem's tests is wrong,
  or the tests are: either way the seeds decide);
- it rejects at least one of a sweep of inputs outside what the seeds show (negatives, empties, other characters,
  other types: :class:`~evolvecoder_datasets.search.inputs.InputMutator` with full exploration): a precondition that
  admits everything says nothing.

A precondition that fails either check, an answer that does not parse and a failed request leave the inferred domain
in place; the reason is noted in the problem's ``domain`` log entry.

Example:
    >>> from evolvecoder_datasets.stages.support.model_domains import parameter_names
    >>> parameter_names("def f(a, b=2):\\n    return a", "f", 2), parameter_names("x = 1", "g", 2)
    (['a', 'b'], ['arg0', 'arg1'])
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

from ...errors import LLMResponseError
from ...prompts import domain as domain_prompt
from ...search.domain import Domain, infer_domain
from ...search.inputs import InputMutator
from ...search.probes import ProbeProgram
from ...seeding import stable_int
from .llm_stage import raise_unrecordable
from .round_state import RoundProblem, log_entry

__all__ = ["check_precondition", "model_domains", "parameter_names"]

_PROBES = 48  # inputs outside the seeds' shape a model precondition is tried on


def parameter_names(reference: str | None, callee: str, arity: int) -> list[str]:
    """The parameter names of ``callee`` in ``reference`` (its method for ``Name().method``), else ``arg0``...

    Example:
        >>> parameter_names("class S:\\n    def f(self, xs):\\n        pass", "S().f", 1)
        ['xs']
    """
    name = callee.rsplit(".", 1)[-1]
    try:
        tree = ast.parse(reference or "")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        tree = None
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.FunctionDef) and node.name == name:
            names = [a.arg for a in node.args.posonlyargs + node.args.args]
            if names and names[0] == "self":
                names = names[1:]
            if len(names) == arity:
                return names
    return [f"arg{k}" for k in range(arity)]


def check_precondition(contract: str, callee: str, seeds: Sequence[tuple], sandbox: Any, *, seed: int = 0) -> str | None:
    """Why a model's precondition cannot be used (``None``: it can): it must admit every seed input and reject at
    least one input outside what the seeds show. Run in the sandbox.

    Example:
        >>> from evolvecoder_datasets.execution import Sandbox
        >>> with Sandbox(workers=1, mode="fast") as sb:
        ...     ok = check_precondition("def precondition(n):\\n    return n >= 1", "f", [(1,), (4,)], sb)
        ...     lax = check_precondition("def precondition(n):\\n    return True", "f", [(1,), (4,)], sb)
        >>> ok, lax
        (None, 'rejects_nothing')
    """
    from ...execution import Job

    shape = infer_domain(seeds)
    mutator = InputMutator(seeds, seed=seed, explore=1.0)
    probes, seen = [], {repr(tuple(s)) for s in seeds}
    for args in mutator.sweep(limit=_PROBES) + [mutator.candidate() for _ in range(4 * _PROBES)]:
        if repr(args) not in seen and shape.violation(args) is not None:
            seen.add(repr(args))
            probes.append(args)
        if len(probes) >= _PROBES:
            break
    inputs = [tuple(s) for s in seeds] + probes
    probe = ProbeProgram("", callee, inputs, precondition=contract)
    [report] = sandbox.run_many([Job(probe.program(), tests=probe.admitted_tests(), timeout_s=1.0)])
    if report.infra_error:
        return "sandbox"
    passed = list(report.passed) + [False] * (len(inputs) - len(report.passed))
    if not all(passed[: len(seeds)]):
        return "rejects_a_seed"
    if probes and all(passed[len(seeds):]):
        return "rejects_nothing"
    return None


def model_domains(problems: Sequence[RoundProblem], seeds: Sequence[Sequence[tuple]], *, backend: Any, sandbox: Any,
                  round_: int, seed: int, sampling: dict[str, Any], record: bool) -> list[Domain | None]:
    """Per problem, the model's precondition as a domain (``how="model"``) where it parses and passes
    :func:`check_precondition`, else ``None``; each problem gets a ``domain`` log entry saying which.

    ``record``: a failed request is noted (else it is raised, as the stage's ``on_llm_error="raise"``).
    """
    requests = [domain_prompt.build_request(p.question, p.callee or "f",
                                            parameter_names(p.search_reference, p.callee or "f", len(s[0])), s,
                                            **{**sampling, "seed": stable_int(seed, p.id, round_, "domain") & 0x7FFFFFFF})
                for p, s in zip(problems, seeds)]
    answers = backend.generate(requests, return_exceptions=True, desc=f"round {round_} domains") if requests else []
    out: list[Domain | None] = []
    for problem, own, answer in zip(problems, seeds, answers):
        entry = log_entry(round_, "domain", requested=1)
        problem.log.append(entry)
        if isinstance(answer, BaseException):
            raise_unrecordable(answer)
            if not record:
                raise answer
            entry["error"] = f"llm: {type(answer).__name__}"
            out.append(None)
            continue
        try:
            contract = domain_prompt.parse(answer.text, len(own[0]))
        except LLMResponseError as err:
            entry["error"] = f"parse: {err.reason}"
            out.append(None)
            continue
        entry["parsed"] = 1
        why = check_precondition(contract, problem.callee or "f", own, sandbox, seed=stable_int(seed, problem.id))
        if why is not None:
            entry["notes"].append(f"model precondition not used: {why}; the inferred domain stays")
            out.append(None)
            continue
        entry["added"] = 1
        entry["notes"].append("domain: model precondition")
        out.append(Domain("model", contract=contract))
    return out
