"""code_instruct verdicts are judged inside the solution's process, so no such task is exported by default (issue 23).

pytest runs the test in the interpreter that imported ``task_module.py``: a solution (or a test) reaches the verdict
plugin there, patches its globals or writes its file with the nonce it reads, and a wrong solution is verified. The
first test shows that this really happens (so the rule below is needed, not decoration); the others check the rule:
every task records ``judged: inside``, and the dataset rows and Harbor folders leave such tasks out unless asked
(``include_judged_inside=True``, config ``export_judged_inside``), with ``judged`` in the rows and ``task.toml``.
"""

from __future__ import annotations

import dataclasses

import pytest

from evolvecoder_datasets.code_instruct import CodeInstructConfig, Task, tasks_to_dataset, verify_task
from evolvecoder_datasets.code_instruct.export import exportable, task_row, task_toml

ASSERTS = "    assert f('A b') == 'a-b'\n    assert f('') == ''\n    assert f('X  Y') == 'x-y'\n"
TEST = "from task_module import f\n\ndef test_a():\n" + ASSERTS
FORGERS = {
    "patches_the_plugins_record": (
        "import sys\n"
        "_plugin = sys.modules.get('ecd_verdict')\n"
        "if _plugin is not None:\n"
        "    _plugin._record = lambda nodeid, outcome: _plugin._RESULTS.__setitem__(nodeid, 'passed')\n"
        "def f(text):\n    return 'wrong'\n"),
    "writes_the_verdict_file_with_the_nonce_it_reads": (
        "import atexit, json, os, sys\n"
        "_plugin = sys.modules.get('ecd_verdict')\n"
        "def _forge():\n"
        "    data = {'nonce': _plugin._NONCE, 'exitstatus': 0, 'collected': 1, 'collect_errors': [],\n"
        "            'tests': {'test_task.py::test_a': 'passed'}, 'missing_modules': []}\n"
        "    with open(_plugin._PATH, 'w') as fh:\n"
        "        json.dump(data, fh)\n"
        "if _plugin is not None:\n"
        "    atexit.register(_forge)  # after the plugin wrote the real verdict\n"
        "def f(text):\n    return 'wrong'\n"),
}


@pytest.mark.parametrize("name", sorted(FORGERS))
def test_a_solution_in_pytests_process_can_forge_its_verification(name, venv_backend, tinytext_env):
    """Why every pytest-verified task is ``inside``: a wrong solution is verified (stage A failed, stage B passed)."""
    verification = verify_task(TEST, FORGERS[name], environment=tinytext_env, backend=venv_backend, timeout_s=60)
    assert verification.result.ok, (name, verification.result, verification.stage_b)


def _task(**changes) -> Task:
    task = Task(id="tinytext_0", problem="Write f.", instruction="Write f.", test=TEST, solution="def f(t): ...",
                repo="tinytext", repo_version="0.1", package="tinytext", path="tinytext/__init__.py",
                start_line=1, end_line=9, model="scripted", attempts=1, seed_index=0)  # fmt: skip
    return dataclasses.replace(task, **changes)


def test_every_task_says_it_was_judged_inside_and_the_rows_and_toml_carry_it():
    row = task_row(_task())
    assert _task().judged == "inside" and row["judged"] == "inside"
    assert task_toml(row)["metadata"]["judged"] == "inside"
    assert task_toml({k: v for k, v in row.items() if k != "judged"})["metadata"]["judged"] == "inside"


def test_tasks_judged_inside_are_left_out_of_the_exports_unless_asked():
    inside, outside = _task(), _task(id="tinytext_1", judged="outside")
    assert exportable([inside, outside]) == [outside]
    assert exportable([inside, outside], include_judged_inside=True) == [inside, outside]
    assert tasks_to_dataset([inside, outside])["id"] == ["tinytext_1"]
    assert tasks_to_dataset([inside], include_judged_inside=True)["judged"] == ["inside"]
    assert exportable([{"id": "old row without the column"}]) == []  # a row that does not say is inside
    assert CodeInstructConfig().export_judged_inside is False
