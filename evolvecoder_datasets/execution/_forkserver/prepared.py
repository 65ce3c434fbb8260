"""Tests as this server receives them: classified and compiled once per distinct source, by the server (trusted).

``prepare_test`` turns one test of a job into a :class:`PreparedTest` (probe steps, a whole test compiled by the
caller, or the reason it is invalid), and ``_TESTS`` keeps the prepared tests across jobs.
"""

from __future__ import annotations

import binascii
import collections
import marshal
import types

from .lines import MAX_MESSAGE, _a2b_strict
from .pristine import _len, _type, pin_builtins

pin_builtins(globals())

# The names a whole test's compiled code binds its comparator and value stripper to (see ``_inside.py``, where the
# caller compiles such tests: this process never imports ``ast``).
_CMP_NAME = "_ecd_cmp_"
_STRIP_NAME = "_ecd_strip_"


# Taken when this module is imported, before any program runs: where S was cloned from the zygote it reads its
# tests after the program loaded in it, which could have replaced ``marshal.loads``.
_marshal_loads, _marshal_dumps, _CodeType, _BinasciiError = marshal.loads, marshal.dumps, types.CodeType, binascii.Error


class PreparedTest:
    """A test ready to run: ``kind`` is ``plan`` (probe steps; values go to the judge), ``stmt`` (a test the judge
    could not split, run whole) or ``invalid``."""

    __slots__ = ("kind", "code", "steps", "message", "wire")

    def __init__(self, kind, code=None, steps=(), message=""):
        self.kind, self.code, self.steps, self.message = kind, code, steps, message
        self.wire = None


def test_wire(test: PreparedTest) -> bytes:
    """A runnable test as this server sends it to a solution process cloned from the zygote: ``p`` and the
    ``marshal`` form of its probe steps, or ``s`` and that of its code (made once per test, kept with it). S loads
    it in microseconds, where compiling the source again would cost every test tens."""
    if test.wire is None:
        test.wire = b"p" + _marshal_dumps(test.steps) if test.kind == "plan" else b"s" + _marshal_dumps(test.code)
    return test.wire


def test_from_wire(data: bytes) -> PreparedTest:
    """The test :func:`test_wire` sent (in S, from the server, which is trusted; read with names pinned before any
    program ran)."""
    if data[:1] == b"p":
        return PreparedTest("plan", steps=_marshal_loads(data[1:]))
    if data[:1] == b"s":
        return PreparedTest("stmt", code=_marshal_loads(data[1:]))
    raise ValueError("not a test from the server")


def prepare_test(spec: str) -> PreparedTest:
    """Compile one test as the caller sent it. Never raises: a broken one becomes kind ``invalid``.

    ``spec`` is ``P`` + probe steps (``x<statement>`` or ``p<expression>``, separated by ``\x1f``), ``M`` + a whole
    test the judge could not split (compiled by the caller, ``_inside.inside_spec``, base64 of its ``marshal``
    form), or ``E`` + the reason a test is invalid.
    """
    tag, body = spec[:1], spec[1:]
    if tag == "E":
        return PreparedTest("invalid", message=body[:MAX_MESSAGE])
    if tag == "P":
        try:
            steps = []
            for part in body.split("\x1f") if body else ():
                kind, src = part[:1], part[1:]
                mode = "eval" if kind == "p" else "exec"
                if kind not in ("p", "x"):
                    raise ValueError(f"unknown step {kind!r}")
                steps.append((kind, compile(src, "<test>", mode, dont_inherit=True)))
        except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError) as err:
            return PreparedTest("invalid", message=f"probe does not compile: {type(err).__name__}: {err}"[:MAX_MESSAGE])
        return PreparedTest("plan", steps=tuple(steps))
    if tag != "M":
        return PreparedTest("invalid", message="unknown test encoding")
    # A whole test, compiled by the caller (trusted, the same interpreter) into the code of ``_ecd_make_``.
    try:
        code = _marshal_loads(_a2b_strict(body.encode("ascii")))
        if _type(code) is not _CodeType or code.co_argcount != 2:
            raise ValueError("not the code of a test")
    except (ValueError, TypeError, EOFError, _BinasciiError, UnicodeEncodeError) as err:
        return PreparedTest("invalid", message=f"malformed test code: {type(err).__name__}: {err}"[:MAX_MESSAGE])
    return PreparedTest("stmt", code=code)


class _LRU(collections.OrderedDict):
    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def get_or(self, key, make):
        try:
            self.move_to_end(key)
            return self[key]
        except KeyError:
            value = self[key] = make(key)
            if _len(self) > self.size:
                self.popitem(last=False)
            return value


# Compiled tests, kept across jobs: a pass matrix sends the same tests with every program of a problem. Small on
# purpose: every solution child and grandchild is a fork of this process, and fork and exit cost grows with the
# pages it maps. A prepared test holds ~1.3 KB; at 20,000 entries the cache added 26 MB to the server and isolated
# mode ran 27% slower after a long run (832 -> 608 tests/s). 1,024 entries (~1.3 MB) hold the tests of the few
# problems a worker has in flight.
_TESTS = _LRU(1_024)
