"""A model-written test that forges pytest's verdict (attack class 2): every variant fails on every path.

pytest runs the test module in its own interpreter, so the test can reach for the verdict itself: die with
``os._exit(0)``, patch the verdict plugin or pytest's runner and reports, monkeypatch ``pytest.fail``, write the result
file, register a hook wrapper through ``pytest_plugins``, walk ``gc`` to the plugin. Each variant below is a real test
module run by real pytest with a wrong solution; an honest test of the same task is the control (the right solution
passes, the wrong one fails). Paths: a bare pytest run (the backend's verdict), :func:`verify_task` (the split where it
takes the test, pytest's stages plus the decoy run where it does not), and the reward an exported folder's
``tests/test.sh`` writes.
"""

from __future__ import annotations

import pytest

from evolvecoder_datasets.code_instruct import verify_task

RIGHT = "import tinytext\n\ndef f(text):\n    return tinytext.slugify(text)\n"
WRONG = "def f(text):\n    return 'wrong'\n"
HONEST = "from task_module import f\n\ndef test_a():\n    assert f('A b') == 'a-b'\n    assert f('X  Y') == 'x-y'\n"

# Model-written test modules that try to make a wrong solution pass (or leave a pass behind).
FORGERIES = {
    "exits_zero_at_import": "import os\nos._exit(0)\n" + HONEST,
    "exits_zero_in_a_test": ("import os\nfrom task_module import f\n\ndef test_a():\n    ok = f('A b') == 'a-b'\n"
                             "    os._exit(0)\n"),
    "patches_the_plugin_found_in_sys_modules": (
        "import sys\nfor _name, _m in list(sys.modules.items()):\n    if 'verdict' in _name:\n"
        "        _m._record = lambda *a, **k: None\n        _m.pytest_runtest_logreport = lambda report: None\n"
        + HONEST),
    "writes_a_signed_looking_verdict_file": (
        "import hmac, json, os, re\n"
        "_env = open('/proc/self/environ', 'rb').read().decode(errors='replace')\n"
        "_fd = re.search(r'ECD_VERDICT_FD=(\\d+)', _env)\n_key = b'guess'\n"
        "try:\n    _key = os.read(int(_fd.group(1)), 256) if _fd else _key\nexcept OSError:\n    pass\n"
        "_payload = json.dumps({'version': 2, 'exitstatus': 0, 'collected': [['test_task.py::test_a', 9]],\n"
        "    'collect_errors': [], 'tests': {'test_task.py::test_a': 'passed'}, 'missing_modules': [],\n"
        "    'tampered': []}).encode()\n"
        "for _dir in (os.path.join(os.path.dirname(os.getcwd()), 'result'), '/logs/verifier', os.getcwd()):\n"
        "    try:\n        open(os.path.join(_dir, 'verdict.json'), 'wb').write(\n"
        "            _payload + b'\\n' + hmac.new(_key, _payload, 'sha256').hexdigest().encode() + b'\\n')\n"
        "    except OSError:\n        pass\n"
        "os._exit(0)\n"),
    "patches_pytests_runner": (
        "import _pytest.runner as _runner\n_real = _runner.call_and_report\n\n"
        "def _passing(item, when, log=True, **kw):\n    report = _real(item, when, log=False, **kw)\n"
        "    report.outcome, report.longrepr = 'passed', None\n    if log:\n"
        "        item.ihook.pytest_runtest_logreport(report=report)\n    return report\n\n"
        "_runner.call_and_report = _passing\n" + HONEST),
    "patches_pytests_report_class": ("import _pytest.reports as _reports\n"
                                     "_reports.BaseReport.failed = property(lambda self: False)\n" + HONEST),
    "monkeypatches_pytest_fail": (
        "import pytest, _pytest.outcomes\n_pytest.outcomes.fail = pytest.fail = lambda *a, **k: None\n"
        "from task_module import f\n\ndef test_a():\n    if f('A b') != 'a-b':\n        pytest.fail('wrong slug')\n"),
    "registers_a_hook_wrapper_through_pytest_plugins": (
        "open('ecd_helper_plugin.py', 'w').write(\n"
        "    'import pytest\\n@pytest.hookimpl(hookwrapper=True)\\ndef pytest_runtest_makereport(item, call):\\n'\n"
        "    '    outcome = yield\\n    outcome.get_result().outcome = \"passed\"\\n')\n"
        "pytest_plugins = ['ecd_helper_plugin']\n" + HONEST),
    "walks_gc_to_the_plugin": ("import gc\nfor _o in gc.get_objects():\n"
                               "    if type(_o).__name__ == '_Verdict':\n        _o.results.clear()\n" + HONEST),
    "reads_pytests_configuration_from_the_assertion_plugin": (
        "from task_module import f\n\ndef test_a():\n    import _pytest.assertion.util as util\n"
        "    plugin = util._config.pluginmanager.get_plugin('ecd_verdict_hooks')\n"
        "    plugin.pytest_runtest_logreport = lambda report: None\n    assert f('A b') == 'a-b'\n"),
}


@pytest.mark.parametrize("solution", [RIGHT, WRONG], ids=["right", "wrong"])
def test_the_honest_control_passes_only_the_right_solution_on_every_path(solution, venv_backend, tinytext_env,
                                                                         exported, reward):  # fmt: skip
    right = solution is RIGHT
    run = venv_backend.run_pytest(tinytext_env, {"test_task.py": HONEST, "task_module.py": solution}, timeout_s=60)
    assert run.passed == right and run.tampered == (), run
    verification = verify_task(HONEST, solution, environment=tinytext_env, backend=venv_backend, timeout_s=60)
    assert verification.result.ok == right and verification.judged == "outside", verification
    for judged in ("outside", "inside"):
        assert reward(exported(HONEST, RIGHT, judged), solution) == ("1" if right else "0"), judged


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_a_forging_test_never_gives_a_pass_to_a_wrong_solution(name, venv_backend, tinytext_env):
    """The bare pytest path: the backend's verdict of the forging test with the wrong solution is never a pass."""
    run = venv_backend.run_pytest(tinytext_env, {"test_task.py": FORGERIES[name], "task_module.py": WRONG},
                                  timeout_s=60)  # fmt: skip
    assert not run.passed, (name, run)


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_a_forging_test_verifies_no_wrong_solution(name, venv_backend, tinytext_env):
    verification = verify_task(FORGERIES[name], WRONG, environment=tinytext_env, backend=venv_backend, timeout_s=60,
                               test_timeout_s=2.0)  # fmt: skip
    assert not verification.result.ok, (name, verification)


# The exported pytest verifier (a folder judged inside) with the wrong solution; one forgery of each mechanism.
EXPORTED = ["exits_zero_in_a_test", "writes_a_signed_looking_verdict_file", "patches_pytests_runner",
            "registers_a_hook_wrapper_through_pytest_plugins", "reads_pytests_configuration_from_the_assertion_plugin"]


@pytest.mark.parametrize("name", EXPORTED)
def test_an_exported_pytest_verifier_gives_a_forging_test_no_reward(name, exported, reward):
    assert reward(exported(FORGERIES[name], RIGHT, "inside"), WRONG) == "0"


# Wrong agent solutions that go for the exported pytest verifier's channel (the test there is the honest one).
SOLUTION_FORGERIES = {
    "patches_the_plugin": ("import sys\nfor _m in list(sys.modules.values()):\n"
                           "    if 'verdict' in getattr(_m, '__name__', ''):\n        _m._record = None\n" + WRONG),
    "exits_zero": "import os\nos._exit(0)\n",
    "patches_pytests_runner": ("import _pytest.runner as _runner\n_real = _runner.call_and_report\n\n"
                               "def _passing(item, when, log=True, **kw):\n"
                               "    report = _real(item, when, log=False, **kw)\n"
                               "    report.outcome, report.longrepr = 'passed', None\n    if log:\n"
                               "        item.ihook.pytest_runtest_logreport(report=report)\n    return report\n\n"
                               "_runner.call_and_report = _passing\n" + WRONG),
}


@pytest.mark.parametrize("name", sorted(SOLUTION_FORGERIES))
def test_an_exported_pytest_verifier_gives_a_forging_solution_no_reward(name, exported, reward):
    assert reward(exported(HONEST, RIGHT, "inside"), SOLUTION_FORGERIES[name]) == "0"


def test_a_split_test_is_judged_outside_whatever_its_module_reaches_for(venv_backend, tinytext_env, exported, reward):
    """The split path: module-level set-up that goes for the plugin (here by reading ``sys.modules``) is only set-up
    in the sandbox, where no plugin exists; the judge decides, so the wrong solution fails and the right one passes,
    during verification and in the exported folder."""
    test = ("import sys\n_plugin = sys.modules.get('ecd_verdict')\n_hooks = getattr(_plugin, 'pytest_addhooks', None)\n"
            + HONEST)
    assert verify_task(test, RIGHT, environment=tinytext_env, backend=venv_backend, timeout_s=60).judged == "outside"
    assert not verify_task(test, WRONG, environment=tinytext_env, backend=venv_backend, timeout_s=60).result.ok
    folder = exported(test, RIGHT, "outside")
    assert (reward(folder, RIGHT), reward(folder, WRONG)) == ("1", "0")


# What the plugin cannot stop: code in pytest's interpreter that walks its frames reaches the plugin's object and
# rewrites the verdict before it is signed (then exits 0). The fixture keeps the test away from the split.
WALKS_FRAMES = (
    "import os, sys\n\n"
    "def _forge():\n"
    "    frame = sys._getframe()\n"
    "    while frame is not None:\n"
    "        for value in list(frame.f_locals.values()):\n"
    "            for impl in value if isinstance(value, list) else ():\n"
    "                plugin = getattr(impl, 'plugin', None)\n"
    "                if type(plugin).__name__ == '_Verdict':\n"
    "                    real = plugin.write\n\n"
    "                    def write(exitstatus, plugin=plugin, real=real):\n"
    "                        plugin.results.update({k: 'passed' for k in plugin.results})\n"
    "                        real(0)\n"
    "                        os._exit(0)\n\n"
    "                    plugin.write = write\n"
    "                    return\n"
    "        frame = frame.f_back\n\n"
    "from task_module import f\n\n"
    "def test_a(tmp_path):\n    _forge()\n    assert f('A b') == 'a-b'\n"
)


def test_a_test_that_walks_pytests_frames_forges_its_own_run_and_the_decoy_rejects_it(venv_backend, tinytext_env):
    """The limit, measured: the bare pytest run of that test passes a wrong solution (a verdict decided in a process
    that ran the test is its account; see docs/threat-model.md). Verification rejects the test all the same: it
    passes against the decoy ``task_module`` whose every name raises, which no test of the solution does."""
    bare = venv_backend.run_pytest(tinytext_env, {"test_task.py": WALKS_FRAMES, "task_module.py": WRONG}, timeout_s=60)
    assert bare.passed  # the residual: why tasks judged inside stay out of the exports unless asked
    for solution in (RIGHT, WRONG):
        verification = verify_task(WALKS_FRAMES, solution, environment=tinytext_env, backend=venv_backend,
                                   timeout_s=60)  # fmt: skip
        assert (verification.result.ok, verification.result.reason) == (False, "test_passes_a_wrong_solution")
        assert verification.judged == "inside" and verification.inside_reason == "split: fixture"


def test_the_frame_walking_forgery_is_only_set_up_code_to_the_split(venv_backend, tinytext_env, exported, reward):
    """Without the fixture the same module is split: the forgery runs in a sandbox process with no plugin, the judge
    decides, and the exported folder's reward follows the solution."""
    test = WALKS_FRAMES.replace("def test_a(tmp_path):", "def test_a():")
    assert not verify_task(test, WRONG, environment=tinytext_env, backend=venv_backend, timeout_s=60).result.ok
    verification = verify_task(test, RIGHT, environment=tinytext_env, backend=venv_backend, timeout_s=60)
    assert verification.result.ok and verification.judged == "outside", verification
    folder = exported(test, RIGHT, "outside")
    assert (reward(folder, RIGHT), reward(folder, WRONG)) == ("1", "0")
