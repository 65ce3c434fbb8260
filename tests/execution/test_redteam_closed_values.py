"""The red-team round's right programs the judge used to fail (``test_redteam_round.py``, 1c), closed by
construction for the class of value: a value probed twice is one object, iterators (stepped, infinite), dict
views, ``bytearray``, exception args and the texts a program's class gives its values travel as data and are
rebuilt in the judge, which still runs no program code. Each shape stands beside a wrong program of the same shape
that must still fail; "what Python says" is the reference (``_python_verdict``).
"""

from __future__ import annotations

import pytest

from .conftest import sandbox_per_mode
from .test_redteam_round import _agree, _p

sb = sandbox_per_mode(workers=1, timeout_s=1.0, memory_mb=512)


RIGHT_NOW_PASSED = {
    "generator_stepped_with_next": ("def count(n):\n    for i in range(n):\n        yield i\n",
                                    ["g = count(2)\nassert next(g) == 0\nassert next(g) == 1"]),
    "nan_compared_with_itself_in_a_list": ("def f():\n    return [float('nan')]\n", ["x = f()\nassert x == x"]),
    "infinite_generator": (_p('''
        def naturals():
            n = 0
            while True:
                yield n
                n += 1
    '''), ["assert next(naturals()) == 0",
           "import itertools\nassert list(itertools.islice(naturals(), 3)) == [0, 1, 2]",
           "assert all(x < 10 for x in naturals()) is False"]),
    "finite_generator_is_no_list": ("def count(n):\n    yield from range(n)\n",
                                    ["assert count(2) != [0, 1]", "assert list(count(2)) == [0, 1]"]),
    "dict_views_returned": (_p('''
        def keys(d):
            return d.keys()
        def values(d):
            return d.values()
        def items(d):
            return d.items()
    '''), ["assert sorted(keys({'b': 1, 'a': 2})) == ['a', 'b']", "assert len(keys({'a': 1})) == 1",
           "assert 'a' in keys({'a': 1})", "assert sum(values({'a': 1, 'b': 2})) == 3",
           "assert not keys({})", "assert keys({'a': 1, 'b': 2}) == {'b', 'a'}",
           "assert sorted(items({'a': 1})) == [('a', 1)]", "assert values({'a': 1}) != values({'a': 1})"]),
    "bytearray_returned": ("def enc(s):\n    return bytearray(s, 'ascii')\n",
                           ["assert enc('abc') == b'abc'", "assert len(enc('abc')) == 3"]),
    "exception_args_read": (_p('''
        class Unknown(KeyError):
            def __str__(self):
                return "no such key"
        def parse(s):
            raise ValueError('bad', s)
        def look(k):
            raise KeyError(k)
        def find(k):
            raise Unknown(k, 2)
    '''), [("import pytest\nwith pytest.raises(ValueError) as info:\n    parse('x')\n"
            "assert info.value.args == ('bad', 'x')"),
           "try:\n    look('k')\nexcept KeyError as e:\n    assert e.args[0] == 'k' and str(e) == \"'k'\"",
           "try:\n    find('k')\nexcept KeyError as e:\n    assert e.args == ('k', 2) and str(e) == 'no such key'"]),
    "own_str_and_repr": (_p('''
        class P:
            def __init__(self, x):
                self.x = x
            def __str__(self):
                return f"P<{self.x}>"
            def __repr__(self):
                return f"P({self.x})"
    '''), ["assert str(P(1)) == 'P<1>'", "assert repr(P(1)) == 'P(1)'", "assert f'{P(2)}' == 'P<2>'",
           "assert [str(p) for p in [P(3)]] == ['P<3>'] and format(P(4), '') == 'P<4>'"]),
    "float_subclass_with_its_own_str": (_p('''
        class Celsius(float):
            def __str__(self):
                return f"{float(self):.1f}C"
        def temp(x):
            return Celsius(x)
    '''), ["assert str(temp(20)) == '20.0C'", "assert temp(20) == 20.0 and repr(temp(20)) == '20.0'"]),
    "dataclass_texts_beside_its_own_eq": (_p('''
        from dataclasses import dataclass
        @dataclass
        class P:
            x: int
            y: int
        def one():
            return P(2, 1)
        def both():
            return [P(2, 1), P(1, 2)]
    '''), ["assert repr(one()) == 'P(x=2, y=1)'", "assert str(both()[1]) == 'P(x=1, y=2)'",
           "assert repr(both()) == '[P(x=2, y=1), P(x=1, y=2)]' and one() == P(2, 1)"]),
}
WRONG_OF_THE_SAME_SHAPE = {
    "dataclass_texts_beside_its_own_eq": (_p('''
        from dataclasses import dataclass
        @dataclass(repr=False)
        class P:
            x: int
            y: int
            def __str__(self):
                return f"P(x={self.y}, y={self.x})"
        def one():
            return P(2, 1)
        def both():
            return [P(2, 1), P(1, 2)]
    '''), ["assert repr(one()) == 'P(x=2, y=1)'", "assert str(both()[1]) == 'P(x=1, y=2)'",
           "assert repr(both()) == '[P(x=2, y=1), P(x=1, y=2)]' and one() == P(2, 1)"]),
    "own_str_and_repr": (_p('''
        class P:
            def __init__(self, x):
                self.x = x
            def __str__(self):
                return f"P<{self.x + 1}>"
            def __repr__(self):
                return f"P[{self.x}]"
    '''), ["assert str(P(1)) == 'P<1>'", "assert repr(P(1)) == 'P(1)'", "assert f'{P(2)}' == 'P<2>'"]),
    "float_subclass_with_its_own_str": (_p('''
        class Celsius(float):
            def __str__(self):
                return f"{float(self):.2f}C"
        def temp(x):
            return Celsius(x)
    '''), ["assert str(temp(20)) == '20.0C'"]),
    "exception_args_read": (_p('''
        def parse(s):
            raise ValueError('bad', s.upper())
        def look(k):
            raise KeyError(k * 2)
    '''), [("import pytest\nwith pytest.raises(ValueError) as info:\n    parse('x')\n"
            "assert info.value.args == ('bad', 'x')"),
           "try:\n    look('k')\nexcept KeyError as e:\n    assert e.args[0] == 'k'"]),
    "dict_views_returned": (_p('''
        def keys(d):
            return {**d, 'z': 0}.keys()
        def values(d):
            return [v + 1 for v in d.values()]
        def items(d):
            return {k: 0 for k in d}.items()
    '''), ["assert sorted(keys({'b': 1, 'a': 2})) == ['a', 'b']", "assert len(keys({'a': 1})) == 1",
           "assert 'z' not in keys({'a': 1})", "assert sum(values({'a': 1, 'b': 2})) == 3",
           "assert keys({'a': 1, 'b': 2}) == {'b', 'a'}", "assert sorted(items({'a': 1})) == [('a', 1)]",
           "assert not keys({})"]),
    "bytearray_returned": ("def enc(s):\n    return bytearray(s.upper(), 'ascii')\n",
                           ["assert enc('abc') == b'abc'", "assert enc('') != bytearray()"]),
    "infinite_generator": (_p('''
        def naturals():
            n = 1
            while True:
                yield n
                n += 2
    '''), ["assert next(naturals()) == 0",
           "import itertools\nassert list(itertools.islice(naturals(), 3)) == [0, 1, 2]"]),
    "finite_generator_is_no_list": ("def count(n):\n    yield from range(n)\n", ["assert count(2) == [0, 1]"]),
    "generator_stepped_with_next": ("def count(n):\n    yield 0\n    yield 2\n",
                                    ["g = count(2)\nassert next(g) == 0\nassert next(g) == 1"]),
    "nan_compared_with_itself_in_a_list": ("def f():\n    return [float('nan')]\n",
                                           ["x = f()\ny = f()\nassert x == y"]),
}


@pytest.mark.parametrize("name", sorted(RIGHT_NOW_PASSED))
def test_closed_a_right_program_passes_what_python_passes(sb, name):
    """Closed by construction for the class of value (identity shared between probes, iterators, dict views,
    ``bytearray``, exception args, program texts), never by the test's text."""
    program, tests = RIGHT_NOW_PASSED[name]
    statuses, python = _agree(sb, program, tests)
    assert python == ["pass"] * len(tests)
    assert statuses == python


@pytest.mark.parametrize("name", sorted(WRONG_OF_THE_SAME_SHAPE))
def test_control_a_wrong_program_of_a_closed_shape_fails(sb, name):
    program, tests = WRONG_OF_THE_SAME_SHAPE[name]
    statuses, python = _agree(sb, program, tests)
    assert "pass" not in python
    assert "pass" not in statuses, statuses
