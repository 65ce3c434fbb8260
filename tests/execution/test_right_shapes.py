"""Right programs of the shapes a real suite returns (standard-library containers, named tuples, dataclasses, enums,
numbers of `fractions`/`decimal`, program classes with their own `__eq__`/`__hash__`/`__repr__`, exceptions,
generators) pass in both modes, as they pass in plain Python. A guard for the other side of every hardening of the
judge: each refusal of a program's own dunder or of a value the judge cannot read must leave these passing. The
shapes the judge still fails are listed in ``docs/threat-model.md`` ("What is not guaranteed").
"""

from __future__ import annotations

import pytest

from .conftest import sandbox_per_mode
from .test_redteam_round import _agree

sb = sandbox_per_mode(workers=1, timeout_s=3.0, memory_mb=512)

RIGHT_SHAPES = {
    "counter": (
        "from collections import Counter\ndef f(s):\n    return Counter(s)\n",
        [
            "assert f('aab') == {'a': 2, 'b': 1}",
            "assert f('aab')['a'] == 2",
            "assert f('aab')['z'] == 0",
            "assert f('aab').most_common(1) == [('a', 2)]",
            "assert sorted(f('aab').items()) == [('a', 2), ('b', 1)]",
            "assert f('ab') == f('ba')",
            "assert len(f('aab')) == 2",
        ],
    ),
    "defaultdict": (
        "from collections import defaultdict\ndef f(xs):\n    d = defaultdict(list)\n    for x in xs:\n        d[x % 2].append(x)\n    return d\n",
        [
            "assert f([1,2,3]) == {1: [1, 3], 0: [2]}",
            "assert f([1])[1] == [1]",
            "assert dict(f([2])) == {0: [2]}",
        ],
    ),
    "ordereddict": (
        "from collections import OrderedDict\ndef f():\n    return OrderedDict([(1, 2)])\n",
        ["assert f() == {1: 2}", "assert list(f()) == [1]"],
    ),
    "namedtuple": (
        "from collections import namedtuple\nP = namedtuple('P', 'x y')\ndef f():\n    return P(1, 2)\n",
        [
            "assert f() == (1, 2)",
            "assert f().x == 1",
            "assert f() == P(1, 2)",
            "x, y = f()\nassert y == 2",
            "assert str(f()) == 'P(x=1, y=2)'",
        ],
    ),
    "typing_namedtuple": (
        "from typing import NamedTuple\nclass P(NamedTuple):\n    x: int\n    y: int = 0\ndef f():\n    return P(1)\n",
        ["assert f() == (1, 0)", "assert f() == P(1, 0)", "assert f()._asdict() == {'x': 1, 'y': 0}"],
    ),
    "dataclass": (
        "from dataclasses import dataclass\n@dataclass\nclass P:\n    x: int\n    y: int\ndef f():\n    return [P(2, 1), P(1, 2)]\n",
        [
            "assert f() == [P(2, 1), P(1, 2)]",
            "assert f()[0].x == 2",
            "assert repr(f()[0]) == 'P(x=2, y=1)'",
            "assert P(1, 2) in f()",
            "assert f()[0] != f()[1]",
        ],
    ),
    "dataclass_order": (
        "from dataclasses import dataclass\n@dataclass(order=True)\nclass P:\n    x: int\ndef f():\n    return [P(2), P(1)]\n",
        ["assert [p.x for p in f()] == [2, 1]"],
    ),
    "frozen_dataclass": (
        "from dataclasses import dataclass\n@dataclass(frozen=True)\nclass P:\n    x: int\ndef f():\n    return {P(1), P(2)}\n",
        ["assert f() == {P(2), P(1)}", "assert P(1) in f()", "assert len(f()) == 2"],
    ),
    "enum": (
        "from enum import Enum\nclass C(Enum):\n    RED = 1\n    BLUE = 2\ndef f(x):\n    return C.RED if x else C.BLUE\n",
        [
            "assert f(1) == C.RED",
            "assert f(0) is C.BLUE",
            "assert f(1).value == 1",
            "assert f(1).name == 'RED'",
            "assert str(f(1)) == 'C.RED'",
            "assert f(1) in {C.RED}",
        ],
    ),
    "intenum": (
        "from enum import IntEnum\nclass C(IntEnum):\n    A = 1\ndef f():\n    return C.A\n",
        ["assert f() == 1", "assert f() + 1 == 2", "assert f() < 2", "assert sorted([f(), 0]) == [0, 1]"],
    ),
    "fraction": (
        "from fractions import Fraction\ndef f():\n    return Fraction(1, 2)\n",
        ["assert f() == Fraction(2, 4)", "assert f() == 0.5", "assert f() < 1", "assert str(f()) == '1/2'"],
    ),
    "decimal": (
        "from decimal import Decimal\ndef f():\n    return Decimal('1.5')\n",
        ["assert f() == Decimal('1.50')", "assert f() > 1"],
    ),
    "deque": (
        "from collections import deque\ndef f():\n    return deque([1, 2])\n",
        [
            "assert list(f()) == [1, 2]",
            "assert f() == deque([1, 2])",
            "assert len(f()) == 2",
            "assert f()[0] == 1",
        ],
    ),
    "str_subclass_plain": (
        "class S(str):\n    pass\ndef f():\n    return S('ab')\n",
        ["assert f() == 'ab'", "assert f() in {'ab'}", "assert len(f()) == 2"],
    ),
    "listnode": (
        "class ListNode:\n    def __init__(self, val=0, next=None):\n        self.val = val\n        self.next = next\ndef f():\n    return ListNode(1, ListNode(2))\n",
        [
            "assert f().val == 1",
            "assert f().next.val == 2",
            "n = f()\nout = []\nwhile n:\n    out.append(n.val)\n    n = n.next\nassert out == [1, 2]",
        ],
    ),
    "class_with_eq_and_hash": (
        "class P:\n    def __init__(self, x):\n        self.x = x\n    def __eq__(self, o):\n        return isinstance(o, P) and self.x == o.x\n    def __hash__(self):\n        return hash(self.x)\n    def __repr__(self):\n        return f'P({self.x})'\ndef f():\n    return [P(1), P(2)]\n",
        [
            "assert f() == [P(1), P(2)]",
            "assert P(1) in f()",
            "assert len(set(f())) == 2",
            "assert {P(1): 'a'}[f()[0]] == 'a'",
            "assert repr(f()) == '[P(1), P(2)]'",
        ],
    ),
    "class_lt_total": (
        "import functools\n@functools.total_ordering\nclass V:\n    def __init__(self, x):\n        self.x = x\n    def __eq__(self, o):\n        return self.x == o.x\n    def __lt__(self, o):\n        return self.x < o.x\n    __hash__ = None\ndef f():\n    return [V(2), V(1)]\n",
        ["assert sorted(f())[0].x == 1", "assert max(f()).x == 2"],
    ),
    "generator": (
        "def f(n):\n    for i in range(n):\n        yield i * i\n",
        ["assert list(f(3)) == [0, 1, 4]", "assert sum(f(3)) == 5"],
    ),
    "exception": (
        "class MyErr(ValueError):\n    pass\ndef f(x):\n    if x < 0:\n        raise MyErr('neg')\n    return x\n",
        [
            "import pytest\nwith pytest.raises(ValueError):\n    f(-1)",
            "try:\n    f(-1)\nexcept MyErr as e:\n    assert str(e) == 'neg'\nelse:\n    assert False",
        ],
    ),
    "set_frozenset": (
        "def f():\n    return frozenset({1, 2}), {3}\n",
        ["a, b = f()\nassert a == {1, 2} and b == {3}", "assert f()[0] | {3} == {1, 2, 3}"],
    ),
    "bytes_bytearray": (
        "def f():\n    return b'ab', bytearray(b'cd')\n",
        ["assert f() == (b'ab', bytearray(b'cd'))", "assert f()[1].decode() == 'cd'"],
    ),
    "float_math": (
        "import math\ndef f():\n    return math.pi, float('nan')\n",
        ["assert abs(f()[0] - 3.14159) < 1e-5", "assert math.isnan(f()[1])"],
    ),
    "slots_class": (
        "class P:\n    __slots__ = ('x',)\n    def __init__(self, x):\n        self.x = x\n    def __eq__(self, o):\n        return self.x == o.x\ndef f():\n    return P(3)\n",
        ["assert f() == P(3)", "assert f().x == 3"],
    ),
    "dict_items_sorted": (
        "def f(d):\n    return sorted(d.items(), key=lambda kv: -kv[1])\n",
        ["assert f({'a': 1, 'b': 2}) == [('b', 2), ('a', 1)]"],
    ),
    "str_format_class": (
        "class M:\n    def __init__(self, v):\n        self.v = v\n    def __str__(self):\n        return f'M<{self.v}>'\ndef f():\n    return M(4)\n",
        ["assert str(f()) == 'M<4>'", "assert f'{f()}' == 'M<4>'", "assert 'M<4>' == '%s' % f()"],
    ),
}


@pytest.mark.parametrize("name", sorted(RIGHT_SHAPES))
def test_a_right_program_of_a_common_shape_passes_as_in_python(sb, name):
    program, tests = RIGHT_SHAPES[name]
    statuses, python = _agree(sb, program, tests)
    assert python == ["pass"] * len(tests)
    assert statuses == python, [(t, s) for t, s in zip(tests, statuses) if s != "pass"]
