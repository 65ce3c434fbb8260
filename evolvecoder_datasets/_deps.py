"""Late imports of optional dependencies with an error that says which extra to install.

Example:
    >>> from evolvecoder_datasets._deps import require
    >>> json = require("json", extra="core")
    >>> json.dumps([1])
    '[1]'
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import MissingExtraError


def require(module: str, *, extra: str, feature: str = "", package: str | None = None) -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtraError` naming ``pip install 'evolvecoder-datasets[extra]'``.

    Args:
        module (`str`): dotted module name to import.
        extra (`str`): the extra of this package that provides it (``embed``, ``llm``, ``trl``, ``ray``, ``viz``).
        feature (`str`, *optional*): what needs it, for the message.
        package (`str`, *optional*): distribution name when it differs from the module name.

    Raises:
        MissingExtraError: the module cannot be imported.
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise MissingExtraError(package or module.split(".")[0], extra, feature) from err
