"""Stage checkpoints of a recipe run: each stage's output saved with the key of everything that produced it.

A stage's key chains its configuration's digest onto its input's key (:func:`chain`), so a changed setting
recomputes that stage and every later one, and an unchanged prefix of the run is reloaded from disk.

A checkpoint is stored once. A stage's ``Dataset.map`` writes its result as a ``cache-*.arrow`` file beside its
input's data files, that is inside the previous stage's checkpoint folder; once the stage's own copy is saved,
those cache files are removed, so a folder holds its saved dataset only (before: every folder also held the next
stage's map output, nearly doubling the run's disk use).

Example:
    >>> import tempfile
    >>> from datasets import Dataset
    >>> from evolvecoder_datasets.recipe.checkpoints import Checkpoints, chain
    >>> store = Checkpoints(tempfile.mkdtemp())
    >>> key = chain("seeds", 3)
    >>> ds = store.stage("00_seeds", key, lambda: Dataset.from_dict({"id": ["A_1"]}))
    >>> list(store.stage("00_seeds", key, lambda: 1 / 0)["id"])   # reloaded, not computed
    ['A_1']
"""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import schema
from ..keys import chain
from .progress import describe_stage, step, stepping

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["Checkpoints", "chain", "evolve_failures", "refine_failures"]

logger = logging.getLogger(__name__)


class Checkpoints:
    """Stage outputs saved under ``<output_dir>/stages/<name>`` with the key that produced them.

    Args:
        root (`str`): the run folder.
    """

    def __init__(self, root: str) -> None:
        self.root = Path(root) / "stages"
        self.root.mkdir(parents=True, exist_ok=True)

    def stage(self, name: str, key: str, compute: Callable[[], Dataset | tuple[Dataset, dict[str, Any]]],
              failed: Callable[[Dataset], list[str]] | None = None) -> Dataset:
        """The stage's saved output when its key matches and no request of it failed, else ``compute()`` saved.

        ``compute`` returns the stage's dataset, or the dataset and a JSON-able summary kept beside it
        (:meth:`info`). ``failed`` lists the problems whose request failed and was recorded
        (``on_llm_error="record"``): such a stage is computed again by the next run, which replays the answered
        requests from the request cache and sends only the failed ones, so a passing outage does not freeze the
        drops into the checkpoint.

        Args:
            name (`str`): the stage's folder name.
            key (`str`): the key of everything the stage depends on.
            compute (`Callable`): computes the stage.
            failed (`Callable[[Dataset], list[str]]`, *optional*): the ids whose requests failed.

        Example:
            >>> import tempfile
            >>> from datasets import Dataset
            >>> list(Checkpoints(tempfile.mkdtemp()).stage("s", "k", lambda: Dataset.from_dict({"x": [1]}))["x"])
            [1]
        """
        from datasets import load_from_disk

        folder = self.root / name
        saved = self.record(name)
        if saved.get("key") == key and not saved.get("failed"):
            logger.info("reusing stage %s (%d rows) saved by an earlier run in %s", name, saved.get("rows", 0), folder)
            step(f"{describe_stage(name)}: saved by an earlier run, reused")
            return load_from_disk(str(folder))
        if saved.get("key") == key:
            logger.info("stage %s: asking again for %d failed request(s)", name, len(saved["failed"]))
        before = self._map_caches()
        with stepping(describe_stage(name)):
            out = compute()
        ds, info = out if isinstance(out, tuple) else (out, None)
        partial = self.root / f".{name}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        ds.save_to_disk(str(partial))
        record = {"key": key, "stage": name, "rows": len(ds), "failed": failed(ds) if failed else []}
        if info is not None:
            record["info"] = info
        (partial / "checkpoint.json").write_text(json.dumps(record))
        shutil.rmtree(folder, ignore_errors=True)
        partial.rename(folder)
        for path in self._map_caches() - before:  # the stage's map output, now saved in its own folder
            path.unlink(missing_ok=True)
        return load_from_disk(str(folder))

    def _map_caches(self) -> set[Path]:
        """The ``Dataset.map`` cache files ``datasets`` wrote into checkpoint folders."""
        return set(self.root.glob("*/cache-*.arrow"))

    def record(self, name: str) -> dict[str, Any]:
        """The saved ``checkpoint.json`` of a stage (empty when the stage was never saved)."""
        meta = self.root / name / "checkpoint.json"
        return json.loads(meta.read_text()) if meta.is_file() else {}

    def failures(self, name: str) -> list[str]:
        """The failed requests a stage checkpoint recorded (part of the next stage's key: when they are asked
        again and answered, every later stage is computed again)."""
        return self.record(name).get("failed", [])

    def info(self, name: str) -> dict[str, Any] | None:
        """The summary a stage's ``compute`` returned beside its dataset (``None`` when it returned none)."""
        return self.record(name).get("info")


def refine_failures(ds: Dataset) -> list[str]:
    """Ids of the problems whose refine request failed and was recorded."""
    return sorted(str(i) for i, d in zip(ds[schema.ID], ds[schema.DROP_REASON]) if d == "refine_llm_error")


def evolve_failures(round: int) -> Callable[[Dataset], list[str]]:
    """A ``failed`` callable for round ``round``: ids whose evolve request of that round failed."""
    def failed(ds: Dataset) -> list[str]:
        return sorted(str(i) for i, log in zip(ds[schema.ID], ds[schema.EVOLVE_LOG])
                      if any(e["round"] == round and (e["error"] or "").startswith("llm:") for e in log or ()))
    return failed
