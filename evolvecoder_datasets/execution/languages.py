"""The languages programs (and checkers) are written in: one table entry each, not branches.

An entry says how a source becomes something a sandbox process runs. Python needs no compile step: the fork
server's own interpreter loads the program (that is what makes split asserts and fork-per-test cheap). A compiled
language has a compile command, run in a sandbox process of its own (a fork server that binds the toolchain and runs
nothing else, as the sandbox uid, with :data:`COMPILE_CPU_S` and :data:`COMPILE_MEMORY_MB`); its binary comes back
as bytes, is cached by the hash of the command and the source, and runs from a sealed in-memory file in each case's
process (nothing a program writes can change the binary a later case or program runs). A compile error is the
program's ``syntax_error``.

A third language is one more entry: its file name, compile command (``{src}``, ``{out}`` and ``{include}`` are
filled in) and the host folders its toolchain needs.

Example:
    >>> from evolvecoder_datasets.execution.languages import LANGUAGES, compile_command
    >>> sorted(LANGUAGES)
    ['c', 'cpp', 'python']
    >>> compile_command("cpp")[:3]
    ['/usr/bin/g++', '-O2', '-std=gnu++17']
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass

from ..errors import ConfigError

__all__ = ["COMPILE_CPU_S", "COMPILE_MEMORY_MB", "COMPILE_WALL_S", "LANGUAGES", "MAX_BINARY_BYTES", "PRECOMPILE_CPU_S",
           "PRECOMPILE_WALL_S", "TESTLIB_INCLUDE",
           "Language", "can_compile", "compile_command", "compile_key", "language", "precompiled_header",
           "toolchain_binds"]

#: CPU seconds, wall-clock seconds and address space one compile gets (a testlib checker needs ~4.3 s and
#: ~250 MB with g++ 12).
COMPILE_CPU_S = 30.0
COMPILE_WALL_S = 2 * COMPILE_CPU_S + 10.0
#: The same for building a precompiled header (once per toolchain server; ~2.3 CPU-s for ``bits/stdc++.h``).
PRECOMPILE_CPU_S = 30.0
PRECOMPILE_WALL_S = 60.0
COMPILE_MEMORY_MB = 2048
#: Folder of the vendored ``testlib.h`` (0.9.45), on the include path of every C/C++ compile.
TESTLIB_INCLUDE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")
#: The largest binary a compile may leave (bytes).
MAX_BINARY_BYTES = 64 << 20


@dataclass(frozen=True)
class Language:
    """One entry of :data:`LANGUAGES`.

    Args:
        name: its key (``"python"``, ``"cpp"``).
        source_name: the file the source is written to before compiling.
        compile: the compile command, or ``None`` where the fork server's interpreter runs the source itself.
        toolchain: host folders (read-only) the compile command needs inside its sandbox.
        precompiled: a header most sources include first (``bits/stdc++.h``) and the command that precompiles it
            with the compile command's own flags (``{src}``, ``{out}``): the toolchain server builds it once, from
            our own one-line source, and puts its folder first on the include path (a source that does not include
            it first compiles as before).
    """

    name: str
    source_name: str
    compile: tuple[str, ...] | None = None
    toolchain: tuple[str, ...] = ()
    precompiled: tuple[str, tuple[str, ...]] | None = None


LANGUAGES: dict[str, Language] = {
    "python": Language("python", "main.py"),
    "cpp": Language(
        "cpp",
        "main.cpp",
        ("/usr/bin/g++", "-O2", "-std=gnu++17", "-pipe", "-I", "{include}", "-o", "{out}", "{src}"),
        ("/usr/bin", "/usr/include", "/usr/libexec"),
        ("bits/stdc++.h", ("/usr/bin/g++", "-O2", "-std=gnu++17", "-x", "c++-header", "-o", "{out}", "{src}")),
    ),
    "c": Language(
        "c",
        "main.c",
        ("/usr/bin/gcc", "-O2", "-std=gnu11", "-pipe", "-I", "{include}", "-o", "{out}", "{src}", "-lm"),
        ("/usr/bin", "/usr/include", "/usr/libexec"),
    ),
}


def language(name: str) -> Language:
    """The table entry for ``name``; a :class:`~evolvecoder_datasets.errors.ConfigError` naming the known ones.

    Example:
        >>> language("cpp").source_name
        'main.cpp'
    """
    found = LANGUAGES.get(name) if isinstance(name, str) else None
    if found is None:
        raise ConfigError(f"unknown language {name!r}; choose one of {sorted(LANGUAGES)}")
    return found


def compile_command(name: str, src: str = "main.cpp", out: str = "main") -> list[str]:
    """The compile command of language ``name`` for ``src`` -> ``out`` (``[]`` where there is none).

    Example:
        >>> compile_command("python")
        []
    """
    entry = language(name)
    if entry.compile is None:
        return []
    fill = {"{src}": src, "{out}": out, "{include}": TESTLIB_INCLUDE}
    return [fill.get(part, part) for part in entry.compile]


def precompiled_header(name: str) -> dict | None:
    """What a compile job of language ``name`` sends for its precompiled header (``None`` where it has none).

    Example:
        >>> precompiled_header("cpp")["header"], precompiled_header("python")
        ('bits/stdc++.h', None)
    """
    entry = language(name)
    if entry.precompiled is None:
        return None
    header, command = entry.precompiled
    return {"header": header, "command": list(command)}


def compile_key(name: str, source: str) -> str:
    """The cache key of a compiled ``source``: the hash of its command (the compiler's path and version included)
    and its text.

    Example:
        >>> len(compile_key("cpp", "int main() {}"))
        64
    """
    command = compile_command(name)
    digest = hashlib.sha256()
    for part in (*command, _compiler_identity(command[0]) if command else "", source):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()


def _compiler_identity(path: str) -> str:
    try:
        real = os.path.realpath(path)
        stat = os.stat(real)
    except OSError:
        return path
    return f"{real}:{stat.st_size}:{int(stat.st_mtime)}"


def toolchain_binds() -> list[str]:
    """Host folders every compiled language's toolchain needs, those that exist here.

    Example:
        >>> "/usr/include" in toolchain_binds() or shutil.which("g++") is None
        True
    """
    folders = {folder for entry in LANGUAGES.values() for folder in entry.toolchain}
    return sorted(folder for folder in folders if os.path.isdir(folder))


def can_compile(name: str) -> bool:
    """Whether this machine has language ``name``'s compiler (Python always).

    Example:
        >>> can_compile("python")
        True
    """
    command = compile_command(name)
    return not command or shutil.which(command[0]) is not None
