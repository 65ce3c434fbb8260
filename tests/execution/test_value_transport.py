"""How a grandchild's result value travels to the server: tagged atoms, pickled canonical values otherwise.

The token comes from a process that ran untrusted code, so decoding must be exact for honest values and must fail
with an ordinary exception (which the server turns into a ``crash`` verdict) for forged ones.
"""

from __future__ import annotations

import math
import sys
from collections import deque
from fractions import Fraction

import pytest

from evolvecoder_datasets.execution import Sandbox
from evolvecoder_datasets.execution._forkserver import dump_value, load_value

EDGE_VALUES = [0, -1, 2**80, -(10**300), True, False, None, 0.1, -0.0, 1e308, 5e-324, math.inf, -math.inf, "",
               "a b\nc", "ünï ☃ 😀", "=", [1, "x", None], (1, (2.5, "y")), {"k": [1, 2]}, {1, 2}, frozenset({3}),
               Fraction(1, 3), deque([1, 2]), b"raw bytes", 3 + 4j]  # fmt: skip


@pytest.mark.parametrize("value", EDGE_VALUES, ids=repr)
def test_every_value_round_trips_with_its_exact_type(value):
    token = dump_value(value)
    assert b" " not in token and b"\n" not in token and token.isascii()
    back = load_value(token)
    assert type(back) is type(value)
    assert back == value
    if isinstance(value, float):
        assert math.copysign(1, back) == math.copysign(1, value)


def test_nan_round_trips_as_nan():
    assert math.isnan(load_value(dump_value(math.nan)))


def test_values_beyond_the_fast_path_fall_back_to_pickle():
    limit = sys.get_int_max_str_digits()
    huge = 10 ** (limit + 5)
    assert load_value(dump_value(huge)) == huge
    surrogate = "a\udc80b"  # not encodable as UTF-8
    assert load_value(dump_value(surrogate)) == surrogate
    assert dump_value(huge)[:1] not in b"ITFNDU" and dump_value(surrogate)[:1] not in b"ITFNDU"


@pytest.mark.parametrize("forged", [b"Tx", b"N0", b"I12a", b"I", b"Dzz", b"U%%%", b"U" + "é".encode("latin-1") * 4,
                                    b"gASVnotapickle", b"Y29zCnN5c3RlbQo="])  # fmt: skip
def test_forged_tokens_raise_an_ordinary_error(forged):
    with pytest.raises(Exception) as info:
        load_value(forged)
    assert not isinstance(info.value, (SystemExit, KeyboardInterrupt))


def test_verdicts_on_atoms_match_python_equality_in_both_modes():
    program = "def f(x):\n    return x\n"
    tests = ["assert f(1) == 1", "assert f(True) == 1", "assert f(1.0) == 1", "assert f('a b') == 'a b'",
             "assert f(None) == None", "assert f(2.5) != 2.5", "assert f(float('nan')) == float('nan')",
             "assert f('x') == 'y'", "assert f(10**5000) == 10**5000"]  # fmt: skip
    expected = [eval(t.replace("assert ", "").replace("f(", "(")) for t in tests]  # noqa: S307 - our own literals
    for mode in ("isolated", "fast"):
        with Sandbox(workers=1, timeout_s=2.0, mode=mode) as sb:
            assert sb.run(program, tests).passed == expected, mode
