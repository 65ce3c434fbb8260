"""Static gates: each one passes a good task and fails its own bad case with its named reason."""

from __future__ import annotations

import pytest

from evolvecoder_datasets.code_instruct import DecontaminationIndex, Deduplicator, run_gates
from evolvecoder_datasets.code_instruct.gates import (
    SKIP_REASONS,
    check_decontamination,
    check_imports_task_module,
    check_repo_anchoring,
    check_symbol_collision,
    check_test_strength,
    is_trivial_assert,
)
from evolvecoder_datasets.errors import ConfigError
from evolvecoder_datasets.prompts import code_instruct

from .conftest import answer

REASON_OF = {
    "contaminated": "contaminated",
    "no_task_import": "test_not_importing_task_module",
    "not_anchored": "not_anchored",
    "annotation_only": "not_anchored",
    "symbol_collision": "symbol_collision",
    "weak_trivial": "weak_test",
    "errors_without_raises": "weak_test",
}


@pytest.fixture(scope="module")
def humaneval_index():
    return DecontaminationIndex.from_benchmarks(["humaneval", "leetcode"])


def _gates(name, repo, index, dedup=None):
    task = code_instruct.parse(answer("tinytext", name))
    return run_gates(task.problem, task.test, task.solution, import_names=repo.import_names,
                     public_symbols=repo.public_symbols, index=index, dedup=dedup)  # fmt: skip


@pytest.mark.parametrize("name", ["good_caption", "good_slugs", "good_top_words", "oracle_fails",
                                  "passes_without_oracle", "exit_zero", "duplicate_of_caption"])  # fmt: skip
def test_good_and_execution_only_failures_pass_every_static_gate(name, tinytext_repo, humaneval_index):
    assert _gates(name, tinytext_repo, humaneval_index).ok


@pytest.mark.parametrize("name", sorted(REASON_OF))
def test_each_bad_answer_fails_with_its_named_reason(name, tinytext_repo, humaneval_index):
    result = _gates(name, tinytext_repo, humaneval_index)
    assert not result.ok
    assert result.reason == REASON_OF[name]
    assert result.reason in SKIP_REASONS
    assert result.detail


def test_decontamination_catches_a_reworded_leetcode_statement_but_not_a_stock_phrase(humaneval_index):
    copied = ("Given an array of integers nums and an integer target, return indices of the two numbers such that "
              "they add up to target. You may assume that each input would have exactly one solution, and you may "
              "not use the same element twice. Use tinytext to parse the input.")  # fmt: skip
    assert check_decontamination(copied, humaneval_index).reason == "contaminated"
    own = ("Write `caption_lines(text, width)` that wraps text with tinytext.wrap_words and prefixes each line "
           "with '> ', given an array of lines to format.")  # fmt: skip
    assert check_decontamination(own, humaneval_index).ok
    assert humaneval_index.sources == {"humaneval": 164, "leetcode": 1405}


def test_decontamination_index_is_stable_across_instances():
    texts = ["one two three four five six seven eight nine ten eleven"]
    assert DecontaminationIndex(texts=texts).grams == DecontaminationIndex(texts=texts).grams
    with pytest.raises(ConfigError):
        DecontaminationIndex(n=2)


def test_task_module_import_forms():
    assert check_imports_task_module("import task_module\ndef test_a():\n    assert task_module.f()\n").ok
    assert check_imports_task_module("from task_module.sub import g\n").ok
    assert check_imports_task_module("from .task_module import g\n").reason == "test_not_importing_task_module"
    assert check_imports_task_module("def test(:\n").reason == "syntax_error"


def test_anchoring_accepts_any_repo_import_name_and_aliases():
    names = ["attr", "attrs"]
    assert check_repo_anchoring("import attr as a\n@a.define\nclass P:\n    x: int = 0\n", names).ok
    assert check_repo_anchoring("from attrs import fields\ndef f(c):\n    return fields(c)\n", names).ok
    assert check_repo_anchoring("import attrs.validators\nV = attrs.validators.instance_of(int)\n", names).ok
    unused = check_repo_anchoring("import attrs\ndef f():\n    return 1\n", names)
    assert unused.reason == "not_anchored" and "never uses" in unused.detail
    assert check_repo_anchoring("from .attrs import x\nx()\n", names).reason == "not_anchored"


def test_symbol_collision_ignores_imports_and_private_helpers():
    public = {"slugify", "wrap_words"}
    assert check_symbol_collision("from tinytext import slugify\ndef _wrap_words(): ...\n", public).ok
    assert check_symbol_collision("wrap_words = None\n", public).reason == "symbol_collision"


@pytest.mark.parametrize("source, trivial", [
    ("assert True", True), ("assert 1 == 1", True), ("assert not False", True), ("assert (1, 2)", True),
    ("assert x == x", True), ("assert isinstance(r, object)", True),
    ("assert f(1) == 2", False), ("assert result", False), ("assert len(r) == 3", False), ("assert a.b < 2", False),
])  # fmt: skip
def test_trivial_asserts(source, trivial):
    import ast

    assert is_trivial_assert(ast.parse(source).body[0]) is trivial


def test_test_strength_counts_asserts_and_needs_a_test_function():
    three = "from task_module import f\ndef test_a():\n    assert f(1) == 2\n    assert f(2) == 3\n    assert f(3)\n"
    assert check_test_strength(three, "Write f.").ok
    two = "from task_module import f\ndef test_a():\n    assert f(1) == 2\n    assert f(2) == 3\n"
    assert "2 non-trivial" in check_test_strength(two, "Write f.").detail
    no_function = "from task_module import f\nassert f(1) == 2\nassert f(2) == 3\nassert f(3)\n"
    assert "no test function" in check_test_strength(no_function, "Write f.").detail
    raising = three + "\ndef test_b():\n    with pytest.raises(ValueError):\n        f(-1)\n"
    for wording in ("Reject negative numbers.", "Invalid input must raise.", "f must not accept -1."):
        assert check_test_strength(three, wording).reason == "weak_test"
        assert check_test_strength(raising, wording).ok


def test_dedup_fingerprints_head_and_symbols_independently():
    dedup = Deduplicator()
    assert dedup.check("Write `wrap(x)`.", "def wrap(x): ...\n").ok
    dedup.add("Write `wrap(x)`.", "def wrap(x): ...\n")
    assert dedup.check("WRITE wrap(x)!!", "def other(): ...\n").reason == "duplicate"
    assert dedup.check("Something else entirely.", "def wrap(y): ...\ndef _helper(): ...\n").reason == "duplicate"
    assert dedup.check("Something else entirely.", "def wrap2(y): ...\n").ok
    assert dedup.check("A new task", "X = 1\n").ok and dedup.check("B new task", "_private = 1\n").ok


def test_gates_run_in_order_first_failure_wins(tinytext_repo):
    # Not anchored AND colliding AND weak: anchoring comes first.
    result = run_gates("Write slugify.", "from task_module import slugify\ndef test_a():\n    assert True\n",
                       "def slugify(x):\n    return x\n", import_names=["tinytext"],
                       public_symbols=tinytext_repo.public_symbols)  # fmt: skip
    assert result.reason == "not_anchored"
