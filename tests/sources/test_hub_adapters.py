"""Adapters of the Hub-backed seed sets, fed with fixtures in the sets' own layouts through ``load_dataset``.

Each fixture under tests/data/sources/ copies the field layout of the real dataset card; reference solutions in
them are real programs, so the tests run them (in a child Python for stdin/stdout, with ``exec`` for asserts)
against the converted tests to prove the conversion keeps the meaning of the cases.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from datasets import load_dataset

from evolvecoder_datasets.errors import SchemaError, SourceFormatError
from evolvecoder_datasets.sources import (
    SEED_COLUMNS,
    from_apps,
    from_code_contests,
    from_codeforces,
    from_evolvecoder_seed,
    from_primeintellect,
    from_taco,
    merge_sources,
)
from evolvecoder_datasets.sources.base import call_based_tests, parse_structured, strip_code_fences

DATA = Path(__file__).resolve().parents[1] / "data" / "sources"


def fixture(name: str):
    return load_dataset("json", data_files=str(DATA / f"{name}.jsonl"), split="train")


def run_stdio(program: str, stdin: str) -> str:
    done = subprocess.run(
        [sys.executable, "-I", "-c", program],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout


def passes_asserts(program: str, tests: list[str]) -> bool:
    namespace: dict = {}
    exec("from typing import List\n" + program, namespace)  # noqa: S102 - trusted fixture and package code
    for test in tests:
        exec(test, dict(namespace))  # noqa: S102 - trusted fixture and package code
    return True


def same_output(got: str, expected: str) -> bool:
    return got.split() == expected.split()


def test_taco_stdin_rows_become_inputs_outputs_that_the_reference_solution_reproduces():
    seeds = from_taco(fixture("taco"))
    row = seeds[0]
    assert row["id"] == "TACO_0" and row["source"] == "TACO" and row["difficulty"] == "EASY"
    assert row["tests"] == [] and row["entry_point"] is None
    assert row["inputs"] == ["1 2\n", "10 -3\n"] and row["outputs"] == ["3\n", "7\n"]
    for program in row["solutions"]:
        for stdin, stdout in zip(row["inputs"], row["outputs"]):
            assert same_output(run_stdio(program, stdin), stdout)


def test_taco_call_based_rows_become_asserts_through_solution_class_when_the_starter_defines_it():
    row = from_taco(fixture("taco"))[1]
    assert row["entry_point"] == "maxProfit"
    assert row["tests"] == [
        "assert Solution().maxProfit([7, 1, 5, 3, 6, 4]) == 5",
        "assert Solution().maxProfit([7, 6, 4, 3, 1]) == 0",
    ]
    assert passes_asserts(row["solutions"][0], row["tests"])


def test_wrapped_outputs_are_unwrapped_once_so_list_results_compare_as_lists():
    row = from_taco(fixture("taco"))[2]
    assert row["tests"] == ["assert pairs(1) == [[1, 1]]", "assert pairs(2) == [[1, 1], [2, 4]]"]
    assert passes_asserts(row["solutions"][0], row["tests"])
    with pytest.raises(AssertionError):
        passes_asserts("def pairs(n):\n    return [[1, 1]]\n", row["tests"])


def test_apps_ids_use_problem_id_and_line_lists_are_joined_into_stdin_text():
    seeds = from_apps(fixture("apps"))
    first, second = seeds[0], seeds[1]
    assert first["id"] == "APPS_4012" and second["id"] == "APPS_2"
    assert first["inputs"] == ["a\nb\n", "x\n"] and first["outputs"] == ["2\nb\na\n", "1\nx\n"]
    for stdin, stdout in zip(first["inputs"], first["outputs"]):
        assert same_output(run_stdio(first["solutions"][0], stdin), stdout)
    assert second["solutions"] == [] and second["tests"] == [
        "assert square(3) == 9",
        "assert square(-2) == 4",
    ]


def test_code_contests_keeps_python3_solutions_public_and_private_tests_and_names_the_difficulty():
    row = from_code_contests(fixture("code_contests"))[0]
    assert row["id"] == "CodeContests_0" and row["difficulty"] == "A"
    assert len(row["solutions"]) == 1 and "raw_input" not in row["solutions"][0]
    assert row["inputs"] == ["1 2\n", "5 5\n"]
    with_generated = from_code_contests(fixture("code_contests"), include_generated=True)[0]
    assert len(with_generated["inputs"]) == 4
    for stdin, stdout in zip(with_generated["inputs"], with_generated["outputs"]):
        assert same_output(run_stdio(row["solutions"][0], stdin), stdout)


def test_codeforces_drops_interactive_and_checker_problems_and_falls_back_to_examples():
    seeds = from_codeforces(fixture("codeforces"))
    assert seeds["id"] == ["Codeforces_4A", "Codeforces_3D"]
    watermelon, echo = seeds[0], seeds[1]
    assert watermelon["difficulty"] == "800" and len(watermelon["inputs"]) == 3
    assert (
        "Input\nThe first line contains w" in watermelon["question"]
        and "Note\nFor example" in watermelon["question"]
    )
    assert echo["inputs"] == ["4\n"] and echo["outputs"] == ["4\n"]
    assert len(from_codeforces(fixture("codeforces"), judgeable_only=False)) == 4


def test_codeforces_with_checkers_keeps_checker_problems_judged_by_their_own_script():
    """``generated_checker`` scripts follow open-r1's runner: ``checker input answer output``, exit 0, ``1`` printed
    when accepted. The kept problem is judged by its checker through the reward function a trainer calls."""
    records = fixture("codeforces").map(
        lambda row: {"generated_checker": (
            "import sys\nwant = open(sys.argv[2]).read().split()\ngot = open(sys.argv[3]).read().split()\n"
            "print(1 if sorted(got) == sorted(want) else 0)\n") if row["generated_checker"] else None})  # fmt: skip
    seeds = from_codeforces(records, with_checkers=True)
    assert seeds["id"] == ["Codeforces_4A", "Codeforces_2C", "Codeforces_3D"]
    assert tuple(seeds.column_names) == (*SEED_COLUMNS, "checker")
    checked = seeds[1]
    assert checked["checker"]["contract"] == "codeforces" and checked["checker"]["language"] == "python"
    assert seeds[0]["checker"] is None and seeds[2]["checker"] is None
    # a contest source's own column travels through the merge (the rows of other sources get it empty)
    assert tuple(merge_sources(seeds).column_names) == (*SEED_COLUMNS, "checker")
    # The reward reads the row's checker: any order of the expected tokens passes, other tokens do not.
    from evolvecoder_datasets.rewards import code_reward

    n = len(checked["inputs"])
    reversed_answer = "import sys\nanswers = " + repr([o.split()[::-1] for o in checked["outputs"]]) + "\n"
    programs = [reversed_answer + "print(*answers[0])", "print('nothing like it')"]
    rewards = code_reward(prompts=["p", "p"], completions=[f"```python\n{p}\n```" for p in programs],
                          inputs=[checked["inputs"][:1]] * 2, outputs=[checked["outputs"][:1]] * 2,
                          checker=[checked["checker"]] * 2)  # fmt: skip
    assert n >= 1 and rewards == [1.0, 0.0]


def test_primeintellect_reads_json_and_python_literal_verification_info_and_strips_fences():
    seeds = from_primeintellect(fixture("primeintellect"))
    stdio, call = seeds[0], seeds[1]
    assert stdio["solutions"] == ["n = int(input())\nprint(n * 2)"] and stdio["difficulty"] == "interview"
    for stdin, stdout in zip(stdio["inputs"], stdio["outputs"]):
        assert same_output(run_stdio(stdio["solutions"][0], stdin), stdout)
    assert call["tests"] == ["assert count_vowels('Hello') == 2", "assert count_vowels('xyz') == 0"]
    assert call["entry_point"] == "count_vowels" and passes_asserts(call["solutions"][0], call["tests"])


def test_evolvecoder_seed_keeps_ids_and_maps_prefixes_to_source_names():
    seeds = from_evolvecoder_seed(fixture("evolvecoder_seed"))
    assert seeds["id"] == ["TACO_1", "primeintellect_42", "contests_7"]
    assert seeds["source"] == ["TACO", "PrimeIntellect", "CodeContests"]
    assert seeds[1]["solutions"] == ["n = int(input())\nprint(n * 2)"]


def test_every_adapter_yields_the_seed_schema_and_sources_merge_with_unique_ids():
    parts = [
        from_taco(fixture("taco")),
        from_apps(fixture("apps")),
        from_code_contests(fixture("code_contests")),
        from_codeforces(fixture("codeforces")),
        from_primeintellect(fixture("primeintellect")),
    ]
    for part in parts:
        assert tuple(part.column_names) == SEED_COLUMNS
    merged = merge_sources(*parts)
    assert len(merged) == 3 + 2 + 1 + 2 + 2
    with pytest.raises(SchemaError, match="ids repeat"):
        merge_sources(parts[0], parts[0])


def test_a_missing_source_column_names_the_adapter():
    broken = fixture("taco").remove_columns("input_output")
    with pytest.raises(SchemaError, match="taco"):
        from_taco(broken)


def test_unreadable_fields_raise_source_format_errors():
    with pytest.raises(SourceFormatError):
        parse_structured("{not json", what="input_output")
    with pytest.raises(SourceFormatError, match="2 inputs but 1 outputs"):
        call_based_tests("f", [[1], [2]], [[1]])
    assert strip_code_fences("```\nx = 1\n```") == "x = 1"
