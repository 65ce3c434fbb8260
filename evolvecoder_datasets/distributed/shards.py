"""The shard scheduler: a batched stage function over contiguous shards as coarse Ray tasks, stored per shard.

Example:
    >>> from datasets import Dataset
    >>> from evolvecoder_datasets.distributed import DistributedConfig
    >>> from evolvecoder_datasets.distributed.shards import map_shards
    >>> def double(batch):
    ...     return {"y": [2 * x for x in batch["x"]]}
    >>> list(map_shards(Dataset.from_dict({"x": [1, 2]}), double, config=DistributedConfig(engine="local"))["y"])
    [2, 4]
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .. import schema
from ..errors import ConfigError, DistributedError, SandboxCrashed, SchemaError
from .cluster import _check_task_fits, init_ray
from .config import VERSION, DistributedConfig

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa
    from datasets import Dataset, Features

__all__ = ["map_shards"]

logger = logging.getLogger(__name__)


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

    from ..keys import semantic

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
