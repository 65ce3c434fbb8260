"""The split of a pytest module into planned asserts (``code_instruct/split.py``): which shapes it takes, what it
makes of them, and that the split form and pytest agree on real tasks."""

from __future__ import annotations

import glob

import pytest

from evolvecoder_datasets.code_instruct.split import NotSplittable, split_pytest_module
from evolvecoder_datasets.prompts import code_instruct as prompt

from .conftest import ANSWERS

BODY = "    assert f(1) == 2\n"


def test_each_test_function_is_one_test_after_the_modules_own_statements():
    suite = split_pytest_module(
        '"""Doc."""\nimport math\nfrom collections import Counter\nfrom task_module import f, g as h\n'
        "LIMIT = 3\n\ndef helper(x):\n    return x + 1\n\n"
        "def test_one():\n    \"\"\"Its docstring.\"\"\"\n    assert f(1) == helper(1)\n\n"
        "def test_two():\n    assert h(LIMIT) == math.floor(3.5)\n\n"
        "if __name__ == '__main__':\n    test_one()\n"
    )
    assert suite.names == ("test_task.py::test_one", "test_task.py::test_two")
    prelude = "import math\nfrom collections import Counter\nLIMIT = 3\n\ndef helper(x):\n    return x + 1\n"
    assert suite.tests == (prelude + "assert f(1) == helper(1)",
                           prelude + "assert _ecd_as_h(LIMIT) == math.floor(3.5)")  # fmt: skip
    assert suite.program("def f(x):\n    return x\n") == "def f(x):\n    return x\n_ecd_as_h = g\n"


PARAMETRIZED = (
    "import pytest\nfrom task_module import f\n\nCASES = [(1, 2), (2, 3), (-1, 0)]\n\n"
    "@pytest.mark.parametrize('x', [1, 2])\n@pytest.mark.parametrize('y,z', [('a b', None), (1.5, True)])\n"
    "def test_grid(x, y, z):\n    assert f(x) > 0\n\n"
    "@pytest.mark.parametrize('v', [[1], {'a': 1}, '\u00e9', '', (1, 2), 1, 1])\ndef test_ids(v):\n    assert f(v)\n\n"
    "@pytest.mark.parametrize('n,out', CASES, ids=['one', 'two', None])\ndef test_named(n, out):\n"
    "    assert f(n) == out\n\n"
    "class TestGroup:\n    \"\"\"Doc.\"\"\"\n\n    def test_plain(self):\n        assert f(1) == 2\n\n"
    "    @pytest.mark.parametrize('k', [3, 4])\n    def test_param(self, k):\n        assert f(k) == k + 1\n"
)


def test_parametrize_and_plain_test_classes_give_pytests_own_ids(venv_backend, tinytext_env, tmp_path):
    """One test per parameter set, the parameters bound before the body; ids as pytest collects them (checked
    against pytest's own ``--collect-only`` in the repository's environment)."""
    import subprocess

    suite = split_pytest_module(PARAMETRIZED)
    (tmp_path / "test_task.py").write_text(PARAMETRIZED)
    (tmp_path / "task_module.py").write_text("def f(x):\n    return x\n")
    collected = subprocess.run([tinytext_env.python, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                                "test_task.py"], cwd=tmp_path, capture_output=True, text=True, check=True)  # fmt: skip
    assert list(suite.names) == [line for line in collected.stdout.splitlines() if "::" in line]
    assert suite.tests[0].endswith("y = 'a b'\nz = None\nx = 1\nassert f(x) > 0")
    named = suite.names.index("test_task.py::test_named[one]")
    assert suite.tests[named].endswith("n = 1\nout = 2\nassert f(n) == out")
    assert suite.tests[-1].endswith("k = 4\nassert f(k) == k + 1")


def test_the_task_module_object_reads_as_the_programs_names():
    suite = split_pytest_module("import task_module as tm\n\ndef test_a():\n    assert tm.f(tm.K) == 2\n")
    assert suite.tests == ("assert f(K) == 2",) and suite.program_suffix == ""


@pytest.mark.parametrize(
    ("reason", "test"),
    [
        ("fixture", "from task_module import f\n\ndef test_a(tmp_path):\n" + BODY),
        ("fixture", "import pytest\nfrom task_module import f\n\n@pytest.fixture\ndef n():\n    return 1\n\n"
                    "def test_a():\n" + BODY),
        ("decorated_test", "import pytest\nfrom task_module import f\n\n@pytest.mark.slow\ndef test_a():\n" + BODY),
        ("decorated_test", "import pytest\n\n@pytest.mark.parametrize('x', [pytest.param(1, marks=pytest.mark.slow)])"
                           "\ndef test_a(x):\n" + BODY),
        ("decorated_test", "import pytest\n\n@pytest.mark.parametrize('x', list(range(3)))\ndef test_a(x):\n" + BODY),
        ("decorated_test", "import pytest\n\n@pytest.mark.parametrize('x,y', [(1, 2), 3])\ndef test_a(x, y):\n" + BODY),
        ("decorated_test", "import pytest\n\n@pytest.mark.parametrize('x', [1], indirect=True)\ndef test_a(x):\n" + BODY),
        ("fixture", "import pytest\n\n@pytest.mark.parametrize('x', [1])\ndef test_a(x, tmp_path):\n" + BODY),
        ("test_class", "class TestF:\n    def setup_method(self):\n        pass\n\n    def test_a(self):\n" + "    " + BODY),
        ("test_class", "class TestF(Base):\n    def test_a(self):\n" + "    " + BODY),
        ("uses_self", "class TestF:\n    def test_a(self):\n        assert self.f(1) == 2\n"),
        ("pytestmark", "import pytest\npytestmark = pytest.mark.slow\n\ndef test_a():\n" + BODY),
        ("pytest_hook", "def setup_module(module):\n    pass\n\ndef test_a():\n" + BODY),
        ("async_test", "async def test_a():\n" + BODY),
        ("test_control_flow", "from task_module import f\n\ndef test_a():\n    if f(0):\n        return\n" + BODY),
        ("test_control_flow", "def test_a():\n    global X\n" + BODY),
        ("task_module_object", "import task_module\n\ndef test_a():\n    assert 'f' in dir(task_module)\n"),
        ("task_module_object", "import task_module\n\ndef test_a():\n    task_module.K = 3\n" + BODY),
        ("task_module_by_name", "import pytest\n\ndef test_a():\n    f = pytest.importorskip('task_module').f\n"
                                + BODY),
        ("task_module_submodule", "from task_module.sub import f\n\ndef test_a():\n" + BODY),
        ("relative_import", "from . import helpers\n\ndef test_a():\n" + BODY),
        ("module_statement", "try:\n    from task_module import f\nexcept ImportError:\n    f = None\n\n"
                             "def test_a():\n" + BODY),
        ("module_statement", "import sys\nsys.path.insert(0, '.')\n\ndef test_a():\n" + BODY),
        ("shadows_builtin", "from task_module import sorted\n\ndef test_a():\n    assert sorted([2, 1]) == [1]\n"),
        ("duplicate_test_name", "def test_a():\n" + BODY + "\ndef test_a():\n" + BODY),
        ("no_test_functions", "from task_module import f\n\nX = f\n"),
        ("syntax_error", "def test_a(:\n"),
        ("too_deep", "from task_module import f\n\ndef test_a():\n    assert f(1) == " + "+".join(["1"] * 2000) + "\n"),
    ],
)
def test_shapes_only_pytest_can_judge_are_refused_with_their_reason(reason, test):
    with pytest.raises(NotSplittable) as info:
        split_pytest_module(test)
    assert info.value.reason == reason


# Modules whose module-level code makes pytest collect (or drop) a test the split would not see: the static reading
# refuses each, so none of them is judged by a split that leaves out what pytest runs. ``extra`` is the pytest id
# of the test only pytest would run, ``gone`` the one only the split would (both checked against pytest itself).
PLAIN = "from task_module import f\n\ndef test_a():\n    assert f(1) == 1\n\n"
COLLECTION_TRICKS = {
    "callable_made_at_import": ("binds_test_name", PLAIN + "def _case(a, b):\n    def check():\n"
                                "        assert f(a) == b\n    return check\n\ntest_big = _case(10, 20)\n",
                                "test_big", None),
    "test_rebound_later": ("binds_test_name", PLAIN + "def _other():\n    assert f(2) == 3\n\ntest_a = _other\n",
                           None, None),
    "class_made_at_import": ("binds_test_name", PLAIN + "TestMore = type('TestMore', (), {'test_m': "
                             "lambda self: None})\n", "TestMore::test_m", None),
    "plugins_of_the_test_module": ("binds_pytest_name", "pytest_plugins = []\n" + PLAIN, None, None),
    "generated_parameters": ("binds_pytest_name", PLAIN + "def _gen(metafunc):\n    pass\n\n"
                             "pytest_generate_tests = _gen\n", None, None),
    "collection_switch": ("module_assignment_target", PLAIN + "test_a.__test__ = False\n", None, "test_a"),
    "walrus_at_import": ("binds_test_name", PLAIN + "_made = (test_w := lambda: None)\n", "test_w", None),
    "imported_test_function": ("binds_test_name", "from os.path import join as test_join\n" + PLAIN, "test_join",
                               None),
    "star_import": ("star_import", "from task_module import *\n\ndef test_a():\n    assert f(1) == 1\n", None,
                    None),
    "helper_binding_a_global": ("binds_test_name", PLAIN + "def _make():\n    global test_g\n"
                                "    def test_g():\n        assert f(5) == 6\n\n_made = _make()\n", "test_g", None),
    "pytest_rebound": ("rebinds_pytest", "import unittest.mock as pytest\n" + PLAIN, None, None),
}


@pytest.mark.parametrize("name", sorted(COLLECTION_TRICKS))
def test_module_code_that_changes_what_pytest_collects_is_refused(name, tinytext_env, tmp_path):
    import subprocess

    reason, test, extra, gone = COLLECTION_TRICKS[name]
    with pytest.raises(NotSplittable) as info:
        split_pytest_module(test)
    assert info.value.reason == reason
    if extra is None and gone is None:
        return
    (tmp_path / "test_task.py").write_text(test)
    (tmp_path / "task_module.py").write_text("def f(x):\n    return x\n")
    collected = subprocess.run([tinytext_env.python, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                                "test_task.py"], cwd=tmp_path, capture_output=True, text=True, check=False)  # fmt: skip
    ids = [line.split("::", 1)[1] for line in collected.stdout.splitlines() if line.startswith("test_task.py::")]
    assert (extra is None or extra in ids) and (gone is None or gone not in ids), (name, collected.stdout)


def test_data_bound_to_a_test_like_name_is_still_set_up():
    """``test_cases = [...]`` is a list, never a test pytest collects: it stays part of the module's set-up."""
    suite = split_pytest_module("from task_module import f\n\ntest_cases = [(1, 2)]\nTestData = {'a': 1}\n\n"
                                "def test_a():\n    for x, y in test_cases:\n        assert f(x) == y\n")
    assert suite.names == ("test_task.py::test_a",) and suite.lines == (6,)


def _scripted(repo: str = "*"):
    """``(file name, parsed answer, NotSplittable or None)`` for each scripted answer of ``repo`` that parses."""
    for path in sorted(glob.glob(str(ANSWERS / repo / "*.txt"))):
        try:
            parsed = prompt.parse(open(path, encoding="utf-8").read())
        except Exception:  # noqa: BLE001 - the planted malformed answers
            continue
        try:
            split_pytest_module(parsed.test)
            refusal = None
        except NotSplittable as err:
            refusal = err
        yield path.rsplit("/", 1)[-1], parsed, refusal


TINYTEXT = {name[:-4]: parsed for name, parsed, refusal in _scripted("tinytext") if refusal is None}


def test_every_scripted_answer_splits_but_those_written_to_dodge_stage_a():
    """The hand-written answers of every fixture library (37 that parse): only the two whose module imports
    ``task_module`` under ``try`` (so that pytest collects them without it) stay pytest's."""
    answers = list(_scripted())
    refused = [(name, refusal.reason) for name, _, refusal in answers if refusal is not None]
    assert refused == [("fallback_without_oracle.txt", "module_statement"),
                       ("passes_without_oracle.txt", "module_statement")]  # fmt: skip
    assert sum(refusal is None for *_, refusal in answers) == 37


@pytest.mark.parametrize("name", sorted(TINYTEXT))
def test_the_split_form_and_pytest_agree_on_each_real_task(name, venv_backend, tinytext_env):
    """The reference and a wrong variant of it (each public function returns None): the sandbox's verdict on the
    split tests, in the repository's environment, and pytest's verdict on the module as written are the same."""
    from evolvecoder_datasets.execution import shared_sandbox

    parsed = TINYTEXT[name]
    suite = split_pytest_module(parsed.test)
    sandbox = shared_sandbox(venv_backend.sandbox_settings(tinytext_env), timeout_s=5.0, max_consecutive_timeouts=None)
    broken = parsed.solution + "\n\n" + "".join(
        f"def {n}(*args, **kwargs):\n    return None\n" for n in _defined_functions(parsed.solution))
    for solution in (parsed.solution, broken):
        report = sandbox.run(suite.program(solution), list(suite.tests))
        as_written = venv_backend.run_pytest(tinytext_env, {"test_task.py": parsed.test, "task_module.py": solution},
                                             timeout_s=60)  # fmt: skip
        assert (report.statuses == ["pass"] * len(suite.tests)) == as_written.passed, (name, report, as_written)
        assert report.judged == ["outside"] * len(suite.tests)
        if solution is broken and "task_module" in parsed.test:  # a real negative (no_task_import tests itself)
            assert not as_written.passed


def _defined_functions(source):
    import ast

    return [n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]


def test_a_solutions_state_carries_between_test_functions_as_in_pytest(venv_backend, tinytext_env):
    """pytest imports task_module once for the whole module, so what one test function leaves in it is there for
    the next; the split tests run in order on one loaded solution too. A test that counts calls across functions
    verifies; a solution right only on its first call fails both ways."""
    from evolvecoder_datasets.code_instruct import verify_task

    test = ("import tinytext\nfrom task_module import calls\n\n"
            "def test_first():\n    assert calls() == 1\n\ndef test_second():\n    assert calls() == 2\n")
    counting = "import tinytext\n\n_N = [0]\n\ndef calls():\n    _N[0] += 1\n    return _N[0]\n"
    verification = verify_task(test, counting, environment=tinytext_env, backend=venv_backend, timeout_s=60)
    assert verification.result.ok and verification.judged == "outside", verification
    first_only = "import tinytext\n\n_N = [0]\n\ndef calls():\n    _N[0] += 1\n    return 1\n"
    assert not verify_task(test, first_only, environment=tinytext_env, backend=venv_backend, timeout_s=60).result.ok
    assert not venv_backend.run_pytest(tinytext_env, {"test_task.py": test, "task_module.py": first_only},
                                       timeout_s=60).passed  # fmt: skip


# A name the test reaches the solution by, read in the split as another one. pytest binds ``h`` to the solution's
# ``g`` in the test module and ``tm.f`` reads the solution's ``f``; the split appended ``h = g`` to the solution
# (re-binding the solution's own ``h``, which its ``f`` calls) and read ``tm.f`` as ``f`` (the test's own ``f`` where
# it binds one). Each wrong solution fails pytest and passed the split, in both modes.
ALIASED = {
    "alias_rebinds_the_solutions_name": (
        "from task_module import f, g as h\n\ndef test_a():\n    assert f(2) == 4\n    assert h(3) == 9\n",
        "def h(x):\n    return 0\n\ndef g(x):\n    return x * x\n\ndef f(x):\n    return h(x)\n"),
    "module_attribute_read_as_the_tests_own_name": (
        ("import task_module as tm\n\ndef test_a():\n    f = lambda x: x * x\n    assert tm.f(3) == f(3)\n"
         "    assert tm.g(3) == 9\n"),
        "def f(x):\n    return 0\n\ndef g(x):\n    return x * x\n"),
}
SQUARES = "def f(x):\n    return x * x\n\ndef g(x):\n    return x * x\n\ndef h(x):\n    return x * x\n"


@pytest.mark.parametrize("mode", ["fast", "isolated"])
@pytest.mark.parametrize("name", sorted(ALIASED))
def test_the_program_names_a_test_reaches_are_the_ones_pytest_gives_it(name, mode):
    import sys
    import types

    from evolvecoder_datasets.code_instruct.split import split_settings
    from evolvecoder_datasets.execution import Sandbox

    test, wrong = ALIASED[name]
    module = types.ModuleType("task_module")
    exec(compile(wrong, "task_module.py", "exec"), module.__dict__)  # noqa: S102 - our own fixed text
    sys.modules["task_module"] = module
    try:  # what pytest does: import the test module beside the solution, call the test
        namespace: dict = {}
        exec(compile(test, "test_task.py", "exec"), namespace)  # noqa: S102 - our own fixed text
        with pytest.raises(AssertionError):
            namespace["test_a"]()
    finally:
        del sys.modules["task_module"]
    try:
        suite = split_pytest_module(test)
    except NotSplittable as err:  # judged inside: pytest decides, and fails it
        assert err.reason == "rebinds_task_module_name", err
        return
    with Sandbox(split_settings(mode=mode)) as sb:
        assert sb.run(suite.program(SQUARES), list(suite.tests)).statuses == ["pass"]
        assert sb.run(suite.program(wrong), list(suite.tests)).statuses != ["pass"]
