"""Scale the CPU-heavy stages out on a Ray cluster: same stage functions, same rows, coarse tasks.

A stage here is a batched ``Dataset.map`` function (``fn(batch, **fn_kwargs) -> dict[str, list]``). With
``engine="ray"`` the dataset is cut into contiguous shards of ``shard_size`` rows, each shard becomes one Ray task
reserving ``cpus_per_task`` CPUs, and the task runs the stage function on its rows. Tasks are coarse on purpose:
each one drives its own small fork-server sandbox (sized to the CPUs it reserved) instead of forking inside the
Ray worker, which measured about 2x slower.

- **Retries only on infrastructure failures.** A task whose worker process is killed or whose node is lost is
  resubmitted by Ray (``max_retries``), and so is a task that raised
  :class:`~evolvecoder_datasets.errors.SandboxCrashed` (a fork server that could not start). A program that
  fails, crashes or loops is data (a status in the pass matrix), never a reason to retry; any other exception is
  a bug or a bad input and stops the run at once.
- **Idempotent results.** With ``results_dir``, each finished shard is written by the driver as one Arrow file
  named by the shard's position inside a folder named by the fingerprint of (data, function, arguments, shard
  size). A rerun after a crash loads the finished shards and submits only the rest; a changed input or config
  gets a new folder.
- **Only new columns travel.** Tasks receive the columns the stage reads and send back only the columns it adds
  or changes; the result is the input dataset with those columns attached, in the order ``Dataset.map`` gives.
- **Progress across the cluster** is a driver-side bar over rows, advanced as shards finish anywhere.

``engine="local"`` runs the same function through ``Dataset.map`` (for the execute stage: ``execute_dataset``),
so a recipe switches engines by configuration only.

One module per concern: :mod:`.config` (:class:`DistributedConfig`), :mod:`.cluster` (:func:`init_ray`),
:mod:`.shards` (the scheduler, :func:`map_shards`), :mod:`.engines` (the execute, mutant-scoring and embedding
stages driven by it), :mod:`.executor` (:class:`Executor`: local or Ray, chosen once per run and handed to the steps). The stage functions themselves live in
:mod:`evolvecoder_datasets.stages` (:mod:`~evolvecoder_datasets.stages.mutation`,
:mod:`~evolvecoder_datasets.stages.embed`); their configs (``EmbedConfig``, ``MutationConfig``) and ``score_mutants``
are importable from here too, as the Ray examples use them.

Example:
    >>> from datasets import Dataset
    >>> from evolvecoder_datasets.distributed import DistributedConfig, execute_distributed
    >>> from evolvecoder_datasets.stages.execute import ExecuteConfig
    >>> ds = Dataset.from_list([{"id": "T_1", "tests": ["assert f(2) == 4"],
    ...                          "solutions": ["def f(x):\\n    return x * x", "def f(x):\\n    return x + 3"]}])
    >>> out = execute_distributed(ds, ExecuteConfig(), distributed=DistributedConfig(engine="ray", num_cpus=2))
    ... # doctest: +SKIP
    >>> out[0]["pass_matrix"]  # doctest: +SKIP
    [[True], [False]]
"""

from __future__ import annotations

from ..stages.embed import EmbedConfig
from ..stages.mutation import MutationConfig, score_mutants
from .cluster import init_ray
from .config import DistributedConfig
from .engines import embed_distributed, execute_distributed, score_mutants_distributed
from .executor import Executor
from .shards import map_shards

__all__ = [
    "DistributedConfig",
    "EmbedConfig",
    "Executor",
    "MutationConfig",
    "embed_distributed",
    "execute_distributed",
    "init_ray",
    "map_shards",
    "score_mutants",
    "score_mutants_distributed",
]

