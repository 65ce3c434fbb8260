"""Reward functions on the real sandbox: values, TRL's calling convention, failures, hacks, process hygiene."""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from evolvecoder_datasets import rewards
from evolvecoder_datasets.errors import ConfigError, SchemaError
from evolvecoder_datasets.rewards import (
    AsyncCodeReward,
    CodeReward,
    RewardConfig,
    async_code_reward,
    async_pass_rate_reward,
    code_reward,
    make_code_reward,
    make_pass_rate_reward,
    pass_rate_reward,
)

SQUARE_TESTS = ["assert square(3) == 9", "assert square(-2) == 4", "assert square(0) == 0", "assert square(5) == 25"]
RIGHT = "```python\ndef square(x):\n    return x * x\n```"
HALF_RIGHT = "```python\ndef square(x):\n    return x * x if x > 2 else -1\n```"
WRONG = "```python\ndef square(x):\n    return x + 1\n```"


def servers_killed(sandbox, *, after_s: float = 0.1):
    """Context manager: SIGKILL each of the sandbox's fork servers once it has lived ``after_s``, from a thread.

    Waiting until a server has started (and is running a job) keeps the kill away from bubblewrap's own setup.
    """

    @contextlib.contextmanager
    def killing():
        stop = threading.Event()
        first_seen: dict[int, float] = {}

        def loop():
            while not stop.is_set():
                try:
                    pids = sandbox.server_pids
                except AttributeError:  # a worker dropped its process between the check and the read
                    continue
                now = time.monotonic()
                for pid in pids:
                    if now - first_seen.setdefault(pid, now) >= after_s:
                        with contextlib.suppress(ProcessLookupError, PermissionError):
                            os.kill(pid, signal.SIGKILL)
                stop.wait(0.005)

        killer = threading.Thread(target=loop, daemon=True)
        killer.start()
        try:
            yield
        finally:
            stop.set()
            killer.join()

    return killing()


class Recorder:
    """Stands in for TRL's ``log_metric``/``log_extra`` bound methods: records what the reward reports."""

    def __init__(self) -> None:
        self.metrics: dict[str, list[float]] = {}
        self.extra: dict[str, list] = {}

    def log_metric(self, name, value):
        self.metrics.setdefault(name, []).append(value)

    def log_extra(self, column, values):
        self.extra.setdefault(column, []).extend(values)


@pytest.fixture
def fast():
    return make_code_reward(mode="fast", timeout_s=0.5, workers=2)


# -- values ------------------------------------------------------------------------------------------------------


def test_binary_reward_is_one_only_when_every_test_passes():
    out = code_reward(prompts=["p"] * 3, completions=[RIGHT, HALF_RIGHT, WRONG], completion_ids=[[1]] * 3,
                      tests=[SQUARE_TESTS] * 3, trainer_state=None)  # fmt: skip
    assert out == [1.0, 0.0, 0.0]


def test_pass_rate_reward_is_the_fraction_of_tests_passed():
    out = pass_rate_reward(prompts=["p"] * 3, completions=[RIGHT, HALF_RIGHT, WRONG], tests=[SQUARE_TESTS] * 3)
    assert out == [1.0, 0.5, 0.0]


def test_failing_value_is_configurable_and_applies_to_code_less_answers():
    reward = make_code_reward(failing_value=-1.0, mode="fast", workers=1)
    out = reward(completions=[RIGHT, WRONG, "I cannot solve this."], tests=[SQUARE_TESTS] * 3)
    assert out == [1.0, -1.0, -1.0]


def test_conversational_completions_use_the_last_assistant_message():
    conversation = [{"role": "assistant", "content": "Let me think.\n" + WRONG},
                    {"role": "assistant", "content": "Fixed:\n" + RIGHT}]  # fmt: skip
    out = code_reward(completions=[conversation, [{"role": "assistant", "content": WRONG}]], tests=[SQUARE_TESTS] * 2)
    assert out == [1.0, 0.0]


def test_thinking_is_stripped_and_the_last_python_block_is_run():
    answer = f"<think>first try:\n{RIGHT}\nno wait</think>\nDraft:\n{WRONG}\nFinal:\n{RIGHT}"
    thinking_only = f"<think>{RIGHT}</think>\nSo the answer is: it squares."
    out = code_reward(completions=[answer, thinking_only], tests=[SQUARE_TESTS] * 2)
    assert out == [1.0, 0.0]


def test_default_preamble_supplies_the_imports_models_forget():
    program = "```python\ndef total(xs: List[int]) -> int:\n    return sum(Counter(xs).values())\n```"
    tests = [["assert total([1, 1, 2]) == 3"]]
    assert code_reward(completions=[program], tests=tests) == [1.0]
    bare = make_code_reward(preamble=None, mode="fast", workers=1)
    assert bare(completions=[program], tests=tests) == [0.0]


def test_stdio_rows_are_scored_through_the_stdin_stdout_path():
    program = "```python\nn = int(input())\nprint(*[i * i for i in range(n)])\n```"
    inputs = [["3\n", "1\n", "4\n"]]
    out = pass_rate_reward(completions=[program], inputs=inputs, outputs=[["0 1 4\n", "0\n", "0 1 4 8\n"]])
    assert out == [pytest.approx(2 / 3)]
    assert code_reward(completions=[program], inputs=inputs, outputs=[["0 1 4", "0", "0  1 4 9\n"]]) == [1.0]


def test_a_batch_can_mix_assert_rows_and_stdio_rows():
    stdio = "```python\nprint(int(input()) ** 2)\n```"
    out = code_reward(
        completions=[RIGHT, stdio],
        tests=[SQUARE_TESTS, []],
        inputs=[None, ["7\n"]],
        outputs=[None, ["49\n"]],
    )
    assert out == [1.0, 1.0]


def test_float_tolerance_applies_to_stdio_answers():
    program = "```python\nprint(1 / 3)\n```"
    strict = make_code_reward(mode="fast", workers=1)
    tolerant = make_code_reward(mode="fast", workers=1, float_tol=1e-6)
    assert strict(completions=[program], inputs=[["\n"]], outputs=[["0.333333"]]) == [0.0]
    assert tolerant(completions=[program], inputs=[["\n"]], outputs=[["0.333333"]]) == [1.0]


def test_looping_programs_time_out_and_get_no_reward(fast):
    looping = "```python\ndef square(x):\n    while True:\n        pass\n```"
    recorder = Recorder()
    out = fast(completions=[looping, RIGHT], tests=[SQUARE_TESTS] * 2, log_metric=recorder.log_metric)
    assert out == [0.0, 1.0]
    # A binary reward stops the program at its first test that does not pass (here its first timeout); its other
    # tests are not run (and count as failed).
    assert recorder.metrics["code_reward_fast/timeout_rate"] == [pytest.approx(1 / 8)]


# -- TRL's protocol ----------------------------------------------------------------------------------------------


def test_names_are_what_trl_logs_and_async_variants_are_coroutine_functions():
    trl_utils = pytest.importorskip("trl.trainer.utils")
    cases = {
        code_reward: ("code_reward", False),
        pass_rate_reward: ("pass_rate_reward", False),
        async_code_reward: ("async_code_reward", True),
        async_pass_rate_reward: ("async_pass_rate_reward", True),
        make_code_reward(mode="fast"): ("code_reward_fast", False),
        make_pass_rate_reward(asynchronous=True): ("pass_rate_reward", True),
        make_code_reward(name="acecoder_binary", failing_value=-1.0): ("acecoder_binary", False),
    }
    for func, (name, is_async) in cases.items():
        assert trl_utils.get_callable_name(func) == name
        assert trl_utils.is_async_callable(func) is is_async


def test_async_variant_scores_like_the_sync_one_without_blocking_the_event_loop():
    slow = "```python\ndef square(x):\n    s = 0\n    for i in range(3_000_000):\n        s += i\n    return x * x\n```"
    ticks = 0

    async def ticker(done: asyncio.Event):
        nonlocal ticks
        while not done.is_set():
            await asyncio.sleep(0.005)
            ticks += 1

    async def main():
        done = asyncio.Event()
        tick_task = asyncio.create_task(ticker(done))
        scores = await asyncio.gather(
            async_code_reward(completions=[slow, WRONG], tests=[SQUARE_TESTS[:1]] * 2),
            async_pass_rate_reward(completions=[HALF_RIGHT], tests=[SQUARE_TESTS]),
        )
        done.set()
        await tick_task
        return scores

    assert asyncio.run(main()) == [[1.0, 0.0], [0.5]]
    assert ticks > 0


def test_reward_functions_pickle_by_value_of_their_settings():
    reward = make_pass_rate_reward(mode="fast", timeout_s=0.5, name="pr", workers=1)
    clone = pickle.loads(pickle.dumps(reward))
    assert isinstance(clone, CodeReward) and clone.__name__ == "pr" and clone.config == reward.config
    assert clone(completions=[HALF_RIGHT], tests=[SQUARE_TESTS]) == [0.5]
    assert pickle.loads(pickle.dumps(code_reward)) is code_reward
    assert isinstance(pickle.loads(pickle.dumps(make_code_reward(asynchronous=True))), AsyncCodeReward)


def test_missing_test_columns_are_a_schema_error_naming_what_was_passed():
    with pytest.raises(SchemaError, match=r"needs a 'tests' column.*\['id', 'question'\]"):
        code_reward(completions=[RIGHT], id=["x"], question=["q"], trainer_state=None, log_metric=print)
    with pytest.raises(SchemaError, match="2 values for 1 completions"):
        code_reward(completions=[RIGHT], tests=[SQUARE_TESTS, SQUARE_TESTS])
    with pytest.raises(SchemaError, match="list of strings"):
        code_reward(completions=[RIGHT], tests=["assert square(3) == 9"])


def test_bad_settings_are_config_errors():
    with pytest.raises(ConfigError, match="unknown reward settings"):
        make_code_reward(timeout=1.0)
    with pytest.raises(ConfigError):
        RewardConfig(kind="partial")
    with pytest.raises(ConfigError):
        RewardConfig(extract="middle")
    with pytest.raises(ConfigError):
        CodeReward({"mode": "fast"})


def test_custom_column_names_are_read():
    reward = make_code_reward(tests_column="asserts", mode="fast", workers=1)
    assert reward(completions=[RIGHT], asserts=[SQUARE_TESTS]) == [1.0]


# -- None, never a silent zero -----------------------------------------------------------------------------------


def test_rows_without_tests_are_left_out_with_none():
    recorder = Recorder()
    out = code_reward(completions=[RIGHT, RIGHT, RIGHT], tests=[SQUARE_TESTS, [], None],
                      log_extra=recorder.log_extra)  # fmt: skip
    assert out == [1.0, None, None]
    assert recorder.extra["code_reward/outcome"] == ["4/4 passed", "no tests", "no tests"]


def test_a_dead_sandbox_gives_none_and_the_next_call_recovers():
    reward = make_code_reward(mode="fast", timeout_s=0.37, workers=1)
    # Programs that take a while (4 x 0.3 s), so that the servers die under them.
    slow_right = "```python\nimport time\ndef square(x):\n    time.sleep(0.3)\n    return x * x\n```"
    slow_wrong = slow_right.replace("x * x", "x + 1")
    recorder = Recorder()
    reward(completions=[RIGHT], tests=[SQUARE_TESTS])  # the servers are up
    with servers_killed(reward.sandbox):
        out = reward(completions=[slow_right, slow_wrong], tests=[SQUARE_TESTS] * 2,
                     log_metric=recorder.log_metric, log_extra=recorder.log_extra)  # fmt: skip
    assert out == [None, None]
    assert recorder.metrics["code_reward_fast/infra_failures"] == [1.0]
    assert all(text.startswith("sandbox failure") for text in recorder.extra["code_reward_fast/outcome"])
    # Failures are not cached: the same completions are run again once the sandbox is healthy.
    assert reward(completions=[slow_right, slow_wrong], tests=[SQUARE_TESTS] * 2) == [1.0, 0.0]


# -- reward hacking ----------------------------------------------------------------------------------------------

HACKS = {
    "always_equal_object": """
        class Anything:
            def __eq__(self, other): return True
            def __ne__(self, other): return False
            __hash__ = object.__hash__
        def square(x):
            return Anything()
        """,
    "int_subclass_equal_to_everything": """
        class Sneaky(int):
            def __eq__(self, other): return True
            __hash__ = int.__hash__
        def square(x):
            return Sneaky(-7)
        """,
    "sys_exit_zero_at_load": "import sys\nsys.exit(0)\ndef square(x):\n    return None\n",
    "sys_exit_zero_in_call": "import sys\ndef square(x):\n    sys.exit(0)\n",
    "os_exit_zero_at_load": "import os\nos._exit(0)\n",
    "os_exit_zero_in_call": "import os\ndef square(x):\n    os._exit(0)\n",
    "raises_keyboard_interrupt": "def square(x):\n    raise KeyboardInterrupt\n",
    "rebinds_assertion_error_in_builtins": """
        import builtins
        builtins.AssertionError = type("Nope", (Exception,), {})
        def square(x):
            return None
        """,
    "shadows_assertion_error_globally": "AssertionError = type('Nope', (Exception,), {})\ndef square(x):\n    return None\n",
    "monkeypatches_builtins_the_test_uses": """
        import builtins
        builtins.abs = lambda x: 0
        builtins.isinstance = lambda *a: True
        builtins.type = lambda *a: int
        def square(x):
            return None
        """,
    "shadows_test_names_with_globals": "abs = lambda x: 0\nint = float\ndef square(x):\n    return 0.5\n",
    "prints_fake_results": """
        import sys
        print("4 passed in 0.01s\\nALL TESTS PASSED\\n{\\"status\\": \\"pass\\"}")
        sys.stderr.write("OK\\n")
        def square(x):
            return None
        """,
    "forges_result_lines_on_inherited_fds": """
        import os
        def square(x):
            for fd in range(3, 64):
                for line in (b"R 0 pass\\n", b'["R", 0, "pass", "", null, 0.0]\\n'):
                    try:
                        os.write(fd, line)
                    except OSError:
                        pass
            return None
        """,
    "kills_its_parent": "import os\ndef square(x):\n    os.kill(os.getppid(), 9)\n    return None\n",
}
HACK_TESTS = SQUARE_TESTS + ["assert abs(square(2) - 4) < 1e-9", "assert type(square(1)) is int",
                             "assert int(square(2)) == 4"]  # fmt: skip


@pytest.mark.parametrize("mode", ["isolated", "fast"])
def test_reward_hacks_get_no_reward(mode):
    names = list(HACKS)
    completions = [f"```python\n{textwrap.dedent(HACKS[n]).strip()}\n```" for n in names]
    binary = make_code_reward(mode=mode, timeout_s=0.5, workers=2)
    rate = make_pass_rate_reward(mode=mode, timeout_s=0.5, workers=2)
    assert dict(zip(names, binary(completions=completions, tests=[HACK_TESTS] * len(names)))) == dict.fromkeys(
        names, 0.0
    )
    assert dict(zip(names, rate(completions=completions, tests=[HACK_TESTS] * len(names)))) == dict.fromkeys(
        names, 0.0
    )
    # The honest answer still earns full reward from the same sandbox afterwards.
    assert binary(completions=[RIGHT], tests=[HACK_TESTS]) == [1.0]


# Hacks that once slipped through the sandbox these rewards run on: a patched stdlib module the test uses, and a
# returned value whose own arithmetic lies. Tests now see pristine stdlib copies and plain values.
SANDBOX_GAPS = {
    "patches_a_stdlib_module_the_test_uses": (
        "import math\nmath.isclose = lambda *a, **k: True\ndef square(x):\n    return 0.0\n",
        ["assert math.isclose(square(1.5), 2.25)"],
    ),
    "float_subclass_fakes_arithmetic_in_the_test": (
        (
            "class F(float):\n    def __sub__(self, other): return 0.0\n    __hash__ = float.__hash__\n"
            "def square(x):\n    return F(0)\n"
        ),
        ["assert abs(square(1.5) - 2.25) < 1e-9"],
    ),
}


@pytest.mark.parametrize("name", sorted(SANDBOX_GAPS))
def test_formerly_open_sandbox_gaps_get_no_reward(name):
    program, tests = SANDBOX_GAPS[name]
    assert code_reward(completions=[f"```python\n{program}```"], tests=[tests]) == [0.0]


# -- metrics and logging -----------------------------------------------------------------------------------------


def test_batch_figures_and_per_completion_outcomes_are_logged_through_trl_hooks(fast):
    rewards.clear_cache()  # a full run cached by an earlier test would answer HALF_RIGHT with all its statuses
    recorder = Recorder()
    looping = "```python\ndef square(x):\n    while True:\n        pass\n```"
    out = fast(completions=[RIGHT, HALF_RIGHT, "no code, sorry", looping], tests=[SQUARE_TESTS] * 4,
               log_metric=recorder.log_metric, log_extra=recorder.log_extra)  # fmt: skip
    assert out == [1.0, 0.0, 0.0, 0.0]
    m = {k: v[0] for k, v in recorder.metrics.items()}
    assert m["code_reward_fast/extraction_failures"] == 0.25
    assert m["code_reward_fast/infra_failures"] == 0.0
    assert m["code_reward_fast/solved"] == 0.25
    # A binary reward stops at the first test not passed: tests after it that had not run yet are unexecuted, in
    # these figures too (a fast-mode test that ended before the stop reached the sandbox keeps its status).
    assert (1.0 + 0.25) / 4 <= m["code_reward_fast/pass_rate"] <= (1.0 + 0.5) / 4
    assert m["code_reward_fast/timeout_rate"] == pytest.approx(1 / 12)
    outcomes = recorder.extra["code_reward_fast/outcome"]
    assert outcomes[0] == "4/4 passed"
    assert outcomes[1].startswith(("1/4 passed (fail 1, unexecuted 2; first: fail", "2/4 passed (fail 2; first: fail",
                                   "1/4 passed (fail 2, unexecuted 1; first: fail"))
    assert outcomes[2] == "no code found"
    assert "timeout 1" in outcomes[3] and "unexecuted 3" in outcomes[3]


def test_logging_can_be_turned_off():
    recorder = Recorder()
    quiet = make_code_reward(mode="fast", workers=1, log_metrics=False, log_details=False)
    quiet(completions=[RIGHT], tests=[SQUARE_TESTS], log_metric=recorder.log_metric, log_extra=recorder.log_extra)
    assert recorder.metrics == {} and recorder.extra == {}


# -- one sandbox per process, reused; identical work runs once ---------------------------------------------------


def _children_of(pid: int) -> set[int]:
    children: set[int] = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as fh:
            children.update(int(c) for c in fh.read().split())
    return children


def test_one_sandbox_per_process_is_reused_and_the_caller_never_forks_per_test():
    reward = make_code_reward(mode="isolated", timeout_s=0.43, workers=2)
    reward(completions=[RIGHT], tests=[SQUARE_TESTS])
    sandbox, servers = reward.sandbox, set(reward.sandbox.server_pids)
    before = _children_of(os.getpid())
    for step in range(3):
        programs = [RIGHT.replace("x * x", f"x * x + {step} - {step}"), WRONG.replace("x + 1", f"x + 1 + {step}")]
        assert reward(completions=programs, tests=[SQUARE_TESTS] * 2) == [1.0, 0.0]
    assert reward.sandbox is sandbox and set(sandbox.server_pids) == servers
    # The fork servers are the execution service's, not the caller's children, and the caller started nothing.
    assert not servers & before and _children_of(os.getpid()) == before
    # Another reward function with the same settings shares the sandbox.
    assert make_pass_rate_reward(mode="isolated", timeout_s=0.43, workers=2).sandbox is sandbox


def test_identical_programs_run_once_across_the_batch_the_reward_functions_and_steps():
    rewards.clear_cache()
    batch = [RIGHT, RIGHT, WRONG, RIGHT, WRONG, HALF_RIGHT]
    assert code_reward(completions=batch, tests=[SQUARE_TESTS] * 6) == [1.0, 1.0, 0.0, 1.0, 0.0, 0.0]
    assert rewards.cache_info() == (6, 3, 3)
    assert pass_rate_reward(completions=batch, tests=[SQUARE_TESTS] * 6) == [1.0, 1.0, 0.0, 1.0, 0.0, 0.5]
    # The binary runs of WRONG and HALF_RIGHT stopped at their first failure: the pass rate runs those two in full
    # (RIGHT's stopped run passed every test, so it is a full run and answers both).
    assert rewards.cache_info() == (12, 5, 3)
    # A full run answers a binary reward too.
    assert code_reward(completions=batch, tests=[SQUARE_TESTS] * 6) == [1.0, 1.0, 0.0, 1.0, 0.0, 0.0]
    assert rewards.cache_info() == (18, 5, 3)
    # Same program, different tests: a different job.
    assert code_reward(completions=[RIGHT], tests=[SQUARE_TESTS[:2]]) == [1.0]
    assert rewards.cache_info() == (19, 6, 4)


def test_the_cache_can_be_turned_off_but_a_batch_still_runs_duplicates_once():
    rewards.clear_cache()
    uncached = make_code_reward(mode="fast", workers=1, cache_size=0)
    uncached(completions=[RIGHT, RIGHT], tests=[SQUARE_TESTS] * 2)
    uncached(completions=[RIGHT, RIGHT], tests=[SQUARE_TESTS] * 2)
    assert rewards.cache_info() == (4, 2, 0)


def test_importing_rewards_does_not_import_torch_or_trl():
    code = "import sys, evolvecoder_datasets.rewards; print(sorted({'torch', 'trl', 'transformers'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_preamble_that_breaks_every_program_raises_instead_of_training_on_zeros():
    from evolvecoder_datasets.errors import SandboxError

    broken = make_code_reward(mode="fast", workers=1, preamble="import a_module_the_sandbox_does_not_have")
    with pytest.raises(SandboxError, match="trivial program.*ModuleNotFoundError"):
        broken(completions=[RIGHT], tests=[SQUARE_TESTS])


def test_with_prompts_turns_published_rows_into_grpo_rows_that_the_rewards_read():
    datasets = pytest.importorskip("datasets")
    from evolvecoder_datasets.rewards import SYSTEM_PROMPT, with_prompts

    published = datasets.Dataset.from_dict(
        {"id": ["X_1"], "question": ["Write square(x)."], "tests": [SQUARE_TESTS]}
    )
    ds = with_prompts(published)
    assert ds.column_names == ["id", "question", "tests", "prompt"]
    assert ds[0]["prompt"] == [{"role": "system", "content": SYSTEM_PROMPT},
                               {"role": "user", "content": "Write square(x)."}]  # fmt: skip
    assert with_prompts(published, system_prompt=None)[0]["prompt"] == [{"role": "user", "content": "Write square(x)."}]
    assert code_reward(completions=[RIGHT], tests=ds["tests"]) == [1.0]
    with pytest.raises(SchemaError, match="question"):
        with_prompts(published.remove_columns("question"))
