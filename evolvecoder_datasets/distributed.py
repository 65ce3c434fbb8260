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

import atexit
import dataclasses
import json
import logging
import math
import os
import re
import secrets
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from . import schema
from ._deps import require
from .errors import ConfigError, DistributedError, SandboxCrashed, SchemaError
from .mutants import MUTATOR_VERSION, OPERATORS

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa
    from datasets import Dataset, Features

    from .stages.execute import ExecuteConfig

logger = logging.getLogger(__name__)

__all__ = [
    "ENGINES",
    "DistributedConfig",
    "EmbedConfig",
    "MutationConfig",
    "embed_distributed",
    "embed_rows",
    "execute_distributed",
    "init_ray",
    "map_shards",
    "score_mutants",
    "score_mutants_distributed",
]

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
        from .config import config_from_dict

        return config_from_dict(cls, data or {}, where="distributed")

    @property
    def is_local_instance(self) -> bool:
        """Whether :func:`init_ray` would start a private Ray instance rather than join a cluster."""
        return self.address in (None, "local")


# --------------------------------------------------------------------------------------------------- Ray setup
_LOCAL_TEMP_DIRS: list[str] = []
_OWN_SESSIONS: set[str] = set()  # GCS addresses of the local instances init_ray started (no autoscaler there)


def _import_ray(config: DistributedConfig) -> ModuleType:
    """Import Ray with the environment a private local instance needs set first."""
    if config.is_local_instance:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        if not (os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH")):
            # Ray >= 2.5x enables token authentication for new local instances and saves the token under
            # ~/.ray; a token in the environment is used as is and nothing is written to the home directory.
            os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
        if config.loopback:
            # Without this, Ray replaces 127.0.0.1 by the address that routes outside (services.py).
            os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    ray = require("ray", extra="ray", feature="engine='ray'")
    if config.is_local_instance and config.loopback:
        constants = getattr(getattr(ray, "_private", None), "ray_constants", None)
        if constants is not None and getattr(constants, "ENABLE_RAY_CLUSTER", False):
            constants.ENABLE_RAY_CLUSTER = False  # Ray was imported before the variable was set
    return ray


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


# ------------------------------------------------------------------------------------------------ shard tasks
def _task_cpus(default: int = 1) -> int:
    """CPUs the running Ray task reserved (``default`` outside Ray)."""
    ray = sys.modules.get("ray")  # a process that never imported Ray is not running a Ray task
    if ray is None or not ray.is_initialized():
        return default
    try:
        cpus = ray.get_runtime_context().get_assigned_resources().get("CPU")
    except (AssertionError, AttributeError, RuntimeError):  # the driver, or a Ray without the call
        return default
    return max(1, int(cpus)) if cpus else default


def _to_arrow(columns: Mapping[str, list]) -> pa.Table:
    """An Arrow table with ``datasets``' own type inference (so numpy vectors and nested lists match ``map``)."""
    from datasets import Dataset

    return Dataset.from_dict(dict(columns)).data.table


def _run_shard(job: tuple[Callable[..., dict], dict[str, Any]], table: pa.Table) -> pa.Table:
    """Body of one shard task: the stage function on the shard's rows; returns only added or changed columns.

    ``job`` is ``(fn, fn_kwargs)``, stored once in the object store and shared by every task.
    """
    fn, fn_kwargs = job
    batch = table.to_pydict()
    given = dict(batch)  # the lists handed to fn, to tell a column returned as is from a new one
    out = fn(batch, **fn_kwargs)
    if not isinstance(out, Mapping):
        raise SchemaError(f"{_qualname(fn)} returned {type(out).__name__}, expected a dict of columns")
    changed = {name: values for name, values in out.items() if name not in given or values is not given[name]}
    # A column handed back as is (or not returned at all) may still have been edited in place, which
    # ``Dataset.map`` keeps: compare it with the shard's original values, and send it back when they differ.
    for name, original in given.items():
        if name in changed:
            continue
        current = out[name] if name in out else batch.get(name, original)
        if current is not original or not _same(original, table.column(name).to_pylist()):
            changed[name] = current
    for name, values in changed.items():
        if len(values) != table.num_rows:
            raise SchemaError(
                f"{_qualname(fn)} returned {len(values)} values for column {name!r} on a shard of "
                f"{table.num_rows} rows; distributed stages must keep one output row per input row"
            )
    return _to_arrow(changed)


def _same(a: Any, b: Any) -> bool:
    """Whether two cell values are equal, NaN equal to NaN (a float column handed back as is stays unsent)."""
    try:
        if a is b or a == b:
            return True
    except (ValueError, TypeError):  # e.g. a numpy array put into a cell: no single truth value
        return False
    if isinstance(a, float) and isinstance(b, float):
        return math.isnan(a) and math.isnan(b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[key], b[key]) for key in a)
    return False


def _qualname(fn: Callable) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


@dataclass
class _ShardStore:
    """Finished shards of one job on the driver's disk: ``<results_dir>/<fingerprint>/shard-00012.arrow``."""

    folder: Path
    n_shards: int

    def path(self, index: int) -> Path:
        return self.folder / f"shard-{index:05d}-of-{self.n_shards:05d}.arrow"

    def load(self, index: int, n_rows: int) -> pa.Table | None:
        import pyarrow as pa

        path = self.path(index)
        if not path.exists():
            return None
        try:
            table = pa.ipc.open_file(pa.memory_map(str(path))).read_all()
        except (OSError, pa.ArrowInvalid) as err:
            logger.warning("ignoring unreadable shard %s (%s); it will be recomputed", path, err)
            return None
        return table if table.num_rows == n_rows else None

    def save(self, index: int, table: pa.Table) -> None:
        import pyarrow as pa

        path = self.path(index)
        partial = path.with_suffix(f".{os.getpid()}.partial")
        with pa.OSFile(str(partial), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        os.replace(partial, path)


def _fingerprint(
    ds: Dataset, fn: Callable, fn_kwargs: Mapping[str, Any], shard_size: int, columns: Sequence[str]
) -> str:
    from datasets.fingerprint import Hasher

    from .keys import semantic

    return Hasher.hash(
        {
            "data": ds._fingerprint,
            "fn": fn,
            "fn_kwargs": semantic(dict(fn_kwargs)),  # the keys of checkpoints and the request cache
            "shard_size": shard_size,
            "columns": list(columns),
            "version": VERSION,
        }
    )


def _concat(tables: list[pa.Table]) -> pa.Table:
    import pyarrow as pa

    try:
        return pa.concat_tables(tables, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as err:
        raise SchemaError(f"shards returned columns of incompatible types: {err}") from err


def _attach(ds: Dataset, new: pa.Table, features: Features | None) -> Dataset:
    """``ds`` with the columns of ``new`` added or replaced, in ``Dataset.map``'s column order."""
    from datasets import Dataset, concatenate_datasets

    added = Dataset(new)
    if features is not None:
        added = added.cast(features)
    if not added.column_names:
        return ds
    replaced = [name for name in added.column_names if name in ds.column_names]
    base = ds.remove_columns(replaced) if replaced else ds
    if base._indices is not None:
        base = base.flatten_indices()
    if not base.column_names:
        return added
    merged = concatenate_datasets([base, added], axis=1)
    order = list(ds.column_names) + [name for name in added.column_names if name not in ds.column_names]
    return merged.select_columns(order)


def map_shards(
    ds: Dataset,
    fn: Callable[..., dict[str, list]],
    *,
    fn_kwargs: Mapping[str, Any] | None = None,
    config: DistributedConfig | None = None,
    input_columns: Sequence[str] | None = None,
    features: Features | None = None,
    desc: str | None = None,
) -> Dataset:
    """Run a batched stage function over ``ds`` on the configured engine; returns ``ds`` with its new columns.

    The function has the ``Dataset.map(batched=True)`` shape: it takes a batch ``dict[str, list]`` and returns
    a dict of columns, one value per input row (columns it returns unchanged are not copied back; columns it
    edits in place count as changed, as with ``Dataset.map``). It must be a module-level function (Ray and ``datasets`` both pickle it by reference) and should take its settings as a
    frozen config in ``fn_kwargs`` rather than capture live objects.

    On Ray each shard of ``config.shard_size`` rows is one task reserving ``config.cpus_per_task`` CPUs; tasks
    are retried only after infrastructure failures (see the module docstring), results come back in row order,
    and with ``config.results_dir`` finished shards survive a crash of the driver. An empty ``ds`` runs nothing
    and comes back with the columns declared in ``features`` (none otherwise), on either engine.

    Args:
        ds (`datasets.Dataset`): the rows.
        fn (`Callable[..., dict[str, list]]`): the batched stage function.
        fn_kwargs (`Mapping[str, Any]`, *optional*): keyword arguments of ``fn`` (e.g. ``{"config": cfg}``).
        config (`DistributedConfig`, *optional*): engine settings; defaults to ``DistributedConfig()`` (Ray,
            private local instance).
        input_columns (`Sequence[str]`, *optional*): the columns ``fn`` reads; only they are shipped to the
            tasks. Defaults to every column.
        features (`datasets.Features`, *optional*): types of the columns ``fn`` adds (inferred otherwise).
        desc (`str`, *optional*): progress bar label.

    Returns:
        `datasets.Dataset`: ``ds`` plus the added or changed columns.

    Raises:
        ConfigError: ``input_columns`` is empty.
        MissingExtraError: ``engine="ray"`` and Ray is not installed.
        SchemaError: ``fn`` changed the number of rows, or shards disagree on a column's type.
        DistributedError: a task still failed after ``max_retries`` infrastructure retries, or the cluster is
            unreachable.

    Example:
        >>> from datasets import Dataset
        >>> from evolvecoder_datasets.distributed import DistributedConfig, map_shards
        >>> def count_tests(batch):
        ...     return {"n_tests": [len(t) for t in batch["tests"]]}
        >>> ds = Dataset.from_dict({"id": ["a", "b"], "tests": [["assert 1"], ["assert 1", "assert 2"]]})
        >>> list(map_shards(ds, count_tests, config=DistributedConfig(engine="local", progress=False))["n_tests"])
        [1, 2]
    """
    config = config or DistributedConfig()
    fn_kwargs = dict(fn_kwargs or {})
    columns = list(input_columns) if input_columns is not None else list(ds.column_names)
    if not columns and ds.column_names:
        # Shards of no columns have no rows in Arrow: the function could not tell how many values to return.
        raise ConfigError("map_shards: input_columns must name at least one column the function reads")
    schema.check_columns(ds.column_names, columns, stage=desc or getattr(fn, "__name__", "map_shards"))
    if len(ds) == 0:
        # Nothing to run (``Dataset.map`` returns an empty dataset as is); declared columns are still added.
        for name, feature in (features or {}).items():
            if name in ds.column_names:
                ds = ds.cast_column(name, feature)
            else:
                ds = ds.add_column(name, [], feature=feature)
        return ds
    if config.engine == "local":
        mapped = ds.map(fn, batched=True, batch_size=config.shard_size, fn_kwargs=fn_kwargs, desc=desc)
        for name, feature in (features or {}).items():
            mapped = mapped.cast_column(name, feature)
        return mapped
    new = _run_on_ray(ds, fn, fn_kwargs, columns, config, desc)
    return _attach(ds, new, features)


def _run_on_ray(
    ds: Dataset,
    fn: Callable,
    fn_kwargs: dict[str, Any],
    columns: list[str],
    config: DistributedConfig,
    desc: str | None,
) -> pa.Table:
    n_rows = len(ds)
    n_shards = math.ceil(n_rows / config.shard_size)
    bounds = [(i * config.shard_size, min(n_rows, (i + 1) * config.shard_size)) for i in range(n_shards)]
    store = None
    if config.results_dir is not None:
        fingerprint = _fingerprint(ds, fn, fn_kwargs, config.shard_size, columns)
        store = _ShardStore(Path(config.results_dir) / fingerprint, n_shards)
        store.folder.mkdir(parents=True, exist_ok=True)
        manifest = store.folder / "job.json"
        if not manifest.exists():
            manifest.write_text(json.dumps({"function": _qualname(fn), "rows": n_rows, "shards": n_shards,
                                            "shard_size": config.shard_size, "columns": columns}, indent=1))  # fmt: skip

    results: dict[int, pa.Table] = {}
    if store is not None:
        for index, (start, stop) in enumerate(bounds):
            table = store.load(index, stop - start)
            if table is not None:
                results[index] = table
        if results:
            logger.info("resuming: %d of %d shards already done in %s", len(results), n_shards, store.folder)

    todo = [index for index in range(n_shards) if index not in results]
    if not todo:  # everything stored: no cluster is started or joined
        return _concat([results[index] for index in range(n_shards)])
    ray = init_ray(config)
    _check_task_fits(ray, config)
    source = ds.select_columns(columns).with_format("arrow")
    task = ray.remote(_run_shard).options(
        num_cpus=config.cpus_per_task,
        max_retries=config.max_retries,
        retry_exceptions=[SandboxCrashed],
        name=f"ecd:{getattr(fn, '__name__', 'stage')}",
    )
    job_ref = ray.put((fn, fn_kwargs))
    slots = config.max_in_flight or max(
        1, 2 * int(ray.cluster_resources().get("CPU", 1) // config.cpus_per_task)
    )

    bar = None
    if config.progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=n_rows, initial=sum(t.num_rows for t in results.values()), unit="row",
                   desc=desc or getattr(fn, "__name__", "map_shards"))  # fmt: skip
    pending: dict[Any, int] = {}
    started = time.monotonic()
    try:
        queue = iter(todo)
        while True:
            while len(pending) < slots:
                index = next(queue, None)
                if index is None:
                    break
                start, stop = bounds[index]
                pending[task.remote(job_ref, source[start:stop])] = index
            if not pending:
                break
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                index = pending.pop(ref)
                table = _get(ray, ref, index, config)
                results[index] = table
                if store is not None:
                    store.save(index, table)
                if bar is not None:
                    bar.update(table.num_rows)
    except BaseException:
        _abandon(ray, list(pending))
        raise
    finally:
        if bar is not None:
            bar.close()
    logger.info("%s: %d shards in %.1f s", desc or _qualname(fn), len(todo), time.monotonic() - started)
    return _concat([results[index] for index in range(n_shards)])


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


def _abandon(ray: ModuleType, refs: list[Any]) -> None:
    """Cancel the tasks still running after a failure, and collect those that failed meanwhile (so Ray does not
    report their errors a second time as unhandled)."""
    for ref in refs:
        ray.cancel(ref, force=True)
    if refs:
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=2.0)
        for ref in ready:
            try:
                ray.get(ref)
            except ray.exceptions.RayError as err:  # already failing: the first error is the one raised
                logger.debug("abandoned shard also failed: %s", err)


def _get(ray: ModuleType, ref: Any, index: int, config: DistributedConfig) -> pa.Table:
    """A finished task's table; infrastructure failures that outlived the retries become DistributedError."""
    from ray import exceptions as rex

    try:
        return ray.get(ref)
    except rex.RayTaskError:
        raise  # the stage raised: an instance of its own exception type too (e.g. SchemaError); not retried
    except rex.RayError as err:
        raise DistributedError(
            f"shard {index} failed after {config.max_retries} retries on infrastructure failures: {err}"
        ) from err


# -------------------------------------------------------------------------------------------- execute stage
def _execute_rows(batch: dict[str, list], *, config: ExecuteConfig) -> dict[str, list]:
    """The execute stage inside a task: the sandbox gets as many fork servers as the task reserved CPUs."""
    from .stages.execute import execute

    if config.workers is None:
        config = dataclasses.replace(config, workers=_task_cpus())
    return execute(batch, config=config)


def execute_distributed(
    ds: Dataset,
    config: ExecuteConfig | None = None,
    *,
    distributed: DistributedConfig | None = None,
    engine: str | None = None,
    address: str | None = None,
    shard_size: int | None = None,
    results_dir: str | None = None,
) -> Dataset:
    """The execute stage (pass matrices) over a dataset on Ray or locally, with identical results.

    Reads ``solutions`` and ``tests`` (or ``inputs``/``outputs``) and writes ``pass_matrix`` (and ``statuses``
    when ``config.statuses``), exactly as :func:`evolvecoder_datasets.stages.execute.execute_dataset`. On Ray,
    each task starts one fork server per CPU it reserved (unless ``config.workers`` fixes the count) and keeps
    it for the next tasks that land on the same worker process.

    Args:
        ds (`datasets.Dataset`): problem rows with solutions.
        config (`ExecuteConfig`, *optional*): sandbox settings; defaults to ``ExecuteConfig()``.
        distributed (`DistributedConfig`, *optional*): engine settings; defaults to ``DistributedConfig()``
            (Ray, private local instance). The keyword arguments below override its fields.
        engine (`str`, *optional*): ``"ray"`` or ``"local"`` (delegates to ``execute_dataset``).
        address (`str`, *optional*): Ray address (``"auto"``, ``"ray://head:10001"``...).
        shard_size (`int`, *optional*): problems per task.
        results_dir (`str`, *optional*): folder of finished shards for resumable runs.

    Returns:
        `datasets.Dataset`: ``ds`` with ``pass_matrix`` (and ``statuses``).

    Raises:
        SchemaError: ``solutions`` or the tests are missing.
        MissingExtraError: Ray is not installed (``pip install 'evolvecoder-datasets[ray]'``).
        DistributedError: a task failed on infrastructure beyond its retries.

    Example:
        >>> from evolvecoder_datasets.stages.execute import ExecuteConfig
        >>> scored = execute_distributed(ds, ExecuteConfig(timeout_s=1.0), address="auto",
        ...                              shard_size=32, results_dir="runs/round1/execute")  # doctest: +SKIP
    """
    from .stages.execute import ExecuteConfig, execute_dataset

    config = config or ExecuteConfig()
    overrides = {"engine": engine, "address": address, "shard_size": shard_size, "results_dir": results_dir}
    distributed = dataclasses.replace(
        distributed or DistributedConfig(), **{k: v for k, v in overrides.items() if v is not None}
    )
    schema.check_columns(ds.column_names, [schema.SOLUTIONS], stage="execute")
    if schema.TESTS not in ds.column_names and schema.INPUTS not in ds.column_names:
        schema.check_columns(ds.column_names, [schema.TESTS], stage="execute")
    if distributed.engine == "local":
        return execute_dataset(ds, config, batch_size=distributed.shard_size)
    from .stages.execute import READS

    # The reference and any stored limit travel too: the task calibrates limits exactly as the local engine does.
    columns = [c for c in READS if c in ds.column_names]
    return map_shards(ds, _execute_rows, fn_kwargs={"config": config}, config=distributed, input_columns=columns,
                      desc="execute")  # fmt: skip


# ----------------------------------------------------------------------------------- mutant generation + scoring
@dataclass(frozen=True)
class MutationConfig:
    """Settings of mutant generation and scoring per problem.

    Args:
        reference_column (`str`, defaults to ``"reference"``): column with a reference solution per problem.
        tests_column (`str`, defaults to ``"tests"``): the suite being scored.
        reference_tests_column (`str`, *optional*): a trusted suite that sets equivalent mutants aside.
        max_mutants (`int`, *optional*, defaults to 32): mutants per problem (seeded sample); None keeps all.
        seed (`int`, defaults to 0): seed of that sample.
        operators (`tuple[str, ...]`): mutation operators (see :data:`evolvecoder_datasets.mutants.OPERATORS`).
        execute (`ExecuteConfig`, *optional*): sandbox settings; defaults to ``ExecuteConfig(mode="fast")``.
        version (`str`): enters the fingerprint of cached and ``results_dir`` results (the stage function is
            hashed by name only); bumped whenever mutant generation or scoring changes, so old scores are
            recomputed rather than reused.

    Raises:
        ConfigError: an unknown operator or a negative ``max_mutants``.

    Example:
        >>> MutationConfig(reference_column="canonical_solution", max_mutants=16).tests_column
        'tests'
    """

    reference_column: str = "reference"
    tests_column: str = schema.TESTS
    reference_tests_column: str | None = None
    max_mutants: int | None = 32
    seed: int = 0
    operators: tuple[str, ...] = OPERATORS
    execute: ExecuteConfig | None = None
    version: str = MUTATOR_VERSION  # the mutator decides what is scored

    def __post_init__(self) -> None:
        unknown = set(self.operators) - set(OPERATORS)
        if unknown:
            raise ConfigError(f"unknown mutation operators {sorted(unknown)}; choose from {list(OPERATORS)}")
        if self.max_mutants is not None and (isinstance(self.max_mutants, bool) or self.max_mutants < 0):
            raise ConfigError(f"MutationConfig.max_mutants must be >= 0 or None, got {self.max_mutants!r}")


def score_mutants(batch: dict[str, list], *, config: MutationConfig) -> dict[str, list]:
    """Batched stage: generate each problem's mutants and score its test suite against them.

    Reads ``config.reference_column`` and ``config.tests_column`` (and ``config.reference_tests_column``);
    writes ``mutation_score`` (float, NaN without a usable reference or mutants), ``mutants_killed`` and
    ``mutants_considered`` (ints). A reference that does not parse scores NaN instead of stopping the run.

    Args:
        batch (`dict[str, list]`): problem rows.
        config (`MutationConfig`): columns, sample size and sandbox settings.

    Raises:
        SchemaError: a configured column is missing, a suite cell is not a list of strings (a bare string would
            be scored as one test per character), or a reference is not a string.

    Example:
        >>> from evolvecoder_datasets.distributed import MutationConfig, score_mutants
        >>> out = score_mutants({"reference": ["def is_adult(age):\\n    return age >= 18\\n"],
        ...                      "tests": [["assert is_adult(18)", "assert not is_adult(17)"]]},
        ...                     config=MutationConfig())
        >>> out["mutation_score"]
        [1.0]
    """
    from .execution import shared_sandbox
    from .mutants import mutation_score
    from .stages.checks import check_list_cells
    from .stages.execute import ExecuteConfig

    needed = [config.reference_column, config.tests_column]
    if config.reference_tests_column:
        needed.append(config.reference_tests_column)
    schema.check_columns(batch, needed, stage="score_mutants")
    # A plain-string suite (e.g. HumanEval's `test` block) would be scored as one test per character.
    for column in needed[1:]:
        check_list_cells(batch, column, stage="score_mutants")
    for row, reference in enumerate(batch[config.reference_column]):
        if reference is not None and not isinstance(reference, str):
            raise SchemaError(
                f"stage 'score_mutants': column {config.reference_column!r} must hold one program (a string) per "
                f"row, got {type(reference).__name__} in row {row}"
            )
    execute_config = config.execute or ExecuteConfig(mode="fast")
    if execute_config.workers is None:
        execute_config = dataclasses.replace(
            execute_config, workers=_task_cpus(default=len(os.sched_getaffinity(0)))
        )
    sandbox = shared_sandbox(**execute_config.sandbox_settings())
    extra = (
        batch[config.reference_tests_column]
        if config.reference_tests_column
        else [None] * len(batch[needed[0]])
    )
    scores, killed, considered = [], [], []
    for reference, tests, reference_tests in zip(
        batch[config.reference_column], batch[config.tests_column], extra
    ):
        try:
            result = mutation_score(
                reference or "",
                list(tests or ()),
                reference_tests=list(reference_tests or ()),
                sandbox=sandbox,
                max_mutants=config.max_mutants,
                seed=config.seed,
                operators=config.operators,
            )
        except SchemaError:
            scores.append(float("nan"))
            killed.append(0)
            considered.append(0)
            continue
        scores.append(result.score)
        killed.append(result.killed)
        considered.append(result.considered)
    return {"mutation_score": scores, "mutants_killed": killed, "mutants_considered": considered}


def score_mutants_distributed(
    ds: Dataset, config: MutationConfig | None = None, *, distributed: DistributedConfig | None = None
) -> Dataset:
    """:func:`score_mutants` over a dataset, on Ray (one sandbox per task) or locally.

    Args:
        ds (`datasets.Dataset`): rows with a reference solution and tests.
        config (`MutationConfig`, *optional*): defaults to ``MutationConfig()``.
        distributed (`DistributedConfig`, *optional*): engine settings; defaults to Ray on a local instance.

    Returns:
        `datasets.Dataset`: ``ds`` with ``mutation_score``, ``mutants_killed`` and ``mutants_considered``.

    Raises:
        SchemaError: a configured column is missing.
        MissingExtraError: Ray is not installed.
        DistributedError: a task failed on infrastructure beyond its retries.

    Example:
        >>> scored = score_mutants_distributed(ds, MutationConfig(reference_column="canonical_solution"),
        ...                                    distributed=DistributedConfig(address="auto"))  # doctest: +SKIP
        >>> sum(scored["mutation_score"]) / len(scored)  # doctest: +SKIP
    """
    config = config or MutationConfig()
    columns = [config.reference_column, config.tests_column] + (
        [config.reference_tests_column] if config.reference_tests_column else []
    )
    return map_shards(ds, score_mutants, fn_kwargs={"config": config}, config=distributed, input_columns=columns,
                      desc="mutants")  # fmt: skip


# ------------------------------------------------------------------------------------------ dedup embeddings
@dataclass(frozen=True)
class EmbedConfig:
    """Settings of the embedding stage that precedes semantic deduplication.

    Args:
        column (`str`, defaults to ``"question"``): text to embed.
        output_column (`str`, defaults to ``"embedding"``): where the unit-norm float32 vectors go.
        model (`str`, *optional*): model name or local folder; None is the offline all-MiniLM-L6-v2. It must
            exist on every worker (a path on shared storage, or a name the workers can load).
        batch_size (`int`, defaults to 64): encoder batch size.
        device (`str`, *optional*): torch device; CPU workers use ``"cpu"``.

    Example:
        >>> EmbedConfig(model="/shared/models/all-mpnet-base-v2").output_column
        'embedding'
    """

    column: str = schema.QUESTION
    output_column: str = "embedding"
    model: str | None = None
    batch_size: int = 64
    device: str | None = "cpu"


def embed_rows(batch: dict[str, list], *, config: EmbedConfig) -> dict[str, list]:
    """Batched stage: unit-norm embeddings of ``config.column``, one torch thread per reserved CPU.

    Reads ``config.column``; writes ``config.output_column`` (a float32 vector per row), which
    :func:`evolvecoder_datasets.stages.dedup.deduplicate` accepts as ``embedding_column``.

    Args:
        batch (`dict[str, list]`): rows.
        config (`EmbedConfig`): column, model and batch size.

    Raises:
        SchemaError: the text column is missing.
        MissingExtraError: sentence-transformers or the offline model is not installed.

    Example:
        >>> out = embed_rows({"question": ["Two sum", "Reverse a list"]}, config=EmbedConfig())  # doctest: +SKIP
        >>> len(out["embedding"][0])  # doctest: +SKIP
        384
    """
    from .stages.dedup import embed_texts

    schema.check_columns(batch, [config.column], stage="embed")
    cpus = _task_cpus(default=0)
    if cpus:
        torch = require("torch", extra="embed", feature="embeddings")
        torch.set_num_threads(cpus)
    vectors = embed_texts([t or "" for t in batch[config.column]], model=config.model, batch_size=config.batch_size,
                          device=config.device)  # fmt: skip
    return {config.output_column: list(vectors)}


def embed_distributed(
    ds: Dataset, config: EmbedConfig | None = None, *, distributed: DistributedConfig | None = None
) -> Dataset:
    """:func:`embed_rows` over a dataset on CPU workers (each loads the model once), or locally.

    Args:
        ds (`datasets.Dataset`): rows with the text column.
        config (`EmbedConfig`, *optional*): defaults to ``EmbedConfig()``.
        distributed (`DistributedConfig`, *optional*): engine settings; defaults to Ray on a local instance.

    Returns:
        `datasets.Dataset`: ``ds`` with the embedding column.

    Raises:
        SchemaError: the text column is missing.
        MissingExtraError: Ray, sentence-transformers or the offline model is not installed.
        DistributedError: a task failed on infrastructure beyond its retries.

    Example:
        >>> from evolvecoder_datasets.stages.dedup import deduplicate
        >>> embedded = embed_distributed(seeds, EmbedConfig(), distributed=DistributedConfig(address="auto",
        ...                              cpus_per_task=4, shard_size=2048))  # doctest: +SKIP
        >>> marked = deduplicate(embedded, embedding_column="embedding", threshold=0.9)  # doctest: +SKIP
    """
    from datasets import Features, List, Value

    config = config or EmbedConfig()
    features = Features({config.output_column: List(Value("float32"))})
    return map_shards(ds, embed_rows, fn_kwargs={"config": config}, config=distributed, input_columns=[config.column],
                      features=features, desc="embed")  # fmt: skip
