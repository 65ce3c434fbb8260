"""Labelled contest submissions agree with their labels, judged as a contest judges them.

The packages under ``tests/data/problem_packages`` (written for this project in the ICPC/Kattis package format; see
their README) carry submissions in Python and C++ filed under ``accepted``, ``wrong_answer``,
``time_limit_exceeded`` and ``run_time_error``, for problems judged by the token compare, by a float tolerance, by a
Kattis output validator (Python) and by a testlib checker (C++). Each is read with ``load_problem_package`` and
judged through the public ``Sandbox.run_stdio`` with the package's own checker, tolerance and time limit; its
verdict is that of its first case not accepted, as contest tooling reports it. The same rows then go through the
reward function a trainer calls, with the dataset's own columns.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evolvecoder_datasets.execution import Sandbox
from evolvecoder_datasets.rewards import code_reward
from evolvecoder_datasets.sources.problem_package import load_problem_package, load_problem_packages

PACKAGES = Path(__file__).resolve().parent.parent / "data" / "problem_packages"
NAMES = sorted(p.name for p in PACKAGES.iterdir() if p.is_dir())
VERDICT_OF = {"pass": "accepted", "fail": "wrong_answer", "timeout": "time_limit_exceeded", "error": "run_time_error",
              "crash": "run_time_error", "memory": "run_time_error"}  # fmt: skip

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="no g++ on this machine")


def _verdict(statuses: list[str]) -> str:
    for status in statuses:
        if status != "pass":
            return VERDICT_OF.get(status, status)
    return "accepted"


@pytest.fixture(scope="module")
def sb():
    with Sandbox(workers=2, timeout_s=2.0, memory_mb=1024) as box:
        yield box


def test_the_fixture_set_covers_every_label_language_and_judge():
    rows = [load_problem_package(PACKAGES / name) for name in NAMES]
    labels = {(s["verdict"], s["language"]) for row in rows for s in row["submissions"]}
    assert {v for v, _ in labels} == {"accepted", "wrong_answer", "time_limit_exceeded", "run_time_error"}
    assert {lang for _, lang in labels} == {"python", "cpp"}
    judges = {(row["checker"] or {}).get("contract") for row in rows}
    assert judges == {None, "kattis", "testlib"} and any(row["float_tol"] for row in rows)


@pytest.mark.parametrize("name", NAMES)
def test_every_labelled_submission_gets_its_label(sb, name):
    row = load_problem_package(PACKAGES / name)
    assert row["submissions"], name
    seen = []
    for submission in row["submissions"]:
        report = sb.run_stdio(submission["source"], row["inputs"], row["outputs"], language=submission["language"],
                              checker=row["checker"], float_tol=row["float_tol"])  # fmt: skip
        assert report.infra_error is None, (submission["path"], report.infra_error)
        seen.append((submission["path"], submission["verdict"], _verdict(report.statuses), report.statuses))
    wrong = [entry for entry in seen if entry[1] != entry[2]]
    assert not wrong, wrong


def test_the_reward_function_scores_package_rows_with_their_own_columns():
    """``code_reward`` as TRL calls it: completions plus the dataset's columns, one entry per completion."""
    dataset = load_problem_packages(PACKAGES)
    completions, columns = [], {c: [] for c in ("inputs", "outputs", "checker", "language", "float_tol")}
    expected = []
    for row in dataset:
        for submission in row["submissions"]:
            if submission["verdict"] not in ("accepted", "wrong_answer"):
                continue  # the slow ones are covered above
            fence = "cpp" if submission["language"] == "cpp" else "python"
            completions.append(f"Here is my program.\n```{fence}\n{submission['source']}\n```\n")
            for column in columns:
                columns[column].append(submission["language"] if column == "language" else row[column])
            expected.append(1.0 if submission["verdict"] == "accepted" else 0.0)
    assert 0.0 in expected and 1.0 in expected
    assert code_reward(prompts=["Solve it."] * len(completions), completions=completions, **columns) == expected


def test_a_package_laid_out_as_contest_tooling_ships_it_is_judged_by_its_own_validator(sb, tmp_path):
    """A validator of two files (``validate.cc`` + ``validate.h``) and a C submission, as problemtools' examples
    have them: the header is inlined on loading, the validator compiled as C++, the submission as C."""
    files = {
        "problem.yaml": "name: Double\nvalidation: custom\n",
        "problem_statement/problem.en.tex": "Print twice the number, or any number that differs by at most 1.",
        "data/sample/1.in": "4\n", "data/sample/1.ans": "8\n",
        "data/secret/2.in": "21\n", "data/secret/2.ans": "42\n",
        "output_validators/near/validate.h": (
            "#include <cstdio>\n#include <cstdlib>\n"
            "inline void verdict(bool ok) { std::exit(ok ? 42 : 43); }\n"
        ),
        "output_validators/near/validate.cc": (
            '#include "validate.h"\n'
            "int main(int argc, char** argv) {\n"
            "  FILE* answer = std::fopen(argv[2], \"r\"); long long want = 0, got = 0; char extra;\n"
            "  if (!answer || std::fscanf(answer, \"%lld\", &want) != 1) return 1;\n"
            "  if (std::scanf(\"%lld\", &got) != 1 || std::scanf(\" %c\", &extra) == 1) verdict(false);\n"
            "  verdict(got - want <= 1 && want - got <= 1);\n}\n"
        ),
        "submissions/accepted/plus_one.c": '#include <stdio.h>\nint main(void) { long long x; scanf("%lld", &x); printf("%lld\\n", 2 * x + 1); }\n',
        "submissions/wrong_answer/triple.py": "print(3 * int(input()))\n",
    }
    for name, text in files.items():
        path = tmp_path / "double" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    row = load_problem_package(tmp_path / "double")
    assert row["checker"]["language"] == "cpp" and "inline void verdict" in row["checker"]["source"]
    verdicts = {}
    for submission in row["submissions"]:
        report = sb.run_stdio(submission["source"], row["inputs"], row["outputs"], language=submission["language"],
                              checker=row["checker"])  # fmt: skip
        assert report.infra_error is None, report
        verdicts[submission["path"]] = (submission["verdict"], _verdict(report.statuses))
    assert verdicts == {"submissions/accepted/plus_one.c": ("accepted", "accepted"),
                        "submissions/wrong_answer/triple.py": ("wrong_answer", "wrong_answer")}  # fmt: skip


def test_a_per_row_column_of_the_wrong_length_is_a_schema_error_naming_it():
    from evolvecoder_datasets.errors import SchemaError

    with pytest.raises(SchemaError, match="float_tol"):
        code_reward(prompts=["p"], completions=["```python\nprint(1)\n```"], inputs=[["1\n"]], outputs=[["1\n"]],
                    float_tol=[1e-6, 1e-6])  # fmt: skip

