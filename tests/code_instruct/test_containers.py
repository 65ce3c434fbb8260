"""The container backend: engine detection, the run command's confinement, and (where an engine works) building the
exported Dockerfile and verifying inside it. Without a working engine those tests skip with the engine's own reason;
the Dockerfile itself is still checked statically (test_export.py) and by Harbor's linter."""

from __future__ import annotations

import os
import platform
import subprocess

import pytest

from evolvecoder_datasets.code_instruct import (
    ContainerBackend,
    RepoEnvironment,
    Task,
    detect_engine,
    verify_task,
)
from evolvecoder_datasets.errors import ConfigError, SandboxUnavailable
from evolvecoder_datasets.prompts import code_instruct

from .conftest import answer

ENGINE, WHY_NOT = detect_engine()


def test_detection_names_a_working_engine_or_says_why_each_fails():
    if ENGINE is None:
        assert "docker:" in WHY_NOT and "podman:" in WHY_NOT
    else:
        assert WHY_NOT == ""
    with pytest.raises(ConfigError, match="unknown container engine"):
        detect_engine("lxc")


@pytest.mark.skipif(ENGINE is not None, reason="a container engine works here")
def test_without_an_engine_the_backend_refuses_with_the_reason(tinytext_repo, tmp_path):
    backend = ContainerBackend(cache_dir=tmp_path)
    with pytest.raises(SandboxUnavailable, match="no container engine works here") as caught:
        backend.prepare(tinytext_repo)
    assert WHY_NOT in str(caught.value)
    assert not (tmp_path / "locks").exists()  # refused before locking anything


def test_the_run_command_confines_the_tests(tmp_path):
    backend = ContainerBackend(memory_mb=2048, cpus=0.5, pids=128)
    backend._engine = "/usr/bin/docker"  # the command is data; nothing is started here
    env = RepoEnvironment("docker", "abc", "python", "ecd-tiny-textkit:0.3.1-abc", "tiny-textkit==0.3.1", "tinytext")
    cmd = backend.run_command(env, tmp_path, name="ecd-verify-x")

    def value(flag):
        return cmd[cmd.index(flag) + 1]

    assert (value("--network"), value("--user"), value("--memory"), value("--cpus"), value("--pids-limit")) == (
        "none", "65534:65534", "2048m", "0.5", "128")
    assert "--read-only" in cmd and value("--cap-drop") == "ALL" and value("--workdir") == "/app"
    assert f"{tmp_path / 'work'}:/app:rw" in cmd  # the delivery contract's folder
    assert cmd[cmd.index(env.root) + 1:] == ["python", "-I", "-S", "/ecd/harness/launch.py", "/ecd/harness/spec.json"]


def test_limits_are_validated():
    with pytest.raises(ConfigError):
        ContainerBackend(memory_mb=10)
    with pytest.raises(ConfigError):
        ContainerBackend(engine="lxc")


@pytest.fixture(scope="module")
def container_setup():
    """``(base image, engine args)`` that start containers here, or a skip naming what is missing.

    The Dockerfiles pin the official python image by digest; with no registry reachable, a local digest-pinned
    python image of the verified version stands in (``$ECD_CONTAINER_BASE_IMAGE``, or ``localhost/ecd-python:<version>``
    when the engine has one; benchmarks/RESULTS.md says how one was made). The engine's default OCI runtime is tried
    first, then runc (crun refuses hybrid cgroup hosts).
    """
    if ENGINE is None:
        pytest.skip(f"no container engine works here: {WHY_NOT}")
    image = os.environ.get("ECD_CONTAINER_BASE_IMAGE")
    if not image:
        local = f"localhost/ecd-python:{platform.python_version()}"
        proc = subprocess.run([ENGINE, "image", "inspect", "--format", "{{.Digest}}", local], capture_output=True,
                              text=True, check=False)  # fmt: skip
        if proc.returncode != 0 or not proc.stdout.strip().startswith("sha256:"):
            pytest.skip("no python base image here: the Dockerfiles' official image comes from a registry (not "
                        "reachable) and ECD_CONTAINER_BASE_IMAGE names no local one")  # fmt: skip
        image = f"{local}@{proc.stdout.strip()}"
    errors = []
    for engine_args in ((), ("--runtime", "runc")):
        probe = [ENGINE, *engine_args, "run", "--rm", "--network", "none", "--ulimit", "nofile=1024:1024",
                 "--ulimit", "nproc=512:512", image, "python", "-c", "pass"]  # fmt: skip
        proc = subprocess.run(probe, capture_output=True, text=True, timeout=300, check=False)
        if proc.returncode == 0:
            return image, engine_args
        errors.append(proc.stderr.strip()[-200:])
    pytest.skip(f"{ENGINE} cannot start a container here: {errors}")


@pytest.mark.slow
def test_tasks_verify_inside_the_image_built_from_the_generated_dockerfile(tinytext_repo, venv_backend, tmp_path,
                                                                            container_setup):  # fmt: skip
    image, engine_args = container_setup
    backend = ContainerBackend(lock=venv_backend, base_image=image, engine_args=engine_args,
                               cache_dir=tmp_path / "containers", work_root=tmp_path)  # fmt: skip
    env = backend.prepare(tinytext_repo)
    assert env.versions["tiny-textkit"] == "0.3.1" and backend.spec_of(env).image_tag == env.root
    good = code_instruct.parse(answer("tinytext", "good_caption"))
    verdict = verify_task(good.test, good.solution, environment=env, backend=backend, timeout_s=120)
    assert verdict.result.ok and verdict.stage_a.status == "failed" and verdict.stage_b.status == "passed"
    crash = verify_task(good.test, "import os\nos._exit(0)\n", environment=env, backend=backend, timeout_s=120)
    assert crash.result.reason == "verify_crashed"


@pytest.mark.slow
def test_an_exported_folder_builds_as_it_is_and_reverifies_in_its_image(tinytext_repo, tinytext_env, venv_backend,
                                                                         tmp_path, container_setup):  # fmt: skip
    """The folder's own Dockerfile (only FROM swapped for the local stand-in with ``--from``), then both stages."""
    from evolvecoder_datasets.code_instruct import (
        CodeInstructRun,
        YieldReport,
        export_task_folders,
        verify_task_folder,  # fmt: skip
    )

    image, engine_args = container_setup
    good = code_instruct.parse(answer("tinytext", "good_slugs"))
    checked = verify_task(good.test, good.solution, environment=tinytext_env, backend=venv_backend, timeout_s=120)
    assert checked.result.ok
    task = Task(id="tiny_textkit_slugs", problem=good.problem, instruction=good.problem, test=good.test,
                solution=good.solution, repo="tiny-textkit", repo_version="0.3.1", package="tinytext",
                path="src/tinytext/core.py", start_line=1, end_line=40, model="scripted", attempts=1, seed_index=0,
                environment=f"venv:{tinytext_env.key}")  # fmt: skip
    run = CodeInstructRun([task], YieldReport(), tinytext_env, repository=tinytext_repo)
    (folder,) = export_task_folders(run, tmp_path / "tasks", include_judged_inside=True)
    backend = ContainerBackend(engine_args=engine_args, build_args=("--from", image), cache_dir=tmp_path / "c",
                               work_root=tmp_path)  # fmt: skip
    verdict = verify_task_folder(folder, backend=backend, timeout_s=120)
    assert verdict.result.ok and verdict.stage_a.status == "failed" and verdict.stage_b.status == "passed"
