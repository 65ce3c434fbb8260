"""The mutation score: which mutants a test suite kills, per problem and pooled over problems.

The one definition of *killed* in the package: a mutant is killed when it fails at least one test that the
reference passes (:func:`killed_mask`). :func:`mutation_score` runs a reference and its mutants; the recipe's round
statistics apply :func:`killed_mask` to the pass matrix they already have, and :func:`pooled_score` pools problems
for them and for :func:`evolvecoder_datasets.metrics.mutation_table`.

Example:
    >>> from evolvecoder_datasets.mutants.score import killed_mask
    >>> killed_mask([[True, False], [True, True]], [True, True]).tolist()
    [True, False]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ConfigError, SchemaError
from .generate import OPERATORS, Mutant, generate_mutants

__all__ = ["MutationScore", "killed_mask", "mutation_score", "pooled_score"]


def killed_mask(mutant_matrix: Any, reference_passes: Any) -> np.ndarray:
    """Per mutant: whether it fails at least one test the reference passes.

    Args:
        mutant_matrix (`array-like`): bool pass matrix, mutants x tests.
        reference_passes (`array-like`): bool per test, whether the reference passes it (tests it fails kill
            nothing).

    Returns:
        `np.ndarray`: bool, one entry per mutant.

    Example:
        >>> killed_mask([[False, False]], [False, True]).tolist()   # fails only the test the reference fails too
        [True]
        >>> killed_mask([[False, True]], [False, True]).tolist()
        [False]
    """
    M = np.asarray(mutant_matrix, dtype=bool)
    ref = np.asarray(reference_passes, dtype=bool)
    if M.size == 0:
        return np.zeros(M.shape[0] if M.ndim == 2 else 0, dtype=bool)
    return (~M & ref).any(axis=1)


def pooled_score(results: Iterable[Any]) -> tuple[int, int, float]:
    """``(killed, considered, score)`` over several problems: all mutants pooled (``nan`` when none counted).

    Args:
        results (`Iterable`): per problem a :class:`MutationScore` or a mapping with ``killed`` and ``considered``.

    Example:
        >>> pooled_score([{"killed": 3, "considered": 4}, {"killed": 1, "considered": 1}])
        (4, 5, 0.8)
    """
    killed = considered = 0
    for result in results:
        entry = result if isinstance(result, Mapping) else {"killed": result.killed, "considered": result.considered}
        killed += int(entry["killed"])
        considered += int(entry["considered"])
    return killed, considered, killed / considered if considered else float("nan")


@dataclass(frozen=True)
class MutationScore:
    """How strongly a test suite tells a reference solution from its mutants.

    Attributes:
        score (`float`): killed / considered; ``nan`` when no mutant is considered.
        killed (`int`): mutants failing at least one test the reference passes.
        considered (`int`): mutants counted as non-equivalent (the denominator).
        survivors (`list[Mutant]`): considered mutants no test killed (the suite's blind spots).
        equivalent (`list[Mutant]`): mutants set aside as (probably) equivalent; empty without a reference
            suite.
        broken_tests (`list[int]`): indices of tests the reference itself fails; they kill nothing.
        by_operator (`dict[str, dict[str, int]]`): ``{"killed": ..., "considered": ...}`` per operator.
    """

    score: float
    killed: int
    considered: int
    survivors: list[Mutant] = field(default_factory=list)
    equivalent: list[Mutant] = field(default_factory=list)
    broken_tests: list[int] = field(default_factory=list)
    by_operator: dict[str, dict[str, int]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """Plain numbers for round statistics and cards (no program text).

        Example:
            >>> MutationScore(score=0.5, killed=1, considered=2).as_dict()["score"]
            0.5
        """
        return {
            "score": self.score,
            "killed": self.killed,
            "considered": self.considered,
            "survived": len(self.survivors),
            "equivalent": len(self.equivalent),
            "broken_tests": len(self.broken_tests),
            "by_operator": {op: dict(v) for op, v in self.by_operator.items()},
        }


Runner = Callable[[Sequence[str], Sequence[str]], Any]


def _run(programs: list[str], tests: list[str], runner: Runner | None, sandbox: Any) -> np.ndarray:
    if runner is not None and sandbox is not None:
        raise ConfigError("pass either runner or sandbox, not both")
    if runner is not None:
        matrix = runner(programs, tests)
    elif sandbox is not None:
        matrix = sandbox.pass_matrix(programs, tests)
    else:
        from ..execution import Sandbox

        with Sandbox() as sb:
            matrix = sb.pass_matrix(programs, tests)
    M = np.asarray(matrix, dtype=bool)
    if M.shape != (len(programs), len(tests)):
        raise SchemaError(f"runner returned shape {M.shape}, expected {(len(programs), len(tests))}")
    return M


def mutation_score(
    reference: str,
    tests: Sequence[str],
    *,
    mutants: Sequence[Mutant] | None = None,
    reference_tests: Sequence[str] | None = None,
    runner: Runner | None = None,
    sandbox: Any = None,
    max_mutants: int | None = None,
    seed: int = 0,
    operators: Iterable[str] = OPERATORS,
) -> MutationScore:
    """Fraction of non-equivalent mutants of ``reference`` that ``tests`` kill.

    A mutant is *killed* when it fails at least one test that the reference passes (tests the reference fails
    are reported as broken and kill nothing). Deciding whether a mutant is *equivalent* (behaves exactly like
    the reference) is undecidable in general, so it is approximated:

    - with ``reference_tests`` (a larger or trusted suite, e.g. the final suite or seed tests plus all
      generated ones): a mutant no reference test kills is set aside as equivalent;
    - without it, every mutant counts, so the score is a lower bound and the survivors list the mutants to
      inspect (some may be equivalent).

    Programs run once, all together: ``[reference, *mutants]`` against ``tests + reference_tests``.

    Args:
        reference (`str`): the reference solution (a whole program).
        tests (`Sequence[str]`): the suite to score, one independent test (e.g. an ``assert``) per item.
        mutants (`Sequence[Mutant]`, *optional*): mutants to use; by default
            ``generate_mutants(reference, max_mutants=..., seed=..., operators=...)``.
        reference_tests (`Sequence[str]`, *optional*): suite that decides non-equivalence (see above).
        runner (`Callable[[Sequence[str], Sequence[str]], array-like]`, *optional*): returns the bool pass
            matrix ``(programs, tests)``; for trusted code or a custom executor.
        sandbox (`evolvecoder_datasets.execution.Sandbox`, *optional*): an open sandbox; its ``pass_matrix``
            runs the programs. With neither ``runner`` nor ``sandbox``, a default ``Sandbox()`` is opened.
        max_mutants (`int`, *optional*): cap on generated mutants (seeded sample).
        seed (`int`, *optional*, defaults to `0`): seed of that sample.
        operators (`Iterable[str]`, *optional*): operators of the generated mutants.

    Returns:
        [`MutationScore`]: the score, counts, survivors and per-operator breakdown.

    Raises:
        ConfigError: both ``runner`` and ``sandbox`` are given.
        SchemaError: the reference does not parse, ``tests`` or ``reference_tests`` is a single string, or the
            runner returns a matrix of the wrong shape.
        SandboxError: the default sandbox cannot run.

    Example:
        >>> from evolvecoder_datasets.mutants import mutation_score
        >>> def trusted_runner(programs, tests):   # in-process: only for code you trust
        ...     rows = []
        ...     for program in programs:
        ...         row = []
        ...         for test in tests:
        ...             scope = {}
        ...             try:
        ...                 exec(program, scope)
        ...                 exec(test, scope)
        ...                 row.append(True)
        ...             except Exception:
        ...                 row.append(False)
        ...         rows.append(row)
        ...     return rows
        >>> ref = "def is_adult(age):\\n    return age >= 18\\n"
        >>> weak = mutation_score(ref, ["assert is_adult(30)"], runner=trusted_runner)
        >>> strong = mutation_score(ref, ["assert is_adult(18)", "assert not is_adult(17)"], runner=trusted_runner)
        >>> weak.score, strong.score, [m.description for m in weak.survivors]
        (0.25, 1.0, ['`>=` -> `>`', '`18` -> `19`', '`18` -> `17`'])
    """
    for name, value in (("tests", tests), ("reference_tests", reference_tests)):
        if isinstance(value, (str, bytes)):  # iterated, it would be one test per character
            raise SchemaError(
                f"mutation_score: {name} must be a sequence of tests, got one {type(value).__name__}"
            )
    tests = list(tests)
    extra = list(reference_tests or [])
    if mutants is None:
        mutants = generate_mutants(reference, max_mutants=max_mutants, seed=seed, operators=operators)
    mutants = list(mutants)
    if not mutants:
        return MutationScore(score=float("nan"), killed=0, considered=0)

    M = _run([reference] + [m.code for m in mutants], tests + extra, runner, sandbox)
    ref_row, mutant_rows = M[0], M[1:]
    suite, suite_ref = mutant_rows[:, : len(tests)], ref_row[: len(tests)]
    killed = killed_mask(suite, suite_ref)
    if extra:
        distinct = killed_mask(mutant_rows[:, len(tests) :], ref_row[len(tests) :]) | killed
    else:
        distinct = np.ones(len(mutants), dtype=bool)

    by_operator: dict[str, dict[str, int]] = {}
    survivors, equivalent = [], []
    for mutant, is_killed, counted in zip(mutants, killed.tolist(), distinct.tolist()):
        if not counted:
            equivalent.append(mutant)
            continue
        slot = by_operator.setdefault(mutant.operator, {"killed": 0, "considered": 0})
        slot["considered"] += 1
        slot["killed"] += int(is_killed)
        if not is_killed:
            survivors.append(mutant)
    considered = int(distinct.sum())
    killed_n = int((killed & distinct).sum())
    return MutationScore(
        score=killed_n / considered if considered else float("nan"),
        killed=killed_n,
        considered=considered,
        survivors=survivors,
        equivalent=equivalent,
        broken_tests=np.flatnonzero(~suite_ref).tolist(),
        by_operator=by_operator,
    )
