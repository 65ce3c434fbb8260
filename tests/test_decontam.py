"""n-gram decontamination against the benchmarks shipped in packages and user-provided sets."""

from __future__ import annotations

import pytest
from datasets import Dataset

from evolvecoder_datasets.decontam import (
    NgramIndex,
    contamination_report,
    decontaminate,
    mark_contaminated,
    ngrams,
)
from evolvecoder_datasets.errors import ConfigError, SchemaError
from evolvecoder_datasets.sources.humaneval import read_humaneval_records


def training_rows() -> Dataset:
    humaneval_prompt = read_humaneval_records()[2]["prompt"]  # truncate_number, reworded around its docstring
    return Dataset.from_dict(
        {
            "id": ["t0", "t1", "t2", "t3"],
            "question": [
                (
                    "Given an array of integers nums and an integer target, return indices of the two numbers such "
                    "that they add up to target. Solve it in one pass."
                ),
                "Write a program that prints the first n Fibonacci numbers, one per line.",
                "Please implement this:\n" + humaneval_prompt,
                "Compute the running maximum of a list.",
            ],
        }
    )


def test_ngrams_are_lower_cased_word_windows_and_short_texts_are_one_gram():
    assert ngrams("A b, C d!", n=3) == {("a", "b", "c"), ("b", "c", "d")}
    assert ngrams("Two sum", n=8) == {("two", "sum")} and ngrams("", n=8) == set()


def test_packaged_benchmarks_flag_copied_statements_and_name_the_closest_problem():
    marked = mark_contaminated(training_rows())
    assert marked["contaminated_by"][0] == "leetcode:LeetCode/1"
    assert marked["contaminated_by"][1] is None
    assert marked["contaminated_by"][2] == "humaneval:HumanEval/2"
    assert contamination_report(marked) == {"humaneval": 1, "leetcode": 1, "total": 2}


def test_decontaminate_drops_flagged_rows_and_keeps_the_rest_unchanged():
    clean = decontaminate(training_rows(), benchmarks=("humaneval", "leetcode"))
    assert clean["id"] == ["t1", "t3"] and "contaminated_by" not in clean.column_names


def test_user_sets_are_checked_with_their_own_names():
    marked = mark_contaminated(
        training_rows(), benchmarks=(), extra_texts={"private": ["running maximum of a list"]}, n=4
    )
    assert marked["contaminated_by"] == [None, None, None, "private:0"]


def test_a_short_benchmark_text_matches_only_an_identical_short_text():
    index = NgramIndex({"b:0": "Reverse a string"}, n=8)
    assert index.match("reverse a STRING") == "b:0"
    assert index.match("Reverse a string without using slicing or the reversed builtin in Python") is None


def test_bad_arguments_raise_typed_errors():
    with pytest.raises(ConfigError):
        mark_contaminated(training_rows(), benchmarks=("mbpp",))
    with pytest.raises(ConfigError):
        mark_contaminated(training_rows(), n=0)
    with pytest.raises(SchemaError):
        mark_contaminated(training_rows(), column="prompt")


def test_a_bare_string_as_an_extra_benchmark_is_refused_not_read_one_character_per_problem():
    statement = "Write a function that returns the running maximum of a list of integers."
    ds = Dataset.from_dict({"question": [statement]})
    with pytest.raises(ConfigError, match=r"extra_texts\['mine'\] must be a list"):
        mark_contaminated(ds, benchmarks=(), extra_texts={"mine": statement})
    assert mark_contaminated(ds, benchmarks=(), extra_texts={"mine": [statement, None]})[
        "contaminated_by"
    ] == ["mine:0"]
