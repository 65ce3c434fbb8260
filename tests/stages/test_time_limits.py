"""Calibrated time limits, the shared timeout policy, early stop of binary rewards and the streamed execute stage
(issue 15), on the real sandbox and real ``datasets`` caching."""

from __future__ import annotations

import dataclasses

import pytest
from datasets import Dataset

from evolvecoder_datasets import rewards
from evolvecoder_datasets.errors import ConfigError
from evolvecoder_datasets.execution import Job, Sandbox
from evolvecoder_datasets.limits import SandboxSettings, limit_ladder
from evolvecoder_datasets.rewards import RewardConfig, make_code_reward, make_pass_rate_reward
from evolvecoder_datasets.schema import TIME_LIMIT
from evolvecoder_datasets.stages.calibrate import calibrate, calibrate_dataset
from evolvecoder_datasets.stages.execute import ExecuteConfig, execute, execute_dataset
from evolvecoder_datasets.stages.support.stream import Plan, stream_jobs

SQ_TESTS = ["assert sq(2) == 4", "assert sq(-3) == 9", "assert sq(0) == 0", "assert sq(5) == 25"]
RIGHT = "def sq(x):\n    return x * x"
WRONG = "def sq(x):\n    return x * 2"
LOOPS = "def sq(x):\n    while True:\n        pass"
# Right, but burns 0.3 s of CPU per call whatever the machine: a timeout under a 0.1 s limit, fine under the
# fixed 1 s one. (A fixed loop count was 0.45 s on one machine and 0.115 s on a faster one, where it passed
# the 0.1 s limit now and then.)
SLOW = ("import time\n"
        "def sq(x):\n    start = time.process_time()\n"
        "    while time.process_time() - start < 0.3:\n        pass\n    return x * x")


def _problem(solutions, reference=RIGHT, tests=SQ_TESTS):
    return {"id": "P_1", "tests": list(tests), "reference_solutions": [reference], "reference_ok": True,
            "solutions": [{"model": "m", "sample": i, "code": c} for i, c in enumerate(solutions)]}  # fmt: skip


# -- the policy and the arithmetic -------------------------------------------------------------------------------


def test_every_entry_point_shares_one_timeout_policy_and_its_defaults():
    base = SandboxSettings()
    for config in (ExecuteConfig(), RewardConfig()):
        assert isinstance(config, SandboxSettings)
        for field in dataclasses.fields(SandboxSettings):
            if field.name != "preamble":  # the rewards add the imports models forget; documented
                assert getattr(config, field.name) == getattr(base, field.name), field.name
    assert ExecuteConfig().max_consecutive_timeouts == RewardConfig().max_consecutive_timeouts == 2


def test_calibrated_limit_is_the_factor_times_the_slowest_passed_test_between_floor_and_ceiling():
    settings = SandboxSettings(timeout_s=1.0, limit_factor=10.0, limit_floor_s=0.1)
    assert settings.calibrated_limit([0.00001, 0.0002]) == 0.1  # microsecond tests: the floor
    assert 0.3 <= settings.calibrated_limit([0.001, 0.03]) < 0.34  # 10 x 0.03, one ladder step up at most
    assert settings.calibrated_limit([0.5]) == 1.0  # the fixed limit stays the ceiling
    assert settings.calibrated_limit([]) is None  # no measurement: no calibration, the fixed limit applies
    # Close measurements land on the same ladder step, so a rerun rarely changes a limit.
    assert limit_ladder(0.205, 0.1) == limit_ladder(0.215, 0.1)


def test_bad_calibration_settings_are_config_errors():
    with pytest.raises(ConfigError):
        SandboxSettings(limit_factor=0.5)
    with pytest.raises(ConfigError):
        ExecuteConfig(timeout_s=0.5, limit_floor_s=1.0)
    with pytest.raises(ConfigError):
        RewardConfig(max_consecutive_timeouts=0)


# -- the execute stage -------------------------------------------------------------------------------------------


def test_execute_calibrates_from_the_reference_and_runs_the_pool_under_that_limit():
    config = ExecuteConfig(mode="fast", workers=2)
    out = execute({k: [v] for k, v in _problem([RIGHT, WRONG, LOOPS, SLOW]).items()}, config=config)
    assert out[TIME_LIMIT] == [0.1]
    statuses = out["statuses"][0]
    assert out["pass_matrix"][0][:2] == [[True] * 4, [True, False, True, False]]
    assert statuses[2][:2] == ["timeout", "timeout"] and set(statuses[2][2:]) == {"unexecuted"}  # policy: 2 in a row
    assert statuses[3][0] == "timeout"  # slow but right: over the calibrated limit
    # The fixed limit alone lets the slow program pass; every other verdict is the same.
    fixed = execute({k: [v] for k, v in _problem([RIGHT, WRONG, LOOPS, SLOW]).items()},
                    config=dataclasses.replace(config, calibrate=False))  # fmt: skip
    assert TIME_LIMIT not in fixed
    assert fixed["pass_matrix"][0][3] == [True] * 4
    assert fixed["statuses"][0][:3] == statuses[:3]


def test_a_stored_limit_is_used_as_is_and_rows_without_a_reference_run_under_the_fixed_limit():
    # Row 0's reference would calibrate to the ceiling (it is the slow program), but the row already holds 0.1.
    rows = [dict(_problem([SLOW], reference=SLOW), time_limit_s=0.1),
            dict(_problem([SLOW]), reference_solutions=[], time_limit_s=None),
            dict(_problem([SLOW]), reference_ok=False, time_limit_s=None)]  # fmt: skip
    batch = {k: [r[k] for r in rows] for k in rows[0]}
    out = execute(batch, config=ExecuteConfig(mode="fast", max_consecutive_timeouts=None))
    assert out[TIME_LIMIT] == [0.1, None, None]
    assert out["statuses"][0] == [["timeout"] * 4]
    assert out["pass_matrix"][1:] == [[[True] * 4]] * 2


def test_a_reference_slower_than_the_floor_raises_the_limit_so_its_peers_still_pass():
    # The reference needs the slow loop too: the limit follows it, and the same slow program passes.
    out = execute({k: [v] for k, v in _problem([SLOW, WRONG], reference=SLOW).items()},
                  config=ExecuteConfig(mode="fast", workers=2))  # fmt: skip
    assert out[TIME_LIMIT][0] > 0.1
    assert out["pass_matrix"][0] == [[True] * 4, [True, False, True, False]]


def test_execute_dataset_streams_every_row_and_caches_like_a_map(tmp_path):
    rows = [_problem([RIGHT, WRONG, LOOPS]), dict(_problem([WRONG, RIGHT]), id="P_2", reference_solutions=[])]
    path = tmp_path / "ds"
    Dataset.from_list(rows * 5).save_to_disk(str(path))
    ds = Dataset.load_from_disk(str(path))
    config = ExecuteConfig(mode="fast", workers=2)
    out = execute_dataset(ds, config, batch_size=3)
    by_map = ds.map(execute, batched=True, batch_size=4, fn_kwargs={"config": config})
    for column in ("pass_matrix", "statuses", "judged_inside", TIME_LIMIT):
        assert out[column] == by_map[column], column
    assert out.column_names == by_map.column_names
    assert out[TIME_LIMIT][:2] == [0.1, None]
    empty_pool = execute({"solutions": [[]], "tests": [SQ_TESTS], "reference_solutions": [[RIGHT]]}, config=config)
    assert empty_pool[TIME_LIMIT] == [0.1] and empty_pool["pass_matrix"] == [[]]  # calibrated all the same
    again = execute_dataset(ds, config, batch_size=3)
    assert again.cache_files == out.cache_files  # loaded from the stage's cache file, not run again
    assert execute_dataset(ds, dataclasses.replace(config, limit_floor_s=0.2))[TIME_LIMIT][0] == 0.2


def test_calibrate_dataset_writes_the_limits_the_rewards_read():
    ds = Dataset.from_list([{"tests": SQ_TESTS, "reference_solutions": [RIGHT]},
                            {"tests": SQ_TESTS, "reference_solutions": [WRONG]},  # passes 2 tests: still measured
                            {"tests": SQ_TESTS, "reference_solutions": ["x = 1"]}])  # defines nothing the tests call
    limits = list(calibrate_dataset(ds, ExecuteConfig(mode="fast"))[TIME_LIMIT])
    assert limits == [0.1, 0.1, None]
    assert calibrate({"tests": [SQ_TESTS], "reference_solutions": [[LOOPS]]}, config=ExecuteConfig(mode="fast",
                     timeout_s=0.3)) == {TIME_LIMIT: [None]}  # fmt: skip


# -- the stream ---------------------------------------------------------------------------------------------------


def test_stream_keeps_order_runs_first_jobs_first_and_raises_at_the_failing_item():
    seen = []

    def plan(item):
        def then(first):
            seen.append((item, first.statuses))
            if item == 3:
                raise ValueError("bad item")
            return [Job(f"x = {item}", tests=[f"assert x == {item}"])] * item

        return Plan(then, first=Job("y = 1", tests=["assert y == 1"]))

    with Sandbox(workers=2, mode="fast") as sb:
        stream = stream_jobs(sb, range(5), plan, read_ahead=2)
        got = [(item, len(reports), {r.statuses[0] for r in reports}) for item, _first, reports in
               (next(stream) for _ in range(3))]  # fmt: skip
        assert got == [(0, 0, set()), (1, 1, {"pass"}), (2, 2, {"pass"})]
        with pytest.raises(ValueError, match="bad item"):
            next(stream)
    assert all(statuses == ["pass"] for _item, statuses in seen)


# -- the rewards --------------------------------------------------------------------------------------------------


def test_binary_reward_stops_at_the_first_failure_and_agrees_with_a_full_run():
    rewards.clear_cache()
    programs = [RIGHT, WRONG, LOOPS, "def sq(x):\n    return abs(x) * x"]
    binary = make_code_reward(mode="fast", workers=2, calibrate=False)
    full = make_pass_rate_reward(mode="fast", workers=2, calibrate=False)
    details: dict = {}
    values = binary(completions=programs, tests=[SQ_TESTS] * 4, log_extra=details.__setitem__)
    rates = full(completions=programs, tests=[SQ_TESTS] * 4)
    assert values == [1.0 if rate == 1.0 else 0.0 for rate in rates] == [1.0, 0.0, 0.0, 0.0]
    outcomes = details["code_reward_fast/outcome"]
    assert "timeout 1" in outcomes[2] and "unexecuted 3" in outcomes[2]  # a looper costs one limit, not two


def test_rewards_run_each_row_under_its_time_limit_capped_by_the_fixed_one():
    rewards.clear_cache()
    tests = [SQ_TESTS[:1]] * 3
    binary = make_code_reward(mode="fast", workers=1)
    assert binary(completions=[SLOW] * 3, tests=tests) == [1.0] * 3  # no column: the fixed 1 s limit
    assert binary(completions=[SLOW] * 3, tests=tests, time_limit_s=[0.1, None, 5.0]) == [0.0, 1.0, 1.0]
    capped = make_code_reward(mode="fast", workers=1, timeout_s=0.1, limit_floor_s=0.05)
    assert capped(completions=[SLOW], tests=tests[:1], time_limit_s=[5.0]) == [0.0]  # 5 s asked, 0.1 s allowed
    ignoring = make_code_reward(mode="fast", workers=1, calibrate=False)
    assert ignoring(completions=[SLOW], tests=tests[:1], time_limit_s=[0.1]) == [1.0]


def test_on_real_humaneval_batches_binary_and_calibrated_rewards_equal_a_full_fixed_limit_run():
    from evolvecoder_datasets.mutants import generate_mutants
    from evolvecoder_datasets.sources import load_humaneval

    rows = [r for r in load_humaneval().select(range(0, 40, 4)) if r["tests"]]
    limits = calibrate({"tests": [r["tests"] for r in rows], "reference_solutions": [r["solutions"][:1] for r in rows]},
                       config=ExecuteConfig(mode="fast"))[TIME_LIMIT]  # fmt: skip
    completions, tests, per_completion = [], [], []
    for row, limit in zip(rows, limits):
        canonical = row["solutions"][0]
        for program in [canonical] + [m.code for m in generate_mutants(canonical, max_mutants=5, seed=1)]:
            completions.append(f"```python\n{program}\n```")
            tests.append(row["tests"])
            per_completion.append(limit)
    rewards.clear_cache()
    full = make_pass_rate_reward(mode="fast", workers=2, calibrate=False)(completions=completions, tests=tests)
    binary = make_code_reward(mode="fast", workers=2)(completions=completions, tests=tests, time_limit_s=per_completion)
    rates = make_pass_rate_reward(mode="fast", workers=2)(completions=completions, tests=tests,
                                                          time_limit_s=per_completion)  # fmt: skip
    assert binary == [1.0 if rate == 1.0 else 0.0 for rate in full]
    assert rates == full
    assert 0 < sum(binary) < len(binary)  # canonical solutions pass, most mutants do not


def test_an_evolution_round_runs_new_tests_under_the_limit_and_raises_it_for_a_slower_reference():
    from evolvecoder_datasets.llm import LLMConfig
    from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
    from evolvecoder_datasets.stages.evolve import EvolveConfig, evolve

    def batch(reference, limit):
        return {"id": ["X_1"], "question": ["Write `def sq(x)` returning x squared."], "tests": [["assert sq(2) == 4"]],
                "pass_matrix": [[[True], [True]]], "reference_solutions": [[reference]], "reference_ok": [True],
                TIME_LIMIT: [limit], "solutions": [[{"model": "m", "sample": 0, "code": RIGHT},
                                                    {"model": "m", "sample": 1, "code": SLOW}]]}  # fmt: skip

    with ScriptedOpenAIServer(lambda body: '{"tests": ["assert sq(4) == 16"]}') as server:
        config = EvolveConfig(llm=LLMConfig(model="m", base_url=server.base_url), discriminative=False,
                              test_mode="asserts", execute=ExecuteConfig(mode="fast", workers=2))  # fmt: skip
        fast_reference = evolve(batch(RIGHT, 0.1), config=config)
        slow_reference = evolve(batch(SLOW, 0.1), config=config)
        uncalibrated = evolve(batch(RIGHT, None), config=config)
    assert fast_reference["pass_matrix"][0] == [[True, True], [True, False]]  # the slow program is over 0.1 s
    assert fast_reference[TIME_LIMIT] == [0.1]
    assert slow_reference["pass_matrix"][0] == [[True, True], [True, True]]  # the limit followed the reference
    assert slow_reference[TIME_LIMIT][0] > 0.1
    assert uncalibrated["pass_matrix"][0] == [[True, True], [True, True]] and uncalibrated[TIME_LIMIT] == [None]


def test_the_reference_check_of_a_round_judges_every_new_test_despite_the_timeout_policy():
    from evolvecoder_datasets.llm import LLMConfig
    from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
    from evolvecoder_datasets.stages.evolve import EvolveConfig, evolve

    # The reference loops on negative inputs: two new tests in a row time out, the third must still be judged.
    reference = "def sq(x):\n    while x < 0:\n        pass\n    return x * x"
    batch = {"id": ["X_1"], "question": ["Write `def sq(x)`."], "tests": [["assert sq(2) == 4"]],
             "pass_matrix": [[[True]]], "reference_solutions": [[reference]], "reference_ok": [True],
             "solutions": [[{"model": "m", "sample": 0, "code": RIGHT}]],
             # every int is in the domain (the one seed alone would keep negative inputs out before the reference)
             "domain": [{"how": "open", "contract": None, "shape": None, "seed_violations": 0}]}  # fmt: skip
    answer = '{"tests": ["assert sq(-1) == 1", "assert sq(-2) == 4", "assert sq(3) == 9"]}'
    with ScriptedOpenAIServer(lambda body: answer) as server:
        config = EvolveConfig(llm=LLMConfig(model="m", base_url=server.base_url), discriminative=False,
                              test_mode="asserts",
                              execute=ExecuteConfig(mode="fast", workers=1, timeout_s=0.2, limit_floor_s=0.1))
        out = evolve(batch, config=config)
    assert out["tests"][0] == ["assert sq(2) == 4", "assert sq(3) == 9"]
    assert out["evolve_log"][0][-1]["reference_failed"] == 2
