"""The text of chat messages and completions, in every shape models and trainers hand them over.

A completion may be a string, a message ``{"role": "assistant", "content": ...}``, a conversation (TRL passes
conversational completions as a list of messages), or a bare list of content parts; a message's content may be a
string, ``None`` (tool calls, refusals) or a list of parts (``{"type": "text", "text": ...}``, as multimodal
gateways and some reasoning models answer). The sandbox's code extraction, the reward functions and the
OpenAI-compatible client all read text through these two functions, so they agree on every shape.

The text itself is read here too, once for every caller: :func:`strip_thinking` drops reasoning blocks and
:func:`fenced_blocks` finds Markdown code fences. The reward's code extraction, the test writers' parsers and the
seed sources all build on these two, so the same answer yields the same code wherever it is read.

The rules, in one place:

- Reasoning tags: ``<think>``, ``<thinking>``, ``<reasoning>``, ``<reflection>`` (any case). A closed block is
  dropped. A closing tag without an opening one (a chat template that pre-opens the block) drops everything before
  it. An opening tag never closed (a generation cut by ``max_tokens``) drops everything after it: text inside a
  reasoning tag is reasoning whether or not the model closed it, so a draft left there is never taken for the
  answer (a reward gives such a completion its failing value; a test writer's answer is ``empty``).
- Fences: three or more backticks or tildes, opening anywhere on a line (``Sure! ```python``), an info string
  whose first word is the language (lower-cased; ``""`` when untagged); the block ends at a line that ends with a
  run of the same character at least as long, and an unclosed last block runs to the end of the text.
"""

from __future__ import annotations

import functools
import re
from typing import Any

__all__ = ["completion_text", "content_text", "strip_thinking", "fenced_blocks", "THINKING_TAGS"]

#: The tags whose content is a model's reasoning, not its answer.
THINKING_TAGS = ("think", "thinking", "reasoning", "reflection")
_TAGS = "|".join(THINKING_TAGS)
_THINKING_BLOCK = re.compile(rf"<({_TAGS})>.*?</\1>", re.IGNORECASE | re.DOTALL)
_THINKING_OPEN = re.compile(rf"<(?:{_TAGS})>", re.IGNORECASE)
_THINKING_CLOSE = re.compile(rf"</(?:{_TAGS})>", re.IGNORECASE)
# An opening fence: a run of 3+ backticks (whose info string holds no backtick) or tildes, then a newline.
_FENCE_OPEN = re.compile(r"(`{3,}|~{3,})[ \t]*([\w+#.-]*)[^\n`]*\n")


def content_text(content: Any) -> str:
    """A message's content as text: a string as is, the ``text`` parts of a list of parts joined, else ``""``.

    Example:
        >>> from evolvecoder_datasets.chat import content_text
        >>> content_text([{"type": "text", "text": "x ="}, {"type": "thinking", "thinking": "?"},
        ...               {"type": "text", "text": " 1"}]), content_text(None), content_text("ok")
        ('x = 1', '', 'ok')
    """
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type", "text") == "text"]
        return "".join(p for p in parts if isinstance(p, str))
    return ""


def completion_text(completion: Any) -> str:
    """The answer's text: a string as is; of a message, its content; of a conversation, the content of its last
    assistant message (``""`` when it has none); of a bare list of content parts, their text.

    Example:
        >>> from evolvecoder_datasets.chat import completion_text
        >>> completion_text([{"role": "user", "content": "Set x."},
        ...                  {"role": "assistant", "content": [{"type": "text", "text": "x = 1"}]}])
        'x = 1'
        >>> completion_text([{"type": "text", "text": "y = 2"}])
        'y = 2'
    """
    if completion is None:
        return ""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return content_text(completion.get("content"))
    if isinstance(completion, (list, tuple)):
        dicts = [m for m in completion if isinstance(m, dict)]
        messages = [m for m in dicts if "role" in m or "content" in m]
        if not messages:  # a bare list of content parts
            return content_text(dicts)
        assistant = [m for m in messages if m.get("role") in (None, "assistant")]
        return content_text(assistant[-1].get("content")) if assistant else ""
    return str(completion)


def strip_thinking(text: str) -> str:
    """The answer without its reasoning blocks, stripped of surrounding whitespace (rules in the module docstring).

    Example:
        >>> from evolvecoder_datasets.chat import strip_thinking
        >>> strip_thinking("<think>musing</think>answer"), strip_thinking("pre-opened musing</Thinking> answer")
        ('answer', 'answer')
        >>> strip_thinking("answer<think>a draft cut off by max_tokens: x = 1")
        'answer'
    """
    text = _THINKING_BLOCK.sub("", text)
    closes = list(_THINKING_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    opened = _THINKING_OPEN.search(text)
    if opened:
        text = text[: opened.start()]
    return text.strip()


@functools.lru_cache(maxsize=16)
def _fence_close(char: str, length: int) -> re.Pattern[str]:
    run = re.escape(char)
    return re.compile(rf"(?<!{run}){run}{{{length},}}[ \t]*$", re.MULTILINE)


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """``(language, body)`` of every Markdown code fence in ``text``, in order (rules in the module docstring).

    Thinking is not stripped here: call :func:`strip_thinking` first where reasoning must not count.

    Example:
        >>> from evolvecoder_datasets.chat import fenced_blocks
        >>> fenced_blocks("Sure! ```Python\\nprint(1)\\n```\\n~~~\\nx = 2\\n~~~\\n````json\\n[1, 2]")
        [('python', 'print(1)\\n'), ('', 'x = 2\\n'), ('json', '[1, 2]')]
    """
    blocks: list[tuple[str, str]] = []
    pos = 0
    while (opening := _FENCE_OPEN.search(text, pos)) is not None:
        fence = opening.group(1)
        closing = _fence_close(fence[0], len(fence)).search(text, opening.end())
        end = closing.start() if closing else len(text)
        blocks.append((opening.group(2).lower(), text[opening.end() : end]))
        pos = closing.end() if closing else len(text)
    return blocks
