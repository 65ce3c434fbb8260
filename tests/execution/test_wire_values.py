"""The value model's builtin shapes a right program returns and a test reads as Python would: iterators (stepped,
infinite), dict views, ``bytearray``, exception args and the texts a program's class gives its objects. Each
travels as data the sandbox reads; the judge rebuilds the real builtin (or an inert record) and runs no program
code.
"""

from __future__ import annotations

import itertools

import pytest

from evolvecoder_datasets.execution._wire import MAX_ITERATOR_ITEMS, WireError, encode
from evolvecoder_datasets.execution._wire_decode import IteratorPrefix, PastThePrefix, Unjudged, decode
from evolvecoder_datasets.execution.judge import encode_entries, judge, plan_test


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


@pytest.mark.parametrize("view", [{1: "a", 2: "b"}.keys(), {1: "a"}.values(), {1: (2, 3)}.items(), {}.keys()],
                         ids=lambda v: type(v).__name__)
def test_dict_views_travel_as_the_views_of_a_dict_of_their_items(view):
    back = decode(encode(view))
    assert type(back) is type(view) and list(back) == list(view) and bool(back) == bool(view)


def test_a_keys_view_compares_as_a_set_and_a_values_view_only_with_itself():
    keys, values = decode(encode({"a": 1}.keys())), decode(encode({"a": 1}.values()))
    assert keys == {"a"} and keys != {"b"} and keys | {"b"} == {"a", "b"}
    assert values != decode(encode({"a": 1}.values())) and values in [values]


def test_a_bytearray_travels_as_a_bytearray():
    back = decode(encode(bytearray(b"ab\x00")))
    assert type(back) is bytearray and back == b"ab\x00" and not decode(encode(bytearray()))


@pytest.mark.parametrize("forged", [b"X1:l0:", b"I1:l0:i1;", b"X2:i1;", b"B3:ab", b"Y1:"])
def test_forged_views_and_bytearrays_are_wire_errors(forged):
    with pytest.raises(WireError):
        decode(forged)


RAISES = "import pytest\nwith pytest.raises(ValueError) as info:\n    f(1)\nassert info.value.args == ('a', 1)"


def test_a_raised_exceptions_args_travel_beside_its_message():
    chain = "ValueError,Exception,BaseException"
    right = encode_entries([("e", "error", "ValueError: ('a', 1)", chain, ("a", 1))])
    assert judge(plan_test(RAISES), right) == ("pass", "")
    wrong = encode_entries([("e", "error", "ValueError: ('a', 2)", chain, ("a", 2))])
    assert judge(plan_test(RAISES), wrong)[0] == "fail"


def test_args_that_do_not_print_as_the_sandboxs_message_are_not_taken():
    """A builtin exception prints its args: args sent beside another message are a lie, and the message wins."""
    lying = encode_entries([("e", "error", "ValueError: boom", "ValueError,Exception,BaseException", ("a", 1))])
    assert judge(plan_test(RAISES), lying)[0] == "fail"


def test_args_that_are_not_a_tuple_make_the_report_unreadable():
    forged = b"E1:e" + encode("error") + encode("ValueError: x") + encode("ValueError") + encode(["x"])
    assert judge(plan_test(RAISES), forged)[0] == "crash"


class _Shown:
    def __init__(self, x, nxt=None):
        self.x, self.next = x, nxt

    def __repr__(self):
        return f"Shown({self.x}, {self.next!r})"


class _Broken:
    def __str__(self):
        raise RuntimeError("no text")


def test_a_program_objects_texts_are_its_classs_computed_where_it_lives():
    back = decode(encode(_Shown(1)))
    assert repr(back) == "Shown(1, None)" and str(back) == "Shown(1, None)" and f"{back}" == "Shown(1, None)"
    assert back.fields["x"] == 1 and back != decode(encode(_Shown(1)))  # (no __eq__: identity, as before)
    broken = decode(encode(_Broken()))  # its __str__ raised where it lives: str() is refused, as Python would raise
    with pytest.raises(Unjudged):
        str(broken)


def test_only_objects_near_the_top_carry_texts_so_a_long_chain_costs_linear_time():
    head = None
    for i in range(3000):
        head = _Shown(i, head)
    data = encode(head)  # each text near the top recurses down the chain and fails: not 3,000 of them
    assert data.count(b"P") <= 3 * 2 + 4 and decode(data).fields["x"] == 2999


@pytest.mark.parametrize("forged", [b"Pi1;Ni1;", b"Ps1:aNl0:", b"PNNd0:", b"Pf"])
def test_texts_for_anything_but_a_program_value_are_wire_errors(forged):
    with pytest.raises(WireError):
        decode(forged)
