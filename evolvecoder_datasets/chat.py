"""The text of chat messages and completions, in every shape models and trainers hand them over.

A completion may be a string, a message ``{"role": "assistant", "content": ...}``, a conversation (TRL passes
conversational completions as a list of messages), or a bare list of content parts; a message's content may be a
string, ``None`` (tool calls, refusals) or a list of parts (``{"type": "text", "text": ...}``, as multimodal
gateways and some reasoning models answer). The sandbox's code extraction, the reward functions and the
OpenAI-compatible client all read text through these two functions, so they agree on every shape.
"""

from __future__ import annotations

from typing import Any

__all__ = ["completion_text", "content_text"]


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
