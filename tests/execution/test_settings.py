"""Sandbox settings are defined once (``limits.SandboxSettings``) and passed whole, from a YAML key to the fork server.

Every setting a sandbox runs by is a field of ``SandboxSettings`` with its only default and its only check; the
sandbox, the engine behind the service, ``shared_sandbox`` and ``run_tests`` resolve the same object, and the
recipe's ``execute:`` section reaches them under the same names.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys

import pytest

from evolvecoder_datasets.config import load_recipe_config
from evolvecoder_datasets.errors import ConfigError
from evolvecoder_datasets.execution import Sandbox, run_tests, shared_sandbox
from evolvecoder_datasets.execution._engine import LocalEngine
from evolvecoder_datasets.execution._protocol import SETTINGS
from evolvecoder_datasets.limits import SandboxSettings
from evolvecoder_datasets.recipe import RecipeConfig
from evolvecoder_datasets.rewards import RewardConfig
from evolvecoder_datasets.stages.execute import ExecuteConfig

#: A value other than the default for every field a sandbox runs by.
NOT_DEFAULT = {"workers": 1, "timeout_s": 0.3, "memory_mb": 512, "mode": "fast", "preamble": "BASE = 40",
               "isolation": "auto", "max_consecutive_timeouts": 1, "wall_timeout_s": 7.5, "load_timeout_s": 3.5,
               "max_output_bytes": 65536, "max_processes": 16, "max_open_files": 48, "max_value_bytes": 1 << 21,
               # This interpreter's own environment, named: programs import its packages through it.
               "python_env": sys.prefix}  # fmt: skip


def test_the_table_above_covers_every_sandbox_field_and_differs_from_each_default():
    assert set(NOT_DEFAULT) == set(SandboxSettings.SANDBOX_FIELDS)
    defaults = SandboxSettings()
    assert [n for n, v in NOT_DEFAULT.items() if getattr(defaults, n) == v] == ["isolation"]  # "auto" is all we have


def test_defaults_are_written_once_the_sandbox_and_the_engine_declare_none():
    for callable_ in (Sandbox.__init__, LocalEngine.__init__, shared_sandbox, run_tests):
        params = inspect.signature(callable_).parameters
        assert not set(params) & set(SandboxSettings.SANDBOX_FIELDS), callable_
    for config in (ExecuteConfig, RewardConfig):
        assert issubclass(config, SandboxSettings)
        own = {f.name for f in dataclasses.fields(config)} - {f.name for f in dataclasses.fields(SandboxSettings)}
        assert not own & set(SandboxSettings.SANDBOX_FIELDS)


def test_every_yaml_key_of_execute_reaches_the_sandbox_under_its_one_name(tmp_path):
    lines = "\n".join(f"  {name}: {value!r}" if isinstance(value, str) else f"  {name}: {value}"
                      for name, value in NOT_DEFAULT.items())  # fmt: skip
    path = tmp_path / "recipe.yaml"
    path.write_text(f"rounds: 1\nmutants: 2\nexecute:\n{lines}\n  limit_floor_s: 0.05\n")
    execute = load_recipe_config(path, RecipeConfig).execute
    sandbox = shared_sandbox(execute)
    for name, value in NOT_DEFAULT.items():
        assert getattr(sandbox.settings, name) == value, name
    # What the service's engine is built from: the resolved values, under the names the protocol carries.
    sandbox.start()
    sent = dict(zip(SETTINGS, sandbox._wire()))
    for name in set(SETTINGS) - {"isolation"}:  # isolation travels resolved ("bwrap"/"unshare"/"none")
        assert sent[name] == NOT_DEFAULT[name], name
    # And the fork server runs by them: the preamble's name is defined, one timeout leaves the rest unexecuted.
    report = sandbox.run("def f():\n    return BASE + 2\n", ["assert f() == 42"])
    assert report.statuses == ["pass"]
    looping = sandbox.run("def f():\n    while True:\n        pass\n", ["assert f()", "assert f()", "assert f()"])
    assert looping.statuses == ["timeout", "unexecuted", "unexecuted"]


def test_overrides_apply_over_settings_and_a_config_is_taken_whole():
    settings = ExecuteConfig(mode="fast", memory_mb=768, statuses=False)
    with Sandbox(settings, workers=1, timeout_s=0.25) as sandbox:
        s = sandbox.settings
        assert (s.mode, s.memory_mb, s.timeout_s, s.workers, s.worker_count) == ("fast", 768, 0.25, 1, 1)
        assert type(sandbox.settings) is SandboxSettings  # the config's own fields stay with the stage
        assert sandbox.run("while True: pass", ["assert True"]).statuses == ["timeout"]
    # Equal sandbox settings share one sandbox, whichever config carried them.
    assert shared_sandbox(ExecuteConfig(mode="fast", workers=1)) is shared_sandbox(SandboxSettings(mode="fast"), workers=1)
    assert shared_sandbox(mode="fast", workers=1) is not shared_sandbox(mode="isolated", workers=1)


def test_bad_settings_are_refused_once_with_a_clear_error():
    with pytest.raises(TypeError, match="timeout"):
        Sandbox(timeout=1.0)  # not a setting: the message lists the ones there are
    with pytest.raises(ConfigError, match="mode"):
        Sandbox(mode="turbo")
    with pytest.raises(ConfigError, match="wall_timeout_s"):
        Sandbox(wall_timeout_s=-1)
    with pytest.raises(ConfigError, match="settings must be"):
        Sandbox({"mode": "fast"})
    with pytest.raises(ConfigError, match="max_open_files"):
        ExecuteConfig(max_open_files=0)


def test_a_sandbox_keeps_no_calibration_and_a_short_ceiling_needs_no_floor_but_an_explicit_conflict_is_an_error():
    assert SandboxSettings(timeout_s=0.05).floor_s == 0.05  # the default floor never sits above the ceiling
    assert SandboxSettings(timeout_s=0.05).calibrated_limit([0.0001]) == 0.05
    calibrated = ExecuteConfig(timeout_s=0.5, limit_factor=4.0, limit_floor_s=0.2, mode="fast")
    box = Sandbox(calibrated, timeout_s=0.05)  # the stage's floor is the stage's: the sandbox calibrates nothing
    assert box.settings == SandboxSettings(timeout_s=0.05, mode="fast")
    assert Sandbox(calibrated).settings == Sandbox(ExecuteConfig(timeout_s=0.5, mode="fast")).settings
    with pytest.raises(ConfigError, match="limit_floor_s"):
        ExecuteConfig(timeout_s=0.5, limit_floor_s=1.0)
    with pytest.raises(ConfigError, match="limit_floor_s"):
        SandboxSettings(limit_floor_s=0.0)
