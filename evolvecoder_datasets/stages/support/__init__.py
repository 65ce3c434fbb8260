"""What the stage boxes share, one concern per module; none of these is a ``Dataset.map``/``filter`` box itself.

:mod:`.resources` (per-process LLM backends and sandboxes, the CPUs of a running Ray task), :mod:`.drops`
(counting, recording and removing dropped rows), :mod:`.llm_stage` (the config base of the stages that ask a model,
the rule for failed requests), :mod:`.stream` (many problems' jobs through one sandbox with no batch barrier), :mod:`.new_tests` (a
round's new tests: the reference first, then the pool), :mod:`.round_state` (a problem during an evolution round:
its state, log entries, appending checked tests, the search method), :mod:`.model_inputs` (the evolve box's input
mode: the call, the model's calls read, valued by the reference), :mod:`.dedup_embed` and :mod:`.dedup_search` (the
embeddings and the tiled cosine search of the dedup box). Callers import each name from its module. The helpers
the search writer shares with the boxes (``checks``, ``code_names``, ``seeding``) are on the ground floor.

Example:
    >>> from evolvecoder_datasets.stages.support.drops import drop_reason_counts
    >>> drop_reason_counts([None, "no tests", "no tests"])
    {'no tests': 2}
"""

__all__: list[str] = []
