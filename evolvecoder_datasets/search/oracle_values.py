"""The reference's values on many oracle inputs, read back through one bounded text channel.

The oracle (:mod:`evolvecoder_datasets.search.oracle`) needs the ``repr`` of the reference's value on each usable
input. Reading them as pass/fail verdicts costs one execution per bit (about 8 per compressed byte); here a
process that runs **nothing but the reference** (the probe program of
:class:`~evolvecoder_datasets.search.probes.ProbeProgram`, no program under test) prints one ``repr`` line per
input, as a *valuing* stdin/stdout job (:meth:`~evolvecoder_datasets.execution.Sandbox.value_stdio`): the service
reads its stdout through a pipe, bounded in bytes (``max_output_bytes``) and time, and the caller holds a string.
The trust is that of the bit channel (whatever the reference's process could spell in bits it can print; neither
carries an expected value into a process that ran program code, DESIGN.md §4), and the text is parsed on the
trusted side with ``ast.literal_eval`` only, each line bounded by ``max_chars``.

Each stdin case asks for up to ``chunk`` indices; the process prints values until its own CPU time passes half its
limit, so one slow input costs a shorter case, never a lost one: what a case did not print is asked again in the
next job, one index a case where a case did not end normally. A value the reference cannot give back there makes
the whole read fail (``None``), as a failed bit read did.

Example:
    >>> from evolvecoder_datasets.execution import Sandbox
    >>> from evolvecoder_datasets.search.oracle_values import read_reference_values
    >>> from evolvecoder_datasets.search.probes import ProbeProgram
    >>> probe = ProbeProgram("def sq(x):\\n    return x * x\\n", "sq", [(3,), (-2,), ("a",)])
    >>> with Sandbox(workers=1, mode="fast") as sb:
    ...     read_reference_values(sb, probe, [0, 1], max_chars=50)
    (['9', '4'], 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["read_reference_values", "read_usable"]

_MARK = "#ecd-values"

# Appended to the reference-only probe program: read the indices from stdin, print a mark (anything the reference
# printed while loading comes before it) and then one repr line per value, until the process's CPU time passes the
# budget. The reference's own prints during a call go to a buffer, never between the lines.
_PRINTER = '''
import io as _ecd_io
import sys as _ecd_sys

def _ecd_print_values():
    wanted = [int(token) for token in _ecd_sys.stdin.read().split()]
    out = _ecd_sys.stdout
    out.write("\\n''' + _MARK + '''\\n")
    for k in wanted:
        _ecd_sys.stdout = _ecd_io.StringIO()
        try:
            if _ECD_WHAT == "value":
                text = repr(_ecd_ref_value(k))
            else:  # usable: the flag and the CPU seconds the question took (the reference's two calls)
                began = _ecd_time.process_time()
                text = "0" if not _ecd_usable(k) else "1 %.6f" % (_ecd_time.process_time() - began)
        finally:
            _ecd_sys.stdout = out
        out.write(text + "\\n")
        if _ecd_time.process_time() > _ECD_BUDGET:
            break
    out.flush()

_ecd_print_values()
'''


def _program(probe: Any, budget_s: float, what: str) -> str:
    return probe.program() + f"_ECD_BUDGET, _ECD_WHAT = {budget_s!r}, {what!r}\n" + _PRINTER


def _lines(output: str | None, asked: int, max_chars: int) -> list[str] | None:
    """The value lines after the last mark (at most ``asked``); ``None`` where the output is not what the printer
    writes."""
    mark = "\n" + _MARK + "\n"
    if output is None or mark not in output:
        return None
    body = output.rsplit(mark, 1)[1]
    if body and not body.endswith("\n"):
        return None
    lines = body.split("\n")[:-1]
    if len(lines) > asked or any(len(line) > max_chars for line in lines):
        return None
    return lines


def _read(sandbox: Any, probe: Any, indices: list[int], what: str, max_chars: int, timeout_s: float | None,
          chunk: int, passes: int) -> tuple[dict[int, str] | None, int]:
    """Index -> printed line for the indices read back, and the cases spent; ``None`` on a sandbox failure."""
    limit = float(timeout_s or sandbox.settings.timeout_s)
    program = _program(probe, limit / 2, what)
    values: dict[int, str] = {}
    spent, size = 0, max(1, int(chunk))
    for _ in range(max(1, passes)):
        left = [k for k in indices if k not in values]
        if not left:
            break
        groups = [left[i: i + size] for i in range(0, len(left), size)]
        report = sandbox.value_stdio(program, [" ".join(map(str, g)) + "\n" for g in groups], timeout_s=timeout_s)
        spent += len(groups)
        if report.infra_error:
            return None, spent
        failed = False
        for group, status, output in zip(groups, report.statuses, report.outputs or [None] * len(groups)):
            lines = _lines(output, len(group), max_chars) if status == "pass" else None
            if lines is None:
                failed = True
                continue
            values.update(zip(group, lines))
        size = 1 if failed else size  # a case that did not end normally: its indices one a case from now on
    return values, spent


def read_reference_values(
    sandbox: Any, probe: Any, indices: Sequence[int], *, max_chars: int, timeout_s: float | None = None,
    chunk: int = 64, passes: int = 4,
) -> tuple[list[str] | None, int]:
    """The ``repr`` lines of the reference's values on ``indices`` (in order) and the stdin cases spent.

    Args:
        sandbox (`Sandbox`): an open sandbox (its ``timeout_s`` is the ceiling of each case).
        probe (`ProbeProgram`): the reference, its callee and the inputs (``indices`` address them).
        indices (`Sequence[int]`): the inputs to value (the usable ones: each call ends within about 3 x
            ``probe.cpu_s``).
        max_chars (`int`): longest line accepted (a longer one makes the read fail).
        timeout_s (`float`, *optional*): CPU seconds per case (default: the sandbox's); the process stops
            printing at half of it.
        chunk (`int`, defaults to 64): indices asked per case.
        passes (`int`, defaults to 4): jobs at most; each asks again what the previous left unprinted.

    Returns:
        `tuple[list[str] | None, int]`: the lines (`None` where any value could not be read back) and the cases run.

    Example:
        >>> from evolvecoder_datasets.search.oracle_values import read_reference_values
        >>> read_reference_values(None, None, [], max_chars=10)
        ([], 0)
    """
    indices = list(indices)
    if not indices:
        return [], 0
    values, spent = _read(sandbox, probe, indices, "value", max_chars, timeout_s, chunk, passes)
    if values is None or len(values) < len(indices):
        return None, spent
    return [values[k] for k in indices], spent


def read_usable(sandbox: Any, probe: Any, n: int, *, timeout_s: float | None = None, chunk: int = 64,
                passes: int = 4) -> tuple[dict[int, float], int]:
    """Which of the probe's ``n`` inputs are usable (``_ecd_usable``: plain data, the same twice, within
    ``cpu_s``; each asked under the process's own CPU alarm), with the CPU seconds the reference's two calls took
    on each, and the stdin cases spent. An input whose case never ends normally, even alone, is not usable.

    Example:
        >>> from evolvecoder_datasets.execution import Sandbox
        >>> from evolvecoder_datasets.search.probes import ProbeProgram
        >>> probe = ProbeProgram("def inv(x):\\n    return 1 // x\\n", "inv", [(1,), (0,), (2,)])
        >>> with Sandbox(workers=1, mode="fast") as sb:
        ...     usable, cases = read_usable(sb, probe, 3)
        >>> sorted(usable), all(0 <= s < 0.1 for s in usable.values()), cases
        ([0, 2], True, 1)
    """
    if n <= 0:
        return {}, 0
    values, spent = _read(sandbox, probe, list(range(n)), "usable", 40, timeout_s, chunk, passes)
    usable: dict[int, float] = {}
    for k, line in sorted((values or {}).items()):
        flag, _, seconds = line.partition(" ")
        if flag == "1":
            try:
                usable[k] = max(0.0, float(seconds))
            except ValueError:
                continue
    return usable, spent
