"""ICPC/Kattis problem packages as seed rows: the four fixture packages, the Dataset, and packages that do not fit."""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from datasets import Dataset

from evolvecoder_datasets.errors import ConfigError, SourceFormatError
from evolvecoder_datasets.sources import SEED_COLUMNS, load_problem_package, load_problem_packages, seed_features
from evolvecoder_datasets.sources.problem_package import VERDICTS, problem_package_features

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "problem_packages"
PACKAGES = ("anyorder", "anypath", "circle", "sumpair")


def write_package(root: Path, name: str, files: dict[str, str | bytes]) -> Path:
    """A package folder under ``root`` holding ``files`` (relative path -> text or bytes)."""
    package = root / name
    for relative, content in files.items():
        path = package / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return package


MINIMAL = {
    "problem_statement/problem.md": "Echo the number.\n",
    "data/sample/1.in": "1\n",
    "data/sample/1.ans": "1\n",
}


@pytest.fixture(scope="module")
def rows() -> dict[str, dict]:
    return {name: load_problem_package(FIXTURES / name) for name in PACKAGES}


def pairs(row: dict) -> list[tuple[str, str]]:
    return [(s["verdict"], s["language"]) for s in row["submissions"]]


# The fixtures


def test_every_fixture_row_has_the_seed_columns_and_the_package_columns(rows):
    extra = ["checker", "float_tol", "time_limit_s", "language", "validator", "submissions", "skipped_submissions"]
    for name, row in rows.items():
        assert list(row) == list(SEED_COLUMNS) + extra
        assert row["id"] == f"Package_{name}" and row["source"] == "ProblemPackage"
        assert row["tests"] == [] and row["starter_code"] == "" and row["entry_point"] is None
        assert row["difficulty"] is None and row["language"] == "python"
        assert len(row["inputs"]) == len(row["outputs"]) and 3 <= len(row["inputs"]) <= 6
        assert [s["verdict"] for s in row["submissions"]] == sorted(
            (s["verdict"] for s in row["submissions"]), key=VERDICTS.index
        )


def test_sumpair_reads_samples_first_then_secret_subfolders_and_every_verdict(rows):
    row = rows["sumpair"]
    data = FIXTURES / "sumpair" / "data"
    order = ["sample/1", "sample/2", "secret/big/1", "secret/small/1", "secret/small/2"]
    assert row["inputs"] == [(data / f"{case}.in").read_text() for case in order]
    assert row["outputs"] == [(data / f"{case}.ans").read_text() for case in order]
    assert row["outputs"][:2] == ["2\n", "2\n"] and row["outputs"][2] == "4999950000\n"
    assert row["checker"] is None and row["float_tol"] is None
    assert row["time_limit_s"] == 2.0  # from .timelimit: problem.yaml's limits name no time limit
    assert pairs(row) == [
        ("accepted", "python"), ("accepted", "cpp"),
        ("wrong_answer", "python"), ("wrong_answer", "cpp"),
        ("time_limit_exceeded", "python"), ("time_limit_exceeded", "cpp"),
        ("run_time_error", "cpp"), ("run_time_error", "python"),
    ]  # fmt: skip
    assert row["submissions"][0]["path"] == "submissions/accepted/count_complements.py"
    assert row["solutions"] == [(FIXTURES / "sumpair" / "submissions/accepted/count_complements.py").read_text()]
    assert row["skipped_submissions"] == 1  # the Java one
    assert row["question"].startswith("\\problemname{Sum Pairs}")


def test_circle_takes_the_float_tolerance_and_the_time_limit_from_problem_yaml(rows):
    row = rows["circle"]
    assert row["float_tol"] == 1e-6 and row["time_limit_s"] == 1.5 and row["checker"] is None
    assert row["inputs"][:2] == ["1\n", "2.5\n"] and row["outputs"][0] == "3.1415926536\n"
    assert pairs(row) == [("accepted", "python")] * 2 + [("accepted", "cpp"), ("wrong_answer", "python")]
    assert len(row["solutions"]) == 2
    assert row["question"].startswith("# Circle Area")


def test_anypath_has_a_kattis_validator_in_python(rows):
    row = rows["anypath"]
    validator = FIXTURES / "anypath" / "output_validators" / "check" / "validator.py"
    assert row["checker"] == {"source": validator.read_text(), "language": "python", "contract": "kattis"}
    assert row["float_tol"] is None and row["time_limit_s"] == 1.0
    assert pairs(row) == [("accepted", "python"), ("accepted", "cpp"), ("wrong_answer", "python")]
    assert row["outputs"][1] == "-1\n"


def test_anyorder_has_a_testlib_checker_at_the_package_root(rows):
    row = rows["anyorder"]
    assert row["checker"]["contract"] == "testlib" and row["checker"]["language"] == "cpp"
    assert "registerTestlibCmd(argc, argv)" in row["checker"]["source"]
    assert row["time_limit_s"] is None and row["float_tol"] is None
    assert pairs(row) == [(v, lang) for v in ("accepted", "wrong_answer") for lang in ("cpp", "python")]


@pytest.mark.parametrize(
    ("output", "code"),
    [
        (b"1 3 4\n", 42), (b"1 2 4", 42), (b"1 2 3 4\n", 43), (b"1 4\n", 43), (b"-1\n", 43), (b"", 43),
        (b"one two four\n", 43), (b"1 2 4 4 4 4 4\n", 43), (b"1 " + b"9" * 400 + b" 4\n", 43), (b"\xff\xfe\n", 43),
        (b"1 2 2 4\n", 43), (b"1.0 2 4\n", 43),
    ],
)  # fmt: skip
def test_the_anypath_validator_answers_42_or_43_and_never_crashes(output, code, tmp_path):
    package = FIXTURES / "anypath"
    done = subprocess.run(
        [sys.executable, str(package / "output_validators/check/validator.py"), str(package / "data/sample/1.in"),
         str(package / "data/sample/1.ans"), str(tmp_path)],
        input=output, capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == code, done.stderr
    assert (tmp_path / "judgemessage.txt").read_text().strip()


# The Dataset


def test_load_problem_packages_gives_one_typed_row_per_package_that_round_trips(rows):
    ds = load_problem_packages(FIXTURES)
    assert isinstance(ds, Dataset) and len(ds) == 4
    assert list(ds["id"]) == [f"Package_{name}" for name in PACKAGES]
    assert ds.features == problem_package_features()
    for column, feature in seed_features().items():
        assert ds.features[column] == feature
    assert ds.features["float_tol"].dtype == "float64" and ds.features["skipped_submissions"].dtype == "int32"
    assert set(ds.features["submissions"].feature) == {"verdict", "language", "path", "source"}
    assert ds.to_list() == [rows[name] for name in PACKAGES]  # a null checker stays null, not a struct of nulls


def test_load_problem_packages_finds_packages_at_any_depth_and_accepts_a_package_itself(tmp_path):
    write_package(tmp_path / "set" / "b" / "deeper", "two", MINIMAL)
    write_package(tmp_path / "set", "one", {**MINIMAL, "problem.yaml": "name: One\n"})
    assert list(load_problem_packages(tmp_path / "set")["id"]) == ["Package_two", "Package_one"]
    assert list(load_problem_packages(tmp_path / "set" / "one")["id"]) == ["Package_one"]


def test_load_problem_packages_skips_unreadable_packages_only_when_asked(tmp_path, caplog):
    for name in PACKAGES:
        shutil.copytree(FIXTURES / name, tmp_path / name)
    write_package(tmp_path, "broken", {"problem.yaml": "validation: custom\n", **MINIMAL})
    with pytest.raises(SourceFormatError, match="broken"):
        load_problem_packages(tmp_path)
    with caplog.at_level(logging.WARNING):
        ds = load_problem_packages(tmp_path, on_error="skip")
    assert list(ds["id"]) == [f"Package_{name}" for name in PACKAGES]
    assert "skipped 1 of 5" in caplog.text
    with pytest.raises(ConfigError, match="on_error"):
        load_problem_packages(tmp_path, on_error="ignore")


def test_load_problem_packages_refuses_an_empty_folder_a_missing_one_and_repeated_names(tmp_path):
    with pytest.raises(SourceFormatError, match="holds no problem package"):
        load_problem_packages(tmp_path)
    with pytest.raises(SourceFormatError, match="not a folder"):
        load_problem_packages(tmp_path / "nowhere")
    write_package(tmp_path / "a", "same", MINIMAL)
    write_package(tmp_path / "b", "same", MINIMAL)
    with pytest.raises(SourceFormatError, match="two packages are named 'same'"):
        load_problem_packages(tmp_path)


# Packages that do not fit


@pytest.mark.parametrize(
    ("files", "named", "why"),
    [
        ({"data/sample/2.in": "2\n"}, "2.in", "has no answer file 2.ans"),
        ({"data/secret/g/3.ans": "3\n"}, "3.ans", "has no input file 3.in"),
        ({"problem.yaml": "name: [unclosed\n"}, "problem.yaml", "not valid YAML"),
        ({"problem.yaml": "- a list\n"}, "problem.yaml", "must be a mapping"),
        ({"problem.yaml": "validation: custom interactive\n"}, "problem.yaml", "interactive"),
        ({"problem.yaml": "validation: special\n"}, "problem.yaml", "'default' or 'custom'"),
        ({"problem.yaml": "validation: custom\n"}, "problem.yaml", "no output_validators"),
        ({"problem.yaml": "validator_flags: float_tolerance\n"}, "problem.yaml", "needs a number"),
        ({"problem.yaml": "validator_flags: float_tolerance abc\n"}, "problem.yaml", "positive number"),
        ({"problem.yaml": "limits:\n  time_limit: -1\n"}, "problem.yaml", "positive number"),
        ({".timelimit": "fast\n"}, ".timelimit", "positive number"),
        ({"data/sample/1.in": b"\xff\n"}, "1.in", "not UTF-8"),
        ({"problem_statement/problem.md": "  \n"}, "problem.md", "statement is empty"),
        (
            {"output_validators/v/a.cpp": "int main() {}", "output_validators/v/b.cpp": "int main() {}"},
            "output_validators/v", "several source files (a.cpp, b.cpp)",
        ),
        ({"output_validators/v/check.java": "class C {}"}, "output_validators/v", "no C++ or Python source"),
        ({"output_validators/v/c.py": "", "output_validators/w.py": ""}, "output_validators", "several output"),
        ({"checker.cpp": "int main() {}", "output_validators/v/c.py": ""}, "checker.cpp", "both an output validator"),
        ({"checker.cpp": "int main() {}", "check.cpp": "int main() {}"}, "check.cpp", "several testlib checkers"),
    ],
)  # fmt: skip
def test_a_package_that_does_not_fit_is_refused_naming_the_file(files, named, why, tmp_path):
    package = write_package(tmp_path, "bad", {**MINIMAL, **files})
    with pytest.raises(SourceFormatError, match=re.escape(why)) as info:
        load_problem_package(package)
    assert named in str(info.value)


def test_missing_data_or_statement_or_folder_is_refused(tmp_path):
    no_data = write_package(tmp_path, "nodata", {"problem.yaml": "name: x\n", "problem_statement/problem.md": "x"})
    with pytest.raises(SourceFormatError, match="data: missing") as info:
        load_problem_package(no_data)
    assert str(no_data / "data") in str(info.value)
    empty = write_package(tmp_path, "empty", {"problem_statement/problem.md": "x", "data/secret/readme.txt": "none"})
    with pytest.raises(SourceFormatError, match="no test cases"):
        load_problem_package(empty)
    no_statement = write_package(tmp_path, "nostatement", {"data/sample/1.in": "1\n", "data/sample/1.ans": "1\n"})
    with pytest.raises(SourceFormatError, match="no statement"):
        load_problem_package(no_statement)
    with pytest.raises(SourceFormatError, match="not a problem package folder"):
        load_problem_package(tmp_path / "nowhere")


# Choices between layouts


def test_the_english_tex_statement_wins_and_texts_are_kept_byte_for_byte(tmp_path):
    package = write_package(tmp_path, "p", {
        **MINIMAL,
        "problem_statement/problem.en.tex": "\\problemname{P}\nEnglish.\n",
        "problem_statement/problem.tex": "Other.\n",
        "data/sample/1.in": "1\r\n2\r\n",
    })  # fmt: skip
    row = load_problem_package(package)
    assert row["question"] == "\\problemname{P}\nEnglish." and row["inputs"] == ["1\r\n2\r\n"]


def test_validator_flags_give_the_larger_tolerance_and_only_when_no_checker_judges(tmp_path):
    flags = {
        "float_tolerance 1e-4": 1e-4,
        "float_absolute_tolerance 1e-9 float_relative_tolerance 1e-6": 1e-6,
        "case_sensitive space_change_sensitive": None,
        "float_tolerance 1e-4 float_absolute_tolerance 1e-8 float_relative_tolerance 1e-7": 1e-7,
    }
    for i, (text, tol) in enumerate(flags.items()):
        package = write_package(tmp_path, f"p{i}", {**MINIMAL, "problem.yaml": f"validator_flags: {text}\n"})
        assert load_problem_package(package)["float_tol"] == tol, text
    custom = write_package(tmp_path, "custom", {
        **MINIMAL, "problem.yaml": "validation: custom\nvalidator_flags: float_tolerance 1e-4\n",
        "output_validators/v/v.py": "import sys; sys.exit(42)\n",
    })  # fmt: skip
    assert load_problem_package(custom)["float_tol"] is None


def test_where_a_checker_may_be_and_when_it_is_used(tmp_path):
    def checker(files):
        return load_problem_package(write_package(tmp_path, f"p{len(list(tmp_path.iterdir()))}", {**MINIMAL, **files}))[
            "checker"
        ]

    loose = checker({"output_validators/check.cc": "int main() {}"})
    assert loose == {"source": "int main() {}", "language": "cpp", "contract": "kattis"}
    current = checker({"output_validator/validator.py": "import sys; sys.exit(42)\n", "output_validator/README": "x"})
    assert current["language"] == "python" and current["contract"] == "kattis"
    assert checker({"checker/checker.cpp": '#include "testlib.h"\n'})["contract"] == "testlib"
    assert checker({"check.cpp": '#include "testlib.h"\n'})["contract"] == "testlib"
    with_build_script = checker({"output_validators/v/v.cpp": "int main() {}\n", "output_validators/v/build": "x"})
    assert with_build_script["source"] == "int main() {}\n"
    # validation: default means the default validator: a folder of output validators is not used.
    ignored = {"problem.yaml": "validation: default\n", "output_validators/v/v.py": "import sys; sys.exit(42)\n"}
    assert checker(ignored) is None


def test_time_limit_of_problem_yaml_wins_over_the_timelimit_file(tmp_path):
    both = write_package(tmp_path, "both", {**MINIMAL, "problem.yaml": "time_limit: 3\n", ".timelimit": "5\n"})
    assert load_problem_package(both)["time_limit_s"] == 3.0
    file_only = write_package(tmp_path, "file", {**MINIMAL, ".timelimit": "2.5\n"})
    assert load_problem_package(file_only)["time_limit_s"] == 2.5
    assert load_problem_package(write_package(tmp_path, "none", MINIMAL))["time_limit_s"] is None


def test_submissions_in_other_languages_folders_or_verdicts_are_counted_not_kept(tmp_path):
    package = write_package(tmp_path, "p", {
        **MINIMAL,
        "submissions/accepted/a.py": "print(1)\n",
        "submissions/accepted/b.cc": "int main() {}\n",
        "submissions/accepted/C.java": "class C {}\n",
        "submissions/accepted/multi/main.py": "print(1)\n",
        "submissions/accepted/.gitkeep": "",
        "submissions/brute_force/slow.py": "print(1)\n",
        "submissions/run_time_error/r.py": "raise SystemExit(1)\n",
    })  # fmt: skip
    row = load_problem_package(package)
    assert [(s["verdict"], s["language"], s["path"]) for s in row["submissions"]] == [
        ("accepted", "python", "submissions/accepted/a.py"),
        ("accepted", "cpp", "submissions/accepted/b.cc"),
        ("run_time_error", "python", "submissions/run_time_error/r.py"),
    ]
    assert row["solutions"] == ["print(1)\n"] and row["skipped_submissions"] == 3


def test_a_validator_of_several_files_is_stored_as_one_source(tmp_path):
    """Contest tooling ships validators as a source and its headers (``validate.cc`` + ``validate.h``)."""
    files = {
        "output_validators/v/validate.cc": '#include "validate.h"\n#include "testlib.h"\nint main() { return f(); }\n',
        "output_validators/v/validate.h": '#pragma once\n#include "util.h"\nint f() { return g() + 41; }\n',
        "output_validators/v/util.h": "#pragma once\nint g() { return 1; }\n",
    }
    row = load_problem_package(write_package(tmp_path, "multi", {**MINIMAL, **files}))
    source = row["checker"]["source"]
    assert row["checker"]["language"] == "cpp" and row["checker"]["contract"] == "kattis"
    assert "return g() + 41" in source and "return 1;" in source and '#include "testlib.h"' in source
    assert '#include "validate.h"' not in source and '#include "util.h"' not in source



def test_input_validators_are_read_with_their_contract_and_admit_exactly_the_stated_inputs(rows):
    from evolvecoder_datasets.execution import Sandbox
    from evolvecoder_datasets.search.stdio_writer import shipped_validator

    assert rows["sumpair"]["validator"]["contract"] == "testlib" and rows["sumpair"]["validator"]["language"] == "cpp"
    assert rows["anypath"]["validator"]["contract"] == "kattis"
    assert rows["anypath"]["validator"]["language"] == "python"
    assert rows["circle"]["validator"] is None and rows["anyorder"]["validator"] is None
    wrong = {"sumpair": ["3 1\n1 2\n", "2 1\n1  2\n", "0 5\n\n", "1 1\n2000000000\n"],
             "anypath": ["3 1\n1 4\n", "3 1\n2 2\n", "3 2\n1 2\n"]}
    with Sandbox(workers=2) as sb:
        for name, bad in wrong.items():
            source, language = shipped_validator(rows[name]["validator"])
            texts = list(rows[name]["inputs"]) + bad
            report = sb.run_stdio(source, texts, [""] * len(texts), language=language)
            assert report.passed == [True] * len(rows[name]["inputs"]) + [False] * len(bad), (name, report.messages)


def test_two_input_validators_are_refused(tmp_path):
    package = write_package(tmp_path, "two", {**MINIMAL, "validator.cpp": "int main() {}\n",
                                              "input_validators/v/v.py": "import sys\nsys.exit(42)\n"})
    with pytest.raises(SourceFormatError, match="several input validators"):
        load_problem_package(package)
