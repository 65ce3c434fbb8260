"""Discriminative tests: separate programs that the current tests cannot tell apart.

The stage picks five programs whose pass vectors are identical or nearly so and passes them with the tests and the
pass matrix; the model writes asserts that at least one of them passes and at least one fails. The answer is JSON
``{"tests": [...]}``.

Example:
    >>> from evolvecoder_datasets.prompts import discriminative
    >>> msgs = discriminative.build_messages(
    ...     "Write `def mid(xs: list[int]) -> int` returning the median (lower middle for even length).",
    ...     ["def mid(xs):\\n    return sorted(xs)[len(xs) // 2]", "def mid(xs):\\n    return sorted(xs)[(len(xs) - 1) // 2]"],
    ...     ["assert mid([3, 1, 2]) == 2"],
    ...     [[True], [True]],
    ... )
    >>> "at least one" in msgs[0]["content"]
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..llm.types import ChatRequest
from ._common import TestsResult, make_request, parse_tests_answer, tests_prompt_messages

__all__ = ["VERSION", "STAGE", "TestsResult", "build_messages", "build_request", "parse"]

VERSION = "discriminative-1"
STAGE = "discriminative"

_TEMPLATE = """\
You are making the test suite of a programming problem more discriminating. The candidate solutions below behave \
the same, or almost the same, on the current tests, yet their code differs, so the tests probably cannot tell a \
correct solution from a subtly wrong one. The problem statement is the only authority on correct behaviour.

Problem:
<<<
{question}
>>>

Candidates:
{programs}

Current tests:
{tests}

{matrix}

Read the candidates side by side and find inputs on which they would return different results. Write exactly \
{num_tests} new tests such that:
- for each test, at least one candidate passes it and at least one candidate fails it;
- the expected value is what the problem statement demands (work it out; do not copy any candidate's output);
- each test is one independent `assert` on a single line with literal arguments and a literal expected value;
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
    """The discriminative prompt as one user message.

    Args:
        question (`str`): the problem statement.
        programs (`Sequence[str]`): the selected programs (identical or near-identical pass vectors).
        tests (`Sequence[str]`): the current tests.
        matrix (`numpy.ndarray | list[list[bool]]`): pass matrix of shape ``(len(programs), len(tests))``.
        num_tests (`int`, defaults to 20): number of new asserts to ask for.

    Raises:
        SchemaError: the matrix shape does not match the programs and tests.

    Example:
        >>> build_messages("Q", ["a", "b"], ["assert 1"], [[1], [1]], num_tests=3)[0]["content"].count("exactly")
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
        >>> build_request("Q", ["p"], ["assert True"], [[True]]).prompt_version
        'discriminative-1'
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
        >>> parse('{"tests": ["assert mid([1, 2]) == 1"]}').tests
        ['assert mid([1, 2]) == 1']
    """
    return parse_tests_answer(text)
