"""Jobs of many problems streamed through one sandbox, with no barrier between batches of problems.

Running a stage batch by batch (``Dataset.map`` hands the function 8 problems, it runs their jobs, then the next 8)
makes every batch wait for its slowest job while the other workers idle: one looping program held a whole batch
back for its 20-35 timeouts. Here problems are read ahead and their jobs queued as soon as they are known, so the
workers always have jobs, whatever the batch size; results still come back in the order of the problems. A problem
may first run one job alone (its reference solution, at the fixed limit) whose report decides its other jobs (their
calibrated time limit): the reference is queued when the problem is read and the rest follow when it ends, while
other problems' jobs keep the workers busy.

**Chunks, not single jobs.** The queued jobs go to the sandbox many to a request (``Sandbox.run_many``, one message
each way, one Ray actor call under :func:`~evolvecoder_datasets.distributed.execute_on_ray_nodes`), up to ``chunk``
jobs at a time, earliest problems first; :func:`stream_shape` sizes the chunks and the number of requests in flight
from the sandbox's :attr:`~evolvecoder_datasets.execution.Sandbox.capacity`. One request per job cost the driver
115-192 us of CPU per job (a thread hand-off, a round trip and its framing each); a chunk shares that among its
jobs, so the driver's CPU per job is that of a batch. A request returns when its last job ends, so a looping
program holds back its own request's reports: there is one more request in flight than programs run at once, so
the workers never wait for a sender while jobs are queued.

Example:
    >>> from evolvecoder_datasets.execution import Job, Sandbox
    >>> from evolvecoder_datasets.stages.support.stream import Plan, stream_jobs
    >>> problems = [("x = 1", ["assert x == 1"]), ("x = 2", ["assert x == 1", "assert x == 2"])]
    >>> with Sandbox(workers=2, mode="fast") as sb:
    ...     done = list(stream_jobs(sb, problems, lambda p: Plan(lambda _ref: [Job(p[0], tests=p[1])])))
    >>> [[r.statuses for r in reports] for _problem, _ref, reports in done]
    [[['pass']], [['fail', 'pass']]]
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ...execution import ExecutionReport, Job

__all__ = ["CHUNK_PER_SLOT", "MAX_SENDERS", "MIN_CHUNK", "Plan", "stream_jobs", "stream_shape"]

T = TypeVar("T")

#: Jobs per request at least (where that many are queued): what shares a request's fixed cost among its jobs.
MIN_CHUNK = 64
#: Jobs queued or running per program run at once (``capacity``), over all the requests in flight.
CHUNK_PER_SLOT = 8
#: Requests in flight at most (threads of the driver that each wait for one reply).
MAX_SENDERS = 64


def stream_shape(capacity: int, chunk: int | None = None) -> tuple[int, int]:
    """``(requests in flight, jobs per request)`` for a stream over ``capacity`` programs run at once.

    One more request than programs run at once (at most ``MAX_SENDERS``): a request whose last job is a looping
    program holds its sender until that job ends, so with every sender waiting on such a job the workers are still
    all busy. A request takes up to ``chunk`` queued jobs (default: ``CHUNK_PER_SLOT`` per program run at once,
    shared among the requests, and at least ``MIN_CHUNK``), so each worker has jobs queued behind the one it runs.

    Example:
        >>> stream_shape(2), stream_shape(64), stream_shape(1024), stream_shape(2, chunk=1)
        ((3, 64), (65, 64), (65, 127), (3, 1))
    """
    capacity = max(1, int(capacity))
    senders = min(capacity, MAX_SENDERS) + 1
    if chunk is None:
        chunk = max(MIN_CHUNK, -(-CHUNK_PER_SLOT * capacity // senders))
    return senders, max(1, int(chunk))


@dataclass
class Plan:
    """What to run for one problem: an optional ``first`` job, then the jobs ``then(first_report)`` returns.

    Example:
        >>> from evolvecoder_datasets.execution import Job
        >>> Plan(lambda ref: [Job("x = 1", tests=["assert x == 1"])]).first is None
        True
    """

    then: Callable[[ExecutionReport | None], list[Job]]
    first: Job | None = None


class _Pending(Generic[T]):
    """One problem in flight: its first job's report, its other jobs' reports, and a flag set when all are in."""

    __slots__ = ("done", "error", "first", "item", "left", "reports", "seq", "then")

    def __init__(self, item: T, seq: int) -> None:
        self.item = item
        self.seq = seq
        self.then: Callable[[ExecutionReport | None], list[Job]] | None = None
        self.first: ExecutionReport | None = None
        self.reports: list[ExecutionReport | None] = []
        self.left = 0
        self.done = threading.Event()
        self.error: BaseException | None = None


_FIRST = -1  # the index of a problem's first job in the queue (before its others)


class _Stream:
    """The queue of a stream's jobs (a heap, earliest items first) and the threads that send it in chunks."""

    def __init__(self, sandbox: Any, senders: int, per_request: int) -> None:
        self.sandbox, self.per_request = sandbox, per_request
        self.queued: list[tuple[int, int, Job, _Pending]] = []  # (item's number, job's index, job, item)
        self.ready = threading.Condition()
        self.closed = False
        self.threads = [threading.Thread(target=self._send, name=f"ecd-stream-{i}", daemon=True)
                        for i in range(senders)]  # fmt: skip
        for thread in self.threads:
            thread.start()

    def start(self, state: _Pending, todo: Plan) -> None:
        """Queue an item's first job, or its jobs where it has none (the senders are woken by :meth:`wake`)."""
        state.then = todo.then
        if todo.first is None:
            self._launch(state, todo.then(None))
        else:
            with self.ready:
                heapq.heappush(self.queued, (state.seq, _FIRST, todo.first, state))

    def wake(self) -> None:
        """Wake as many senders as the queue fills chunks: once per reading of items, so the senders find the new
        items' jobs together, not one at a time."""
        with self.ready:
            if self.queued:
                self.ready.notify(-(-len(self.queued) // self.per_request))

    def close(self) -> None:
        """Cancel the jobs still queued and wait for the requests in flight (their reports are dropped)."""
        with self.ready:
            self.closed = True
            for _seq, _index, _job, state in self.queued:
                state.error = state.error or RuntimeError("the job was cancelled: the stream was closed")
                state.done.set()
            self.queued.clear()
            self.ready.notify_all()
        for thread in self.threads:
            thread.join()

    def _launch(self, state: _Pending, jobs: list[Job]) -> None:
        state.reports = [None] * len(jobs)
        state.left = len(jobs)
        if not jobs:
            state.done.set()
            return
        with self.ready:
            if self.closed:  # the consumer stopped: nothing more to do
                state.error = state.error or RuntimeError("the job was cancelled: the stream was closed")
                state.done.set()
                return
            for index, job in enumerate(jobs):
                heapq.heappush(self.queued, (state.seq, index, job, state))

    def _first_done(self, state: _Pending, report: ExecutionReport | None, error: BaseException | None) -> None:
        if error is not None:
            state.error = error
            state.done.set()
            return
        state.first = report
        try:
            jobs = state.then(report)  # type: ignore[misc]
        except BaseException as err:  # noqa: BLE001 - raised again at this item's turn, in the consumer's thread
            state.error = err
            state.done.set()
            return
        self._launch(state, jobs)

    def _run(self, entries: list[tuple[int, int, Job, _Pending]]) -> None:
        """One request for ``entries``; their reports (or its error) to their items."""
        try:
            reports = self.sandbox.run_many([entry[2] for entry in entries])
            if len(reports) != len(entries):
                raise RuntimeError(f"the sandbox answered {len(reports)} reports for {len(entries)} jobs")
        except BaseException as err:  # noqa: BLE001 - each item raises it at its turn
            if len(entries) > 1:  # one job of the chunk (too many tests, say): its own item's error, not the others'
                for entry in entries:
                    self._run([entry])
                return
            reports, error = [None], err
        else:
            error = None
        finished, firsts = [], []
        with self.ready:  # one hold of the lock for the chunk's reports
            for (_seq, index, _job, state), report in zip(entries, reports):
                if index == _FIRST:
                    firsts.append((state, report))
                    continue
                if error is not None:
                    state.error = state.error or error
                else:
                    state.reports[index] = report
                state.left -= 1
                if state.left == 0:
                    finished.append(state)
        for state in finished:
            state.done.set()
        for state, report in firsts:  # outside the lock: ``then`` is the caller's code
            self._first_done(state, report, error)
        if firsts:  # this sender takes the next chunk itself; others only for what is beyond it
            with self.ready:
                self.ready.notify(len(self.queued) // self.per_request)

    def _send(self) -> None:
        while True:
            with self.ready:
                while not self.queued and not self.closed:
                    self.ready.wait()
                if self.closed:
                    return
                entries = [heapq.heappop(self.queued) for _ in range(min(self.per_request, len(self.queued)))]
                if self.queued:  # what is left goes at once if a sender is idle: never queued behind this request
                    self.ready.notify()
            self._run(entries)


def stream_jobs(
    sandbox: Any,
    items: Iterable[T],
    plan: Callable[[T], Plan],
    *,
    read_ahead: int = 256,
    chunk: int | None = None,
) -> Iterator[tuple[T, ExecutionReport | None, list[ExecutionReport]]]:
    """Run every item's jobs over the sandbox's workers as one stream; yield ``(item, first_report, reports)`` in
    the order of ``items``.

    Up to ``read_ahead`` items are in flight at once (read, queued or running, or finished and waiting for an
    earlier one), so memory stays bounded while a slow job at the head lets hundreds of later items run past it.
    Queued jobs go to the sandbox in requests of up to ``chunk`` jobs, those of the earliest items first (see the
    module doc and :func:`stream_shape`).

    Args:
        sandbox (`Sandbox`): a started or lazily starting sandbox; its ``capacity`` (``workers``, or a cluster's
            CPUs where its jobs are routed to one) sizes the requests.
        items (`Iterable`): the problems, read lazily.
        plan (`Callable[[item], Plan]`): each item's jobs (called in this thread, in order).
        read_ahead (`int`, defaults to 256): items in flight at most.
        chunk (`int`, *optional*): jobs per request at most (default: :func:`stream_shape`'s); 1 sends one request
            per job. It changes no report.

    Raises:
        Exception: whatever a job or ``plan(...).then`` raised (e.g. ``SandboxCrashed``), at that item's turn; the
            jobs still queued are cancelled.

    Example:
        >>> from evolvecoder_datasets.execution import Job, Sandbox
        >>> with Sandbox(workers=1, mode="fast") as sb:
        ...     out = list(stream_jobs(sb, ["def f():\\n    return 3"],
        ...                            lambda p: Plan(lambda ref: [Job(p, tests=["assert f() == 3"], timeout_s=0.2)],
        ...                                           first=Job(p, tests=["assert f() == 3"]))))
        >>> out[0][1].statuses, out[0][2][0].statuses
        (['pass'], ['pass'])
    """
    sandbox.start()
    capacity = getattr(sandbox, "capacity", None)
    stream = _Stream(sandbox, *stream_shape(capacity if capacity is not None else sandbox.capacity, chunk))
    in_flight: deque[_Pending] = deque()
    source, numbers = iter(items), itertools.count()
    exhausted = False
    try:
        while True:
            while not exhausted and len(in_flight) < max(1, read_ahead):
                item = next(source, _END)
                if item is _END:
                    exhausted = True
                    break
                state: _Pending = _Pending(item, next(numbers))
                stream.start(state, plan(item))
                in_flight.append(state)
            stream.wake()
            if not in_flight:
                return
            head = in_flight.popleft()
            head.done.wait()
            if head.error is not None:
                raise head.error
            yield head.item, head.first, [r for r in head.reports if r is not None]
    finally:
        stream.close()


_END: Any = object()
