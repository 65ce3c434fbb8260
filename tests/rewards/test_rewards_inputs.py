"""The code rewards on the shapes of completions and test columns that TRL and real datasets hand them."""

from __future__ import annotations

import pytest

from evolvecoder_datasets.errors import SchemaError
from evolvecoder_datasets.rewards import make_code_reward, make_pass_rate_reward

SQUARE_TESTS = ["assert square(3) == 9", "assert square(-2) == 4"]
RIGHT = "```python\ndef square(x):\n    return x * x\n```"
WRONG = "```python\ndef square(x):\n    return x + 1\n```"
ECHO_PLUS_ONE = "```python\nprint(int(input()) + 1)\n```"


@pytest.fixture(scope="module")
def reward():
    return make_code_reward(mode="fast", timeout_s=1.0, workers=1)


def _trl_kwargs(n: int) -> dict:
    """The extras TRL's GRPOTrainer passes next to the dataset columns."""
    return {"prompts": ["p"] * n, "completion_ids": [[1, 2]] * n, "trainer_state": None,
            "log_extra": lambda column, values: None, "log_metric": lambda name, value: None}  # fmt: skip


def test_assistant_content_given_as_content_parts_is_scored(reward):
    def parts(text):
        return [{"role": "assistant", "content": [{"type": "text", "text": text}]}]

    out = reward(completions=[parts(RIGHT), parts(WRONG)], tests=[SQUARE_TESTS] * 2, **_trl_kwargs(2))
    assert out == [1.0, 0.0]


def test_content_parts_split_across_parts_are_joined(reward):
    split = [{"role": "assistant", "content": [{"type": "text", "text": RIGHT[:20]},
                                                 {"type": "text", "text": RIGHT[20:]}]}]  # fmt: skip
    assert reward(completions=[split], tests=[SQUARE_TESTS], **_trl_kwargs(1)) == [1.0]


def test_extract_none_reads_content_parts_too():
    raw = make_code_reward(mode="fast", workers=1, extract="none")
    code = "def square(x):\n    return x * x"
    out = raw(completions=[[{"role": "assistant", "content": [{"type": "text", "text": code}]}]],
              tests=[SQUARE_TESTS])  # fmt: skip
    assert out == [1.0]


def test_stdio_cases_stored_as_dicts_in_the_tests_column_run_as_stdin_stdout(reward):
    cases = [{"input": "1\n", "output": "2\n"}, {"input": "41\n", "output": "42\n"}]
    do_nothing = "```python\nx = 1\n```"
    out = reward(completions=[do_nothing, ECHO_PLUS_ONE], tests=[cases, cases], **_trl_kwargs(2))
    # A program that ignores stdin must not pass: str(dict) as an "assert" is a bare expression that always passes.
    assert out == [0.0, 1.0]


def test_apps_style_input_output_dict_in_the_tests_column_runs_as_stdin_stdout():
    rate = make_pass_rate_reward(mode="fast", workers=1)
    row = {"inputs": ["1\n", "5\n", "7\n"], "outputs": ["2\n", "6\n", "0\n"]}
    out = rate(completions=[ECHO_PLUS_ONE, "```python\nx = 1\n```"], tests=[row, row], **_trl_kwargs(2))
    assert out == [pytest.approx(2 / 3), 0.0]


@pytest.mark.parametrize("bad", [[1, 2], [None], [["assert True"]], [{"stdin": "1"}], {"cases": []}])
def test_tests_that_are_not_assert_strings_are_a_schema_error_not_a_free_pass(reward, bad):
    with pytest.raises(SchemaError):
        reward(completions=["```python\nx = 1\n```"], tests=[bad], **_trl_kwargs(1))


def test_rewards_stay_aligned_with_a_mixed_batch(reward):
    completions = [RIGHT, "", [{"role": "assistant", "content": WRONG}], "no code at all, sorry", RIGHT,
                   ECHO_PLUS_ONE, [{"role": "assistant", "content": None}]]  # fmt: skip
    tests = [SQUARE_TESTS, SQUARE_TESTS, SQUARE_TESTS, SQUARE_TESTS, None,
             [{"input": "2\n", "output": "3\n"}], SQUARE_TESTS]  # fmt: skip
    out = reward(completions=completions, tests=tests, **_trl_kwargs(len(completions)))
    assert out == [1.0, 0.0, 0.0, 0.0, None, 1.0, 0.0]
