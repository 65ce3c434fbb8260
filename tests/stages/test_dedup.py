"""Semantic deduplication: exact tiled search, keep rules, marks, statistics, the real offline embedder."""

from __future__ import annotations

import io
import sqlite3
import zipfile

import numpy as np
import pytest
from datasets import Dataset

from evolvecoder_datasets.errors import ConfigError, SchemaError
from evolvecoder_datasets.stages.dedup import deduplicate, drop_duplicates, find_near_duplicates
from evolvecoder_datasets.stages.support import dedup_embed
from evolvecoder_datasets.stages.support.dedup_embed import setup_mpnet
from evolvecoder_datasets.stages.support.dedup_search import knn_mean_similarity, near_duplicate_pairs


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def clustered(n_clusters: int = 12, per_cluster: int = 4, dim: int = 32, noise: float = 0.02, seed: int = 0):
    """Rows in tight clusters (cosine ~0.99 inside, ~0 across) plus their cluster labels."""
    rng = np.random.default_rng(seed)
    centres = unit(rng.standard_normal((n_clusters, dim)))
    labels = np.repeat(np.arange(n_clusters), per_cluster)
    return unit(centres[labels] + noise * rng.standard_normal((len(labels), dim))), labels


def dataset(vectors: np.ndarray, sources=None, texts=None) -> Dataset:
    n = len(vectors)
    return Dataset.from_dict(
        {
            "id": [f"P_{k}" for k in range(n)],
            "question": texts or [f"problem number {k}" for k in range(n)],
            "source": sources or ["A" if k % 2 else "B" for k in range(n)],
            "tests": [["assert True"] * (k % 3) for k in range(n)],
            "emb": vectors.tolist(),
        }
    )


@pytest.mark.parametrize("block_size", [1, 5, 64, 4096])
def test_tiled_search_finds_exactly_the_brute_force_pairs_whatever_the_tile(block_size):
    vectors = unit(np.random.default_rng(1).standard_normal((300, 8)))
    full = vectors @ vectors.T
    want = {(i, j) for i, j in zip(*np.nonzero(full >= 0.7)) if i < j}
    first, second, sims = near_duplicate_pairs(vectors, threshold=0.7, block_size=block_size)
    assert set(zip(first.tolist(), second.tolist())) == want and len(first) == len(want)
    assert np.allclose(sims, full[first, second], atol=1e-5)


def test_knn_mean_similarity_matches_brute_force_and_excludes_the_row_itself():
    vectors = unit(np.random.default_rng(2).standard_normal((50, 6)))
    full = vectors @ vectors.T
    np.fill_diagonal(full, -np.inf)
    want = np.sort(full, axis=1)[:, -10:].mean(axis=1)
    assert np.allclose(knn_mean_similarity(vectors, k=10, block_size=7), want, atol=1e-5)


def test_leader_keeps_one_per_group_and_no_two_kept_rows_are_near_duplicates():
    vectors, labels = clustered()
    ds = dataset(vectors)
    marked = deduplicate(ds, embedding_column="emb", threshold=0.9, seed=3)
    dup_of, score = marked["dup_of"], marked["dup_score"]
    kept = [k for k, d in enumerate(dup_of) if d is None]
    assert len(kept) == 12 and sorted(labels[kept].tolist()) == list(range(12))
    index = {row_id: k for k, row_id in enumerate(marked["id"])}
    for k, (target, s) in enumerate(zip(dup_of, score)):
        if target is not None:
            assert target in {marked["id"][j] for j in kept}
            assert s == pytest.approx(float(vectors[k] @ vectors[index[target]]), abs=1e-4) and s >= 0.9
    sims = vectors[kept] @ vectors[kept].T
    assert (sims[np.triu_indices(len(kept), 1)] < 0.9).all()


def test_the_same_seed_gives_the_same_marks_and_other_seeds_pick_other_representatives():
    vectors, _ = clustered()
    ds = dataset(vectors)
    runs = {seed: deduplicate(ds, embedding_column="emb", seed=seed)["dup_of"] for seed in range(4)}
    assert deduplicate(ds, embedding_column="emb", seed=0)["dup_of"] == runs[0]
    assert len({tuple(marks) for marks in runs.values()}) > 1


def test_priority_column_and_callable_decide_the_representative_before_the_random_order():
    vectors, labels = clustered()
    ds = dataset(vectors)
    by_tests = find_near_duplicates(ds, embedding_column="emb", priority="tests", seed=5)
    counts = np.array([len(t) for t in ds["tests"]])
    for cluster in range(12):
        members = np.nonzero(labels == cluster)[0]
        kept = [k for k in members if by_tests.dup_of[k] is None]
        assert len(kept) == 1 and counts[kept[0]] == counts[members].max()
    prefer_a = find_near_duplicates(
        ds, embedding_column="emb", priority=lambda row: row["source"] == "A", seed=5
    )
    assert all(ds["source"][k] == "A" for k in np.nonzero(prefer_a.kept)[0])


def test_component_rule_keeps_one_row_per_chain_where_leader_may_keep_two():
    # a - b - c on a line: a~b and b~c are above threshold, a~c is not.
    angles = np.radians([0.0, 20.0, 40.0, 120.0])
    vectors = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    ds = dataset(vectors)
    component = find_near_duplicates(ds, embedding_column="emb", threshold=0.9, keep="component", seed=0)
    assert component.kept.tolist().count(True) == 2
    leader_counts = {
        int(find_near_duplicates(ds, embedding_column="emb", threshold=0.9, seed=s).kept.sum())
        for s in range(20)
    }
    assert leader_counts == {2, 3}  # b first: one kept for the chain; a or c first: a and c both kept


def test_exact_duplicates_are_grouped_by_normalised_text_before_the_search():
    vectors = unit(np.eye(4, dtype=np.float32))
    texts = ["Sum two numbers", "sum  TWO numbers", "Reverse", "Sort"]
    result = find_near_duplicates(dataset(vectors, texts=texts), embedding_column="emb", seed=0)
    assert result.summary()["distinct_texts"] == 3
    marked = {row_id: target for row_id, target in zip(result.ids, result.dup_of) if target is not None}
    assert marked in ({"P_1": "P_0"}, {"P_0": "P_1"})
    assert [s for s in result.dup_score if s is not None] == [1.0]


def test_marks_are_columns_and_only_drop_duplicates_removes_rows():
    vectors, _ = clustered(n_clusters=3, per_cluster=3)
    ds = dataset(vectors)
    marked = deduplicate(ds, embedding_column="emb")
    assert len(marked) == len(ds) and {"dup_of", "dup_score"} <= set(marked.column_names)
    assert str(marked.features["dup_score"].dtype) == "float32"
    remarked = deduplicate(marked, embedding_column="emb")
    assert remarked["dup_of"] == marked["dup_of"]
    assert len(drop_duplicates(marked)) == 3


def test_duplication_matrix_counts_rows_with_a_near_duplicate_in_each_source():
    vectors = unit(np.array([[1, 0, 0], [1, 0.01, 0], [0, 1, 0], [0, 1, 0.01], [0, 0, 1]], dtype=np.float32))
    ds = dataset(vectors, sources=["A", "B", "A", "A", "B"])
    matrix = find_near_duplicates(ds, embedding_column="emb").duplication_matrix()
    assert matrix.sources == ["A", "B"] and matrix.counts == [3, 2]
    assert matrix.pairs == [[2, 1], [1, 0]]
    assert matrix.fraction[0] == pytest.approx([2 / 3, 1 / 3])
    assert "| A (3) | 66.7% | 33.3% |" in matrix.to_markdown()


def test_knn_statistic_drops_after_deduplication():
    vectors, _ = clustered(n_clusters=30, per_cluster=3, dim=16, seed=4)
    stats = find_near_duplicates(dataset(vectors), embedding_column="emb").knn_similarity(k=2)
    assert len(stats["before"]) == 90 and len(stats["after"]) == 30
    assert stats["before"].mean() > 0.9 > stats["after"].mean()


def test_bad_arguments_raise_typed_errors():
    ds = dataset(unit(np.eye(3, dtype=np.float32)))
    with pytest.raises(ConfigError):
        deduplicate(ds, embedding_column="emb", keep="drop_all")
    with pytest.raises(ConfigError):
        deduplicate(ds, embedding_column="emb", threshold=1.5)
    with pytest.raises(SchemaError):
        deduplicate(ds.remove_columns("question"), embedding_column="emb")
    with pytest.raises(SchemaError):
        drop_duplicates(ds)


def test_setup_mpnet_assembles_a_split_zip_into_a_model_folder(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        bundle.writestr("all-mpnet-base-v2/modules.json", "[]")
        bundle.writestr("all-mpnet-base-v2/config.json", "{}")
        bundle.writestr("all-mpnet-base-v2/model.safetensors", b"\0" * 5000)
    blob = buffer.getvalue()
    parts = tmp_path / "parts"
    parts.mkdir()
    size = -(-len(blob) // 5)
    for k in range(5):
        (parts / f"all-mpnet-base-v2.zip.{k + 1:03d}").write_bytes(blob[k * size : (k + 1) * size])
    folder = setup_mpnet(tmp_path / "model", parts_dir=parts)
    assert folder.name == "all-mpnet-base-v2" and (folder / "model.safetensors").stat().st_size == 5000
    assert setup_mpnet(tmp_path / "model") == folder  # already assembled: no parts needed
    (parts / "all-mpnet-base-v2.zip.005").unlink()
    with pytest.raises(ConfigError, match="expected 5 pieces"):
        setup_mpnet(tmp_path / "other", parts_dir=parts)


def test_offline_minilm_marks_a_paraphrase_and_reuses_cached_embeddings(tmp_path):
    texts = [
        "Given an array of integers, return the indices of two numbers that add up to a target.",
        "Given an integer array, return indices of the two numbers whose sum equals the target.",
        "Write a function that reverses the words of a sentence.",
        "Count the number of islands in a grid of land and water cells.",
    ]
    ds = Dataset.from_dict({"id": ["a", "b", "c", "d"], "question": texts, "source": ["X", "Y", "X", "Y"]})
    result = find_near_duplicates(ds, threshold=0.85, cache_dir=tmp_path, seed=0)
    assert result.node_vectors.shape == (4, 384)
    assert sorted(result.dup_of, key=str) in ([None, None, None, "a"], [None, None, None, "b"])
    (cache_file,) = tmp_path.glob("*.sqlite")
    with sqlite3.connect(cache_file) as db:
        assert db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0] == 4
    dedup_embed._MODELS.clear()
    again = find_near_duplicates(ds, threshold=0.85, cache_dir=tmp_path, seed=0)
    assert dedup_embed._MODELS == {}  # every text came from the cache: the model was not loaded
    assert again.dup_of == result.dup_of and np.allclose(again.node_vectors, result.node_vectors)


def test_faiss_backend_finds_the_same_pairs_as_the_numpy_tiles():
    pytest.importorskip("faiss")
    vectors = unit(np.random.default_rng(7).standard_normal((400, 8)))
    ours = near_duplicate_pairs(vectors, threshold=0.75, block_size=64)
    theirs = near_duplicate_pairs(vectors, threshold=0.75, block_size=64, backend="faiss")
    assert ours[0].tolist() == theirs[0].tolist() and ours[1].tolist() == theirs[1].tolist()
    assert np.allclose(ours[2], theirs[2], atol=1e-5)
