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
    count_oracle_checks,
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
    "passes_without_oracle": "oracle_unreached",
}


@pytest.fixture(scope="module")
def humaneval_index():
    return DecontaminationIndex.from_benchmarks(["humaneval", "leetcode"])


def _gates(name, repo, index, dedup=None):
    task = code_instruct.parse(answer("tinytext", name))
    return run_gates(task.problem, task.test, task.solution, import_names=repo.import_names,
                     public_symbols=repo.public_symbols, index=index, dedup=dedup)  # fmt: skip


@pytest.mark.parametrize("name", ["good_caption", "good_slugs", "good_top_words", "oracle_fails",
                                  "fallback_without_oracle", "exit_zero", "duplicate_of_caption"])  # fmt: skip
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


ORACLE_CONNECTED = {
    "helper and fixture": (
        "import pytest\nfrom task_module import Parser\n\n@pytest.fixture\ndef parser():\n    return Parser(strict=True)\n\n"
        "def check(p, text, expected):\n    assert p.parse(text) == expected\n\n"
        "def test_a(parser):\n    check(parser, 'a', ['a'])\n    assert parser.strict\n"
    ),
    "mutating call and loop": (
        "import task_module as tm\n\ndef test_a():\n    seen = []\n    for word in ['x', 'y']:\n"
        "        seen.append(tm.shout(word))\n    assert seen == ['X', 'Y']\n"
    ),
    "raises block only": (
        "import pytest\nfrom task_module import parse\n\ndef test_a():\n    with pytest.raises(ValueError):\n"
        "        parse('')\n"
    ),
    "star import": "from task_module import *\n\ndef test_a():\n    assert double(2) == 4\n",
    "decorator and base class": (
        "from task_module import define, Base\n\n@define\nclass P:\n    x: int = 1\n\nclass Q(Base):\n    pass\n\n"
        "def test_a():\n    assert P().x == 1\n\ndef test_b():\n    assert Q().name == 'q'\n"
    ),
    "unittest style": (
        "import unittest\nfrom task_module import double\n\nclass TestD(unittest.TestCase):\n"
        "    def test_a(self):\n        self.assertEqual(double(2), 4)\n"
    ),
}


@pytest.mark.parametrize("name", sorted(ORACLE_CONNECTED))
def test_oracle_gate_follows_values_through_helpers_fixtures_loops_and_raises(name):
    reaching, total = count_oracle_checks(ORACLE_CONNECTED[name])
    assert reaching == total >= 1


def test_oracle_gate_rejects_asserts_on_the_repository_or_constants_only():
    test = (
        "import tinytext\nfrom task_module import wrap_count\n\n"
        "def test_a():\n    n = len(tinytext.wrap_words('a b', 1))\n    assert n == 2\n    assert wrap_count\n"
        "    assert tinytext.slugify('A B') == 'a-b'\n"
    )
    # `assert wrap_count` reaches the name itself: a truthiness check still counts as reaching (weak_test judges
    # strength); drop it and nothing reaches.
    assert count_oracle_checks(test) == (1, 3)
    unreached = test.replace("    assert wrap_count\n", "")
    from evolvecoder_datasets.code_instruct.gates import check_asserts_reach_oracle

    result = check_asserts_reach_oracle(unreached)
    assert (result.reason, result.detail) == ("oracle_unreached", "none of the 2 check(s) depends on a name taken from task_module")


def test_anchoring_matches_namespace_members_by_their_dotted_name():
    names = ["acme.widgets"]
    assert check_repo_anchoring("from acme.widgets import Gear\ndef f():\n    return Gear()\n", names).ok
    assert check_repo_anchoring("from acme import widgets\ndef f():\n    return widgets.Gear()\n", names).ok
    assert check_repo_anchoring("import acme.widgets.core\ndef f():\n    return acme.widgets.core.turn()\n", names).ok
    assert check_repo_anchoring("import acme.other\ndef f():\n    return acme.other.x()\n", names).reason == "not_anchored"


def test_a_test_nested_past_the_checks_recursion_is_a_recorded_reason_not_a_crash():
    """Model-written text is hostile: 2,000 chained additions make every recursive AST walk overflow. The gates
    give a reason (the pipeline records it as a drop and goes on) instead of raising out of ``generate_tasks``."""
    from evolvecoder_datasets.code_instruct.gates import SKIP_REASONS, run_gates

    deep = "from task_module import f\n\ndef test_a():\n    assert f(1) == " + "+".join(["1"] * 2000) + "\n"
    result = run_gates("Write f.", deep + "    assert f(2) == 3\n    assert f(3) == 4\n",
                       "import tinytext\n\ndef f(x):\n    return tinytext.slugify(x)\n",
                       import_names=["tinytext"], public_symbols=set())  # fmt: skip
    assert (result.ok, result.reason) == (False, "too_deep") and "too_deep" in SKIP_REASONS


def test_a_section_nested_past_the_parser_is_a_syntax_error_reason():
    """The parser itself overflows on 20,000 chained additions (RecursionError, not SyntaxError): the answer is
    dropped as ``syntax_error`` like any unparsable section."""
    from evolvecoder_datasets.errors import LLMResponseError
    from evolvecoder_datasets.prompts import code_instruct as prompt

    deep = "x = " + "+".join(["1"] * 20000)
    text = ("[Problem Description]\nWrite f.\n\n[Test]\n```python\nfrom task_module import f\n\ndef test_a():\n"
            "    assert f(1) == 2\n```\n\n[Solution]\n```python\n" + deep + "\ndef f(x):\n    return 2\n```\n")
    with pytest.raises(LLMResponseError) as info:
        prompt.parse(text)
    assert info.value.reason == "syntax_error"
