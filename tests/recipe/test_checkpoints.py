"""Stage checkpoints: reloaded by key, stored once (no map cache of the next stage left beside a saved copy)."""

from __future__ import annotations

import pytest
from datasets import Dataset

from evolvecoder_datasets.recipe.checkpoints import Checkpoints


def _plus_one(batch):
    return {"x": [x + 1 for x in batch["x"]]}


def _files(folder):
    return sorted(p.name for p in folder.iterdir() if p.is_file())


@pytest.mark.parametrize("num_proc", [None, 2])
def test_a_stage_that_maps_the_previous_checkpoint_leaves_no_cache_file_in_its_folder(tmp_path, num_proc):
    store = Checkpoints(str(tmp_path))
    first = store.stage("01_first", "k1", lambda: Dataset.from_dict({"x": list(range(100))}))
    saved = _files(tmp_path / "stages" / "01_first")
    second = store.stage("02_second", "k2", lambda: first.map(_plus_one, batched=True, num_proc=num_proc))
    assert list(second["x"]) == list(range(1, 101))
    # the map wrote its output beside its input; the stage's own copy is saved, so that file is gone
    assert _files(tmp_path / "stages" / "01_first") == saved
    assert not [p for p in (tmp_path / "stages").rglob("cache-*.arrow")]
    # and the saved copy is what a rerun reloads
    again = Checkpoints(str(tmp_path)).stage("02_second", "k2", lambda: 1 / 0)
    assert list(again["x"]) == list(range(1, 101))


def test_cache_files_that_existed_before_the_stage_are_left_alone(tmp_path):
    store = Checkpoints(str(tmp_path))
    first = store.stage("01_first", "k1", lambda: Dataset.from_dict({"x": [1, 2, 3]}))
    kept = first.map(_plus_one, batched=True)  # someone else's map, before the stage
    before = sorted((tmp_path / "stages").rglob("cache-*.arrow"))
    assert before
    store.stage("02_second", "k2", lambda: first.map(lambda b: {"x": [x * 2 for x in b["x"]]}, batched=True))
    assert all(p.exists() for p in before)
    assert list(kept["x"]) == [2, 3, 4]
