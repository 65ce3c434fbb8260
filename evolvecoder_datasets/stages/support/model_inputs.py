"""The evolve box's input mode: which call a problem's model inputs are for, the prompt that asks for them, and
the asserts they become once the problem's reference has valued them in the sandbox.

Example:
    >>> from evolvecoder_datasets.stages.support.model_inputs import input_call
    >>> call, why = input_call(["assert inc(1) == 2"], "def inc(x):\\n    return x + 1")
    >>> call.callee, call.seeds, why
    ('inc', ((1,),), None)
    >>> input_call(["assert inc(1) == 2"], None)
    (None, 'no_reference')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...code_names import defined_names
from ...errors import LLMResponseError
from ...prompts import inputs as inputs_prompt
from ...search.calls import CallShape, recover_call
from ...search.domain import Domain
from ...search.valued import ValueRequest, value_inputs
from .llm_stage import parse_each
from .round_state import note_outside

__all__ = ["input_call", "read_inputs", "value_answers"]


def input_call(tests: Sequence[str], reference: str | None) -> tuple[CallShape | None, str | None]:
    """The call a problem's model inputs are for (the one its tests make with literal arguments, of a function its
    reference defines), else ``(None, why)``: ``no_reference`` or ``no_literal_call``."""
    if not reference:
        return None, "no_reference"
    call = recover_call(list(tests), defined=defined_names(reference))
    if call is None or not call.seeds:
        return None, "no_literal_call"
    return call, None


def read_inputs(texts: str | Sequence[str], callee: str, reference: str, limit: float | None, entry: dict[str, Any],
                *, value_cpu_s: float, domain: Domain | None = None) -> ValueRequest | None:
    """An answer's calls (of all its texts, a request's ``n`` samples: each input once, in order) as a request for
    the reference's values (``None`` when it holds none: the reason is in ``entry["error"]``); what was parsed and
    dropped goes into the evolve log's ``entry``. The reference may take what its problem's calibrated ``limit``
    allows a test, at least ``value_cpu_s``.

    Example:
        >>> entry = {"notes": [], "parsed": 0, "error": None}
        >>> read_inputs('{"inputs": [{"call": "f(2)"}, {"call": "g(1)"}]}', "f", "def f(x):\\n    return x", None,
        ...             entry, value_cpu_s=0.1).inputs, entry["notes"]
        ([(2,)], ['inputs: 1 parsed; dropped other_function 1'])
    """
    texts = [texts] if isinstance(texts, str) else list(texts)
    try:
        found = parse_each(texts, lambda text: inputs_prompt.parse(text, callee), entry)
    except LLMResponseError as err:
        entry["error"] = f"parse: {err.reason}"
        return None
    inputs: dict[str, tuple] = {}
    dropped: dict[str, int] = {}
    for result in found:
        for args in result.inputs:
            if repr(args) in inputs:
                dropped["duplicate"] = dropped.get("duplicate", 0) + 1
            inputs.setdefault(repr(args), args)
        for reason, count in result.dropped.items():
            dropped[reason] = dropped.get(reason, 0) + count
    entry["parsed"] = len(inputs)
    listed = ", ".join(f"{k} {v}" for k, v in sorted(dropped.items()))
    entry["notes"].append(f"inputs: {len(inputs)} parsed" + (f"; dropped {listed}" if listed else ""))
    cpu_s = max(value_cpu_s, float(limit)) if limit else None
    return ValueRequest(reference, callee, list(inputs.values()), cpu_s=cpu_s, domain=domain)


def value_answers(requests: Sequence[ValueRequest], entries: Sequence[dict[str, Any]], execute: Any, *,
                  value_cpu_s: float) -> list[list[str]]:
    """The asserts of every request, valued by its reference in a fast-mode sandbox of the stage's settings
    (``execute``; only the reference runs, and the probes set their own CPU limits); the inputs it could not value
    are noted in each ``entries`` log entry."""
    from ...execution import shared_sandbox

    found = value_inputs(list(requests), shared_sandbox(execute, mode="fast"), cpu_s=value_cpu_s)
    for entry, valued in zip(entries, found):
        note_outside(entry, valued.out_of_domain)
        if valued.unusable or valued.unreadable:
            entry["notes"].append(f"values: {valued.unusable} inputs the reference does not answer with plain "
                                  f"data in its time, {valued.unreadable} unreadable")
    return [valued.tests for valued in found]
