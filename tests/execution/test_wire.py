"""The value wire: how the results of a program's calls travel from the sandbox to the judge.

The bytes come from a process that ran untrusted code, so decoding must be exact for honest values, must refuse
forged or oversized ones with :class:`WireError` (which the judge turns into a ``crash``, never a pass), and must
cost time linear in the bytes however the value is shaped.
"""

from __future__ import annotations

import math
import time
from collections import deque
from decimal import Decimal
from fractions import Fraction

import pytest

from evolvecoder_datasets.execution import Sandbox
from evolvecoder_datasets.execution._wire import TooLarge, WireError, encode
from evolvecoder_datasets.execution._wire_decode import CycleRef, ForeignObject, ProgramObject, Unjudged, decode

EDGE_VALUES = [0, -1, 2**80, -(10**300), 10**6000, True, False, None, 0.1, -0.0, 1e308, 5e-324, math.inf, -math.inf,
               "", "a b\nc", "ünï ☃ 😀", "a\udc80b", [1, "x", None], (1, (2.5, "y")), {"k": [1, 2]}, {1, 2},
               frozenset({3}), Fraction(1, 3), Decimal("1.10"), deque([1, 2]), b"raw\x00bytes", 3 + 4j,
               range(2, 10, 3), [[[]]], {(1, 2): frozenset({"a"})}]  # fmt: skip


@pytest.mark.parametrize("value", EDGE_VALUES, ids=lambda v: type(v).__name__)
def test_every_value_round_trips_with_its_exact_type(value):
    back = decode(encode(value))
    assert type(back) is type(value)
    assert back == value
    if isinstance(value, float):
        assert math.copysign(1, back) == math.copysign(1, value)


def test_nan_round_trips_as_nan():
    assert math.isnan(decode(encode(math.nan)))


def test_subclasses_of_builtins_travel_as_the_data_they_hold():
    class Liar(list):
        def __iter__(self):
            return iter([99])

        def __eq__(self, other):
            return True

    class Text(str):
        def __str__(self):
            return "lie"

    back = decode(encode([Liar([1, 2]), Text("truth")]))
    assert list.__eq__(back[0], [1, 2]) and back[1] == "truth"
    # their class names survive (type(x) is list stays false, as in the program), their methods do not: what the
    # program's own dunders would answer (``==``, iteration) is refused (an error no ``except`` catches, never a
    # pass); a text the class gives its value (``str(x)``) is the program's output, computed in the sandbox
    assert type(back[0]).__name__ == "Liar" and type(back[0]).__bases__ == (list,) and list.__len__(back[0]) == 2
    assert type(back[1]).__name__ == "Text" and str.__str__(back[1]) == "truth" and str(back[1]) == "lie"
    for refused in (lambda: back[0] == [1, 2], lambda: list(back[0]), lambda: back == [[1, 2], "truth"]):
        with pytest.raises(Unjudged):
            refused()
    assert back[1] + "!" == "truth!"


def test_program_objects_travel_as_class_name_and_fields_and_compare_structurally():
    class Node:
        def __init__(self, val, nxt=None):
            self.val, self.next = val, nxt

        def __eq__(self, other):  # never consulted by the judge
            return True

    chain = None
    for i in range(3000):  # deeper than the interpreter's recursion limit
        chain = Node(i, chain)
    back = decode(encode(chain))
    assert isinstance(back, ProgramObject) and back.name.endswith("Node") and back.fields["val"] == 2999
    assert back == decode(encode(chain)) and back != decode(encode(Node(1)))
    assert back != 2999 and ProgramObject("Node", ()) != ForeignObject("Node", "")


def test_cycles_become_references_and_shared_graphs_are_bounded():
    loop = [1]
    loop.append(loop)
    back = decode(encode(loop))
    assert back[0] == 1 and back[1] == CycleRef(1)
    dag: list = []
    for _ in range(64):  # 2**64 paths through 128 objects
        dag = [dag, dag]
    start = time.monotonic()
    with pytest.raises(TooLarge):
        encode(dag, max_bytes=1 << 20)
    assert time.monotonic() - start < 30  # containment, not speed: the bound stops it long before 2**64


def test_generators_are_consumed_into_an_iterator():
    back = decode(encode(x * x for x in range(4)))
    assert list(back) == [0, 1, 4, 9]


def test_foreign_values_carry_their_type_and_repr():
    import datetime

    back = decode(encode(datetime.date(2020, 1, 2)))
    assert back == ForeignObject("datetime.date", "datetime.date(2020, 1, 2)")
    assert back != "datetime.date(2020, 1, 2)"


@pytest.mark.parametrize("forged", [b"", b"T1", b"NN", b"i;", b"i12x;", b"-", b"s5:ab", b"s-1:", b"l3:i1;",
                                    b"l99999999999999999999999:", b"d1:l0:N", b"S1:l0:", b"y1;", b"l1:y2;",
                                    b"f0x1.0p+1", b"fnot-a-float;", b"q" b"i1;i0;", b"R" b"i1;i2;i0;",
                                    b"o1:s1:Ni1;N", b"\x80", b"cpickle\nsystem\n"])  # fmt: skip
def test_forged_bytes_raise_wire_error(forged):
    with pytest.raises(WireError):
        decode(forged)


def test_declared_sizes_larger_than_the_data_are_refused_before_allocating():
    start = time.monotonic()
    with pytest.raises(WireError):
        decode(b"l%d:" % (10**15) + b"N" * 10)
    assert time.monotonic() - start < 5


def test_verdicts_on_values_match_python_equality_in_both_modes():
    program = "def f(x):\n    return x\n"
    tests = ["assert f(1) == 1", "assert f(True) == 1", "assert f(1.0) == 1", "assert f('a b') == 'a b'",
             "assert f(None) == None", "assert f(2.5) != 2.5", "assert f(float('nan')) == float('nan')",
             "assert f('x') == 'y'", "assert f(10**5000) == 10**5000", "assert f([1, (2, 3)]) == [1, (2, 3)]",
             "assert f({1: 2}) == {1: 2.0}", "assert f(-0.0) == 0"]  # fmt: skip
    expected = [eval(t.replace("assert ", "").replace("f(", "(")) for t in tests]  # noqa: S307 - our own literals
    for mode in ("isolated", "fast"):
        with Sandbox(workers=1, timeout_s=2.0, mode=mode) as sb:
            report = sb.run(program, tests)
            assert report.passed == expected, mode
            assert report.judged == ["outside"] * len(tests)
