"""TestSuite keeps a problem's per-test arrays aligned: selecting or appending tests moves every array at once."""

from __future__ import annotations

import numpy as np
import pytest

from evolvecoder_datasets.errors import SchemaError
from evolvecoder_datasets.suite import TestSuite


def _suite() -> TestSuite:
    return TestSuite(
        ("assert f(0) == 0", "assert f(1) == 1", "assert f(2) == 4"),
        [{"round": 0, "method": "refine"}, {"round": 0, "method": "seed"}, {"round": 1, "method": "adversarial"}],
        [[True, True, False], [True, False, True]],
        [["pass", "pass", "fail"], ["pass", "fail", "pass"]],
    )


def test_selecting_tests_keeps_origins_matrix_and_statuses_in_step():
    kept = _suite().select([0, 2])
    assert kept.tests == ("assert f(0) == 0", "assert f(2) == 4")
    assert [o["method"] for o in kept.origins] == ["refine", "adversarial"]
    assert kept.matrix.tolist() == [[True, False], [True, True]]
    assert kept.statuses == (("pass", "fail"), ("pass", "pass"))
    assert _suite().select(np.array([False, True, False])).tests == ("assert f(1) == 1",)


def test_appending_joins_each_array_along_the_tests():
    new = TestSuite.of(["assert f(3) == 9"], round=2, method="discriminative", matrix=[[False], [True]],
                       statuses=[["fail"], ["pass"]])
    grown = _suite().extend(new)
    assert len(grown) == 4 and grown.n_programs == 2
    assert grown.origins[-1] == {"round": 2, "method": "discriminative"}
    assert grown.matrix[:, -1].tolist() == [False, True]
    assert [row[-1] for row in grown.statuses] == ["fail", "pass"]
    row = grown.row()
    assert len(row["tests"]) == len(row["test_origin"]) == len(row["pass_matrix"][0]) == len(row["statuses"][1])


@pytest.mark.parametrize("broken", [
    {"origins": [{"round": 0, "method": "refine"}]},
    {"matrix": [[True, True], [True, False]]},
    {"statuses": [["pass", "pass", "fail"]]},
    {"statuses": [["pass"], ["fail"]]},
])
def test_a_suite_whose_arrays_disagree_cannot_be_built(broken):
    good = _suite()
    values = {"origins": good.origins, "matrix": good.matrix, "statuses": good.statuses, **broken}
    with pytest.raises(SchemaError, match="test suite"):
        TestSuite(good.tests, **values)


def test_suites_run_on_different_pools_cannot_be_joined():
    other = TestSuite.of(["assert g() == 1"], round=1, method="search", matrix=[[True]])
    with pytest.raises(SchemaError, match="1 programs"):
        _suite().extend(other)


def test_a_stdin_row_keeps_its_cases_as_the_test_axis():
    batch = {"tests": [[]], "inputs": [["1\n", "2\n"]], "outputs": [["1", "4"]], "pass_matrix": [[[True, False]]]}
    suite = TestSuite.from_row(batch, 0)
    assert len(suite) == 2 and suite.tests == () and suite.origins is None
    kept = suite.select([1])
    assert kept.columns == {"inputs": ("2\n",), "outputs": ("4",)} and kept.matrix.tolist() == [[False]]


def test_a_row_without_origins_gets_the_default_or_none():
    batch = {"tests": [["assert a", "assert b"]]}
    assert TestSuite.from_row(batch, 0).origins is None
    assert TestSuite.from_row(batch, 0, default_origin={"round": 0, "method": "refine"}).origins[1]["method"] == "refine"
