"""The stages' shared helpers under their old address; each now lives in a module with one concern.

- :mod:`.resources`: per-process backends and sandboxes (``get_backend``, ``close_backends``, ``get_sandbox``)
- :mod:`.seeding`: seeded randomness per problem (``stable_int``, ``problem_rng``)
- :mod:`.code_names`: names in tests and programs (``called_names``, ``defined_names``, ``independent_tests``,
  ``normalise_test``, ``reference_for``)
- :mod:`.checks`: batch cells and config values (``check_list_cells``, ``check_text_cells``, ``check_fraction``,
  ``check_positive``, ``check_on_llm_error``)
- :mod:`.drops`: ``drop_reason_counts``, ``without_dropped``
- :mod:`.llm_stage`: ``LLMStageConfig``, ``raise_unrecordable``
- :func:`evolvecoder_datasets.keys.config_digest`, :func:`evolvecoder_datasets.suite.as_origin_list`

Example:
    >>> from evolvecoder_datasets.stages._common import problem_rng
    >>> from evolvecoder_datasets.stages.seeding import problem_rng as same
    >>> problem_rng is same
    True
"""

from __future__ import annotations

from ..keys import config_digest
from ..suite import as_origin_list
from .checks import check_fraction, check_list_cells, check_on_llm_error, check_positive, check_text_cells
from .code_names import called_names, defined_names, independent_tests, normalise_test, reference_for
from .drops import drop_reason_counts, without_dropped
from .llm_stage import LLMStageConfig, raise_unrecordable
from .resources import close_backends, get_backend, get_sandbox
from .seeding import problem_rng, stable_int

__all__ = [
    "LLMStageConfig",
    "as_origin_list",
    "called_names",
    "check_fraction",
    "check_list_cells",
    "check_on_llm_error",
    "check_positive",
    "check_text_cells",
    "close_backends",
    "config_digest",
    "defined_names",
    "drop_reason_counts",
    "get_backend",
    "get_sandbox",
    "independent_tests",
    "normalise_test",
    "problem_rng",
    "raise_unrecordable",
    "reference_for",
    "stable_int",
    "without_dropped",
]
