"""Reading a solution process's lines: what the server believes of them, and each test's verdict from its end.

:class:`_Results` holds the methods of :class:`server.Server` that read the result pipe (``_drain``), apply each
line (``_apply``: a total function of its bytes, any line no honest S writes makes the job's remaining tests
crashes) and give a test its status once its process ended (``_test_ended``). The line format is in ``lines``.
"""

from __future__ import annotations

import os
import select
import signal

from .job import STDIO
from .lines import MAX_MESSAGE, STATUSES, _a2b_strict, _finite, _split_frames, _text, _wait_status
from .pristine import _b2a, _len, _monotonic, _read, pin_builtins
from .processes import _describe_exit, _uid_of
from .run import _Run

pin_builtins(globals())


class _Results:
    """Mixed into :class:`server.Server`: reading what a solution process writes."""

    def _drain(self, run: _Run, job, tests, pending, statuses, messages, cpu, values, final: bool = False) -> bool:
        """Read what the result pipe holds and apply complete lines. Returns False at end of file."""
        eof = False
        max_line = run.max_payload + 4096
        for _ in range(64 if not final else 1 << 30):  # a bounded bite, then back to the limit checks
            try:
                chunk = _read(run.rfd, 1 << 16)
            except BlockingIOError:
                if final and select.select([run.rfd], [], [], 0.2)[0]:
                    continue
                break
            except InterruptedError:
                continue
            if not chunk:
                eof = True
                break
            run.bytes_read += _len(chunk)
            if run.bytes_read > run.max_bytes:
                del run.buf[:]
                return not final  # past what any honest child writes: stop reading (the watch kills it)
            run.buf += chunk
            if _len(run.buf) > max_line and b"\n" not in chunk:
                tail = run.buf.rfind(b"\n")
                if tail < 0 or _len(run.buf) - tail > max_line:
                    run.bytes_read = run.max_bytes + 1  # a line longer than any honest one: a flood
                    del run.buf[:]
                    return not final
            if not final and _len(chunk) < (1 << 16):
                break
        data = bytes(run.buf)
        prefix = run.nonce.encode() + b" "
        # Value frames are part of the protocol only where the server supervises the tests.
        items, rest = _split_frames(data, prefix, run.max_payload, frames=run.clones)
        run.buf = bytearray(rest)
        for line, raw in items:
            if run.malformed:
                break
            try:
                self._apply(run, line[_len(prefix) :].split(b" "), job, tests, pending, statuses, messages, cpu, values,
                            raw)
            except Exception:  # noqa: BLE001 - every line S writes goes through here: a total function of its bytes
                # A line with the run's nonce that no honest S writes (garbage, a number out of range, a second
                # load line): S is lying, and the job's remaining tests are crashes (see _watch).
                run.malformed = True
        return not eof

    def _apply(self, run, fields, job, tests, pending, statuses, messages, cpu, values, raw=None) -> None:
        # Nothing S writes moves a deadline: the clocks restart only where the server saw a test end (or the
        # program load, once). A line S may not write at this point is malformed (see _drain).
        tag = fields[0].decode("ascii")
        timeout = job.timeout_s
        if tag == "L":
            if run.loaded:
                raise ValueError("a second load line")
            mark = _finite(fields[1])
            if run.after_load is not None:  # S came from the zygote: it gets its tests only now, and waits for them
                frame, run.after_load = run.after_load, None
                if not run.send_ctl(frame, job.wall_timeout_s):
                    raise ValueError("the solution process does not read its tests")
            self.uid_seen.append(_uid_of(run.pid))
            # The supervision mode is the server's (run.supervised): S's own word ("c") is not asked for.
            run.loaded = True
            run.last_event = _monotonic()
            if job.fast:
                own, others = run.tree_cpus()
                run.last_cpu = min(mark, own) + others
            else:
                run.last_cpu = min(mark, run.cpu() or mark)
        elif not run.loaded and tag not in ("X",):
            raise ValueError("a test's line before the load line")
        elif tag in ("X", "U"):
            if tag == "U":
                # S skips the rest after max_consecutive_timeouts in a row: believed only where this server
                # judged that many of its last tests timeouts itself (else the program is skipping its own tests).
                budget = job.max_consecutive_timeouts or 0
                last = run.reported[-budget:] if budget else []
                streak = budget > 0 and _len(last) == budget and all(statuses[i] == "timeout" for i in last)
                status, message = "unexecuted" if streak else "crash", "skipped after repeated timeouts"
            else:
                status, message = fields[1].decode("ascii"), _text(fields[2])
                status = status if status in STATUSES and status not in ("pass", "unexecuted") else "crash"
            while pending:
                i = pending.popleft()
                statuses[i], messages[i] = status, str(message)[:MAX_MESSAGE]
        elif tag == "R":
            idx, status, message = int(fields[1]), fields[2].decode("ascii"), _text(fields[3])
            payload, cpu_mark = (None if fields[4] == b"-" else fields[4]), _finite(fields[5])
            if not pending or idx != pending[0] or idx in values:
                return  # only the first line for the test being run counts
            kind = tests[idx].kind if tests is not None else "stdio"
            if status == "value":
                # A split test's values: the caller's judge reads them. Only a split test may send them.
                if kind != "plan" or payload is None or _len(payload) > run.max_payload:
                    status, message, payload = "crash", "malformed report", None
                else:
                    self.payloads[idx] = payload.decode("ascii")
            elif status == "pass" and kind != "stmt":
                status, message = "crash", "a child claimed a verdict it does not decide"
            elif status not in STATUSES and status != "done":
                status, message = "crash", "unknown status"
            if job.fast:
                # The child's CPU mark is only believed downwards: a lying child cannot move the baseline past the
                # CPU time the kernel has counted for it, so the watch below still sees every second it spends.
                # What the rest of S's tree used (a child a test forked, reaped or alive) is the kernel's figure.
                own, others = run.tree_cpus()
                mark = max(run.last_cpu, min(cpu_mark, own) + others)
                used = mark - run.last_cpu
                run.last_cpu = mark
                run.last_event = _monotonic()
                run.reported.append(idx)
                cpu[idx] = used
                if used > timeout:
                    status, message = "timeout", f"CPU time {used:.2f} s over the limit"
                statuses[idx], messages[idx] = status, str(message)[:MAX_MESSAGE]
                pending.popleft()
            else:
                values[idx] = (status, str(message)[:MAX_MESSAGE])
        elif tag == "V":  # a one-probe test's value, ``raw`` its wire bytes (isolated mode)
            idx, ident = int(fields[1]), int(fields[2], 16)
            if not 0 <= ident < 1 << 64:
                raise ValueError("not an identity")
            if not pending or idx != pending[0] or idx in values or raw is None or not run.clones:
                return  # only the first line for the test being run counts
            if tests is None or tests[idx].kind != "plan":
                values[idx] = ("crash", "malformed report")
                return
            self.payloads[idx] = _b2a(b"E1:v%x;%b" % (ident, raw), newline=False).decode("ascii")
            values[idx] = ("value", "")
        elif tag == "O":
            idx = int(fields[1])
            if pending and idx == pending[0] and job.kind == STDIO:
                data = b"" if fields[2] == b"-" else _a2b_strict(fields[2])
                self.outputs[idx] = data[: job.max_output_bytes + 1].decode("utf-8", "replace")
        elif tag not in ("D", "U"):
            raise ValueError("unknown line")
        elif tag == "D" and not run.clones:
            idx, wstatus, used = int(fields[1]), _wait_status(fields[2]), _finite(fields[3])
            killed = None if fields[4] == b"-" else fields[4].decode("ascii")
            if killed not in (None, "cpu", "wall", "output"):
                raise ValueError("unknown kill reason")
            if not pending or idx != pending[0]:
                return
            run.last_event = _monotonic()
            run.reported_cpu += used
            self._test_ended(run, idx, wstatus, used, killed, job, pending, statuses, messages, cpu, values)

    def _test_ended(self, run, idx, wstatus, used, killed, job, pending, statuses, messages, cpu, values) -> None:
        """Test ``idx`` (``pending[0]``) is over: its process ended with ``wstatus`` after ``used`` CPU seconds,
        killed (``"cpu"``, ``"wall"``, ``"output"``) or not (None). Its verdict comes from what it reported, else
        from how it ended."""
        timeout = job.timeout_s
        pending.popleft()
        run.last_cpu = run.cpu() or run.last_cpu  # S's own time is judged per test
        run.reported.append(idx)
        cpu[idx] = float(used)
        reported = values.pop(idx, None)
        if killed == "output":
            statuses[idx], messages[idx] = "error", "output over the limit"
        elif killed or float(used) > timeout:
            statuses[idx] = "timeout"
            messages[idx] = "wall-clock backstop (blocked or sleeping)" if killed == "wall" else "CPU time limit"
        elif reported is not None:
            statuses[idx], messages[idx] = reported
        elif job.kind == STDIO and os.WIFEXITED(int(wstatus)):
            # A script may end itself with os._exit (a common fast-exit idiom); its output is still judged by
            # the server, so an exit without a line only decides whether there is output to judge.
            code = os.WEXITSTATUS(int(wstatus))
            statuses[idx], messages[idx] = ("done", "") if code == 0 else ("error", f"exit code {code}")
        else:
            wstatus = int(wstatus)
            statuses[idx] = "crash"
            if os.WIFSIGNALED(wstatus) and os.WTERMSIG(wstatus) == signal.SIGSEGV:
                messages[idx] = "segmentation fault"
            else:
                messages[idx] = _describe_exit(wstatus)
