"""The published test is judged as pytest collects it (attack class 1: what pytest collects is not what was split).

Module-level code can make pytest run a test the split never sees (a callable or a class made at import, a method
added to a test class, a test re-bound under its own name, a plugin named at import) or drop one it judges
(``__test__ = False``), and it can collect one way under ``--collect-only`` and another when it runs. Before,
such a module was judged on its split alone, and a solution that fails the hidden test got reward 1. Each variant
here passes the split's static reading (so the check against pytest's own collection is what catches it) and is run
for real: verification judges it inside with the reason recorded (or rejects it), never outside on the split alone;
the exported verifier follows pytest's collection; an honest module is the control.
"""

from __future__ import annotations

import pytest

from evolvecoder_datasets.code_instruct import verify_task
from evolvecoder_datasets.code_instruct.backend import MAX_LISTING_LINES, _listed_ids
from evolvecoder_datasets.code_instruct.collection import collection_mismatch
from evolvecoder_datasets.code_instruct.split import split_pytest_module
from evolvecoder_datasets.code_instruct.verdict import PytestRun

RIGHT = "import tinytext\n\ndef f(text):\n    return tinytext.slugify(text)\n"
# Right on what the plain test asks, wrong on what the hidden tests ask.
ALMOST = "def f(text):\n    return {'A b': 'a-b', 'X  Y': 'x-y'}.get(text, 'wrong')\n"
HONEST = "from task_module import f\n\ndef test_a():\n    assert f('A b') == 'a-b'\n    assert f('X  Y') == 'x-y'\n"
CASE = ("\ndef _case(text, slug):\n    def check():\n        assert f(text) == slug\n    return check\n\n"
        "def _method(self):\n    assert f('Hello World') == 'hello-world'\n")  # fmt: skip

PARAMETRIZED = ("import pytest\nfrom task_module import f\n\n@pytest.mark.parametrize('t, s', [('A b', 'a-b'), "
                "('X  Y', 'x-y')], ids=['one', 'two'])\ndef test_a(t, s):\n    assert f(t) == s\n")

# name: (module, how the split and pytest differ: the start of Verification.inside_reason, or of the rejection)
TRICKS = {
    "callable_made_at_import": (HONEST + CASE + "\n_made = globals().update(test_big=_case('Hello World', "
                                "'hello-world'))\n", "collection_mismatch: pytest collects a test the split does not"),
    "class_made_at_import": (HONEST + "import sys\n" + CASE + "\n_made = setattr(sys.modules[__name__], 'TestMore', "
                             "type('TestMore', (), {'test_m': _method}))\n",
                             "collection_mismatch: pytest collects a test the split does not"),
    "method_added_to_a_test_class": ("from task_module import f\n\nclass TestGroup:\n    def test_a(self):\n"
                                     "        assert f('A b') == 'a-b'\n" + CASE
                                     + "\n_made = setattr(TestGroup, 'test_more', _method)\n",
                                     "collection_mismatch: pytest collects a test the split does not"),
    "test_rebound_under_its_name": (HONEST + CASE + "\n_made = globals().__setitem__('test_a', _case('Hello World', "
                                    "'hello-world'))\n", "collection_mismatch: pytest runs another function under"),
    "test_switched_off_at_import": (HONEST + "\ndef test_b():\n    assert f('Hello World') == 'hello-world'\n\n"
                                    "_made = setattr(test_b, '__test__', False)\n",
                                    "collection_mismatch: the split judges a test pytest does not collect"),
    "prints_a_collection_of_its_own": (HONEST + "import os\n\ndef _print_past_the_capture():\n"
                                       "    for fd in range(3, 64):  # pytest keeps the real stdout on one of them\n"
                                       "        try:\n            os.write(fd, b'\\ntest_task.py::test_ghost\\n')\n"
                                       "        except OSError:\n            pass\n\n"
                                       "_made = _print_past_the_capture()\n",
                                       "collection_mismatch: pytest's printed collection and its plugin's account"),
    # Another function under a test's name that pytest places at the test's own ``def``: its location follows
    # ``__wrapped__`` and ``place_as``, and a code object's first line can be rewritten (the guard keeps the split's
    # prelude, where no test is defined, quiet).
    "wrapped_under_its_name": (HONEST + "import functools\n" + CASE + "\n_made = 'test_a' in globals() and "
                               "globals().__setitem__('test_a', functools.wraps(test_a)(_case('Hello World', "
                               "'hello-world')))\n", "collection_mismatch: pytest runs another function under"),
    "placed_as_its_def": (HONEST + CASE + "\n_hidden = _case('Hello World', 'hello-world')\n"
                          "_made = 'test_a' in globals() and setattr(_hidden, 'place_as', test_a)\n"
                          "_put = 'test_a' in globals() and globals().__setitem__('test_a', _hidden)\n",
                          "collection_mismatch: pytest runs another function under"),
    "code_moved_to_its_line": (HONEST + "\ndef _hidden():\n    assert f('Hello World') == 'hello-world'\n\n"
                               "_made = 'test_a' in globals() and setattr(test_a, '__code__', _hidden.__code__"
                               ".replace(co_name='test_a', co_firstlineno=test_a.__code__.co_firstlineno))\n",
                               "collection_mismatch: pytest runs another function under"),
    "its_code_with_other_globals": (HONEST + "import types\n\ndef _strict(text):\n"
                                    "    assert f('Hello World') == 'hello-world'\n    return f(text)\n\n"
                                    "_made = 'test_a' in globals() and globals().__setitem__('test_a', "
                                    "types.FunctionType(test_a.__code__, {**globals(), 'f': _strict}))\n",
                                    "collection_mismatch: pytest runs another function under"),
    # Parameters pytest calls the test with that are not the split's: the split writes the values out as the source
    # reads them (a module constant's last assignment); pytest takes them when the decorator runs, and the very
    # objects, which module code can change later (``ids=`` keeps the ids alike).
    "parameter_name_rebound_later": (PARAMETRIZED.replace("[('A b', 'a-b'), ('X  Y', 'x-y')]", "[(X, Y)]")
                                     .replace("ids=['one', 'two']", "ids=['one']")
                                     .replace("import pytest\n", "import pytest\n\nX, Y = 'Hello World', "
                                              "'hello-world'\n") + "\nX, Y = 'A b', 'a-b'\n",
                                     "collection_mismatch: pytest calls"),
    "parameter_constant_rebound_later": (PARAMETRIZED.replace("[('A b', 'a-b'), ('X  Y', 'x-y')]", "CASES")
                                         .replace("import pytest\n", "import pytest\n\nCASES = [('Hello World', "
                                                  "'hello-world'), ('X  Y', 'x-y')]\n")
                                         + "\nCASES = [('A b', 'a-b'), ('X  Y', 'x-y')]\n",
                                         "collection_mismatch: pytest calls"),
    "parameter_constant_changed_in_place": (PARAMETRIZED.replace("[('A b', 'a-b'), ('X  Y', 'x-y')]", "CASES")
                                            .replace("import pytest\n", "import pytest\n\nCASES = [('A b', 'a-b'), "
                                                     "('X  Y', 'x-y')]\n_m = CASES.__setitem__(0, ('Hello World', "
                                                     "'hello-world'))\n"), "collection_mismatch: pytest calls"),
    "parameter_that_shows_another_value": (PARAMETRIZED.replace("[('A b', 'a-b'), ('X  Y', 'x-y')]", "CASES")
                                           .replace("import pytest\n", "import pytest\n\nclass _Shown(str):\n"
                                                    "    def __repr__(self):\n        return repr(self.shown)\n\n"
                                                    "def _shown(value, shown):\n    made = _Shown(value)\n"
                                                    "    made.shown = shown\n    return made\n\n"
                                                    "CASES = [('A b', 'a-b'), ('X  Y', 'x-y')]\n"
                                                    "_m = CASES.__setitem__(0, (_shown('Hello World', 'A b'), "
                                                    "_shown('hello-world', 'a-b')))\n"),
                                           "collection_mismatch: pytest calls"),
    "plugin_named_at_import": (HONEST + "\n_made = open('ecd_more.py', 'w').write('')\n"
                               "_named = globals().__setitem__('pytest_plugins', ['ecd_more'])\n",
                               "collection_mismatch: the collection failed"),
}


@pytest.mark.parametrize("name", sorted(TRICKS))
def test_a_module_pytest_collects_differently_is_never_judged_on_its_split(name, venv_backend, tinytext_env):
    test, reason = TRICKS[name]
    split_pytest_module(test)  # the static reading takes it: only pytest's own collection shows the difference
    right = verify_task(test, RIGHT, environment=tinytext_env, backend=venv_backend, timeout_s=60, test_timeout_s=2.0)
    assert right.judged == "inside" and right.inside_reason.startswith(reason), right
    almost = verify_task(test, ALMOST, environment=tinytext_env, backend=venv_backend, timeout_s=60, test_timeout_s=2.0)
    if name not in ("test_switched_off_at_import", "prints_a_collection_of_its_own"):  # no hidden test in those
        assert not almost.result.ok, almost


def test_a_module_that_collects_differently_under_collect_only_is_rejected(venv_backend, tinytext_env):
    """Adaptive: the hidden test exists only when pytest is not asked to ``--collect-only``. The separate collection
    then matches the split, but the run as written collects one more test than it did: rejected, for any solution."""
    test = (HONEST + "import sys\n" + CASE + "\n_made = None if '--collect-only' in sys.argv else "
            "globals().update(test_big=_case('Hello World', 'hello-world'))\n")
    right = verify_task(test, RIGHT, environment=tinytext_env, backend=venv_backend, timeout_s=60, test_timeout_s=2.0)
    assert (right.result.ok, right.result.reason) == (False, "collection_mismatch"), right
    assert "test_task.py::test_big" in right.result.detail
    almost = verify_task(test, ALMOST, environment=tinytext_env, backend=venv_backend, timeout_s=60, test_timeout_s=2.0)
    assert (almost.result.ok, almost.result.reason) == (False, "solution_fails_test"), almost  # test_big, as written


_STRICT_F = "    _real = f\n\n    def f(text):\n        assert _real('Hello World') == 'hello-world'\n        return _real(text)\n"
# Module code the split left out as a ``__main__`` block, which pytest runs: a ``!=`` guard, an ``else`` branch, or
# ``__name__`` bound by the module first. Each re-binds ``f`` to a stricter check under pytest only.
MAIN_BLOCKS = {
    "not_main_guard": HONEST + "\nif __name__ != '__main__':\n" + _STRICT_F,
    "else_of_main_guard": HONEST + "\nif __name__ == '__main__':\n    pass\nelse:\n" + _STRICT_F,
    "main_guard_after_binding_name": HONEST + "\n__name__ = '__main__'\n\nif __name__ == '__main__':\n" + _STRICT_F,
}


@pytest.mark.parametrize("name", sorted(MAIN_BLOCKS))
def test_module_code_under_a_main_guard_that_pytest_runs_is_not_left_out(name, venv_backend, tinytext_env):
    test = MAIN_BLOCKS[name]
    almost = venv_backend.run_pytest(tinytext_env, {"test_task.py": test, "task_module.py": ALMOST}, timeout_s=60)
    assert almost.tests == {"test_task.py::test_a": "failed"}  # pytest ran the block
    right = verify_task(test, RIGHT, environment=tinytext_env, backend=venv_backend, timeout_s=60, test_timeout_s=2.0)
    assert right.result.ok and (right.judged, right.inside_reason) == ("inside", "split: module_statement"), right


def test_a_main_guard_that_only_runs_the_tests_is_still_left_out(venv_backend, tinytext_env):
    """Control: the usual ways to run a module by hand split as before."""
    for tail in ("pytest.main([__file__, '-v'])\n", "import sys\n    sys.exit(pytest.main())\n", "unittest.main()\n",
                 "test_a()\n    print('all passed')\n"):  # fmt: skip
        test = "import pytest\nimport unittest\n" + HONEST + "\nif __name__ == '__main__':\n    " + tail
        assert split_pytest_module(test).names == ("test_task.py::test_a",), tail
    test = "import pytest\n" + HONEST + "\nif __name__ == '__main__':\n    pytest.main([__file__])\n"
    right = verify_task(test, RIGHT, environment=tinytext_env, backend=venv_backend, timeout_s=60)
    assert right.result.ok and right.judged == "outside", right


def test_a_name_imported_from_task_module_and_bound_by_the_module_too_is_not_split(venv_backend, tinytext_env,
                                                                                   exported, reward):  # fmt: skip
    """``def f`` (a helper that calls the solution's ``g``), then ``from task_module import f``: pytest tests the
    solution's ``f``; the split dropped the import, so its ``f`` was the helper, and a solution whose ``g`` is right
    and ``f`` wrong was rewarded 1 by the folder judged outside. A name both imported and bound is not split."""
    test = ("from task_module import g\n\ndef f(text):\n    return g(text)\n\nfrom task_module import f\n\n"
            "def test_a():\n    assert f('A b') == 'a-b'\n    assert f('Hello World') == 'hello-world'\n")  # fmt: skip
    right, almost = RIGHT + "\ng = f\n", "import tinytext\n\ng = tinytext.slugify\n\n" + ALMOST
    ran = venv_backend.run_pytest(tinytext_env, {"test_task.py": test, "task_module.py": almost}, timeout_s=60)
    assert ran.tests == {"test_task.py::test_a": "failed"}
    verified = verify_task(test, right, environment=tinytext_env, backend=venv_backend, timeout_s=60)
    assert verified.result.ok and (verified.judged, verified.inside_reason) == (
        "inside", "split: rebinds_task_module_name"), verified  # fmt: skip
    folder = exported(test, right, "inside")
    assert (reward(folder, right), reward(folder, almost)) == ("1", "0")


def test_a_module_that_makes_pytest_run_its_tests_in_another_order_is_not_judged_on_its_split(
        venv_backend, tinytext_env, exported, reward):  # fmt: skip
    """pytest runs a module's tests in the order their names entered its namespace, the split in the order of the
    ``def`` statements; a name put there first at import (``setdefault``) makes pytest run ``test_b`` first. A
    solution that answers right only when ``'A b'`` is its first question passes the split and fails pytest."""
    test = ("from task_module import f\n\n_first = globals().setdefault('test_b', None)\n\n"
            "def test_a():\n    assert f('A b') == 'a-b'\n\ndef test_b():\n    assert f('Hello World') == 'hello-world'\n")
    first = ("import tinytext\n\n_asked = []\n\ndef f(text):\n    _asked.append(text)\n"
             "    return tinytext.slugify(text) if _asked[0] == 'A b' else 'wrong'\n")  # fmt: skip
    ran = venv_backend.run_pytest(tinytext_env, {"test_task.py": test, "task_module.py": first}, timeout_s=60)
    assert list(ran.tests) == ["test_task.py::test_b", "test_task.py::test_a"] and "failed" in ran.tests.values()
    right = verify_task(test, RIGHT, environment=tinytext_env, backend=venv_backend, timeout_s=60, test_timeout_s=2.0)
    assert right.result.ok and right.judged == "inside", right
    assert right.inside_reason.startswith("collection_mismatch: pytest runs the tests in another order"), right
    assert reward(exported(test, RIGHT, "inside"), first) == "0"


def test_the_split_reads_the_module_as_python_decodes_the_published_file(venv_backend, tinytext_env, exported,
                                                                         reward):  # fmt: skip
    """A coding cookie: pytest imports the file (written as UTF-8) decoded as Latin-1, so ``'é'`` there is two
    characters and the extra check runs; the split read the text as given, skipped it and rewarded the almost-right
    solution. Now the split parses the same bytes, and judges what pytest runs."""
    test = ("# -*- coding: latin-1 -*-\nfrom task_module import f\n\ndef test_a():\n    assert f('A b') == 'a-b'\n"
            "    if len('\u00e9') == 2:\n        assert f('Hello World') == 'hello-world'\n")  # fmt: skip
    ran = venv_backend.run_pytest(tinytext_env, {"test_task.py": test, "task_module.py": ALMOST}, timeout_s=60)
    assert ran.tests == {"test_task.py::test_a": "failed"}
    right = verify_task(test, RIGHT, environment=tinytext_env, backend=venv_backend, timeout_s=60, test_timeout_s=2.0)
    assert right.result.ok and right.judged == "outside", right
    assert (reward(exported(test, RIGHT, "outside"), ALMOST)) == "0"
    assert "len('\u00c3\u00a9') == 2" in split_pytest_module(test).tests[0]
    assert not verify_task(test, ALMOST, environment=tinytext_env, backend=venv_backend, timeout_s=60).result.ok


# Module code that makes pytest's ``task_module`` (or the name the test imports from it) something other than the
# solution the split calls: a module of its own put first on ``sys.path``, or the solution's ``f`` replaced before the
# test imports it. The split drops the import and calls the program's ``f``; pytest calls the stricter wrapper.
_WRAPPER = ("import importlib.util, os\nspec = importlib.util.spec_from_file_location('ecd_real', "
            "os.path.join(os.getcwd(), 'task' + '_module.py'))\nreal = importlib.util.module_from_spec(spec)\n"
            "spec.loader.exec_module(real)\n\ndef f(text):\n    assert real.f('Hello World') == 'hello-world'\n"
            "    return real.f(text)\n")  # fmt: skip
REDIRECTED = {
    "shadowed_on_sys_path": ("import os\nimport sys\n\nWRAPPER = " + repr(_WRAPPER) + "\n\ndef _shadow():\n"
                             "    try:\n        os.makedirs('shadow', exist_ok=True)\n"
                             "        with open(os.path.join('shadow', 'task' + '_module.py'), 'w') as out:\n"
                             "            out.write(WRAPPER)\n        sys.path.insert(0, os.path.abspath('shadow'))\n"
                             "    except OSError:\n        pass\n\n_made = _shadow()\n" + HONEST),
    # Telling pytest's process apart (the tests exist only there) no longer helps: the name is not the solution's.
    "module_rebinds_a_name_when_its_tests_exist": (HONEST + "\ndef _strict(text):\n"
                                                   "    assert _real('Hello World') == 'hello-world'\n"
                                                   "    return _real(text)\n\n_real = f\n"
                                                   "_made = 'test_a' in globals() and globals().__setitem__('f', "
                                                   "_strict)\n"),
    "solution_name_replaced_first": ("def _wrap():\n    try:\n        module = __import__('task' + '_module')\n"
                                     "    except ImportError:\n        return None\n    real = module.f\n\n"
                                     "    def strict(text):\n        assert real('Hello World') == 'hello-world'\n"
                                     "        return real(text)\n    module.f = strict\n\n_made = _wrap()\n"
                                     + HONEST),
}


@pytest.mark.parametrize("name", sorted(REDIRECTED))
def test_module_code_that_gives_pytest_another_task_module_is_not_judged_on_its_split(name, venv_backend,
                                                                                     tinytext_env, tmp_path):
    import subprocess

    test = REDIRECTED[name]
    folder = tmp_path / name
    folder.mkdir()
    (folder / "test_task.py").write_text(test)
    (folder / "task_module.py").write_text(ALMOST)
    plain = subprocess.run([tinytext_env.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_task.py"],
                           cwd=folder, capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert plain.returncode == 1 and "1 failed" in plain.stdout, plain.stdout  # the published test fails it
    right = verify_task(test, RIGHT, environment=tinytext_env, backend=venv_backend, timeout_s=60, test_timeout_s=2.0)
    assert right.result.ok and right.judged == "inside", right
    assert right.inside_reason.startswith("collection_mismatch: pytest runs another function under"), right


def test_a_module_whose_parameters_change_only_when_it_runs_is_rejected(venv_backend, tinytext_env):
    """Adaptive, on the values: under ``--collect-only`` the parameters are the split's, when pytest runs the module
    they are others (same ids). The run as written must have collected the same tests with the same parameters."""
    test = PARAMETRIZED.replace("[('A b', 'a-b'), ('X  Y', 'x-y')]", "CASES").replace(
        "import pytest\n", "import pytest\nimport sys\n\nCASES = [('A b', 'a-b'), ('X  Y', 'x-y')]\n_m = '--collect-only' in "
        "sys.argv or CASES.__setitem__(0, ('Hello World', 'hello-world'))\n")  # fmt: skip
    right = verify_task(test, RIGHT, environment=tinytext_env, backend=venv_backend, timeout_s=60, test_timeout_s=2.0)
    assert (right.result.ok, right.result.reason) == (False, "collection_mismatch"), right
    assert "parameters" in right.result.detail


def test_the_split_alone_would_have_rewarded_the_wrong_solution(venv_backend, tinytext_env):
    """The attack as reported: the split of the module judges only ``test_a``, which the almost-right solution passes;
    pytest also runs ``test_big``, which it fails."""
    from evolvecoder_datasets.execution import shared_sandbox

    test = TRICKS["callable_made_at_import"][0]
    suite = split_pytest_module(test)
    report = shared_sandbox(venv_backend.sandbox_settings(tinytext_env), timeout_s=5.0).run(
        suite.program(ALMOST), list(suite.tests))  # fmt: skip
    assert suite.names == ("test_task.py::test_a",) and report.statuses == ["pass"]
    run = venv_backend.run_pytest(tinytext_env, {"test_task.py": test, "task_module.py": ALMOST}, timeout_s=60)
    assert run.tests == {"test_task.py::test_a": "passed", "test_task.py::test_big": "failed"}


# The reported shape itself, which the split's static reading now refuses (judged inside: "split: binds_test_name").
REPORTED = HONEST + CASE + "\ntest_big = _case('Hello World', 'hello-world')\n"


@pytest.mark.parametrize("name", ["callable_made_at_import", "class_made_at_import", "method_added_to_a_test_class",
                                  "test_rebound_under_its_name", "wrapped_under_its_name", "placed_as_its_def",
                                  "code_moved_to_its_line", "its_code_with_other_globals",
                                  "parameter_name_rebound_later", "parameter_constant_changed_in_place",
                                  "reported"])  # fmt: skip
def test_the_exported_verifier_runs_what_pytest_collects(name, exported, reward):
    """Judged inside, the task's folder (exported only when asked) verifies with pytest, which runs the hidden test."""
    folder = exported(REPORTED if name == "reported" else TRICKS[name][0], RIGHT, "inside")
    assert (reward(folder, RIGHT), reward(folder, ALMOST)) == ("1", "0")


def test_the_reported_module_is_judged_inside_and_verifies_no_almost_right_solution(venv_backend, tinytext_env):
    right = verify_task(REPORTED, RIGHT, environment=tinytext_env, backend=venv_backend, timeout_s=60)
    assert right.result.ok and (right.judged, right.inside_reason) == ("inside", "split: binds_test_name"), right
    almost = verify_task(REPORTED, ALMOST, environment=tinytext_env, backend=venv_backend, timeout_s=60)
    assert (almost.result.ok, almost.stage_b.tests.get("test_task.py::test_big")) == (False, "failed"), almost


def test_the_honest_control_is_judged_outside_and_rewarded_by_the_solution(venv_backend, tinytext_env, exported,
                                                                           reward):  # fmt: skip
    right = verify_task(HONEST, RIGHT, environment=tinytext_env, backend=venv_backend, timeout_s=60)
    assert right.result.ok and right.judged == "outside" and right.inside_reason == ""
    assert right.collection.collected == (("test_task.py::test_a", 3),)
    assert not verify_task(HONEST, "def f(text):\n    return 'wrong'\n", environment=tinytext_env,
                           backend=venv_backend, timeout_s=60).result.ok  # fmt: skip
    folder = exported(HONEST, RIGHT, "outside")
    assert (reward(folder, RIGHT), reward(folder, "def f(text):\n    return 'wrong'\n")) == ("1", "0")


def test_a_parametrized_honest_control_is_judged_outside(venv_backend, tinytext_env, exported, reward):
    """Written-out parameters, read by pytest as the split wrote them (the collection compares them value for value):
    judged outside, and the exported folder rewards the right solution only."""
    right = verify_task(PARAMETRIZED, RIGHT, environment=tinytext_env, backend=venv_backend, timeout_s=60)
    assert right.result.ok and right.judged == "outside" and right.inside_reason == "", right
    assert dict(right.collection.params) == {"test_task.py::test_a[one]": "{'t': 'A b', 's': 'a-b'}",
                                             "test_task.py::test_a[two]": "{'t': 'X  Y', 's': 'x-y'}"}
    folder = exported(PARAMETRIZED, RIGHT, "outside")
    assert (reward(folder, RIGHT), reward(folder, "def f(text):\n    return 'wrong'\n")) == ("1", "0")


def test_an_exported_split_verifier_refuses_a_test_edited_after_verification(exported, reward):
    """``judge.json`` records the test ids that were verified against pytest's collection; a test file that splits
    into other tests is not the verified one, and rewards nothing."""
    folder = exported(HONEST, RIGHT, "outside")
    path = folder / "tests" / "test_task.py"
    path.write_text(path.read_text() + "\ndef test_extra():\n    assert f('A b') == 'a-b'\n")
    assert reward(folder, RIGHT) == "0"


def test_collection_output_is_read_with_bounds_and_compared_not_trusted(tmp_path):
    log = tmp_path / "log.txt"
    flood = "".join(f"test_task.py::test_{i}\n" for i in range(MAX_LISTING_LINES + 500)) + "x" * 5000 + "\n"
    log.write_text("noise\n" + "test_task.py::" + "y" * 3000 + "\n" + flood)
    listed = _listed_ids(log, "test_task.py")
    assert len(listed) < MAX_LISTING_LINES and all(len(line) <= 2000 for line in listed)
    suite = split_pytest_module(HONEST)
    account = (("test_task.py::test_a", 3),)
    assert collection_mismatch(PytestRun("passed", collected=account, listed=("test_task.py::test_a",)), suite) is None
    printed_more = PytestRun("passed", collected=account, listed=("test_task.py::test_a", "test_task.py::test_z"))
    assert collection_mismatch(printed_more, suite) == "pytest's printed collection and its plugin's account differ"
    tampered = PytestRun("failed", collected=account, tampered=("pytest.fail changed",))
    assert collection_mismatch(tampered, suite) == "the collection failed: ['pytest.fail changed']"
    moved = PytestRun("passed", collected=(("test_task.py::test_a", 9),), listed=("test_task.py::test_a",))
    assert collection_mismatch(moved, suite).startswith("pytest runs another function under")


# The same function, code, globals, parameters and solution names under pytest and in the split, but code that
# tells the two apart (pytest sets PYTEST_CURRENT_TEST during a test), or that changes what a later test reads.
TELLS_PYTEST_APART = {
    "test_reads_pytests_environment": ("import os\nfrom task_module import f\n\ndef test_a():\n"
                                       "    assert f('A b') == 'a-b'\n    if 'PYTEST_CURRENT_TEST' in os.environ:\n"
                                       "        assert f('Hello World') == 'hello-world'\n"),
    # No telling needed: pytest runs a module's tests on one module, so what a test changes in it (a list a later
    # test reads) the later test sees; the split evaluates each test's module code afresh.
    "an_earlier_test_changes_what_a_later_one_reads": ("from task_module import f\n\nDATA = [('X  Y', 'x-y')]\n\n"
                                                       "def test_a():\n    DATA.append(('Hello World', 'hello-world'))"
                                                       "\n    assert f('A b') == 'a-b'\n\ndef test_b():\n"
                                                       "    for t, s in DATA:\n        assert f(t) == s\n"),
}


@pytest.mark.xfail(strict=True, reason="open: the split runs each test's own code afresh in the judge's process; "
                                       "code that tells that process from pytest's, or a test that changes what a "
                                       "later one reads, checks more under pytest (docs/threat-model.md, code_instruct)")
@pytest.mark.parametrize("name", sorted(TELLS_PYTEST_APART))
def test_a_test_that_tells_pytest_from_the_judge_is_not_rewarded_on_the_weaker_split(name, venv_backend, tinytext_env,
                                                                                     exported, reward):  # fmt: skip
    test = TELLS_PYTEST_APART[name]
    almost = venv_backend.run_pytest(tinytext_env, {"test_task.py": test, "task_module.py": ALMOST}, timeout_s=60)
    assert "failed" in almost.tests.values()  # the published test, run by pytest, fails it
    right = verify_task(test, RIGHT, environment=tinytext_env, backend=venv_backend, timeout_s=60, test_timeout_s=2.0)
    assert right.result.ok
    if right.judged == "outside":
        assert reward(exported(test, RIGHT, "outside"), ALMOST) == "0"
