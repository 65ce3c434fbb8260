"""Every documented way to read a local round store returns that revision's rows, or fails loudly.

The store is a real one (``push_round`` into a bare git repository) whose rounds differ in their rows, so a reader
that silently took another revision (``main``, or the newest) would be caught. The GRPO recipe is the separate
``tests/test_grpo_train_recipe.py``; the Colab notebook's reading cell runs in ``tests/test_colab_notebook.py``.
"""

from __future__ import annotations

import pytest

datasets = pytest.importorskip("datasets")

from evolvecoder_datasets.errors import RevisionNotFoundError
from evolvecoder_datasets.rounds import load_round, push_final, push_round, round_folder


def _rows(r: int) -> datasets.Dataset:
    ids = [f"P_{r}_{i}" for i in range(r + 2)]  # round r has r + 2 problems, each id naming its round
    return datasets.Dataset.from_dict({"id": ids, "question": [f"Round {r}: write add(a, b)."] * len(ids),
                                       "tests": [["assert add(1, 2) == 3"] * (r + 1)] * len(ids)})


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("consumers") / "store"
    for r in range(3):
        push_round(_rows(r), path, r)
    push_final(_rows(9).select(range(1)), path, round=2)
    return path


def test_load_round_returns_the_rows_of_the_asked_revision(store):
    assert load_round(store, round=2)["id"] == _rows(2)["id"]
    assert load_round(store, round="round1")["id"] == _rows(1)["id"]
    assert load_round(store)["id"] == ["P_9_0"]  # main


def test_load_dataset_of_round_folder_is_the_path_form_that_honours_the_revision(store, tmp_path):
    folder = round_folder(store, "round2", cache_dir=str(tmp_path))
    rows = datasets.load_dataset(folder, split="train", cache_dir=str(tmp_path / "hf"))
    assert rows["id"] == _rows(2)["id"]
    assert round_folder(store, 0, cache_dir=str(tmp_path)) != folder


@pytest.mark.parametrize("revision", ["round2", None])
def test_load_dataset_on_the_store_itself_fails_naming_the_call_that_reads_it(store, tmp_path, revision):
    """``load_dataset(store, revision=...)`` is the first thing a datasets user types; datasets reads a local folder's
    files, never its git revisions, so it cannot honour ``revision``. It fails (rather than give another revision's
    rows), and its error names ``load_round`` and ``round_folder``; the folder's README says the same to a person."""
    with pytest.raises(FileNotFoundError, match=r"load_round\(store,round=N\).*round_folder"):
        datasets.load_dataset(str(store), revision=revision, split="train", cache_dir=str(tmp_path))
    assert "load_round" in (store / "README.md").read_text()
    assert load_round(store, round=2)["id"] == _rows(2)["id"]  # the pointer is outside git: no revision holds it


def test_a_revision_the_store_lacks_is_a_typed_error_naming_the_rounds(store):
    with pytest.raises(RevisionNotFoundError, match=r"round7.*round0', 'round1', 'round2"):
        round_folder(store, 7)
