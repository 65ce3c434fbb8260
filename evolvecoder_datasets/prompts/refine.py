"""Round 0: turn a seed problem into a hard, self-contained, function-signature problem with 20 assert tests.

The model answers with JSON ``{"question": ..., "tests": [...]}``. :func:`parse` returns a :class:`RefineResult`
or raises :class:`~evolvecoder_datasets.errors.LLMResponseError` with a ``reason`` for ``drop_reason``.

Example:
    >>> from evolvecoder_datasets.prompts import refine
    >>> messages = refine.build_messages("Given n, print the n-th Fibonacci number.", solution="print(1)")
    >>> messages[0]["role"], "Reference solution" in messages[0]["content"]
    ('user', True)
    >>> result = refine.parse('{"question": "Write `def fib(n: int) -> int` returning F(n).", '
    ...                       '"tests": ["assert fib(0) == 0", "assert fib(10) == 55"]}')
    >>> result.tests
    ['assert fib(0) == 0', 'assert fib(10) == 55']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import LLMResponseError
from ..llm.types import ChatRequest
from ._common import make_request
from .parsing import clean_tests, extract_json

__all__ = ["VERSION", "STAGE", "RefineResult", "build_messages", "build_request", "parse"]

VERSION = "refine-1"
STAGE = "refine"
_MIN_QUESTION_CHARS = 30

_TEMPLATE = """\
You are preparing a programming problem for training and evaluating code models.

Seed problem:
<<<
{question}
>>>
{solution_block}
Rewrite the seed into one harder, fully self-contained problem:
- The answer must be a single Python function (or a class, when the task is stateful). State its exact name and \
signature with type hints in the problem, e.g. `def count_paths(grid: list[list[int]], k: int) -> int:`.
- No reading from standard input and no printing: inputs are arguments, the output is the return value.
- Define every input precisely, give value ranges, and say what to return in edge cases, so that each valid input \
has exactly one correct output.
- Make it noticeably harder than the seed (an extra constraint, a generalisation, a tighter complexity bound), while \
keeping a correct solution under about 80 lines.

Then write exactly {num_tests} tests:
- each one independent `assert` on a single line that calls the function with literal arguments and compares the \
result with a literal expected value, e.g. `assert count_paths([[0, 1], [0, 0]], 2) == 1`;
- no imports, helper functions, randomness, printing or state shared between tests;
- work out every expected value carefully from the problem statement; cover edge cases, ordinary cases and larger \
inputs.

Reply with a JSON object only, without any other text:
{{"question": "<the full problem statement>", "tests": ["assert ...", "assert ..."]}}
"""

_SOLUTION_BLOCK = """
Reference solution of the seed (it shows the intended behaviour; do not copy its input/output handling):
```python
{solution}
```
"""

_QUESTION_KEYS = ("question", "problem", "problem_statement", "description", "prompt")
_TEST_KEYS = ("tests", "test_cases", "test", "asserts", "assertions", "test_list")


@dataclass
class RefineResult:
    """A parsed refinement.

    Args:
        question (`str`): the refined problem statement.
        tests (`list[str]`): usable assert tests (cleaned, de-duplicated).
        dropped_tests (`dict[str, int]`): discarded test items by reason.
    """

    question: str
    tests: list[str]
    dropped_tests: dict[str, int] = field(default_factory=dict)


def build_messages(question: str, *, solution: str | None = None, num_tests: int = 20) -> list[dict[str, str]]:
    """The refinement prompt as one user message (models without a system role accept it too).

    Args:
        question (`str`): the seed problem.
        solution (`str`, *optional*): the seed's reference solution, when the source has one.
        num_tests (`int`, defaults to 20): number of asserts to ask for.

    Example:
        >>> build_messages("Sum two numbers.", num_tests=5)[0]["content"].count("exactly 5 tests")
        1
    """
    solution_block = _SOLUTION_BLOCK.format(solution=solution.strip()) if solution and solution.strip() else ""
    content = _TEMPLATE.format(question=question.strip(), solution_block=solution_block, num_tests=num_tests)
    return [{"role": "user", "content": content}]


def build_request(
    question: str, *, solution: str | None = None, num_tests: int = 20, **sampling: Any
) -> ChatRequest:
    """:func:`build_messages` wrapped in a :class:`ChatRequest` carrying :data:`VERSION`.

    Args:
        question (`str`): the seed problem.
        solution (`str`, *optional*): the seed's reference solution.
        num_tests (`int`, defaults to 20): number of asserts to ask for.
        **sampling: ``n``, ``temperature``, ``top_p``, ``max_tokens``, ``seed``, ``stop``.

    Example:
        >>> build_request("Sum two numbers.", temperature=0.2, max_tokens=2048).prompt_version
        'refine-1'
    """
    return make_request(
        build_messages(question, solution=solution, num_tests=num_tests), version=VERSION, stage=STAGE, **sampling
    )


def _first(data: dict, keys: tuple[str, ...]) -> Any:
    lowered = {str(k).lower(): v for k, v in data.items()}
    return next((lowered[k] for k in keys if k in lowered), None)


def parse(text: str) -> RefineResult:
    """Parse a refinement answer.

    Args:
        text (`str`): the raw model answer.

    Raises:
        LLMResponseError: ``reason`` is ``empty``, ``no_json``, ``invalid_json``, ``wrong_shape``,
            ``missing_question`` or ``no_tests``.

    Example:
        >>> parse("```json\\n{'question': 'Implement `def sq(x: int) -> int` returning x squared.', "
        ...       "'tests': 'assert sq(2) == 4\\\\nassert sq(-3) == 9'}\\n```").tests
        ['assert sq(2) == 4', 'assert sq(-3) == 9']
    """
    data = extract_json(text, expect=dict, keys=_QUESTION_KEYS + _TEST_KEYS)
    question = _first(data, _QUESTION_KEYS)
    if not isinstance(question, str) or len(question.strip()) < _MIN_QUESTION_CHARS:
        raise LLMResponseError("the answer has no usable 'question'", reason="missing_question")
    raw_tests = _first(data, _TEST_KEYS)
    if raw_tests is None:
        raise LLMResponseError("the answer has no 'tests'", reason="no_tests")
    cleaned = clean_tests(raw_tests)
    if not cleaned.tests:
        raise LLMResponseError(f"no usable assert among the tests (dropped: {cleaned.dropped})", reason="no_tests")
    return RefineResult(question=question.strip(), tests=cleaned.tests, dropped_tests=cleaned.dropped)
