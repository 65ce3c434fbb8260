"""Frames are believed only as far as they are checked, both ways.

The service's front read a frame by allocating what its 4-byte header declared (256 MiB for one header), and took
a job's declared test count on faith (a job that said 10**9 tests left the service answering no later caller).
The caller took any reply of the right first word as verdicts. Here: hostile frames against a real service, and
malformed replies from a fake one of this user, each with a control that gets through.
"""

from __future__ import annotations

import marshal
import os
import socket
import struct
import threading
import time

import pytest

from evolvecoder_datasets.errors import ConfigError
from evolvecoder_datasets.execution import Job, Sandbox, _client, _protocol
from evolvecoder_datasets.execution._protocol import MAX_REQUEST_FRAME, encode_job

from .conftest import own_service

RIGHT, TESTS = "def f(x):\n    return x * 2\n", ["assert f(2) == 4", "assert f(3) == 7"]


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    """A service of its own (its own runtime folder) and a sandbox on it; released at the end."""
    with own_service(tmp_path_factory.mktemp("frames") / "svc"):
        with Sandbox(workers=1, mode="fast", timeout_s=1.0) as sb:
            assert sb.run(RIGHT, TESTS).statuses == ["pass", "fail"]  # warm: the judge and its fork server
            yield sb


def _raw(timeout_s: float = 20) -> socket.socket:
    sock = _client._try_connect(_client.service_folder())
    assert sock is not None
    sock.settimeout(timeout_s)
    return sock


def _service_pid() -> int:
    sock = _raw()
    _protocol.send(sock, ("ping",))
    pid = _protocol.recv(sock)[1]
    sock.close()
    return pid


def _rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        return next(int(line.split()[1]) << 10 for line in fh if line.startswith("VmRSS:"))


def _timed_run(sb: Sandbox) -> float:
    started = time.monotonic()
    assert sb.run(RIGHT, TESTS).statuses == ["pass", "fail"]
    return time.monotonic() - started


def test_a_header_over_the_cap_is_refused_by_its_header_without_allocating(service):
    pid = _service_pid()
    before = _rss(pid)
    sock = _raw()
    sock.sendall(struct.pack(">I", 10**9))  # and nothing after it
    reply = _protocol.recv(sock)
    assert reply[:2] == ("error", "ConfigError") and "over the execution service's cap" in reply[2]
    assert sock.recv(1) == b""  # closed
    sock.close()
    assert _rss(pid) - before < 32 << 20  # not the 1 GB declared, nor the old cap's 256 MiB
    # Control: a frame within the cap on a new connection is answered.
    sock = _raw()
    _protocol.send(sock, ("ping",))
    assert _protocol.recv(sock) == ("ok", pid)
    sock.close()


def test_stalled_senders_of_huge_frames_do_not_stop_another_callers_job(service):
    pid = _service_pid()
    assert _timed_run(service) < 5  # control, warm
    before = _rss(pid)
    hostile = []
    for declared in (10**9, MAX_REQUEST_FRAME, MAX_REQUEST_FRAME - 1):
        sock = _raw()
        try:
            sock.sendall(struct.pack(">I", declared) + b"\x00" * (1 << 20))  # 1 MiB of it, then a stall
        except OSError:  # refused by its header (10**9): closed before the MiB was taken
            pass
        hostile.append(sock)
    time.sleep(0.5)
    assert _timed_run(service) < 5  # another caller's job completes meanwhile, verdicts intact
    assert _rss(pid) - before < 64 << 20  # what arrived (2 MiB held), not what was declared (512 MiB)
    for sock in hostile:
        sock.close()
    assert _timed_run(service) < 5


def test_a_job_that_declares_a_billion_tests_is_that_callers_error_and_the_service_keeps_serving(service):
    connections = _client.Connections()
    settings = service._wire()
    job = encode_job(Job(RIGHT, tests=TESTS))
    for bad in [
        ("run", settings, 1, [job], [10**9], [None]),  # the size the front used to believe
        ("run", settings, 1, [job], [2], [(10**9, 5, (1, 1))]),  # a failure-order key of a billion tests
        ("run", settings, 1, [b"not marshal"], [2], [None]),
        ("run", settings, 1, [marshal.dumps(("p", ["t"] * 70_000) + (None,) * 7)], [70_000], [None]),
        ("run", settings[:-1], 1, [job], [2], [None]),
        ("run", settings, 10**9, job, [2], [None]),
    ]:
        reply = connections.request(bad)
        assert reply[:2] == ("error", "ConfigError"), reply
    # Control: the same job with its real size, and another caller's job, on the same service.
    assert connections.request(("run", settings, 1, [job], [2], [None]))[0] == "ok"
    for _ in range(4):  # more jobs than judges: every judge's thread is alive
        assert _timed_run(service) < 5
    connections.close()


def test_a_job_over_the_caps_is_refused_in_the_caller_before_anything_is_sent(service):
    with pytest.raises(ConfigError, match="at most 65536"):
        service.run(RIGHT, ["assert True"] * 65_537)
    assert service.run(RIGHT, ["assert True"] * 100).statuses == ["pass"] * 100  # control


# -- replies ------------------------------------------------------------------------------------------------------
class _FakeService:
    """A service of this user that answers ``start`` and then whatever ``answer`` says to each ``run``."""

    def __init__(self, folder: str, answer) -> None:
        self.answer, self.runs = answer, []
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(os.path.join(folder, "service.sock"))
        self.listener.listen(8)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._talk, args=(conn,), daemon=True).start()

    def _talk(self, conn: socket.socket) -> None:
        try:
            self._answer_all(conn)
        except OSError:  # the caller hung up
            pass
        finally:
            conn.close()

    def _answer_all(self, conn: socket.socket) -> None:
        while (request := _protocol.recv(conn, MAX_REQUEST_FRAME)) is not None:
            if request[0] != "run":
                _protocol.send(conn, ("ok", None))
                continue
            self.runs.append(request)
            answer = self.answer(request)
            if isinstance(answer, bytes):
                conn.sendall(answer)
            else:
                _protocol.send(conn, answer)

    def close(self) -> None:
        self.listener.close()


def _report(statuses, **fields) -> bytes:
    n = len(statuses)
    values = {"messages": [""] * n, "cpu": [0.0] * n, "isolation": "none", "dropped": False, "infra": None,
              "judged": ["outside"] * n, **fields}  # fmt: skip
    return marshal.dumps((statuses, values["messages"], values["cpu"], values["isolation"], values["dropped"],
                          values["infra"], values["judged"]))  # fmt: skip


MALFORMED = {
    "not_a_reply": ("pass",),
    "not_a_list": ("ok", "pass"),
    "too_few_reports": ("ok", []),
    "more_tests_than_asked": ("ok", [_report(["pass", "pass", "pass"])]),
    "unknown_status": ("ok", [_report(["passed", "pass"])]),
    "a_string_for_cpu": ("ok", [_report(["pass", "pass"], cpu=["0", "0"])]),
    "not_marshal": ("ok", [b"\xff\xfe garbage"]),
    "a_code_object": ("ok", [marshal.dumps(compile("1", "x", "eval"))]),
    "an_int_for_uid_dropped": ("ok", [_report(["pass", "pass"], dropped=1)]),
    "a_header_of_2_gib": struct.pack(">I", (2 << 30) - 1) + b"\x00" * 64,
}


@pytest.fixture
def fake_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("EVOLVECODER_SERVICE_DIR", str(tmp_path / "svc"))
    return _client.service_folder()


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_reply_is_an_infrastructure_failure_never_a_verdict(fake_folder, case):
    fake = _FakeService(fake_folder, lambda request: MALFORMED[case])
    try:
        with Sandbox(workers=1, isolation="none") as sb:
            report = sb.run("def f(x):\n    return 0", TESTS)  # a wrong program: any pass would be believed
    finally:
        fake.close()
    assert len(fake.runs) == 1  # asked once: a malformed reply is not retried into a second run
    assert report.statuses == ["crash", "crash"] and report.infra_error, (case, report)
    assert "malformed" in report.infra_error or "reports for" in report.infra_error


def test_a_well_formed_reply_is_read_as_sent(fake_folder):
    """Control for the malformed replies: the same fake, answering in the protocol's shape."""
    fake = _FakeService(fake_folder, lambda request: ("ok", [_report(["pass", "fail"])]))
    try:
        with Sandbox(workers=1, isolation="none") as sb:
            report = sb.run("def f(x):\n    return 0", TESTS)
    finally:
        fake.close()
    assert report.statuses == ["pass", "fail"] and report.infra_error is None


def test_a_batch_over_one_frame_goes_as_several_and_comes_back_in_order(fake_folder, monkeypatch):
    monkeypatch.setattr(_protocol, "MAX_REQUEST_FRAME", 60_000)

    def answer(request):
        return ("ok", [_report(["pass"] * marshal.loads(job)[1].count("assert True")) for job in request[3]])

    fake = _FakeService(fake_folder, answer)
    programs = [f"x = {i}  # " + "y" * 10_000 for i in range(12)]
    try:
        with Sandbox(workers=1, isolation="none") as sb:
            reports = sb.run_many([(p, ["assert True"] * (i + 1)) for i, p in enumerate(programs)])
            with pytest.raises(ConfigError, match="job 0 takes"):
                sb.run("z" * 70_000, ["assert True"])
    finally:
        fake.close()
    assert [len(r.statuses) for r in reports] == list(range(1, 13))
    assert len(fake.runs) >= 2 and all(len(marshal.dumps(run)) <= 60_000 for run in fake.runs)
    assert [marshal.loads(job)[0] for run in fake.runs for job in run[3]] == programs  # none lost, none twice
