"""The reward functions inside a real ``trl.GRPOTrainer`` on CPU, on HumanEval rows and their real asserts.

The tiny random Llama speaks a word-level vocabulary whose "words" are whole fenced programs (right and wrong
HumanEval solutions), so its random samples are a mix of passing and failing code. Each logged completion is then
re-judged with an independent sandbox, and the rewards the trainer logged must match.
"""

from __future__ import annotations

import math

import pytest

from evolvecoder_datasets.execution import Sandbox, extract_code
from evolvecoder_datasets.rewards import async_pass_rate_reward, code_reward

pytest.importorskip("trl")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")
datasets = pytest.importorskip("datasets")

PROBLEMS = ("HumanEval_23", "HumanEval_45", "HumanEval_27", "HumanEval_55")
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} <|end|> {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|> {% endif %}"
)
SPECIAL = ["<unk>", "<pad>", "<|end|>", "<|user|>", "<|assistant|>", "<|system|>"]


def _fenced(code: str) -> str:
    # On lines of its own: the decoder joins tokens with a space, and a fence must close on its own line.
    return f"\n```python\n{code.strip()}\n```\n"


@pytest.fixture(scope="module")
def humaneval_rows():
    from evolvecoder_datasets.sources import load_humaneval

    ds = load_humaneval()
    rows = {row["id"]: row for row in ds if row["id"] in PROBLEMS}
    assert set(rows) == set(PROBLEMS)
    return [rows[i] for i in PROBLEMS]


@pytest.fixture(scope="module")
def train_dataset(humaneval_rows):
    return datasets.Dataset.from_list(
        [
            {"prompt": [{"role": "user", "content": row["question"]}], "tests": row["tests"], "id": row["id"]}
            for row in humaneval_rows
        ]
    )


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory, humaneval_rows):
    """A 1-layer random Llama whose tokens are whole programs: each problem's reference and a wrong stub."""
    programs = []
    for row in humaneval_rows:
        programs.append(_fenced(row["solutions"][0]))
        programs.append(_fenced(f"def {row['entry_point']}(*args):\n    return None"))
    vocab = {token: i for i, token in enumerate(SPECIAL + programs)}
    backend = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=backend, unk_token="<unk>", pad_token="<pad>", eos_token="<|end|>",
        clean_up_tokenization_spaces=False,
    )  # fmt: skip
    tokenizer.chat_template = CHAT_TEMPLATE
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=len(vocab), hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=2, max_position_embeddings=512, eos_token_id=vocab["<|end|>"],
        pad_token_id=vocab["<pad>"], bos_token_id=None,
    )  # fmt: skip
    model = transformers.LlamaForCausalLM(config)
    path = tmp_path_factory.mktemp("tiny-program-llama")
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


class _KeepLogs(transformers.TrainerCallback):
    """Copies the trainer's per-completion logs at every logging step (TRL keeps only the last batch)."""

    def __init__(self) -> None:
        self.trainer = None
        self.batches: list[dict] = []

    def on_log(self, args, state, control, **kwargs):
        logs = self.trainer._logs
        self.batches.append(
            {
                "prompt": list(logs["prompt"]),
                "completion": list(logs["completion"]),
                "rewards": {name: list(values) for name, values in logs["rewards"].items()},
                "extra": {name: list(values) for name, values in logs["extra"].items()},
            }
        )


def _train(model_dir, dataset, reward_funcs, output_dir, *, steps=2):
    from trl import GRPOConfig, GRPOTrainer

    args = GRPOConfig(
        output_dir=str(output_dir), use_cpu=True, bf16=False, max_steps=steps, per_device_train_batch_size=8,
        num_generations=4, max_completion_length=4, temperature=1.0, learning_rate=1e-3, logging_steps=1,
        save_strategy="no", report_to="none", seed=0, dataloader_num_workers=0,
    )  # fmt: skip
    keep = _KeepLogs()
    trainer = GRPOTrainer(
        model=model_dir, reward_funcs=reward_funcs, args=args, train_dataset=dataset, callbacks=[keep],
    )  # fmt: skip
    keep.trainer = trainer
    trainer.train()
    return trainer, keep


def _expected(completion, tests, sandbox) -> float:
    program = extract_code(completion)
    return 0.0 if not program else sandbox.run(program, tests).pass_rate


def test_rewards_reach_the_trainer_and_match_an_independent_judge(tiny_model_dir, train_dataset, tmp_path):
    trainer, keep = _train(tiny_model_dir, train_dataset, [code_reward, async_pass_rate_reward], tmp_path)

    history = [entry for entry in trainer.state.log_history if "rewards/code_reward/mean" in entry]
    assert len(history) == 2
    for entry in history:
        for key in ("rewards/code_reward/mean", "rewards/async_pass_rate_reward/mean", "code_reward/pass_rate",
                    "code_reward/solved", "code_reward/extraction_failures", "code_reward/infra_failures",
                    "async_pass_rate_reward/timeout_rate"):  # fmt: skip
            assert key in entry and math.isfinite(entry[key]), key
        assert entry["code_reward/infra_failures"] == 0.0

    tests_by_question = {row["prompt"][0]["content"]: row["tests"] for row in train_dataset}
    seen_rewards = []
    with Sandbox(workers=2, timeout_s=1.0, mode="isolated", preamble=None) as judge:
        for batch in keep.batches:
            assert len(batch["completion"]) == 8
            for i, (prompt, completion) in enumerate(zip(batch["prompt"], batch["completion"])):
                tests = tests_by_question[prompt[-1]["content"]]
                rate = _expected(completion, tests, judge)
                assert batch["rewards"]["async_pass_rate_reward"][i] == pytest.approx(rate)
                assert batch["rewards"]["code_reward"][i] == (1.0 if rate == 1.0 else 0.0)
                seen_rewards.append(batch["rewards"]["code_reward"][i])
            assert len(batch["extra"]["code_reward/outcome"]) == 8
    # The random policy wrote both right and wrong programs, so the rewards carried signal.
    assert 0.0 in seen_rewards and 1.0 in seen_rewards


def test_sandbox_failure_reaches_the_trainer_as_an_excluded_sample_not_a_zero(tiny_model_dir, train_dataset, tmp_path):
    from evolvecoder_datasets.rewards import make_code_reward

    # Its fork servers are killed under every job (a slow preamble keeps each job running long enough): the
    # reward must answer None, which TRL leaves out, not 0.0.
    broken = make_code_reward(name="broken_sandbox_reward", timeout_s=0.31, workers=1,
                              preamble="import time\ntime.sleep(0.5)")  # fmt: skip
    trainer, keep = _train(tiny_model_dir, train_dataset, [code_reward, _SabotagedReward(broken)], tmp_path,
                           steps=1)  # fmt: skip
    entry = next(e for e in trainer.state.log_history if "rewards/broken_sandbox_reward/mean" in e)
    batch = keep.batches[0]
    outcomes, values = batch["extra"]["broken_sandbox_reward/outcome"], batch["rewards"]["broken_sandbox_reward"]
    for outcome, value in zip(outcomes, values):
        if outcome == "no code found":  # nothing to run: the model's fault, scored without the sandbox
            assert value == 0.0
        else:
            assert outcome.startswith("sandbox failure") and math.isnan(value)
    failed = sum(math.isnan(v) for v in values)
    assert failed > 0 and entry["broken_sandbox_reward/infra_failures"] == failed / len(values)
    assert all(not math.isnan(r) for r in batch["rewards"]["code_reward"])


class _SabotagedReward:
    """Runs ``reward`` while its sandbox's fork servers are killed as fast as they start."""

    def __init__(self, reward) -> None:
        self.reward = reward
        self.__name__ = reward.__name__

    def __call__(self, **kwargs):
        from ..rewards.test_rewards import servers_killed

        with servers_killed(self.reward.sandbox):
            return self.reward(**kwargs)


@pytest.mark.slow
def test_one_grpo_step_with_smollm2_on_humaneval_rows(train_dataset, tmp_path):
    from trl import GRPOConfig, GRPOTrainer

    from evolvecoder_datasets.llm.transformers_backend import smollm2_path

    try:
        model_dir = smollm2_path(str(tmp_path / "models"))
    except ImportError as err:
        pytest.skip(f"SmolLM2 is not available: {err}")
    args = GRPOConfig(
        output_dir=str(tmp_path / "out"), use_cpu=True, bf16=False, max_steps=1, per_device_train_batch_size=4,
        num_generations=4, max_completion_length=64, temperature=0.8, logging_steps=1, save_strategy="no",
        report_to="none", seed=0, model_init_kwargs={"dtype": "float32"},
        # Checkpointing turns the KV cache off during generation: minutes instead of seconds on CPU.
        gradient_checkpointing=False,
    )  # fmt: skip
    trainer = GRPOTrainer(model=model_dir, reward_funcs=[code_reward], args=args,
                          train_dataset=train_dataset.select(range(1)))  # fmt: skip
    trainer.train()
    entry = next(e for e in trainer.state.log_history if "rewards/code_reward/mean" in e)
    assert 0.0 <= entry["rewards/code_reward/mean"] <= 1.0
    assert entry["code_reward/infra_failures"] == 0.0
    # A 135M instruct model writes code most of the time (64 tokens may cut a block short; extraction copes).
    assert entry["code_reward/extraction_failures"] < 1.0
