"""Rows of the Hub seed sets that do not have the layout their card promises: each one is refused with a
``SourceFormatError`` naming it (or, with ``on_error="skip"``, left out and logged), never turned into a test
that silently expects the wrong thing and never a crash inside ``datasets``."""

from __future__ import annotations

import json
import logging

import pytest
from datasets import Dataset

from evolvecoder_datasets.errors import ConfigError, SourceFormatError
from evolvecoder_datasets.sources import (
    SEED_COLUMNS,
    from_apps,
    from_code_contests,
    from_codeforces,
    from_evolvecoder_seed,
    from_primeintellect,
    from_taco,
)


def taco_rows(*input_outputs) -> Dataset:
    n = len(input_outputs)
    return Dataset.from_dict(
        {
            "question": [f"Problem {k}." for k in range(n)],
            "solutions": ['["print(input())"]'] * n,
            "starter_code": [""] * n,
            "input_output": list(input_outputs),
            "difficulty": ["EASY"] * n,
        }
    )


GOOD_STDIN = json.dumps({"inputs": ["1\n"], "outputs": ["1\n"]})


@pytest.mark.parametrize(
    ("cases", "message"),
    [
        ({"inputs": "1\n", "outputs": "1\n"}, "must be lists"),  # a bare string was split into characters
        ({"inputs": ["1\n"], "outputs": [None]}, "output must be text"),  # None became "" (expect no output)
        (
            {"fn_name": ["f"], "inputs": [[1]], "outputs": [[1]]},
            "fn_name must be a string",
        ),  # "assert ['f'](1)"
        ({"inputs": ["1\n", "2\n"], "outputs": ["1\n"]}, "2 inputs but 1 outputs"),
    ],
)
def test_taco_cases_that_do_not_pair_up_as_text_raise_naming_the_row(cases, message):
    with pytest.raises(SourceFormatError, match=message) as caught:
        from_taco(taco_rows(GOOD_STDIN, json.dumps(cases)))
    assert "TACO row 1" in str(caught.value)


def test_input_output_as_json_text_or_as_a_nested_value_gives_the_same_row():
    cases = {"fn_name": "add", "inputs": [[1, 2], [3, 4]], "outputs": [[3], [7]]}
    from_text = from_taco(taco_rows(json.dumps(cases)))[0]
    from_value = from_taco(taco_rows(json.dumps(cases)).map(lambda r: {"input_output": cases}))[0]
    assert from_text == from_value
    assert from_text["tests"] == ["assert add(1, 2) == 3", "assert add(3, 4) == 7"]


def test_a_lone_surrogate_decoded_from_json_is_refused_with_the_row_named_not_a_unicode_crash():
    bad = '{"inputs": ["\\ud800\\n"], "outputs": ["x\\n"]}'
    with pytest.raises(SourceFormatError, match="TACO_1.*'inputs'.*not valid Unicode"):
        from_taco(taco_rows(GOOD_STDIN, bad))


def test_on_error_skip_leaves_out_bad_rows_and_logs_why(caplog):
    bad_pairs = json.dumps({"inputs": ["1\n", "2\n"], "outputs": ["1\n"]})
    surrogate = '{"inputs": ["\\udfff"], "outputs": ["x"]}'
    with caplog.at_level(logging.WARNING, logger="evolvecoder_datasets.sources.base"):
        seeds = from_taco(taco_rows(GOOD_STDIN, bad_pairs, surrogate, GOOD_STDIN), on_error="skip")
    assert seeds["id"] == ["TACO_0", "TACO_3"] and tuple(seeds.column_names) == SEED_COLUMNS
    assert "skipped 2 of 4 rows" in caplog.text and "2 inputs but 1 outputs" in caplog.text
    with pytest.raises(ConfigError, match="on_error"):
        from_taco(taco_rows(GOOD_STDIN), on_error="ignore")


def test_evolvecoder_seed_decodes_tests_given_as_json_text_and_refuses_unpaired_cases():
    base = {"id": "TACO_1", "question": "Q", "starter_code": "", "solution": "print(1)"}
    with_tests = Dataset.from_list([{**base, "tests": '["assert f(1) == 2", "assert f(2) == 3"]'}])
    assert from_evolvecoder_seed(with_tests)[0]["tests"] == ["assert f(1) == 2", "assert f(2) == 3"]
    unpaired = json.dumps({"inputs": ["1\n", "2\n"], "outputs": ["1\n"]})
    with pytest.raises(SourceFormatError, match="'TACO_1'.*2 inputs but 1 outputs"):
        from_evolvecoder_seed(Dataset.from_list([{**base, "input_output": unpaired}]))
    with pytest.raises(SourceFormatError, match="input_output must be an object"):
        from_evolvecoder_seed(Dataset.from_list([{**base, "input_output": "[1, 2]"}]))


def primeintellect(info) -> Dataset:
    return Dataset.from_list(
        [
            {
                "prompt": "Echo n.",
                "gold_standard_solution": "print(input())",
                "verification_info": json.dumps(info),
            }
        ]
    )


def test_primeintellect_refuses_a_null_expected_output_and_cases_that_are_not_objects():
    null_output = {"test_cases": [{"type": "stdin_stdout", "input": "1\n", "output": None}]}
    with pytest.raises(SourceFormatError, match="output must be text"):
        from_primeintellect(primeintellect(null_output))
    for cases in (["1\n"], {"input": "1\n"}):
        with pytest.raises(SourceFormatError, match="test_cases must be a list of objects"):
            from_primeintellect(primeintellect({"test_cases": cases}))
    no_stdin = {"test_cases": [{"type": "stdin_stdout", "input": None, "output": "0\n"}]}
    assert from_primeintellect(primeintellect(no_stdin))[0]["inputs"] == [""]


def codeforces(**changes) -> Dataset:
    record = {
        "id": "4/A",
        "title": "Watermelon",
        "description": "Split w.",
        "input_format": "w",
        "output_format": "YES or NO",
        "examples": [{"input": "8\n", "output": "YES\n"}],
        "official_tests": [{"input": "8\n", "output": "YES\n"}, {"input": "5\n", "output": "NO\n"}],
        "note": None,
        "rating": 800.0,
    }
    return Dataset.from_list([{**record, **changes}])


def test_codeforces_refuses_a_null_test_payload_and_leaves_out_a_missing_title():
    with pytest.raises(SourceFormatError, match="4/A: official_tests\\[1\\]"):
        from_codeforces(
            codeforces(official_tests=[{"input": "8\n", "output": "YES\n"}, {"input": "5\n", "output": None}])
        )
    with pytest.raises(SourceFormatError, match="4/A: examples\\[0\\]"):
        from_codeforces(codeforces(examples=[{"input": None, "output": "YES\n"}]))
    untitled = from_codeforces(codeforces(title=None))[0]
    assert untitled["question"].startswith("Split w.") and "None" not in untitled["question"]
    assert untitled["outputs"] == ["YES\n", "NO\n"]


def code_contests(**changes) -> Dataset:
    record = {
        "description": "Echo.",
        "public_tests": {"input": ["1\n"], "output": ["1\n"]},
        "private_tests": {"input": ["2\n"], "output": ["2\n"]},
        "generated_tests": {"input": [], "output": []},
        "solutions": {"language": [3], "solution": ["print(input())"]},
        "difficulty": 7,
    }
    return Dataset.from_list([{**record, **changes}])


def test_code_contests_refuses_unequal_or_null_cases_and_reads_language_names():
    with pytest.raises(SourceFormatError, match="row 0 private_tests: 2 inputs but 1 outputs"):
        from_code_contests(code_contests(private_tests={"input": ["2\n", "3\n"], "output": ["2\n"]}))
    with pytest.raises(SourceFormatError, match="row 0 private_tests: every input and output must be text"):
        from_code_contests(code_contests(private_tests={"input": ["2\n"], "output": [None]}))
    named = code_contests(
        solutions={"language": ["CPP", "PYTHON3"], "solution": ["int main(){}", "print(input())"]}
    )
    assert from_code_contests(named)[0]["solutions"] == ["print(input())"]


def test_apps_row_without_a_problem_id_is_refused_rather_than_named_apps_none():
    rows = taco_rows(GOOD_STDIN, GOOD_STDIN).add_column("problem_id", [7, None])
    with pytest.raises(SourceFormatError, match="APPS row 1: 'problem_id' is empty"):
        from_apps(rows)
    assert from_apps(rows, on_error="skip")["id"] == ["APPS_7"]
