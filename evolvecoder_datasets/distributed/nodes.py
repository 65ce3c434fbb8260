"""Every sandbox job of a process on the execution services of a Ray cluster's nodes: one actor per node.

Inside :func:`execute_on_ray_nodes`, a :class:`~evolvecoder_datasets.execution.Sandbox` in this process (every
stage's, the rewards', the search writer's) no longer talks to this machine's execution service: its batch is cut
into chunks of consecutive jobs, and each chunk goes to the actor of one node, which hands it to that node's own
service (:mod:`evolvecoder_datasets.execution.service`, started there by the first chunk). The driver only sends
jobs and receives reports: no test is planned, no program runs and no value is judged in it.

- **Back-pressure.** A batch holds at most ``chunks_per_cpu`` chunks per CPU of the cluster at once; each goes to
  the node with the most room (the most of its ``chunks_per_cpu`` per CPU free, counting every batch in flight: a
  stream sends many small batches at once; ties go round the nodes), so a fast node takes more of the batch and a
  slow one never queues a backlog. A chunk carries at least ``min_chunk_tests`` tests, so a stream's request of a few dozen jobs is one
  actor call.
- **Same reports wherever they run.** A report is a function of the job (CPU-time verdicts, the job's own
  limit); where a stopping job's tests are reordered by earlier failures, the order changes no verdict.
- **Lost nodes.** A chunk whose actor or node died goes to another node, at most ``max_retries`` times; after
  that its jobs are ``crash`` with ``infra_error`` set (the sandbox's failure, which stops a stage, never a
  program's verdict).
- **Lazy.** Ray is joined (or started, as :func:`~evolvecoder_datasets.distributed.init_ray` does) by the first
  job: a rerun whose stages are all stored starts nothing.
- **Counted.** :attr:`NodeRouter.counts` says how many jobs and tests each node judged, :attr:`NodeRouter.calls`
  how many actor calls carried them;
  :func:`evolvecoder_datasets.execution.sandbox.local_counts` how many this process sent to its own machine.

A forked copy of the process (a ``Dataset.map(num_proc=N)`` worker) cannot use the driver's Ray connection: its
jobs go to its machine's service.

Example:
    >>> from evolvecoder_datasets.distributed import DistributedConfig
    >>> from evolvecoder_datasets.distributed.nodes import execute_on_ray_nodes
    >>> from evolvecoder_datasets.execution import Sandbox
    >>> with execute_on_ray_nodes(DistributedConfig(num_cpus=2)) as router:  # doctest: +SKIP
    ...     with Sandbox(mode="fast") as sb:
    ...         sb.run("def f():\\n    return 1", ["assert f() == 1"]).statuses
    ...     sum(c["jobs"] for c in router.counts.values())
    ['pass']
    1
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any

from .config import DistributedConfig

__all__ = ["NodeRouter", "execute_on_ray_nodes"]


class _NodeExecutor:
    """The actor body on one node: a client of that node's execution service (started there on first use)."""

    def __init__(self) -> None:
        from evolvecoder_datasets.execution._client import Connections

        self._connections = Connections()
        self._warm: set = set()
        self._lock = threading.Lock()

    def run(self, settings: tuple, workers: int, jobs: list, sizes: list, keys: list) -> list:
        from evolvecoder_datasets.errors import SandboxError

        with self._lock:
            warm = settings in self._warm
        if not warm:
            reply = self._connections.request(("start", settings))
            if reply[0] != "ok":
                raise SandboxError(str(reply[2]))
            with self._lock:
                self._warm.add(settings)
        return self._connections.run(settings, workers, jobs, sizes, keys)

    def where(self) -> tuple[str, int]:
        from evolvecoder_datasets.execution._client import service_folder

        return service_folder(), os.getpid()


class NodeRouter:
    """Routes a sandbox's encoded batch to the nodes' services (see the module doc). Built by
    :func:`execute_on_ray_nodes`; callable as ``router(settings, workers, jobs, sizes, keys) -> reports``.

    Args:
        config (`DistributedConfig`): the cluster to join (or the local instance to start), on first use.
        chunks_per_cpu (`int`, defaults to 2): chunks a node holds at once, per CPU.
        min_chunk_tests (`int`, defaults to 256): tests a chunk carries at least (where the batch has them), so a
            small batch (a stream's request of a few dozen jobs) is one actor call, not one per job: an actor call
            costs the driver ~0.6 ms of CPU.
        max_retries (`int`, *optional*): resubmissions of a chunk whose node failed (defaults to
            ``config.max_retries``).

    Example:
        >>> NodeRouter(DistributedConfig(num_cpus=2)).counts
        {}
    """

    def __init__(self, config: DistributedConfig, *, chunks_per_cpu: int = 2, min_chunk_tests: int = 256,
                 max_retries: int | None = None) -> None:  # fmt: skip
        self.config = config
        self.chunks_per_cpu = max(1, int(chunks_per_cpu))
        self.min_chunk_tests = max(1, int(min_chunk_tests))
        self.max_retries = config.max_retries if max_retries is None else max_retries
        self.pid = os.getpid()  # a forked copy must not use this process's Ray connection
        self.counts: dict[str, dict[str, int]] = {}
        self.calls = 0  # actor calls made (one per chunk sent, retries included)
        self._ray: Any = None
        self._actors: dict[str, Any] = {}
        self._cpus: dict[str, int] = {}
        self._busy: dict[str, int] = {}  # chunks in flight per node, over every batch
        self._turn = 0  # where the next tie between nodes starts
        self._lock = threading.Lock()

    # -- the cluster ---------------------------------------------------------------------------------------
    def _join(self) -> None:
        with self._lock:
            if self._ray is not None:
                return
            from .cluster import init_ray

            ray = init_ray(self.config)
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            actor = ray.remote(_NodeExecutor)
            for node in ray.nodes():
                cpus = int(node.get("Resources", {}).get("CPU", 0))
                if not node.get("Alive") or cpus < 1:
                    continue
                node_id = node["NodeID"]
                self._actors[node_id] = actor.options(
                    num_cpus=0, max_concurrency=cpus * self.chunks_per_cpu + 1, max_restarts=-1,
                    scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
                ).remote()  # fmt: skip
                self._cpus[node_id] = cpus
                self._busy[node_id] = 0
                self.counts.setdefault(node_id, {"jobs": 0, "tests": 0})
            if not self._actors:
                from ..errors import DistributedError

                raise DistributedError("the Ray cluster has no live node with a CPU to run sandbox jobs on")
            self._ray = ray

    def capacity(self) -> int:
        """CPUs of the cluster's live nodes: programs that run at once over all of them (joins the cluster)."""
        self._join()
        return sum(self._cpus.values())

    def where(self) -> dict[str, tuple[str, int]]:
        """Per node id, the runtime folder of that node's service and the pid of its actor (starts the actors)."""
        self._join()
        return {node: tuple(self._ray.get(a.where.remote())) for node, a in self._actors.items()}

    # -- one batch -----------------------------------------------------------------------------------------
    def _chunks(self, sizes: list[int]) -> list[tuple[int, int]]:
        """Consecutive ranges of jobs, about four per node CPU slot, of at least ``min_chunk_tests`` and never more
        than 2,048 tests (one job at least)."""
        total = sum(sizes)
        slots = sum(self._cpus.values()) * self.chunks_per_cpu
        target = max(1, min(2048, max(self.min_chunk_tests, -(-total // max(1, 4 * slots)))))
        chunks, start, held = [], 0, 0
        for i, size in enumerate(sizes):
            held += size
            if held >= target:
                chunks.append((start, i + 1))
                start, held = i + 1, 0
        if start < len(sizes):
            chunks.append((start, len(sizes)))
        return chunks

    def __call__(self, settings: tuple, workers: int, jobs: list, sizes: list, keys: list) -> list:
        from ..execution._protocol import SETTINGS, crash_report

        self._join()
        ray = self._ray
        results: list = [None] * len(jobs)
        chunks = self._chunks(sizes)
        pending = list(range(len(chunks)))[::-1]
        attempts = [0] * len(chunks)
        slots = sum(self._cpus.values()) * self.chunks_per_cpu  # this batch's chunks in flight at most
        in_flight: dict[Any, tuple[int, str]] = {}
        isolation = settings[SETTINGS.index("isolation")] or "none"
        try:
            while pending or in_flight:
                while pending and len(in_flight) < slots:
                    # to the node with the most room over every batch in flight (a stream sends many at once);
                    # ties go round the nodes, so one-chunk batches one after the other spread over the cluster
                    with self._lock:
                        nodes = list(self._cpus)
                        self._turn = (self._turn + 1) % len(nodes)
                        node = max(nodes[self._turn:] + nodes[: self._turn],
                                   key=lambda n: self._cpus[n] * self.chunks_per_cpu - self._busy[n])  # fmt: skip
                        self._busy[node] += 1
                    c = pending.pop()
                    a, b = chunks[c]
                    try:
                        ref = self._actors[node].run.remote(settings, min(workers, self._cpus[node]), jobs[a:b],
                                                            sizes[a:b], keys[a:b])  # fmt: skip
                    except BaseException:
                        with self._lock:
                            self._busy[node] -= 1
                        raise
                    in_flight[ref] = (c, node)
                    with self._lock:
                        self.calls += 1
                ready, _ = ray.wait(list(in_flight), num_returns=1)
                c, node = in_flight.pop(ready[0])
                with self._lock:
                    self._busy[node] -= 1
                a, b = chunks[c]
                try:
                    blobs = ray.get(ready[0])
                except Exception as err:  # noqa: BLE001 - the node's actor or service failed: not the programs' doing
                    attempts[c] += 1
                    if attempts[c] <= self.max_retries:
                        pending.append(c)
                        continue
                    blobs = [crash_report(size, isolation, f"sandbox failure: {type(err).__name__}", str(err)[:500])
                             for size in sizes[a:b]]  # fmt: skip
                results[a:b] = blobs
                with self._lock:
                    self.counts[node]["jobs"] += b - a
                    self.counts[node]["tests"] += sum(sizes[a:b])
        finally:
            with self._lock:
                for _c, node in in_flight.values():
                    self._busy[node] -= 1
        return results

    def close(self) -> None:
        """Let go of the node actors (their services end on their own once idle)."""
        ray, actors = self._ray, list(self._actors.values())
        self._actors, self._ray = {}, None
        if ray is not None and ray.is_initialized():
            for handle in actors:
                with contextlib.suppress(Exception):
                    ray.kill(handle)


@contextlib.contextmanager
def execute_on_ray_nodes(config: DistributedConfig, **options: Any) -> Iterator[NodeRouter]:
    """Within the block, every sandbox job of this process runs on the execution services of the cluster's nodes
    (see the module doc); yields the :class:`NodeRouter`, whose ``counts`` say where the jobs went.

    Example:
        >>> with execute_on_ray_nodes(DistributedConfig(num_cpus=2)) as router:  # doctest: +SKIP
        ...     pass
    """
    from ..execution.sandbox import set_route

    router = NodeRouter(config, **options)
    previous = set_route(router)
    try:
        yield router
    finally:
        set_route(previous)
        router.close()
