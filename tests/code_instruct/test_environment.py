"""The venv backend: built once and reused, and pytest verdicts read from the nonce-stamped plugin file only."""

from __future__ import annotations

import json
import os
import time

import pytest

from evolvecoder_datasets.code_instruct import VenvBackend, read_verdict
from evolvecoder_datasets.errors import ConfigError

TEST = "from task_module import f\n\ndef test_one():\n    assert f(' A  b ') == 'a-b'\n\ndef test_two():\n    assert f('Crème') == 'creme'\n"
GOOD = "import tinytext\n\ndef f(text):\n    return tinytext.slugify(text)\n"


def _run(backend, env, solution=None, test=TEST, timeout_s=30.0):
    files = {"test_task.py": test}
    if solution is not None:
        files["task_module.py"] = solution
    return backend.run_pytest(env, files, timeout_s=timeout_s)


def test_environment_is_built_once_and_reused(venv_backend, tinytext_repo, tinytext_env):
    marker = os.path.join(tinytext_env.root, "ecd-environment.json")
    stamp = os.stat(marker).st_mtime_ns
    started = time.monotonic()
    again = venv_backend.prepare(tinytext_repo)
    assert again == tinytext_env
    assert os.stat(marker).st_mtime_ns == stamp
    assert time.monotonic() - started < 30  # reuse does not rebuild (a build needs pip and PyPI)
    assert tinytext_env.versions["tiny-textkit"] == "0.3.1" and tinytext_env.versions["pytest"]
    assert tinytext_env.package == "tinytext"


def test_a_different_requirement_set_is_a_different_environment(venv_backend, tinytext_repo, tmp_path):
    other = VenvBackend(cache_dir=venv_backend.cache_dir, requirements=("pytest", "iniconfig"))
    assert other.environment_path(tinytext_repo) != venv_backend.environment_path(tinytext_repo)


def test_passing_and_failing_runs_report_every_test(venv_backend, tinytext_env):
    good = _run(venv_backend, tinytext_env, GOOD)
    assert good.status == "passed" and good.passed
    assert good.tests == {"test_task.py::test_one": "passed", "test_task.py::test_two": "passed"}
    bad = _run(venv_backend, tinytext_env, "import tinytext\n\ndef f(text):\n    return text.lower()\n")
    assert bad.status == "failed"
    assert bad.counts() == {"failed": 2}


def test_missing_module_is_a_collection_failure(venv_backend, tinytext_env):
    run = _run(venv_backend, tinytext_env)
    assert run.status == "failed"
    assert run.collect_errors == ("test_task.py",)
    assert "task_module" in run.log_tail  # for humans; the verdict came from the plugin


@pytest.mark.parametrize("exit_call", ["os._exit(0)", "sys.exit(0)", "os.kill(os.getpid(), 9)"])
def test_a_solution_that_ends_the_interpreter_never_passes(venv_backend, tinytext_env, exit_call):
    run = _run(venv_backend, tinytext_env, f"import os, sys\n{exit_call}\n")
    assert not run.passed
    assert run.status in ("crashed", "failed")
    if exit_call == "os._exit(0)":
        assert run.status == "crashed" and run.exit_code == 0  # exit code 0, still no pass


def test_exit_inside_a_test_leaves_no_verdict(venv_backend, tinytext_env):
    solution = "import os\n\ndef f(text):\n    os._exit(0)\n"
    assert _run(venv_backend, tinytext_env, solution).status == "crashed"


def test_a_forged_verdict_file_without_the_key_is_ignored(venv_backend, tinytext_env):
    forge = ("import json, os, glob\n"
             "for path in glob.glob('/tmp/**/result', recursive=True) + glob.glob(os.path.dirname(os.getcwd()) + '/result'):\n"
             "    open(os.path.join(path, 'verdict.json'), 'w').write(json.dumps({'nonce': 'guess', 'tests': {'x': 'passed'}}))\n"
             "os._exit(0)\n")  # fmt: skip
    assert _run(venv_backend, tinytext_env, forge).status == "crashed"


def test_infinite_loop_is_a_timeout(venv_backend, tinytext_env):
    run = _run(venv_backend, tinytext_env, "def f(text):\n    while True:\n        pass\n", timeout_s=3.0)
    assert run.status == "timeout"
    assert run.duration_s < 20


def test_no_network_and_an_unprivileged_uid(venv_backend, tinytext_env):
    if venv_backend.isolation == "none":
        pytest.skip("no namespace isolation on this machine")
    probe = ("import os, socket\n\ndef f(text):\n"
             "    try:\n        socket.create_connection(('1.1.1.1', 53), timeout=2)\n        net = 'net'\n"
             "    except OSError:\n        net = 'nonet'\n"
             "    return f'{net}-{os.getuid()}'\n")  # fmt: skip
    # printed: asserts are plain in the harness (pytest's assertion rewriting keeps its configuration where a test
    # could read it), so a failing assert shows no values; the captured output is in the report
    test = "from task_module import f\n\ndef test_probe():\n    print(f(''))\n    assert f('') == 'expected'\n"
    run = _run(venv_backend, tinytext_env, probe, test=test)
    assert run.status == "failed"
    assert "nonet" in run.log_tail
    if os.geteuid() == 0 and venv_backend.isolation == "bwrap":
        assert "nonet-65534" in run.log_tail


def _signed(path, key, tests, collected=None, **fields):
    from evolvecoder_datasets.code_instruct.verdict import sign_verdict

    payload = {"version": 2, "exitstatus": 0, "collect_errors": [], "missing_modules": [], "tampered": [],
               "collected": [[name, 1] for name in (tests if collected is None else collected)], "tests": tests,
               **fields}  # fmt: skip
    path.write_bytes(sign_verdict(json.dumps(payload).encode(), key))


def test_read_verdict_needs_the_key_and_every_collected_test_passing(tmp_path):
    path = tmp_path / "verdict.json"
    _signed(path, "k", {"a": "passed", "b": "passed"})
    assert read_verdict(path, "k").status == "passed"
    assert read_verdict(path, "other") is None and read_verdict(path, "") is None  # not signed with this run's key
    _signed(path, "k", {"a": "passed", "b": "skipped"})
    assert read_verdict(path, "k").status == "failed"  # a skipped test is not a pass
    _signed(path, "k", {"a": "passed"}, collected=["a", "b"])
    run = read_verdict(path, "k")
    assert (run.status, run.tests["b"]) == ("failed", "error")  # a collected test without an outcome failed
    _signed(path, "k", {"a": "passed", "z": "passed"}, collected=["a"])
    assert read_verdict(path, "k").status == "failed"  # an outcome for a test pytest did not collect
    _signed(path, "k", {"a": "passed"}, tampered=["pytest.fail changed"])
    assert read_verdict(path, "k").status == "failed"
    _signed(path, "k", {"a": "passed"}, exitstatus=1)
    assert read_verdict(path, "k").status == "failed"  # pytest itself did not say OK
    _signed(path, "k", {})
    assert read_verdict(path, "k").status == "no_tests"
    path.write_bytes(path.read_bytes().replace(b'"tests"', b'"tests" '))
    assert read_verdict(path, "k") is None  # edited after signing
    assert read_verdict(tmp_path / "missing.json", "k") is None


def test_paths_outside_the_work_folder_are_refused(venv_backend, tinytext_env):
    with pytest.raises(ConfigError, match="leaves the work folder"):
        venv_backend.run_pytest(tinytext_env, {"test_task.py": TEST, "../escape.py": "x = 1"})
    with pytest.raises(ConfigError, match="test_file"):
        venv_backend.run_pytest(tinytext_env, {"task_module.py": GOOD})
