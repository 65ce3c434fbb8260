"""The reward service on a real loopback socket: the same rewards as code_reward, limits, concurrency, failures."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from evolvecoder_datasets import rewards
from evolvecoder_datasets.errors import SandboxCrashed, SchemaError
from evolvecoder_datasets.integrations.client import RewardClient
from evolvecoder_datasets.integrations.server import RewardServer, ServeConfig
from evolvecoder_datasets.rewards import RewardConfig

from ..rewards.test_rewards import servers_killed
from .conftest import SETTINGS, TOKEN


def post(url: str, body, *, token: str | None = TOKEN, raw: bytes | None = None, path: str = "/score"):
    """(status, decoded JSON answer) of one POST."""
    data = raw if raw is not None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url + path, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


def metrics(url: str) -> dict[str, float]:
    req = urllib.request.Request(url + "/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    text = urllib.request.urlopen(req, timeout=30).read().decode()
    return {line.split(" ")[0]: float(line.split(" ")[1]) for line in text.splitlines() if not line.startswith("#")}


def test_a_batch_through_http_gets_code_rewards_values(server, reward_batch, expected_rewards, expected_pass_rates):
    completions, tests, limits, kinds = reward_batch
    client = RewardClient(server.url, token=TOKEN)
    assert client.score(completions, tests=tests, time_limit_s=limits) == expected_rewards
    assert client.score(completions, tests=tests, time_limit_s=limits, kind="pass_rate") == expected_pass_rates
    # The batch tells right from wrong: the equality above is not between two lists of zeros.
    assert {kind for kind, value in zip(kinds, expected_rewards) if value == 1.0} == {"right"}
    assert expected_rewards.count(1.0) == kinds.count("right")
    assert len(set(expected_pass_rates)) > 3


def test_the_services_cache_answers_a_repeated_batch_without_running_it(server, reward_batch):
    completions, tests, limits, _ = reward_batch
    client = RewardClient(server.url, token=TOKEN)
    first = client.score(completions[:16], tests=tests[:16], time_limit_s=limits[:16])
    runs = rewards.cache_info().runs
    assert client.score(completions[:16], tests=tests[:16], time_limit_s=limits[:16]) == first
    assert rewards.cache_info().runs == runs


def test_eight_concurrent_clients_keep_their_results_apart(server, reward_batch, expected_rewards):
    completions, tests, limits, _ = reward_batch
    # Each client sends its own slice in its own order, so a mix-up between requests shows in the answers.
    slices = [list(range(i, 64, 8))[::(-1) ** i] for i in range(8)]

    def one(indices):
        client = RewardClient(server.url, token=TOKEN)
        return client.score([completions[i] for i in indices], tests=[tests[i] for i in indices],
                            time_limit_s=[limits[i] for i in indices])  # fmt: skip

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(one, slices))
    for indices, answer in zip(slices, answers):
        assert answer == [expected_rewards[i] for i in indices]


@pytest.mark.parametrize("case", ["no_token", "wrong_token", "oversize", "not_json", "wrong_shape", "bad_tests",
                                  "count_mismatch", "unknown_id", "empty"])  # fmt: skip
def test_bad_requests_get_a_4xx_and_change_nothing(server, reward_batch, expected_rewards, case):
    completions, tests, limits, _ = reward_batch
    good = {"completions": completions[:4], "tests": tests[:4], "time_limit_s": limits[:4]}
    requests = {
        "no_token": (401, dict(body=good, token=None)),
        "wrong_token": (403, dict(body=good, token="not-the-token")),
        "oversize": (413, dict(body=None, raw=b'{"completions": ["' + b"x" * (17 << 20) + b'"]}')),
        "not_json": (400, dict(body=None, raw=b'{"completions": [')),
        "wrong_shape": (400, dict(body={"completions": "x = 1", "tests": [["assert x == 1"]]})),
        "bad_tests": (400, dict(body={**good, "tests": [[{"not": "a string"}]] * 4})),
        "count_mismatch": (400, dict(body={**good, "tests": tests[:3]})),
        "unknown_id": (400, dict(body={"completions": completions[:1], "ids": ["HumanEval_0"]})),
        "empty": (400, dict(body={"completions": [], "tests": []})),
    }
    status, kwargs = requests[case]
    before = (rewards.cache_info(), metrics(server.url)["ecd_completions_total"])
    code, answer = post(server.url, **kwargs)
    assert code == status and "error" in answer
    assert (rewards.cache_info(), metrics(server.url)["ecd_completions_total"]) == before
    # And the service still scores a good request as before.
    assert post(server.url, good) == (200, {"rewards": expected_rewards[:4], "infra": [False] * 4})


def test_a_full_queue_answers_429_and_never_holds_more_than_its_limit():
    slow = "```python\nimport time\ndef f():\n    time.sleep(0.3)\n    return 1\n```"
    body = json.dumps({"completions": [slow], "tests": [["assert f() == 1"]]}).encode()
    config = ServeConfig(port=0, token=TOKEN, reward=RewardConfig(**SETTINGS), max_body_bytes=len(body),
                         max_queued_bytes=2 * len(body))  # fmt: skip
    rewards.clear_cache()
    with RewardServer(config) as server:
        with ThreadPoolExecutor(6) as pool:
            codes = [f.result()[0] for f in [pool.submit(post, server.url, None, raw=body) for _ in range(6)]]
        seen = metrics(server.url)
    assert codes.count(429) >= 1 and codes.count(200) >= 2, codes
    assert set(codes) == {200, 429}
    assert seen["ecd_queued_bytes"] == 0 and seen["ecd_requests_in_flight"] == 0


def test_killing_a_fork_server_mid_batch_is_an_infrastructure_result_never_a_zero(server):
    slow_right = "```python\nimport time\ndef f(x):\n    time.sleep(0.2)\n    return x\n```"
    tests = [f"assert f({i}) == {i}" for i in range(4)]
    body = {"completions": [slow_right, slow_right.replace("return x", "return x + 1")], "tests": [tests] * 2}
    with servers_killed(server.service.rewards["binary"].sandbox):
        code, answer = post(server.url, body)
    assert code == 200
    assert answer == {"rewards": [None, None], "infra": [True, True]}
    with servers_killed(server.service.rewards["binary"].sandbox), pytest.raises(SandboxCrashed):
        RewardClient(server.url, token=TOKEN, retries=2).score(body["completions"], tests=body["tests"])
    assert metrics(server.url)["ecd_infra_failures_total"] >= 2
    # Failures are not cached: once the servers are left alone the same batch gets the programs' verdicts.
    assert post(server.url, body) == (200, {"rewards": [1.0, 0.0], "infra": [False, False]})


def test_shutdown_finishes_the_batch_in_flight_and_refuses_new_ones(reward_batch):
    slow = "```python\nimport time\ndef f():\n    time.sleep(0.4)\n    return 1\n```"
    body = {"completions": [slow], "tests": [["assert f() == 1", "assert f() == 1"]]}
    rewards.clear_cache()
    server = RewardServer(ServeConfig(port=0, token=TOKEN, reward=RewardConfig(**SETTINGS))).start()
    results = {}
    sender = threading.Thread(target=lambda: results.setdefault("in_flight", post(server.url, body)))
    sender.start()
    deadline = time.monotonic() + 10
    while metrics(server.url)["ecd_requests_in_flight"] < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    stopper = threading.Thread(target=server.stop)
    stopper.start()
    while not server.service.draining:
        time.sleep(0.005)
    try:
        results["late"] = post(server.url, body)
    except (urllib.error.URLError, ConnectionError) as err:  # the listener may already be closed
        results["late"] = (None, str(err))
    sender.join()
    stopper.join()
    assert results["in_flight"] == (200, {"rewards": [1.0], "infra": [False]})
    assert results["late"][0] in (503, None)
    # The sandbox let go of the machine's execution service (its fork servers end with the service once no caller
    # holds it: the serve command's test checks that no process is left behind).
    assert not server.service.rewards["binary"].sandbox.connected


def test_health_is_open_and_metrics_need_the_token(server):
    health = json.loads(urllib.request.urlopen(server.url + "/health", timeout=30).read())
    assert health["status"] == "ok" and health["workers"] == SETTINGS["workers"]
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(server.url + "/metrics", timeout=30)
    assert err.value.code == 401
    assert metrics(server.url)["ecd_fork_servers"] == SETTINGS["workers"]


def test_rows_can_be_named_by_id_of_a_loaded_revision(reward_batch, expected_rewards):
    completions, tests, limits, _ = reward_batch
    rows = {f"P_{i // 16}": {"tests": tests[i], "time_limit_s": limits[i]} for i in range(0, 64, 16)}
    rewards.clear_cache()
    with RewardServer(ServeConfig(port=0, token=TOKEN, reward=RewardConfig(**SETTINGS)), rows=rows) as server:
        client = RewardClient(server.url, token=TOKEN)
        answer = client.score(completions, ids=[f"P_{i // 16}" for i in range(64)])
        with pytest.raises(SchemaError, match="no row with id"):
            client.score(completions[:1], ids=["P_9"])
    assert answer == expected_rewards


def test_a_batch_still_running_when_the_grace_period_ends_is_answered_503_not_dropped():
    slow = "```python\nimport time\ndef f():\n    time.sleep(0.4)\n    return 1\n```"
    body = {"completions": [slow], "tests": [["assert f() == 1"] * 4]}
    rewards.clear_cache()
    config = ServeConfig(port=0, token=TOKEN, reward=RewardConfig(**SETTINGS), shutdown_grace_s=0.2)
    server = RewardServer(config).start()
    results = {}
    sender = threading.Thread(target=lambda: results.setdefault("answer", post(server.url, body)))
    sender.start()
    deadline = time.monotonic() + 10
    while metrics(server.url)["ecd_requests_in_flight"] < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    server.stop()
    sender.join()
    status, answer = results["answer"]
    assert status == 503 and "shut down" in answer["error"]


def test_a_service_started_on_a_published_revision_scores_its_rows_by_id(tmp_path, reward_batch, expected_rewards):
    from datasets import Dataset

    from evolvecoder_datasets.rounds import push_round

    completions, tests, limits, _ = reward_batch
    rows = Dataset.from_dict({"id": [f"P_{k}" for k in range(4)], "question": ["q"] * 4,
                              "tests": [tests[16 * k] for k in range(4)],
                              "time_limit_s": [limits[16 * k] for k in range(4)]})  # fmt: skip
    store = tmp_path / "run"
    push_round(rows, str(store), round=0, stats={"num_problems": 4})
    rewards.clear_cache()
    config = ServeConfig(port=0, token=TOKEN, reward=RewardConfig(**SETTINGS), dataset=f"{store}@0")
    with RewardServer(config) as server:
        health = json.loads(urllib.request.urlopen(server.url + "/health", timeout=30).read())
        answer = RewardClient(server.url, token=TOKEN).score(completions, ids=[f"P_{i // 16}" for i in range(64)])
    assert health["rows"] == 4
    assert answer == expected_rewards


def test_stdin_cases_carry_their_language_and_checker_through_http(server):
    """A C++ completion judged by a Kattis validator, and a bad checker refused with a 4xx, through the service."""
    validator = ("import sys\nwant = open(sys.argv[2]).read().split()\n"
                 "sys.exit(42 if sorted(sys.stdin.read().split()) == sorted(want) else 43)\n")  # fmt: skip
    tests = {"inputs": ["2 1\n", "5 3\n"], "outputs": ["1 2\n", "3 5\n"], "language": "cpp",
             "checker": {"source": validator, "language": "python", "contract": "kattis"}}  # fmt: skip
    echo = "```cpp\n#include <cstdio>\nint main() { int a, b; scanf(\"%d %d\", &a, &b); printf(\"%d %d\\n\", a, b); }\n```"
    first = "```cpp\n#include <cstdio>\nint main() { int a, b; scanf(\"%d %d\", &a, &b); printf(\"%d\\n\", a); }\n```"
    client = RewardClient(server.url, token=TOKEN)
    assert client.score([echo, first], tests=[tests, tests]) == [1.0, 0.0]  # any order passes the validator
    status, answer = post(server.url, {"completions": [echo], "tests": [{**tests, "checker": {"source": "x",
                                                                                   "contract": "polygon"}}]})  # fmt: skip
    assert status == 400 and "contract" in json.dumps(answer)
    status, answer = post(server.url, {"completions": [echo], "tests": [{**tests, "language": "cobol"}]})
    assert status == 400 and "language" in json.dumps(answer)

