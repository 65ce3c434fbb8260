"""extract_code on the shapes model answers really take."""

from __future__ import annotations

import pytest

from evolvecoder_datasets.execution import extract_code

BLOCK_A = "def a():\n    return 1"
BLOCK_B = "def b():\n    return 2"


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        (f"```python\n{BLOCK_A}\n```", BLOCK_A),
        (f"Here you go:\n```Python\n{BLOCK_A}\n```\nand improved:\n```py\n{BLOCK_B}\n```\nDone.", BLOCK_B),
        (f"<think>first try\n```python\n{BLOCK_A}\n```\n</think>\nFinal:\n```python\n{BLOCK_B}\n```", BLOCK_B),
        (f"<think>only thinking, then truncated ```python\n{BLOCK_A}\n```", ""),  # a draft is no answer
        (f"reasoning without an opening tag</think>\n```python\n{BLOCK_B}\n```", BLOCK_B),
        (f"```\n{BLOCK_A}\n```", BLOCK_A),
        (f"~~~python\n{BLOCK_A}\n~~~", BLOCK_A),
        (f"```python\n{BLOCK_A}\n", BLOCK_A),  # unterminated fence (length cut)
        (BLOCK_A, BLOCK_A),
        (f"The answer is below.\n\n{BLOCK_A}\n\nThis runs in O(1).", BLOCK_A),
        ([{"role": "assistant", "content": f"```python\n{BLOCK_B}\n```"}], BLOCK_B),
        ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": f"```python\n{BLOCK_A}\n```"}], BLOCK_A),
        (f"```json\n{{\"a\": 1}}\n```\n```python\n{BLOCK_A}\n```", BLOCK_A),
        ("", ""),
        (None, ""),
        ("I cannot help with that.", ""),
        ("```python\n```", ""),
        ("\x00\xff garbage ``` ``` ~~~", ""),
    ],
)
def test_extract_code_shapes(completion, expected):
    assert extract_code(completion) == expected


def test_first_all_and_longest_strategies():
    text = f"```python\n{BLOCK_A}\n```\n```python\n{BLOCK_B}\n    # longer\n```"
    assert extract_code(text, strategy="first") == BLOCK_A
    assert extract_code(text, strategy="all") == f"{BLOCK_A}\n\n{BLOCK_B}\n    # longer"
    assert extract_code(text, strategy="longest").startswith(BLOCK_B)
    with pytest.raises(ValueError):
        extract_code(text, strategy="middle")


def test_extract_never_raises_on_random_bytes():
    import random

    rng = random.Random(0)
    alphabet = "`~<>/thinkpy \n\t:()=\"'#abc"
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 200)))
        assert isinstance(extract_code(text), str)


@pytest.mark.parametrize(
    "completion",
    [
        [{"type": "text", "text": "```python\ndef f():\n    return 1\n```"}],
        {"role": "assistant", "content": [{"type": "text", "text": "```python\ndef f():\n"},
                                          {"type": "text", "text": "    return 1\n```"}]},
        [{"role": "user", "content": "Write f."},
         {"role": "assistant", "content": [{"type": "thinking", "thinking": "easy"},
                                           {"type": "text", "text": "```python\ndef f():\n    return 1\n```"}]}],
    ],
    ids=["bare-parts", "message-with-parts", "conversation-with-parts"],
)
def test_content_given_as_a_list_of_parts_is_read(completion):
    # Multimodal gateways and some reasoning models answer with content parts; a bare list of parts was once
    # taken for a list of messages and gave "".
    assert extract_code(completion) == "def f():\n    return 1"
