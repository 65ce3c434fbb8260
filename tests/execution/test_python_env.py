"""``SandboxSettings.python_env``: programs import another virtualenv's packages, and only those.

code_instruct's tasks run against a repository installed in its own virtualenv; the sandbox judges them there, so
the fork servers of such a sandbox put that venv's package folders (asked of its own interpreter) on the path, in
place of this interpreter's, both for the program's process and for the clean processes that evaluate a test's own
helpers. A real venv is made here (``python -m venv --without-pip``) with a package that exists nowhere else.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from evolvecoder_datasets.errors import ConfigError
from evolvecoder_datasets.execution import Sandbox, shared_sandbox
from evolvecoder_datasets.execution.isolation import env_site_paths, server_command
from evolvecoder_datasets.limits import SandboxSettings

PROGRAM = "import reptile\n\ndef f(n):\n    return reptile.hiss(n)\n"


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    root = tmp_path_factory.mktemp("envs") / "reptiles"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, capture_output=True)
    site = subprocess.run([str(root / "bin" / "python"), "-c", "import site; print(site.getsitepackages()[0])"],
                          check=True, capture_output=True, text=True).stdout.strip()  # fmt: skip
    package = root.joinpath(site).resolve() / "reptile"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("def hiss(n):\n    return 's' * n\n")
    return str(root)


@pytest.mark.parametrize("mode", ["isolated", "fast"])
def test_programs_and_test_helpers_import_the_environments_packages_and_only_those(venv, mode):
    with Sandbox(python_env=venv, workers=1, mode=mode) as sandbox:
        report = sandbox.run(PROGRAM, ["assert f(3) == 'sss'", "assert f(2) == 'sss'",
                                       "import reptile\nassert f(2) == reptile.hiss(2)"])  # fmt: skip
        assert report.statuses == ["pass", "fail", "pass"] and report.judged == ["outside"] * 3
        # This interpreter's own packages are not there (``datasets`` is installed here, not in the venv).
        ours = sandbox.run("import datasets\n\ndef f():\n    return 1\n", ["assert f() == 1"])
        assert ours.statuses == ["error"] and "No module named 'datasets'" in ours.messages[0]
    with Sandbox(workers=1, mode=mode) as default:
        missing = default.run(PROGRAM, ["assert f(3) == 'sss'"])
        assert missing.statuses == ["error"] and "No module named 'reptile'" in missing.messages[0]


def test_the_expected_side_computed_with_the_environment_is_not_the_programs(venv):
    """A program that patches the environment's package in its own process decides nothing: the test's
    ``reptile.hiss(2)`` runs in a clean process of the same environment."""
    patched = "import reptile\nreptile.hiss = lambda n: 'x'\n\ndef f(n):\n    return 'x'\n"
    report = shared_sandbox(python_env=venv, workers=1).run(patched, ["import reptile\nassert f(2) == reptile.hiss(2)"])
    assert report.statuses == ["fail"] and report.judged == ["outside"]


def test_a_folder_that_is_not_a_virtualenv_is_refused_with_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="not a virtualenv"):
        env_site_paths(str(tmp_path))
    with pytest.raises(ConfigError, match="absolute path"):
        SandboxSettings(python_env="relative/venv")


def test_its_servers_are_marked_and_left_out_of_the_default_sandboxs_listing(venv):
    command = server_command("none", venv)
    assert command[-1] == f"--python-env={venv}" and "--python-env" not in " ".join(server_command("none"))
    env_box = shared_sandbox(python_env=venv, workers=1)
    assert env_box.run(PROGRAM, ["assert f(1) == 's'"]).statuses == ["pass"]
    default = shared_sandbox(workers=1).start()
    for pid in default.server_pids:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            assert b"--python-env=" not in fh.read()
