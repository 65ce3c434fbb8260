"""Calibrated limits on the Ray engine: the references travel with the shards, and the rows come back as locally."""

from __future__ import annotations

import pytest
from datasets import Dataset

from evolvecoder_datasets.distributed import DistributedConfig, execute_distributed, init_ray
from evolvecoder_datasets.schema import TIME_LIMIT
from evolvecoder_datasets.stages.execute import ExecuteConfig, execute_dataset

ray = pytest.importorskip("ray")

RIGHT = "def sq(x):\n    return x * x"
LOOPS = "def sq(x):\n    while True:\n        pass"
# Right, but burns 0.3 s of CPU per call whatever the machine: a timeout under a 0.1 s limit, fine under the
# fixed 1 s one. (A fixed loop count was 0.45 s on one machine and 0.115 s on a faster one, where it passed
# the 0.1 s limit now and then.)
SLOW = ("import time\n"
        "def sq(x):\n    start = time.process_time()\n"
        "    while time.process_time() - start < 0.3:\n        pass\n    return x * x")


@pytest.fixture(scope="module")
def ray_config(tmp_path_factory):
    config = DistributedConfig(num_cpus=2, shard_size=2, object_store_memory_mb=256, progress=False,
                               temp_dir=str(tmp_path_factory.mktemp("ray")))  # fmt: skip
    init_ray(config)
    yield config
    ray.shutdown()


@pytest.mark.slow  # a Ray instance of its own (~9 s); tests/stages/test_time_limits.py calibrates locally by default
def test_ray_calibrates_like_the_local_engine_and_declares_the_limit_column(ray_config):
    tests = ["assert sq(2) == 4", "assert sq(3) == 9", "assert sq(-1) == 1"]
    rows = []
    for i in range(5):
        references = [RIGHT] if i % 2 == 0 else []  # odd rows: no reference, the fixed limit
        rows.append({"id": f"T_{i}", "tests": tests, "reference_solutions": references, "reference_ok": True,
                     "solutions": [RIGHT, LOOPS, SLOW]})  # fmt: skip
    ds = Dataset.from_list(rows)
    config = ExecuteConfig(mode="fast", timeout_s=1.0)
    local = execute_dataset(ds, config)
    remote = execute_distributed(ds, config, distributed=ray_config)
    assert remote[TIME_LIMIT] == local[TIME_LIMIT] == [0.1, None, 0.1, None, 0.1]
    assert remote["statuses"] == local["statuses"]
    assert remote.features == local.features
    # the slow program times out where the limit is calibrated and passes where the fixed limit applies
    assert [matrix[2] for matrix in remote["pass_matrix"]] == [[False] * 3, [True] * 3] * 2 + [[False] * 3]
