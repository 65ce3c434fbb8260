"""The recipe on a private local Ray instance publishes the same rounds as on this machine, byte for byte.

One block of the statistics is a measurement, not a computation: ``fidelity`` grades the tests against an oracle
whose inputs are those on which the reference ends within a CPU cut (``FidelityConfig.cpu_s``), so an input near the
cut can be in one run's oracle and not in the next one's, on any engine (the oracle is built on the driver in both
runs). Every data file and every other statistic is compared byte for byte; ``fidelity`` is compared in shape.
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
from evolvecoder_datasets.stages.support.resources import close_backends

from .scripted_llm import ScriptedResponder
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


def test_the_recipe_on_ray_publishes_the_same_rounds_and_a_stored_rerun_starts_no_cluster(tmp_path, ray_engine):
    responder = ScriptedResponder()
    with ScriptedOpenAIServer(responder) as server:
        local = run_recipe(_config(server.base_url, tmp_path / "local", rounds=1, figures=False, dedup=True))
        close_backends()
        on_ray = run_recipe(_config(server.base_url, tmp_path / "ray", rounds=1, figures=False, dedup=True,
                                    distributed=ray_engine))
        assert ray.is_initialized()  # embeddings, pass matrices and reference verdicts ran as Ray tasks
        shards = list((tmp_path / "ray" / "shards").glob("*/shard-*.arrow"))
        assert shards, "no shard was computed on Ray"
        ray.shutdown()

        local_files = _published_files(tmp_path / "local" / "store")
        ray_files = _published_files(tmp_path / "ray" / "store")
        assert set(local_files) == set(ray_files) == {"round0", "round1", "main"}
        assert "fidelity" in json.loads(local_files["main"]["stats.json"])  # the shape comparison has a block
        for revision, files in local_files.items():
            assert set(files) == set(ray_files[revision]), revision
            assert any(path.endswith(".parquet") for path in files)
            for path, data in files.items():
                theirs = ray_files[revision][path]
                if path == "stats.json":
                    data, theirs = _without_fidelity(data), _without_fidelity(theirs)
                assert theirs == data, f"{revision}:{path} differs between the engines"
        assert on_ray.stats[0]["dedup"] == local.stats[0]["dedup"]  # embeddings on Ray workers, same decisions
        assert [len(ds) for ds in on_ray.rounds] == [len(ds) for ds in local.rounds]
        assert on_ray.dropped == local.dropped

        # everything is stored: the same configuration again starts no Ray instance and pushes nothing
        close_backends()
        again = run_recipe(_config(server.base_url, tmp_path / "ray", rounds=1, figures=False, dedup=True,
                                   distributed=ray_engine))
    assert not ray.is_initialized()
    assert again.commits == [] and list(again.final["id"]) == list(on_ray.final["id"])
