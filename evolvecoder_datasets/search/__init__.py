"""Search-written tests and the fidelity oracle: inputs mutated from a problem's asserts, valued by its reference.

The one test writer that needs no language model, and the oracle that measures a suite without being part of it,
share their machinery here. One module per concern: :mod:`.inputs` (the call a problem's asserts make and new
arguments for it, pure Python on literal values), :mod:`.probes` (programs that make the sandbox answer the
search's questions through pass/fail verdicts alone), :mod:`.writer` (the search itself: candidates valued by the
reference, kept when they kill or split what the suite lets through; the evolve stage's ``search`` method) and
:mod:`.oracle` (many reference-valued inputs per problem, kept apart from the suite, that label programs right or
wrong for the recipe's fidelity figures). Stdin/stdout problems have their own three: :mod:`.text_shape` (the
layout and slots of a problem's input text, and the validator's code), :mod:`.text_inputs` (stated bounds, the
mutator, the validator program) and :mod:`.stdio_writer` (the search on whole inputs and outputs).

Example:
    >>> from evolvecoder_datasets.search import recover_call
    >>> recover_call(["assert add(1, 2) == 3"]).seeds
    ((1, 2),)
"""

from __future__ import annotations

from .calls import recover_call
from .oracle import FidelityConfig, Oracle, OracleProblem, build_oracles, label_programs
from .writer import SearchConfig, SearchProblem, SearchResult, search_tests

# What a user calls: the writer and the oracle with their configs and results, and the call a problem's asserts
# make. The machinery (mutators, probe programs, timeouts) is imported from its module.
__all__ = ["FidelityConfig", "Oracle", "OracleProblem", "SearchConfig", "SearchProblem", "SearchResult",
           "build_oracles", "label_programs", "recover_call", "search_tests"]
