"""A local file in any known layout becomes seed rows through the adapter its columns name; CodeContests rows keep
their labelled submissions (accepted Python 3 and C++, incorrect ones) for the contest recipe."""

from __future__ import annotations

from pathlib import Path

import pytest
from datasets import Dataset, load_dataset

from evolvecoder_datasets.errors import SchemaError
from evolvecoder_datasets.recipe.stdin import MAX_REFERENCE_CANDIDATES, _candidates
from evolvecoder_datasets.sources import SEED_COLUMNS, adapt_layout, from_code_contests, layout_of

DATA = Path(__file__).resolve().parents[1] / "data"


def fixture(path: Path) -> Dataset:
    return load_dataset("json", data_files=str(path), split="train")


@pytest.mark.parametrize(("name", "layout", "first_id"), [
    ("taco", "taco", "TACO_0"),
    ("apps", "apps", None),
    ("code_contests", "code_contests", "CodeContests_0"),
    ("codeforces", "codeforces", None),
    ("primeintellect", "primeintellect", None),
    ("evolvecoder_seed", "evolvecoder_seed", "TACO_1"),
])
def test_each_known_layout_is_read_by_its_own_adapter(name, layout, first_id):
    raw = fixture(DATA / "sources" / f"{name}.jsonl")
    assert layout_of(raw.column_names) == layout
    seeds = adapt_layout(raw)
    assert tuple(seeds.column_names[:len(SEED_COLUMNS)]) == SEED_COLUMNS and len(seeds) >= 1
    if first_id is not None:
        assert seeds[0]["id"] == first_id
    # seed rows are already adapted: returned as they are
    assert layout_of(seeds.column_names) == "seed" and adapt_layout(seeds) is seeds


def test_a_file_of_no_known_layout_is_refused_naming_the_layouts():
    with pytest.raises(SchemaError, match="taco: question"):
        adapt_layout(Dataset.from_list([{"prompt_text": "x", "answer": "y"}]))


def test_code_contests_with_submissions_labels_every_judged_program_and_keeps_the_limit():
    raw = fixture(DATA / "contest_rows" / "code_contests_cpp.jsonl")
    plain = from_code_contests(raw)
    assert "submissions" not in plain.column_names and plain[0]["solutions"] == []  # no Python 3 solution
    row = from_code_contests(raw, with_submissions=True)[0]
    assert row["time_limit_s"] == 1.0 and row["language"] == "python"
    labels = [(s["verdict"], s["language"]) for s in row["submissions"]]
    assert labels == [("accepted", "cpp"), ("rejected", "python"), ("rejected", "python"), ("rejected", "python"),
                      ("rejected", "cpp")]
    # the adapter the recipe uses on a CodeContests file keeps them too
    assert adapt_layout(raw)[0]["submissions"] == row["submissions"]


def test_reference_candidates_prefer_the_rows_language_and_are_capped():
    subs = [{"verdict": "accepted", "language": "cpp", "source": "int main(){}"},
            {"verdict": "rejected", "language": "python", "source": "print(0)"},
            {"verdict": "accepted", "language": "python", "source": "print(1)"},
            {"verdict": "accepted", "language": "python", "source": "print(2)"}]
    assert _candidates(["print(2)"], subs, "python") == [("print(2)", "python"), ("print(1)", "python"),
                                                         ("int main(){}", "cpp")]
    assert _candidates([], subs[:2], "python") == [("int main(){}", "cpp")]
    many = [{"verdict": "accepted", "language": "python", "source": f"print({k})"} for k in range(20)]
    assert len(_candidates([], many, "python")) == MAX_REFERENCE_CANDIDATES
