"""AST mutation of reference solutions: LLM-free near-correct adversaries and a mutation score.

A mutant is the reference program with one small, plausible bug: a flipped comparison, an off-by-one in a
``range`` or an index, a swapped arithmetic or logical operator, a nudged constant, a dropped branch, or a
return inside a loop. Mutants serve two purposes:

1. an LLM-free pool of near-correct programs that can join the solution pool of a round (adversaries that a
   good test suite must reject);
2. the **mutation score** of a test suite: the fraction of (non-equivalent) mutants that at least one test
   kills, a direct measure of verification strength reported per round.

One module per concern: :mod:`.generate` (the operators and :func:`generate_mutants`) and :mod:`.score`
(:func:`mutation_score`, :func:`killed_mask`, :func:`pooled_score`).

Example:
    >>> from evolvecoder_datasets.mutants import generate_mutants
    >>> ref = "def is_adult(age):\\n    return age >= 18\\n"
    >>> [m.description for m in generate_mutants(ref, operators=["comparison_flip", "boundary_constant"])]
    ['`>=` -> `>`', '`>=` -> `<`', '`18` -> `19`', '`18` -> `17`']
"""

from __future__ import annotations

from .generate import MUTATOR_VERSION, OPERATORS, Mutant, generate_mutants
from .score import MutationScore, killed_mask, mutation_score, pooled_score

__all__ = ["MUTATOR_VERSION", "OPERATORS", "Mutant", "MutationScore", "generate_mutants", "killed_mask",
           "mutation_score", "pooled_score"]
