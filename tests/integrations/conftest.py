"""Shared pieces of the trainer-integration tests: the 64-completion batch, the reward settings, the trainers'
packages (installed by scripts/install_trainers.sh into .cache/trainers/), and a reward server on loopback."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from evolvecoder_datasets import rewards
from evolvecoder_datasets.integrations.server import RewardServer, ServeConfig
from evolvecoder_datasets.rewards import RewardConfig, make_code_reward

ROOT = Path(__file__).resolve().parents[2]
TRAINERS = ROOT / ".cache" / "trainers"
TOKEN = "test-token-7f3a"
#: The settings every test here scores with, in process and in the server (fast mode keeps the suite quick).
SETTINGS = {"mode": "fast", "timeout_s": 0.5, "workers": 2}
LIMIT_S = 0.25  # the rows' calibrated limit: a looping completion costs two of these


def trainer_packages(folder: str) -> Path:
    """Put ``.cache/trainers/<folder>`` on ``sys.path`` (skip where scripts/install_trainers.sh has not run)."""
    path = TRAINERS / folder
    if not (path / ".stamp").exists():
        pytest.skip(f"{path} is missing: run scripts/install_trainers.sh (make test does)")
    if str(path) not in sys.path:
        sys.path.append(str(path))  # after the venv: its packages win where both have one
    return path


def _bench_reward():
    spec = importlib.util.spec_from_file_location("_bench_reward", ROOT / "benchmarks" / "bench_reward.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def malformed(problem_id: str, k: int) -> str:
    """Completions a model writes that hold no runnable answer: prose only, or a fence around broken code."""
    if k % 2:
        return f"<think>{problem_id}</think>\nI am not sure how to solve this one; try a loop over the input."
    return f"Here it is:\n```python\ndef broken(:\n    return {k}\n```\n"


CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")  # fmt: skip


@pytest.fixture(scope="session")
def tokenizer():
    """A real Hugging Face fast tokenizer: byte-level BPE (every text round-trips) with ChatML special tokens, the
    chat format of Qwen's models (no model download: the vocabulary is the 256 byte symbols)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    backend.decoder = decoders.ByteLevel()
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                  additional_special_tokens=["<|im_start|>"], clean_up_tokenization_spaces=False)
    tok.chat_template = CHATML
    return tok


@pytest.fixture(scope="session")
def reward_batch():
    """64 completions of 4 real problems x 35 tests (benchmarks/bench_reward.py's): per problem 9 right, 4 wrong,
    1 looping and 2 malformed; with each row's tests and limit. Returns ``(completions, tests, limits, kinds)``."""
    bench = _bench_reward()
    completions, tests, limits, kinds = [], [], [], []
    for problem in bench.problems():
        programs = ([("right", problem["right"][k % 2]) for k in range(9)]
                    + [("wrong", problem["wrong"][k % 2]) for k in range(4)] + [("loops", problem["loops"])])
        for k, (kind, program) in enumerate(programs):
            completions.append(f"<think>{problem['id']}, sample {k}.</think>\n```python\n# sample {k}\n{program}\n```")
            kinds.append(kind)
        for k in range(2):
            completions.append(malformed(problem["id"], k))
            kinds.append("malformed")
        tests += [problem["tests"]] * 16
        limits += [LIMIT_S] * 16
    assert len(completions) == 64 and all(len(t) == 35 for t in tests)
    return completions, tests, limits, kinds


@pytest.fixture(scope="session")
def expected_rewards(reward_batch):
    """``code_reward``'s values on the batch, with the tests' settings, computed in this process from a cold cache."""
    completions, tests, limits, _ = reward_batch
    rewards.clear_cache()
    values = make_code_reward(**SETTINGS)(completions=completions, tests=tests, time_limit_s=limits)
    rewards.clear_cache()
    return values


@pytest.fixture(scope="session")
def expected_pass_rates(reward_batch):
    completions, tests, limits, _ = reward_batch
    rewards.clear_cache()
    values = make_code_reward(kind="pass_rate", **SETTINGS)(completions=completions, tests=tests, time_limit_s=limits)
    rewards.clear_cache()
    return values


@pytest.fixture
def server():
    """A reward server on a free loopback port, with the tests' settings and a token (stopped after the test)."""
    rewards.clear_cache()
    with RewardServer(ServeConfig(port=0, token=TOKEN, reward=RewardConfig(**SETTINGS))) as running:
        yield running
    rewards.clear_cache()
