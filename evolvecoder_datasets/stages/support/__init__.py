"""What the stage boxes share, one concern per module; none of these is a ``Dataset.map``/``filter`` box itself.

:mod:`.resources` (per-process LLM backends and sandboxes, the CPUs of a running Ray task), :mod:`.seeding`
(``stable_int``, ``problem_rng``), :mod:`.code_names` (names tests call and programs define, independent tests, a
test's normal form), :mod:`.checks` (a batch's cells and a config's values), :mod:`.drops` (counting, recording and
removing dropped rows), :mod:`.llm_stage` (the config base of the stages that ask a model, the rule for failed
requests), :mod:`.stream` (many problems' jobs through one sandbox with no batch barrier), :mod:`.new_tests` (a
round's new tests: the reference first, then the pool), :mod:`.dedup_embed` and :mod:`.dedup_search` (the
embeddings and the tiled cosine search of the dedup box). Callers import each name from its module.

Example:
    >>> from evolvecoder_datasets.stages.support.seeding import stable_int
    >>> stable_int("HumanEval_3", 1) == stable_int("HumanEval_3", 1)
    True
"""

__all__: list[str] = []
