"""Joining or starting a Ray cluster (a private loopback instance by default) and checking a task fits on it.

Example:
    >>> from evolvecoder_datasets.distributed.cluster import init_ray
    >>> from evolvecoder_datasets.distributed.config import DistributedConfig
    >>> ray = init_ray(DistributedConfig(num_cpus=2))  # doctest: +SKIP
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import secrets
import shutil
import sys
import tempfile
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from .._deps import require
from ..errors import ConfigError, DistributedError
from .config import DistributedConfig

__all__ = ["init_ray"]

logger = logging.getLogger(__name__)

_LOCAL_TEMP_DIRS: list[str] = []
_OWN_SESSIONS: set[str] = set()  # GCS addresses of the local instances init_ray started (no autoscaler there)

_SINGLE_NODE = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def _import_ray(config: DistributedConfig) -> ModuleType:
    """Import Ray with the environment a private local instance needs set first."""
    if config.is_local_instance:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        if not (os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH")):
            # Ray >= 2.5x enables token authentication for new local instances and saves the token under
            # ~/.ray; a token in the environment is used as is and nothing is written to the home directory.
            os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
    return require("ray", extra="ray", feature="engine='ray'")


@contextlib.contextmanager
def _loopback_only(ray: ModuleType) -> Iterator[None]:
    """Keep Ray on 127.0.0.1 while a private instance starts, and give the process its setting back afterwards.

    Without the switch, Ray replaces 127.0.0.1 by the address that routes outside (``services.py``). The daemons
    ``ray.init`` starts inherit it; once they run, the driver asks its own node for its address, so the switch is
    undone: left set, it would make every ``ray start --address`` this process later spawns refuse to join
    ("multi-node clusters are not supported"), and a later ``ray.init(address=...)`` report 127.0.0.1 to a real
    cluster.
    """
    constants = getattr(getattr(ray, "_private", None), "ray_constants", None)
    saved_env, saved_constant = os.environ.get(_SINGLE_NODE), getattr(constants, "ENABLE_RAY_CLUSTER", None)
    os.environ[_SINGLE_NODE] = "0"
    if saved_constant is not None:
        constants.ENABLE_RAY_CLUSTER = False  # read once, when Ray was imported
    try:
        yield
    finally:
        if saved_env is None:
            os.environ.pop(_SINGLE_NODE, None)
        else:
            os.environ[_SINGLE_NODE] = saved_env
        if saved_constant is not None:
            constants.ENABLE_RAY_CLUSTER = saved_constant


# Ray puts sockets at <temp_dir>/session_<date>_<time>_<usec>_<pid>/sockets/plasma_store, at most 64 characters
# after temp_dir, and a Unix socket path holds 107 bytes.
_MAX_TEMP_DIR = 107 - 64


def _short_temp_root() -> str | None:
    """The system temp folder, or ``/tmp`` when the former is too long for Ray's socket paths (a long ``TMPDIR``
    on a batch scheduler, macOS's ``/var/folders/...``)."""
    root = tempfile.gettempdir()
    if len(os.path.abspath(root)) + len("/ecd-ray-xxxxxxxx") <= _MAX_TEMP_DIR:
        return None
    if os.path.isdir("/tmp") and os.access("/tmp", os.W_OK | os.X_OK):
        return "/tmp"
    return None  # nothing shorter: Ray will say why it cannot start


def _shutdown_local(ray: ModuleType, temp_dir: str) -> None:
    try:
        ray.shutdown()
    finally:
        shutil.rmtree(temp_dir, ignore_errors=True)


def init_ray(config: DistributedConfig | None = None) -> ModuleType:
    """Connect to the cluster ``config`` names (or start a private local instance) once per process.

    When Ray is already initialised (by the user, or by an earlier stage), the existing connection is used as
    is. A private local instance listens on loopback only, keeps its session files in ``config.temp_dir`` (or a
    temp folder removed at exit), runs no dashboard, sends no usage statistics and writes nothing under the
    home directory.

    Args:
        config (`DistributedConfig`, *optional*): defaults to ``DistributedConfig()`` (a local instance).

    Returns:
        `ModuleType`: the ``ray`` module, initialised.

    Raises:
        MissingExtraError: Ray is not installed (``pip install 'evolvecoder-datasets[ray]'``).
        DistributedError: the cluster cannot be reached.
        ConfigError: ``config.temp_dir`` is too long for Ray's socket paths.

    Example:
        >>> ray = init_ray(DistributedConfig(num_cpus=2))  # doctest: +SKIP
        >>> ray.cluster_resources()["CPU"]  # doctest: +SKIP
        2.0
    """
    config = config or DistributedConfig()
    ray = sys.modules.get("ray")
    if ray is not None and getattr(ray, "is_initialized", None) is not None and ray.is_initialized():
        # Joined as is: setting a fresh auth token or loopback-only constants now would not change this
        # session, but would break the next ``ray.init`` the user makes in this process.
        return ray
    ray = _import_ray(config)
    if ray.is_initialized():
        return ray
    common: dict[str, Any] = {
        "namespace": config.namespace,
        "runtime_env": config.runtime_env,
        "log_to_driver": not config.quiet,
        "logging_level": logging.WARNING if config.quiet else logging.INFO,
    }
    try:
        if config.is_local_instance:
            temp_dir = config.temp_dir
            if temp_dir is None:
                temp_dir = tempfile.mkdtemp(prefix="ecd-ray-", dir=_short_temp_root())
                _LOCAL_TEMP_DIRS.append(temp_dir)
                atexit.register(_shutdown_local, ray, temp_dir)
            elif len(os.path.abspath(temp_dir)) > _MAX_TEMP_DIR:
                raise ConfigError(
                    f"DistributedConfig.temp_dir {os.path.abspath(temp_dir)!r} is {len(os.path.abspath(temp_dir))} "
                    f"characters; Ray's socket files under it need it at most {_MAX_TEMP_DIR} (AF_UNIX paths are "
                    "limited to 107 bytes): pick a shorter folder, or leave temp_dir unset"
                )
            with _loopback_only(ray) if config.loopback else contextlib.nullcontext():
                ray.init(
                    num_cpus=config.num_cpus,
                    include_dashboard=False,
                    object_store_memory=(config.object_store_memory_mb or 0) * 2**20 or None,
                    _temp_dir=os.path.abspath(temp_dir),
                    _node_ip_address="127.0.0.1" if config.loopback else None,
                    **common,
                )
            _OWN_SESSIONS.add(_session_address(ray))
        else:
            ray.init(address=config.address, **common)
    except ConnectionError as err:
        raise DistributedError(f"cannot reach the Ray cluster at {config.address!r}: {err}") from err
    return ray


def _session_address(ray: ModuleType) -> str | None:
    try:
        return ray.get_runtime_context().gcs_address
    except (AttributeError, RuntimeError):  # a Ray without the call
        return None


def _check_task_fits(ray: ModuleType, config: DistributedConfig) -> None:
    """Refuse a ``cpus_per_task`` no node of a local instance can give: Ray would wait for it forever, silently.

    On a session this module did not start (a cluster, or the user's own ``ray.init``) it only warns: an
    autoscaler may still add a node that big."""
    cpus = [node.get("Resources", {}).get("CPU", 0) for node in ray.nodes() if node.get("Alive", True)]
    if cpus and max(cpus) >= config.cpus_per_task:
        return
    largest = int(max(cpus, default=0))
    if _session_address(ray) in _OWN_SESSIONS - {None}:
        raise ConfigError(
            f"DistributedConfig.cpus_per_task={config.cpus_per_task} but the local Ray instance has "
            f"{largest} CPUs, so no task could ever start; lower cpus_per_task or raise num_cpus"
        )
    logger.warning(
        "no node of the cluster has %d CPUs (the largest has %d): tasks wait until such a node joins",
        config.cpus_per_task,
        largest,
    )
