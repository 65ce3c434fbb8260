"""Prompt builders and response parsers, one module per prompt family.

Each family module exposes ``VERSION`` (enters the request-cache key and the dataset fingerprint), ``STAGE``,
``build_messages(...)``, ``build_request(..., **sampling)`` and ``parse(text)``; ``parse`` returns a result
dataclass or raises :class:`~evolvecoder_datasets.errors.LLMResponseError` whose ``reason`` stages record as
``drop_reason``. Shared, model-proof parsing lives in :mod:`~evolvecoder_datasets.prompts.parsing`.

Example:
    >>> from evolvecoder_datasets import prompts
    >>> prompts.VERSIONS["refine"]
    'refine-1'
    >>> prompts.refine.parse('{"question": "Implement `def one() -> int` that returns 1.", '
    ...                      '"tests": ["assert one() == 1"]}').tests
    ['assert one() == 1']
"""

from __future__ import annotations

from . import adversarial, code_instruct, discriminative, inputs, parsing, refine, solve

__all__ = ["VERSIONS", "adversarial", "code_instruct", "discriminative", "inputs", "parsing", "refine", "solve"]

#: Version of every prompt family, for dataset cards and fingerprints.
VERSIONS = {
    "refine": refine.VERSION,
    "adversarial": adversarial.VERSION,
    "discriminative": discriminative.VERSION,
    "inputs": inputs.VERSION,
    "code_instruct": code_instruct.VERSION,
    "solve": solve.VERSION,
}
