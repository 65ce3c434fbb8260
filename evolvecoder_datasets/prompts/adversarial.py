"""Adversarial tests: break the strongest programs and cover input patterns the current tests miss.

The stage picks five programs (the two with the highest pass rate first, then three chosen for maximal pairwise
disagreement) and passes them with the current tests and the programs x tests pass matrix. The model answers
JSON ``{"tests": [...]}``.

Example:
    >>> from evolvecoder_datasets.prompts import adversarial
    >>> msgs = adversarial.build_messages(
    ...     "Write `def inc(x: int) -> int` returning x + 1.",
    ...     ["def inc(x):\\n    return x + 1", "def inc(x):\\n    return x + 1 if x >= 0 else x"],
    ...     ["assert inc(1) == 2"],
    ...     [[True], [True]],
    ... )
    >>> "Program 2: 1  (1/1 pass)" in msgs[0]["content"]
    True
    >>> adversarial.parse('{"tests": ["assert inc(-5) == -4"]}').tests
    ['assert inc(-5) == -4']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..llm.types import ChatRequest
from ._common import TestsResult, make_request, parse_tests_answer, tests_prompt_messages

__all__ = ["VERSION", "STAGE", "TestsResult", "build_messages", "build_request", "parse"]

VERSION = "adversarial-1"
STAGE = "adversarial"

_TEMPLATE = """\
You are hardening the test suite of a programming problem. Candidate solutions written by code models are shown \
with the current tests and which tests each candidate passes. Every candidate may be wrong; the problem statement \
is the only authority on correct behaviour.

Problem:
<<<
{question}
>>>

Candidates (Programs 1 and 2 pass the most current tests; the others were picked because they disagree with each \
other the most):
{programs}

Current tests:
{tests}

{matrix}

Write exactly {num_tests} new tests that a wrong program would fail even though it passes the current tests:
- look for the mistakes the strongest candidates make and target them; a test that every candidate already passes \
is only useful if it checks an input pattern not covered above;
- cover what the current tests miss: boundaries, empty or single-element inputs, duplicates, negative numbers, \
extreme sizes within the stated limits, ties and unusual orderings;
- each test is one independent `assert` on a single line, calling the function with literal arguments and \
comparing with a literal expected value derived from the problem statement (never from a candidate's output);
- no imports, helper functions, randomness or printing, and no repeats of the current tests.

Reply with a JSON object only, without any other text:
{{"tests": ["assert ...", "assert ..."]}}
"""


def build_messages(
    question: str,
    programs: Sequence[str],
    tests: Sequence[str],
    matrix: Any,
    *,
    num_tests: int = 20,
) -> list[dict[str, str]]:
    """The adversarial prompt as one user message.

    Args:
        question (`str`): the problem statement.
        programs (`Sequence[str]`): the selected programs, the two highest pass rates first.
        tests (`Sequence[str]`): the current (visible) tests.
        matrix (`numpy.ndarray | list[list[bool]]`): pass matrix of shape ``(len(programs), len(tests))``.
        num_tests (`int`, defaults to 20): number of new asserts to ask for.

    Raises:
        SchemaError: the matrix shape does not match the programs and tests.

    Example:
        >>> import numpy as np
        >>> msgs = build_messages("Q", ["def f(): return 1"], ["assert f() == 1"], np.ones((1, 1), bool))
        >>> msgs[0]["content"].count("T1. assert f() == 1")
        1
    """
    return tests_prompt_messages(_TEMPLATE, question, programs, tests, matrix, num_tests=num_tests)


def build_request(
    question: str, programs: Sequence[str], tests: Sequence[str], matrix: Any, *, num_tests: int = 20, **sampling: Any
) -> ChatRequest:
    """:func:`build_messages` wrapped in a :class:`ChatRequest` carrying :data:`VERSION`.

    Args:
        question (`str`): the problem statement.
        programs (`Sequence[str]`): the selected programs.
        tests (`Sequence[str]`): the current tests.
        matrix (`numpy.ndarray | list[list[bool]]`): pass matrix, programs x tests.
        num_tests (`int`, defaults to 20): number of new asserts to ask for.
        **sampling: ``n``, ``temperature``, ``top_p``, ``max_tokens``, ``seed``, ``stop``.

    Raises:
        SchemaError: the matrix shape does not match the programs and tests.

    Example:
        >>> build_request("Q", ["p"], ["assert True"], [[True]], temperature=0.7).prompt_version
        'adversarial-1'
    """
    messages = build_messages(question, programs, tests, matrix, num_tests=num_tests)
    return make_request(messages, version=VERSION, stage=STAGE, **sampling)


def parse(text: str) -> TestsResult:
    """Parse the new tests.

    Args:
        text (`str`): the raw model answer.

    Raises:
        LLMResponseError: ``reason`` is ``empty``, ``invalid_json`` or ``no_tests``.

    Example:
        >>> parse("Here you go:\\n```python\\nassert inc(0) == 1\\n```").from_json
        False
    """
    return parse_tests_answer(text)
