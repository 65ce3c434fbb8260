"""The streamed paths send many jobs per request (issue 41), with the reports of one request per job.

Requests are counted at the client's boundary: a wrapper around the real ``Connections.run`` (each call is one
``run`` request to this machine's execution service, whose real fork servers run every job).
"""

from __future__ import annotations

import pytest

from evolvecoder_datasets.errors import ConfigError
from evolvecoder_datasets.execution import Job, Sandbox, _client
from evolvecoder_datasets.execution._protocol import MAX_JOB_TESTS
from evolvecoder_datasets.stages.execute import ExecuteConfig
from evolvecoder_datasets.stages.support.new_tests import run_new_tests
from evolvecoder_datasets.stages.support.stream import Plan, stream_jobs, stream_shape

SQ = "def sq(x):\n    return x * x"
POOL = [SQ, "def sq(x):\n    return x * 2", "def sq(x):\n    return abs(x) * x", "def sq(x:",
        "def sq(x):\n    raise ValueError(x)"]  # fmt: skip
TESTS = ["assert sq(2) == 4", "assert sq(-3) == 9", "assert sq(0) == 0"]


@pytest.fixture
def requests(monkeypatch):
    """Jobs per ``run`` request this process sends to the service, in order."""
    sent: list[int] = []
    real = _client.Connections.run

    def counted(self, settings, workers, jobs, *args, **kwargs):
        sent.append(len(jobs))
        return real(self, settings, workers, jobs, *args, **kwargs)

    monkeypatch.setattr(_client.Connections, "run", counted)
    return sent


def _problems(n: int) -> list[tuple[Job, list[Job]]]:
    """``n`` problems: the reference first, then a pool of five (pass, fail, error, syntax error)."""
    problems = []
    for i in range(n):
        tests = TESTS + [f"assert sq({i}) == {i * i}"]
        problems.append((Job(SQ, tests=tests), [Job(code, tests=tests, timeout_s=0.5) for code in POOL]))
    return problems


def _run(sandbox, problems, chunk):
    plan = lambda p: Plan(lambda _ref: p[1], first=p[0])
    return [(first.statuses, [r.statuses for r in reports])
            for _p, first, reports in stream_jobs(sandbox, problems, plan, chunk=chunk, read_ahead=8)]  # fmt: skip


def test_a_stream_sends_many_jobs_per_request_with_the_verdicts_of_one_job_per_request(requests):
    problems = _problems(24)
    jobs = sum(1 + len(pool) for _first, pool in problems)
    with Sandbox(workers=2, mode="fast") as sb:
        one_each = _run(sb, problems, chunk=1)
        per_job_requests = list(requests)
        requests.clear()
        chunked = _run(sb, problems, chunk=None)
        isolated = Sandbox(workers=2, mode="isolated")
        with isolated:
            requests.clear()
            chunked_isolated = _run(isolated, problems, chunk=16)
    assert per_job_requests == [1] * jobs
    assert chunked == one_each  # the same reports, in the order of the items
    assert chunked_isolated == one_each
    assert sum(requests) == jobs and len(requests) <= jobs // 4 and max(requests) == 16
    assert chunked[0] == (["pass"] * 4, [["pass"] * 4, ["pass", "fail", "pass", "pass"],
                                         ["pass", "fail", "pass", "pass"], ["syntax_error"] * 4,
                                         ["error"] * 4])  # fmt: skip


def test_the_rounds_new_tests_go_in_chunks_and_the_references_first(requests):
    class Problem:
        def __init__(self, codes):
            self.codes, self.reference, self.limit = codes, SQ, 0.1

    work = [(Problem(POOL), TESTS + [f"assert sq({i}) == {i * i}"]) for i in range(30)]
    with Sandbox(workers=2, mode="fast") as sb:
        done = run_new_tests(sb, work, ExecuteConfig(mode="fast"))
    assert sum(requests) == 30 * (1 + len(POOL)) and len(requests) < 30  # one request per job was 180
    assert [ref.statuses for ref, _rows in done] == [["pass"] * 4] * 30
    assert [[r.statuses[1] for r in rows] for _ref, rows in done] == [["pass", "fail", "fail", "syntax_error",
                                                                       "error"]] * 30  # fmt: skip


def test_a_jobs_own_error_is_raised_at_its_item_not_at_the_others_of_its_chunk(requests):
    too_many = Job(SQ, tests=["assert True"] * (MAX_JOB_TESTS + 1))
    items = [Job(SQ, tests=TESTS), Job(SQ, tests=TESTS), too_many, Job(SQ, tests=TESTS)]
    with Sandbox(workers=1, mode="fast") as sb:
        stream = stream_jobs(sb, items, lambda job: Plan(lambda _ref: [job]), chunk=8)
        assert [next(stream)[2][0].statuses for _ in range(2)] == [["pass"] * 3] * 2
        with pytest.raises(ConfigError, match="at most"):
            next(stream)


def test_stream_shape_keeps_one_request_more_than_programs_run_at_once():
    assert stream_shape(1) == (2, 64)
    senders, chunk = stream_shape(4096)
    assert senders == 65 and senders * chunk >= 8 * 4096
    assert stream_shape(4, chunk=5) == (5, 5)


def test_the_node_router_sends_a_small_batch_as_one_actor_call_and_cuts_a_large_one():
    from evolvecoder_datasets.distributed import DistributedConfig
    from evolvecoder_datasets.distributed.nodes import NodeRouter

    router = NodeRouter(DistributedConfig(num_cpus=2))
    router._cpus = {"a": 2, "b": 2}  # what joining a two-node cluster of 2 CPUs each finds
    assert router._chunks([7] * 32) == [(0, 32)]  # a stream's request: 224 tests, one call
    chunks = router._chunks([7] * 2000)  # 14,000 tests: about four chunks per slot, each of >= 256 tests
    assert len(chunks) == 32 and chunks[0] == (0, 63)  # ceil(14,000 / 32) = 438 tests: 63 jobs
    per_job = NodeRouter(DistributedConfig(num_cpus=2), min_chunk_tests=1)
    per_job._cpus = router._cpus
    assert len(per_job._chunks([7] * 32)) == 32  # what a small batch was cut into before issue 41
