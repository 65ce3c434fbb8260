"""A run whose model cannot be reached ends in seconds with one ``error:`` line, as a user would see it.

Each case runs the shipped entry point in a fresh process (``python recipes/code_instruct.py CONFIG`` and
``evolvecoder-datasets run CONFIG``) against real loopback endpoints: a closed port, and a small HTTP server that
answers every request with 500 or 401. The bound is the issue's: the process must end within 15 s (the
subprocess is killed, and the test fails, past it); the environment holds no key unless the case sets one.
"""

from __future__ import annotations

import http.server
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
LIMIT_S = 15


class _Answering(http.server.ThreadingHTTPServer):
    daemon_threads = True


def _server(status: int) -> _Answering:
    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            if length:
                self.rfile.read(length)
            body = b'{"error": {"message": "scripted failure"}}'
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, *args: object) -> None:
            pass

    server = _Answering(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HF_TOKEN")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def _run(command: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=LIMIT_S, check=False)


def _cli() -> list[str]:
    script = Path(sys.executable).with_name("evolvecoder-datasets")
    return [str(script)] if script.exists() else [sys.executable, "-m", "evolvecoder_datasets.cli"]


def _assert_one_error_line(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and proc.stderr.strip() == errors[0], proc.stderr
    for needle in needles:
        assert needle in errors[0], errors[0]


def _config_with_urls(tmp_path: Path, name: str, url: str) -> Path:
    """A copy of a shipped config with every ``base_url`` pointed at ``url`` (what a user edits first)."""
    data = yaml.safe_load((ROOT / "recipes" / "configs" / name).read_text())
    data["output_dir"] = str(tmp_path / "run")
    if "store" in data:
        data["store"] = str(tmp_path / "store")
    data["llm"]["base_url"] = url
    for model in data.get("models") or []:
        model["llm"]["base_url"] = url
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def test_code_instruct_without_an_api_key_stops_at_once_naming_the_model_and_url(tmp_path):
    proc = _run([sys.executable, "recipes/code_instruct.py", "recipes/configs/code_instruct.yaml",
                 "--output-dir", str(tmp_path / "run")], _env(), ROOT)
    _assert_one_error_line(proc, "'gpt-4o-mini'", "https://api.openai.com/v1", "OPENAI_API_KEY")
    assert not (tmp_path / "run" / "sources").exists()  # nothing was downloaded before the check


def test_evolvecoder_recipe_without_an_api_key_stops_at_once(tmp_path):
    proc = _run([*_cli(), "run", str(ROOT / "recipes/configs/evolvecoder.yaml")], _env(), tmp_path)
    _assert_one_error_line(proc, "'gpt-4o-mini'", "https://api.openai.com/v1", "OPENAI_API_KEY")
    assert not (tmp_path / "runs").exists()  # the run folder was not even created


@pytest.mark.parametrize("entry", ["code_instruct", "evolvecoder"])
@pytest.mark.parametrize("endpoint", ["closed_port", "http_500", "http_401"])
def test_an_unreachable_or_failing_endpoint_ends_the_run_within_seconds(tmp_path, entry, endpoint):
    server = None
    if endpoint == "closed_port":
        url, needle = f"http://127.0.0.1:{_closed_port()}/v1", "cannot connect"
    else:
        server = _server(500 if endpoint == "http_500" else 401)
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        needle = "HTTP 500" if endpoint == "http_500" else "refused the credential (HTTP 401"
    try:
        name = "code_instruct.yaml" if entry == "code_instruct" else "evolvecoder.yaml"
        config = _config_with_urls(tmp_path, name, url)
        command = ([sys.executable, str(ROOT / "recipes/code_instruct.py"), str(config)] if entry == "code_instruct"
                   else [*_cli(), "run", str(config)])
        proc = _run(command, _env(OPENAI_API_KEY="sk-test-not-a-real-key"), tmp_path)
    finally:
        if server is not None:
            server.shutdown()
            server.server_close()
    _assert_one_error_line(proc, url, needle)
