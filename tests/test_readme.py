"""Every ``bash`` and ``python`` block of the README, and every next step the demo and the CLI print, run as pasted.

Each block runs in a fresh process (``bash -e -c`` or ``.venv/bin/python -``) in a folder laid out like a fresh
checkout after the README's two commands: ``.venv`` (the running environment), ``recipes/``, and
``demo-output/store``, the store ``make demo`` leaves. Blocks run in README order in that one folder, so a block may
use what an earlier block wrote (``runs/readme/store``), as a reader following the page would.

Placeholder convention (the only things filled in):

* ``demo-output/store`` is what ``make demo`` writes; here it is a store with the same revisions (``round0``..
  ``round2``, ``main``) written by the no-LLM recipe on 4 seeds, a faithful stand-in that takes seconds, not minutes;
* ``your.yaml`` (the demo's last step) is the user's own copy of a shipped config; here a copy of
  ``recipes/configs/search_only.yaml`` shrunk to 4 seeds;
* a block whose first line is a comment ``# needs ...`` states what it needs that a test machine lacks (the Hub, a
  GPU); it is compiled and checked for undefined names, not run;
* a block that starts a server (``evolvecoder-datasets serve``) is run as a reader runs it in a second terminal: in
  the background, ready once its ``/health`` answers, left running for the blocks after it (the ``curl`` that
  talks to it), and stopped with SIGTERM at the end, when it must exit cleanly;
* the README's ``make demo`` / ``make test`` block is not run here: ``make test`` is this test suite (CI runs exactly
  it) and ``make demo`` is the ~5-9 minute embedded default whose parts ``tests/test_demo.py`` runs.

Blocks that take over ~30 s (a SmolLM2 GRPO step on CPU) are marked slow; CI runs them.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from evolvecoder_datasets._parse import bound_names

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
RUNNABLE = {"bash": "bash", "sh": "bash", "shell": "bash", "python": "python", "py": "python"}
NOT_RUN = {"make test": "make test is this test suite (CI runs exactly it); make demo is tested in parts "
                        "(tests/test_demo.py) and takes ~3.5 min"}
SLOW = ("recipes/grpo_train.py",)  # SmolLM2 on CPU: a GRPO step takes about a minute
TIMEOUT_S = 600
SERVER = re.compile(r"evolvecoder-datasets serve\b.*?--port (\d+)")  # a block a reader leaves running


def readme_blocks() -> list[tuple[str, str]]:
    """``(language, code)`` of every fenced block whose language is runnable, in README order."""
    text = README.read_text(encoding="utf-8")
    return [(RUNNABLE[m.group(1)], m.group(2)) for m in FENCE.finditer(text) if m.group(1) in RUNNABLE]


def _block_id(block: tuple[str, str]) -> str:
    first = next((line for line in block[1].splitlines() if line.strip() and not line.startswith("#")), "")
    return f"{block[0]}:{first.strip()[:50]}"


BLOCKS = readme_blocks()


def _workdir_store(workdir: Path) -> None:
    """``demo-output/store`` as ``make demo`` leaves it (same revisions), written by the no-LLM recipe."""
    from evolvecoder_datasets.config import load_config
    from evolvecoder_datasets.recipe import run_recipe

    _, config = load_config(ROOT / "recipes" / "configs" / "search_only.yaml")
    run_recipe(dataclasses.replace(config, output_dir=str(workdir / "demo-output"), limit_per_source=4, rounds=2,
                                   figures=False))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fresh-checkout")
    venv = ROOT / ".venv" if (ROOT / ".venv" / "bin" / "python").exists() else Path(sys.prefix)
    (folder / ".venv").symlink_to(venv, target_is_directory=True)
    (folder / "recipes").symlink_to(ROOT / "recipes", target_is_directory=True)
    shutil.copy(README, folder / "README.md")
    _workdir_store(folder)
    your = yaml.safe_load((ROOT / "recipes" / "configs" / "search_only.yaml").read_text())
    your.update(output_dir="runs/yours", limit_per_source=4, rounds=1, figures=False)
    (folder / "your.yaml").write_text(yaml.safe_dump(your))
    return folder


@pytest.fixture(scope="module")
def servers():
    """Servers the README starts, stopped after the last block; each must end cleanly on SIGTERM."""
    started: list[subprocess.Popen] = []
    yield started
    for proc in started:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail("a README server did not stop on SIGTERM within 30 s")
        assert code == 0, f"a README server exited {code} on SIGTERM"


def _start_server(code: str, port: int, cwd: Path) -> subprocess.Popen:
    """Run a server block in the background and return once its health endpoint answers."""
    proc = subprocess.Popen(["bash", "-e", "-c", code.strip()], cwd=cwd, env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the server block exited {proc.returncode}:\n{code}\n{proc.stderr.read()[-3000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
                if answer.status == 200:
                    return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    pytest.fail(f"the server block never answered /health on port {port}:\n{code}")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "HF_TOKEN")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")  # the code under test, as installed
    return env


def _run(language: str, code: str, cwd: Path) -> subprocess.CompletedProcess:
    if language == "bash":
        command, stdin = ["bash", "-e", "-o", "pipefail", "-c", code], None
    else:
        command, stdin = [str(cwd / ".venv" / "bin" / "python"), "-"], code
    return subprocess.run(command, cwd=cwd, env=_env(), input=stdin, capture_output=True, text=True,
                          timeout=TIMEOUT_S, check=False)


def undefined_names(code: str) -> set[str]:
    """Names a Python block reads but neither imports, assigns nor gets from builtins (a NameError waiting).

    Example:
        >>> sorted(undefined_names("import os\\nx = 1\\nprint(x, y, os.sep)"))
        ['y']
    """
    tree = ast.parse(code)
    bound = set(dir(builtins)) | bound_names(tree)
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound


def test_the_readme_has_runnable_blocks_in_both_languages():
    languages = [language for language, _ in BLOCKS]
    assert languages.count("bash") >= 2 and languages.count("python") >= 4, languages


@pytest.mark.parametrize("index", range(len(BLOCKS)), ids=[_block_id(b) for b in BLOCKS])
def test_readme_block_runs_as_pasted(index, workdir, servers, request):
    language, code = BLOCKS[index]
    if "..." in code.replace('"..."', ""):
        pytest.fail(f"the block holds an ellipsis a user cannot paste:\n{code}")
    if language == "python":
        compile(code, f"README block {index}", "exec")
        missing = undefined_names(code)
        assert not missing, f"names the block never defines: {sorted(missing)}"
    for needle, reason in NOT_RUN.items():
        if needle in code:
            pytest.skip(f"not run here: {reason}")
    first = code.lstrip().splitlines()[0] if code.strip() else ""
    if first.startswith("# needs "):
        pytest.skip(f"compiled, not run: the block says it {first[2:]}")
    if any(marker in code for marker in SLOW) and not request.config.getoption("--run-slow"):
        pytest.skip("slow (SmolLM2 on CPU): run with --run-slow (CI does)")
    server = SERVER.search(code) if language == "bash" else None
    if server:
        servers.append(_start_server(code, int(server.group(1)), workdir))
        return
    proc = _run(language, code, workdir)
    assert proc.returncode == 0, f"{code}\n--- stdout\n{proc.stdout[-2000:]}\n--- stderr\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]


def _next_steps(workdir: Path) -> list[tuple[str, str]]:
    from evolvecoder_datasets import demo

    here = Path.cwd()
    os.chdir(workdir)  # the commands are spelled for the folder the demo ran in
    try:
        return demo.next_steps(workdir / "demo-output" / "store", 2)
    finally:
        os.chdir(here)


@pytest.mark.parametrize("index", range(6))
def test_every_next_step_the_demo_prints_runs_as_printed(index, workdir, request):
    steps = _next_steps(workdir)
    assert len(steps) == 6
    what, command = steps[index]
    assert command.split()[0] in ("git", ".venv/bin/evolvecoder-datasets", ".venv/bin/python"), command
    if any(marker in command for marker in SLOW) and not request.config.getoption("--run-slow"):
        pytest.skip("slow (SmolLM2 on CPU): run with --run-slow (CI does)")
    proc = _run("bash", command, workdir)
    assert proc.returncode == 0, f"{what}: {command}\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr and proc.stdout.strip(), proc.stderr[-2000:]


def test_the_cli_s_next_step_for_a_training_config_runs_as_printed(workdir, request):
    proc = _run("bash", ".venv/bin/evolvecoder-datasets run recipes/configs/grpo_cpu_smoke.yaml", workdir)
    assert proc.returncode == 2
    command = re.search(r"train with `([^`]+)`", proc.stderr).group(1)
    assert command.startswith(".venv/bin/python recipes/grpo_train.py"), command
    if not request.config.getoption("--run-slow"):
        pytest.skip("slow (SmolLM2 on CPU): run with --run-slow (CI does)")
    out = _run("bash", command + " --output_dir runs/grpo-smoke", workdir)
    assert out.returncode == 0, out.stderr[-3000:]
