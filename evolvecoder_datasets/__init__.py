"""evolvecoder-datasets: coding RL datasets with adversarially evolved test suites.

Importing the package is cheap: submodules (and their heavy dependencies) load on first attribute access.

Example:
    >>> import evolvecoder_datasets as ecd
    >>> ecd.__version__
    '0.1.0'
    >>> from evolvecoder_datasets.execution import run_tests   # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_exports

__version__ = "0.1.0"

# Public submodules, attached on first access (as huggingface_hub does).
_SUBMODULES = {
    "errors",
    "schema",
    "execution",
    "passmatrix",
    "llm",
    "prompts",
    "stages",
    "sources",
    "mutants",
    "metrics",
    "rounds",
    "cards",
    "rewards",
    "distributed",
    "code_instruct",
    "cli",
}

# No name is re-exported at the top level: each lives at one address, in its submodule
# (``from evolvecoder_datasets.execution import Sandbox``).
__all__ = sorted(_SUBMODULES | {"__version__"})


__getattr__, __dir__ = lazy_exports(__name__, {}, __all__, submodules=_SUBMODULES)


if TYPE_CHECKING:  # pragma: no cover
    from . import errors, execution, passmatrix  # noqa: F401
