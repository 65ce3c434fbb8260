"""The value model's builtin shapes a right program returns and a test reads as Python would: iterators (stepped,
infinite), dict views, ``bytearray``, exception args and the texts a program's class gives its objects. Each
travels as data the sandbox reads; the judge rebuilds the real builtin (or an inert record) and runs no program
code.
"""

from __future__ import annotations

import itertools

import pytest

from evolvecoder_datasets.execution._wire import MAX_ITERATOR_ITEMS, encode
from evolvecoder_datasets.execution._wire_decode import IteratorPrefix, PastThePrefix, decode
from evolvecoder_datasets.execution.judge import judge, plan_test


def _naturals():
    n = 0
    while True:
        yield n
        n += 1


def test_an_infinite_generator_travels_as_its_first_items_and_errors_past_them():
    back = decode(encode(_naturals()))
    assert type(back) is IteratorPrefix
    assert list(itertools.islice(back, 3)) == [0, 1, 2] and next(back) == 3
    with pytest.raises(PastThePrefix):
        list(back)


def test_a_generator_of_exactly_the_cap_is_whole():
    back = decode(encode(iter(range(MAX_ITERATOR_ITEMS))))
    assert type(back) is type(iter([])) and sum(1 for _ in back) == MAX_ITERATOR_ITEMS


def test_reading_past_the_prefix_is_an_error_that_no_except_of_the_test_catches():
    plan = plan_test("try:\n    n = len(list(f()))\nexcept Exception:\n    n = -1\nassert n == -1")
    status, message = judge(plan, b"E1:v1;" + encode(_naturals()))
    assert status == "error" and "more than" in message


def test_a_generator_is_never_equal_to_a_list():
    assert judge(plan_test("assert f() == [0, 1]"), b"E1:v1;" + encode(iter([0, 1]))) == ("fail", "AssertionError")
