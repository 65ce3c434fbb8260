"""From a fork server's reply to verdicts: the judge's side of a job, in the caller's process.

A split test's values are judged here (see :mod:`.judge`); stdin/stdout outputs are compared here. The server and
its children decide only what they observe from outside a program (timeouts, crashes, a program that did not
load). :func:`_early_stop` is the same judge applied test by test while a ``stop_on_failure`` job runs.

Example:
    >>> from evolvecoder_datasets.execution import Job
    >>> from evolvecoder_datasets.execution.verdicts import _verdicts
    >>> job = Job("print(1)", inputs=["\\n"], outputs=["1\\n"])
    >>> _verdicts(job, {"statuses": ["done"], "messages": [""], "outputs": ["1\\n"]})[0]
    ['pass']
"""

from __future__ import annotations

import binascii
from typing import TYPE_CHECKING

from .checkers import outputs_match
from .judge import JUDGED_INSIDE, JUDGED_OUTSIDE, judge, plan_test

if TYPE_CHECKING:
    from .sandbox import Job


def _clean_entry(reply: dict) -> tuple:
    from ._wire import WireError
    from .judge import read_entries

    status, message = reply["statuses"][0], reply["messages"][0]
    value = (reply.get("values") or [None])[0]
    if status != "value" or not isinstance(value, str):
        return ("e", status if status in ("error", "fail", "timeout", "memory") else "crash", message)
    try:
        entries = read_entries(binascii.a2b_base64(value.encode("ascii"), strict_mode=True), 1)
    except (WireError, binascii.Error, ValueError):
        return ("e", "crash", "unreadable helper result")
    return entries[0] if entries else ("e", "crash", "no helper result")


def _verdicts(job: Job, reply: dict, clean=None, known: dict | None = None,
              checked: dict | None = None) -> tuple[list[str], list[str], list[str]]:
    """Statuses, messages and where each verdict was decided, from a fork server's reply.

    A split test's values are judged here (see :mod:`.judge`); the server and its children decide only what they
    observe from outside a program (timeouts, crashes, a program that did not load). No ``pass`` of a split test
    can come from the sandbox: one that claims it is a crash. ``known`` holds what :func:`_early_stop` already
    judged while the job ran, ``{index: (value, verdict)}``: a test whose final value is the one judged then is not
    judged twice. ``checked`` holds a stdin/stdout job's checker verdicts, ``{index: (status, message)}``, which
    replace the token compare.
    """
    statuses, messages = list(reply["statuses"]), list(reply["messages"])
    if job.kind == "stdio":
        outputs = reply.get("outputs") or [None] * len(statuses)
        if job.outputs is None:  # a valuing job: a case that ended normally with its output is a pass
            for i in range(len(statuses)):
                if statuses[i] == "done" and isinstance(outputs[i], str):
                    statuses[i], messages[i] = "pass", ""
                elif statuses[i] in ("done", "pass", "value"):
                    statuses[i], messages[i] = "crash", "no output came back for this case"
            return statuses, messages, [JUDGED_OUTSIDE] * len(statuses)
        for i, expected in enumerate(job.outputs or ()):
            if statuses[i] == "done" and isinstance(outputs[i], str) and checked is not None:
                statuses[i], messages[i] = checked.get(i, ("crash", "the checker did not judge this case"))
            elif statuses[i] == "done" and isinstance(outputs[i], str):
                ok = outputs_match(outputs[i], expected, job.float_tol)
                statuses[i], messages[i] = ("pass", "") if ok else ("fail", "wrong output: " + repr(outputs[i][:120]))
            elif statuses[i] in ("done", "pass", "value"):
                statuses[i], messages[i] = "crash", "no output came back for this case"
        return statuses, messages, [JUDGED_OUTSIDE] * len(statuses)
    values = reply.get("values") or [None] * len(statuses)
    judged = []
    for i, test in enumerate(job.tests or ()):
        plan = plan_test(str(test))
        judged.append(JUDGED_OUTSIDE if plan.outside or plan.invalid is not None else JUDGED_INSIDE)
        status = statuses[i]
        if status == "value" and plan.outside and isinstance(values[i], str):
            seen = known.get(i) if known else None
            statuses[i], messages[i] = seen[1] if seen and seen[0] == values[i] else _judge_value(plan, values[i], clean)
        elif status == "value" or (status == "pass" and plan.outside):
            statuses[i], messages[i] = "crash", "the sandbox sent a verdict it does not decide"
    return statuses, messages, judged


def _judge_value(plan, value: str, clean) -> tuple[str, str]:
    """The verdict of a split test from the base64 payload the server passed on (a ``crash`` if unreadable)."""
    try:
        payload = binascii.a2b_base64(value.encode("ascii"), strict_mode=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        return "crash", "unreadable report from the sandbox"
    try:
        return judge(plan, payload, clean=clean)
    except _Deferred:
        raise
    except Exception as err:  # noqa: BLE001 - program-chosen bytes: whatever the judge cannot take is a crash
        return "crash", f"the judge could not take this test's values ({type(err).__name__})"


class _Deferred(BaseException):
    """Raised into the judge by :func:`_early_stop` where a test needs a helper call: decided after the job."""


def _defer(imports: str, expression: str) -> tuple:
    raise _Deferred


def _early_stop(job: Job):
    """The progress callback of a ``stop_on_failure`` job: judge each streamed test as it ends, True (stop) at the
    first that does not pass. What it judged is kept in ``on_progress.judged`` (see :func:`_verdicts`, which judges the
    rest from the reply the same way); a test whose judging needs a helper process (the worker is busy with this job)
    is left to that."""
    judged: dict[int, tuple] = {}

    def on_progress(message: dict) -> bool:
        indices = message.get("progress")
        found = message.get("output" if job.kind == "stdio" else "value")
        if not isinstance(indices, list) or not isinstance(found, list):
            return False
        return any(_failed(idx, value) for idx, value in zip(indices, found))

    def _failed(idx, value) -> bool:
        if not isinstance(idx, int) or not 0 <= idx < job.size:
            return False
        if job.kind == "stdio":
            return not (isinstance(value, str) and outputs_match(value, (job.outputs or ())[idx], job.float_tol))
        plan = plan_test(str((job.tests or ())[idx]))
        if not (plan.outside and isinstance(value, str)):
            return False
        try:
            verdict = _judge_value(plan, value, _defer)
        except _Deferred:
            return False
        judged[idx] = (value, verdict)
        return verdict[0] != "pass"

    on_progress.judged = judged  # type: ignore[attr-defined]
    return on_progress


