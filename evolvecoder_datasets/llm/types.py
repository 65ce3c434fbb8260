"""The two values every backend speaks: a :class:`ChatRequest` in, a :class:`Completion` out.

Both are plain frozen dataclasses that round-trip through JSON, so the request cache can store them and a stage can
log them without knowing which backend produced them.

Example:
    >>> from evolvecoder_datasets.llm.types import ChatRequest
    >>> req = ChatRequest([{"role": "user", "content": "Write fib."}], n=2, temperature=0.7, max_tokens=256)
    >>> req.messages[0]["content"]
    'Write fib.'
    >>> sorted(req.sampling_params())
    ['max_tokens', 'n', 'seed', 'stop', 'temperature', 'top_p']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..chat import content_text
from ..errors import ConfigError

__all__ = ["ChatRequest", "Completion", "as_requests"]

_ROLES = ("system", "user", "assistant", "developer", "tool")


@dataclass(frozen=True)
class ChatRequest:
    """One chat-completion request, independent of any backend.

    Args:
        messages (`Sequence[Mapping[str, str]]`): chat messages, each with ``role`` and ``content``. A plain string
            is accepted as one user message.
        n (`int`, defaults to 1): number of completions to sample for this prompt.
        temperature (`float`, *optional*): sampling temperature; ``None`` leaves the backend's default.
        top_p (`float`, *optional*): nucleus sampling mass; ``None`` leaves the backend's default.
        max_tokens (`int`, *optional*): cap on generated tokens per completion.
        seed (`int`, *optional*): sampling seed, when the backend supports one.
        stop (`Sequence[str]`, *optional*): stop strings.
        prompt_version (`str`, defaults to ``""``): version of the prompt builder that produced ``messages``; it
            enters the request-cache key so that a prompt change never replays stale answers.
        response_schema (`Mapping`, *optional*): a JSON Schema the answer must follow (a JSON text). Backends that
            can constrain decoding enforce it (``llamacpp`` and ``vllm`` always, ``openai`` with
            ``structured_output``); ``transformers`` sends the prompt alone, and the stage's parser reads what comes
            back. Part of the cache key when set.
        stage (`str`, defaults to ``""``): the pipeline stage sending it, used only for accounting (not cached).

    Raises:
        ConfigError: a message lacks ``role``/``content``, or a sampling parameter is out of range.

    Example:
        >>> ChatRequest("Say hi", max_tokens=8).messages
        ({'role': 'user', 'content': 'Say hi'},)
    """

    messages: tuple[Mapping[str, str], ...]
    n: int = 1
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    stop: tuple[str, ...] | None = None
    prompt_version: str = ""
    stage: str = field(default="", compare=False)
    response_schema: Mapping[str, Any] | None = field(default=None, hash=False)

    def __post_init__(self) -> None:
        raw = self.messages
        if isinstance(raw, str):
            raw = [{"role": "user", "content": raw}]
        messages = []
        for message in raw:
            if not isinstance(message, Mapping) or "role" not in message or "content" not in message:
                raise ConfigError(f"each chat message needs 'role' and 'content'; got {message!r}")
            if message["role"] not in _ROLES:
                raise ConfigError(f"unknown chat role {message['role']!r}; expected one of {_ROLES}")
            if not isinstance(message["content"], str):
                raise ConfigError(f"message content must be a string; got {type(message['content']).__name__}")
            messages.append({"role": str(message["role"]), "content": message["content"]})
        if not messages:
            raise ConfigError("a chat request needs at least one message")
        object.__setattr__(self, "messages", tuple(messages))
        if isinstance(self.stop, str):
            object.__setattr__(self, "stop", (self.stop,))
        elif self.stop is not None:
            object.__setattr__(self, "stop", tuple(self.stop) or None)
        if not isinstance(self.n, int) or self.n < 1:
            raise ConfigError(f"n must be a positive integer; got {self.n!r}")
        if self.temperature is not None and not 0.0 <= self.temperature <= 2.0:
            raise ConfigError(f"temperature must lie in [0, 2]; got {self.temperature}")
        if self.top_p is not None and not 0.0 < self.top_p <= 1.0:
            raise ConfigError(f"top_p must lie in (0, 1]; got {self.top_p}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ConfigError(f"max_tokens must be positive; got {self.max_tokens}")
        if self.response_schema is not None and not isinstance(self.response_schema, Mapping):
            raise ConfigError(f"response_schema must be a JSON Schema mapping; got {type(self.response_schema).__name__}")

    def sampling_params(self) -> dict[str, Any]:
        """The sampling parameters as a plain dict (``None`` where unset), in a stable order."""
        return {
            "n": self.n,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "stop": list(self.stop) if self.stop else None,
        }

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict that :meth:`from_json` turns back into an equal request."""
        data = {
            "messages": [dict(m) for m in self.messages],
            **self.sampling_params(),
            "prompt_version": self.prompt_version,
            "stage": self.stage,
        }
        if self.response_schema is not None:
            data["response_schema"] = self.response_schema
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ChatRequest:
        """Rebuild a request from :meth:`to_json` output."""
        return cls(
            messages=tuple(data["messages"]),
            n=data.get("n", 1),
            temperature=data.get("temperature"),
            top_p=data.get("top_p"),
            max_tokens=data.get("max_tokens"),
            seed=data.get("seed"),
            stop=tuple(data["stop"]) if data.get("stop") else None,
            prompt_version=data.get("prompt_version", ""),
            stage=data.get("stage", ""),
            response_schema=data.get("response_schema"),
        )


@dataclass(frozen=True)
class Completion:
    """The answer to one :class:`ChatRequest`: ``n`` texts with their finish reasons and the token usage.

    Args:
        texts (`tuple[str, ...]`): one generated text per sample, in sample order.
        finish_reasons (`tuple[str, ...]`): per sample, ``"stop"``, ``"length"`` or whatever the backend reported.
        prompt_tokens (`int`): tokens of the prompt, counted once per request.
        completion_tokens (`int`): generated tokens over all samples.
        model (`str`): the model that answered (as the backend reports it).
        cached (`bool`, defaults to `False`): whether this answer came from the request cache. Not part of
            equality, so a replayed completion equals the original one.

    Example:
        >>> c = Completion(texts=("42",), finish_reasons=("stop",), prompt_tokens=5, completion_tokens=1, model="m")
        >>> c.text, c.total_tokens
        ('42', 6)
    """

    texts: tuple[str, ...]
    finish_reasons: tuple[str, ...]
    prompt_tokens: int
    completion_tokens: int
    model: str
    cached: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "texts", tuple(self.texts))
        object.__setattr__(self, "finish_reasons", tuple(self.finish_reasons))

    @property
    def text(self) -> str:
        """The first sample's text (the only one when ``n == 1``)."""
        return self.texts[0] if self.texts else ""

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (without ``cached``) that :meth:`from_json` turns back into an equal completion."""
        return {
            "texts": list(self.texts),
            "finish_reasons": list(self.finish_reasons),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "model": self.model,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, cached: bool = False) -> Completion:
        """Rebuild a completion from :meth:`to_json` output.

        Texts stored as lists of content parts (by versions before the client joined them) come back as their text.

        Example:
            >>> Completion.from_json({"texts": [[{"type": "text", "text": "a"}], "b"], "finish_reasons": ["stop"] * 2,
            ...                       "prompt_tokens": 1, "completion_tokens": 2, "model": "m"}).texts
            ('a', 'b')
        """
        return cls(
            texts=tuple(content_text(t) for t in data["texts"]),
            finish_reasons=tuple(data["finish_reasons"]),
            prompt_tokens=int(data["prompt_tokens"]),
            completion_tokens=int(data["completion_tokens"]),
            model=str(data["model"]),
            cached=cached,
        )


def as_requests(items: Iterable[ChatRequest | Sequence[Mapping[str, str]] | str]) -> list[ChatRequest]:
    """Accept requests, bare message lists or bare prompts, and return a list of :class:`ChatRequest`.

    Example:
        >>> [r.messages[0]["content"] for r in as_requests(["a", [{"role": "user", "content": "b"}]])]
        ['a', 'b']
    """
    out = []
    for item in items:
        if isinstance(item, ChatRequest):
            out.append(item)
        else:
            out.append(ChatRequest(item if isinstance(item, str) else tuple(item)))
    return out
