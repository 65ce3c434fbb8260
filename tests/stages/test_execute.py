"""The execute stage as a real ``Dataset.map`` with ``datasets`` caching."""

from __future__ import annotations

import pytest
from datasets import Dataset

from evolvecoder_datasets.errors import SchemaError
from evolvecoder_datasets.stages.execute import ExecuteConfig, execute, execute_dataset


def _rows():
    return [
        {"id": "P_1", "tests": ["assert sq(2) == 4", "assert sq(-3) == 9"],
         "solutions": [{"model": "a", "sample": 0, "code": "def sq(x):\n    return x * x"},
                       {"model": "a", "sample": 1, "code": "def sq(x):\n    return x * 2"},
                       {"model": "b", "sample": 0, "code": "def sq(x:"}],
         "inputs": [], "outputs": []},
        {"id": "P_2", "tests": [],
         "solutions": [{"model": "a", "sample": 0, "code": "print(int(input()) + 1)"},
                       {"model": "b", "sample": 0, "code": "print(int(input()) - 1)"}],
         "inputs": ["1\n", "41\n"], "outputs": ["2", "42"]},
    ]  # fmt: skip


def test_execute_dataset_writes_pass_matrix_and_statuses_and_is_cached(tmp_path):
    ds = Dataset.from_list(_rows())
    path = tmp_path / "ds"
    ds.save_to_disk(str(path))
    ds = Dataset.load_from_disk(str(path))
    out = execute_dataset(ds, ExecuteConfig(mode="fast", timeout_s=1.0))
    assert out[0]["pass_matrix"] == [[True, True], [True, False], [False, False]]
    assert out[0]["statuses"][2] == ["syntax_error", "syntax_error"]
    assert out[1]["pass_matrix"] == [[True, True], [False, False]]
    again = execute_dataset(ds, ExecuteConfig(mode="fast", timeout_s=1.0))
    assert again.cache_files == out.cache_files  # second run is a datasets cache hit
    other = execute_dataset(ds, ExecuteConfig(mode="isolated", timeout_s=1.0))
    assert other.cache_files != out.cache_files
    assert other["pass_matrix"] == out["pass_matrix"]


def test_execute_needs_solutions_and_tests():
    with pytest.raises(SchemaError):
        execute({"tests": [["assert True"]]}, config=ExecuteConfig())
    with pytest.raises(SchemaError):
        execute({"solutions": [["x = 1"]]}, config=ExecuteConfig())


def test_execute_with_num_proc_gives_the_same_matrix():
    ds = Dataset.from_list(_rows() * 3)
    single = execute_dataset(ds, ExecuteConfig(mode="fast"))
    multi = execute_dataset(ds, ExecuteConfig(mode="fast"), num_proc=2)
    assert single["pass_matrix"] == multi["pass_matrix"]


def test_a_sandbox_failure_fails_the_batch_instead_of_recording_crashes():
    """A real sandbox failure: the execution service's fork servers are SIGKILLed while the job runs (and again
    after the engine restarts them), so its cells are the sandbox's, not the program's."""
    from evolvecoder_datasets.errors import SandboxCrashed
    from evolvecoder_datasets.execution import shared_sandbox

    from ..rewards.test_rewards import servers_killed

    config = ExecuteConfig(workers=1, mode="fast")
    slow = "import time\ndef f():\n    time.sleep(0.3)\n    return 1\n"
    with servers_killed(shared_sandbox(**config.sandbox_settings())), pytest.raises(SandboxCrashed):
        execute({"solutions": [[slow]], "tests": [["assert f() == 1"] * 4]}, config=config)
    # and the stage runs again once the servers are left alone
    assert execute({"solutions": [[slow]], "tests": [["assert f() == 1"]]}, config=config)["pass_matrix"] == [[[True]]]
