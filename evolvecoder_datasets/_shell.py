"""How to spell a command so that it runs as printed: the checkout's ``.venv/bin/<name>`` or this interpreter's.

The project's CLI and Python live in ``.venv/`` (``make`` creates it and does not activate it), so a printed next
step that says ``evolvecoder-datasets ...`` fails with "command not found" in the user's shell.

Example:
    >>> from evolvecoder_datasets._shell import venv_command
    >>> venv_command("python").endswith("python") or "python" in venv_command("python")
    True
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

__all__ = ["venv_command"]


def venv_command(name: str) -> str:
    """``name`` (``"python"``, ``"evolvecoder-datasets"``) as a shell word that runs from the current folder.

    ``.venv/bin/<name>`` when the current folder's ``.venv`` is the running environment (a checkout set up by
    ``make``), else the running interpreter's own script folder (absolute), else ``name`` itself.

    Example:
        >>> venv_command("evolvecoder-datasets")   # doctest: +SKIP
        '.venv/bin/evolvecoder-datasets'
    """
    here = Path(sys.executable).parent / name
    local = Path(".venv") / "bin" / name
    try:
        if local.exists() and local.parent.resolve() == here.parent.resolve():
            return str(local)
    except OSError:
        pass
    if name == "python":
        return str(local) if local.exists() and Path(".venv").resolve() == Path(sys.prefix).resolve() \
            else shlex.quote(sys.executable)
    return shlex.quote(str(here)) if here.exists() else name
