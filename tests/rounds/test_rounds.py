"""The local round store, for real: a bare git repository, one branch per round, loaded through `datasets`."""

from __future__ import annotations

import json
import subprocess

import pytest
from datasets import Dataset

from evolvecoder_datasets.errors import ConfigError, RevisionNotFoundError, RoundStoreError, SchemaError
from evolvecoder_datasets.rounds import (
    list_rounds,
    load_round,
    load_round_stats,
    normalize_revision,
    push_final,
    push_round,
    rerender_card,
    split_repo_revision,
)


def problems(n: int, round_: int) -> Dataset:
    return Dataset.from_dict({
        "id": [f"TACO_{i}" for i in range(n)],
        "source": ["TACO"] * n,
        "question": [f"def f{i}(x): ..." for i in range(n)],
        "tests": [[f"assert f{i}({t}) == {t}" for t in range(round_ + 2)] for i in range(n)],
        "round": [round_] * n,
    })


def pool(n: int) -> Dataset:
    return Dataset.from_dict({
        "id": [f"TACO_{i}" for i in range(n)],
        "solutions": [[{"model": "m", "sample": 0, "code": "def f(x): return x"}]] * n,
        "pass_matrix": [[[True, False]]] * n,
    })


def git(store, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "--git-dir", str(store), *args], capture_output=True, text=True)


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "store"
    push_round(problems(3, 0), path, 0, solutions=pool(3), stats={"num_problems": 3, "num_tests": 6},
               config={"seed": 7, "models": ["m"]})
    push_round(problems(2, 1), path, 1, stats={"num_problems": 2, "num_tests": 6})
    return path


def test_each_round_branch_descends_from_the_previous_rounds_commit(store):
    round0 = git(store, "rev-parse", "round0").stdout.strip()
    assert git(store, "merge-base", "--is-ancestor", round0, "round1").returncode == 0
    assert git(store, "rev-parse", "round1^").stdout.strip() == round0
    assert git(store, "merge-base", "--is-ancestor", "round1", "main").returncode != 0


def test_round_revision_has_the_hub_layout_and_provenance_files(store):
    files = set(git(store, "ls-tree", "-r", "--name-only", "round0").stdout.split())
    assert {"README.md", "stats.json", "recipe.yaml", "data/train-00000-of-00001.parquet",
            "solutions/train-00000-of-00001.parquet"} <= files
    readme = git(store, "show", "round0:README.md").stdout
    assert "config_name: solutions" in readme and "path: solutions/train-*" in readme
    assert json.loads(git(store, "show", "round0:stats.json").stdout)["round"] == 0
    assert "seed: 7" in git(store, "show", "round0:recipe.yaml").stdout


def test_load_round_reads_the_requested_revision_not_the_folder_head(store):
    assert load_round(store, 0).num_rows == 3
    assert load_round(store, 1).num_rows == 2
    assert load_round(store, "round0", "solutions").column_names == ["id", "solutions", "pass_matrix"]
    assert load_round(store, 1)["tests"][0] == ["assert f0(0) == 0", "assert f0(1) == 1", "assert f0(2) == 2"]


def test_second_load_of_a_revision_is_a_datasets_cache_hit(store, tmp_path):
    cache = str(tmp_path / "cache")
    first = load_round(store, 1, cache_dir=cache)
    arrow = first.cache_files[0]["filename"]
    stamp = (tmp_path / arrow).stat().st_mtime_ns
    second = load_round(store, 1, cache_dir=cache)
    assert second.cache_files[0]["filename"] == arrow
    assert (tmp_path / arrow).stat().st_mtime_ns == stamp
    sha = git(store, "rev-parse", "round1").stdout.strip()
    assert (tmp_path / "cache" / "evolvecoder_rounds" / sha / "README.md").is_file()


def test_main_carries_exactly_the_published_columns(store):
    push_final(problems(2, 1), store, round=1)
    assert load_round(store).column_names == ["id", "question", "tests"]
    push_final(problems(2, 1), store, round=1, keep_source=True)
    assert load_round(store, "main").column_names == ["id", "question", "tests", "source"]
    assert load_round_stats(store)["final_round"] == 1


def test_missing_revision_and_missing_config_are_typed_errors(store, tmp_path):
    with pytest.raises(RevisionNotFoundError, match="round7"):
        load_round(store, 7)
    with pytest.raises(ConfigError, match="no config 'solutions'"):
        load_round(store, 1, "solutions")
    with pytest.raises(RevisionNotFoundError):
        load_round(tmp_path / "nowhere", 0)


def test_a_round_cannot_be_pushed_before_its_predecessor(tmp_path):
    with pytest.raises(RevisionNotFoundError, match="round2"):
        push_round(problems(1, 3), tmp_path / "store", 3)


def test_rows_without_published_columns_are_refused(tmp_path):
    with pytest.raises(SchemaError):
        push_round(Dataset.from_dict({"id": ["a"]}), tmp_path / "store", 0)


def test_a_folder_that_is_not_a_store_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(RoundStoreError):
        push_round(problems(1, 0), tmp_path, 0)


def test_repushing_a_round_rebranches_its_successor_and_keeps_old_versions_tagged(store):
    old_round1 = git(store, "rev-parse", "round1").stdout.strip()
    again = push_round(problems(4, 0), store, 0, stats={"num_problems": 4})
    assert again.tag == "round0-v2"
    redo = push_round(problems(2, 1), store, 1, stats={"num_problems": 2})
    assert git(store, "rev-parse", "round1^").stdout.strip() == again.commit
    assert redo.tag == "round1-v2"
    assert git(store, "rev-parse", "round1-v1^{commit}").stdout.strip() == old_round1


def test_list_rounds_reports_branches_in_round_order_with_stats_and_tags(store):
    push_final(problems(2, 1), store, round=1)
    infos = list_rounds(store)
    assert [i.revision for i in infos] == ["round0", "round1", "main"]
    assert [i.round for i in infos] == [0, 1, None]
    assert infos[0].tags == ["round0-v1"] and infos[2].tags == ["final-v1"]
    assert infos[1].stats["num_tests"] == 6


def test_revision_notation():
    assert normalize_revision(None) == "main"
    assert normalize_revision(2) == "round2"
    assert split_repo_revision("./runs/a@3") == ("./runs/a", "round3")
    assert split_repo_revision("org/name@final-v1") == ("org/name", "final-v1")


def test_relative_store_paths_are_local_folders_not_hub_ids(tmp_path, monkeypatch):
    """`make demo` runs with a relative output folder whose store does not exist yet."""
    import os

    from evolvecoder_datasets.recipe import RecipeConfig
    from evolvecoder_datasets.rounds import is_local_store

    monkeypatch.chdir(tmp_path)
    store = RecipeConfig(output_dir="demo-output", mutants=1).store_location()
    assert os.path.isabs(store) and is_local_store(store)
    assert is_local_store("runs/demo/store") and not is_local_store("org/EvolveCoder-22k")


def test_numpy_statistics_are_stored_as_numbers_and_the_next_round_still_pushes(tmp_path):
    import numpy as np

    path = tmp_path / "store"
    push_round(problems(2, 0), path, 0, stats={"num_problems": np.int64(2), "num_tests": np.int64(21_642),
                                              "pass_at_k": {"1": np.float32(0.5)}})
    assert load_round_stats(path, 0)["num_tests"] == 21_642  # an int, not the string "21642"
    assert "21,642 tests" in git(path, "show", "round0:README.md").stdout
    pushed = push_round(problems(2, 1), path, 1, stats={"num_problems": 2, "num_tests": 6})
    assert "tests: 21,642 → 6" in git(path, "show", f"{pushed.commit}:README.md").stdout


def test_pushing_the_same_round_twice_is_idempotent(tmp_path):
    path = tmp_path / "store"
    first = push_round(problems(2, 0), path, 0, stats={"num_problems": 2})
    again = push_round(problems(2, 0), path, 0, stats={"num_problems": 2})
    assert (again.commit, again.tag) == (first.commit, "round0-v1")
    assert [i.tags for i in list_rounds(path) if i.revision == "round0"] == [["round0-v1"]]
    changed = push_round(problems(3, 0), path, 0, stats={"num_problems": 3})
    assert changed.tag == "round0-v2" and changed.commit != first.commit


def test_a_round_that_kept_no_problem_loads_back_empty_with_its_columns(tmp_path):
    path = tmp_path / "store"
    push_round(problems(2, 0), path, 0)
    push_round(problems(2, 1).select([]), path, 1, stats={"num_problems": 0})
    empty = load_round(path, 1)
    assert len(empty) == 0 and empty.column_names == problems(1, 1).column_names
    assert empty.features == problems(1, 1).features


def test_round_numbers_with_leading_zeros_or_non_ascii_digits():
    assert normalize_revision("03") == "round3" and normalize_revision(" 2 ") == "round2"
    assert normalize_revision("³") == "³"  # str.isdigit() is true for it, int() is not


def test_an_invalid_hub_id_is_a_config_error_naming_it():
    with pytest.raises(ConfigError, match="'bad id!'"):
        list_rounds("bad id!")


def test_a_card_cannot_be_pushed_to_main_before_the_final_dataset(tmp_path):
    # Before push_final, main only mirrors round data: a card pushed there would present a round as the published
    # dataset. Refused; re-rendering without pushing still works and says it is a round.
    path = tmp_path / "store"
    push_round(problems(3, 0), path, 0, solutions=pool(3), stats={"num_problems": 3, "num_tests": 6})
    head = git(path, "rev-parse", "main").stdout
    with pytest.raises(ConfigError, match="push_final"):
        rerender_card(path, "main", push=True)
    assert git(path, "rev-parse", "main").stdout == head
    assert "published dataset" not in rerender_card(path, "main").content
    push_final(problems(3, 0), path, round=0, stats={"num_problems": 3, "num_tests": 6})
    assert "published dataset" in rerender_card(path, "main", push=True).content


def test_main_keeps_the_calibrated_limit_where_the_rows_have_one(store):
    rows = problems(2, 1)
    limited = rows.add_column("time_limit_s", [0.2, None])
    push_final(limited, store, round=1)
    main = load_round(store)
    assert main.column_names == ["id", "question", "tests", "time_limit_s"] and main["time_limit_s"] == [0.2, None]
    push_final(rows.add_column("time_limit_s", [None, None]), store, round=1)  # nothing calibrated: nothing to keep
    assert load_round(store, "main").column_names == ["id", "question", "tests"]


def test_a_dropped_config_is_published_only_with_rows_and_datasets_loads_what_is_published(store):
    """`datasets` cannot load a split of 0 rows: a run that removed nothing publishes no `dropped` config (our loader
    gives 0 rows for it); one that removed problems publishes them, loadable with `load_dataset` as users type it."""
    from pathlib import Path

    from datasets import load_dataset

    from evolvecoder_datasets.rounds import round_folder

    none = Dataset.from_dict({"id": [], "stage": [], "reason": []})
    push_final(problems(2, 1), store, round=1, dropped=none)
    assert len(load_round(store, config="dropped")) == 0
    assert load_round(store, config="dropped").column_names == ["id", "stage", "reason"]
    assert len(load_dataset(str(round_folder(store, "main")), split="train")) == 2
    # the card declares no config `datasets` (or the Hub's viewer) would fail to load
    assert "config_name: dropped" not in (Path(round_folder(store, "main")) / "README.md").read_text()
    some = Dataset.from_dict({"id": ["X_9"], "stage": ["refine"], "reason": ["refine_no_json"]})
    push_final(problems(2, 1), store, round=1, dropped=some)
    folder = str(round_folder(store, "main"))
    assert "config_name: dropped" in (Path(round_folder(store, "main")) / "README.md").read_text()
    assert load_dataset(folder, "dropped", split="train")["reason"] == ["refine_no_json"]
    assert load_round(store, config="dropped")["id"] == ["X_9"]
