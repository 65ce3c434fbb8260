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

from ._common import TestsPrompt, TestsResult

__all__ = ["PROMPT", "STAGE", "VERSION", "TestsResult", "build_messages", "build_request", "parse"]

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


#: The family: its bound methods are this module's ``build_messages``, ``build_request`` and ``parse``.
PROMPT = TestsPrompt(_TEMPLATE, VERSION, STAGE)
build_messages = PROMPT.build_messages
build_request = PROMPT.build_request
parse = PROMPT.parse
