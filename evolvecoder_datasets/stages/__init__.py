"""The ``Dataset.map``/``Dataset.filter`` boxes of the pipeline, one module per stage.

Stages load on first attribute access, so ``import evolvecoder_datasets.stages`` stays cheap. A stage's module
and its box function share a name (``refine``); ``stages.refine`` is always the module (the function is
``stages.refine.refine``, or ``stages.refine_dataset`` over a whole dataset): one meaning, whatever was imported
first. What the boxes share
(backends and sandboxes per process, seeding, input checks, job streaming, dropped rows) is the sub-package
:mod:`.support`, one concern per module.

Example:
    >>> from evolvecoder_datasets import stages
    >>> stages.deduplicate  # doctest: +SKIP
    <function deduplicate at ...>
"""

from __future__ import annotations

from .._lazy import lazy_exports

# Public name -> module (inside this package) that defines it: the stage functions and their configs (helpers are
# imported from their modules in `support/`; the search writer the evolve box calls is `evolvecoder_datasets.search`).
# Stage owners add their names here.
_ATTRIBUTES: dict[str, str] = {
    "deduplicate": "dedup",
    "find_near_duplicates": "dedup",
    "DedupOptions": "dedup",
    "drop_duplicates": "dedup",
    "execute_dataset": "execute",
    "ExecuteConfig": "execute",
    "calibrate_dataset": "calibrate",
    "refine_dataset": "refine",
    "RefineConfig": "refine",
    "sample_dataset": "sample",
    "SampleConfig": "sample",
    "ModelSpec": "sample",
    "evolve_dataset": "evolve",
    "EvolveConfig": "evolve",
    "finalize_dataset": "finalize",
    "FinalizeConfig": "finalize",
    "score_mutants": "mutation",
    "MutationConfig": "mutation",
    "embed_rows": "embed",
    "EmbedConfig": "embed",
    "reference_verdicts": "references",
    # the box function itself stays `stages.domains.domains` (a name that is not also its module's)
    "domains_dataset": "domains",
}


__all__ = sorted(_ATTRIBUTES)

# The stage modules, returned themselves on ``stages.<name>`` (their box functions share their names).
_SUBMODULES = ("calibrate", "dedup", "domains", "embed", "evolve", "execute", "finalize", "mutation", "references",
               "refine", "sample", "support")
__getattr__, __dir__ = lazy_exports(__name__, _ATTRIBUTES, __all__, submodules=_SUBMODULES)
