"""Fidelity oracles kept across runs: an oracle depends on its problem and the oracle's settings, never on the run.

A problem's oracle (:func:`~evolvecoder_datasets.search.oracle.build_oracles`) is a function of its id (the seed of
its candidates), its reference, its seed tests (the call and its seeds), its domain, the programs of its pool (the
constants they change are swept as candidates), the settings that shape it, and the code that builds it. All of these make
its key (:func:`oracle_key`), so a rerun, a second recipe on the same problems, or the next round reads it back
instead of running the reference on hundreds of candidates again; any change builds a new one. The labels of the
programs checked against it (1 right, 0 wrong) are kept beside it, keyed by the program's text, so a program
labelled once is not run again on the same oracle.

Only what the reference proved is kept: oracles that can label (no reason), and labels a run decided (a sandbox
failure, ``-1``, is asked again next time). The folder is ``$EVOLVECODER_ORACLE_CACHE``, else
``<cache root>/oracles`` (:func:`~evolvecoder_datasets._cache.cache_root`); it must be this user's and private
(mode 0700: another user who could write there could plant expected values), or the cache is not used and the run
says why once. Entries are JSON written atomically; an entry that does not read back as an oracle is a miss.

Example:
    >>> import tempfile
    >>> from evolvecoder_datasets.search.oracle import FidelityConfig, OracleProblem
    >>> from evolvecoder_datasets.search.oracle_cache import OracleCache, oracle_key
    >>> cache = OracleCache(tempfile.mkdtemp())
    >>> key = oracle_key(OracleProblem("P_1", "def f(x):\\n    return x\\n", ["assert f(1) == 1"]), FidelityConfig())
    >>> cache.put(key, {"id": "P_1", "tests": ["assert f(2) == 2"], "callee": "f", "candidates": 9, "usable": 1,
    ...                 "cpu": [0.001]})
    >>> cache.get(key)["tests"], cache.get("0" * 64)
    (['assert f(2) == 2'], None)
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .oracle import FidelityConfig, OracleProblem

__all__ = ["ENV", "OracleCache", "default_oracle_cache_dir", "oracle_key", "program_key"]

logger = logging.getLogger(__name__)

#: The environment variable naming the oracle cache's folder (the test suite points it at a folder of its own).
ENV = "EVOLVECODER_ORACLE_CACHE"

# Settings that do not change a problem's oracle (which problems get one, whether rewrites are labelled, how many
# names the statistics list) and so stay out of its key.
_NOT_KEYED = ("enabled", "sample", "rewrites", "max_listed", "cache")


def default_oracle_cache_dir() -> Path:
    """``$EVOLVECODER_ORACLE_CACHE``, else ``<cache root>/oracles``.

    Example:
        >>> from evolvecoder_datasets.search.oracle_cache import default_oracle_cache_dir
        >>> default_oracle_cache_dir().name == "oracles" or "EVOLVECODER_ORACLE_CACHE" in os.environ
        True
    """
    from .._cache import cache_root

    env = os.environ.get(ENV)
    return Path(env) if env else cache_root() / "oracles"


@functools.lru_cache(maxsize=1)
def _code_digest() -> str:
    """A digest of the code that builds and labels oracles (this folder and the shared float tolerance): a changed
    builder never reads an oracle an older one wrote, whether or not its version was bumped."""
    here = Path(__file__).resolve().parent
    files = sorted(here.glob("*.py")) + [here.parent / "tolerance.py"]
    h = hashlib.sha256()
    for path in files:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def oracle_key(problem: OracleProblem, config: FidelityConfig) -> str:
    """The key of ``problem``'s oracle under ``config``: a hex digest of everything the oracle depends on.

    Example:
        >>> from evolvecoder_datasets.search.oracle import FidelityConfig, OracleProblem
        >>> from evolvecoder_datasets.search.oracle_cache import oracle_key
        >>> p = OracleProblem("P_1", "def f(x):\\n    return x\\n", ["assert f(1) == 1"])
        >>> key = oracle_key(p, FidelityConfig())
        >>> key == oracle_key(p, FidelityConfig(sample=5)), key == oracle_key(p, FidelityConfig(inputs=9))
        (True, False)
    """
    from ..keys import semantic

    settings = semantic(config)
    for name in _NOT_KEYED:
        settings.pop(name, None)
    domain = problem.domain
    parts = {
        "code": _code_digest(), "settings": settings, "id": problem.id, "reference": problem.reference,
        "tests": list(problem.tests),
        "domain": None if domain is None else [domain.how, domain.contract, repr(domain.shape)],
        # the pool's programs, whose changed constants the oracle sweeps (their texts: hashed, not parsed again)
        "programs": sorted(program_key(code) for code in problem.programs),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=repr).encode()).hexdigest()


def program_key(code: str) -> str:
    """The key of a program's label beside an oracle: a digest of its text.

    Example:
        >>> from evolvecoder_datasets.search.oracle_cache import program_key
        >>> len(program_key("def f(): pass"))
        32
    """
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _as_entry(entry: Any) -> dict | None:
    """The oracle's fields an entry holds, checked, or ``None`` where it is not one (a miss, not an error)."""
    if not isinstance(entry, Mapping):
        return None
    tests, cpu, callee = entry.get("tests"), entry.get("cpu"), entry.get("callee")
    if not (isinstance(tests, list) and tests and all(isinstance(t, str) for t in tests)):
        return None
    if not (isinstance(cpu, list) and len(cpu) == len(tests)
            and all(isinstance(c, int | float) and not isinstance(c, bool) for c in cpu)):
        return None
    counts = [entry.get(name) for name in ("candidates", "usable")]
    if not isinstance(entry.get("id"), str) or not (callee is None or isinstance(callee, str)) \
            or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in counts):
        return None
    return {"id": entry["id"], "tests": list(tests), "callee": callee, "candidates": counts[0], "usable": counts[1],
            "cpu": [float(c) for c in cpu]}


class OracleCache:
    """Oracles and their programs' labels kept in a private folder across runs (see the module docstring).

    Args:
        folder (`str` or `os.PathLike`, *optional*): where the entries live (default:
            :func:`default_oracle_cache_dir`). Made (mode 0700) where missing.

    Attributes:
        hits (`int`): oracles read back; ``stored``: oracles written; ``labels_read``: labels read back.

    Example:
        >>> import tempfile
        >>> from evolvecoder_datasets.search.oracle_cache import OracleCache
        >>> cache = OracleCache(tempfile.mkdtemp())
        >>> cache.put_labels("ab" * 32, {"p1": 1, "p2": 0, "p3": -1})
        >>> cache.labels("ab" * 32)
        {'p1': 1, 'p2': 0}
    """

    def __init__(self, folder: str | os.PathLike | None = None) -> None:
        self.folder = Path(folder) if folder is not None else default_oracle_cache_dir()
        self.hits = self.stored = self.labels_read = 0
        self._usable: bool | None = None
        self._lock = threading.Lock()

    def _ready(self) -> bool:
        """Whether the folder is this user's and private (checked once; a refusal is said once and the cache is
        not used)."""
        if self._usable is None:
            from ..errors import SandboxUntrusted
            from ..execution._trust import private_folder

            try:
                self.folder.parent.mkdir(parents=True, exist_ok=True)
                private_folder(str(self.folder), whose="the fidelity oracle cache",
                               fix=f"remove it, or set {ENV} to a folder only you own, mode 0700")
                self._usable = True
            except (SandboxUntrusted, OSError) as err:  # the run goes on without the cache
                logger.warning("the fidelity oracle cache is not used (oracles are built as without it): %s", err)
                self._usable = False
        return self._usable

    def _path(self, key: str, kind: str) -> Path:
        if len(key) < 32 or not all(c in "0123456789abcdef" for c in key):
            raise ValueError(f"not an oracle key: {key!r}")
        return self.folder / f"{key}.{kind}.json"

    def _read(self, key: str, kind: str) -> Any:
        if not self._ready():
            return None
        try:
            fd = os.open(self._path(key, kind), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            with os.fdopen(fd, "rb") as f:
                return json.loads(f.read(64 << 20))
        except (OSError, ValueError):
            return None

    def _write(self, key: str, kind: str, value: Any) -> bool:
        if not self._ready():
            return False
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}.", dir=self.folder)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(value, f)
            os.replace(tmp, self._path(key, kind))
            return True
        except OSError as err:  # a full disk loses the entry, never the run
            logger.warning("could not keep a fidelity oracle in %s: %s", self.folder, err)
            return False

    def get(self, key: str) -> dict | None:
        """The fields of the oracle kept under ``key`` (``id``, ``tests``, ``callee``, ``candidates``, ``usable``,
        ``cpu``), or ``None`` (missing, unreadable, or not an oracle).

        Example:
            >>> OracleCache(tempfile.mkdtemp()).get("0" * 64) is None
            True
        """
        entry = _as_entry(self._read(key, "oracle"))
        if entry is not None:
            with self._lock:
                self.hits += 1
        return entry

    def put(self, key: str, fields: Mapping[str, Any]) -> None:
        """Keep an oracle's ``fields`` (as :meth:`get` returns them) under ``key``.

        Example:
            >>> OracleCache(tempfile.mkdtemp()).put("0" * 64, {"id": "P_1", "tests": []})
        """
        entry = _as_entry(fields)
        if entry is None:
            return
        if self._write(key, "oracle", entry):
            with self._lock:
                self.stored += 1

    def labels(self, key: str) -> dict[str, int]:
        """The labels (1 right, 0 wrong) kept beside the oracle ``key``, by :func:`program_key`.

        Example:
            >>> OracleCache(tempfile.mkdtemp()).labels("0" * 64)
            {}
        """
        entry = self._read(key, "labels")
        if not isinstance(entry, Mapping):
            return {}
        return {k: int(v) for k, v in entry.items()
                if isinstance(k, str) and v in (0, 1) and not isinstance(v, bool)}

    def labels_of(self, key: str | None, codes: Sequence[str]) -> list[int | None]:
        """Per program of ``codes``, the label kept beside the oracle ``key`` (``None`` where there is none, or no key).

        Example:
            >>> OracleCache(tempfile.mkdtemp()).labels_of("0" * 64, ["x = 1"])
            [None]
        """
        if key is None:
            return [None] * len(codes)
        kept = self.labels(key)
        found = [kept.get(program_key(code)) for code in codes]
        with self._lock:
            self.labels_read += sum(label is not None for label in found)
        return found

    def put_labels(self, key: str, labels: Mapping[str, int]) -> None:
        """Add ``labels`` (by :func:`program_key`) beside the oracle ``key``; ``-1`` (no label) is not kept.

        Example:
            >>> OracleCache(tempfile.mkdtemp()).put_labels("0" * 64, {"p": 1})
        """
        decided = {k: int(v) for k, v in labels.items() if v in (0, 1)}
        if not decided:
            return
        # threads of one run merge; two runs may each lose the other's new labels, never write a wrong one
        with self._lock:
            merged = {**self.labels(key), **decided}
            self._write(key, "labels", merged)
