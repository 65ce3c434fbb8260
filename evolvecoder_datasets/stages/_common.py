"""A shim kept for one caller: ``stages/search.py`` still imports these five helpers from here.

Each name lives in its own module (:mod:`.checks`, :mod:`.code_names`, :mod:`.seeding`); import it from there.
Delete this file when the search writer moves to its own package and imports them from their homes (issue 26).

Example:
    >>> from evolvecoder_datasets.stages._common import stable_int
    >>> from evolvecoder_datasets.stages.seeding import stable_int as same
    >>> stable_int is same
    True
"""

from __future__ import annotations

from .checks import check_fraction, check_positive
from .code_names import defined_names, normalise_test
from .seeding import stable_int

__all__ = ["check_fraction", "check_positive", "defined_names", "normalise_test", "stable_int"]
