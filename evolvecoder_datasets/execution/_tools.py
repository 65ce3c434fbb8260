"""The judge's side of compiled languages and checkers: compile once per source, check each case apart.

Both run in fork servers of their own, never in the ones that run programs:

* a **toolchain** server binds the compilers' folders (:func:`~.languages.toolchain_binds`) and only compiles;
  its binaries come back as bytes and are kept here by :func:`~.languages.compile_key` (an LRU of at most
  :data:`CACHE_BYTES`), so a source is compiled once per judge process however many jobs run it; a compile error
  is kept too (the same source fails the same way);
* a **checker** server runs only checkers: it holds a case's expected answer while the checker reads it, and no
  program process is ever forked from it.

Example:
    >>> from evolvecoder_datasets.execution._engine import _Pool
    >>> from evolvecoder_datasets.execution._tools import Tools
    >>> Tools("none", _Pool).build("python", "print(1)")
    Built(binary=None, error=None, infra=None)
"""

from __future__ import annotations

import collections
import itertools
import threading
from dataclasses import dataclass
from typing import Any

from ..errors import SandboxCrashed
from .checkers import (
    CHECKER_CPU_S,
    CHECKER_FAILED,
    CHECKER_MEMORY_MB,
    CHECKER_WALL_S,
    Checker,
    checker_verdict,
)
from .languages import (
    COMPILE_CPU_S,
    COMPILE_MEMORY_MB,
    COMPILE_WALL_S,
    MAX_BINARY_BYTES,
    PRECOMPILE_CPU_S,
    PRECOMPILE_WALL_S,
    can_compile,
    compile_command,
    compile_key,
    language,
    precompiled_header,
)

__all__ = ["CACHE_BYTES", "Built", "Tools"]

#: Compiled binaries kept per judge process (bytes of base64 text).
CACHE_BYTES = 128 << 20  # a judge process has 2 GiB of address space (service.JUDGE_ADDRESS_SPACE)

_ids = itertools.count(1 << 40)
_pools: dict[tuple, Any] = {}
_pools_lock = threading.Lock()
# The compile cache of this process: key -> Built, oldest first, its size in bytes, and a lock per compile running.
_cache: collections.OrderedDict[str, Built] = collections.OrderedDict()
_cache_size = [0]
_cache_lock = threading.Lock()
_building: dict[str, threading.Lock] = {}


#: The message of a case the checker never reached (it failed on an earlier case of the job).
NOT_CHECKED = "not checked: the checker failed on an earlier case"


@dataclass(frozen=True)
class Built:
    """A compile's outcome: ``binary`` (base64) or ``error`` (the compiler's words, the program's ``syntax_error``)
    or ``infra`` (the toolchain itself failed: nobody's verdict). All ``None`` for an interpreted language."""

    binary: str | None = None
    error: str | None = None
    infra: str | None = None


def _pool(isolation: str, role: str, factory):
    """The shared pool of ``role`` (``"toolchain"`` or ``"checker"``) servers for ``isolation``, started once;
    ``factory`` is the engine's pool class (``_engine._Pool``)."""
    from .languages import toolchain_binds

    with _pools_lock:
        pool = _pools.get((isolation, role))
        if pool is None:
            binds = tuple(toolchain_binds()) if role == "toolchain" else ()
            pool = _pools[(isolation, role)] = factory(isolation, 1, None, binds=binds, role=role)
        pool.start()
        return pool


class Tools:
    """Compiles and checks for one engine (``isolation`` its fork servers' kind, ``pools`` the class of its pools of
    fork servers)."""

    def __init__(self, isolation: str, pools=None) -> None:
        self.isolation = isolation
        self.pools = pools

    # -- compiling ---------------------------------------------------------------------------------------------
    def build(self, name: str, source: str) -> Built:
        """The binary of ``source`` in language ``name`` (compiled here once, then from the cache)."""
        if not compile_command(name):
            return Built()
        if not can_compile(name):  # the machine's lack, not the program's error
            return Built(infra=f"no compiler for {name} on this machine ({compile_command(name)[0]})")
        key = compile_key(name, source)
        with _cache_lock:
            found = _cache.get(key)
            if found is not None:
                _cache.move_to_end(key)
                return found
            lock = _building.setdefault(key, threading.Lock())
        with lock:  # two jobs of one new source: one compile
            with _cache_lock:
                found = _cache.get(key)
            if found is not None:
                return found
            built = self._compile(name, source)
            with _cache_lock:
                _building.pop(key, None)
                if built.infra is None:
                    self._remember(key, built)
            return built

    @staticmethod
    def _remember(key: str, built: Built) -> None:
        _cache[key] = built
        _cache_size[0] += len(built.binary or built.error or "")
        while _cache_size[0] > CACHE_BYTES and len(_cache) > 1:
            _, old = _cache.popitem(last=False)
            _cache_size[0] -= len(old.binary or old.error or "")

    def _compile(self, name: str, source: str) -> Built:
        entry = language(name)
        message = {"kind": "compile", "source": source, "source_name": entry.source_name,
                   "command": compile_command(name, "{src}", "{out}"), "timeout_s": COMPILE_CPU_S,
                   "wall_timeout_s": COMPILE_WALL_S,
                   "load_timeout_s": 1.0, "memory_mb": COMPILE_MEMORY_MB, "max_output_bytes": MAX_BINARY_BYTES,
                   "max_processes": 64, "max_open_files": 256, "max_binary_bytes": MAX_BINARY_BYTES,
                   "pch": precompiled_header(name), "pch_cpu_s": PRECOMPILE_CPU_S,
                   "pch_wall_s": PRECOMPILE_WALL_S}  # fmt: skip
        reply, error = self._call("toolchain", message, COMPILE_WALL_S + PRECOMPILE_WALL_S + 30.0)
        if reply is None:
            return Built(infra=f"the compiler's sandbox failed: {error}")
        if reply.get("infra_error"):
            return Built(infra=str(reply["infra_error"])[:500])
        binary = reply.get("binary")
        if isinstance(binary, str) and binary:
            return Built(binary=binary)
        said = (reply.get("messages") or ["compile error"])[0]
        return Built(error=str(said)[:4000])

    # -- checking ----------------------------------------------------------------------------------------------
    def check(self, checker: Checker, cases: list[tuple[int, str, str, str]]) -> tuple[dict[int, tuple[str, str]], str | None]:
        """Verdicts of ``cases`` (``(index, input, output, answer)``) by ``checker``: ``{index: (status, message)}``
        with ``status`` ``pass``, ``fail`` or ``checker_failed``; and an infrastructure error that spoils them all
        (the checker did not compile, its sandbox failed), else ``None``."""
        if not cases:
            return {}, None
        message: dict[str, Any] = {"kind": "check", "contract": checker.contract, "timeout_s": CHECKER_CPU_S,
                                   "wall_timeout_s": CHECKER_WALL_S,
                                   "load_timeout_s": 1.0, "memory_mb": CHECKER_MEMORY_MB,
                                   "max_output_bytes": 1 << 20, "max_processes": 16, "max_open_files": 64,
                                   "cases": [[given, output, answer] for _, given, output, answer in cases],
                                   "source": None, "binary": None}  # fmt: skip
        if compile_command(checker.language):
            built = self.build(checker.language, checker.source)
            if built.binary is None:
                if built.infra is not None:
                    return {}, f"the checker's compiler failed: {built.infra[:1000]}"
                return {}, f"{CHECKER_FAILED}: it does not compile: {(built.error or '')[:1000]}"
            message["binary"] = built.binary
        else:
            message["source"] = checker.source
        reply, error = self._call("checker", message, len(cases) * (CHECKER_WALL_S + 1.0) + 30.0)
        if reply is None or reply.get("infra_error"):
            return {}, f"the checker's sandbox failed: {error or reply.get('infra_error')}"
        endings, said = reply.get("endings"), reply.get("messages")
        if not isinstance(endings, list) or not isinstance(said, list) or len(endings) != len(said):
            return {}, "the checker's sandbox sent a malformed reply"
        out = {index: ("checker_failed", NOT_CHECKED) for index, *_ in cases}
        for (index, *_), ending, words in zip(cases, endings, said):
            code, killed = (ending + [None, None])[:2] if isinstance(ending, list) else (None, "signal")
            code = code if isinstance(code, int) else None
            killed = killed if isinstance(killed, str) else None
            out[index] = checker_verdict(checker.contract, code, killed, words if isinstance(words, str) else "")
        return out, None

    def _call(self, role: str, message: dict, deadline: float) -> tuple[dict | None, Exception | None]:
        try:
            pool = _pool(self.isolation, role, self.pools)
        except Exception as err:  # noqa: BLE001 - a server that cannot start: an infrastructure failure
            return None, err
        worker = pool.get()
        try:
            message = {**message, "id": next(_ids), "uid": worker.uid, "mode": "isolated"}
            for _attempt in range(2):
                try:
                    return worker.call(message, deadline), None
                except SandboxCrashed as err:
                    error = err
            return None, error
        finally:
            pool.put(worker)
