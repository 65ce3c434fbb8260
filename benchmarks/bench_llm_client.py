"""LLM client overhead: requests/s at concurrency 64 against a loopback server that answers instantly.

The scripted server runs in its own process (so it does not share our GIL). Side by side, in one run:

* ``raw aiohttp``: a bare ``aiohttp`` loop (task per request + semaphore, no parsing beyond ``json.loads``): the
  transport's floor, the baseline every client pays;
* ``ours``: ``OpenAICompatible.generate`` (queue workers, rate limiter on, retries armed, Completion objects,
  accounting), without a cache;
* ``ours + cache``: the same, storing every answer in the sqlite request cache (a commit per answer);
* ``ours, replay``: a rerun answered fully from the cache (no HTTP).

Run: .venv/bin/python benchmarks/bench_llm_client.py [--requests 3000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time

import aiohttp

from evolvecoder_datasets.llm import ChatRequest, LLMConfig, make_backend

CONCURRENCY = 64


def start_server() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "evolvecoder_datasets.llm.testing", "--answer", "def f():\n    return 1"],
        stdout=subprocess.PIPE,
        text=True,
    )
    return proc, proc.stdout.readline().strip()


async def raw_aiohttp(base_url: str, n: int) -> float:
    sem = asyncio.Semaphore(CONCURRENCY)
    body = {"model": "m", "max_tokens": 32}

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=CONCURRENCY)) as session:

        async def one(i: int) -> str:
            async with sem:
                payload = dict(body, messages=[{"role": "user", "content": f"problem {i}"}])
                async with session.post(base_url + "/chat/completions", data=json.dumps(payload),
                                        headers={"Content-Type": "application/json"}) as r:
                    return json.loads(await r.read())["choices"][0]["message"]["content"]

        start = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        return time.perf_counter() - start


def ours(base_url: str, n: int, cache_dir: str | None, tag: str) -> float:
    cfg = LLMConfig(model="m", base_url=base_url, max_concurrency=CONCURRENCY, rpm=1e9, tpm=1e12,
                    cache_dir=cache_dir)
    requests = [ChatRequest(f"problem {i} {tag}", max_tokens=32) for i in range(n)]
    with make_backend(cfg) as llm:
        start = time.perf_counter()
        out = llm.generate(requests)
        elapsed = time.perf_counter() - start
    assert len(out) == n and all(c.text for c in out)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    proc, base_url = start_server()
    n = args.requests
    times: dict[str, list[float]] = {"raw aiohttp": [], "ours": [], "ours + cache": [], "ours, replay": []}
    try:
        asyncio.run(raw_aiohttp(base_url, 200))  # warm up both sides
        for r in range(args.rounds):
            times["raw aiohttp"].append(asyncio.run(raw_aiohttp(base_url, n)))
            times["ours"].append(ours(base_url, n, None, f"r{r}"))
            with tempfile.TemporaryDirectory() as run_dir:
                times["ours + cache"].append(ours(base_url, n, run_dir, f"c{r}"))
                times["ours, replay"].append(ours(base_url, n, run_dir, f"c{r}"))
    finally:
        proc.terminate()
        proc.wait()
    base = statistics.median(times["raw aiohttp"])
    print(f"{n} requests, concurrency {CONCURRENCY}, median of {args.rounds} rounds, server in its own process")
    print(f"{'client':<16}{'req/s':>10}{'vs raw aiohttp':>16}")
    for name, values in times.items():
        t = statistics.median(values)
        print(f"{name:<16}{n / t:>10,.0f}{base / t:>15.2f}x")


if __name__ == "__main__":
    main()
