"""OpenRLHF 0.11.2's own remote-reward client (``openrlhf/utils/agent.py``) against our service on loopback.

``SingleTurnAgentExecutor.execute`` is driven whole: it tokenizes the chat-templated prompt, asks the engine for a
response, decodes prompt + response with the special tokens left in (``<|im_end|>`` included), and POSTs that
``query`` with ``prompts`` and ``labels`` to ``--remote_rm_url`` (no headers: the token rides in the URL). What
cannot run here: vLLM (a GPU engine). Its stand-in returns the batch's completion as token ids of a real byte-level
tokenizer with a ChatML template (Qwen's family of chat tokens), so the decoded query is what a Qwen model's would
be. OpenRLHF is installed with --no-deps (scripts/install_trainers.sh); its calling path needs aiohttp, torch,
transformers, sympy and pylatexenc, all present.
"""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

import pytest

from ..rewards.test_rewards import servers_killed
from .conftest import TOKEN, trainer_packages


@pytest.fixture(scope="module")
def agent():
    trainer_packages("rl")
    from openrlhf.utils import agent

    return agent


class Engine:
    """Stands in for OpenRLHF's vLLM engine: answers each prompt with its scripted completion and an end of turn."""

    def __init__(self, tokenizer, answers: dict[str, str]) -> None:
        self.tokenizer, self.answers = tokenizer, answers

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        prompt = self.tokenizer.decode(prompt_token_ids, skip_special_tokens=False)
        text = self.answers[prompt] + self.tokenizer.eos_token
        ids = self.tokenizer(text=text, add_special_tokens=False)["input_ids"]
        return SimpleNamespace(outputs=[SimpleNamespace(token_ids=ids, text=text, finish_reason="stop", logprobs=None)])


def run_executor(agent, tokenizer, url, completions, tests, limits):
    """OpenRLHF's per-sample reward path for every completion at once, as its rollout does; the outputs."""
    prompts = [tokenizer.apply_chat_template([{"role": "user", "content": f"Problem {i // 16}, sample {i}."}],
                                             tokenize=False, add_generation_prompt=True) for i in range(len(completions))]
    labels = [json.dumps({"tests": t, "time_limit_s": limit}) for t, limit in zip(tests, limits)]
    engine = Engine(tokenizer, dict(zip(prompts, completions)))
    executor = agent.SingleTurnAgentExecutor(remote_rm_url=url)
    params = SimpleNamespace(max_tokens=None, logprobs=None)

    async def main():
        return await asyncio.gather(*(executor.execute(p, label, params, 8192, tokenizer, engine)
                                      for p, label in zip(prompts, labels)))  # fmt: skip

    return asyncio.run(main())


def test_openrlhfs_own_client_gets_code_rewards_values(agent, tokenizer, server, reward_batch, expected_rewards):
    completions, tests, limits, _ = reward_batch
    outputs = run_executor(agent, tokenizer, f"{server.url}/openrlhf?token={TOKEN}", completions, tests, limits)
    assert [out["reward"] for out in outputs] == [[value] for value in expected_rewards]
    assert [out["scores"] for out in outputs] == [[value] for value in expected_rewards]


def test_openrlhf_without_the_token_in_its_url_gets_no_reward(agent, tokenizer, server, reward_batch):
    completions, tests, limits, _ = reward_batch
    before = server.service.counts["completions"]
    outputs = run_executor(agent, tokenizer, f"{server.url}/openrlhf", completions[:1], tests[:1], limits[:1])
    assert outputs[0]["reward"] is None  # OpenRLHF retried the 401 and gave up: no reward, not 0
    assert server.service.counts[("requests", "/openrlhf", 401)] == 5
    assert server.service.counts["completions"] == before


def test_a_killed_fork_server_leaves_openrlhfs_sample_without_a_reward_never_zero(agent, tokenizer, server):
    slow = "```python\nimport time\ndef f(x):\n    time.sleep(0.2)\n    return x\n```"
    tests = [[f"assert f({i}) == {i}" for i in range(4)]]
    with servers_killed(server.service.rewards["binary"].sandbox):
        outputs = run_executor(agent, tokenizer, f"{server.url}/openrlhf?token={TOKEN}", [slow], tests, [None])
    assert outputs[0]["reward"] is None
    assert server.service.counts[("requests", "/openrlhf", 503)] >= 1
    # Once the sandbox is left alone, OpenRLHF's retry of the same sample gets its real value.
    outputs = run_executor(agent, tokenizer, f"{server.url}/openrlhf?token={TOKEN}", [slow], tests, [None])
    assert outputs[0]["reward"] == [1.0]
