"""``evolvecoder-datasets serve`` from the README's own words, in a fresh process: it starts, answers the README's
``curl`` with the reward, and shuts down cleanly on SIGTERM (exit status 0, no process left behind)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request

import pytest

from .conftest import ROOT


def readme_line(prefix: str) -> str:
    lines = [line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines() if line.startswith(prefix)]
    assert len(lines) == 1, f"the README has {len(lines)} lines starting with {prefix!r}"
    return lines[0]


def descendants(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except OSError:
                continue
    return found


def test_the_readmes_serve_command_starts_scores_and_shuts_down_cleanly():
    serve = readme_line("EVOLVECODER_REWARD_TOKEN=change-me .venv/bin/evolvecoder-datasets serve")
    curl = readme_line("curl -s -H \"Authorization: Bearer change-me\" http://127.0.0.1:8765/score")
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", 8765)) == 0:
            pytest.skip("port 8765 (the README's) is taken on this machine")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's package, as the venv's editable install is
    # A runtime folder of its own, as on a machine where serve is the only caller: the execution service it starts
    # is its child (the test session's own service, shared by the other tests, is not serve's to stop).
    env["EVOLVECODER_SERVICE_DIR"] = tempfile.mkdtemp(prefix="ecd-serve-", dir="/tmp")
    proc = subprocess.Popen(["bash", "-c", serve], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                health = json.loads(urllib.request.urlopen("http://127.0.0.1:8765/health", timeout=5).read())
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read()
                time.sleep(0.2)
        assert health["status"] == "ok" and health["mode"] == "fast"
        fork_servers = descendants(proc.pid)
        assert fork_servers  # the service's sandbox is up under it
        answer = subprocess.run(["bash", "-c", curl], capture_output=True, text=True, timeout=60, check=True)
        assert json.loads(answer.stdout) == {"rewards": [1.0], "infra": [False]}
        wrong = subprocess.run(["bash", "-c", curl.replace("Bearer change-me", "Bearer guess")], capture_output=True,
                               text=True, timeout=60, check=True)  # fmt: skip
        assert "wrong token" in wrong.stdout
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
    assert "serving code_reward (fast," in out and "shutting down" in out
    assert all(not os.path.exists(f"/proc/{pid}") for pid in fork_servers)
    shutil.rmtree(env["EVOLVECODER_SERVICE_DIR"], ignore_errors=True)
