"""A problem's tests with the arrays that run along them, kept aligned by construction.

Every per-test column of a problem row (``tests``, ``test_origin``, ``inputs``/``outputs`` of stdin problems) and
the test axis of its pool columns (``pass_matrix`` and ``statuses``: programs x tests) must stay in step whenever a
stage keeps some tests or appends new ones. :class:`TestSuite` holds them together: :meth:`TestSuite.select` and
:meth:`TestSuite.extend` change every array at once, and a suite whose arrays disagree cannot be built.

Example:
    >>> from evolvecoder_datasets.suite import TestSuite
    >>> suite = TestSuite.of(["assert f(1) == 1", "assert f(2) == 4"], round=0, method="refine",
    ...                      matrix=[[True, False], [True, True]])
    >>> suite = suite.extend(TestSuite.of(["assert f(3) == 9"], round=1, method="adversarial", matrix=[[False], [True]]))
    >>> kept = suite.select([1, 2])
    >>> kept.tests, kept.matrix.tolist(), [o["method"] for o in kept.origins]
    (('assert f(2) == 4', 'assert f(3) == 9'), [[False, False], [True, True]], ['refine', 'adversarial'])
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import schema
from .errors import SchemaError

__all__ = ["TestSuite", "as_origin_list"]


def as_origin_list(value: Any) -> list[dict[str, Any]]:
    """A ``test_origin`` cell as plain dicts ``{"round": int, "method": str}``.

    Example:
        >>> as_origin_list([{"round": 1, "method": "adversarial"}])
        [{'round': 1, 'method': 'adversarial'}]
    """
    return [{"round": int(o["round"]), "method": str(o["method"])} for o in value or ()]


def _matrix(value: Any, n_tests: int) -> np.ndarray | None:
    if value is None:
        return None
    M = np.asarray(value, dtype=bool)
    if M.size == 0:  # an empty pool or no tests: numpy cannot tell (0,) from (k, 0)
        rows = len(value) if M.ndim >= 1 and n_tests == 0 else 0
        return np.zeros((rows, n_tests), dtype=bool)
    return M


@dataclass(frozen=True, eq=False)
class TestSuite:
    """A problem's tests and every array indexed by them.

    Args:
        tests (`Sequence[str]`): the tests (asserts). Empty for a stdin/stdout problem, whose cases live in
            ``columns``.
        origins (`Sequence[dict]`, *optional*): per test ``{"round", "method"}``; ``None`` when the row has none.
        matrix (`array-like`, *optional*): bool pass matrix, programs x tests; ``None`` before execution.
        statuses (`Sequence[Sequence[str]]`, *optional*): typed outcome per cell, programs x tests.
        columns (`Mapping[str, Sequence]`, *optional*): other per-test columns, e.g. ``inputs`` and ``outputs``.

    Raises:
        SchemaError: an array's length does not match the number of tests, or ``statuses`` does not match the
            matrix's programs.

    Example:
        >>> TestSuite(("assert f() == 1",), origins=())
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.errors.SchemaError: test suite: test_origin has 0 entries for 1 tests
    """

    __test__ = False  # not a pytest class

    tests: tuple[str, ...] = ()
    origins: tuple[dict[str, Any], ...] | None = None
    matrix: np.ndarray | None = None
    statuses: tuple[tuple[str, ...], ...] | None = None
    columns: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "tests", tuple(self.tests))
        set_(self, "columns", {name: tuple(values) for name, values in self.columns.items()})
        n = len(self)
        if self.origins is not None:
            set_(self, "origins", tuple(as_origin_list(self.origins)))
        set_(self, "matrix", _matrix(self.matrix, n))
        if self.statuses is not None:
            set_(self, "statuses", tuple(tuple(row) for row in self.statuses))
        for name, values in self._named_arrays():
            if len(values) != n:
                raise SchemaError(f"test suite: {name} has {len(values)} entries for {n} tests")
        if self.matrix is not None and (self.matrix.ndim != 2 or self.matrix.shape[1] != n):
            raise SchemaError(f"test suite: {schema.PASS_MATRIX} has shape {self.matrix.shape} for {n} tests")
        if self.statuses is not None:
            if self.matrix is not None and len(self.statuses) != self.matrix.shape[0]:
                raise SchemaError(f"test suite: {schema.STATUSES} has {len(self.statuses)} rows for "
                                  f"{self.matrix.shape[0]} programs")
            for row in self.statuses:
                if len(row) != n:
                    raise SchemaError(f"test suite: a {schema.STATUSES} row has {len(row)} entries for {n} tests")

    def __len__(self) -> int:
        """The number of tests (or of stdin cases, for a stdin/stdout problem)."""
        if self.tests or not self.columns:
            return len(self.tests)
        return len(next(iter(self.columns.values())))

    def _named_arrays(self) -> Iterable[tuple[str, Sequence[Any]]]:
        if self.tests or not self.columns:
            yield schema.TESTS, self.tests
        if self.origins is not None:
            yield schema.TEST_ORIGIN, self.origins
        yield from self.columns.items()

    @classmethod
    def of(cls, tests: Sequence[str], *, round: int, method: str, matrix: Any = None,
           statuses: Sequence[Sequence[str]] | None = None) -> TestSuite:
        """New tests that share one origin (round and method).

        Example:
            >>> TestSuite.of(["assert g() is None"], round=2, method="search").origins
            ({'round': 2, 'method': 'search'},)
        """
        origin = {"round": int(round), "method": str(method)}
        return cls(tuple(tests), tuple(dict(origin) for _ in tests), matrix, statuses)

    @classmethod
    def from_row(cls, batch: Mapping[str, Sequence[Any]], i: int, *, default_origin: Mapping[str, Any] | None = None,
                 pool: bool = True) -> TestSuite:
        """The suite of row ``i`` of a ``Dataset.map`` batch.

        Args:
            batch (`Mapping[str, Sequence]`): the batch; reads ``tests``, ``test_origin``, ``inputs``, ``outputs``
                and (with ``pool``) ``pass_matrix`` and ``statuses`` where present.
            i (`int`): the row.
            default_origin (`Mapping`, *optional*): the origin of every test when the row has no ``test_origin``.
            pool (`bool`, defaults to `True`): read the pool columns too.

        Raises:
            SchemaError: the row's arrays do not line up.

        Example:
            >>> batch = {"tests": [["assert h(0) == 0"]], "pass_matrix": [[[True], [False]]]}
            >>> suite = TestSuite.from_row(batch, 0, default_origin={"round": 0, "method": "refine"})
            >>> suite.matrix.shape, suite.origins[0]["method"]
            ((2, 1), 'refine')
        """
        def cell(name: str) -> Any:
            values = batch.get(name)
            return None if values is None else values[i]

        tests = tuple(cell(schema.TESTS) or ())
        columns = {name: tuple(cell(name)) for name in (schema.INPUTS, schema.OUTPUTS) if cell(name)}
        n = len(tests) if tests or not columns else len(next(iter(columns.values())))
        origins = cell(schema.TEST_ORIGIN)
        if not origins and n:  # none recorded: the default's, or unknown
            origins = None if default_origin is None else [dict(default_origin) for _ in range(n)]
        matrix = cell(schema.PASS_MATRIX) if pool else None
        statuses = cell(schema.STATUSES) if pool else None
        return cls(tests, origins, matrix, statuses or None, columns)

    @property
    def n_programs(self) -> int:
        """Rows of the pass matrix (0 without one)."""
        return 0 if self.matrix is None else int(self.matrix.shape[0])

    def select(self, keep: Sequence[int] | np.ndarray) -> TestSuite:
        """The suite restricted to the tests ``keep`` names (indices in order, or a bool mask).

        Example:
            >>> TestSuite.of(["assert a", "assert b"], round=0, method="seed").select([False, True]).tests
            ('assert b',)
        """
        index = np.asarray(keep)
        if index.dtype == bool:
            index = np.flatnonzero(index)
        idx = index.astype(np.int64).tolist()
        return TestSuite(
            tuple(self.tests[k] for k in idx) if self.tests else (),
            None if self.origins is None else tuple(self.origins[k] for k in idx),
            None if self.matrix is None else self.matrix[:, idx],
            None if self.statuses is None else tuple(tuple(row[k] for k in idx) for row in self.statuses),
            {name: tuple(values[k] for k in idx) for name, values in self.columns.items()},
        )

    def extend(self, other: TestSuite) -> TestSuite:
        """This suite followed by ``other``'s tests (same programs; pool arrays are joined along the tests).

        A pool array (matrix or statuses) that only one side has is dropped from the result.

        Raises:
            SchemaError: the two suites were run on different numbers of programs.

        Example:
            >>> a = TestSuite.of(["assert a"], round=0, method="refine", matrix=[[True]])
            >>> a.extend(TestSuite.of(["assert b"], round=1, method="search", matrix=[[False]])).matrix.tolist()
            [[True, False]]
        """
        if self.matrix is not None and other.matrix is not None and self.n_programs != other.n_programs:
            raise SchemaError(f"test suite: cannot join suites run on {self.n_programs} and {other.n_programs} "
                              "programs")
        both = self.matrix is not None and other.matrix is not None
        statuses = None
        if self.statuses is not None and other.statuses is not None:
            statuses = tuple(a + b for a, b in zip(self.statuses, other.statuses))
        origins = None if self.origins is None or other.origins is None else self.origins + other.origins
        return TestSuite(
            self.tests + other.tests,
            origins,
            np.hstack([self.matrix, other.matrix]) if both else None,
            statuses,
            {name: values + other.columns.get(name, ()) for name, values in self.columns.items()},
        )

    def row(self) -> dict[str, Any]:
        """The suite as row cells: ``tests``, ``test_origin`` (when known), ``pass_matrix`` and ``statuses`` (when
        present) and the other per-test columns, as plain lists for Arrow.

        Example:
            >>> TestSuite.of(["assert a"], round=0, method="seed", matrix=[[True]]).row()
            {'tests': ['assert a'], 'test_origin': [{'round': 0, 'method': 'seed'}], 'pass_matrix': [[True]]}
        """
        out: dict[str, Any] = {schema.TESTS: list(self.tests)}
        if self.origins is not None:
            out[schema.TEST_ORIGIN] = [dict(o) for o in self.origins]
        if self.matrix is not None:
            out[schema.PASS_MATRIX] = self.matrix.tolist()
        if self.statuses is not None:
            out[schema.STATUSES] = [list(r) for r in self.statuses]
        out.update({name: list(values) for name, values in self.columns.items()})
        return out
