"""Early stop of ``stop_on_failure`` jobs: which ended tests stop a job, and streaming the others' values."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .job import STOP, request_word
from .pristine import _len, _monotonic, pin_builtins

if TYPE_CHECKING:
    from collections.abc import Callable

    from .job import ProgramJob

pin_builtins(globals())

_STREAM_AFTER_S = 0.02
_STREAM_GAP_FIRST_S = 0.001  # after a message, the next waits this long, then twice as long... (see _Progress)
_STREAM_GAP_MAX_S = 0.008


class _Progress:
    """Early stop for jobs sent with ``stop_on_failure`` (a binary reward's value is known at the first test that
    does not pass).

    Tests end in order. Each one that ends with a status this server observed itself (a timeout, a crash, an error of
    a test run inside) and is not a pass stops the job here. The values of those that end with values are streamed to
    the caller, ``{"progress": [idx, ...], "value": [...]}`` (stdin/stdout cases: ``"output"``), since only the
    caller's judge can tell a pass; the caller answers ``{"op": "stop"}`` when one failed. The server decides no
    verdict either way: stopping only marks the tests not yet run ``unexecuted``.

    In fast mode streaming starts only once a job has run for ``_STREAM_AFTER_S``: a job of quick tests is over
    before a stop could gain anything, and its values come back with the reply (streaming each cost fast mode ~15%
    there). In isolated mode every test costs a fork, so the first value goes at once: waiting 20 ms let a wrong
    program run ~16 tests past its first failure (the reward benchmark ran 1,741 tests where 1,474 do now).

    After each message the next one waits ``_STREAM_GAP_FIRST_S``, then twice that, up to ``_STREAM_GAP_MAX_S``,
    and carries every value that ended meanwhile. A message cost ~0.13 ms of CPU between this server and the caller
    (a right program's 35 streamed one by one cost 12% more than none at all), while wrong programs mostly fail on
    their first tests: the benchmark's 20 wrong programs first fail at tests 0-2, five of them at 5 or 15. A failure
    later in a job is reported at most 8 ms late.
    """

    __slots__ = ("send", "recv", "values", "enabled", "checked", "sent", "stop", "stdio", "start_streaming", "gap")

    def __init__(self, job: ProgramJob, values: list, send: Callable[[dict], None], recv: Callable[[], object]) -> None:
        """``values``: the job's list of what its tests sent (stdin cases: what they printed), filled as they end;
        ``send`` writes a message to the caller and ``recv`` reads one (None once its pipe ended)."""
        self.send, self.recv, self.values = send, recv, values
        self.enabled, self.stdio = job.stop_on_failure, job.kind == "stdio"
        self.checked = self.sent = 0
        self.stop = False
        self.start_streaming = _monotonic() + (_STREAM_AFTER_S if job.mode == "fast" else 0.0)
        self.gap = 0.0

    def stopped(self, statuses: list) -> bool:
        """Look at the tests that ended since the last call, in order, and stream the values waiting once the job
        has run long enough and the gap after the last message has passed; True once the job should stop."""
        if not self.enabled:
            return False
        n = _len(statuses)
        while not self.stop and self.checked < n and statuses[self.checked] is not None:
            if statuses[self.checked] not in ("value", "pass", "done"):
                self.stop = True
            self.checked += 1
        if self.stop or self.sent == self.checked:
            return self.stop
        now = _monotonic()
        if now < self.start_streaming:
            return False
        ended = range(self.sent, self.checked)
        self.sent = self.checked
        if self.stdio:
            found = [(i, self.values[i] or "") for i in ended if statuses[i] == "done"]
        else:
            found = [(i, self.values[i]) for i in ended if statuses[i] == "value"]
        if found:
            self.send({"progress": [i for i, _ in found],
                              "output" if self.stdio else "value": [v for _, v in found]})  # fmt: skip
            self.start_streaming = now + self.gap
            self.gap = min(_STREAM_GAP_MAX_S, max(_STREAM_GAP_FIRST_S, 2 * self.gap))
        return self.stop

    def wake_at(self) -> float | None:
        """When ended tests wait to be streamed: the time the next message may go (None when nothing waits)."""
        return self.start_streaming if self.enabled and self.sent < self.checked and not self.stop else None

    def caller_says_stop(self) -> bool:
        """Read the caller's message sent during a job: only ``stop`` can come (or the end of its pipe)."""
        msg = self.recv()
        self.stop = self.stop or msg is None or request_word(msg) == STOP
        return self.stop
