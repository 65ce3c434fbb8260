"""The container backend: engine detection, the run command's confinement, and (where an engine works) building the
exported Dockerfile and verifying inside it. Without a working engine those tests skip with the engine's own reason;
the Dockerfile itself is still checked statically (test_export.py) and by Harbor's linter."""

from __future__ import annotations

import pytest

from evolvecoder_datasets.code_instruct import ContainerBackend, RepoEnvironment, detect_engine, verify_task
from evolvecoder_datasets.errors import ConfigError, EnvironmentBuildError, SandboxUnavailable
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


@pytest.mark.slow
@pytest.mark.skipif(ENGINE is None, reason=f"no container engine works here: {WHY_NOT}")
def test_tasks_verify_inside_the_image_built_from_the_exported_dockerfile(tinytext_repo, venv_backend, tmp_path):
    backend = ContainerBackend(lock=venv_backend, cache_dir=tmp_path / "containers", work_root=tmp_path)
    try:
        env = backend.prepare(tinytext_repo)
    except EnvironmentBuildError as err:
        pytest.skip(f"cannot build the image (base image not pullable here?): {str(err)[-300:]}")
    assert env.versions["tiny-textkit"] == "0.3.1" and backend.spec_of(env).image_tag == env.root
    good = code_instruct.parse(answer("tinytext", "good_caption"))
    verdict = verify_task(good.test, good.solution, environment=env, backend=backend, timeout_s=120)
    assert verdict.result.ok and verdict.stage_a.status == "failed" and verdict.stage_b.status == "passed"
    crash = verify_task(good.test, "import os\nos._exit(0)\n", environment=env, backend=backend, timeout_s=120)
    assert crash.result.reason == "verify_crashed"
