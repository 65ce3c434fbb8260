"""Two-stage verification against hostile or sloppy tests, run for real in the tinytext environment.

Stage A must see the test *fail* without ``task_module.py``: a test that skips, xfails or collects nothing when the
oracle is missing proves nothing about the oracle, and must be rejected with a named reason.
"""

from __future__ import annotations

import pytest

from evolvecoder_datasets.code_instruct import verify_task
from evolvecoder_datasets.code_instruct.gates import SKIP_REASONS

SOLUTION = "import tinytext\n\ndef f(text):\n    return tinytext.slugify(text)\n"
ASSERTS = "    assert f('A b') == 'a-b'\n    assert f('') == ''\n    assert f('X  Y') == 'x-y'\n"

DODGES = {
    "module_importorskip": "import pytest\npytest.importorskip('task_module')\nfrom task_module import f\n\n"
    "def test_a():\n" + ASSERTS,
    "skip_marker": "import pytest\ntry:\n    from task_module import f\nexcept ImportError:\n"
    "    pytestmark = pytest.mark.skip(reason='no module')\n\ndef test_a():\n" + ASSERTS,
    "xfail_without_module": "import pytest\ntry:\n    from task_module import f\nexcept ImportError:\n    f = None\n\n"
    "@pytest.mark.xfail(f is None, reason='no module')\ndef test_a():\n" + ASSERTS,
    "skip_inside_test": "import pytest\n\ndef test_a():\n    f = pytest.importorskip('task_module').f\n"
    + ASSERTS.replace("    ", "    ", 3),
}


@pytest.mark.parametrize("name", sorted(DODGES))
def test_a_test_that_does_not_fail_without_the_oracle_is_rejected(name, venv_backend, tinytext_env):
    test = DODGES[name]
    # With the oracle the test really passes: only stage A can catch it.
    assert venv_backend.run_pytest(tinytext_env, {"test_task.py": test, "task_module.py": SOLUTION},
                                   timeout_s=60).passed  # fmt: skip
    verification = verify_task(test, SOLUTION, environment=tinytext_env, backend=venv_backend, timeout_s=60)
    assert not verification.result.ok
    assert verification.result.reason == "test_passes_without_solution"
    assert verification.stage_b is None


def test_a_plain_import_failure_is_still_a_stage_a_failure(venv_backend, tinytext_env):
    test = "from task_module import f\n\ndef test_a():\n" + ASSERTS
    verification = verify_task(test, SOLUTION, environment=tinytext_env, backend=venv_backend, timeout_s=60)
    assert verification.result.ok, verification.result
    # Judged outside: the split test's calls of f fail where the sandbox's program does not define it.
    assert verification.judged == "outside" and verification.stage_a.tests == {"test_task.py::test_a": "error"}
    # A test only pytest can judge: stage A fails at collection, as pytest cannot import task_module.
    inside = verify_task(test.replace("def test_a():", "def test_a(tmp_path):"), SOLUTION, environment=tinytext_env,
                         backend=venv_backend, timeout_s=60)  # fmt: skip
    assert inside.result.ok and inside.judged == "inside" and inside.stage_a.collect_errors == ("test_task.py",)


def test_stage_a_reason_is_documented():
    assert "test_passes_without_solution" in SKIP_REASONS


def _clean_tinytext_copy(dest):
    import shutil

    from .conftest import TINYTEXT

    skip = shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    shutil.copytree(TINYTEXT, dest, ignore=skip)
    return dest


@pytest.mark.slow
def test_building_leaves_the_source_tree_untouched_and_the_key_stable(tmp_path):
    """pip used to build in place: ``build/`` and ``*.egg-info`` appeared in the checkout and changed its hash."""
    from evolvecoder_datasets.code_instruct import VenvBackend, open_repository
    from evolvecoder_datasets.errors import EnvironmentBuildError

    source = _clean_tinytext_copy(tmp_path / "tinytext")
    before = sorted(p.relative_to(source).as_posix() for p in source.rglob("*"))
    repo = open_repository(source)
    backend = VenvBackend(cache_dir=tmp_path / "envs", work_root=tmp_path / "boxes")
    key = backend.environment_key(repo)
    try:
        env = backend.prepare(repo)
    except EnvironmentBuildError as err:
        pytest.skip(f"cannot build a venv (PyPI unreachable?): {str(err)[:200]}")
    assert sorted(p.relative_to(source).as_posix() for p in source.rglob("*")) == before
    assert backend.environment_key(open_repository(source)) == key == env.key
    assert [p.name for p in (tmp_path / "envs").iterdir() if p.is_dir()] == [f"tiny-textkit-0.3.1-{key}"]


@pytest.mark.parametrize(
    ("test_head", "solution_head", "module"),
    [
        ("import numpyzz\n", "", "numpyzz"),  # the test imports a module the environment lacks
        ("", "import tinytext.nowhere\n", "tinytext.nowhere"),  # so does the solution
    ],
)
def test_an_import_of_a_module_not_installed_has_its_own_reason(venv_backend, tinytext_env, test_head,
                                                               solution_head, module):  # fmt: skip
    test = test_head + "from task_module import f\n\ndef test_a():\n" + ASSERTS
    verification = verify_task(test, solution_head + SOLUTION, environment=tinytext_env, backend=venv_backend,
                               timeout_s=60)  # fmt: skip
    assert verification.result.reason == "missing_module"
    assert module in verification.result.detail
    assert "missing_module" in SKIP_REASONS


def test_a_module_imported_inside_a_test_is_diagnosed_too(venv_backend, tinytext_env):
    test = "from task_module import f\n\ndef test_a():\n    import yamlzz\n" + ASSERTS
    verification = verify_task(test, SOLUTION, environment=tinytext_env, backend=venv_backend, timeout_s=60)
    assert (verification.result.reason, verification.stage_b.missing_modules) == ("missing_module", ("yamlzz",))


def test_a_plainly_wrong_oracle_is_still_solution_fails_test(venv_backend, tinytext_env):
    wrong = "import tinytext\n\ndef f(text):\n    return tinytext.slugify(text) + '!'\n"
    verification = verify_task("from task_module import f\n\ndef test_a():\n" + ASSERTS, wrong,
                               environment=tinytext_env, backend=venv_backend, timeout_s=60)  # fmt: skip
    assert verification.result.reason == "solution_fails_test"
    assert verification.stage_b.missing_modules == ()
