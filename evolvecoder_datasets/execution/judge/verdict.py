"""The verdict of a split test: probe entries read from the sandbox's report, then the judge's part evaluated."""

from __future__ import annotations

from .._wire import WireError, encode
from .._wire_decode import IteratorPrefix, decode_at, read_identity
from .interpreter import _Break, _Continue, _Interpreter, _ProbeFailed, _Return, _Stopped
from .language import MAX_MESSAGE, JudgeLimit
from .nodes import TestPlan

_ITERATORS = (type(iter([])), IteratorPrefix)

_PROBE_STATUSES = frozenset({"fail", "error", "memory", "timeout", "crash"})


def read_entries(payload: bytes, expected: int) -> list:
    """The probe entries of a report: ``E<n>:`` then ``v<id>;<value>`` / ``e<status><message><chain><args>`` /
    ``x<status><message>`` (``args``: the exception's args, a tuple, or None where they did not travel)."""
    if payload[:1] != b"E":
        raise WireError("not a probe report")
    colon = payload.find(b":", 1, 24)
    count = payload[1:colon]
    if colon < 0 or not count.isdigit() or int(count) > expected:
        raise WireError("the report does not match the test's probes")
    pos, out = colon + 1, []
    seen: dict = {}  # sandbox identity -> (its bytes, the value decoded from them)
    owned: list = []  # program objects sent with their identity: their own __eq__'s verdicts follow the entries
    for _ in range(int(count)):
        tag = payload[pos : pos + 1]
        if tag == b"v":
            ident, start = read_identity(payload, pos + 1)
            value, pos = decode_at(payload, start, owned=owned)
            value = _one_object(seen, ident, payload[start:pos], value)
            out.append(("v", value, ident))
        elif tag in (b"e", b"x"):
            status, pos = decode_at(payload, pos + 1)
            message, pos = decode_at(payload, pos)
            chain, args = "", None
            if tag == b"e":
                chain, pos = decode_at(payload, pos)
                args, pos = decode_at(payload, pos)
            if status not in _PROBE_STATUSES or type(message) is not str or type(chain) is not str or \
                    (args is not None and type(args) is not tuple):  # fmt: skip
                raise WireError("malformed probe entry")
            out.append(("e", status, message, chain, args) if tag == b"e" else ("x", status, message))
        else:
            raise WireError("malformed probe entry")
    table: dict = {}  # one per report, even with no verdicts sent: its objects are known as one process's
    if payload[pos : pos + 1] == b"=":
        pos = _read_verdicts(payload, pos, table)
    for obj in owned:
        obj.verdicts = table
    if pos != len(payload):
        raise WireError("trailing bytes after the report")
    return out


def _read_verdicts(payload: bytes, pos: int, table: dict) -> int:
    """The verdicts of the program's own ``__eq__`` on pairs of its objects (``=<n>:`` then ``<id>,<id>,<T|F|M|R>;``,
    see ``_wire_own.OwnVerdicts``), written into ``table`` as ``{(serial, serial): bool}`` (both orders; a pair it
    raised on, or whose orders disagree, is left out: comparing it is an error). Returns the position after them."""
    colon = payload.find(b":", pos + 1, pos + 24)
    count = payload[pos + 1 : colon]
    if colon < 0 or not count.isdigit() or int(count) > (len(payload) - colon) // 6:
        raise WireError("malformed verdicts")
    pos = colon + 1
    for _ in range(int(count)):
        a, pos = read_identity(payload, pos, b",")
        b, pos = read_identity(payload, pos, b",")
        verdict = payload[pos : pos + 2]
        if verdict not in (b"T;", b"F;", b"M;", b"R;", b"t;", b"f;", b"m;", b"r;"):
            raise WireError("malformed verdict")
        if verdict in (b"T;", b"F;"):  # both orders agree: an answer (M, R: none, comparing them is refused)
            table[(a, b)] = table[(b, a)] = verdict == b"T;"
        elif verdict in (b"t;", b"f;"):  # the same, of the program's own __ne__
            table[(a, b, "!=")] = table[(b, a, "!=")] = verdict == b"t;"
        pos += 2
    return pos


def _one_object(seen: dict, ident: int, data: bytes, value):
    """The judge's value for a probe: the one decoded before it where the sandbox sent the same object (same
    identity) in the same state (same bytes), so ``x = f(); assert x == x`` compares one list with itself, as
    Python does (a ``nan`` inside is equal by identity), and a name probed twice is one object to the judge.

    An iterator the encoder consumed (a generator) is left exhausted in the sandbox by that encoding: a later probe
    of the same object sends nothing, and its state is the judge's iterator, which takes its place (``g = gen();
    next(g); next(g)`` steps one iterator). Both are the program's claims, like any value it sends.

    Example:
        >>> seen = {}
        >>> first = _one_object(seen, 7, b"l1:i1;", [1])
        >>> _one_object(seen, 7, b"l1:i1;", [1]) is first, _one_object(seen, 7, b"l1:i2;", [2]) is first
        (True, False)
    """
    before = seen.get(ident)
    if before is not None and (before[0] == data or (_is_iterator(before[1]) and _is_iterator(value))):
        return before[1]
    seen[ident] = (data, value)
    return value


def _is_iterator(value) -> bool:
    return isinstance(value, _ITERATORS)


def encode_entries(entries: list) -> bytes:
    """The sandbox side's report format, for tests and tools: ``[("v", value) | ("e"|"x", status, message)]``.

    A value entry may carry a third item, the value's identity in the sandbox (``is`` compares those).

    Example:
        >>> encode_entries([("v", 4)])
        b'E1:v1;i4;'
    """
    parts = []
    for i, entry in enumerate(entries):
        if entry[0] == "v":
            parts.append(b"v%x;" % (entry[2] if len(entry) > 2 else i + 1) + encode(entry[1]))
        else:
            chain = (encode(entry[3] if len(entry) > 3 else "") + encode(entry[4] if len(entry) > 4 else None)
                     if entry[0] == "e" else b"")
            parts.append(entry[0].encode() + encode(entry[1]) + encode(entry[2]) + chain)
    return b"E%d:" % len(parts) + b"".join(parts)


def judge(plan: TestPlan, payload: bytes, *, clean=None) -> tuple[str, str]:
    """The verdict of one split test from what its probes sent back: ``(status, message)``.

    ``payload`` holds one entry per sandbox step that ran (see :func:`encode_entries`): ``("v", value)`` for a
    probe's value, ``("e", status, message)`` for a probe that raised, ``("x", status, message)`` for a set-up
    statement that raised (the sandbox stops there). Anything else is a ``crash``, never a pass.

    Example:
        >>> from evolvecoder_datasets.execution.judge import plan_test
        >>> judge(plan_test("assert f(2) == 4"), encode_entries([("v", 4)]))
        ('pass', '')
        >>> judge(plan_test("assert f(2) == 4"), encode_entries([("e", "error", "ZeroDivisionError: division by zero")]))
        ('error', 'ZeroDivisionError: division by zero')
    """
    try:
        entries = read_entries(payload, len(plan.steps))
    except (WireError, RecursionError, MemoryError) as err:
        return "crash", f"unreadable report from the sandbox ({err})"[:MAX_MESSAGE]
    stopped = next((i for i, e in enumerate(entries) if e[0] == "x"), None)
    if stopped is None and len(entries) != len(plan.steps):
        return "crash", "the sandbox reported fewer values than the test has probes"
    fast = plan.fast
    if fast is not None and stopped is None:  # assert <probe> == <literal>: no interpreter needed
        entry = entries[0]
        if entry[0] != "v":
            return entry[1], entry[2][:MAX_MESSAGE]
        try:
            equal = bool(entry[1] == fast[1])
        except Exception as err:  # noqa: BLE001 - a lying truth value of a decoded object, say
            return "error", f"{type(err).__name__}: {err}"[:MAX_MESSAGE]
        return ("pass", "") if equal == fast[0] else ("fail", "AssertionError")
    interp = _Interpreter(entries)
    interp.clean = clean
    interp.stopped = stopped
    env: dict = {}
    try:
        interp.positioned(plan.body, env)
    except _Stopped:
        pass
    except _ProbeFailed as failed:
        return failed.status, failed.message[:MAX_MESSAGE]
    except AssertionError as err:
        text = str(err)
        return "fail", ("AssertionError: " + text if text else "AssertionError")[:MAX_MESSAGE]
    except JudgeLimit as err:
        return "error", f"judge: {err}"[:MAX_MESSAGE]
    except MemoryError:
        return "error", "judge: the test needs too much memory"
    except RecursionError:
        return "error", "judge: the test recurses too deeply"
    except (_Return, _Break, _Continue):
        return "error", "SyntaxError: 'return', 'break' or 'continue' outside its block"
    except Exception as err:  # noqa: BLE001 - the test's own operations raise like Python would
        return "error", f"{type(err).__name__}: {err}"[:MAX_MESSAGE]
    if stopped is not None:
        return entries[stopped][1], entries[stopped][2][:MAX_MESSAGE]
    return "pass", ""
