"""The sandboxed code_eval metric: loads offline through ``evaluate.load``, scores real HumanEval candidates like a
trusted runner does, refuses hostile candidates, and reports the unbiased pass@k of ``metrics.pass_at_k``."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from evolvecoder_datasets.errors import ConfigError, MissingExtraError
from evolvecoder_datasets.evaluate_metrics import (
    load_sandboxed_code_eval,
    sandboxed_code_eval_path,
    split_reference,
)
from evolvecoder_datasets.metrics import pass_at_k

evaluate = pytest.importorskip("evaluate")

# HumanEval problems: two whose check() splits into asserts, one (HumanEval/32) that stays a whole check() block.
PROBLEMS = (0, 2, 13, 32)
MUTANTS_PER_PROBLEM = 3


@pytest.fixture(scope="module", params=["isolated", "fast"])
def code_eval(request):
    return evaluate.load(sandboxed_code_eval_path(), config_name=request.param)


# ---------------------------------------------------------------- loading


def test_loads_offline_from_the_package_folder_and_from_the_script_path():
    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    folder = sandboxed_code_eval_path()
    assert os.path.isfile(os.path.join(folder, "sandboxed_code_eval.py"))
    for path in (folder, os.path.join(folder, "sandboxed_code_eval.py")):
        metric = evaluate.load(path)
        assert isinstance(metric, evaluate.Metric)
        assert metric.sandbox_mode == "isolated"
        scores, results = metric.compute(
            predictions=[["x = 1", "x = 2"]], references=["assert x == 1"], k=[1, 2]
        )
        assert scores == {"pass@1": 0.5, "pass@2": 1.0}
        assert [r["passed"] for _, r in results[0]] == [True, False]


def test_mode_comes_from_config_name_or_keyword_and_bad_values_are_config_errors():
    assert evaluate.load(sandboxed_code_eval_path(), config_name="fast").sandbox_mode == "fast"
    assert load_sandboxed_code_eval(mode="fast").sandbox_mode == "fast"
    assert load_sandboxed_code_eval(config_name="default").sandbox_mode == "isolated"
    with pytest.raises(ConfigError):
        load_sandboxed_code_eval(config_name="threads")
    with pytest.raises(ConfigError):
        load_sandboxed_code_eval(config_name="fast", mode="isolated")
    with pytest.raises(ConfigError):
        load_sandboxed_code_eval(memory_mb=8)


def test_missing_evaluate_is_a_missing_extra_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "evaluate", None)  # what the import system does for an absent package
    with pytest.raises(MissingExtraError, match=r"evolvecoder-datasets\[all\]"):
        load_sandboxed_code_eval()


def test_metric_folder_is_a_package_so_the_script_ships_in_the_wheel():
    from setuptools import find_packages

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert "evolvecoder_datasets.evaluate_metrics.sandboxed_code_eval" in find_packages(
        root, include=["evolvecoder_datasets*"]
    )


# ---------------------------------------------------------------- references


def test_split_reference_splits_only_runs_of_top_level_asserts():
    assert split_reference("assert f(1) == 2\nassert f(2) == 3") == ["assert f(1) == 2", "assert f(2) == 3"]
    assert split_reference("assert f(1) == 2; assert (\n    f(2) == 3\n)") == [
        "assert f(1) == 2",
        "assert (\n    f(2) == 3\n)",
    ]
    assert split_reference("['assert f(1) == 2', \"assert f(2) == 3\"]") == [
        "assert f(1) == 2",
        "assert f(2) == 3",
    ]
    assert split_reference("('assert a\\nassert b', 'assert c')") == ["assert a", "assert b", "assert c"]
    whole = "import math\nassert math.isclose(f(1), 2.0)"
    assert split_reference(whole) == [whole]
    assert split_reference("def check(c):\n    assert c(1)\ncheck(f)") == [
        "def check(c):\n    assert c(1)\ncheck(f)"
    ]
    assert split_reference("assert (") == ["assert ("]
    assert split_reference("[1, 2]") == ["[1, 2]"]
    assert split_reference("\n  \n") == []


def test_asserts_that_share_a_walrus_name_stay_one_test_and_pass_as_in_code_eval(code_eval):
    reference = "assert (r := f(1)) == 2\nassert r > 1"
    assert split_reference(reference) == [reference]
    assert split_reference("assert f(1) == 2\nassert [y for x in [1] if (y := x)]") == [
        "assert f(1) == 2\nassert [y for x in [1] if (y := x)]"
    ]
    scores, results = code_eval.compute(
        predictions=[["def f(x):\n    return x + 1", "def f(x):\n    return x"]],
        references=[reference],
        k=[1],
    )
    assert scores == {"pass@1": 0.5}
    assert [r["statuses"] for _, r in results[0]] == [["pass"], ["fail"]]


def test_list_like_reference_runs_one_test_per_element(code_eval):
    scores, results = code_eval.compute(
        predictions=[["def f(x):\n    return x + 1"]],
        references=["['assert f(1) == 2', 'assert f(2) == 4', 'assert f(3) == 4']"],
        k=[1],
    )
    assert scores == {"pass@1": 0.0}
    assert results[0][0][1]["statuses"] == ["pass", "fail", "pass"]
    assert results[0][0][1]["result"].startswith("failed: fail")


def test_empty_reference_only_requires_the_program_to_load(code_eval):
    scores, results = code_eval.compute(
        predictions=[["x = 1", "raise ValueError('no')"]], references=[""], k=[1]
    )
    assert scores == {"pass@1": 0.5}
    assert results[0][1][1]["result"].startswith("failed: error")


# ---------------------------------------------------------------- real HumanEval candidates


def _trusted_verdict(program: str, record: dict) -> bool:
    """HumanEval's own check() in a plain interpreter: the oracle for canonical solutions and their mutants."""
    script = f"{program}\n\n{record['test']}\n\ncheck({record['entry_point']})\n"
    try:
        done = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, timeout=20)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


@pytest.fixture(scope="module")
def humaneval_case():
    from evolvecoder_datasets.mutants import generate_mutants
    from evolvecoder_datasets.sources import load_humaneval
    from evolvecoder_datasets.sources.humaneval import read_humaneval_records

    rows, records = load_humaneval(), read_humaneval_records()
    predictions, references, truth = [], [], []
    for index in PROBLEMS:
        row = rows[index]
        solution = row["solutions"][0]
        mutants = [m.code for m in generate_mutants(solution, max_mutants=MUTANTS_PER_PROBLEM, seed=index)]
        candidates = [solution, *mutants]
        predictions.append(candidates)
        references.append("\n".join(row["tests"]))
        truth.append([_trusted_verdict(c, records[index]) for c in candidates])
    return predictions, references, truth, rows


def test_pass_at_1_on_humaneval_is_the_fraction_of_correct_candidates(code_eval, humaneval_case):
    predictions, references, truth, rows = humaneval_case
    assert all(t[0] for t in truth), "every canonical solution passes its own check()"
    assert not all(all(t) for t in truth), "some mutant must fail, or the test proves nothing"

    scores, results = code_eval.compute(predictions=predictions, references=references, k=[1], timeout=3.0)

    verdicts = [[r["passed"] for _, r in results[task]] for task in range(len(PROBLEMS))]
    assert verdicts == truth
    assert scores["pass@1"] == pytest.approx(np.mean([np.mean(t) for t in truth]), abs=1e-12)
    for task, index in enumerate(PROBLEMS):
        assert [cid for cid, _ in results[task]] == list(range(len(predictions[task])))
        assert all(len(r["statuses"]) == len(rows[index]["tests"]) for _, r in results[task])
    assert len(rows[32]["tests"]) == 1, "HumanEval/32 keeps its whole check() as one test"
    assert len(rows[0]["tests"]) > 1


# ---------------------------------------------------------------- hostile candidates

GOOD = "def add(a, b):\n    return a + b\n"
HOSTILE = {
    "exit_at_load": "import os\nos._exit(0)\n",
    "exit_in_call": "import os\ndef add(a, b):\n    os._exit(0)\n",
    "sys_exit_in_call": "import sys\ndef add(a, b):\n    sys.exit(0)\n",
    "always_equal": (
        "class Anything:\n"
        "    def __eq__(self, other):\n        return True\n"
        "    def __ne__(self, other):\n        return False\n"
        "    __hash__ = object.__hash__\n"
        "def add(a, b):\n    return Anything()\n"
    ),
    "always_equal_int": (
        "class Anything(int):\n"
        "    def __eq__(self, other):\n        return True\n"
        "    __hash__ = int.__hash__\n"
        "def add(a, b):\n    return Anything(0)\n"
    ),
    "patched_assertion": "import builtins\nbuiltins.AssertionError = SystemExit\ndef add(a, b):\n    return 0\n",
}


@pytest.mark.parametrize(
    "reference",
    [
        "assert add(2, 3) == 5\nassert add(-1, 1) == 0",
        "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(-1, 1) == 0\n\ncheck(add)",
    ],
    ids=["split-asserts", "whole-check"],
)
def test_hostile_candidates_are_not_counted_as_passing(code_eval, reference):
    candidates = [GOOD, *HOSTILE.values()]
    scores, results = code_eval.compute(predictions=[candidates], references=[reference], k=[1])
    passed = {name: r["passed"] for name, (_, r) in zip(["good", *HOSTILE], results[0])}
    assert passed == {"good": True, **{name: False for name in HOSTILE}}
    assert scores == {"pass@1": 1 / len(candidates)}


def test_a_program_that_spins_times_out(code_eval):
    scores, results = code_eval.compute(
        predictions=[["def add(a, b):\n    while True:\n        pass\n"]],
        references=["assert add(1, 1) == 2"],
        k=[1],
        timeout=0.3,
    )
    assert scores == {"pass@1": 0.0}
    assert results[0][0][1]["result"] == "timed out"


# ---------------------------------------------------------------- the estimator


def test_pass_at_k_matches_the_unbiased_estimator_and_skips_k_above_some_n(code_eval):
    right, wrong = "def f():\n    return 1\n", "def f():\n    return 0\n"
    correct = [0, 1, 3, 5, 2]
    predictions = [[right] * c + [wrong] * (5 - c) for c in correct]
    predictions.append([wrong, right, right, wrong, right, right, wrong])  # n = 7, c = 4
    correct.append(4)
    n = [len(p) for p in predictions]

    scores, _ = code_eval.compute(
        predictions=predictions,
        references=["assert f() == 1"] * len(predictions),
        k=[1, 2, 5, 7],
        num_workers=2,
    )

    assert set(scores) == {"pass@1", "pass@2", "pass@5"}, "pass@7 needs 7 candidates for every problem"
    for k in (1, 2, 5):
        assert scores[f"pass@{k}"] == pytest.approx(float(pass_at_k(n, correct, k).mean()), abs=1e-12)
    assert scores["pass@1"] == pytest.approx(np.mean(np.array(correct) / np.array(n)), abs=1e-12)


def test_an_int_k_works_and_a_bad_k_is_a_config_error(code_eval):
    assert code_eval.compute(predictions=[["x = 1"]], references=["assert x == 1"], k=1)[0] == {"pass@1": 1.0}
    with pytest.raises(ConfigError):
        code_eval.compute(predictions=[["x = 1"]], references=["assert x == 1"], k=[0])
