"""The whole recipe on a private two-node Ray cluster: one execution service per node, nothing judged on the driver.

A stand-in for a cluster of two machines, built from the real parts on this one: two ``ray start`` processes (a
head and a worker node, one CPU each, loopback), each with its own runtime folder for the execution service
(``EVOLVECODER_SERVICE_DIR`` in the node's environment, as each machine has its own ``$XDG_RUNTIME_DIR``). The
recipe joins the cluster by address, as a user's driver would. Every published data file must be byte-identical to
a local run (``stats.json`` too, but its ``fidelity`` block, a CPU-cut measurement, in shape, and each data file's
``time_limit_s`` column, a CPU-time measurement, within two ladder steps: see ``tests/recipe/test_recipe_ray.py``); the run's execution counters must show every stage's jobs judged on the nodes (both of
them), and only the fidelity oracle's measurement on the driver machine's own service; each node's folder must hold a service of its own.
The round has the search on, which runs as shard tasks on the nodes (``Executor.evolve``).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from evolvecoder_datasets.distributed import DistributedConfig
from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
from evolvecoder_datasets.recipe import run_recipe
from evolvecoder_datasets.stages.support.resources import close_backends

from ..scripted_llm import ScriptedResponder
from .test_recipe_e2e import _config
from .test_recipe_ray import SEARCHING, _published_files, assert_same_published

ray = pytest.importorskip("ray")
ROOT = Path(__file__).resolve().parents[2]
RAY = Path(sys.executable).with_name("ray")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ray_start(args: list[str], service_dir: Path) -> int:
    """``ray start`` with its own service folder; returns the process group its daemons live in."""
    env = {**os.environ, "EVOLVECODER_SERVICE_DIR": str(service_dir), "PYTHONPATH": str(ROOT),
           "RAY_USAGE_STATS_ENABLED": "0"}  # fmt: skip
    env.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)  # a node is a machine of its own, not the driver's child
    proc = subprocess.Popen([str(RAY), "start", *args, "--num-cpus", "1", "--node-ip-address", "127.0.0.1",
                             "--object-store-memory", str(100 * 2**20), "--disable-usage-stats"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)  # fmt: skip
    out, _ = proc.communicate(timeout=180)
    assert proc.returncode == 0, out
    return proc.pid  # the session leader's pid is the group id of the daemons it forked


def _services_in(folder: Path) -> list[int]:
    """Pids of live execution services whose socket folder is under ``folder``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                command = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"evolvecoder_datasets.execution.service" in command and any(
                    part.startswith(os.fsencode(folder)) for part in command):
                found.append(int(entry))
    return found


@pytest.fixture
def two_nodes():
    if ray.is_initialized():
        ray.shutdown()
    close_backends()
    base = Path(tempfile.mkdtemp(prefix="ecd-2n-", dir="/tmp"))  # Ray's socket paths must stay short
    port = _free_port()
    groups: list[int] = []
    folders = {"head": base / "head", "worker": base / "worker"}
    try:
        groups.append(_ray_start(["--head", "--port", str(port), "--temp-dir", str(base / "t"),
                                  "--ray-client-server-port", str(_free_port()), "--include-dashboard", "false"],
                                 folders["head"]))  # fmt: skip
        groups.append(_ray_start(["--address", f"127.0.0.1:{port}"], folders["worker"]))
        yield f"127.0.0.1:{port}", folders
    finally:
        if ray.is_initialized():
            ray.shutdown()
        close_backends()
        for group in groups:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(group, sig)
                except ProcessLookupError:
                    break
                time.sleep(2)
        for pid in _services_in(base):  # the nodes' services would end once idle; do not leave them behind
            os.kill(pid, signal.SIGTERM)
        subprocess.run(["rm", "-rf", str(base)], check=False)


@pytest.mark.slow
def test_the_whole_recipe_runs_through_one_service_per_node_and_publishes_what_a_local_run_does(tmp_path, two_nodes):
    address, folders = two_nodes
    responder = ScriptedResponder()
    with ScriptedOpenAIServer(responder) as server:
        local = run_recipe(_config(server.base_url, tmp_path / "local", rounds=1, figures=False, dedup=True,
                                   evolve=SEARCHING))
        assert local.execution["this_machine"]["jobs"] > 0 and local.execution["nodes"] == {}
        close_backends()
        cluster = DistributedConfig(engine="ray", address=address, shard_size=3, progress=False)
        on_cluster = run_recipe(_config(server.base_url, tmp_path / "cluster", rounds=1, figures=False,
                                        dedup=True, distributed=cluster, evolve=SEARCHING))  # fmt: skip
        nodes = {node["NodeID"] for node in ray.nodes() if node["Alive"]}
        ray.shutdown()

    # Nothing was judged on the driver: every job of every stage went to a node's service, and both nodes judged.
    execution = on_cluster.execution
    # (the fidelity oracle, a measurement every run redoes, runs on this machine's service: still not the driver)
    assert execution["this_machine"] == execution["this_machine_measurements"]
    assert execution["this_machine"]["jobs"] > 0  # the run has an oracle: the check above is not 0 == 0
    assert set(execution["nodes"]) == nodes and len(nodes) == 2
    assert all(counts["jobs"] > 0 and counts["tests"] > 0 for counts in execution["nodes"].values()), execution
    assert json.loads((tmp_path / "cluster" / "execution.json").read_text()) == execution
    # One service per node, each in its node's own runtime folder.
    for name, folder in folders.items():
        assert list(folder.glob("*/service.log")), f"no execution service ran on the {name} node"

    local_files = _published_files(tmp_path / "local" / "store")
    cluster_files = _published_files(tmp_path / "cluster" / "store")
    assert set(local_files) == set(cluster_files) == {"round0", "round1", "main"}
    assert_same_published(local_files, cluster_files, "between the local run and the cluster")
    assert on_cluster.dropped == local.dropped
