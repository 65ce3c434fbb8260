"""The recipe on a private local Ray instance publishes the same rounds as on this machine, byte for byte.

Two things published are measurements, not computations, and differ between two runs on any engine:
- the ``fidelity`` block of the statistics grades the tests against an oracle whose inputs are those on which the
  reference ends within a CPU cut (``FidelityConfig.cpu_s``), so an input near the cut can be in one run's oracle and
  not in the next one's (the oracle is built on the driver in both runs); it is compared in shape;
- the ``time_limit_s`` column is the reference's measured CPU time times a factor, on a ladder of 12% steps, raised
  each round to cover what the reference needed on the new tests: a test near a step (HumanEval_55's recursive
  ``fib`` on a searched input took 0.08-0.09 s) lands one step apart in two runs (0.8 vs 1.0, seen in CI). It is
  compared as a measurement: null in the same rows, and within two steps of each other.
Every other column of every data file and every other statistic is compared exactly; where the files' bytes differ,
the tables are read back and compared column by column, so a failure names the column. The round has the search on:
on Ray it runs as shard tasks (the second pass of ``Executor.evolve``), here in the round's one pass.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from evolvecoder_datasets.distributed import DistributedConfig
from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
from evolvecoder_datasets.recipe import run_recipe
from evolvecoder_datasets.search.writer import SearchConfig
from evolvecoder_datasets.stages.evolve import EvolveConfig
from evolvecoder_datasets.stages.support.resources import close_backends

from ..scripted_llm import ScriptedResponder
from .test_recipe_e2e import _config

ray = pytest.importorskip("ray")


def _published_files(store: Path) -> dict[str, dict[str, bytes]]:
    """Revision -> path -> bytes, for the data files and statistics of every branch of a local store."""
    def git(*args: str) -> bytes:
        return subprocess.run(["git", "-C", str(store), *args], capture_output=True, check=True).stdout

    branches = git("for-each-ref", "--format=%(refname:short)", "refs/heads").decode().split()
    out: dict[str, dict[str, bytes]] = {}
    for branch in branches:
        paths = git("ls-tree", "-r", "--name-only", branch).decode().split()
        out[branch] = {path: git("show", f"{branch}:{path}") for path in paths
                       if path.endswith(".parquet") or path == "stats.json"}
    return out


# The e2e test's round with the search on: on Ray the search runs as shard tasks (``Executor.evolve``).
SEARCHING = EvolveConfig(num_tests=3, test_mode="asserts", search=SearchConfig(budget=150, max_tests=2))
_LIMIT_STEPS = 2 ** (2 / 6)  # two steps of the limit ladder (``limits.limit_ladder``)


def assert_same_published(ours: dict[str, dict[str, bytes]], theirs: dict[str, dict[str, bytes]], where: str) -> None:
    """Every revision and file of ``ours`` equals ``theirs``: statistics but their fidelity block exactly, data files
    exactly but their ``time_limit_s`` column, which must be null in the same rows and within two ladder steps."""
    assert set(ours) == set(theirs), where
    for revision, files in ours.items():
        assert set(files) == set(theirs[revision]), revision
        assert any(path.endswith(".parquet") for path in files), revision
        for path, data in files.items():
            other = theirs[revision][path]
            if path == "stats.json":
                assert _without_fidelity(other) == _without_fidelity(data), f"{revision}:{path} differs {where}"
            elif other != data:
                _assert_same_table(data, other, f"{revision}:{path} differs {where}")


def _assert_same_table(data: bytes, other: bytes, message: str) -> None:
    """Two parquet files hold the same rows: every column equal but the measured ``time_limit_s``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ours, theirs = pq.read_table(pa.BufferReader(data)), pq.read_table(pa.BufferReader(other))
    assert ours.schema == theirs.schema, message
    for name in ours.column_names:
        mine, yours = ours.column(name).to_pylist(), theirs.column(name).to_pylist()
        if name != "time_limit_s":
            assert mine == yours, f"{message}: column {name}"
            continue
        assert [a is None for a in mine] == [b is None for b in yours], f"{message}: nulls of {name}"
        steps = [max(a, b) / min(a, b) for a, b in zip(mine, yours) if a is not None and a > 0 and b > 0]
        assert all(ratio <= _LIMIT_STEPS * 1.001 for ratio in steps), f"{message}: {name} {mine} vs {yours}"


def _without_fidelity(stats: bytes) -> bytes:
    """``stats`` with the oracle's measured block replaced by its shape (its keys, nested)."""
    def shape(value):
        return {key: shape(item) for key, item in value.items()} if isinstance(value, dict) else None

    data = json.loads(stats)
    if "fidelity" in data:
        data["fidelity"] = shape(data["fidelity"])
    return json.dumps(data, sort_keys=True).encode()


@pytest.fixture
def ray_engine():
    close_backends()
    temp = tempfile.mkdtemp(prefix="ecd-r-", dir="/tmp")  # Ray's socket paths must fit in 107 bytes
    yield DistributedConfig(engine="ray", num_cpus=2, shard_size=3, object_store_memory_mb=256, temp_dir=temp,
                            progress=False)
    if ray.is_initialized():
        ray.shutdown()
    close_backends()
    shutil.rmtree(temp, ignore_errors=True)


@pytest.mark.slow  # a Ray instance and a whole recipe (~20 s); test_distributed checks the engines agree by default
def test_the_recipe_on_ray_publishes_the_same_rounds_and_a_stored_rerun_starts_no_cluster(tmp_path, ray_engine):
    responder = ScriptedResponder()
    with ScriptedOpenAIServer(responder) as server:
        local = run_recipe(_config(server.base_url, tmp_path / "local", rounds=1, figures=False, dedup=True,
                                   evolve=SEARCHING))
        close_backends()
        on_ray = run_recipe(_config(server.base_url, tmp_path / "ray", rounds=1, figures=False, dedup=True,
                                    distributed=ray_engine, evolve=SEARCHING))
        assert ray.is_initialized()  # embeddings, pass matrices, the search and reference verdicts ran as Ray tasks
        shards = list((tmp_path / "ray" / "shards").glob("*/shard-*.arrow"))
        assert shards, "no shard was computed on Ray"
        functions = {json.loads(p.read_text())["function"] for p in (tmp_path / "ray" / "shards").glob("*/job.json")}
        assert any(f.endswith("evolve_search") for f in functions), functions  # the round's search on the nodes
        assert any(o["method"] == "search" for row in local.rounds[1]["test_origin"] for o in row)  # not 0 == 0
        ray.shutdown()

        local_files = _published_files(tmp_path / "local" / "store")
        ray_files = _published_files(tmp_path / "ray" / "store")
        assert set(local_files) == set(ray_files) == {"round0", "round1", "main"}
        assert "fidelity" in json.loads(local_files["main"]["stats.json"])  # the shape comparison has a block
        assert_same_published(local_files, ray_files, "between the engines")
        assert on_ray.stats[0]["dedup"] == local.stats[0]["dedup"]  # embeddings on Ray workers, same decisions
        assert [len(ds) for ds in on_ray.rounds] == [len(ds) for ds in local.rounds]
        assert on_ray.dropped == local.dropped

        # everything is stored: the same configuration again starts no Ray instance and pushes nothing
        close_backends()
        again = run_recipe(_config(server.base_url, tmp_path / "ray", rounds=1, figures=False, dedup=True,
                                   distributed=ray_engine, evolve=SEARCHING))
    assert not ray.is_initialized()
    assert again.commits == [] and list(again.final["id"]) == list(on_ray.final["id"])
