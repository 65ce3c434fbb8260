"""One reader of model text: every caller that takes code or tests out of an answer reads it the same way.

Each answer below is a template: ``{code}`` marks the text that is the answer, ``{decoy}`` text that is not (it sits in
reasoning). Filled once with a program and once with asserts, every reader must find the answer and never the
decoy: the reward's code extraction (run for real through ``code_reward`` in the sandbox), the test writers' parser,
and the seed sources' fence stripper.
"""

from __future__ import annotations

import pytest

from evolvecoder_datasets.chat import fenced_blocks, strip_thinking
from evolvecoder_datasets.execution import extract_code
from evolvecoder_datasets.prompts._common import parse_tests_answer
from evolvecoder_datasets.prompts.parsing import extract_asserts, strip_fences
from evolvecoder_datasets.rewards import make_code_reward
from evolvecoder_datasets.sources.base import strip_code_fences

ANSWERS = {
    "bare fence": "```python\n{code}\n```",
    "closed think": "<think>\nfirst try:\n```python\n{decoy}\n```\n</think>\n```python\n{code}\n```",
    "closed THINKING, tilde fence": "<THINKING>```python\n{decoy}\n```</THINKING>Final answer:\n~~~python\n{code}\n~~~",
    "closed reasoning, py tag": "<reasoning>```py\n{decoy}\n```</reasoning>\n```py\n{code}\n```",
    "closed reflection, python3 tag": "<reflection>\n```python\n{decoy}\n```\n</reflection>\n```python3\n{code}\n```",
    "dangling close (pre-opened template)": "I tried\n```python\n{decoy}\n```\nbut no.</think>\n```python\n{code}\n```",
    "dangling close of another family": "musing ```python\n{decoy}\n```\n</reasoning>```python\n{code}\n```",
    "unclosed think (cut by max_tokens)": "```python\n{code}\n```\n<think>Maybe better:\n```python\n{decoy}\n```",
    "unclosed think of another family": "~~~\n{code}\n~~~\n<Reasoning>\n~~~\n{decoy}\n~~~\nand then",
    "unclosed fence": "Here it is:\n```python\n{code}\n",
    "opening fence after prose on its line": "Sure! ```python\n{code}\n```",
    "upper-case language tag": "```Python\n{code}\n```",
    "untagged fence": "```\n{code}\n```",
    "other languages around": "```text\nnot code at all\n```\n```json\n[1, 2]\n```\n```python\n{code}\n```",
    "four backticks around a three-backtick line": "````python\n{code}\n# ```\n````",
    "tildes around a backtick line": "~~~python\n{code}\n# ```\n~~~",
    "indented closing fence": "1. Solution:\n   ```python\n{code}\n   ```",
    "no fence at all": "{code}",
}

PROGRAM, DECOY_PROGRAM = "def f(x):\n    return x + 1", "def f(x):\n    return x"
TESTS, DECOY_TESTS = "assert f(1) == 2\nassert f(2) == 3", "assert f(1) == 0"


def _fill(template: str, code: str, decoy: str) -> str:
    return template.replace("{code}", code).replace("{decoy}", decoy)


def _code(text: str) -> str:
    """What a reader returned, less the trailing comment line and indentation two of the answers carry."""
    return text.rstrip().removesuffix("# ```").rstrip()


@pytest.mark.parametrize("name", list(ANSWERS))
def test_every_reader_finds_the_answer_block_and_never_the_reasoning(name):
    answer = _fill(ANSWERS[name], PROGRAM, DECOY_PROGRAM)
    outside = strip_thinking(answer)
    assert "return x\n" not in outside + "\n", "reasoning survived"
    blocks = [body for _, body in fenced_blocks(outside) if body.strip()]
    assert all(PROGRAM in body for body in blocks[-1:]), blocks
    assert _code(extract_code(answer)) == PROGRAM
    assert _code(strip_fences(outside)) == PROGRAM
    if outside.startswith(("```", "~~~")) and len(blocks) == 1:  # a seed solution: one fence around the code
        assert _code(strip_code_fences(outside)) == PROGRAM


@pytest.mark.parametrize("name", list(ANSWERS))
def test_the_test_writers_parser_takes_the_asserts_the_reward_would_run(name):
    answer = _fill(ANSWERS[name], TESTS, DECOY_TESTS)
    assert parse_tests_answer(answer).tests == TESTS.splitlines()
    assert extract_asserts(answer) == TESTS.splitlines()
    assert _code(extract_code(answer)) == TESTS


def test_code_reward_runs_the_block_every_reader_finds():
    """The reward, through the real sandbox: 1.0 on every answer means it ran the answer's block, not the decoy."""
    names = list(ANSWERS)
    completions = [_fill(ANSWERS[n], PROGRAM, DECOY_PROGRAM) for n in names]
    reward = make_code_reward(failing_value=-1.0)
    scores = reward(prompts=[""] * len(names), completions=completions, tests=[["assert f(1) == 2"]] * len(names))
    assert dict(zip(names, scores)) == dict.fromkeys(names, 1.0)
    decoys_only = [_fill(ANSWERS[n], DECOY_PROGRAM, PROGRAM) for n in names if "{decoy}" in ANSWERS[n]]
    scores = reward(prompts=[""] * len(decoys_only), completions=decoys_only,
                    tests=[["assert f(1) == 2"]] * len(decoys_only))  # fmt: skip
    assert scores == [-1.0] * len(decoys_only), "a reward took code out of the reasoning"


def test_several_python_blocks_the_reward_takes_the_last_and_the_test_writer_all():
    answer = "```python\nassert f(1) == 2\n```\nAnd an edge case:\n```python\nassert f(0) == 1\n```"
    assert [body for _, body in fenced_blocks(answer)] == ["assert f(1) == 2\n", "assert f(0) == 1\n"]
    assert extract_code(answer) == "assert f(0) == 1"
    assert extract_code(answer, strategy="all") == "assert f(1) == 2\n\nassert f(0) == 1"
    assert parse_tests_answer(answer).tests == ["assert f(1) == 2", "assert f(0) == 1"]


@pytest.mark.parametrize(
    ("text", "outside"),
    [
        ("<think>a</think>b<THINKING>c</THINKING>d", "bd"),
        ("reasoning leaked</think>answer", "answer"),
        ("<think>a</think> b </think> c", "c"),
        ("answer<think>cut off by max_tokens", "answer"),
        ("<think>only a draft, cut off", ""),
        ("<think>a <think> b</think> c</think> answer", "answer"),
        ("no tags", "no tags"),
    ],
)
def test_strip_thinking_rules(text, outside):
    assert strip_thinking(text) == outside


def test_an_answer_that_is_only_unfinished_reasoning_has_no_code_and_no_tests():
    from evolvecoder_datasets.errors import LLMResponseError

    answer = "<think>Let me write it.\n```python\nassert f(1) == 2\n```\nHmm, but"
    assert extract_code(answer) == ""
    with pytest.raises(LLMResponseError) as info:
        parse_tests_answer(answer)
    assert info.value.reason == "empty"


def test_readers_never_raise_on_random_text():
    import random

    rng = random.Random(7)
    alphabet = "`~<>/thinkpy \n\t:()=\"'#abc{}[]"
    for _ in range(400):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 160)))
        strip_thinking(text)
        fenced_blocks(text)
        assert isinstance(extract_code(text), str)
        assert isinstance(extract_asserts(text), list)
