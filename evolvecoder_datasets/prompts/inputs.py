"""Model-written *inputs*: the adversarial and discriminative prompts that ask for calls, never for expected values.

A small model writes plausible inputs far more reliably than correct outputs (asked for whole asserts, a 0.5B coder
got most expected values wrong). So these prompts ask only for calls of the problem's function with literal
arguments, each with a short reason (the edge it attacks, or the programs it should split); the evolve stage then
values every call with the problem's reference solution in the sandbox, exactly as the search writer does, and the
resulting asserts cannot be wrong about the reference. The paper's whole-assert prompts
(:mod:`~evolvecoder_datasets.prompts.adversarial`, :mod:`~evolvecoder_datasets.prompts.discriminative`) stay as
``EvolveConfig(test_mode="asserts")`` for comparison.

Shaped for small models: a fixed system line and the problem first (so the requests of one problem share their head
and a prompt cache pays for it once), one example of the answer built from the problem's own first call, the programs
as a diff where they are mutants of one another, and a JSON Schema (:func:`answer_schema`) that backends with
constrained decoding enforce. :func:`parse` reads the rest tolerantly: a bare list, asserts instead of calls
(their expected side is ignored), prose around the JSON.

Example:
    >>> from evolvecoder_datasets.prompts import inputs
    >>> msgs = inputs.build_messages("adversarial", "Write `def inc(x: int) -> int` returning x + 1.", "inc",
    ...                              ["def inc(x):\\n    return x + 1"], ["assert inc(1) == 2"], example=(1,))
    >>> [m["role"] for m in msgs], "inc(1)" in msgs[1]["content"]
    (['system', 'user'], True)
    >>> inputs.parse('{"inputs": [{"call": "inc(-5)", "why": "negative"}, {"call": "dec(1)"}]}', "inc").inputs
    [(-5,)]
"""

from __future__ import annotations

import ast
import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError, LLMResponseError
from ..llm.types import ChatRequest
from ..search.calls import call_callee, literal_args, render_args
from ._common import make_request
from .parsing import extract_json

__all__ = ["METHODS", "STAGES", "VERSION", "InputsResult", "answer_schema", "build_messages", "build_request",
           "parse", "render_programs_as_diffs"]

VERSION = "inputs-3"
METHODS = ("adversarial", "discriminative")
STAGES = {m: m for m in METHODS}
_MAX_CALL_CHARS = 300
_MAX_WHY_CHARS = 80
_MAX_TESTS_SHOWN = 5

_SYSTEM = "You write test inputs for Python functions. You answer with JSON only."

_HEAD = """\
Problem:
<<<
{question}
>>>
"""

# Without a reference: the programs and the current tests, as the paper's prompts show them.
_TASKS = {
    "adversarial": """\
{programs}

Current tests (the program passes {passed}):
{tests}

Give {num_tests} new inputs for `{callee}` on which a wrong program would fail while passing these tests: edge \
cases they miss (empty, one item, zero, negatives, duplicates, ties, extreme values the problem allows) and the \
mistakes the program above could make{diff_hint}. Not the inputs of the examples or of the tests above: new ones. \
Only inputs the problem allows. Give calls only: a reference solution computes the expected values.""",
    "discriminative": """\
{programs}

These programs pass the same current tests:
{tests}

Give {num_tests} new inputs for `{callee}` on which these programs return different values{diff_hint}. Not the \
inputs of the examples or of the tests above: new ones. Only inputs the problem allows. Give calls only: a \
reference solution computes the expected values.""",
}

# With the reference shown first: the others are told apart from it, the tests only counted (a small model copies
# whatever calls it is shown, so it is shown none).
_AGAINST_REFERENCE = {
    "adversarial": "{others} pass{es} all {n_tests} current test{s}, but may be wrong.",
    "discriminative": "{others} cannot be told apart by the {n_tests} current test{s}; some may be wrong.",
}
_TASK_AGAINST_REFERENCE = """\
{programs}

{lead} Give {num_tests} new inputs for `{callee}` on which {target} returns a different value \
than Program 1{diff_hint}, or edge cases the tests may miss (empty, one item, zero, negatives, duplicates, ties, \
extreme values the problem allows). Only inputs the problem allows. For each input, first say what it tests, then \
give the call: a reference solution computes the expected values."""

_SHAPE = """
Answer with JSON only (one object per input; "why": what it tests, in a few words):
{example}"""


def statement_without_examples(question: str, callee: str = "") -> str:
    """``question`` without its worked examples (doctest lines and their outputs, ``Example:`` / ``For example:``
    blocks, lines that start with a call of ``callee``): a small model shown examples answers with those very
    inputs, which the seed's own tests already hold. The statement is returned whole where removing them would
    leave nothing, or would remove the function's signature.

    Example:
        >>> q = "def inc(x):\\n    'Add one.\\n    >>> inc(1)\\n    2\\n    For example:\\n    inc(5) == 6\\n\\n    Works on ints.'"
        >>> print(statement_without_examples(q, "inc"))
        def inc(x):
            'Add one.
        <BLANKLINE>
            Works on ints.'
    """
    import re

    name = callee.rsplit(".", 1)[-1]
    header = re.compile(r"^(for\s+)?(examples?|e\.g\.)\b[^a-z]*$|^(for\s+)?examples?\s*:", re.IGNORECASE)
    kept: list[str] = []
    skipping = False
    for line in question.splitlines():
        stripped = line.strip()
        if stripped.startswith(('"""', "'''")):
            skipping = False
        elif stripped.startswith(">>>") or header.match(stripped):
            skipping = True
            continue
        elif (skipping and stripped) or (name and stripped.startswith(name + "(")):  # an example's output, or a call
            continue
        else:
            skipping = False
        kept.append(line)
    text = "\n".join(kept).strip("\n")
    signature = f"def {name}(" if name else ""
    if not text.strip() or (signature and signature in question and signature not in text):
        return question
    return text


def answer_schema(num_tests: int) -> dict[str, Any]:
    """The JSON Schema of an answer: ``{"inputs": [{"why": str, "call": str}, ...]}`` with exactly ``num_tests``
    inputs (backends with constrained decoding enforce it: a small model otherwise stops after one). The reason
    comes first: a small model that has first said which edge or which changed line it tests then writes a call
    for it (llama.cpp's grammar keeps the schema's order of properties).

    Example:
        >>> answer_schema(3)["properties"]["inputs"]["maxItems"]
        3
    """
    return {
        "type": "object",
        "properties": {
            "inputs": {
                "type": "array",
                "minItems": int(num_tests),
                "maxItems": int(num_tests),
                "items": {
                    "type": "object",
                    "properties": {
                        "why": {"type": "string", "maxLength": _MAX_WHY_CHARS},
                        "call": {"type": "string", "maxLength": _MAX_CALL_CHARS},
                    },
                    "required": ["why", "call"],
                },
            }
        },
        "required": ["inputs"],
    }


def without_docstrings(program: str) -> str:
    """``program`` without its docstrings and comments (the problem statement already says what they say, and a
    small model's prompt tokens are its cost); a program that does not parse is returned as it is.

    Example:
        >>> print(without_docstrings("def f(x):\\n    'Add one.'\\n    # easy\\n    return x + 1"))
        def f(x):
            return x + 1
    """
    try:
        tree = ast.parse(program)
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if (isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and body
                    and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                node.body = body[1:] or [ast.Pass()]
        return ast.unparse(tree)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return program


def render_programs_as_diffs(programs: Sequence[str], *, min_ratio: float = 0.6) -> str:
    """Programs as fenced blocks: the first in full; each later one as a unified diff against it where the two are
    alike (mutants of one another: ``difflib`` ratio at least ``min_ratio``), else in full. Small models read a
    two-line diff far better than two near-identical listings.

    Example:
        >>> print(render_programs_as_diffs(["def f(x):\\n    return x + 1", "def f(x):\\n    return x - 1"]))
        Program 1:
        ```python
        def f(x):
            return x + 1
        ```
        <BLANKLINE>
        Program 2 (the lines where it differs from Program 1):
        ```diff
        -    return x + 1
        +    return x - 1
        ```
    """
    if not programs:
        return "(no programs)"
    programs = [without_docstrings(p) for p in programs]
    first = programs[0].strip()
    parts = [f"Program 1:\n```python\n{first}\n```"]
    for i, program in enumerate(programs[1:], 2):
        code = program.strip()
        if difflib.SequenceMatcher(None, first, code).ratio() >= min_ratio:
            diff = [line for line in difflib.unified_diff(first.splitlines(), code.splitlines(), lineterm="", n=0)
                    if not line.startswith(("---", "+++", "@@"))]
            if diff:
                parts.append(f"Program {i} (the lines where it differs from Program 1):\n```diff\n"
                             + "\n".join(diff) + "\n```")
                continue
        parts.append(f"Program {i}:\n```python\n{code}\n```")
    return "\n\n".join(parts)


def _example_call(question: str, callee: str, example: Sequence[Any]) -> str:
    """The call shown in the answer's example: a placeholder where the statement shows the function's signature (a
    small model repeats a real call it is shown), else the problem's own first call, for the arguments' shape."""
    name = callee.rsplit(".", 1)[-1]
    if f"def {name}(" in question:
        return f"{callee}(<arguments>)"
    return f"{callee}({render_args(example)})"


def build_messages(method: str, question: str, callee: str, programs: Sequence[str], tests: Sequence[str], *,
                   example: Sequence[Any], num_tests: int = 5, passed: str = "all of them",
                   reference: str | None = None) -> list[dict[str, str]]:
    """The prompt: a fixed system line, then the problem (without its worked examples:
    :func:`statement_without_examples`), the programs and the task; the answer's shape puts each input's reason
    before its call.

    With ``reference`` (the input mode's usual case: the reference values the inputs anyway) it is shown first as
    the right program, the others as diffs against it where they are its mutants, and the task is an input on which
    one of them returns something else; the current tests are counted, not listed (a small model answers with the
    calls it is shown). Without it, the programs and the current tests are shown as the paper's prompts show them.

    Args:
        method (`str`): ``"adversarial"`` or ``"discriminative"``.
        question (`str`): the problem statement.
        callee (`str`): the function the tests call (``"f"`` or ``"Solution().f"``).
        programs (`Sequence[str]`): the programs shown (those equal to ``reference`` are left out).
        tests (`Sequence[str]`): the current (visible) tests.
        example (`Sequence`): one argument tuple of the problem (a seed call): the answer's example shows it where
            the statement does not show the function's signature.
        num_tests (`int`, defaults to 5): inputs asked for.
        passed (`str`, defaults to ``"all of them"``): how many of the tests the adversarial program passes
            (without a reference).
        reference (`str`, *optional*): the problem's reference solution.

    Raises:
        ConfigError: an unknown method.

    Example:
        >>> msgs = build_messages("adversarial", "Write `def f(x)` returning x.", "f", ["def f(x):\\n    return -x"],
        ...                       ["assert f(0) == 0"], example=(0,), reference="def f(x):\\n    return x")
        >>> print(msgs[1]["content"].split("Program 1 is right. ")[1].split(" Give")[0])
        Program 2 passes all 1 current test, but may be wrong.
    """
    if method not in _TASKS:
        raise ConfigError(f"unknown inputs prompt {method!r}; expected one of {METHODS}")
    statement = statement_without_examples(question.strip(), callee)
    example_call = _example_call(question, callee, example)
    sample = json.dumps({"inputs": [{"why": "<what it tests>", "call": example_call}, "... one object per input"]},
                        ensure_ascii=False)
    if reference:
        right = without_docstrings(reference).strip()
        others = [p for p in programs if without_docstrings(p).strip() != right]
        rendered = render_programs_as_diffs([reference, *others]).replace("Program 1:", "Program 1 (right):", 1)
        diff_hint = " (look at the lines of the diffs)" if "```diff" in rendered else ""
        if len(others) > 1:
            names, target = f"Programs 2 to {len(others) + 1}", "one of them"
        else:
            names, target = "Program 2", "it"
        lead = "Program 1 is right."
        if others:
            lead += " " + _AGAINST_REFERENCE[method].format(others=names, es="" if len(others) > 1 else "es",
                                                            n_tests=len(tests), s="" if len(tests) == 1 else "s")
        else:
            target = "a wrong program"
        task = _TASK_AGAINST_REFERENCE.format(programs=rendered, lead=lead, num_tests=num_tests, callee=callee,
                                              target=target, diff_hint=diff_hint)
    else:
        lines = [t.strip().splitlines()[0] for t in tests if t.strip()]
        if len(lines) > _MAX_TESTS_SHOWN:
            lines = lines[:_MAX_TESTS_SHOWN] + [f"(and {len(lines) - _MAX_TESTS_SHOWN} more)"]
        rendered = render_programs_as_diffs(programs)
        # a diff is where a mutant can be told apart: say so, it is what a small model most needs to be pointed at
        diff_hint = " (above all where the programs differ: the lines of the diff)" if "```diff" in rendered else ""
        task = _TASKS[method].format(programs=rendered, tests="\n".join(lines) or "(none)", diff_hint=diff_hint,
                                     num_tests=num_tests, callee=callee, passed=passed)
    content = _HEAD.format(question=statement) + "\n" + task + "\n" + _SHAPE.format(example=sample)
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": content}]


def build_request(method: str, question: str, callee: str, programs: Sequence[str], tests: Sequence[str], *,
                  example: Sequence[Any], num_tests: int = 5, passed: str = "all of them",
                  reference: str | None = None, **sampling: Any) -> ChatRequest:
    """:func:`build_messages` as a :class:`ChatRequest` carrying :data:`VERSION`, the method's stage and
    :func:`answer_schema`.

    Example:
        >>> r = build_request("adversarial", "Q", "f", ["def f(x):\\n    return x"], [], example=(0,), num_tests=2)
        >>> r.prompt_version, r.stage, r.response_schema["properties"]["inputs"]["maxItems"]
        ('inputs-3', 'adversarial', 2)
    """
    messages = build_messages(method, question, callee, programs, tests, example=example, num_tests=num_tests,
                              passed=passed, reference=reference)
    return make_request(messages, version=VERSION, stage=STAGES[method], response_schema=answer_schema(num_tests),
                        **sampling)


@dataclass
class InputsResult:
    """The inputs read from an answer.

    Args:
        inputs (`list[tuple]`): distinct literal argument tuples of calls to the callee, in the answer's order.
        reasons (`list[str]`): the model's reason for each input (``""`` where it gave none).
        dropped (`dict[str, int]`): items left out by reason: ``not_a_call`` (no call could be read),
            ``other_function`` (a call of another function), ``not_literal`` (an argument that is not a literal),
            ``too_long``, ``duplicate``.
    """

    inputs: list[tuple] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)

    def drop(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1


def _call_in_line(line: str, callee: str) -> str | None:
    """The shortest piece of ``line`` from ``callee(`` to a ``)`` that parses as an expression (a list marker,
    prose or a comment around it is left out), else ``None``."""
    if len(line) > 4 * _MAX_CALL_CHARS:
        return None
    start = line.find(callee + "(")
    while start > 0 and (line[start - 1].isalnum() or line[start - 1] in "_."):  # ``half(`` is not ``f(``
        start = line.find(callee + "(", start + 1)
    if start < 0:
        return None
    piece = line[start:]
    for end in (i for i, ch in enumerate(piece) if ch == ")"):
        try:
            ast.parse(piece[: end + 1], mode="eval")
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        return piece[: end + 1]
    return None


def _call_of(text: str, callee: str) -> tuple[tuple | None, str]:
    """The literal arguments of the first call of ``callee`` in ``text`` (an expression, an assert, or a
    comparison whose left side is the call), else ``(None, reason)``."""
    text = text.strip().rstrip(";").strip()
    if len(text) > 4 * _MAX_CALL_CHARS:
        return None, "too_long"
    text = text.removeprefix("assert ")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None, "not_a_call"
    try:
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    except RecursionError:
        return None, "not_a_call"
    other = False
    for node in calls:
        if call_callee(node) != callee:
            other = other or call_callee(node) is not None
            continue
        args = literal_args(node)
        if args is None:
            return None, "not_literal"
        if len(render_args(args)) > _MAX_CALL_CHARS:
            return None, "too_long"
        return args, ""
    return None, "other_function" if other else "not_a_call"


def parse(text: str, callee: str) -> InputsResult:
    """The inputs of an answer: ``{"inputs": [{"call": ..., "why": ...}]}``, a bare list of calls or such objects,
    or, failing JSON, every line of the text that calls ``callee``.

    Args:
        text (`str`): the model's answer.
        callee (`str`): the function the calls must call.

    Returns:
        `InputsResult`

    Raises:
        LLMResponseError: ``reason`` ``empty`` or ``no_inputs`` (nothing usable; the dropped counts are in the
            message).

    Example:
        >>> parse("Try these:\\nassert inc(0) == 1\\ninc(10**3)\\ninc(x)", "inc").inputs
        [(0,)]
        >>> parse('["inc(2)", {"call": "inc(3)", "why": "odd"}]', "inc").reasons
        ['', 'odd']
    """
    if not text or not text.strip():
        raise LLMResponseError("the answer is empty", reason="empty")
    items: list[Any] | None = None
    try:
        data = extract_json(text, expect=dict, keys=("inputs", "calls", "tests"))
        lowered = {str(k).lower(): v for k, v in data.items()}
        found = next((lowered[k] for k in ("inputs", "calls", "tests") if k in lowered), None)
        items = found if isinstance(found, list) else None
    except LLMResponseError:
        pass
    if items is None:  # a bare list of calls or of {"call": ...} objects
        try:
            found = extract_json(text, expect=list)
            items = found if any(isinstance(i, (str, dict)) for i in found) else None
        except LLMResponseError:
            items = None
    if items is None:  # free text: the call on every line that makes one
        items = [call for call in (_call_in_line(line, callee) for line in text.splitlines()) if call]
    result = InputsResult()
    seen: set[str] = set()
    for item in items:
        why = ""
        if isinstance(item, dict):
            lowered = {str(k).lower(): v for k, v in item.items()}
            call = lowered.get("call", lowered.get("input", lowered.get("test")))
            why = str(lowered.get("why", lowered.get("reason", "")) or "")[:_MAX_WHY_CHARS]
        else:
            call = item
        if not isinstance(call, str):
            result.drop("not_a_call")
            continue
        args, reason = _call_of(call, callee)
        if args is None:
            result.drop(reason)
            continue
        key = repr(args)
        if key in seen:
            result.drop("duplicate")
            continue
        seen.add(key)
        result.inputs.append(args)
        result.reasons.append(why)
    if not result.inputs:
        raise LLMResponseError(f"no usable call of {callee} in the answer (dropped: {result.dropped})",
                               reason="no_inputs")
    return result
