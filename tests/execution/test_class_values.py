"""A program's classes as values (code_instruct tests often judge a registry kept on a class, or a class the
program builds): a class travels as its name and the data of its own namespace, read through ``type``'s own
``__dict__`` descriptor; ``isinstance``/``issubclass`` against a program class is the program's probe."""

from __future__ import annotations

import pytest

from .conftest import sandbox_per_mode

REGISTRY = (
    "class Meta(type):\n"
    "    def __init__(cls, name, bases, ns):\n"
    "        super().__init__(name, bases, ns)\n"
    "        if ns.get('root'):\n"
    "            cls.registry = {}\n"
    "        else:\n"
    "            cls.registry[name] = cls\n"
    "def make():\n"
    "    class Base(metaclass=Meta):\n"
    "        root = True\n"
    "        def method(self):\n"
    "            return 1\n"
    "    return Base\n"
)
TEST = (
    "Base = make()\n"
    "class A(Base):\n    pass\n"
    "class B(A):\n    pass\n"
    "assert Base.registry == {'A': A, 'B': B}\n"
    "assert isinstance(B(), Base) and issubclass(B, A) and not issubclass(A, B)\n"
)


sandbox = sandbox_per_mode(workers=1)


def test_a_registry_kept_on_a_class_is_judged_outside(sandbox):
    report = sandbox.run(REGISTRY, [TEST])
    assert report.statuses == ["pass"] and report.judged == ["outside"], report


@pytest.mark.parametrize(
    "wrong",
    [
        REGISTRY.replace("cls.registry[name] = cls", "cls.registry[name] = bases[0]"),  # the parent, not the class
        REGISTRY.replace("cls.registry[name] = cls", "cls.registry[name.lower()] = cls"),
        REGISTRY.replace("            cls.registry[name] = cls\n", "            pass\n"),
    ],
    ids=["parent_recorded", "lower_case_names", "nothing_recorded"],
)
def test_wrong_registries_fail(sandbox, wrong):
    assert sandbox.run(wrong, [TEST]).statuses != ["pass"]


def test_two_classes_differ_by_name(sandbox):
    program = "def pair():\n    class X:\n        pass\n    class Y:\n        pass\n    return X, Y\n"
    report = sandbox.run(program, ["X, Y = pair()\nassert X != Y", "X, Y = pair()\nassert [X] == [Y]"])
    assert report.statuses == ["pass", "fail"], report


def test_a_plain_class_carries_its_data_too(sandbox):
    """``class X: ...`` (whose type is ``type`` itself, a C type) travels like a class with the program's
    metaclass: before, it was an opaque foreign value and ``X.data`` an error."""
    program = "class X:\n    data = [1, 2]\n    def method(self):\n        return 3\n\ndef get():\n    return X\n"
    report = sandbox.run(program, ["assert get().data == [1, 2]", "assert get().data == [2]"])
    assert report.statuses == ["pass", "fail"], report


def test_a_property_or_slot_of_a_returned_object_is_read_where_it_lives(sandbox):
    """``result.output`` of an object the program hands back (click's ``CliRunner().invoke(...)`` result, whose
    ``output`` is a property): the attribute is a probe, as Python reads it; builtin values' own attributes
    (``f().real``) stay the judge's."""
    program = ("class Result:\n    __slots__ = ('raw',)\n    def __init__(self, raw):\n        self.raw = raw\n"
               "    @property\n    def output(self):\n        return self.raw.decode()\n\n"
               "def run(text):\n    return Result(text.encode())\n\ndef num():\n    return 3\n")  # fmt: skip
    tests = ["result = run('hi')\nassert result.output == 'hi'", "assert run('a').output == 'b'",
             "assert run('x').raw == b'x'", "assert num().real == 3 and num().imag == 0"]
    report = sandbox.run(program, tests)
    assert report.statuses == ["pass", "fail", "pass", "pass"] and report.judged == ["outside"] * 4, report
