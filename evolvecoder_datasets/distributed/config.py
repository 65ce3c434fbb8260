"""Where and how a stage runs: the ``distributed:`` section of a recipe, as a frozen config.

Example:
    >>> from evolvecoder_datasets.distributed.config import DistributedConfig
    >>> DistributedConfig(engine="local").shard_size
    64
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError

__all__ = ["ENGINES", "VERSION", "DistributedConfig"]

ENGINES = ("local", "ray")
VERSION = "1"  # enters every shard fingerprint; bump when the stored shard layout changes

_ADDRESS = re.compile(r"^(local|auto|ray://\S+|[\w.\-\[\]:]+:\d+)$")


# ------------------------------------------------------------------------------------------------ configuration
@dataclass(frozen=True)
class DistributedConfig:
    """Where and how a stage runs: on this machine or as coarse tasks on a Ray cluster.

    The fields map one to one to a ``distributed:`` section of a recipe YAML (see :meth:`from_dict`).

    Args:
        engine (`str`, defaults to ``"ray"``): ``"ray"`` or ``"local"`` (plain ``Dataset.map``, same results).
        address (`str`, *optional*): the cluster. ``None`` or ``"local"`` starts a private local instance (kept
            for the rest of the process); ``"auto"`` joins the cluster this node belongs to (``ray start``);
            ``"ray://head:10001"`` connects through Ray Client; ``"head:6379"`` joins a GCS address. Ignored
            when Ray is already initialised in this process.
        num_cpus (`int`, *optional*): CPUs of a local instance (defaults to all cores).
        cpus_per_task (`int`, defaults to 1): CPUs one shard task reserves; the execute stage starts that many fork
            servers in the task.
        shard_size (`int`, defaults to 64): rows (problems) per task. Larger shards amortise scheduling; smaller
            ones balance load and lose less work to a failure.
        max_retries (`int`, defaults to 3): resubmissions of a task after an infrastructure failure.
        max_in_flight (`int`, *optional*): tasks submitted at once (the rest wait on the driver, so the object
            store never holds the whole dataset). Defaults to twice the cluster's task slots.
        results_dir (`str`, *optional*): folder for finished shards, making reruns resume; ``None`` keeps
            results in memory only.
        temp_dir (`str`, *optional*): session folder of a local instance (sockets, logs, spilled objects), at
            most 43 characters as an absolute path (Ray's socket paths under it must fit in 107 bytes).
            Defaults to a fresh folder under the system temp dir (``/tmp`` when that one's path is too long),
            removed at exit.
        loopback (`bool`, defaults to True): a local instance registers and listens on 127.0.0.1 only.
        object_store_memory_mb (`int`, *optional*): object store size of a local instance.
        runtime_env (`dict`, *optional*): Ray runtime environment for remote clusters, e.g.
            ``{"pip": ["evolvecoder-datasets"]}`` when the workers lack the package.
        namespace (`str`, *optional*): Ray namespace.
        progress (`bool`, defaults to True): show a progress bar over rows (Ray; locally ``Dataset.map`` shows its own).
        quiet (`bool`, defaults to True): do not stream worker logs to the driver.

    Raises:
        ConfigError: an unknown engine, a malformed address, or a count out of range.

    Example:
        >>> from evolvecoder_datasets.distributed import DistributedConfig
        >>> DistributedConfig(address="auto", cpus_per_task=4, shard_size=128).engine
        'ray'
        >>> DistributedConfig.from_dict({"engine": "local"}).shard_size
        64
    """

    engine: str = "ray"
    address: str | None = None
    num_cpus: int | None = None
    cpus_per_task: int = 1
    shard_size: int = 64
    max_retries: int = 3
    max_in_flight: int | None = None
    results_dir: str | None = None
    temp_dir: str | None = None
    loopback: bool = True
    object_store_memory_mb: int | None = None
    runtime_env: dict[str, Any] | None = None
    namespace: str | None = None
    progress: bool = True
    quiet: bool = True

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ConfigError(f"DistributedConfig.engine must be one of {ENGINES}, got {self.engine!r}")
        if self.address is not None and not _ADDRESS.match(self.address):
            raise ConfigError(
                f"DistributedConfig.address must be 'local', 'auto', 'ray://host:port' or 'host:port', "
                f"got {self.address!r}"
            )
        for name, minimum in (("cpus_per_task", 1), ("shard_size", 1), ("max_retries", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ConfigError(f"DistributedConfig.{name} must be an integer >= {minimum}, got {value!r}")
        for name in ("num_cpus", "max_in_flight", "object_store_memory_mb"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ConfigError(
                    f"DistributedConfig.{name} must be a positive integer or None, got {value!r}"
                )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> DistributedConfig:
        """Build from a parsed YAML mapping (the recipe's ``distributed:`` section), rejecting unknown keys.

        Args:
            data (`Mapping[str, Any]` or `None`): the section; ``None`` gives the defaults.

        Raises:
            ConfigError: an unknown key or a value of the wrong type.

        Example:
            >>> import yaml
            >>> section = yaml.safe_load("engine: ray\\naddress: ray://head:10001\\ncpus_per_task: 4")
            >>> DistributedConfig.from_dict(section).address
            'ray://head:10001'
        """
        from ..config import config_from_dict

        return config_from_dict(cls, data or {}, where="distributed")

    @property
    def is_local_instance(self) -> bool:
        """Whether :func:`init_ray` would start a private Ray instance rather than join a cluster."""
        return self.address in (None, "local")
