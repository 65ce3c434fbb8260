"""What the stages that ask a model share: the config base class and the rule for failed requests.

Example:
    >>> from evolvecoder_datasets.stages.support.llm_stage import raise_unrecordable
    >>> raise_unrecordable(TimeoutError("slow"))  # an ordinary failure: the stage may record it
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ...errors import ConfigError, LLMCacheMissError, LLMResponseError
from ...llm.config import LLMConfig  # at run time: typing.get_type_hints of every stage config resolves `llm`

__all__ = ["LLMStageConfig", "parse_each", "raise_unrecordable"]

_Parsed = TypeVar("_Parsed")


def parse_each(texts: Sequence[str], parse: Callable[[str], _Parsed], entry: dict[str, Any]) -> list[_Parsed]:
    """``parse`` applied to each of an answer's texts (a request's ``n`` samples), in order: the results of those
    that parse. Where some do not, ``entry["notes"]`` says how many and why; where none does, the first one's
    :class:`LLMResponseError` is raised (the caller records it as the answer's error).

    Example:
        >>> import json
        >>> entry = {"notes": []}
        >>> def read(text):
        ...     try:
        ...         return json.loads(text)
        ...     except ValueError:
        ...         raise LLMResponseError("no JSON", reason="no_json") from None
        >>> parse_each(['{"a": 1}', "prose", "[2]"], read, entry), entry["notes"]
        ([{'a': 1}, [2]], ['answers: 1 of 3 unread (no_json 1)'])
    """
    results: list[_Parsed] = []
    failures: list[LLMResponseError] = []
    for text in texts:
        try:
            results.append(parse(text))
        except LLMResponseError as err:
            failures.append(err)
    if failures and not results:
        raise failures[0]
    if failures:
        reasons: dict[str, int] = {}
        for err in failures:
            reasons[err.reason] = reasons.get(err.reason, 0) + 1
        counted = ", ".join(f"{reason} {count}" for reason, count in sorted(reasons.items()))
        entry["notes"].append(f"answers: {len(failures)} of {len(texts)} unread ({counted})")
    return results


def raise_unrecordable(answer: BaseException) -> None:
    """Re-raise a failed request that ``on_llm_error="record"`` must not turn into a recorded row.

    An interrupt (any non-``Exception``) stops the run, and so does a cache miss of a replayed run: recording it
    would silently change a run that is meant to be reproduced exactly.

    Example:
        >>> raise_unrecordable(LLMCacheMissError("request abc is not cached"))
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.errors.LLMCacheMissError: request abc is not cached
    """
    if not isinstance(answer, Exception) or isinstance(answer, LLMCacheMissError):
        raise answer


_Config = TypeVar("_Config", bound="LLMStageConfig")


class LLMStageConfig:
    """Methods shared by the frozen configs of the stages that ask a test-writer model (refine, evolve).

    A subclass is a dataclass with an ``llm`` field (``LLMConfig | None``) and calls :meth:`_check_llm_field` from
    its ``__post_init__``.

    Example:
        >>> from evolvecoder_datasets.stages.refine import RefineConfig
        >>> isinstance(RefineConfig(), LLMStageConfig), RefineConfig().llm is None
        (True, True)
    """

    llm: LLMConfig | None  # declared by the dataclass subclass

    def _check_llm_field(self) -> None:
        from ...llm.config import LLMConfig

        if self.llm is not None and not isinstance(self.llm, LLMConfig):
            raise ConfigError(f"{type(self).__name__}.llm must be an LLMConfig, got {type(self.llm).__name__}")

    def replace(self: _Config, **changes: Any) -> _Config:
        """A copy with ``changes`` applied (validated again)."""
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]

    def require_llm(self) -> LLMConfig:
        """The test-writer configuration.

        Raises:
            ConfigError: ``llm`` is unset.
        """
        if self.llm is None:
            raise ConfigError(f"{type(self).__name__}.llm is unset: give the stage a test-writer LLMConfig")
        return self.llm
