"""A short soak of the reward service (the 10-minute one is benchmarks/bench_reward_http.py --soak 600): mixed
batches from 8 clients for about a minute leave no process, open file or memory growth behind."""

from __future__ import annotations

import json
import os
import random
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from .test_server import TOKEN, post


def descendants() -> int:
    me, count = os.getpid(), 0
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    parents[int(entry)] = int(fh.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
    for pid in parents:
        p = pid
        while p in parents and p != me and p > 1:
            p = parents[p]
        count += p == me and pid != me
    return count


def resources() -> dict[str, int]:
    with open("/proc/self/statm") as fh:
        rss = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    return {"processes": descendants(), "open_files": len(os.listdir("/proc/self/fd")), "rss_mb": rss >> 20}


@pytest.mark.slow
def test_a_minute_of_mixed_batches_leaves_no_process_file_or_memory_growth(server, reward_batch):
    completions, tests, limits, _ = reward_batch
    rng = random.Random(0)

    def one(step: int) -> int:
        choice = step % 6
        if choice == 0:
            return post(server.url, {"completions": completions, "tests": tests, "time_limit_s": limits})[0]
        if choice in (1, 2):  # new programs every time, so the cache cannot answer
            idx = rng.sample(range(64), 8)
            body = {"completions": [completions[i].replace("# sample", f"# s{step}") for i in idx],
                    "tests": [tests[i] for i in idx], "time_limit_s": [limits[i] for i in idx], "kind": "pass_rate"}
            return post(server.url, body)[0]
        if choice == 3:
            i = rng.randrange(64)
            body = {"query": [f"<|im_start|>assistant\n{completions[i]}<|im_end|>"], "prompts": [""],
                    "labels": [json.dumps(tests[i])]}
            return post(server.url, body, token=None, path=f"/openrlhf?token={TOKEN}")[0]
        if choice == 4:
            return post(server.url, None, raw=b'{"completions": [')[0]
        return urllib.request.urlopen(server.url + "/health", timeout=30).status

    samples = []
    start = time.monotonic()
    with ThreadPoolExecutor(8) as pool:
        step = 0
        while time.monotonic() - start < 60:
            codes = list(pool.map(one, range(step, step + 8)))
            assert set(codes) <= {200, 400}, codes
            step += 8
            samples.append(resources())
    warm, last = samples[len(samples) // 4], samples[-1]
    # Processes come and go between batches (a test's process not reaped yet, the solution process a fork server
    # starts for its next job after it answers), and a judge or fork server may start on its first use, late in
    # the run: a leak grows with the requests (hundreds here), so the fewest seen over the last quarter may exceed
    # the second quarter's by at most that one start, and must not grow within the last quarter.
    quarter = max(1, len(samples) // 4)
    counts = [s["processes"] for s in samples]
    settled = [min(counts[k: k + quarter]) for k in (quarter, len(samples) - quarter)]
    tail = counts[-quarter:]
    assert settled[1] <= settled[0] + 1 and tail[-1] <= max(tail[: max(1, len(tail) // 2)]), counts
    assert last["open_files"] <= warm["open_files"] + 2
    assert last["rss_mb"] <= warm["rss_mb"] + 40, (warm, last)
