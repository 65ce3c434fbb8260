"""One execution service per machine: every caller process shares its fork servers, one per core.

``Dataset.map(num_proc=2)`` forks two worker processes, each with its own process-wide sandbox; before the
service each started its own fork servers (12 instead of 4 at ``num_proc=2``), oversubscribing the cores that
CPU-time verdicts assume. Read from the process tree while the map runs: the fork servers are the same few for
every worker, one per core, and none is a child of a worker.
"""

from __future__ import annotations

import os

from evolvecoder_datasets.execution import shared_sandbox


def _children(pid: int) -> set[int]:
    found = set()
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                found |= {int(p) for p in fh.read().split()}
    except OSError:
        pass
    return found


def _descendants(pid: int) -> set[int]:
    found, todo = set(), [pid]
    while todo:
        for child in _children(todo.pop()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _execute(batch):
    sandbox = shared_sandbox(timeout_s=1.0, mode="isolated", workers=1)
    report = sandbox.run("def f(x):\n    return x * 2\n", [f"assert f({x}) == {2 * x}" for x in batch["x"]])
    servers = sorted(sandbox.server_pids)
    mine = _descendants(os.getpid())
    return {"x": batch["x"], "passed": [all(report.passed)] * len(batch["x"]),
            "servers": [servers] * len(batch["x"]), "worker": [os.getpid()] * len(batch["x"]),
            "servers_below_worker": [len(set(servers) & mine)] * len(batch["x"])}  # fmt: skip


def test_num_proc_2_shares_one_fork_server_per_core():
    from datasets import Dataset

    import time

    warm = shared_sandbox(timeout_s=1.0, mode="isolated", workers=1).start()  # the service's judges, warm
    deadline = time.monotonic() + 20  # a freshly started service warms a judge busy at start after its job
    while len(warm.server_pids) < len(os.sched_getaffinity(0)) and time.monotonic() < deadline:
        time.sleep(0.1)
    ds = Dataset.from_dict({"x": list(range(40))})
    out = ds.map(_execute, batched=True, batch_size=4, num_proc=2, load_from_cache_file=False)
    assert all(out["passed"])
    assert len(set(out["worker"])) == 2 and os.getpid() not in set(out["worker"])  # two caller processes
    server_sets = {tuple(s) for s in out["servers"]}
    assert len(server_sets) == 1, server_sets  # the same fork servers for every batch of both workers
    (servers,) = server_sets
    assert len(servers) == len(os.sched_getaffinity(0))  # one per core, not one per core per worker
    assert set(out["servers_below_worker"]) == {0}  # none of them is a worker's descendant
    # (they may be this process's descendants: it started the service when none ran, with subprocess)


def test_a_release_while_another_caller_holds_the_service_answers_at_once_and_ends_nothing():
    """``release_service`` (what ``serve`` calls on SIGTERM) asks the service to end once no caller is connected.
    Where another caller holds it, the service says so and the call returns False after asking again for at most
    2 s (a connection just closed may not be counted out yet) instead of waiting out ``wait_s`` (it used to wait
    the whole 15 s each time: ~20 test teardowns of the reward server, 5 minutes of the suite); the holder keeps
    its service."""
    import threading

    from evolvecoder_datasets.execution import Sandbox
    from evolvecoder_datasets.execution._client import release_service

    with Sandbox(workers=1, timeout_s=1.0) as held:
        assert held.run("x = 1", ["assert x == 1"]).statuses == ["pass"]
        answer: list = []
        caller = threading.Thread(target=lambda: answer.append(release_service(wait_s=600.0)))
        caller.start()
        caller.join(timeout=120.0)  # far below wait_s: it did not wait for an end that cannot come
        assert not caller.is_alive() and answer == [False]
        assert held.run("x = 2", ["assert x == 2", "assert x == 1"]).statuses == ["pass", "fail"]


def test_a_release_from_a_process_that_still_holds_the_service_asks_once(monkeypatch):
    """A reward server stopping while another sandbox of its own process is still open (a trainer's driver, the test
    session) cannot end the service: ``release_service`` sees its own open connection and returns False after one
    question, with no 2 s of asking again (each reward-server teardown paid those). Connections a forked child
    inherited are its parent's, not the child's: they hold nothing for it."""
    from evolvecoder_datasets.execution import Sandbox
    from evolvecoder_datasets.execution import _client

    naps: list[float] = []
    with Sandbox(workers=1, timeout_s=1.0) as held:
        assert held.run("x = 1", ["assert x == 1"]).statuses == ["pass"]
        assert _client._held_here()
        monkeypatch.setattr(_client.time, "sleep", naps.append)
        assert _client.release_service(wait_s=600.0) is False
        monkeypatch.undo()
        assert naps == []
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: the parent's connections are inherited, not its own
            os.close(read)
            os.write(write, b"1" if _client._held_here() else b"0")
            os._exit(0)
        os.close(write)
        in_child = os.read(read, 1)
        os.close(read)
        os.waitpid(pid, 0)
        assert in_child == b"0"
        assert held.run("x = 2", ["assert x == 2", "assert x == 1"]).statuses == ["pass", "fail"]
