"""Late imports of optional dependencies with an error that says which extra to install, and the one way the
package turns ``datasets``' progress bars off for a while (:func:`datasets_bars_off`).

Example:
    >>> from evolvecoder_datasets._deps import require
    >>> json = require("json", extra="core")
    >>> json.dumps([1])
    '[1]'
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
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


@contextlib.contextmanager
def datasets_bars_off(off: bool = True) -> Iterator[bool]:
    """``datasets``' progress bars off inside the block (when ``off``), as they were after it; yields whether they
    were on before (the switch ``datasets.disable_progress_bars()`` sets, which the caller may follow).

    Example:
        >>> with datasets_bars_off() as were_on:
        ...     pass
    """
    import datasets

    were_on = not datasets.are_progress_bars_disabled()
    if off and were_on:
        datasets.disable_progress_bars()
    try:
        yield were_on
    finally:
        if off and were_on:
            datasets.enable_progress_bars()
