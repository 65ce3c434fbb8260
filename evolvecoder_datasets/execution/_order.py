"""The order a stopping job runs its tests in: the likeliest failures first, for binary rewards.

:class:`_FailureOrder` keeps per list of tests how often each failed; :func:`_permuted` runs a job's tests (or
stdin/stdout cases) in an order and :func:`_in_given_order` puts its report back in the order given. Used by the
caller (:class:`~evolvecoder_datasets.execution.Sandbox`), the service and the judge processes.

Example:
    >>> from evolvecoder_datasets.execution._order import _FailureOrder
    >>> _FailureOrder(seed=0).order(["assert f() == 1"]) is None
    True
"""

from __future__ import annotations

import collections
import dataclasses
import os
import random
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .report import ExecutionReport
    from .sandbox import Job


class _FailureOrder:
    """Per list of tests, how often each one failed in this sandbox's earlier jobs, and a random order that tends to
    run the likeliest failures first.

    A binary reward stops at the first test that does not pass, so the sooner a wrong program meets the test that
    catches it, the fewer tests it costs. The group of completions of one prompt share their tests, and the ones
    that catch wrong programs are few: in EvolveCoder's data the evolved, adversarial tests come last in the list.
    Counts are kept for the last ``size`` lists of tests (keyed by their hash and length: a collision only costs a
    worse order), in memory, per sandbox.

    The order is drawn afresh for every job (weighted sampling without replacement, a test's weight 1 plus 64 per
    time it failed), so where a test runs says only, by chance, that it may have failed before: a program that
    reads its position (its pid, the clock) cannot learn which test caught earlier programs from one run, and the
    tests that never failed come in a random order too.

    Example:
        >>> order = _FailureOrder(seed=0)
        >>> tests = ["assert f(1) == 1", "assert f(2) == 2", "assert f(3) == 3"]
        >>> order.order(tests) is None  # nothing failed yet: the order given
        True
        >>> order.record(tests, ["pass", "pass", "fail"])
        >>> firsts = [order.order(tests)[0] for _ in range(200)]
        >>> firsts.count(2) > 150, sorted(set(firsts))  # mostly first, never always
        (True, [0, 1, 2])
    """

    _FAILED = frozenset({"fail", "error", "timeout", "memory", "crash"})
    _WEIGHT = 64

    def __init__(self, size: int = 4096, seed: int | None = None) -> None:
        self._counts: collections.OrderedDict[tuple, list[int]] = collections.OrderedDict()
        self._size = size
        self._lock = threading.Lock()
        self._random = random.Random(seed if seed is not None else int.from_bytes(os.urandom(8), "big"))

    @staticmethod
    def _key(cases: Sequence[str]) -> tuple:
        return len(cases), hash(tuple(cases))

    def order(self, cases: Sequence[str]) -> list[int] | None:
        """Indices of ``cases`` in a random order weighted towards the most failed; None where nothing failed."""
        key = self._key(cases)
        with self._lock:
            counts = self._counts.get(key)
            if counts is None:
                return None
            self._counts.move_to_end(key)
            draws = [self._random.random() for _ in counts]
        keys = [d ** (1.0 / (1 + self._WEIGHT * c)) for d, c in zip(draws, counts)]  # Efraimidis-Spirakis
        order = sorted(range(len(counts)), key=keys.__getitem__, reverse=True)
        return None if order == list(range(len(order))) else order

    def record(self, cases: Sequence[str], statuses: Sequence[str]) -> None:
        """Count the cases that ran and did not pass (in the given order's indices)."""
        failed = [i for i, status in enumerate(statuses) if status in self._FAILED]
        if not failed:
            return
        key = self._key(cases)
        with self._lock:
            counts = self._counts.get(key)
            if counts is None:
                counts = self._counts[key] = [0] * len(cases)
                while len(self._counts) > self._size:
                    self._counts.popitem(last=False)
            for i in failed:
                counts[i] += 1


def _permuted(job: Job, order: list[int]) -> Job:
    """``job`` with its tests (or stdin/stdout cases) in ``order``."""
    if job.kind == "stdio":
        outputs = None if job.outputs is None else [job.outputs[i] for i in order]
        return dataclasses.replace(job, inputs=[job.inputs[i] for i in order], outputs=outputs)  # type: ignore[index]
    return dataclasses.replace(job, tests=[job.tests[i] for i in order])  # type: ignore[index]


def _in_given_order(report: ExecutionReport, order: list[int]) -> ExecutionReport:
    """A report of a job run in ``order``, back in the order its tests were given."""
    def back(values: list) -> list:
        if len(values) != len(order):
            return values
        out = [None] * len(order)
        for position, index in enumerate(order):
            out[index] = values[position]
        return out

    return dataclasses.replace(report, statuses=back(report.statuses), messages=back(report.messages),
                               cpu_s=back(report.cpu_s), judged=back(report.judged),
                               outputs=None if report.outputs is None else back(report.outputs))  # fmt: skip
