"""Ctrl-C during ``evolvecoder-datasets run``: one line naming what is kept and the command that resumes; the rerun
says what it reused.

A real run of the no-LLM recipe in a fresh process, interrupted with a real SIGINT once its first stage is saved.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _cli() -> list[str]:
    script = Path(sys.executable).with_name("evolvecoder-datasets")
    return [str(script)] if script.exists() else [sys.executable, "-m", "evolvecoder_datasets.cli"]


@pytest.mark.slow  # ~1 min: a real run, interrupted, then finished
def test_ctrl_c_ends_with_one_line_and_the_rerun_says_what_it_reused(tmp_path):
    config = yaml.safe_load((ROOT / "recipes/configs/search_only.yaml").read_text())
    config.update(output_dir=str(tmp_path / "run"), limit_per_source=12, rounds=1, figures=False)
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    # A terminal's Ctrl-C reaches a run whose SIGINT is at its default. A suite started in the background of a
    # non-interactive shell (``pytest ... &``) ignores SIGINT, and a child inherits an ignored signal through exec,
    # so the run is started with SIGINT put back to the default first.
    proc = subprocess.Popen([*_cli(), "run", str(path)], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # noqa: PLW1509
    stages = tmp_path / "run" / "stages"
    deadline = time.monotonic() + 300
    while not list(stages.glob("*/checkpoint.json")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    last = err.strip().splitlines()[-1]
    assert last.startswith("interrupted: finished stages are kept in ") and f"{tmp_path / 'run'}/stages" in last
    command = last.split("resume with: ", 1)[1]
    assert command.endswith(f"run {path}")

    rerun = subprocess.run(command.split(), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
                           check=False)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "reusing stage 00_seeds" in rerun.stderr or "reusing stage 01_refine" in rerun.stderr, rerun.stderr[-2000:]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the finalizer's, on purpose
def test_a_ctrl_c_that_lands_in_a_finalizer_still_stops_the_run_at_its_next_step():
    """Python runs a SIGINT handler wherever the main thread is, a finalizer included, and an exception raised in a
    ``__del__`` (``Dataset.__del__``) is printed and dropped: a CI run saw the whole recipe finish with status 0 after
    its Ctrl-C landed there. The CLI's handler keeps a note of the interrupt, and the run's next step line honours it;
    the line of a step that is already ending says it stopped, once."""
    import gc
    import io

    from evolvecoder_datasets.recipe.progress import on_interrupt, run_progress, step, stepping

    class Finalized:
        def __del__(self):
            on_interrupt(signal.SIGINT, None)  # what Python does when the signal arrives during the finalizer

    out = io.StringIO()
    with run_progress(True, stream=out):
        with pytest.raises(KeyboardInterrupt), stepping("round 1: new tests"):
            Finalized()
            gc.collect()  # the interrupt was swallowed: the step goes on
            step("publishing round 1 …")  # the next line stops the run
        step("a later line prints")  # honoured once, not again
    lines = [line.split("] ", 1)[1] for line in out.getvalue().splitlines()]
    assert lines[0] == "round 1: new tests …" and lines[2:] == ["a later line prints"], lines
    assert lines[1].startswith("round 1: new tests: stopped after ") and lines[1].endswith(" s"), lines
