"""Tests that check the library's own exceptions are judged outside (attack class 3: realistic tests left inside).

``pytest.raises(tomli.TOMLDecodeError)``, or a ``ValueError`` whose ``__cause__`` must be one, named a class the judge
did not hold: such tests stayed judged inside (third-party classes) or failed the reference (``json``'s, which the
judge's language refused), and were left out of the exports. Now the classes are learned in a clean sandbox process
of the task's environment (``code_instruct/exceptions.py``) and the checks rewritten to compare their qualified names
(``code_instruct/raises.py``). Run for real: the right solution verifies judged outside, wrong ones (no cause,
another class, nothing raised, a solution that rebinds the library's class in its own process) do not, and the
exported verifier, which learns the classes again in its own image, rewards the same way.
"""

from __future__ import annotations

import ast

import pytest

from evolvecoder_datasets.code_instruct import verify_task
from evolvecoder_datasets.code_instruct.exceptions import (
    ExceptionReference,
    exception_references,
    learn_exception_classes,
)
from evolvecoder_datasets.code_instruct.raises import rewrite_raises
from evolvecoder_datasets.code_instruct.split import split_pytest_module, split_settings

# json's decoder error: a class of a module the test imports (no third-party package needed for the quick run).
JSON_TEST = """import json
import pytest
from task_module import load_words


def test_words_become_slugs():
    assert load_words('["A b", "x"]') == ['a-b', 'x']
    assert load_words('[]') == []


def test_bad_json_is_a_value_error_caused_by_the_decoder():
    with pytest.raises(ValueError, match='not a JSON list') as info:
        load_words('[1,')
    assert isinstance(info.value.__cause__, json.JSONDecodeError)


def test_strict_mode_lets_the_decoder_error_through():
    with pytest.raises(json.JSONDecodeError):
        load_words('{', strict=True)
"""
JSON_RIGHT = """import json
import tinytext


def load_words(text, strict=False):
    try:
        words = json.loads(text)
    except json.JSONDecodeError as error:
        if strict:
            raise
        raise ValueError('not a JSON list') from error
    return [tinytext.slugify(w) for w in words]
"""
JSON_WRONG = {
    "no_cause": JSON_RIGHT.replace(" from error", " from None"),
    "another_class_in_strict_mode": JSON_RIGHT.replace("            raise\n", "            raise ValueError('x')\n"),
    "raises_nothing": JSON_RIGHT.replace("        raise ValueError('not a JSON list') from error\n",
                                         "        return []\n"),
    # rebinds the class in its own process: pytest, in that process, then takes a ValueError for the decoder's error
    "rebinds_the_librarys_class": "import json\njson.JSONDecodeError = ValueError\n" + JSON_RIGHT.replace(
        "            raise\n", "            raise ValueError('strict')\n"),
}


def test_the_references_are_read_without_running_the_test():
    refs = exception_references(JSON_TEST)
    assert refs == (ExceptionReference("json.JSONDecodeError", "json", "JSONDecodeError"),)
    other = ("import attrs.exceptions as ae\nfrom tomli import TOMLDecodeError as Bad\nimport task_module\n\n"
             "def test_a():\n    try:\n        pass\n    except (Bad, ae.FrozenInstanceError, task_module.E, KeyError):\n"
             "        pass\n")  # fmt: skip
    assert [(r.text, r.module, r.path) for r in exception_references(other)] == [
        ("Bad", "tomli", "TOMLDecodeError"), ("ae.FrozenInstanceError", "attrs.exceptions", "FrozenInstanceError")]


def test_blocks_the_rewrite_does_not_cover_are_left_as_they_were():
    known = {"json.JSONDecodeError": "json.decoder.JSONDecodeError"}
    for source in ("with pytest.raises(json.JSONDecodeError):\n    a = 1\n    f(a)\n",  # two statements
                   "with pytest.raises(ValueError) as info:\n    f(1)\nassert info.value.doc == ''\n",  # attribute
                   "with pytest.raises(tomli.TOMLDecodeError):\n    f(1)\n",  # a class not learned
                   "with pytest.raises(ValueError):\n    f(1)\n"):  # builtin only: the judge's own
        body = ast.parse(source).body
        assert rewrite_raises(body, known) == (body, False), source


def test_classes_are_learned_in_a_clean_process_of_the_environment(venv_backend, tinytext_env):
    settings = split_settings(venv_backend.sandbox_settings(tinytext_env), test_timeout_s=2.0)
    refs = [ExceptionReference("json.JSONDecodeError", "json", "JSONDecodeError"),
            ExceptionReference("tinytext.slugify", "tinytext", "slugify"),  # not an exception class
            ExceptionReference("json.Nope", "json", "Nope")]  # fmt: skip
    assert learn_exception_classes(refs, settings=settings) == {"json.JSONDecodeError": "json.decoder.JSONDecodeError"}


def test_a_test_on_the_librarys_exceptions_is_judged_outside(venv_backend, tinytext_env, exported, reward):
    right = verify_task(JSON_TEST, JSON_RIGHT, environment=tinytext_env, backend=venv_backend, timeout_s=60,
                        test_timeout_s=2.0)  # fmt: skip
    assert right.result.ok and right.judged == "outside" and right.stage_b.judged_outside, right
    for name, wrong in JSON_WRONG.items():
        verification = verify_task(JSON_TEST, wrong, environment=tinytext_env, backend=venv_backend, timeout_s=60,
                                   test_timeout_s=2.0)  # fmt: skip
        assert (verification.result.ok, verification.judged) == (False, "outside"), (name, verification)
    folder = exported(JSON_TEST, JSON_RIGHT, "outside")
    assert reward(folder, JSON_RIGHT) == "1"
    assert [reward(folder, wrong) for wrong in JSON_WRONG.values()] == ["0"] * len(JSON_WRONG)


def test_on_the_pytest_path_the_same_checks_are_pytests(venv_backend, tinytext_env, exported, reward):
    """A test only pytest can judge (it takes a fixture) keeps its exception checks as pytest does them: judged
    inside with the reason, the right solution verified, a wrong one not; its exported pytest folder rewards alike."""
    test = JSON_TEST.replace("def test_words_become_slugs():", "def test_words_become_slugs(tmp_path):")
    right = verify_task(test, JSON_RIGHT, environment=tinytext_env, backend=venv_backend, timeout_s=60)
    assert right.result.ok and (right.judged, right.inside_reason) == ("inside", "split: fixture"), right
    wrong = verify_task(test, JSON_WRONG["no_cause"], environment=tinytext_env, backend=venv_backend, timeout_s=60)
    assert (wrong.result.ok, wrong.result.reason) == (False, "solution_fails_test"), wrong
    folder = exported(test, JSON_RIGHT, "inside")
    assert (reward(folder, JSON_RIGHT), reward(folder, JSON_WRONG["no_cause"])) == ("1", "0")


def test_pytest_in_the_solutions_process_takes_the_rebound_class(venv_backend, tinytext_env):
    """The control: why the class must come from a clean process. The solution that rebinds ``json.JSONDecodeError``
    passes pytest, which looks the class up in the solution's interpreter."""
    run = venv_backend.run_pytest(tinytext_env, {"test_task.py": JSON_TEST,
                                                 "task_module.py": JSON_WRONG["rebinds_the_librarys_class"]},
                                  timeout_s=60)  # fmt: skip
    assert run.passed, run


TOMLI_TEST = """import pytest
import tomli
from task_module import load_config, parse_strict


def test_a_valid_config_is_read():
    assert load_config('name = "x"\\nport = 80\\n') == {"name": "x", "port": 80}
    assert load_config('') == {}


def test_an_invalid_config_is_a_value_error_from_the_decoder():
    with pytest.raises(ValueError) as info:
        load_config('name = ')
    assert isinstance(info.value.__cause__, tomli.TOMLDecodeError)


def test_the_strict_parser_raises_the_decoder_error():
    with pytest.raises(tomli.TOMLDecodeError):
        parse_strict('x = ')
    assert parse_strict('x = 1') == {'x': 1}
"""
TOMLI_RIGHT = """import tomli


def load_config(text):
    try:
        return tomli.loads(text)
    except tomli.TOMLDecodeError as error:
        raise ValueError(f"invalid config: {error}") from error


def parse_strict(text):
    return tomli.loads(text)
"""


@pytest.mark.slow
def test_the_tomli_task_is_judged_outside(venv_backend, tomli_env):
    """The shape of the verified tomli tasks that stayed inside: a ``ValueError`` whose cause is tomli's own
    ``TOMLDecodeError``, and ``pytest.raises`` on that class."""
    assert split_pytest_module(TOMLI_TEST).names  # it always split; its checks were what stayed inside
    right = verify_task(TOMLI_TEST, TOMLI_RIGHT, environment=tomli_env, backend=venv_backend, timeout_s=60)
    assert right.result.ok and right.judged == "outside", right
    for wrong in (TOMLI_RIGHT.replace(" from error", " from None"),  # no cause
                  TOMLI_RIGHT.replace('raise ValueError(f"invalid config: {error}") from error', "raise"),
                  # the strict parser raises another ValueError than the decoder's
                  TOMLI_RIGHT.replace("def parse_strict(text):\n    return tomli.loads(text)",
                                      "def parse_strict(text):\n    try:\n        return tomli.loads(text)\n"
                                      "    except ValueError:\n        raise ValueError(text) from None")):
        verification = verify_task(TOMLI_TEST, wrong, environment=tomli_env, backend=venv_backend, timeout_s=60)
        assert (verification.result.ok, verification.judged) == (False, "outside"), verification


@pytest.mark.slow
def test_the_attrs_frozen_point_task_has_its_exception_check_judged_outside(sdists, venv_backend, tmp_path_factory):
    """The one task of the real-sdist benchmark that stayed inside (issue 23's run: 13 of 14 outside):
    ``pytest.raises(attrs.exceptions.FrozenInstanceError)`` around an attribute assignment. Its exception check is
    now the judge's; the same test function also orders two program objects (``p < GridPoint(1, 3)``), which the
    judge cannot (it holds their data, not their ``__lt__``), so that task is verified by the split as it was, judged
    inside with the reason said. Without the ordering, the test is judged outside."""
    from evolvecoder_datasets.code_instruct import open_repository
    from evolvecoder_datasets.errors import EnvironmentBuildError
    from evolvecoder_datasets.prompts import code_instruct

    from .conftest import answer

    repo = open_repository(sdists["attrs"], cache_dir=tmp_path_factory.mktemp("sources"))
    try:
        env = venv_backend.prepare(repo)
    except EnvironmentBuildError as err:
        pytest.skip(f"cannot build the attrs venv (PyPI unreachable?): {str(err)[:200]}")
    good = code_instruct.parse(answer("attrs", "good_frozen_point"))
    as_is = verify_task(good.test, good.solution, environment=env, backend=venv_backend, timeout_s=120)
    assert as_is.result.ok and as_is.judged == "inside", as_is
    assert as_is.inside_reason.startswith("exceptions: ") and "GridPoint.__lt__ is the program's own code" in \
        as_is.inside_reason  # (its class's own __lt__ answers p < q in Python: the judge refuses it)
    test = good.test.replace(" and p < GridPoint(1, 3) < GridPoint(2, 0)", "")
    right = verify_task(test, good.solution, environment=env, backend=venv_backend, timeout_s=120)
    assert right.result.ok and right.judged == "outside", right
    mutable = good.solution.replace("@attrs.frozen(order=True)", "@attrs.define(order=True, frozen=False, hash=True)")
    wrong = verify_task(test, mutable, environment=env, backend=venv_backend, timeout_s=120)
    assert (wrong.result.ok, wrong.judged) == (False, "outside"), wrong
    assert wrong.stage_b.tests["test_task.py::test_points_are_frozen_ordered_values"] == "failed"
