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

from ._common import TestsPrompt, TestsResult

__all__ = ["PROMPT", "STAGE", "VERSION", "TestsResult", "build_messages", "build_request", "parse"]

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


#: The family: its bound methods are this module's ``build_messages``, ``build_request`` and ``parse``.
PROMPT = TestsPrompt(_TEMPLATE, VERSION, STAGE)
build_messages = PROMPT.build_messages
build_request = PROMPT.build_request
parse = PROMPT.parse
