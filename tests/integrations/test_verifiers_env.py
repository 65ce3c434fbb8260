"""verifiers 0.4.0's own evaluation path (``vf-eval``) on a Taskset package built from a round, against a loopback
OpenAI-compatible server (``ScriptedOpenAIServer``, answering with the batch's completions), scored by our judge.

``vf-eval <module name>`` runs in a subprocess: verifiers' loader imports the package by its single module name, its
null harness runs its own chat program (a uv script verifiers prepares: it needs ``uv``, which verifiers installs
with pip, and PyPI the first time) that talks to the model through verifiers' interception server, and each
task's ``@vf.reward`` runs at scoring time. What cannot run here: prime's hosted runtimes and models; the
subprocess runtime and a scripted model stand in. verifiers and its dependencies come from
``.cache/trainers/verifiers`` (scripts/install_trainers.sh). The 64-rollout runs are slow-marked (~1.5 min); a
four-rollout run with the reward in vf-eval's own process runs by default.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer

from ..rewards.test_rewards import servers_killed
from .conftest import ROOT, TOKEN, trainer_packages


@pytest.fixture(scope="module")
def verifiers_path():
    return trainer_packages("verifiers")


@pytest.fixture(scope="module")
def environment(tmp_path_factory, reward_batch):
    """The package built from a round pushed to a local store and loaded back."""
    from datasets import Dataset

    from evolvecoder_datasets.integrations.verifiers_env import build_verifiers_environment
    from evolvecoder_datasets.rounds import load_round, push_round

    _, tests, limits, _ = reward_batch
    rows = Dataset.from_dict({"id": [f"P_{k}" for k in range(4)], "question": [f"Problem {k}." for k in range(4)],
                              "tests": [tests[16 * k] for k in range(4)],
                              "time_limit_s": [limits[16 * k] for k in range(4)]})  # fmt: skip
    store = tmp_path_factory.mktemp("store") / "run"
    push_round(rows, str(store), round=0, stats={"num_problems": 4})
    return build_verifiers_environment(load_round(str(store), round=0), tmp_path_factory.mktemp("envs"),
                                       name="evolvecoder_round0")  # fmt: skip


def scripted_model(completions):
    """A model that answers problem k's prompts with its 16 completions, one per rollout, in turn."""
    queues = {k: list(completions[16 * k: 16 * (k + 1)]) for k in range(4)}
    lock = threading.Lock()

    def respond(body):
        question = next(m["content"] for m in body["messages"] if m["role"] == "user")
        k = int(question.split()[1].rstrip("."))
        with lock:
            return queues[k].pop()

    return respond


def vf_eval(environment, verifiers_path, base_url, tmp_path, rollouts: int, env: dict):
    out = tmp_path / "vf-out"
    argv = ["evolvecoder_round0", "--model", "scripted", "--client.base-url", base_url,
            "--client.api-key-var", "SCRIPTED_KEY", "-n", "4", "-r", str(rollouts), "--output-dir", str(out),
            "--env.agent.harness.id", "null", "--env.agent.runtime.type", "subprocess", "--push", "false"]  # fmt: skip
    env = {**os.environ, **env, "SCRIPTED_KEY": "x",
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(environment), str(verifiers_path)])}  # fmt: skip
    code = "import sys; from verifiers.v1.cli.eval.main import main; sys.argv = ['vf-eval', *sys.argv[1:]]; main()"
    done = subprocess.run([sys.executable, "-c", code, *argv], env=env, capture_output=True, text=True,
                          timeout=900, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (traces,) = list(out.glob("*/traces.jsonl"))
    return [trace for line in traces.read_text().splitlines() for trace in json.loads(line)["traces"]]


def test_verifiers_own_eval_scores_with_the_sandbox_of_its_own_process(environment, verifiers_path, tmp_path,
                                                                       reward_batch, expected_rewards):  # fmt: skip
    """One rollout per problem, the reward computed in vf-eval's process (no service): a quick check of that path."""
    completions = [reward_batch[0][16 * k + k] for k in range(4)]  # a right, right, right and another per problem
    completions[3] = reward_batch[0][16 * 3 + 10]  # a wrong one
    expected = {c: expected_rewards[reward_batch[0].index(c)] for c in completions}
    assert sorted(expected.values()) == [0.0, 1.0, 1.0, 1.0]
    answers = {k: c for k, c in enumerate(completions)}
    respond = lambda body: answers[int(next(m["content"] for m in body["messages"] if m["role"] == "user")
                                       .split()[1].rstrip("."))]  # fmt: skip
    with ScriptedOpenAIServer(respond) as model:
        traces = vf_eval(environment, verifiers_path, model.base_url, tmp_path, 1, {"EVOLVECODER_REWARD_MODE": "fast"})
    assert {t["nodes"][-1]["message"]["content"]: t["rewards"]["code_reward"]["score"] for t in traces} == expected


@pytest.mark.slow  # each rollout starts verifiers' chat program: ~1.5 min for 64 on 2 cores
def test_verifiers_own_eval_scores_the_round_with_code_rewards_values(environment, verifiers_path, server, tmp_path,
                                                                      reward_batch, expected_rewards):  # fmt: skip
    completions = reward_batch[0]
    expected = dict(zip(completions, expected_rewards))
    with ScriptedOpenAIServer(scripted_model(completions)) as model:
        traces = vf_eval(environment, verifiers_path, model.base_url, tmp_path, 16,
                         {"EVOLVECODER_REWARD_URL": server.url, "EVOLVECODER_REWARD_TOKEN": TOKEN})  # fmt: skip
    assert len(traces) == 64 and all(trace["ok"] for trace in traces)
    got = {}
    for trace in traces:
        reply = trace["nodes"][-1]["message"]["content"]
        got[reply] = trace["rewards"]["code_reward"]["score"]
    assert got == expected  # every completion answered once, each scored as code_reward scores it
    assert server.service.counts["completions"] == 64


@pytest.mark.slow
def test_a_killed_fork_server_leaves_the_rollout_errored_not_scored_zero(environment, verifiers_path, server,
                                                                        tmp_path):  # fmt: skip
    slow = "```python\nimport time\ntime.sleep(0.3)\ndef f(*a):\n    return None\n```"
    with ScriptedOpenAIServer(lambda body: slow) as model, servers_killed(server.service.rewards["binary"].sandbox):
        traces = vf_eval(environment, verifiers_path, model.base_url, tmp_path, 1,
                         {"EVOLVECODER_REWARD_URL": server.url, "EVOLVECODER_REWARD_TOKEN": TOKEN})  # fmt: skip
    assert len(traces) == 4
    for trace in traces:
        assert not trace["ok"] and "sandbox" in json.dumps(trace["errors"]).lower()  # our SandboxCrashed
        assert (trace["rewards"].get("code_reward") or {}).get("score") is None
