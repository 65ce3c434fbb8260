"""A frame's marshal data is believed only once it is proven plain: what decoding it costs is what arrived.

A frame's header was checked, the marshal data inside it was not. ``marshal.loads`` makes a container of the size
the data declares before it reads one item: 13 bytes declaring a tuple of 2**26 items took the service's front to
540 MiB (2**31 items would be 16 GiB, the whole of a small machine), in a request or in a job inside one, and a
fake service's 13-byte reply did the same to the caller. Shared items come back shared: a key of 196 bytes (a tuple
of two references to a tuple of two ..., 26 levels) made the front spend 2.7 s of CPU hashing it with the GIL held,
every caller stopped meanwhile (10.9 s at 28 levels). Here each such frame, with a control that gets through.
"""

from __future__ import annotations

import fcntl
import marshal
import os
import struct
import termios
import threading
import time

import pytest

from evolvecoder_datasets.execution import Job, Sandbox, _client, _protocol, run_tests
from evolvecoder_datasets.execution._protocol import encode_job

from .conftest import own_service
from .test_service_frames import _FakeService
from .test_service_frames import _raw as _raw_socket
from .test_service_frames import _service_pid as _front_pid

RIGHT, TESTS = "def f(x):\n    return x * 2\n", ["assert f(2) == 4", "assert f(3) == 7"]
CLAIM = 1 << 26  # items a 13-byte tuple declares: 512 MiB of item pointers, written, where it is believed
HUGE_TUPLE = b"(" + struct.pack("<i", CLAIM)


def _shared(depth: int) -> tuple:
    node: tuple = (1,)
    for _ in range(depth):
        node = (node, node)  # marshal writes the second as a reference to the first
    return node


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    """A service of its own (its own runtime folder) and a sandbox on it; released at the end."""
    with own_service(tmp_path_factory.mktemp("marshal") / "svc"), Sandbox(workers=1, mode="fast", timeout_s=1.0) as sb:
        assert sb.run(RIGHT, TESTS).statuses == ["pass", "fail"]  # warm: the judge and its fork server
        yield sb


def _raw():
    return _raw_socket(60)


def _peak_after_reset(pid: int | str):
    """Reset the peak RSS of ``pid`` now; the returned function reads the peak reached since (bytes)."""
    with open(f"/proc/{pid}/clear_refs", "w") as fh:
        fh.write("5")

    def peak() -> int:
        with open(f"/proc/{pid}/status") as fh:
            return next(int(line.split()[1]) << 10 for line in fh if line.startswith("VmHWM:"))

    return peak


def _cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wait_until_read(sock) -> None:
    """Wait (polling, up to 30 s) until the front has read all that was sent on ``sock`` (``SIOCOUTQ``: what a Unix
    socket's peer has not received yet)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0" * 4))[0] == 0:
            return
        time.sleep(0.01)
    raise AssertionError("the front did not read a header sent to it")


def _ask(body: bytes) -> tuple:
    sock = _raw()
    try:
        sock.sendall(struct.pack(">I", len(body)) + body)
        return _protocol.recv(sock)
    finally:
        sock.close()


def _requests(settings: tuple) -> dict[str, bytes]:
    job = encode_job(Job(RIGHT, tests=TESTS))
    return {
        "the_request_a_huge_tuple": HUGE_TUPLE,
        "a_job_a_huge_tuple": marshal.dumps(("run", settings, 1, [HUGE_TUPLE], [2], [None])),
        "a_key_a_huge_tuple": marshal.dumps(("run", settings, 1, [job], [2], [None]))[:-6] + HUGE_TUPLE,
    }


@pytest.mark.parametrize("case", ["the_request_a_huge_tuple", "a_job_a_huge_tuple", "a_key_a_huge_tuple"])
def test_marshal_data_that_claims_more_than_arrived_costs_the_front_what_arrived(service, case):
    pid = _front_pid()
    body = _requests(service._wire())[case]
    peak = _peak_after_reset(pid)
    base = peak()
    reply = _ask(body)
    assert reply[:2] == ("error", "ConfigError"), reply  # the caller's malformed request
    assert peak() - base < 64 << 20  # measured before: +512 MiB (the tuple's item pointers, written)
    assert service.run(RIGHT, TESTS).statuses == ["pass", "fail"]  # control: the service keeps serving


def test_a_key_of_shared_tuples_costs_the_front_what_arrived(service):
    settings, job = service._wire(), encode_job(Job(RIGHT, tests=TESTS))
    body = marshal.dumps(("run", settings, 1, [job], [2], [(2, _shared(26))]))
    assert len(body) < 2000
    pid = _front_pid()
    before = _cpu_s(pid)
    reply = _ask(body)
    assert _cpu_s(pid) - before < 1.0  # measured before: 2.7 s of the front's CPU, GIL held
    assert reply[:2] == ("error", "ConfigError"), reply  # before: accepted, and the job run
    # Control: a key of the protocol's shape (the size, then numbers) on the same service.
    good = marshal.dumps(("run", settings, 1, [job], [2], [(2, 12345, 1)]))
    assert _ask(good)[0] == "ok"
    assert service.run(RIGHT, TESTS).statuses == ["pass", "fail"]


def _self_holding_list() -> list:
    a: list = []
    a.append(a)
    return a


def _nested(levels: int) -> list:
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    "value",
    [compile("import os", "x", "exec"), {"a": 1}, frozenset({1}), _self_holding_list(), _nested(150)],
    ids=["code", "dict", "frozenset", "a_list_in_itself", "nested_150"],
)
def test_a_request_of_other_than_plain_data_is_that_callers_error(service, value):
    """Guards: a code object, a dict, a set, a cycle or 150 levels, in place of the settings or of a key."""
    settings, job = service._wire(), encode_job(Job(RIGHT, tests=TESTS))
    for request in [("run", value, 1, [job], [2], [None]), ("run", settings, 1, [job], [2], [(2, value)])]:
        reply = _ask(marshal.dumps(request))
        assert reply[:2] == ("error", "ConfigError"), reply
    assert service.run(RIGHT, TESTS).statuses == ["pass", "fail"]


# -- replies, from a fake service of this user --------------------------------------------------------------------
REPLIES = {
    "the_reply_a_huge_tuple": struct.pack(">I", len(HUGE_TUPLE)) + HUGE_TUPLE,
    "a_report_a_huge_tuple": ("ok", [HUGE_TUPLE]),
    "a_report_of_shared_lists": ("ok", [marshal.dumps(_shared(26))]),
}


@pytest.fixture
def fake_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("EVOLVECODER_SERVICE_DIR", str(tmp_path / "svc"))
    return _client.service_folder()


def _entry_points():
    def sandbox_run():
        with Sandbox(workers=1, isolation="none") as sb:
            return [sb.run("def f(x):\n    return 0", TESTS)]

    def run_many():
        with Sandbox(workers=1, isolation="none") as sb:
            return sb.run_many([("def f(x):\n    return 0", TESTS)])

    def top_level_run_tests():
        # timeout_s of its own: a shared sandbox of its own, on this fake service
        return [run_tests("def f(x):\n    return 0", TESTS, isolation="none", timeout_s=0.77)]

    return {"Sandbox.run": sandbox_run, "run_many": run_many, "run_tests": top_level_run_tests}


@pytest.mark.parametrize("entry", sorted(_entry_points()))
@pytest.mark.parametrize("case", sorted(REPLIES))
def test_a_reply_that_claims_more_than_arrived_costs_the_caller_what_arrived(fake_folder, case, entry):
    fake = _FakeService(fake_folder, lambda request: REPLIES[case])
    peak = _peak_after_reset("self")
    base = peak()
    try:
        reports = _entry_points()[entry]()
    finally:
        fake.close()
    assert peak() - base < 64 << 20  # measured before: +512 MiB in the caller for 13 bytes
    for report in reports:  # an infrastructure failure, never a verdict
        assert report.statuses == ["crash", "crash"] and report.infra_error, report


def test_code_reward_is_none_on_a_reply_that_claims_more_than_arrived(fake_folder):
    from evolvecoder_datasets.rewards import make_code_reward

    fake = _FakeService(fake_folder, lambda request: ("ok", [HUGE_TUPLE] * len(request[3])))
    peak = _peak_after_reset("self")
    base = peak()
    try:
        # timeout_s of its own: a shared sandbox of its own, whose connections go to this fake service (the one of
        # mode="fast" alone may hold idle connections to a service an earlier test in this process used)
        reward = make_code_reward(mode="fast", timeout_s=0.79)
        values = reward(completions=["def f(x):\n    return 0"], tests=[TESTS])
        reward.sandbox.close()
    finally:
        fake.close()
    assert values == [None]
    assert peak() - base < 64 << 20


# The control for these replies, the same fake answering in the protocol's shape (a report's marshal shares its
# strings, as every real report does), is test_service_frames.py::test_a_well_formed_reply_is_read_as_sent.


# -- the front's budget of request bytes ---------------------------------------------------------------------------
def test_headers_that_declare_the_whole_budget_do_not_stop_another_callers_job(service):
    """Four headers of the largest frame (16 bytes, no body) reserved the front's whole budget of request bytes (1
    GiB) by what they declared: every other caller's request waited until they were dropped for silence (30 s),
    and a sender of one byte every few seconds held it for ever. Bytes are reserved as they arrive now."""
    from evolvecoder_datasets.execution._protocol import MAX_REQUEST_FRAME
    from evolvecoder_datasets.execution.service import MAX_IN_FLIGHT

    hostile = []
    for _ in range(MAX_IN_FLIGHT // MAX_REQUEST_FRAME + 1):
        sock = _raw()
        sock.sendall(struct.pack(">I", MAX_REQUEST_FRAME))  # and nothing of its body
        hostile.append(sock)
    out: list = []
    honest = threading.Thread(target=lambda: out.append(service.run(RIGHT, TESTS)))
    try:
        for sock in hostile:
            _wait_until_read(sock)  # its header is read: the front holds what it reserves for it
        honest.start()
        honest.join(timeout=20)  # before: still waiting at 20 s (it waited for the 30 s silence of each)
        assert not honest.is_alive() and out[0].statuses == ["pass", "fail"]
    finally:
        for sock in hostile:
            sock.close()
        if honest.ident is not None:
            honest.join(timeout=60)
