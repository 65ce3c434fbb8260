"""The one float tolerance rule of every test the library writes from a reference's value.

A test written from a float the reference returned (the search writer's asserts, the oracle's, the probes that
choose the search's inputs) accepts an answer ``got`` for the expected ``v`` when

    ``abs(got - v) <= FLOAT_ABS_TOL + FLOAT_REL_TOL * abs(v)``  (``1e-6 + 1e-7 * |v|``)

the rule EvalPlus judges HumanEval+ with. It is tighter than ``1e-6 * max(1, |v|)`` (the search's rule before)
for ``|v| > 1`` (at ``v = 100``: 1.1e-5 instead of 1e-4), which let a program off by one part in a million of a
large value pass. Only top-level floats are compared this way; a float inside a list or dict compares exactly
(the search and the oracle keep no such value).

Example:
    >>> from evolvecoder_datasets.tolerance import float_assert, float_tolerance, within_tolerance
    >>> float_tolerance(100.0)
    1.1e-05
    >>> within_tolerance(100.00001, 100.0), within_tolerance(100.0001, 100.0)
    (True, False)
    >>> float_assert("mean([1.0, 2.0])", "1.5")
    'assert abs(mean([1.0, 2.0]) - 1.5) <= 1.15e-06'
"""

from __future__ import annotations

__all__ = ["FLOAT_ABS_TOL", "FLOAT_REL_TOL", "float_assert", "float_tolerance", "within_tolerance"]

#: Absolute part of the tolerance.
FLOAT_ABS_TOL = 1e-6
#: Relative part of the tolerance (times ``|expected|``).
FLOAT_REL_TOL = 1e-7


def float_tolerance(expected: float) -> float:
    """The largest error accepted around ``expected``: ``1e-6 + 1e-7 * |expected|`` (rounded to 12 significant
    digits, so the written assert reads cleanly).

    Example:
        >>> float_tolerance(0.0), float_tolerance(-10.0)
        (1e-06, 2e-06)
    """
    return float(f"{FLOAT_ABS_TOL + FLOAT_REL_TOL * abs(expected):.12g}")


def within_tolerance(got: float, expected: float) -> bool:
    """Whether ``got`` is accepted for ``expected`` under the rule.

    Example:
        >>> within_tolerance(1.0000005, 1.0), within_tolerance(1.00001, 1.0)
        (True, False)
    """
    return abs(got - expected) <= float_tolerance(expected)


def float_assert(call: str, expected_text: str) -> str:
    """The assert a writer emits for a call whose expected value is the float literal ``expected_text``.

    Args:
        call (`str`): the call's source, e.g. ``"f(1, 2)"``.
        expected_text (`str`): the ``repr`` of the expected float.

    Example:
        >>> float_assert("f(3)", "-2.5")
        'assert abs(f(3) - -2.5) <= 1.25e-06'
    """
    return f"assert abs({call} - {expected_text}) <= {float_tolerance(float(expected_text))!r}"
