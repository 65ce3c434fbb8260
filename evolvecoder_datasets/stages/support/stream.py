"""Jobs of many problems streamed through one sandbox, with no barrier between batches of problems.

Running a stage batch by batch (``Dataset.map`` hands the function 8 problems, it runs their jobs, then the next 8)
makes every batch wait for its slowest job while the other workers idle: one looping program held a whole batch
back for its 20-35 timeouts. Here problems are read ahead and their jobs queued as soon as they are known, so a
worker takes the next job the moment it is free, whatever the batch size; results still come back in the order of
the problems. A problem may first run one job alone (its reference solution, at the fixed limit) whose report
decides its other jobs (their calibrated time limit): the reference is queued when the problem is read and the
rest follow when it ends, while other problems' jobs keep the workers busy.

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

import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ...execution import ExecutionReport, Job

__all__ = ["Plan", "stream_jobs"]

T = TypeVar("T")


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

    __slots__ = ("done", "error", "first", "item", "left", "reports")

    def __init__(self, item: T) -> None:
        self.item = item
        self.first: ExecutionReport | None = None
        self.reports: list[ExecutionReport | None] = []
        self.left = 0
        self.done = threading.Event()
        self.error: BaseException | None = None


def stream_jobs(
    sandbox: Any,
    items: Iterable[T],
    plan: Callable[[T], Plan],
    *,
    read_ahead: int = 256,
) -> Iterator[tuple[T, ExecutionReport | None, list[ExecutionReport]]]:
    """Run every item's jobs over the sandbox's workers as one stream; yield ``(item, first_report, reports)`` in
    the order of ``items``.

    Up to ``read_ahead`` items are in flight at once (read, queued or running, or finished and waiting for an
    earlier one), so memory stays bounded while a slow job at the head lets hundreds of later items run past it.

    Args:
        sandbox (`Sandbox`): a started or lazily starting sandbox; ``sandbox.settings.worker_count`` jobs run at once.
        items (`Iterable`): the problems, read lazily.
        plan (`Callable[[item], Plan]`): each item's jobs (called in this thread, in order).
        read_ahead (`int`, defaults to 256): items in flight at most.

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
    pool = ThreadPoolExecutor(max_workers=sandbox.settings.worker_count, thread_name_prefix="ecd-stream")
    lock = threading.Lock()

    def run_one(job: Job) -> ExecutionReport:
        return sandbox.run_many([job])[0]

    def finish_one(state: _Pending, index: int, future: Future) -> None:
        error = _error_of(future)
        with lock:
            if error is not None:
                state.error = state.error or error
            else:
                state.reports[index] = future.result()
            state.left -= 1
            last = state.left == 0
        if last:
            state.done.set()

    def launch(state: _Pending, jobs: list[Job]) -> None:
        state.reports = [None] * len(jobs)
        state.left = len(jobs)
        if not jobs:
            state.done.set()
            return
        for index, job in enumerate(jobs):
            try:
                future = pool.submit(run_one, job)
            except RuntimeError as err:  # the pool is shutting down (the consumer stopped): nothing more to do
                state.error = state.error or err
                state.done.set()
                return
            future.add_done_callback(lambda f, s=state, i=index: finish_one(s, i, f))

    def after_first(state: _Pending, then, future: Future) -> None:
        error = _error_of(future)
        if error is not None:
            state.error = error
            state.done.set()
            return
        state.first = future.result()
        try:
            jobs = then(state.first)
        except BaseException as err:  # noqa: BLE001 - raised again at this item's turn, in the consumer's thread
            state.error = err
            state.done.set()
            return
        launch(state, jobs)

    def start(item: T) -> _Pending:
        state: _Pending = _Pending(item)
        todo = plan(item)
        if todo.first is None:
            launch(state, todo.then(None))
        else:
            pool.submit(run_one, todo.first).add_done_callback(lambda f, s=state, t=todo.then: after_first(s, t, f))
        return state

    in_flight: deque[_Pending] = deque()
    source = iter(items)
    exhausted = False
    try:
        while True:
            while not exhausted and len(in_flight) < max(1, read_ahead):
                item = next(source, _END)
                if item is _END:
                    exhausted = True
                    break
                in_flight.append(start(item))
            if not in_flight:
                return
            head = in_flight.popleft()
            head.done.wait()
            if head.error is not None:
                raise head.error
            yield head.item, head.first, [r for r in head.reports if r is not None]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


_END: Any = object()


def _error_of(future: Future) -> BaseException | None:
    if future.cancelled():
        return RuntimeError("the job was cancelled: the stream was closed")
    return future.exception()
