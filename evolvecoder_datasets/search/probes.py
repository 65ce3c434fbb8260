"""Programs that make the sandbox answer the search's questions through verdicts alone.

The search needs three things from a problem's reference solution that only running it can tell, and it must not
run it outside the sandbox: whether an input is usable (the reference returns plain data, the same twice, quickly),
whether a program under test returns what the reference returns on an input, and the reference's return value
itself. :class:`ProbeProgram` writes one sandboxed program per question whose tests are plain truth-valued asserts
(``assert _ecd_same(3)``), so every answer travels as a pass or a fail, the one thing every sandbox mode reports the
same way. A value is read bit by bit (its length first, then the bytes of its ``repr``), then parsed back with
``ast.literal_eval`` on the trusted side: nothing here depends on the sandbox's messages or internals.

The reference and the program under test run side by side in one process, each in its own namespace, so an
answer about a hostile program may be wrong; the search only uses such answers to *choose* inputs, and every test
it keeps is then judged the ordinary way (the reference must pass it, and the pool runs it).

Example:
    >>> from evolvecoder_datasets.execution import Sandbox
    >>> from evolvecoder_datasets.search.probes import ProbeProgram, read_values
    >>> probe = ProbeProgram("def sq(x):\\n    return x * x\\n", "sq", [(3,), (-2,)])
    >>> with Sandbox(workers=1, mode="fast") as sb:
    ...     usable = sb.run(probe.program(), probe.usable_tests()).passed
    ...     values = read_values(sb, probe, [0, 1])
    >>> usable, values
    ([True, True], [(True, '9'), (True, '4')])
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

from ..tolerance import FLOAT_ABS_TOL, FLOAT_REL_TOL
from .calls import render_args

__all__ = ["REFERENCE_TIMEOUT_FACTOR", "ProbeProgram", "read_values", "run_probe"]

_LENGTH_BITS = 13  # values are capped well below 2**13 bytes

#: A probe test that runs only the reference (usability, value reads) needs at most about 3 x ``cpu_s`` of Python
#: code: the usability test's CPU alarms end each call there. This many x ``cpu_s`` is its sandbox limit (one more
#: for ``repr`` and the alarm handler's delay), whatever the problem's calibrated limit.
REFERENCE_TIMEOUT_FACTOR = 4.0

# The probe helpers. Names start with _ecd_ so they cannot clash with a solution's own names, and every solution
# runs in its own dict namespace.
_HELPERS = '''
import ast as _ecd_ast
import signal as _ecd_signal
import time as _ecd_time

def _ecd_load(source, name):
    namespace = {"__name__": name}
    exec(compile(source, name, "exec"), namespace)
    return namespace

def _ecd_call(namespace, k):
    return eval(_ECD_CALLEE, namespace)(*_ECD_ARGS[k]())

def _ecd_plain(value, top=True):
    kind = type(value)
    if value is None or kind in (bool, int, str, bytes):
        return True
    if kind is float:
        return (top or _ECD_NESTED_FLOATS) and value == value and abs(value) != float("inf")
    if kind in (list, tuple, set, frozenset):
        return all(_ecd_plain(item, False) for item in value)
    if kind is dict:
        return all(_ecd_plain(k, False) and _ecd_plain(v, False) for k, v in value.items())
    return False

class _EcdSlow(BaseException):
    pass

def _ecd_slow(signum, frame):
    raise _EcdSlow()

_ecd_cache = {}

def _ecd_admits(k):
    # the problem's precondition (its domain), on fresh arguments; anything but True (an error too) is outside
    if _ECD_PRE is None:
        return True
    try:
        return _ECD_PRE(*_ECD_ARGS[k]()) is True
    except Exception:
        return False

def _ecd_ref_value(k):
    if k not in _ecd_cache:
        _ecd_cache[k] = _ecd_call(_ECD_REF, k)
    return _ecd_cache[k]

def _ecd_usable(k):
    # The reference's two calls run under a CPU alarm of the process's own (user and system time, as the sandbox's
    # limit counts: a recursion hovering at a boundary of CPython's frame stack chunks spends most of its time in
    # the kernel, mapping and unmapping a chunk per call), so an input it never finishes costs about the alarm, not
    # the sandbox's limit, and does not end the run (two sandbox timeouts in a row leave every later input
    # unexecuted). _ECD_CHEAPER: the cheaper call decides (a call slowed by a busy machine does not drop an input
    # on its own), one alarm of 3 x _ECD_CPU over both; else the first call decides, cut at _ECD_CPU (an input it
    # would reject anyway), and the second may take 2 x _ECD_CPU. Either way a test ends within about 3 x _ECD_CPU
    # of Python code (REFERENCE_TIMEOUT_FACTOR).
    if not _ecd_admits(k):
        return False
    _ecd_signal.signal(_ecd_signal.SIGPROF, _ecd_slow)
    _ecd_signal.setitimer(_ecd_signal.ITIMER_PROF, (3 if _ECD_CHEAPER else 1) * _ECD_CPU)
    try:
        start = _ecd_time.process_time()
        first = _ecd_call(_ECD_REF, k)
        middle = _ecd_time.process_time()
        if not _ECD_CHEAPER:
            if middle - start > _ECD_CPU:
                return False
            _ecd_signal.setitimer(_ecd_signal.ITIMER_PROF, 2 * _ECD_CPU)
        second = _ecd_call(_ECD_REF, k)
        if _ECD_CHEAPER and min(middle - start, _ecd_time.process_time() - middle) > _ECD_CPU:
            return False
        text = repr(first)
        if len(text) > _ECD_MAX_CHARS or text != repr(second) or not _ecd_plain(first):
            return False
        back = _ecd_ast.literal_eval(text)
        return repr(back) == text and back == first
    except (Exception, _EcdSlow):
        return False
    finally:
        _ecd_signal.setitimer(_ecd_signal.ITIMER_PROF, 0)

def _ecd_tolerance(expected):
    return _ECD_ABS_TOL + _ECD_REL_TOL * abs(expected)

def _ecd_same(k):
    expected = _ecd_ref_value(k)
    got = _ecd_call(_ECD_PROG, k)
    if type(expected) is float:
        return abs(got - expected) <= _ecd_tolerance(expected)
    return got == expected

_ecd_told = []

class _EcdSkipped(Exception):
    pass

def _ecd_first(k):
    # the same question as _ecd_same, asked until the program first disagrees in this process: later questions
    # raise without calling it (an error verdict), so a program already told apart costs nothing more
    if _ecd_told:
        raise _EcdSkipped(k)
    expected = _ecd_ref_value(k)
    try:
        got = _ecd_call(_ECD_PROG, k)
        agree = abs(got - expected) <= _ecd_tolerance(expected) if type(expected) is float else got == expected
        agree = agree is True
    except Exception:
        agree = False
    if not agree:
        _ecd_told.append(k)
    return agree

def _ecd_encoded(k):
    return repr(_ecd_ref_value(k)).encode("utf-8")

def _ecd_length_bit(k, b):
    return (len(_ecd_encoded(k)) >> b) & 1 == 1

def _ecd_bit(k, i):
    return (_ecd_encoded(k)[i >> 3] >> (i & 7)) & 1 == 1
'''


class ProbeProgram:
    """One reference, one callee and a list of argument tuples, written as sandboxable probe programs.

    Args:
        reference (`str`): the reference solution (a whole program).
        callee (`str`): the call expression the tests use (``"sq"``, ``"Solution().two_sum"``).
        inputs (`Sequence[tuple]`): argument tuples, addressed by their index ``k`` in the tests (read once: the
            probe's text is rendered at the first :meth:`program` call and shared by every program under test).
        cpu_s (`float`, defaults to 0.1): CPU seconds the reference may use on one input for it to be usable.
        max_chars (`int`, defaults to 1000): longest ``repr`` of a usable return value.
        nested_floats (`bool`, defaults to `False`): a usable value may hold floats inside a list, tuple, set or
            dict (compared exactly by whoever writes the assert); by default only a top-level float, which the
            written assert compares with the shared tolerance.
        cheaper_call (`bool`, defaults to `False`): the cheaper of the reference's two calls on an input decides
            whether it is within ``cpu_s`` (a call slowed by a busy machine does not drop an input on its own);
            by default the first call does, and a slow one is cut at ``cpu_s``. Either way a CPU alarm of the
            process's own ends an input the reference does not finish, within about 3 x ``cpu_s``.
        precondition (`str`, *optional*): source defining ``precondition(*args)``, the problem's domain
            (:meth:`~evolvecoder_datasets.search.domain.Domain.predicate_source`): an input it does not admit (an
            error included) is never usable, and :meth:`admitted_tests` asks it alone. It runs in its own namespace.

    Example:
        >>> probe = ProbeProgram("def f(x):\\n    return x", "f", [(1,), (2,)])
        >>> probe.same_tests()
        ['assert _ecd_same(0)', 'assert _ecd_same(1)']
        >>> probe.reference_timeout()
        0.4
    """

    def __init__(
        self,
        reference: str,
        callee: str,
        inputs: Sequence[tuple],
        *,
        cpu_s: float = 0.1,
        max_chars: int = 1000,
        nested_floats: bool = False,
        cheaper_call: bool = False,
        precondition: str | None = None,
    ) -> None:
        self.reference = reference
        self.callee = callee
        self.inputs = tuple(tuple(a) for a in inputs)  # fixed: the program's text is rendered once
        self.cpu_s = float(cpu_s)
        self.max_chars = int(max_chars)
        self.nested_floats = bool(nested_floats)
        self.cheaper_call = bool(cheaper_call)
        self.precondition = precondition or None
        self._head: str | None = None

    def reference_timeout(self) -> float:
        """CPU seconds per test for a probe that runs only the reference (:meth:`usable_tests`, value reads):
        :data:`REFERENCE_TIMEOUT_FACTOR` x ``cpu_s``, since the usability test's alarms end each call well before.

        Example:
            >>> ProbeProgram("def f(x):\\n    return x", "f", [(1,)], cpu_s=0.05).reference_timeout()
            0.2
        """
        return round(REFERENCE_TIMEOUT_FACTOR * self.cpu_s, 6)

    def program(self, under_test: str | None = None) -> str:
        """The probe program: the reference, optionally a program under test, the inputs and the helpers.

        Args:
            under_test (`str`, *optional*): a program compared with the reference by :meth:`same_tests`.

        Example:
            >>> "_ECD_PROG" in ProbeProgram("def f(x):\\n    return x", "f", [(1,)]).program("def f(x):\\n    return 2")
            True
        """
        if self._head is None:
            self._head = self._render_head()
        if under_test is None:
            return self._head
        return self._head + f"_ECD_PROG = _ecd_load({under_test!r}, '<program>')\n"

    def _render_head(self) -> str:
        """The probe program without a program under test (one per probe: every target's program shares it)."""
        makers = ",\n    ".join(f"lambda: ({render_args(a)}{',' if a else ''})" for a in self.inputs)
        parts = [
            _HELPERS,
            f"_ECD_CALLEE = {self.callee!r}",
            f"_ECD_CPU = {self.cpu_s!r}",
            f"_ECD_MAX_CHARS = {self.max_chars!r}",
            f"_ECD_NESTED_FLOATS, _ECD_CHEAPER = {self.nested_floats!r}, {self.cheaper_call!r}",
            f"_ECD_ABS_TOL, _ECD_REL_TOL = {FLOAT_ABS_TOL!r}, {FLOAT_REL_TOL!r}",
            f"_ECD_ARGS = [\n    {makers}\n]",
            (f"_ECD_PRE = _ecd_load({self.precondition!r}, '<domain>').get('precondition')" if self.precondition
             else "_ECD_PRE = None"),
            f"_ECD_REF = _ecd_load({self.reference!r}, '<reference>')",
        ]
        return "\n".join(parts) + "\n"

    def usable_tests(self, indices: Sequence[int] | None = None) -> list[str]:
        """Per input, a test that passes when the reference returns plain data, deterministically, within ``cpu_s``
        (see the class's ``nested_floats`` and ``cheaper_call``). Run it under :meth:`reference_timeout`.

        Example:
            >>> ProbeProgram("def f(x):\\n    return x", "f", [(1,), (2,)]).usable_tests([1])
            ['assert _ecd_usable(1)']
        """
        return [f"assert _ecd_usable({k})" for k in self._indices(indices)]

    def admitted_tests(self, indices: Sequence[int] | None = None) -> list[str]:
        """Per input, a test that passes when the problem's precondition admits it (every input, without one).

        Example:
            >>> probe = ProbeProgram("def f(x):\\n    return x", "f", [(1,), (-1,)],
            ...                      precondition="def precondition(x):\\n    return x > 0")
            >>> probe.admitted_tests()
            ['assert _ecd_admits(0)', 'assert _ecd_admits(1)']
        """
        return [f"assert _ecd_admits({k})" for k in self._indices(indices)]

    def same_tests(self, indices: Sequence[int] | None = None) -> list[str]:
        """Per input, a test that passes when the program under test returns what the reference returns.

        Float results compare with the tolerance the written test will use (:mod:`~evolvecoder_datasets.tolerance`).
        """
        return [f"assert _ecd_same({k})" for k in self._indices(indices)]

    def first_tests(self, indices: Sequence[int] | None = None) -> list[str]:
        """Per input, the question of :meth:`same_tests`, asked in order until the program under test first
        disagrees: that test fails, and every later one errors without calling the program (in ``fast`` mode, where
        one process runs the tests in sequence; ``isolated`` mode asks every question). A non-error verdict is an
        execution spent; an error is one skipped.

        Example:
            >>> ProbeProgram("def f(x):\\n    return x", "f", [(1,), (2,)]).first_tests()
            ['assert _ecd_first(0)', 'assert _ecd_first(1)']
        """
        return [f"assert _ecd_first({k})" for k in self._indices(indices)]

    def length_tests(self, indices: Sequence[int]) -> list[str]:
        """Per input, the bits of the byte length of the reference value's ``repr`` (low bit first).

        Example:
            >>> ProbeProgram("def f(x):\\n    return x", "f", [(1,)]).length_tests([0])[:2]
            ['assert _ecd_length_bit(0, 0)', 'assert _ecd_length_bit(0, 1)']
        """
        return [f"assert _ecd_length_bit({k}, {b})" for k in indices for b in range(_LENGTH_BITS)]

    def byte_tests(self, k: int, length: int) -> list[str]:
        """The bits of the reference value's ``repr`` on input ``k`` (``length`` bytes, low bit first).

        Example:
            >>> len(ProbeProgram("def f(x):\\n    return x", "f", [(1,)]).byte_tests(0, 2))
            16
        """
        return [f"assert _ecd_bit({k}, {i})" for i in range(8 * length)]

    def _indices(self, indices: Sequence[int] | None) -> list[int]:
        return list(range(len(self.inputs))) if indices is None else list(indices)


def _bits(statuses: Sequence[str]) -> list[int] | None:
    """Pass/fail verdicts as bits; any other outcome (error, timeout, crash) means the read failed."""
    if any(s not in ("pass", "fail") for s in statuses):
        return None
    return [1 if s == "pass" else 0 for s in statuses]


def run_probe(sandbox: Any, program: str, tests: Sequence[str], timeout_s: float | None = None) -> Any:
    """``sandbox.run(program, tests)``, under ``timeout_s`` CPU seconds per test where given (the sandbox's own
    ``timeout_s`` stays the ceiling).

    Example:
        >>> from evolvecoder_datasets.execution import Sandbox
        >>> with Sandbox(workers=1, mode="fast") as sb:
        ...     run_probe(sb, "while True:\\n    pass", ["assert True"], timeout_s=0.1).statuses
        ['timeout']
    """
    if timeout_s is None:
        return sandbox.run(program, list(tests))
    from ..execution import Job

    return sandbox.run_many([Job(program, tests=list(tests), timeout_s=timeout_s)])[0]


def read_values(
    sandbox: Any, probe: ProbeProgram, indices: Sequence[int], *, timeout_s: float | None = None
) -> list[tuple[bool, str | None]]:
    """The ``repr`` of the reference's return value on each of ``indices``, read through pass/fail verdicts.

    Two sandbox runs of the reference-only probe program: one for the lengths, one for all the bytes. Reading costs
    ``13 + 8 * len(repr)`` tiny tests per value, so the caller reads only the inputs it keeps (a fast-mode sandbox
    reads ~10k bits per second on one core).

    Args:
        sandbox (`Sandbox`): an open sandbox (``mode="fast"`` is the quick choice; the reference is the only
            program that runs).
        probe (`ProbeProgram`): the reference, callee and inputs.
        indices (`Sequence[int]`): inputs to read.
        timeout_s (`float`, *optional*): CPU seconds per test (default: the sandbox's); the search gives
            :meth:`ProbeProgram.reference_timeout`.

    Returns:
        `list[tuple[bool, str | None]]`: per index, ``(True, text)`` where ``text`` is the canonical ``repr`` of a
        plain-data value (``ast.literal_eval(text)`` gives the value back), or ``(False, None)`` when the read failed
        or the text is not such a literal.

    Example:
        >>> from evolvecoder_datasets.execution import Sandbox
        >>> probe = ProbeProgram("def up(s):\\n    return s.upper()", "up", [("é",)])
        >>> with Sandbox(workers=1, mode="fast") as sb:
        ...     read_values(sb, probe, [0])
        [(True, "'É'")]
    """
    indices = list(indices)
    if not indices:
        return []
    program = probe.program()
    report = run_probe(sandbox, program, probe.length_tests(indices), timeout_s)
    bits = _bits(report.statuses)
    if bits is None or report.infra_error:
        return [(False, None)] * len(indices)
    lengths = [
        sum(bit << b for b, bit in enumerate(bits[j * _LENGTH_BITS : (j + 1) * _LENGTH_BITS]))
        for j in range(len(indices))
    ]
    tests: list[str] = []
    for k, length in zip(indices, lengths):
        tests.extend(probe.byte_tests(k, length))
    report = run_probe(sandbox, program, tests, timeout_s) if tests else None
    statuses = report.statuses if report is not None else []
    out: list[tuple[bool, str | None]] = []
    offset = 0
    for length in lengths:
        chunk = statuses[offset : offset + 8 * length]
        offset += 8 * length
        bits = _bits(chunk)
        if bits is None or (report is not None and report.infra_error) or length == 0:
            out.append((False, None))
            continue
        data = bytes(sum(bits[8 * i + b] << b for b in range(8)) for i in range(length))
        out.append(_literal(data))
    return out


def _literal(data: bytes) -> tuple[bool, str | None]:
    """``(True, text)`` when ``data`` is the UTF-8 of a canonical literal ``repr``, else ``(False, None)``."""
    try:
        text = data.decode("utf-8")
        value = ast.literal_eval(text)
    except (UnicodeDecodeError, ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None
    return (True, text) if repr(value) == text else (False, None)
