"""verl 0.9.1's own loaders and reward manager reach our judge: ``get_custom_reward_fn`` loads
``evolvecoder_datasets/integrations/verl.py`` by its file path (as ``custom_reward_function.path`` does), verl's
``RLHFDataset`` reads a round exported with ``export_verl_parquet``, and verl's ``NaiveRewardManager.run_single``
decodes each response from token ids and calls our ``compute_score`` with the dataset row's ``ground_truth`` and
``extra_info``.

What cannot run here: verl's trainer (FSDP/Megatron workers, vLLM/SGLang rollouts on GPUs, Ray actors). The reward
manager is driven directly with the ``DataProto`` a rollout would hand it (prompt and response token ids of a real
byte-level tokenizer, the row's non-tensor fields). verl is installed with --no-deps with the few pure packages its
import needs (tensordict, pyvers, omegaconf, antlr4 4.9.3; scripts/install_trainers.sh).
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from evolvecoder_datasets.errors import SandboxCrashed

from ..rewards.test_rewards import servers_killed
from .conftest import SETTINGS, TOKEN, trainer_packages


@pytest.fixture(scope="module")
def verl():
    trainer_packages("rl")
    import verl

    return verl


@pytest.fixture(scope="module")
def round_parquet(tmp_path_factory, reward_batch):
    """A round pushed to a local store, loaded back with load_round, exported to verl's parquet layout."""
    from datasets import Dataset

    from evolvecoder_datasets.integrations.verl import export_verl_parquet
    from evolvecoder_datasets.rounds import load_round, push_round

    _, tests, limits, _ = reward_batch
    rows = Dataset.from_dict({"id": [f"P_{i}" for i in range(4)], "question": [f"Problem {i}." for i in range(4)],
                              "tests": [tests[16 * i] for i in range(4)], "time_limit_s": [limits[16 * k] for k in range(4)]})  # fmt: skip
    store = tmp_path_factory.mktemp("store") / "run"
    push_round(rows, str(store), round=0, stats={"num_problems": 4})
    path = tmp_path_factory.mktemp("verl") / "train.parquet"
    return export_verl_parquet(load_round(str(store), round=0), path)


def reward_fn(reward_kwargs):
    """verl's own loader of ``custom_reward_function``, given the path of our module file."""
    from omegaconf import OmegaConf
    from verl.trainer.ppo.reward import get_custom_reward_fn

    import evolvecoder_datasets.integrations.verl as ours

    config = OmegaConf.create({"reward": {"custom_reward_function": {
        "path": ours.__file__, "name": "compute_score", "reward_kwargs": reward_kwargs}}})  # fmt: skip
    return get_custom_reward_fn(config)


def rlhf_rows(path, tokenizer, tmp_path):
    from omegaconf import OmegaConf
    from verl.utils.dataset.rl_dataset import RLHFDataset

    config = OmegaConf.create({"max_prompt_length": 4096, "filter_overlong_prompts": False,
                               "cache_dir": str(tmp_path / "verl-cache")})  # fmt: skip
    dataset = RLHFDataset(data_files=[path], tokenizer=tokenizer, config=config)
    return [dataset[i] for i in range(len(dataset))]


def manager_rewards(compute_score, tokenizer, rows, completions):
    """verl's NaiveRewardManager on one DataProto per response (row ``i // 16`` for completion ``i``), concurrently
    as its reward loop runs them."""
    import torch
    from omegaconf import OmegaConf
    from verl import DataProto
    from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager

    manager = NaiveRewardManager(OmegaConf.create({}), tokenizer, compute_score)

    def proto(row, completion):
        prompt = tokenizer.apply_chat_template(row["raw_prompt"], tokenize=False, add_generation_prompt=True)
        prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        response_ids = tokenizer(completion + tokenizer.eos_token, add_special_tokens=False)["input_ids"]
        pad = [tokenizer.pad_token_id] * 7  # a padded response, as rollouts batch them
        tensors = {"prompts": torch.tensor([prompt_ids]), "responses": torch.tensor([response_ids + pad]),
                   "attention_mask": torch.tensor([[1] * (len(prompt_ids) + len(response_ids)) + [0] * len(pad)])}
        non_tensors = {key: np.array([row[key]], dtype=object) for key in ("data_source", "reward_model", "extra_info")}
        return DataProto.from_dict(tensors=tensors, non_tensors=non_tensors)

    async def main():
        return await asyncio.gather(*(manager.run_single(proto(rows[i // 16], c)) for i, c in enumerate(completions)))

    return [out["reward_score"] for out in manager.loop.run_until_complete(main())]  # the loop verl's worker runs


def test_a_round_exports_to_rows_verls_dataset_reads(verl, round_parquet, tokenizer, tmp_path):
    rows = rlhf_rows(round_parquet, tokenizer, tmp_path)
    assert len(rows) == 4  # RLHFDataset drops rows whose prompt is not a message list: none was dropped
    assert [m["role"] for m in rows[0]["raw_prompt"]] == ["system", "user"]
    assert rows[2]["reward_model"]["style"] == "rule" and rows[2]["extra_info"]["id"] == "P_2"
    assert rows[3]["index"] == 3 and rows[0]["ability"] == "code"


def test_verls_reward_manager_gets_code_rewards_values_in_process(verl, round_parquet, tokenizer, tmp_path,
                                                                   reward_batch, expected_rewards):  # fmt: skip
    completions = reward_batch[0]
    rows = rlhf_rows(round_parquet, tokenizer, tmp_path)
    scores = manager_rewards(reward_fn(dict(SETTINGS)), tokenizer, rows, completions)
    assert scores == expected_rewards


def test_verls_reward_manager_gets_code_rewards_values_through_the_service(verl, round_parquet, tokenizer, tmp_path,
                                                                           server, reward_batch, expected_rewards):  # fmt: skip
    completions = reward_batch[0]
    rows = rlhf_rows(round_parquet, tokenizer, tmp_path)
    scores = manager_rewards(reward_fn({"url": server.url, "token": TOKEN}), tokenizer, rows, completions)
    assert scores == expected_rewards
    assert server.service.counts["completions"] == 64


def test_a_killed_fork_server_raises_in_verl_instead_of_scoring_zero(verl, round_parquet, tokenizer, tmp_path):
    from evolvecoder_datasets.rewards import make_code_reward

    rows = rlhf_rows(round_parquet, tokenizer, tmp_path)
    slow = "```python\nimport time\nimport time\ntime.sleep(0.3)\n```"
    sandbox = make_code_reward(**SETTINGS).sandbox  # the process's sandbox for these settings, shared with verl's call
    sandbox.start()
    with servers_killed(sandbox), pytest.raises(SandboxCrashed):
        manager_rewards(reward_fn(dict(SETTINGS)), tokenizer, rows, [slow])


def test_contest_rows_keep_their_checker_through_verls_dataset_and_reward_manager(verl, tokenizer, tmp_path):
    """Problem packages (a Kattis validator, a testlib checker, a float tolerance) exported for verl: the checker
    travels in ``ground_truth`` and judges the responses verl's manager hands to ``compute_score``."""
    from pathlib import Path

    from evolvecoder_datasets.integrations.verl import export_verl_parquet
    from evolvecoder_datasets.sources.problem_package import load_problem_packages

    packages = load_problem_packages(Path(__file__).resolve().parent.parent / "data" / "problem_packages")
    path = export_verl_parquet(packages, tmp_path / "contest.parquet")
    rows = rlhf_rows(path, tokenizer, tmp_path)
    completions, expected = [], []
    for package in packages:
        python = {s["verdict"]: s["source"] for s in package["submissions"] if s["language"] == "python"}
        for k in range(16):
            verdict = "accepted" if k % 2 == 0 else "wrong_answer"
            completions.append(f"```python\n{python[verdict]}\n```")
            expected.append(1.0 if verdict == "accepted" else 0.0)
    assert {p["checker"]["contract"] for p in packages if p["checker"]} == {"kattis", "testlib"}
    assert manager_rewards(reward_fn(dict(SETTINGS)), tokenizer, rows, completions) == expected
