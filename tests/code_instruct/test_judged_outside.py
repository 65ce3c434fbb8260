"""code_instruct verdicts are decided outside the solution's process where the test's shape allows (issue 23).

pytest runs a test in the interpreter that imported ``task_module.py``, so a solution there reaches the verdict
plugin, patches its globals or writes its file with the nonce it reads, and a wrong solution is verified. A plain
pytest module is therefore split into planned asserts (:mod:`evolvecoder_datasets.code_instruct.split`) and judged
by the sandbox, whose programs import the repository's virtualenv (``SandboxSettings.python_env``): the solution's
calls run in the sandbox, the comparisons in the judge. These tests run wrong solutions of every class we know
(forging pytest's verdict, lying objects, patching the modules and builtins the expected side uses, reading the
test at load time, dying, hanging, raising what pytest treats specially) against real repository tasks, each next
to the right solution as a control, and check that none is verified. A test whose shape cannot be split (a fixture,
a mark) is still verified by pytest: there a solution's lying objects work, which is why such tasks say
``judged: inside`` and are left out of the exports unless asked (the verdict channel itself is hardened: see
``test_verdict_forgery.py``).
"""

from __future__ import annotations

import dataclasses

import pytest

from evolvecoder_datasets.code_instruct import CodeInstructConfig, Task, tasks_to_dataset, verify_task
from evolvecoder_datasets.code_instruct.export import exportable, task_row, task_toml

ASSERTS = "    assert f('A b') == 'a-b'\n    assert f('') == ''\n    assert f('X  Y') == 'x-y'\n"
TEST = "from task_module import f\n\ndef test_a():\n" + ASSERTS
RIGHT = "import tinytext\n\ndef f(text):\n    return tinytext.slugify(text)\n"
# The expected side computed with the repository itself, and with the standard library.
TEST_BY_REPO = (
    "import json\nimport tinytext\nimport task_module as tm\n\n"
    "WORDS = ['A b', 'Hello World', 'x']\n\n"
    "def test_against_the_repository():\n"
    "    for w in WORDS:\n"
    "        assert tm.f(w) == tinytext.slugify(w)\n\n"
    "def test_against_json():\n"
    "    out = tm.f('A b')\n"
    "    assert json.dumps(out) == json.dumps('a-b')\n"
)

# Parametrized and in a plain test class: one split test per parameter set.
TEST_PARAMETRIZED = (
    "import pytest\nfrom task_module import f\n\n"
    "@pytest.mark.parametrize('text,slug', [('A b', 'a-b'), ('', ''), ('X  Y', 'x-y')])\n"
    "def test_slugs(text, slug):\n    assert f(text) == slug\n\n"
    "class TestMore:\n    def test_hello(self):\n        assert f('Hello World') == 'hello-world'\n"
)
SHAPES = {"literal_expected": TEST, "expected_from_repo_and_json": TEST_BY_REPO, "parametrized": TEST_PARAMETRIZED}

FORGE_PLUGIN = (
    "import sys\n"
    "_plugin = sys.modules.get('ecd_verdict')\n"
    "if _plugin is not None:\n"
    "    _plugin._record = lambda nodeid, outcome: _plugin._RESULTS.__setitem__(nodeid, 'passed')\n"
)
FORGE_FILE = (
    "import atexit, json, os, sys\n"
    "_plugin = sys.modules.get('ecd_verdict')\n"
    "def _forge():\n"
    "    tests = {'test_task.py::test_a': 'passed', 'test_task.py::test_against_the_repository': 'passed',\n"
    "             'test_task.py::test_against_json': 'passed'}\n"
    "    data = {'nonce': _plugin._NONCE, 'exitstatus': 0, 'collected': len(tests), 'collect_errors': [],\n"
    "            'tests': tests, 'missing_modules': []}\n"
    "    with open(_plugin._PATH, 'w') as fh:\n"
    "        json.dump(data, fh)\n"
    "if _plugin is not None:\n"
    "    atexit.register(_forge)  # after the plugin wrote the real verdict\n"
)
WRONG = "def f(text):\n    return 'wrong'\n"
# Wrong solutions, each of a different class; every one is verified by a pytest run that shares its interpreter
# (where the class is a forgery) or is simply wrong, and none may be verified outside.
ATTACKS = {
    "patches_the_plugins_record": FORGE_PLUGIN + WRONG,
    "writes_the_verdict_file_with_the_nonce_it_reads": FORGE_FILE + WRONG,
    "returns_an_object_equal_to_everything": (
        "class Yes(str):\n    def __eq__(self, other):\n        return True\n    __hash__ = str.__hash__\n"
        "    def __ne__(self, other):\n        return False\n"
        "def f(text):\n    return Yes('wrong')\n"),
    "patches_the_repository_the_expected_side_uses": (
        "import tinytext, tinytext.core\n"
        "tinytext.slugify = tinytext.core.slugify = lambda text: 'wrong'\n" + WRONG),
    "patches_json_and_builtins": (
        "import builtins, json\n"
        "json.dumps = lambda *a, **k: 'same'\n"
        "builtins.AssertionError = type('AssertionError', (Exception,), {})\n" + WRONG),
    "reads_the_tests_at_load_and_answers_from_them": (
        "import gc, re\n_TABLE = {}\n"
        "for _o in gc.get_objects():\n"
        "    if isinstance(_o, str) and '==' in _o:\n"
        "        for _m in re.finditer(r\"f\\\\('([^']*)'\\\\) == '([^']*)'\", _o):\n"
        "            _TABLE[_m.group(1)] = _m.group(2)\n"
        "def f(text):\n    return _TABLE.get(text, 'wrong')\n"),
    "exits_zero_when_called": "import os\n\ndef f(text):\n    os._exit(0)\n",
    "raises_what_pytest_skips_on": (
        "def f(text):\n    import pytest\n    pytest.skip('nothing to see')\n"),
    "raises_system_exit_and_keyboard_interrupt": (
        "_n = [0]\ndef f(text):\n    _n[0] += 1\n    raise (SystemExit(0) if _n[0] % 2 else KeyboardInterrupt())\n"),
    "hangs": "def f(text):\n    while True:\n        pass\n",
    "kills_its_parent_process": (
        "import os, signal\ndef f(text):\n    os.kill(os.getppid(), signal.SIGKILL)\n    return 'wrong'\n"),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_right_solution_is_verified_and_judged_outside(venv_backend, tinytext_env, shape):
    verification = verify_task(SHAPES[shape], RIGHT, environment=tinytext_env, backend=venv_backend, timeout_s=60,
                               test_timeout_s=2.0)  # fmt: skip
    assert verification.result.ok, verification
    assert verification.judged == "outside" and verification.stage_b.judged_outside
    assert set(verification.stage_a.tests.values()) == {"error"}  # no task_module: every test fails
    assert set(verification.stage_b.tests.values()) == {"passed"}


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_no_wrong_solution_is_verified_when_the_test_is_split(name, shape, venv_backend, tinytext_env):
    verification = verify_task(SHAPES[shape], ATTACKS[name], environment=tinytext_env, backend=venv_backend, timeout_s=60,
                               test_timeout_s=1.0)  # fmt: skip
    assert not verification.result.ok, (name, verification)
    assert verification.stage_b is not None and "passed" not in verification.stage_b.tests.values()
    if name == "reads_the_tests_at_load_and_answers_from_them":
        # its gc walk at import breaks pytest's own collection (the verdict plugin refuses it), so the task cannot
        # be judged as the split: pytest's two stages reject it
        assert verification.inside_reason == "collection_mismatch: the collection failed: ['audit: gc.get_objects']"
    else:
        assert verification.judged == "outside"


# Shapes the split leaves to pytest: fixtures and marks. There, a solution decides its own verdict.
INSIDE_TESTS = {
    "fixture": "from task_module import f\n\ndef test_a(tmp_path):\n" + ASSERTS,
    "marked_parameters": ("import pytest\nfrom task_module import f\n\n"
                          "@pytest.mark.parametrize('n', [pytest.param(1, marks=pytest.mark.slow)])\n"
                          "def test_a(n):\n" + ASSERTS),
}


@pytest.mark.parametrize("shape", sorted(INSIDE_TESTS))
@pytest.mark.parametrize("forgery", [FORGE_PLUGIN, FORGE_FILE], ids=["plugin", "verdict_file"])
def test_a_test_that_cannot_be_split_is_judged_inside_and_the_old_forgeries_no_longer_verify(
        shape, forgery, venv_backend, tinytext_env):  # fmt: skip
    """Such tasks are pytest's, judged inside (left out of the exports, the reason recorded). The forgeries that
    verified a wrong solution there before (the plugin's record replaced through ``sys.modules``, the verdict file
    rewritten with the nonce read from the plugin) find nothing to reach now: the hooks live under no importable name,
    and the file is signed with a key the plugin read from a pipe."""
    verification = verify_task(INSIDE_TESTS[shape], forgery + WRONG, environment=tinytext_env, backend=venv_backend,
                               timeout_s=60)  # fmt: skip
    assert not verification.result.ok and verification.judged == "inside", (shape, verification)
    right = verify_task(INSIDE_TESTS[shape], RIGHT, environment=tinytext_env, backend=venv_backend, timeout_s=60)
    assert right.result.ok and right.judged == "inside" and right.inside_reason.startswith("split: "), right


def _task(**changes) -> Task:
    task = Task(id="tinytext_0", problem="Write f.", instruction="Write f.", test=TEST, solution="def f(t): ...",
                repo="tinytext", repo_version="0.1", package="tinytext", path="tinytext/__init__.py",
                start_line=1, end_line=9, model="scripted", attempts=1, seed_index=0)  # fmt: skip
    return dataclasses.replace(task, **changes)


def test_a_task_says_where_it_was_judged_and_the_rows_and_toml_carry_it():
    assert _task().judged == "inside"  # a task that does not say is inside
    for judged in ("inside", "outside"):
        row = task_row(_task(judged=judged))
        assert row["judged"] == judged and task_toml(row)["metadata"]["judged"] == judged
    row = task_row(_task())
    assert task_toml({k: v for k, v in row.items() if k != "judged"})["metadata"]["judged"] == "inside"


def test_tasks_judged_inside_are_left_out_of_the_exports_unless_asked():
    inside, outside = _task(), _task(id="tinytext_1", judged="outside")
    assert exportable([inside, outside]) == [outside]
    assert exportable([inside, outside], include_judged_inside=True) == [inside, outside]
    assert tasks_to_dataset([inside, outside])["id"] == ["tinytext_1"]
    assert tasks_to_dataset([inside], include_judged_inside=True)["judged"] == ["inside"]
    assert exportable([{"id": "old row without the column"}]) == []  # a row that does not say is inside
    assert CodeInstructConfig().export_judged_inside is False


# What a pytest run in the solution's interpreter still lets through (it judges what the objects say), and what it
# no longer does (the verdict's own channel).
FORGERIES = {"returns_an_object_equal_to_everything": "passed", "patches_the_repository_the_expected_side_uses": "passed",
             "patches_the_plugins_record": "failed", "writes_the_verdict_file_with_the_nonce_it_reads": "failed"}


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_what_a_pytest_run_that_shares_the_solutions_interpreter_lets_through(name, venv_backend, tinytext_env):
    """The control for the attacks above: run as written, by pytest in the solution's interpreter, a wrong solution
    whose objects lie (equal to everything) or that patches the repository the expected side calls passes every test
    of the task; only the split stops them. A forgery of the verdict's channel itself fails there too now."""
    test = TEST_BY_REPO.split("\ndef test_against_json")[0]  # json is not patched by every one of them
    run = venv_backend.run_pytest(tinytext_env, {"test_task.py": test, "task_module.py": ATTACKS[name]},
                                  test_file="test_task.py", timeout_s=60)  # fmt: skip
    assert run.status == FORGERIES[name], (name, run)
