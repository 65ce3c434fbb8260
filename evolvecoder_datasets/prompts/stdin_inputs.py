"""Model-written *stdin inputs*: the adversarial and discriminative prompts of stdin/stdout problems, which ask for
whole input texts, never for the expected output.

The stdin twin of :mod:`~evolvecoder_datasets.prompts.inputs`: the problem, the programs shown (as diffs where they
are mutants of one another), a few current inputs, and the task; the answer is ``{"inputs": [{"stdin": str, "why":
str}, ...]}``. The evolve stage checks every text against the problem's input validator in the sandbox, values it
with the reference there, and runs the pool on it (:mod:`~evolvecoder_datasets.stages.support.stdio_round`): an
input the problem does not allow, or one the reference does not answer, gives no case.

Example:
    >>> from evolvecoder_datasets.prompts import stdin_inputs
    >>> msgs = stdin_inputs.build_messages("adversarial", "Print a + b.", ["print(sum(map(int, input().split())))"],
    ...                                    ["1 2\\n"])
    >>> [m["role"] for m in msgs], '"stdin": "1 2\\\\n"' in msgs[1]["content"]
    (['system', 'user'], True)
    >>> stdin_inputs.parse('{"inputs": [{"stdin": "5 7", "why": "big"}, {"stdin": "5 7\\\\n"}, {"why": "x"}]}').inputs
    ['5 7\\n']
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError, LLMResponseError
from ..llm.types import ChatRequest
from ._common import make_request
from .inputs import render_programs_as_diffs
from .parsing import extract_json

__all__ = ["METHODS", "VERSION", "StdinResult", "answer_schema", "build_messages", "build_request", "parse"]

VERSION = "stdin-inputs-1"
METHODS = ("adversarial", "discriminative")
_MAX_STDIN_CHARS = 2000
_MAX_SHOWN = 3
_MAX_SHOWN_CHARS = 300

_SYSTEM = "You write test inputs for programs that read standard input. You answer with JSON only."

_TASKS = {
    "adversarial": """\
{programs}

Current inputs (the program passes {passed}):
{cases}

Give {num_tests} new inputs on which a wrong program would fail while passing these: edge cases they miss \
(smallest and largest sizes and values the problem allows, zero, negatives, duplicates, ties) and the mistakes the \
program above could make{diff_hint}. Follow the input format of the problem exactly. Give inputs only: a reference \
solution computes the expected outputs.""",
    "discriminative": """\
{programs}

These programs pass the same current inputs:
{cases}

Give {num_tests} new inputs on which these programs print different outputs{diff_hint}. Follow the input format of \
the problem exactly. Give inputs only: a reference solution computes the expected outputs.""",
}


def answer_schema(num_tests: int) -> dict[str, Any]:
    """The JSON Schema of an answer: ``{"inputs": [{"stdin": str, "why": str}, ...]}``, ``num_tests`` of them.

    Example:
        >>> answer_schema(2)["properties"]["inputs"]["items"]["required"]
        ['stdin', 'why']
    """
    item = {"type": "object", "properties": {"stdin": {"type": "string", "maxLength": _MAX_STDIN_CHARS},
                                             "why": {"type": "string", "maxLength": 60}},
            "required": ["stdin", "why"]}
    return {"type": "object", "required": ["inputs"], "properties": {
        "inputs": {"type": "array", "minItems": int(num_tests), "maxItems": int(num_tests), "items": item}}}


def _shown(text: str) -> str:
    return text if len(text) <= _MAX_SHOWN_CHARS else text[:_MAX_SHOWN_CHARS] + "...(cut)"


def build_messages(method: str, question: str, programs: Sequence[str], cases: Sequence[str], *,
                   num_tests: int = 5, passed: str = "all of them") -> list[dict[str, str]]:
    """The prompt: a fixed system line, the problem, the programs, up to three current inputs and the task; the
    answer's example is the first current input.

    Raises:
        ConfigError: an unknown method.

    Example:
        >>> build_messages("discriminative", "Q", ["print(1)"], ["3\\n"])[1]["content"].splitlines()[0]
        'Problem:'
    """
    if method not in _TASKS:
        raise ConfigError(f"unknown stdin inputs prompt {method!r}; expected one of {METHODS}")
    shown = [f"```\n{_shown(c).rstrip()}\n```" for c in list(cases)[:_MAX_SHOWN]]
    if len(cases) > _MAX_SHOWN:
        shown.append(f"(and {len(cases) - _MAX_SHOWN} more)")
    example = json.dumps({"inputs": [{"stdin": _shown(cases[0]) if cases else "", "why": "<the edge it tests>"},
                                     "... one object per input"]}, ensure_ascii=False)
    rendered = render_programs_as_diffs(programs)
    diff_hint = " (above all where the programs differ: the lines of the diff)" if "```diff" in rendered else ""
    content = (f"Problem:\n<<<\n{question.strip()}\n>>>\n\n"
               + _TASKS[method].format(programs=rendered, cases="\n".join(shown) or "(none)", num_tests=num_tests,
                                       passed=passed, diff_hint=diff_hint)
               + "\n\nAnswer with JSON only (one object per input; \"why\": the edge or difference it tests, in a "
               + f"few words):\n{example}")
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": content}]


def build_request(method: str, question: str, programs: Sequence[str], cases: Sequence[str], *, num_tests: int = 5,
                  passed: str = "all of them", **sampling: Any) -> ChatRequest:
    """:func:`build_messages` as a :class:`ChatRequest` carrying :data:`VERSION` and :func:`answer_schema`.

    Example:
        >>> build_request("adversarial", "Q", ["print(1)"], ["3\\n"], num_tests=2).prompt_version
        'stdin-inputs-1'
    """
    messages = build_messages(method, question, programs, cases, num_tests=num_tests, passed=passed)
    return make_request(messages, version=VERSION, stage=method, response_schema=answer_schema(num_tests),
                        **sampling)


@dataclass
class StdinResult:
    """The stdin texts read from an answer (each ending with a newline, distinct, in the answer's order), their
    reasons, and the items left out by reason (``not_text``, ``too_long``, ``duplicate``)."""

    inputs: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)


def parse(text: str) -> StdinResult:
    """The inputs of an answer: the ``inputs`` list of its JSON (objects with ``stdin``, or bare strings).

    Raises:
        LLMResponseError: no JSON, or no ``inputs`` list in it.

    Example:
        >>> parse('Here: {"inputs": ["1\\\\n2", {"stdin": 7}]}').inputs, parse('{"inputs": [{"stdin": 7}]}').dropped
        (['1\\n2\\n'], {'not_text': 1})
    """
    try:
        data = extract_json(text, keys=["inputs"])
    except LLMResponseError:
        data = extract_json(text, expect=list)
    items = data.get("inputs") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise LLMResponseError("the answer has no inputs list", reason="no_inputs")
    out = StdinResult()
    for item in items:
        stdin = item.get("stdin", item.get("input")) if isinstance(item, dict) else item
        if not isinstance(stdin, str) or not stdin.strip():
            out.dropped["not_text"] = out.dropped.get("not_text", 0) + 1
            continue
        stdin = stdin if stdin.endswith("\n") else stdin + "\n"
        if len(stdin) > _MAX_STDIN_CHARS:
            out.dropped["too_long"] = out.dropped.get("too_long", 0) + 1
        elif stdin in out.inputs:
            out.dropped["duplicate"] = out.dropped.get("duplicate", 0) + 1
        else:
            out.inputs.append(stdin)
            out.reasons.append(str(item.get("why", ""))[:60] if isinstance(item, dict) else "")
    return out
