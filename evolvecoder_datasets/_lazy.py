"""Lazy public names for a package: its submodules load on first use, so ``import evolvecoder_datasets`` stays fast
and imports no torch, transformers or Ray.

A package's ``__init__`` lists where each public name lives and installs the two module hooks:

Example:
    >>> from evolvecoder_datasets._lazy import lazy_exports
    >>> getattr_, dir_ = lazy_exports("json", {"JSONEncoder": "encoder"}, ["JSONEncoder"])
    >>> getattr_("JSONEncoder").__module__, dir_()
    ('json.encoder', ['JSONEncoder'])
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, attributes: Mapping[str, str], names: Iterable[str], *, submodules: Iterable[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of a package with lazily imported public names.

    Args:
        package (`str`): the package's ``__name__``.
        attributes (`Mapping[str, str]`): public name -> the submodule (relative to ``package``) that defines it.
        names (`Iterable[str]`): what ``dir(package)`` lists (usually its ``__all__``).
        submodules (`Iterable[str]`, *optional*): submodules returned themselves on ``package.<name>``.

    Example:
        >>> __getattr__, __dir__ = lazy_exports(__name__, {"Sandbox": "execution"}, ["Sandbox"])  # doctest: +SKIP
    """
    listed = list(names)
    modules = frozenset(submodules)

    def __getattr__(name: str) -> Any:
        if name in modules:
            return importlib.import_module(f"{package}.{name}")
        if name in attributes:
            return getattr(importlib.import_module(f"{package}.{attributes[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return listed

    return __getattr__, __dir__
