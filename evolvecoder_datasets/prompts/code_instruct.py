"""Repository-grounded tasks: from a code snippet, a problem, its pytest tests and a reference solution.

The model answers in three sections, ``[Problem Description]``, ``[Test]`` and ``[Solution]``. The solution is a
module imported as ``task_module``; the tests import from it and use the repository's package.

Example:
    >>> from evolvecoder_datasets.prompts import code_instruct
    >>> answer = '''[Problem Description]
    ... Write `slugify(text: str) -> str` using `click.unstyle` to drop ANSI codes first.
    ... [test]
    ... ```python
    ... from task_module import slugify
    ... def test_plain():
    ...     assert slugify("A b") == "a-b"
    ... ```
    ... **[SOLUTION]**
    ... ```python
    ... import click
    ... def slugify(text):
    ...     return "-".join(click.unstyle(text).lower().split())
    ... ```'''
    >>> task = code_instruct.parse(answer)
    >>> task.test.splitlines()[0], task.solution.splitlines()[0]
    ('from task_module import slugify', 'import click')
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from ..errors import LLMResponseError
from ..llm.types import ChatRequest
from ._common import make_request
from .parsing import split_sections, strip_fences

__all__ = ["VERSION", "STAGE", "SECTIONS", "CodeInstructResult", "build_messages", "build_request", "parse"]

VERSION = "code-instruct-1"
STAGE = "code_instruct"
SECTIONS = ("Problem Description", "Test", "Solution")

_TEMPLATE = """\
You write programming tasks grounded in real repositories. Below is a snippet{origin}.

```python
{snippet}
```

Design one self-contained task that a developer familiar with this code could solve in a single module, and that \
must use the repository's package{package_hint} (import it and call at least one of its public names). Then write \
its tests and a reference solution.

Answer with exactly these three sections, in this order, each marker on its own line:

[Problem Description]
The task: what to implement (exact function or class names and signatures), inputs, outputs, errors to raise, and \
edge cases. Do not mention this snippet or where it comes from.

[Test]
```python
pytest tests. Import what you test with `from task_module import ...`. At least three non-trivial asserts; use \
`pytest.raises` for every error the task requires. No network, no files outside tmp_path.
```

[Solution]
```python
The complete module `task_module`, which passes every test.
```
"""


@dataclass
class CodeInstructResult:
    """A parsed repository-grounded task.

    Args:
        problem (`str`): the problem description.
        test (`str`): pytest source importing from ``task_module``.
        solution (`str`): the reference module source.
    """

    problem: str
    test: str
    solution: str


def build_messages(
    snippet: str, *, repo: str | None = None, path: str | None = None, package: str | None = None
) -> list[dict[str, str]]:
    """The code-instruct prompt as one user message.

    Args:
        snippet (`str`): the repository code window.
        repo (`str`, *optional*): repository name, e.g. ``"pallets/click"``.
        path (`str`, *optional*): file path of the snippet inside the repository.
        package (`str`, *optional*): import name of the package the task must use, e.g. ``"click"``.

    Example:
        >>> "`click`" in build_messages("def f(): pass", repo="pallets/click", package="click")[0]["content"]
        True
    """
    where = [f"repository {repo}" if repo else "", f"file {path}" if path else ""]
    origin = (" from " + ", ".join(part for part in where if part)) if repo or path else ""
    content = _TEMPLATE.format(
        snippet=snippet.rstrip(),
        origin=origin,
        package_hint=f" (`{package}`)" if package else "",
    )
    return [{"role": "user", "content": content}]


def build_request(
    snippet: str, *, repo: str | None = None, path: str | None = None, package: str | None = None, **sampling: Any
) -> ChatRequest:
    """:func:`build_messages` wrapped in a :class:`ChatRequest` carrying :data:`VERSION`.

    Args:
        snippet (`str`): the repository code window.
        repo (`str`, *optional*): repository name.
        path (`str`, *optional*): file path of the snippet.
        package (`str`, *optional*): import name of the package the task must use.
        **sampling: ``n``, ``temperature``, ``top_p``, ``max_tokens``, ``seed``, ``stop``.

    Example:
        >>> build_request("def f(): pass", temperature=0.7, max_tokens=2048).prompt_version
        'code-instruct-1'
    """
    messages = build_messages(snippet, repo=repo, path=path, package=package)
    return make_request(messages, version=VERSION, stage=STAGE, **sampling)


def _code(section: str, name: str) -> str:
    code = strip_fences(section)
    try:
        ast.parse(code)
    except SyntaxError as err:
        raise LLMResponseError(f"the [{name}] section is not valid Python: {err.msg}", reason="syntax_error") from err
    except (RecursionError, MemoryError, ValueError) as err:  # nested past the parser's limits, a NUL byte
        raise LLMResponseError(f"the [{name}] section cannot be parsed: {type(err).__name__}",
                               reason="syntax_error") from err
    return code


def parse(text: str) -> CodeInstructResult:
    """Parse the three sections; code sections lose their fences and must be valid Python.

    Args:
        text (`str`): the raw model answer.

    Raises:
        LLMResponseError: ``reason`` is ``empty``, ``missing_section`` or ``syntax_error``.

    Example:
        >>> parse("[Problem Description]\\nDo X.\\n[Test]\\nassert True")
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.errors.LLMResponseError: missing or empty section(s): ['Solution']
    """
    if not (text or "").strip():
        raise LLMResponseError("the answer is empty", reason="empty")
    sections = split_sections(text, SECTIONS)
    missing = [name for name in SECTIONS if not sections.get(name, "").strip()]
    if missing:
        raise LLMResponseError(f"missing or empty section(s): {missing}", reason="missing_section")
    return CodeInstructResult(
        problem=sections["Problem Description"].strip(),
        test=_code(sections["Test"], "Test"),
        solution=_code(sections["Solution"], "Solution"),
    )
