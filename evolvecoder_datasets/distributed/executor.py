"""Where a run's heavy CPU work runs, chosen once: on this machine, or as shard tasks on a Ray cluster.

A recipe makes the choice once per run (``Executor(config.on_ray(), num_proc=config.num_proc)``) and hands the one
:class:`Executor` to every step that scales out; the steps call its methods and never read the ``distributed:``
section themselves. The same rows come back either way.

Example:
    >>> from datasets import Dataset
    >>> from evolvecoder_datasets.distributed.executor import Executor
    >>> def count_tests(batch):
    ...     return {"n_tests": [len(t) for t in batch["tests"]]}
    >>> ds = Dataset.from_dict({"tests": [["assert 1"], ["assert 1", "assert 2"]]})
    >>> list(Executor().map(ds, count_tests)["n_tests"])
    [1, 2]
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .config import DistributedConfig

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset, Features

    from ..stages.evolve import EvolveConfig
    from ..stages.execute import ExecuteConfig

__all__ = ["Executor"]


@dataclass(frozen=True)
class Executor:
    """Local or Ray execution of a run's steps, decided once.

    Args:
        ray (`DistributedConfig`, *optional*): the engine settings when the work runs on Ray; ``None`` (or a config
            whose ``engine`` is ``"local"``) runs it here.
        num_proc (`int`, *optional*): the run's ``num_proc`` for the steps that run here.

    Example:
        >>> from evolvecoder_datasets.distributed import DistributedConfig
        >>> Executor().on_ray, Executor(DistributedConfig(engine="local")).on_ray, Executor(DistributedConfig()).on_ray
        (False, False, True)
    """

    ray: DistributedConfig | None = None
    num_proc: int | None = None

    def __post_init__(self) -> None:
        if self.ray is not None and self.ray.engine != "ray":
            object.__setattr__(self, "ray", None)

    @property
    def on_ray(self) -> bool:
        """Whether the steps run as Ray tasks (``False``: here).

        Example:
            >>> Executor().on_ray
            False
        """
        return self.ray is not None

    def map(self, ds: Dataset, fn: Callable[..., dict[str, list]], *, fn_kwargs: Mapping[str, Any] | None = None,
            input_columns: Sequence[str] | None = None, features: Features | None = None,
            desc: str | None = None) -> Dataset:
        """``ds`` with the columns the batched function ``fn`` adds: here, ``fn`` is called once over every row;
        on Ray, once per shard task (:func:`~evolvecoder_datasets.distributed.shards.map_shards`).

        Example:
            >>> from datasets import Dataset
            >>> def double(batch):
            ...     return {"y": [2 * x for x in batch["x"]]}
            >>> list(Executor().map(Dataset.from_dict({"x": [1, 2]}), double)["y"])
            [2, 4]
        """
        from .shards import map_shards

        config = self.ray or DistributedConfig(engine="local", shard_size=max(1, len(ds)), progress=False)
        return map_shards(ds, fn, fn_kwargs=fn_kwargs, config=config, input_columns=input_columns, features=features,
                          desc=desc)

    def execute(self, ds: Dataset, config: ExecuteConfig) -> Dataset:
        """The execute stage (pass matrices): here, the streamed
        :func:`~evolvecoder_datasets.stages.execute.execute_dataset` with the run's ``num_proc``; on Ray,
        :func:`~evolvecoder_datasets.distributed.engines.execute_distributed`. Same rows either way.

        Example:
            >>> from datasets import Dataset
            >>> from evolvecoder_datasets.stages.execute import ExecuteConfig
            >>> ds = Dataset.from_list([{"solutions": ["print(input())"], "inputs": ["7\\n"], "outputs": ["7"]}])
            >>> Executor().execute(ds, ExecuteConfig())[0]["statuses"]
            [['pass']]
        """
        if self.ray is not None:
            from .engines import execute_distributed

            return execute_distributed(ds, config, distributed=self.ray)
        from ..stages.execute import execute_dataset

        return execute_dataset(ds, config, num_proc=self.num_proc)

    def evolve(self, ds: Dataset, config: EvolveConfig, *, batch_size: int = 16,
               num_proc: int | None = None) -> Dataset:
        """One evolution round: here, :func:`~evolvecoder_datasets.stages.evolve.evolve_dataset` (one pass); on
        Ray with the search on, in two passes (:func:`~evolvecoder_datasets.stages.support.split_round.evolve_in_two`):
        the model writers here, where the model is, and the search as shard tasks on the nodes, so the search
        writer's per-problem Python leaves the driver. Same rows either way.

        Example:
            >>> from evolvecoder_datasets.stages.evolve import EvolveConfig
            >>> round1 = Executor().evolve(round0, EvolveConfig(round=1))  # doctest: +SKIP
        """
        from ..stages.evolve import evolve_dataset

        if self.ray is None or config.search is None:
            return evolve_dataset(ds, config, batch_size=batch_size, num_proc=num_proc)
        from ..stages.support.split_round import evolve_in_two

        return evolve_in_two(ds, config, map_search=self.map, batch_size=batch_size, num_proc=num_proc)

    @contextlib.contextmanager
    def serving(self) -> Iterator[dict[str, dict[str, int]]]:
        """Within the block, on Ray, every sandbox job of this process goes to the execution services of the
        cluster's nodes (:func:`~evolvecoder_datasets.distributed.nodes.execute_on_ray_nodes`); here, nothing
        changes. Yields a dict that, once the block ends normally, holds the jobs and tests each node judged (empty
        here).

        Example:
            >>> with Executor().serving() as counts:
            ...     pass
            >>> counts
            {}
        """
        counts: dict[str, dict[str, int]] = {}
        if self.ray is None:
            yield counts
            return
        from .nodes import execute_on_ray_nodes

        with execute_on_ray_nodes(self.ray) as router:
            yield counts
            counts.update({node: dict(c) for node, c in router.counts.items()})
