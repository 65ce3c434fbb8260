"""Pieces shared by the prompt families: request building and readable rendering of programs, tests and matrices."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import LLMResponseError, SchemaError
from ..llm.types import ChatRequest
from .parsing import clean_tests, extract_asserts, extract_json

__all__ = [
    "make_request",
    "as_bool_matrix",
    "render_programs",
    "render_tests",
    "render_matrix",
    "TestsPrompt",
    "TestsResult",
    "parse_tests_answer",
]


def make_request(messages: list[dict[str, str]], *, version: str, stage: str, **sampling: Any) -> ChatRequest:
    """A :class:`ChatRequest` carrying the prompt family's version (for the cache key) and stage (for accounting)."""
    return ChatRequest(tuple(messages), prompt_version=version, stage=stage, **sampling)


def as_bool_matrix(matrix: Any, n_programs: int, n_tests: int) -> list[list[bool]]:
    """Nested lists of bools from a numpy array or nested sequence, checked against the expected shape.

    Raises:
        SchemaError: the shape is not ``(n_programs, n_tests)``.
    """
    rows = matrix.tolist() if hasattr(matrix, "tolist") else [list(row) for row in matrix]
    if len(rows) != n_programs or any(len(row) != n_tests for row in rows):
        shape = (len(rows), sorted({len(row) for row in rows}))
        raise SchemaError(f"the pass matrix must be {n_programs} programs x {n_tests} tests; got {shape}")
    return [[bool(cell) for cell in row] for row in rows]


def render_programs(programs: Sequence[str]) -> str:
    """Programs as numbered fenced blocks."""
    return "\n\n".join(f"Program {i}:\n```python\n{p.strip()}\n```" for i, p in enumerate(programs, 1))


def render_tests(tests: Sequence[str]) -> str:
    """Tests as a numbered list, one per line (multi-line tests indented under their number)."""
    lines = []
    for i, test in enumerate(tests, 1):
        first, *rest = test.strip().splitlines() or [""]
        lines.append(f"T{i}. {first}")
        lines.extend("     " + line for line in rest)
    return "\n".join(lines)


def render_matrix(matrix: list[list[bool]]) -> str:
    """The programs x tests results as one line per program, in groups of five tests, with pass counts.

    Example:
        >>> print(render_matrix([[True, False, True, True, True, True], [False] * 6]))
        Results (rows: programs; columns: tests T1..T6 in groups of five; 1 = pass, 0 = fail):
        Program 1: 10111 1  (5/6 pass)
        Program 2: 00000 0  (0/6 pass)
        Tests passed by every program: none
        Tests failed by every program: T2
    """
    if not matrix:
        return "Results: no programs."
    n_tests = len(matrix[0])
    lines = [f"Results (rows: programs; columns: tests T1..T{n_tests} in groups of five; 1 = pass, 0 = fail):"]
    for i, row in enumerate(matrix, 1):
        bits = "".join("1" if cell else "0" for cell in row)
        groups = " ".join(bits[k : k + 5] for k in range(0, len(bits), 5))
        lines.append(f"Program {i}: {groups}  ({sum(row)}/{n_tests} pass)")
    everyone = [f"T{j + 1}" for j in range(n_tests) if all(row[j] for row in matrix)]
    nobody = [f"T{j + 1}" for j in range(n_tests) if not any(row[j] for row in matrix)]
    lines.append(f"Tests passed by every program: {', '.join(everyone) or 'none'}")
    lines.append(f"Tests failed by every program: {', '.join(nobody) or 'none'}")
    return "\n".join(lines)


@dataclass
class TestsResult:
    """Parsed new tests from the adversarial or discriminative prompt.

    Args:
        tests (`list[str]`): usable assert tests (cleaned, de-duplicated).
        dropped_tests (`dict[str, int]`): discarded items by reason.
        from_json (`bool`): whether the tests came from the requested JSON (`False`: salvaged from free text).
    """

    __test__ = False  # not a pytest test class despite the name

    tests: list[str]
    dropped_tests: dict[str, int] = field(default_factory=dict)
    from_json: bool = True


_TESTS_KEYS = ("tests", "new_tests", "test_cases", "asserts")


def parse_tests_answer(text: str) -> TestsResult:
    """Parse ``{"tests": [...]}`` (or a bare list of strings); salvage asserts from free text when that fails.

    Raises:
        LLMResponseError: ``reason`` is ``empty``, ``no_json``, ``invalid_json`` or ``no_tests``.
    """
    failure: LLMResponseError | None = None
    items: Any = None
    try:
        data = extract_json(text, expect=dict, keys=_TESTS_KEYS)
        lowered = {str(k).lower(): v for k, v in data.items()}
        items = next((lowered[k] for k in _TESTS_KEYS if k in lowered), None)
        if items is None:
            failure = LLMResponseError("the JSON answer has no 'tests'", reason="no_tests")
    except LLMResponseError as err:
        if err.reason == "empty":
            raise
        failure = err
        try:
            found = extract_json(text, expect=list)
        except LLMResponseError:
            found = []
        if any(isinstance(item, (str, dict)) for item in found):  # not a list literal inside an assert
            items, failure = found, None
    if items is not None:
        cleaned = clean_tests(items)
        if cleaned.tests:
            return TestsResult(cleaned.tests, cleaned.dropped)
        failure = LLMResponseError(f"no usable assert among the tests (dropped: {cleaned.dropped})", reason="no_tests")
    salvaged = clean_tests(extract_asserts(text))
    if salvaged.tests:
        return TestsResult(salvaged.tests, salvaged.dropped, from_json=False)
    raise failure


@dataclass(frozen=True)
class TestsPrompt:
    """A prompt family that asks for new tests (adversarial, discriminative): its template, version and stage.

    The family modules expose the bound methods as their ``build_messages``, ``build_request`` and ``parse``.

    Args:
        template (`str`): receives ``question``, ``programs``, ``tests``, ``matrix`` and ``num_tests``.
        version (`str`): enters the request-cache key and the dataset fingerprint.
        stage (`str`): the stage name requests are accounted to.

    Example:
        >>> prompt = TestsPrompt("{question} | {programs} | {tests} | {num_tests}\\n{matrix}", "demo-1", "demo")
        >>> prompt.build_messages("Q", ["p"], ["assert t"], [[True]], num_tests=2)[0]["content"].splitlines()[0]
        'Q | Program 1:'
    """

    __test__ = False  # not a pytest test class despite the name

    template: str
    version: str
    stage: str

    def build_messages(self, question: str, programs: Sequence[str], tests: Sequence[str], matrix: Any, *,
                       num_tests: int = 20) -> list[dict[str, str]]:
        """The prompt as one user message: the problem, the programs, the current tests and the pass matrix.

        Args:
            question (`str`): the problem statement.
            programs (`Sequence[str]`): the selected programs.
            tests (`Sequence[str]`): the current (visible) tests.
            matrix (`numpy.ndarray | list[list[bool]]`): pass matrix of shape ``(len(programs), len(tests))``.
            num_tests (`int`, defaults to 20): number of new asserts to ask for.

        Raises:
            SchemaError: the matrix shape does not match the programs and tests.

        Example:
            >>> from evolvecoder_datasets.prompts import adversarial
            >>> adversarial.build_messages("Q", ["p"], ["assert t"], [[True]], num_tests=3)[0]["role"]
            'user'
        """
        rows = as_bool_matrix(matrix, len(programs), len(tests))
        content = self.template.format(
            question=question.strip(),
            programs=render_programs(programs),
            tests=render_tests(tests) or "(none)",
            matrix=render_matrix(rows),
            num_tests=num_tests,
        )
        return [{"role": "user", "content": content}]

    def build_request(self, question: str, programs: Sequence[str], tests: Sequence[str], matrix: Any, *,
                      num_tests: int = 20, **sampling: Any) -> ChatRequest:
        """:meth:`build_messages` wrapped in a :class:`ChatRequest` carrying the family's version and stage.

        Args:
            question, programs, tests, matrix, num_tests: as :meth:`build_messages`.
            **sampling: ``n``, ``temperature``, ``top_p``, ``max_tokens``, ``seed``, ``stop``.

        Raises:
            SchemaError: the matrix shape does not match the programs and tests.

        Example:
            >>> from evolvecoder_datasets.prompts import discriminative
            >>> discriminative.build_request("Q", ["p"], ["assert True"], [[True]]).prompt_version
            'discriminative-1'
        """
        messages = self.build_messages(question, programs, tests, matrix, num_tests=num_tests)
        return make_request(messages, version=self.version, stage=self.stage, **sampling)

    def parse(self, text: str) -> TestsResult:
        """The new tests of an answer (see :func:`parse_tests_answer`).

        Raises:
            LLMResponseError: ``reason`` is ``empty``, ``invalid_json`` or ``no_tests``.

        Example:
            >>> from evolvecoder_datasets.prompts import adversarial
            >>> adversarial.parse("Here you go:\\n```python\\nassert inc(0) == 1\\n```").from_json
            False
        """
        return parse_tests_answer(text)
