"""The fork server's frames are typed (``_forkserver/job.py``): what the caller builds is what the server reads.

- the parser refuses a frame that lacks a field or holds one of another type, with a typed error naming the field;
- every frame the caller side builds (program jobs by the engine, compile and check jobs by ``_tools``, the
  server's own warm-up) parses, so no default is left for the server to fill in;
- a real fork server answers a malformed job with that job's infrastructure error and goes on serving;
- a caller refuses a server whose hello names another protocol version, with a typed error naming both;
- the progress writer sends with what it is given, and no module of the server imports ``server`` for a type;
- the judge process frames jobs from the settings tuple its request carried, building no settings object.
"""

from __future__ import annotations

import ast
import sys
import time
from pathlib import Path

import pytest

from evolvecoder_datasets.errors import SandboxCrashed, SandboxProtocolError
from evolvecoder_datasets.execution import Job, _engine, _tools
from evolvecoder_datasets.execution._forkserver import job as frames
from evolvecoder_datasets.execution._forkserver.job import PROTOCOL_VERSION, JobError, parse_job, request_word
from evolvecoder_datasets.execution._worker import _Worker
from evolvecoder_datasets.execution.checkers import Checker
from evolvecoder_datasets.execution.isolation import (
    SERVER_PACKAGE,
    detect_isolation,
    server_command,
    server_env,
)

PROGRAM = "def f(x):\n    return x + 1\n"
TESTS = ["assert f(1) == 2", "assert f(2) == 4"]


def _engine_frame(job: Job) -> dict:
    """The frame the engine sends for ``job`` (built, not sent: nothing starts)."""
    return _engine.LocalEngine(workers=1, timeout_s=1.0)._job_message(job, 62000)


def _tool_frames(monkeypatch) -> list[dict]:
    """The compile and check frames ``_tools`` builds, caught where they would be sent."""
    sent: list[dict] = []

    def catch(self, role, message, deadline):
        sent.append({**message, "id": 1, "uid": 62000, "mode": "isolated"})  # what _call adds on the way out
        return None, RuntimeError("not sent")

    monkeypatch.setattr(_tools.Tools, "_call", catch)
    tools = _tools.Tools("none", _engine._Pool)
    tools._compile("cpp", "int main() {}")
    tools.check(Checker("def main(): pass", language="python"), [(0, "1\n", "2\n", "2\n")])
    return sent


def test_every_frame_the_caller_side_builds_parses_as_its_kind(monkeypatch):
    built = [_engine_frame(Job(PROGRAM, tests=TESTS)), _engine_frame(Job("print(1)", inputs=["\n"], outputs=["1\n"])),
             *_tool_frames(monkeypatch), frames.WARM_UP]  # fmt: skip
    kinds = [parse_job(frame).kind for frame in built]
    assert kinds == ["assert", "stdio", "compile", "check", "assert"]
    check = parse_job(built[3])
    assert check.source == "def main(): pass" and check.binary is None and check.cases == (("1\n", "2\n", "2\n"),)
    assert parse_job(built[2]).pch is not None  # C++ sends its precompiled header, read into its record
    assert parse_job(built[0]).frame() == {**built[0], "tests": tuple(built[0]["tests"])}


@pytest.mark.parametrize("kind", ["assert", "stdio"])
def test_a_frame_missing_any_field_is_refused_with_a_typed_error_naming_it(kind):
    frame = _engine_frame(Job(PROGRAM, tests=TESTS) if kind == "assert" else Job("print(1)", inputs=["\n"]))
    record = frames.KINDS[kind]
    for name, _ in record.FIELDS:
        broken = {k: v for k, v in frame.items() if k != name}
        with pytest.raises(JobError, match=f"{record.__name__} field '{name}' is missing"):
            parse_job(broken)


@pytest.mark.parametrize(("name", "value"), [("timeout_s", "1.0"), ("memory_mb", True), ("memory_mb", 512.0),
                                             ("tests", "assert f(1) == 2"), ("tests", ["ok", 3]),
                                             ("max_consecutive_timeouts", 1.5), ("stop_on_failure", 1),
                                             ("uid", "62000"), ("preamble", 3), ("mode", "quick")])  # fmt: skip
def test_a_field_of_another_type_is_refused_with_a_typed_error_naming_it(name, value):
    frame = {**_engine_frame(Job(PROGRAM, tests=TESTS)), name: value}
    with pytest.raises(JobError, match=f"field '{name}' must be") as caught:
        parse_job(frame)
    assert isinstance(caught.value, ValueError)


def test_frames_that_name_no_job_are_refused():
    good = _engine_frame(Job(PROGRAM, tests=TESTS))
    for frame, said in [([1, 2], "JSON object"), ({**good, "kind": "lint"}, "no job is of kind 'lint'"),
                        ({**good, "op": "reload"}, "no op 'reload'"), ({**good, "kind": None}, "kind None")]:  # fmt: skip
        with pytest.raises(JobError, match=said):
            parse_job(frame)
    check = {**frames.WARM_UP, "kind": "check", "contract": "testlib", "cases": [], "source": None, "binary": None}
    with pytest.raises(JobError, match="'source' or a 'binary'"):
        parse_job(check)
    words = [request_word(m) for m in (None, {"op": "shutdown"}, {"op": "ping"}, {"op": "stop"}, good)]
    assert words == ["shutdown", "shutdown", "ping", "stop", "job"]


def test_a_job_record_is_frozen():
    job = parse_job(frames.WARM_UP)
    with pytest.raises(AttributeError, match="frozen"):
        job.timeout_s = 100.0
    assert job.replace(timeout_s=2.0).timeout_s == 2.0 and job.timeout_s == 1.0


@pytest.fixture(scope="module")
def worker():
    one = _Worker(server_command(detect_isolation("auto")), server_env())
    one.start()
    yield one
    one.close()
    one.release_uid()


def _frame_for(worker: _Worker, job: Job) -> dict:
    return _engine.LocalEngine(workers=1, timeout_s=1.0)._job_message(job, worker.uid)


def test_the_server_answers_a_malformed_job_with_its_infra_error_and_serves_on(worker):
    good = _frame_for(worker, Job(PROGRAM, tests=TESTS))
    missing = {k: v for k, v in good.items() if k != "timeout_s"}
    reply = worker.call(missing, 30.0)
    assert reply["id"] == good["id"] and reply["statuses"] == ["crash", "crash"], reply
    assert "AssertJob field 'timeout_s' is missing" in reply["infra_error"]
    assert reply["messages"][0].startswith("malformed job: JobError:")
    stdio = _frame_for(worker, Job("print(input())", inputs=["1\n", "2\n", "3\n"]))
    del stdio["binary"]  # a Python program's frame says so: null, never absent
    reply = worker.call(stdio, 30.0)
    assert reply["statuses"] == ["crash"] * 3 and "'binary' is missing" in reply["infra_error"], reply
    reply = worker.call({**good, "memory_mb": "1024"}, 30.0)
    assert "'memory_mb' must be an integer" in reply["infra_error"], reply
    reply = worker.call({**good, "kind": "lint"}, 30.0)
    assert reply["statuses"] == ["crash", "crash"] and "no job is of kind 'lint'" in reply["infra_error"]
    assert worker.alive
    worker._send({"op": "ping"})
    assert worker._recv(deadline=time.monotonic() + 10) == {"pong": True}
    reply = worker.call(good, 30.0)  # the same server runs the well-formed job as ever
    assert reply.get("infra_error") is None and reply["statuses"] == ["value", "value"], reply


_FAKE_SERVER = """
import json, os, struct, sys
body = json.dumps({{"hello": {version}, "pid": os.getpid(), "uid_drop": False, "python": "3"}}).encode()
os.write(1, struct.pack(">I", len(body)) + body)
sys.stdin.read()
"""


def test_a_hello_in_another_protocol_version_is_refused_with_a_typed_error_naming_both():
    other = PROTOCOL_VERSION + 1
    fake = _Worker([sys.executable, "-c", _FAKE_SERVER.format(version=other)], {})
    try:
        with pytest.raises(SandboxProtocolError, match=f"version {other} and this caller version {PROTOCOL_VERSION}"):
            fake.start()
        assert fake.proc is None  # the server is ended, not handed a job
    finally:
        fake.kill()
        fake.release_uid()
    assert issubclass(SandboxProtocolError, SandboxCrashed)  # its job's cells are infrastructure failures


def test_a_real_server_that_says_another_version_is_refused():
    """The version in the real hello is ``job.PROTOCOL_VERSION``, read when the hello is sent."""
    patch = "import _forkserver.job as _j; _j.PROTOCOL_VERSION = 4; "
    command = [arg.replace("_forkserver.main()", patch + "_forkserver.main()") for arg in server_command("none")]
    old = _Worker(command, server_env())
    try:
        with pytest.raises(SandboxProtocolError, match=f"version 4 and this caller version {PROTOCOL_VERSION}"):
            old.start()
    finally:
        old.kill()
        old.release_uid()


def test_the_progress_writer_sends_with_what_it_is_given_and_nothing_imports_the_server_for_a_type():
    from evolvecoder_datasets.execution._forkserver.progress import _Progress

    sent: list = []
    job = parse_job({**frames.WARM_UP, "stop_on_failure": True})
    values = ["AAA=", None, None]
    progress = _Progress(job, values, sent.append, lambda: {"op": "stop"})
    assert progress.stopped(["value", None, None]) is False and sent == [{"progress": [0], "value": ["AAA="]}]
    assert progress.stopped(["value", "timeout", None]) is True  # a timeout the server saw stops the job
    assert _Progress(job, values, sent.append, lambda: {"op": "stop"}).caller_says_stop() is True
    importers = []
    for path in sorted(Path(SERVER_PACKAGE).glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module == "server":
                importers.append(path.name)
    assert importers == ["startup.py"]


def test_the_judge_process_frames_jobs_from_the_settings_tuple_it_received(monkeypatch):
    """The judge process builds no settings object of its own (``LocalEngine.from_wire``): its engine keeps the
    request's tuple as it came and every sandbox value in a frame is read from it, so no default of
    ``SandboxSettings`` can reach a fork server on that path. Checked by making ``SandboxSettings`` unbuildable while
    the judge's engine is made and frames a job, with values that differ from every default."""
    from evolvecoder_datasets import limits
    from evolvecoder_datasets.execution._judge_process import _Judge
    from evolvecoder_datasets.execution._protocol import SETTINGS, wire_settings

    chosen = limits.SandboxSettings(timeout_s=0.3, memory_mb=300, mode="fast", wall_timeout_s=2.5, preamble="B = 1",
                                    max_output_bytes=5000, max_processes=9, max_open_files=77,
                                    max_consecutive_timeouts=3, max_value_bytes=12345)  # fmt: skip
    wire = wire_settings(chosen, "none")
    judge = _Judge()
    monkeypatch.setattr(judge, "pool", lambda isolation, python_env: _engine._Pool(isolation, 1, python_env))

    def refused(*args, **kwargs):
        raise AssertionError("a SandboxSettings was built in the judge process")

    monkeypatch.setattr(limits.SandboxSettings, "__init__", refused)
    engine = judge.engine(wire)
    assert engine.wire is wire and judge.engine(wire) is engine  # the tuple as received, one engine per tuple
    frame = engine._job_message(Job(PROGRAM, tests=TESTS), 62000)
    sent = dict(zip(SETTINGS, wire))
    for name in ("timeout_s", "memory_mb", "mode", "wall_timeout_s", "load_timeout_s", "preamble", "max_output_bytes",
                 "max_processes", "max_open_files", "max_consecutive_timeouts", "max_value_bytes"):
        assert frame[name] == sent[name], name
    assert parse_job(frame).timeout_s == 0.3
    # a job's own smaller limit still wins, and the wall limit follows it
    small = engine._job_message(Job(PROGRAM, tests=TESTS, timeout_s=0.1), 62000)
    assert (small["timeout_s"], small["wall_timeout_s"]) == (0.1, limits.SandboxSettings.default_wall_s(0.1))
