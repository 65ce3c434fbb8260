"""A test's own helpers reach where they run in an order Python accepts (issue 23: ``@lru_cache`` before its import).

A deferred definition is evaluated where it is sent: its decorators, defaults and base classes are read then, so
whatever they name (an import, another helper) must be sent first. The table covers decorator and import orders a
model writes; each test runs against a right program (every test passes) and a wrong one (every test fails), in
both modes, so a planner that sends the pieces in the wrong order fails the right program with a ``NameError``.
"""

from __future__ import annotations

import pytest

from .conftest import sandbox_per_mode

RIGHT = "def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n"
WRONG = "def fib(n):\n    return n\n"

_REF = "    return n if n < 2 else ref(n - 1) + ref(n - 2)\n"
TABLE = {
    "from_import_then_decorator_call": "from functools import lru_cache\n@lru_cache(maxsize=None)\ndef ref(n):\n" + _REF,
    "from_import_then_bare_decorator": "from functools import cache\n@cache\ndef ref(n):\n" + _REF,
    "module_import_then_attribute_decorator": "import functools\n@functools.lru_cache(None)\ndef ref(n):\n" + _REF,
    "aliased_import": "from functools import lru_cache as memo\n@memo(maxsize=128)\ndef ref(n):\n" + _REF,
    "two_decorators_two_imports": ("from functools import lru_cache\nfrom functools import wraps\n"
                                   "def trace(fn):\n    @wraps(fn)\n    def inner(n):\n        return fn(n)\n"
                                   "    return inner\n@trace\n@lru_cache(maxsize=None)\ndef ref(n):\n" + _REF),
    "decorator_defined_by_the_test_after_an_import": ("import functools\n"
                                                      "def memo(fn):\n    return functools.lru_cache(None)(fn)\n"
                                                      "@memo\ndef ref(n):\n" + _REF),
    "default_argument_names_an_import": ("from math import inf\nfrom functools import lru_cache\n"
                                         "@lru_cache(None)\ndef ref(n, cap=inf):\n" + _REF),
    "import_inside_a_plain_helper_calling_a_decorated_one": ("from functools import lru_cache\n"
                                                              "@lru_cache(None)\ndef ref(n):\n" + _REF +
                                                              "def expected(n):\n    return ref(n)\n"),
}


def _tests(setup: str) -> list[str]:
    call = "expected" if "def expected" in setup else "ref"
    return [f"{setup}assert fib({n}) == {call}({n})" for n in (1, 7, 20)]


sandbox = sandbox_per_mode(workers=2, timeout_s=2.0)


@pytest.mark.parametrize("name", sorted(TABLE))
def test_a_decorated_helper_is_sent_after_what_its_decorators_read(sandbox, name):
    tests = _tests(TABLE[name])
    right, wrong = sandbox.run(RIGHT, tests), sandbox.run(WRONG, tests)
    assert right.statuses == ["pass"] * 3, (name, right)
    assert wrong.statuses == ["pass", "fail", "fail"], (name, wrong)  # fib(1) == 1 == ref(1): right by luck
