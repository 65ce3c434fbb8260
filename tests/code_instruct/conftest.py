"""Fixtures of the code_instruct tests: the fixture repository, its virtualenv, scripted answers, real sdists.

Virtualenvs are expensive (``pip install`` reaches PyPI), so they live in a persistent cache keyed by the source
tree (``$ECD_TEST_ENV_CACHE``, default ``~/.cache/evolvecoder_datasets/test-envs``): the first run builds them,
later runs reuse them, which is the behaviour under test. Tests that need PyPI skip when it cannot be reached.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evolvecoder_datasets.code_instruct import VenvBackend, open_repository
from evolvecoder_datasets.code_instruct.repository import default_cache_dir
from evolvecoder_datasets.errors import EnvironmentBuildError

DATA = Path(__file__).resolve().parents[1] / "data" / "code_instruct"
TINYTEXT = DATA / "tinytext"
ANSWERS = DATA / "answers"


def answer(repo: str, name: str) -> str:
    """A scripted model answer from ``tests/data/code_instruct/answers/<repo>/<name>.txt``."""
    return (ANSWERS / repo / f"{name}.txt").read_text(encoding="utf-8")


def env_cache() -> Path:
    return Path(os.environ.get("ECD_TEST_ENV_CACHE") or default_cache_dir() / "test-envs")


@pytest.fixture(scope="session")
def tinytext_repo():
    return open_repository(TINYTEXT)


@pytest.fixture(scope="session")
def venv_backend(tmp_path_factory):
    return VenvBackend(cache_dir=env_cache(), work_root=tmp_path_factory.mktemp("boxes"))


@pytest.fixture(scope="session")
def tinytext_env(venv_backend, tinytext_repo):
    try:
        return venv_backend.prepare(tinytext_repo)
    except EnvironmentBuildError as err:
        if "pip install" in str(err):
            pytest.skip(f"cannot build the fixture venv (PyPI unreachable?): {str(err)[:200]}")
        raise


@pytest.fixture(scope="session")
def sdists():
    """click 8.1.7 and attrs 23.2.0 sdists from PyPI (kept next to the test envs); skips when PyPI is unreachable."""
    folder = Path(os.environ.get("ECD_TEST_SDIST_CACHE") or env_cache().parent / "test-sdists")
    folder.mkdir(parents=True, exist_ok=True)
    wanted = {"click": "click-8.1.7.tar.gz", "attrs": "attrs-23.2.0.tar.gz"}
    if not all((folder / name).is_file() for name in wanted.values()):
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
               "click==8.1.7", "attrs==23.2.0", "-d", str(folder)]  # fmt: skip
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
        except subprocess.TimeoutExpired:
            pytest.skip("pip download timed out")
        if proc.returncode != 0:
            pytest.skip(f"pip download failed (PyPI unreachable?): {proc.stderr[-300:]}")
    return {name: folder / file for name, file in wanted.items()}


@pytest.fixture(scope="session")
def tomli_env(venv_backend, tmp_path_factory):
    """tomli 2.0.1 (a real library with its own exception class, ``tomli.TOMLDecodeError``) from its PyPI sdist, in
    a virtualenv of the persistent test cache; skips when PyPI is unreachable."""
    folder = Path(os.environ.get("ECD_TEST_SDIST_CACHE") or env_cache().parent / "test-sdists")
    folder.mkdir(parents=True, exist_ok=True)
    sdist = folder / "tomli-2.0.1.tar.gz"
    if not sdist.is_file():
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "tomli==2.0.1", "-d",
               str(folder)]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
        if proc.returncode != 0:
            pytest.skip(f"pip download failed (PyPI unreachable?): {proc.stderr[-300:]}")
    repo = open_repository(sdist, cache_dir=tmp_path_factory.mktemp("tomli-source"))
    try:
        return venv_backend.prepare(repo)
    except EnvironmentBuildError as err:
        pytest.skip(f"cannot build the tomli venv (PyPI unreachable?): {str(err)[:200]}")


@pytest.fixture(scope="session")
def harbor_cli(request):
    """Harbor's CLI in its own Python >= 3.12 virtualenv under the git-ignored ``.cache/`` of the repository.

    Built by ``scripts/setup.sh`` (or here with ``--run-slow``: ~1 min from PyPI); skipped with the reason when no
    Python >= 3.12 exists or the venv is missing on a quick run.
    """
    from evolvecoder_datasets.code_instruct.harbor import (
        DEFAULT_HARBOR_DIR,
        HARBOR_VERSION,
        ensure_harbor,
        find_python,
    )

    folder = Path(__file__).resolve().parents[2] / DEFAULT_HARBOR_DIR
    stamp = folder / "ecd-harbor-version"
    built = (folder / "bin" / "harbor").is_file() and stamp.is_file() and stamp.read_text().strip() == HARBOR_VERSION
    if not built:
        if find_python() is None:
            pytest.skip("Harbor needs Python >= 3.12 and none was found (set ECD_HARBOR_PYTHON)")
        if not (request.config.getoption("--run-slow") or os.environ.get("CI")):
            pytest.skip(f"Harbor's venv is not built at {folder} (~1 min): run scripts/setup.sh, or --run-slow")
    try:
        return ensure_harbor(folder)
    except EnvironmentBuildError as err:
        pytest.skip(f"cannot install harbor=={HARBOR_VERSION} (PyPI unreachable?): {str(err)[:300]}")


@pytest.fixture(scope="session")
def exported(tinytext_repo, tinytext_env, tmp_path_factory):
    """``exported(test, solution, judged)``: one Harbor task folder of the tinytext environment (its ``tests/test.sh``
    as the task was verified: the shipped judge for ``"outside"``, pytest with the verdict plugin for ``"inside"``)."""
    from evolvecoder_datasets.code_instruct import Task, export_task_folders
    from evolvecoder_datasets.code_instruct.dockerfile import environment_spec

    spec = environment_spec(tinytext_repo, tinytext_env)
    key = f"{tinytext_env.backend}:{tinytext_env.key}"
    root = tmp_path_factory.mktemp("exported")
    made = [0]

    def export(test: str, solution: str, judged: str):
        made[0] += 1
        task = Task(id=f"tinytext_{made[0]}", problem="Write f.", instruction="Write f.", test=test, solution=solution,
                    repo=tinytext_repo.dist_name, repo_version=tinytext_repo.version, package="tinytext",
                    path="src/tinytext/core.py", start_line=1, end_line=30, model="scripted", attempts=1,
                    seed_index=made[0], environment=key, judged=judged)  # fmt: skip
        return export_task_folders([task], root, environments={key: spec}, include_judged_inside=True)[0]

    return export


@pytest.fixture(scope="session")
def reward(tinytext_env, tmp_path_factory):
    """``reward(folder, solution)``: the reward ``tests/test.sh`` of an exported folder writes for an agent's
    ``task_module.py`` (Harbor's flow by hand, with the verified virtualenv's interpreter first on ``PATH``)."""
    root = tmp_path_factory.mktemp("rewards")
    runs = [0]

    def run(folder, solution: str) -> str:
        runs[0] += 1
        work, logs = root / f"work{runs[0]}", root / f"logs{runs[0]}"
        work.mkdir()
        (work / "task_module.py").write_text(solution)
        path = f"{Path(tinytext_env.python).parent}:/usr/local/bin:/usr/bin:/bin"
        subprocess.run(["bash", str(folder / "tests" / "test.sh"), str(work), str(logs)], env={"PATH": path},
                       capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
        return (logs / "reward.txt").read_text().strip()

    return run
