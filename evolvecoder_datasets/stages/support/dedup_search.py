"""Exact cosine search in float32 tiles: near-duplicate pairs and k-nearest-neighbour similarity.

Both walk ``block_size`` x ``block_size`` tiles of ``E @ E.T`` so memory stays bounded by one tile whatever the
number of rows; the pair search multiplies only tiles on or above the diagonal.

Example:
    >>> import numpy as np
    >>> from evolvecoder_datasets.stages.support.dedup_search import near_duplicate_pairs
    >>> e = np.array([[1, 0], [0.99, 0.141], [0, 1]], dtype=np.float32)
    >>> near_duplicate_pairs(e, threshold=0.9)[0].tolist()
    [0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._deps import require
from ...errors import ConfigError

BACKENDS = ("numpy", "faiss")
# Float32 rounding of a cosine between unit vectors of a few hundred dimensions stays well below this.
ROUNDING = 1e-5

__all__ = ["BACKENDS", "as_unit_float32", "knn_mean_similarity", "near_duplicate_pairs"]


def as_unit_float32(embeddings: Any) -> np.ndarray:
    matrix = np.ascontiguousarray(np.asarray(embeddings, dtype=np.float32))
    if matrix.ndim != 2:
        raise ConfigError(f"embeddings must be a 2-d array, got shape {matrix.shape}")
    # einsum avoids the n x dim temporary that np.linalg.norm would allocate.
    norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))[:, None]
    if not np.allclose(norms, 1.0, atol=1e-3):
        matrix = matrix / np.maximum(norms, 1e-12)
    return matrix


def near_duplicate_pairs(
    embeddings: Any,
    *,
    threshold: float = 0.9,
    block_size: int = 4096,
    backend: str = "numpy",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair ``i < j`` with cosine similarity ``>= threshold``, by exact search in float32 tiles.

    Similarities within float32 rounding (:data:`ROUNDING`) below the threshold count as at it, so
    ``threshold=1.0`` finds every pair of identical vectors; reported similarities are clipped to [-1, 1].

    Only tiles on or above the diagonal are multiplied (half the products of a full ``E @ E.T``), and peak
    memory is one ``block_size`` x ``block_size`` float32 tile plus the pairs found, whatever ``n`` is.

    Args:
        embeddings (`array-like`): ``(n, dim)`` vectors; rows are normalised if they are not unit-norm.
        threshold (`float`, defaults to 0.9): cosine similarity at or above which two rows are duplicates.
        block_size (`int`, defaults to 4096): tile side (4096 -> 64 MiB per tile).
        backend (`str`, defaults to `"numpy"`): ``"numpy"`` (BLAS matmul tiles) or ``"faiss"`` (``IndexFlatIP``
            range search, exact too; it keeps pairs strictly above the cut, which the rounding margin makes
            equivalent).

    Returns:
        `tuple[np.ndarray, np.ndarray, np.ndarray]`: ``(i, j, similarity)`` as int64, int64, float32 arrays,
        sorted by ``(i, j)``.

    Raises:
        ConfigError: a bad threshold, block size, backend or array shape.
        MissingExtraError: ``backend="faiss"`` without ``faiss-cpu``.

    Example:
        >>> import numpy as np
        >>> e = np.array([[1, 0], [0.99, 0.141], [0, 1]], dtype=np.float32)
        >>> i, j, s = near_duplicate_pairs(e, threshold=0.9)
        >>> list(zip(i.tolist(), j.tolist()))
        [(0, 1)]
    """
    if not -1.0 <= threshold <= 1.0:
        raise ConfigError(f"threshold must be a cosine similarity in [-1, 1], got {threshold}")
    if block_size < 1:
        raise ConfigError(f"block_size must be positive, got {block_size}")
    if backend not in BACKENDS:
        raise ConfigError(f"backend must be one of {BACKENDS}, got {backend!r}")
    matrix = as_unit_float32(embeddings)
    # A float32 dot product of two unit vectors is off by a few units in the last place (identical vectors
    # give 0.99999994 or 1.0000001), so a pair within ROUNDING of the threshold counts as at it; otherwise
    # threshold=1.0 would miss about half of the identical pairs. Similarities are reported clipped to [-1, 1].
    cut = threshold - ROUNDING
    if backend == "faiss":
        first, second, sims = _faiss_pairs(matrix, cut, block_size)
    else:
        first, second, sims = _numpy_pairs(matrix, cut, block_size)
    order = np.lexsort((second, first))
    return first[order], second[order], np.clip(sims[order], -1.0, 1.0)


def _numpy_pairs(
    matrix: np.ndarray, threshold: float, block: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = matrix.shape[0]
    found_i, found_j, found_s = [], [], []
    tile = np.empty((min(block, n), min(block, n)), dtype=np.float32)
    hits = np.empty(tile.shape, dtype=bool)
    for r0 in range(0, n, block):
        rows = matrix[r0 : r0 + block]
        for c0 in range(r0, n, block):
            cols = matrix[c0 : c0 + block]
            out = tile[: len(rows), : len(cols)]
            mask = hits[: len(rows), : len(cols)]
            np.matmul(rows, cols.T, out=out)
            np.greater_equal(out, threshold, out=mask)
            local_i, local_j = np.nonzero(mask)
            if c0 == r0:  # diagonal tile: keep the strict upper triangle
                upper = local_i < local_j
                local_i, local_j = local_i[upper], local_j[upper]
            if local_i.size:
                found_i.append(local_i + r0)
                found_j.append(local_j + c0)
                found_s.append(out[local_i, local_j].copy())
    return _concat(found_i, np.int64), _concat(found_j, np.int64), _concat(found_s, np.float32)


def _faiss_pairs(
    matrix: np.ndarray, threshold: float, block: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    faiss = require("faiss", extra="faiss", feature="faiss search backend", package="faiss-cpu")
    index = faiss.IndexFlatIP(matrix.shape[1])
    index.add(matrix)
    found_i, found_j, found_s = [], [], []
    for r0 in range(0, matrix.shape[0], block):
        limits, sims, neighbours = index.range_search(matrix[r0 : r0 + block], float(threshold))
        queries = np.repeat(np.arange(len(limits) - 1) + r0, np.diff(limits).astype(np.int64))
        keep = neighbours > queries
        found_i.append(queries[keep])
        found_j.append(neighbours[keep].astype(np.int64))
        found_s.append(sims[keep].astype(np.float32))
    return _concat(found_i, np.int64), _concat(found_j, np.int64), _concat(found_s, np.float32)


def _concat(parts: list[np.ndarray], dtype) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)


def knn_mean_similarity(embeddings: Any, *, k: int = 10, block_size: int = 4096) -> np.ndarray:
    """Per row, the mean cosine similarity to its ``k`` nearest other rows (the paper's Figure 2 statistic).

    Exact, in ``block_size`` tiles like :func:`near_duplicate_pairs`; ``k`` is capped at ``n - 1``.

    Args:
        embeddings (`array-like`): ``(n, dim)`` vectors.
        k (`int`, defaults to 10): neighbours per row.
        block_size (`int`, defaults to 4096): tile side.

    Raises:
        ConfigError: ``k < 1`` or a bad array.

    Example:
        >>> import numpy as np
        >>> knn_mean_similarity(np.eye(3, dtype=np.float32), k=2).tolist()
        [0.0, 0.0, 0.0]
    """
    if k < 1:
        raise ConfigError(f"k must be at least 1, got {k}")
    matrix = as_unit_float32(embeddings)
    n = matrix.shape[0]
    k = min(k, n - 1)
    if k < 1:
        return np.zeros(n, dtype=np.float32)
    means = np.empty(n, dtype=np.float32)
    for r0 in range(0, n, block_size):
        rows = matrix[r0 : r0 + block_size]
        best = np.full((len(rows), k), -np.inf, dtype=np.float32)
        for c0 in range(0, n, block_size):
            sims = rows @ matrix[c0 : c0 + block_size].T
            if c0 == r0:  # tiles are aligned, so a row meets itself only on the diagonal tile
                np.fill_diagonal(sims, -np.inf)
            merged = np.concatenate([best, sims], axis=1)
            best = -np.partition(-merged, k - 1, axis=1)[:, :k]
        means[r0 : r0 + len(rows)] = best.mean(axis=1)
    return means
