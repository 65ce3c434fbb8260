"""Red-team round (judge's gaps): values whose class answers an operation with its own dunder.

The judge rebuilt a program's subclass of a builtin as a method-less subclass and compared a program object as
data, so whatever the program's ``__ne__``, ``__len__``, ``__iter__``, ``__contains__``, ``__getitem__``,
``__bool__``, ``__lt__``, ``__round__``, ``__abs__``, ``__format__`` or ``__hash__`` said had no say: a test whose
verdict in Python goes through one of them passed a program that Python fails (a list subclass whose ``len`` is 0
passed ``assert len(f()) == 2``). And the judge's refusals were ``TypeError``s, so a test's ``except TypeError``
(or ``pytest.raises(TypeError)``) turned them into a pass. Closed by construction: the sandbox sends the dunders a
value's program classes define (``M``, with the hash it computed where ``__hash__`` is one), and the judge answers
each operation Python would send to one of them with :class:`Unjudged`, an error no ``except`` catches. A text the
class gives that did not travel (it raised, or was too long) is refused too. Each attack stands beside a right
program of the same shape, and plain Python is the reference (``_python_verdict``), in both modes.
"""

from __future__ import annotations

import pytest

from evolvecoder_datasets.execution import Job, run_tests
from evolvecoder_datasets.rewards import make_code_reward

from .conftest import sandbox_per_mode
from .test_redteam_round import FENCE, _agree, _p

sb = sandbox_per_mode(workers=1, timeout_s=1.0, memory_mb=512)

_LYING_LIST = "class L(list):\n    def {0}(self, *a):\n        return {1}\ndef f():\n    return L([1, 2])\n"
_POINT = _p('''
    class P:
        def __init__(self, x):
            self.x = x
        def __eq__(self, o):
            return isinstance(o, P) and self.x == o.x
        {0}
    def mk(x):
        return P(x)
''')
_NAMED = "import collections\nclass P(collections.namedtuple('P', 'x y')):\n    def {}\ndef f():\n    return P(1, 2)\n"
_DEQUE = "import collections\nclass D(collections.deque):\n    pass\ndef f():\n    return D([1, 2, 3])\n"
ATTACKS = {  # name -> (program, test): Python fails (or errors) each; the judge passed every one before the fix
    "list_len": (_LYING_LIST.format("__len__", "0"), "assert len(f()) == 2"),
    "list_contains": (_LYING_LIST.format("__contains__", "False"), "assert 1 in f()"),
    "list_iter": (_LYING_LIST.format("__iter__", "iter([9, 9])"), "assert sum(f()) == 3"),
    "list_iter_for": (_LYING_LIST.format("__iter__", "iter([9, 9])"), "t = 0\nfor x in f():\n    t += x\nassert t == 3"),
    "list_bool": (_LYING_LIST.format("__bool__", "False"), "assert f()"),
    "list_getitem": (_p('''
        class RevList(list):
            def __init__(self, xs):
                super().__init__(reversed(xs))
            def __getitem__(self, i):
                return list.__getitem__(self, -1 - i)
        def mk(xs):
            return RevList(xs)
    '''), "assert mk([1, 2, 3])[0] == 3"),
    "int_eq": (("class N(int):\n    def __eq__(self, o):\n        return False\n    __hash__ = int.__hash__\n"
                "def f():\n    return N(3)\n"), "assert f() == 3"),
    "int_lt": ("class N(int):\n    def __lt__(self, o):\n        return True\ndef f():\n    return N(3)\n",
               "assert not (f() < 2)"),
    "float_round": ("class F(float):\n    def __round__(self, n=None):\n        return 99\ndef f():\n    return F(2.5)\n",
                    "assert round(f()) == 2"),
    "float_abs": ("class F(float):\n    def __abs__(self):\n        return 9.0\ndef f():\n    return F(2.5)\n",
                  "assert abs(f()) == 2.5"),
    "str_str_raises": ("class S(str):\n    def __str__(self):\n        raise ValueError('no')\ndef f():\n    return S('abc')\n",
                       "assert str(f()) == 'abc'"),
    "object_ne": (_POINT.format("def __ne__(self, o):\n        return True\n    __hash__ = None"),
                  "assert not (mk(1) != mk(1))"),
    "object_hash_by_identity": (_POINT.format("def __hash__(self):\n        return id(self)"),
                                "assert len({mk(1), mk(1)}) == 1"),
    "object_unhashable": (_POINT.format("__hash__ = None"), "assert len({mk(1), mk(1)}) == 1"),
    "object_format": (_p('''
        class P:
            def __init__(self, x):
                self.x = x
            def __str__(self):
                return f"P<{self.x}>"
            def __format__(self, spec):
                return "nope"
        def mk(x):
            return P(x)
    '''), "assert f'{mk(1)}' == 'P<1>'"),
    "own_bool_caught_as_typeerror": ("class B:\n    def __bool__(self):\n        return False\ndef f():\n    return B()\n",
                                     "try:\n    ok = bool(f())\nexcept TypeError:\n    ok = True\nassert ok"),
    "own_bool_in_pytest_raises": ("class B:\n    def __bool__(self):\n        return False\ndef f():\n    return B()\n",
                                  "import pytest\nwith pytest.raises(TypeError):\n    assert f()"),
    "own_lt_caught_as_typeerror": (("class V:\n    def __init__(self, v):\n        self.v = v\n"
                                    "    def __lt__(self, o):\n        return False\ndef f(v):\n    return V(v)\n"),
                                   "try:\n    ok = f(1) < f(2)\nexcept TypeError:\n    ok = True\nassert ok"),
    # an __eq__ that says yes to anything: "not equal" for data that differ is an answer only where it says so too
    "eq_says_yes_to_anything": (_POINT.replace("isinstance(o, P) and self.x == o.x", "True").format("__hash__ = None"),
                                "assert mk(1) != mk(2)"),
    "eq_says_yes_to_a_number": (_POINT.replace("isinstance(o, P) and self.x == o.x", "True").format("__hash__ = None"),
                                "assert not (mk(1) == 1)"),
    # one probe in isolated mode sent its objects without their verdicts: compared as data, a hidden state was lost
    "hidden_state_in_one_probe": (_p('''
        class Point:
            _state = {}
            def __init__(self, x, y):
                Point._state[id(self)] = (x, y)
            def __eq__(self, other):
                return Point._state[id(self)] == Point._state[id(other)]
            __hash__ = object.__hash__
        def pair():
            return [Point(0, 0), Point(1, 1)]
    '''), "assert (lambda t: t[0] == t[1])(pair())"),
    # a named tuple subclass with dunders of its own travelled as a plain named tuple
    "named_tuple_len": (_NAMED.format("__len__(self):\n        return 5"), "assert len(f()) == 2"),
    "named_tuple_eq": (_NAMED.format("__eq__(self, o):\n        return False\n    __hash__ = tuple.__hash__"),
                       "assert f() == (1, 2)"),
    "named_tuple_getitem": (_NAMED.format("__getitem__(self, i):\n        return 9"), "assert f()[0] == 1"),
    # a C base (deque) answers len and iteration in Python; the judge's TypeError was caught as the test's own
    "c_base_len_caught": (_DEQUE, "try:\n    n = len(f())\nexcept TypeError:\n    n = 2\nassert n == 2"),
    "c_base_iter_caught": (_DEQUE, "try:\n    n = list(f())\nexcept TypeError:\n    n = [1]\nassert n == [1]"),
    # a __class__ property: isinstance reads it where the real type does not match, in Python
    "class_claimed_by_an_object": (("class Fake:\n    @property\n    def __class__(self):\n        return ValueError\n"
                                   "def f():\n    return Fake()\n"), "assert not isinstance(f(), ValueError)"),
    "class_claimed_by_a_subclass": (("class L(list):\n    @property\n    def __class__(self):\n        return dict\n"
                                    "def f():\n    return L([1])\n"), "assert not isinstance(f(), dict)"),
    # a hash the program computes is its process's (str and tuple hashes are seeded per process): read by a test,
    # or used to find a builtin's subclass among the judge's own values, it is refused
    "object_hash_read": (_POINT.format("def __hash__(self):\n        return hash(('p', self.x))"),
                         "assert hash(mk(1)) != hash(('p', 1))"),
    "str_subclass_hash": (("class S(str):\n    def __hash__(self):\n        return hash(str(self))\n"
                          "def f():\n    return S('abc')\n"), "assert f() not in {'abc', 'x'}"),
    # the judge reads a field where its own loop reads an attribute: a __getattribute__ or a property of the same
    # name answers that read in Python
    "own_getattribute_in_a_loop": (_p('''
        class P:
            def __init__(self, x):
                self.x = x
            def __getattribute__(self, name):
                return 99 if name == "x" else object.__getattribute__(self, name)
        def f():
            return [P(1), P(1)]
    '''), "for p in f():\n    assert p.x == 1"),
    "property_hides_a_field": (_p('''
        class P:
            def __init__(self, x):
                self.__dict__["x"] = x
            @property
            def x(self):
                return 99
        def f():
            return [P(1), P(1)]
    '''), "assert [p.x for p in f()] == [1, 1]"),
    # a mapping or an iterator class of the program's travels as what it iterates to: its other dunders answer too
    "mapping_class_len": (_p('''
        import collections.abc
        class M(collections.abc.Mapping):
            def __init__(self, d):
                self.d = d
            def __getitem__(self, k):
                return self.d[k]
            def __iter__(self):
                return iter(self.d)
            def __len__(self):
                return 0
        def f():
            return M({"a": 1, "b": 2})
    '''), "assert len(f()) == 2"),
    "iterator_class_len_caught": (_p('''
        class It:
            def __init__(self):
                self.i = 0
            def __iter__(self):
                return self
            def __next__(self):
                self.i += 1
                if self.i > 3:
                    raise StopIteration
                return self.i
            def __len__(self):
                return 5
        def f():
            return It()
    '''), "try:\n    n = len(f())\nexcept TypeError:\n    n = 0\nassert n == 0"),
}  # fmt: skip

PYTHON_ERRORS = {"str_str_raises", "object_unhashable"}  # Python raises; it fails the others

RIGHT = {  # name -> (program, tests): right programs of the same shapes, which must still pass
    "subclasses_without_dunders": (_p('''
        class L(list):
            def total(self):
                return sum(self)
        class Celsius(float):
            def __str__(self):
                return f"{float(self):.1f}C"
        def f():
            return L([1, 2])
        def temp(x):
            return Celsius(x)
    '''), ["assert len(f()) == 2 and 1 in f() and sum(f()) == 3 and f()[0] == 1 and f()",
           "assert round(temp(2.5)) == 2 and str(temp(20)) == '20.0C' and temp(20) == 20.0"]),
    "int_enum": ("import enum\nclass C(enum.IntEnum):\n    A = 1\n    B = 2\ndef f():\n    return C.B\n",
                 ["assert f() == 2 and f() > 1 and {f(): 'b'}[2] == 'b'"]),
    "hashable_objects": (_p('''
        import dataclasses
        @dataclasses.dataclass(frozen=True)
        class P:
            x: int
        def mk(x):
            return P(x)
        def both(x):
            return {P(x), P(x)}
    '''), ["assert len({mk(1), mk(1)}) == 1 and mk(1) != mk(2) and not (mk(1) != mk(1))",
           "assert both(3) == {mk(3)} and {mk(1): 'a'}[mk(1)] == 'a'"]),
    "isinstance_of_plain_values": (("class L(list):\n    pass\nclass B:\n    pass\ndef f():\n    return L([1])\n"
                                   "def g():\n    return B()\n"),
                                   ["assert isinstance(f(), list) and not isinstance(f(), dict) and not isinstance(g(), list)"]),
    "fields_read_in_a_loop": (_p('''
        import dataclasses, functools
        @dataclasses.dataclass
        class P:
            x: int
            @property
            def double(self):
                return 2 * self.x
            @functools.cached_property
            def triple(self):
                return 3 * self.x
        class S:
            __slots__ = ("x",)
            def __init__(self, x):
                self.x = x
        def f():
            return [P(1), P(2)]
        def g():
            return [S(1), S(2)]
    '''), ["assert [p.x for p in f()] == [1, 2] and [s.x for s in g()] == [1, 2]",
          "total = 0\nfor p in f():\n    total += p.x\nassert total == 3"]),
    "iterator_and_mapping_classes": (_p('''
        import collections.abc
        class Count:
            def __init__(self, n):
                self.i, self.n = 0, n
            def __iter__(self):
                return self
            def __next__(self):
                self.i += 1
                if self.i > self.n:
                    raise StopIteration
                return self.i
        class M(collections.abc.Mapping):
            def __init__(self, d):
                self.d = d
            def __getitem__(self, k):
                return self.d[k]
            def __iter__(self):
                return iter(self.d)
            def __len__(self):
                return len(self.d)
        def f():
            return Count(3)
        def g():
            return M({"a": 1})
    '''), ["assert list(f()) == [1, 2, 3] and sum(f()) == 6", "assert dict(g()) == {'a': 1}"]),
    "truthy_objects": ("class B:\n    pass\ndef f():\n    return B()\n", ["assert f()", "assert bool(f()) is True"]),
    "own_eq_and_ne": (_POINT.format("def __ne__(self, o):\n        return not self == o\n    __hash__ = None"),
                      ["assert mk(1) != mk(2) and not (mk(1) != mk(1)) and mk(1) == mk(1)",
                       "assert mk(1) in [mk(2), mk(1)] and [mk(1), mk(2)] != [mk(2), mk(1)]"]),
    "named_tuples_and_exceptions": (_p('''
        import collections
        class P(collections.namedtuple("P", "x y")):
            def norm(self):
                return abs(self.x) + abs(self.y)
        class Bad(ValueError):
            pass
        def f():
            return P(1, 2)
        def err():
            return Bad("no")
    '''), ["assert f() == (1, 2) and f().x == 1 and len(f()) == 2 and f()[1] == 2",
          "assert str(err()) == 'no' and err().args == ('no',)"]),
    "attrs_class": ("import attr\n@attr.s(frozen=True)\nclass P:\n    x = attr.ib()\ndef mk(x):\n    return P(x)\n",
                    ["assert mk(1) == mk(1) and mk(1) != mk(2) and not (mk(1) != mk(1))",
                     "assert len({mk(1), mk(1), mk(2)}) == 2"]),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_a_value_whose_class_answers_with_its_own_dunder_does_not_pass(sb, name):
    program, test = ATTACKS[name]
    statuses, python = _agree(sb, program, [test])
    assert python == (["error"] if name in PYTHON_ERRORS else ["fail"])  # (the program itself runs in Python)
    assert statuses != ["pass"], statuses


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_control_right_programs_of_the_same_shapes_pass_as_in_python(sb, name):
    program, tests = RIGHT[name]
    statuses, python = _agree(sb, program, tests)
    assert python == ["pass"] * len(tests)
    assert statuses == python


def test_every_entry_point_refuses_the_lying_dunder(sb):
    """``run_many``, ``run_tests`` and a reward see the same verdicts as ``Sandbox.run``."""
    program, test = ATTACKS["list_len"]
    right = "def f():\n    return [1, 2]\n"
    assert [r.statuses for r in sb.run_many([Job(program, [test]), Job(right, [test])])] == [["error"], ["pass"]]
    assert run_tests(program, [test], mode=sb.settings.mode, timeout_s=1.0).statuses == ["error"]
    reward = make_code_reward(mode=sb.settings.mode, timeout_s=1.0, workers=1, cache_size=0)
    assert reward(completions=[FENCE.format(program), FENCE.format(right)], tests=[[test], [test]]) == [0.0, 1.0]
