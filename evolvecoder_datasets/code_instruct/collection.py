"""What pytest collects from a test module, compared with what the split judges.

A split test (:func:`~.split.split_pytest_module`) is judged outside only if it is the whole test: the published
pytest module must make pytest run exactly the tests the split wrote, each from the same function. Module-level code
can make pytest collect more (``test_big = _case(10, 20)``, a class made at import, a ``pytest_generate_tests``) or
less (``test_a.__test__ = False``), or run another function under a test's name; the split's static reading refuses
the shapes it knows, and :func:`collection_mismatch` checks the rest against pytest itself: a ``pytest
--collect-only`` run of the module in the task's environment (:meth:`~.backend.EnvironmentBackend.run_pytest` with
``collect_only=True``, launched as every verification run is). That run is untrusted: its signed account (the
plugin's ids and lines) and its printed ids (read with bounds) must both match the split, and a failed, crashed or
tampered collection is a mismatch too.

Example:
    >>> from evolvecoder_datasets.code_instruct.split import split_pytest_module
    >>> from evolvecoder_datasets.code_instruct.verdict import PytestRun
    >>> suite = split_pytest_module("from task_module import f\\n\\ndef test_a():\\n    assert f(1) == 2\\n")
    >>> run = PytestRun("passed", collected=(("test_task.py::test_a", 3),), listed=("test_task.py::test_a",))
    >>> collection_mismatch(run, suite) is None
    True
    >>> bigger = PytestRun("passed", collected=(("test_task.py::test_a", 3), ("test_task.py::test_big", 9)))
    >>> collection_mismatch(bigger, suite)
    "pytest collects a test the split does not: ['test_task.py::test_big']"
"""

from __future__ import annotations

import ast

from .split import SplitSuite
from .verdict import PytestRun

__all__ = ["collection_mismatch", "ids_mismatch"]

_SHOWN = 3  # ids named in a reason


def collection_mismatch(collection: PytestRun, suite: SplitSuite) -> str | None:
    """Why pytest's collection of the module and the split's tests differ; ``None`` when they are the same tests.

    Args:
        collection (`PytestRun`): a collect-only run of the module, with the solution beside it.
        suite (`SplitSuite`): the split of the same module.

    Returns:
        `str` or `None`: a short reason (it names at most three ids), or ``None``.

    Example:
        >>> from evolvecoder_datasets.code_instruct.verdict import PytestRun
        >>> collection_mismatch(PytestRun("crashed"), None)
        'the collection crashed'
    """
    if collection.status != "passed":
        detail = collection.tampered or collection.collect_errors
        return f"the collection {collection.status}" + (f": {list(detail[:_SHOWN])}" if detail else "")
    collected = dict(collection.collected)
    split = dict(zip(suite.names, suite.lines))
    if len(collection.collected) != len(collected):
        return "pytest collects a test id twice"
    extra = [name for name in collected if name not in split]
    if extra:
        return f"pytest collects a test the split does not: {extra[:_SHOWN]}"
    gone = [name for name in split if name not in collected]
    if gone:
        return f"the split judges a test pytest does not collect: {gone[:_SHOWN]}"
    moved = [name for name in split if split[name] and collected[name] != split[name]]
    if moved:  # the same id, another function (a test re-bound at import)
        return f"pytest runs another function under {moved[:_SHOWN]} (line {collected[moved[0]]}, " \
               f"the split's is line {split[moved[0]]})"
    if [name for name, _ in collection.collected] != list(suite.names):  # the split runs them in its order, on one
        return f"pytest runs the tests in another order: {[n for n, _ in collection.collected][:_SHOWN]}"  # solution
    if sorted(collection.listed) != sorted(collected):
        return "pytest's printed collection and its plugin's account differ"
    given = dict(collection.params)
    other = [name for name, written in zip(suite.names, suite.params or ("",) * len(suite.names))
             if not _same_params(written, given.get(name))]  # fmt: skip
    if other:  # a value evaluated at another time than the split's, or an object changed after the decorator read it
        return f"pytest calls {other[:_SHOWN]} with other parameters than the split's"
    return None


def _same_params(written: str, collected: str | None) -> bool:
    """Whether a split test's parameters (the source of a dict of written-out values; empty without any) are the
    values pytest collected (the ``repr`` of their dict): both read as literals, equal value for value and of the
    same types. A value that is no literal on either side (a name, an object) matches nothing.

    Example:
        >>> _same_params("{'t': 1}", "{'t': 1}"), _same_params("{'t': 1}", "{'t': True}"), _same_params("", None)
        (True, False, True)
    """
    if not written or collected is None:
        return not written and collected is None
    try:
        return _same(ast.literal_eval(written), ast.literal_eval(collected))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False


def _same(a, b) -> bool:
    """Equal literals of the same types all the way down (``1``, ``1.0`` and ``True`` differ; so do ``0.0`` and
    ``-0.0``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        keyed_a = {(type(k).__name__, repr(k)): v for k, v in a.items()}
        keyed_b = {(type(k).__name__, repr(k)): v for k, v in b.items()}
        return keyed_a.keys() == keyed_b.keys() and all(_same(v, keyed_b[k]) for k, v in keyed_a.items())
    if isinstance(a, (set, frozenset)):
        return {(type(x).__name__, repr(x)) for x in a} == {(type(x).__name__, repr(x)) for x in b}
    return repr(a) == repr(b) if isinstance(a, (float, complex)) else a == b


def ids_mismatch(run: PytestRun, collection: PytestRun) -> str | None:
    """Why a pytest run's tests (and their parameters) are not the ones a separate collect-only run collected
    (another process, so a module that collects differently from run to run, or only under ``--collect-only``, is
    seen); ``None`` when they agree.

    Example:
        >>> from evolvecoder_datasets.code_instruct.verdict import PytestRun
        >>> ran = PytestRun("passed", {"t.py::test_a": "passed"}, collected=(("t.py::test_a", 1),))
        >>> ids_mismatch(ran, PytestRun("passed", collected=(("t.py::test_a", 1),))) is None
        True
    """
    if collection.status != "passed":
        return f"the separate collection {collection.status}"
    if sorted(run.collected) != sorted(collection.collected):
        ran = sorted({name for name, _ in run.collected} ^ {name for name, _ in collection.collected})
        return f"the run and the separate collection collected different tests: {ran[:_SHOWN]}"
    if list(run.collected) != list(collection.collected):
        return "the run and the separate collection ordered the tests differently"
    if sorted(run.params) != sorted(collection.params):  # parameters that change only when the module runs
        ran = sorted({name for name, _ in set(run.params) ^ set(collection.params)})
        return f"the run and the separate collection gave {ran[:_SHOWN]} different parameters"
    return None
