"""The reward service's documented caps, enforced on a real loopback socket: a text over 1 MiB of characters
answers 413 wherever it sits in the body (the cap was checked for completion strings and asserts only; then the
program read out of a conversation's parts, joined or bare, was not: 2 MiB ran), and a
chunked body over ``max_body_bytes`` answers 413 before the client has sent it all."""

from __future__ import annotations

import json
import select
import socket
import urllib.parse

from evolvecoder_datasets import rewards
from evolvecoder_datasets.integrations.protocol import MAX_TEXT
from evolvecoder_datasets.integrations.server import RewardServer, ServeConfig
from evolvecoder_datasets.rewards import RewardConfig

from .conftest import SETTINGS, TOKEN
from .test_server import metrics, post

CHECKER = "import sys\nsys.exit(0)\n"


def _bodies(text: str) -> dict[str, tuple[str, dict]]:
    """Per place a text can sit, the endpoint and a body with ``text`` there (everything else small and valid)."""
    stdin = {"inputs": ["1\n"], "outputs": ["1\n"]}
    return {
        "completion": ("/score", {"completions": [text], "tests": [["assert True"]]}),
        "message_content": ("/score", {"completions": [[{"role": "assistant", "content": text}]],
                                       "tests": [["assert True"]]}),
        "message_part": ("/score", {"completions": [[{"role": "assistant", "content": [{"type": "text",
                                                                                        "text": text}]}]],
                                    "tests": [["assert True"]]}),
        # The program is what the reward reads out of a conversation: a bare list of content parts (no message
        # around them), or several text parts joined, each under the cap.
        "bare_content_parts": ("/score", {"completions": [[{"type": "text", "text": text}]],
                                          "tests": [["assert True"]]}),
        "joined_message_parts": ("/score", {"completions": [[{"role": "assistant", "content": [
            {"type": "text", "text": text[: len(text) // 2]}, {"type": "text", "text": text[len(text) // 2 :]}]}]],
            "tests": [["assert True"]]}),
        "test": ("/score", {"completions": ["x = 1"], "tests": [["assert x == 1", text]]}),
        "stdin_input": ("/score", {"completions": ["print(input())"], "tests": [{**stdin, "inputs": [text]}]}),
        "stdin_answer": ("/score", {"completions": ["print(input())"], "tests": [{**stdin, "outputs": [text]}]}),
        "checker": ("/score", {"completions": ["print(input())"],
                               "tests": [{**stdin, "checker": {"source": text, "contract": "testlib"}}]}),
        "query": ("/openrlhf", {"query": [text], "prompts": [""], "labels": ['["assert True"]']}),
        "prompt": ("/openrlhf", {"query": ["x = 1"], "prompts": [text], "labels": ['["assert True"]']}),
        "label": ("/openrlhf", {"query": ["x = 1"], "prompts": [""], "labels": [text]}),
    }


def _over(text_place: str) -> str:
    """A text of MAX_TEXT + 1 characters that would be valid in that place if it were shorter."""
    return "#" * (MAX_TEXT + 1) if text_place != "label" else json.dumps(["#" * MAX_TEXT])


def test_a_text_over_the_documented_cap_answers_413_wherever_it_is_and_runs_nothing(server):
    for place in _bodies(""):
        path, body = _bodies(_over(place))[place]
        before = (rewards.cache_info().runs, metrics(server.url)["ecd_completions_total"])
        code, answer = post(server.url, body, path=path)
        assert code == 413, (place, code, answer)
        assert str(MAX_TEXT) in answer["error"], answer
        assert (rewards.cache_info().runs, metrics(server.url)["ecd_completions_total"]) == before
    # Control: texts of exactly the cap pass the check (and run: the completion is a program of 1 MiB).
    program = "x = 1\n#" + "y" * (MAX_TEXT - 7)
    assert len(program) == MAX_TEXT
    assert post(server.url, {"completions": [program], "tests": [["assert x == 1"]]}) == \
        (200, {"rewards": [1.0], "infra": [False]})  # fmt: skip
    code, _ = post(server.url, {"completions": ["x = 1"], "tests": [["assert x == 1", "#" * MAX_TEXT]]})
    assert code == 200
    parts = [{"type": "text", "text": "x = 1\n"}, {"type": "text", "text": "#" * (MAX_TEXT - 6)}]  # joined: the cap
    assert post(server.url, {"completions": [[{"role": "assistant", "content": parts}], parts],
                             "tests": [["assert x == 1"], ["assert x == 1"]]}) == \
        (200, {"rewards": [1.0, 1.0], "infra": [False, False]})  # fmt: skip


def _chunked(url: str, total: int, chunk: int = 16 << 10) -> tuple[int, int]:
    """POST a chunked body of ``total`` bytes (a JSON object padded with spaces); ``(status, bytes sent)``,
    stopping as soon as the server answers."""
    parts = urllib.parse.urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=30)
    sock.sendall(b"POST /score HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN.encode()
                 + b"\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")  # fmt: skip
    body = json.dumps({"completions": ["x = 1"], "tests": [["assert x == 1"]]}).encode()
    body += b" " * max(0, total - len(body))
    sent = 0
    try:
        while sent < len(body) and not select.select([sock], [], [], 0)[0]:
            piece = body[sent : sent + chunk]
            sock.sendall(b"%x\r\n" % len(piece) + piece + b"\r\n")
            sent += len(piece)
        if sent == len(body):
            sock.sendall(b"0\r\n\r\n")
    except OSError:  # the server answered and closed while we were still sending
        pass
    status = int(sock.recv(4096).split(b" ", 2)[1])
    sock.close()
    return status, sent


def test_a_chunked_body_over_the_limit_answers_413_before_it_is_all_sent():
    limit = 64 << 10
    config = ServeConfig(port=0, token=TOKEN, reward=RewardConfig(**SETTINGS), max_body_bytes=limit,
                         max_queued_bytes=4 * limit)  # fmt: skip
    with RewardServer(config) as server:
        status, sent = _chunked(server.url, 64 << 20)
        assert status == 413
        assert sent < 64 << 20  # answered long before the 64 MiB it was offered
        # Control: a chunked body under the limit is read and scored.
        assert _chunked(server.url, limit // 2) == (200, limit // 2)

