"""Gates a generated task must pass before it is executed, each with a named skip reason.

In order (:func:`run_gates`):

1. ``contaminated``: the problem shares too many word n-grams with benchmark texts (HumanEval prompts and
   solutions, LeetCode statements, or any texts you index), see :class:`DecontaminationIndex`;
2. ``test_not_importing_task_module``: the test never imports ``task_module``;
3. ``not_anchored``: the solution does not import the repository's package, or imports it without really using an
   imported name (a use inside a type annotation does not count);
4. ``symbol_collision``: the solution defines a top-level name equal to a public symbol of the repository;
5. ``weak_test``: fewer than three non-trivial asserts, any trivial one (``assert True``, ``assert x == x``,
   literals only), no test function, or no ``pytest.raises`` although the problem speaks of errors or invalid input;
6. ``oracle_unreached``: no assert of the test depends on what it imports from ``task_module`` (values followed
   through variables, helpers and fixtures), so the test checks the repository or constants, not the task;
7. ``duplicate``: a task already emitted has the same normalised problem head or the same sorted public symbol names
   of its solution (:class:`Deduplicator`).

Everything here is static (AST and text); nothing generated is executed. One module per concern:
:mod:`.result`, :mod:`.decontamination` (gate 1), :mod:`.anchoring` (gates 2-4), :mod:`.strength` (gates 5-6),
:mod:`.dedup` (gate 7); this module holds the skip reasons and :func:`run_gates`.

Example:
    >>> from evolvecoder_datasets.code_instruct.gates import check_test_strength
    >>> check_test_strength("def test_a():\\n    assert True\\n", "Write f.").reason
    'weak_test'
"""

from __future__ import annotations

from collections.abc import Iterable

from .anchoring import check_imports_task_module, check_repo_anchoring, check_symbol_collision
from .decontamination import DecontaminationIndex, check_decontamination
from .dedup import Deduplicator
from .result import GateResult
from .strength import check_asserts_reach_oracle, check_test_strength, count_oracle_checks, is_trivial_assert

__all__ = [
    "SKIP_REASONS",
    "DecontaminationIndex",
    "Deduplicator",
    "GateResult",
    "check_asserts_reach_oracle",
    "check_decontamination",
    "check_imports_task_module",
    "check_repo_anchoring",
    "check_symbol_collision",
    "check_test_strength",
    "count_oracle_checks",
    "is_trivial_assert",
    "run_gates",
]

#: Every reason a candidate task can be skipped for, with what it means (gates, parsing and verification).
SKIP_REASONS = {
    "llm_error": "the model call failed after all retries",
    "empty": "the answer was empty",
    "missing_section": "the answer lacked [Problem Description], [Test] or [Solution]",
    "syntax_error": "the test or the solution is not valid Python",
    "too_deep": "the test or the solution is nested too deeply for the static checks",
    "contaminated": "the problem overlaps benchmark texts (word n-grams)",
    "test_not_importing_task_module": "the test does not import task_module",
    "not_anchored": "the solution does not import and really use the repository's package",
    "symbol_collision": "the solution redefines a public symbol of the repository",
    "weak_test": "fewer than 3 non-trivial asserts, a trivial assert, no test function, or no pytest.raises for "
    "an error the problem requires",
    "oracle_unreached": "no assert, assert* call or pytest.raises block of the test depends on task_module",
    "duplicate": "same problem head or same solution symbols as an emitted task",
    "test_passes_without_solution": "stage A: the test did not fail without task_module.py (passed, skipped, "
    "xfailed or collected nothing)",
    "stage_a_no_verdict": "stage A: the run without the solution crashed or timed out",
    "missing_module": "stage B: the test or the solution imports a module the environment does not have",
    "solution_fails_test": "stage B: the reference solution fails its own test",
    "no_tests_collected": "stage B: pytest collected no test",
    "verify_timeout": "stage B: the run with the solution timed out",
    "verify_crashed": "stage B: the run with the solution left no verdict (crash, os._exit)",
    "collection_mismatch": "stage B: the pytest run did not run the tests a separate collect-only run found",
    "test_passes_a_wrong_solution": "stage B, judged inside: the test passed against a decoy task_module whose every "
    "name raises (it does not test the solution, or forges pytest's verdict)",
    "no_window": "no acceptable code window could be drawn for this seed",
}
#: The static gates in the order :func:`run_gates` applies them.
GATE_ORDER = ("decontamination", "imports_task_module", "repo_anchoring", "symbol_collision", "test_strength",
              "oracle_reach", "dedup")


def run_gates(
    problem: str,
    test: str,
    solution: str,
    *,
    import_names: Iterable[str],
    public_symbols: Iterable[str],
    index: DecontaminationIndex | None = None,
    dedup: Deduplicator | None = None,
    max_overlap: float = 0.02,
    min_asserts: int = 3,
) -> GateResult:
    """All seven gates in :data:`GATE_ORDER`; the first failure is returned.

    Args:
        problem (`str`): the problem description.
        test (`str`): the pytest source.
        solution (`str`): the reference ``task_module`` source.
        import_names (`Iterable[str]`): the repository's import names.
        public_symbols (`Iterable[str]`): the repository's public symbols.
        index (`DecontaminationIndex`, *optional*): benchmark n-grams; `None` skips decontamination.
        dedup (`Deduplicator`, *optional*): fingerprints of emitted tasks; `None` skips dedup.
        max_overlap (`float`, defaults to 0.02): see :func:`check_decontamination`.
        min_asserts (`int`, defaults to 3): see :func:`check_test_strength`.

    Example:
        >>> run_gates("Write f.", "def test_a():\\n    assert 1\\n", "def f(): pass\\n",
        ...           import_names=["click"], public_symbols=[]).reason
        'test_not_importing_task_module'
    """
    import_names = list(import_names)
    checks = (
        lambda: check_decontamination(problem, index, max_overlap=max_overlap),
        lambda: check_imports_task_module(test),
        lambda: check_repo_anchoring(solution, import_names),
        lambda: check_symbol_collision(solution, public_symbols),
        lambda: check_test_strength(test, problem, min_asserts=min_asserts),
        lambda: check_asserts_reach_oracle(test),
        lambda: dedup.check(problem, solution) if dedup is not None else GateResult.passed(),
    )
    for check in checks:
        try:
            result = check()
        except (RecursionError, MemoryError):  # model-written code nested past what the AST walks recurse through
            return GateResult.failed("too_deep", "the test or the solution is nested too deeply to check")
        if not result.ok:
            return result
    return GateResult.passed()
