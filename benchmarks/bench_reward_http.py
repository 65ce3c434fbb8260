"""The reward through HTTP against in process: one 64 x 35 GRPO batch, and a soak of mixed batches on loopback.

**Latency** (default): benchmarks/bench_reward.py's batch (4 real problems x 16 completions, 35 tests each, the
calibrated limits; with or without its 4 looping completions), scored by ``make_code_reward(mode=...)`` in this
process and by a reward service (``RewardServer`` in a thread of this process: the same fork servers, so the
difference is the HTTP path: JSON, the socket, the service's threads) through ``RewardClient`` on loopback, alternating, the result cache cleared before every repeat. Reports the medians and
their ratio (HTTP / in process; the target is <= 1.2), after checking both give the same rewards.

**Soak** (``--soak SECONDS``): ``evolvecoder-datasets serve`` in a child process, fed mixed batches for that long
(the 64 x 35 batch, slices of it, pass-rate requests, OpenRLHF single samples, 8 clients at once, and bad requests:
no token, malformed, oversize); every 30 s it samples the server's processes (itself and every descendant), open
files and resident memory, from /proc. Reports the first and last samples after warm-up; growth would show there.

Run: ``.venv/bin/python benchmarks/bench_reward_http.py [--repeats 5] [--mode isolated] [--without-loopers]``;
``flock /tmp/ecd-heavy.lock .venv/bin/python benchmarks/bench_reward_http.py --soak 600``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_reward

from evolvecoder_datasets import rewards
from evolvecoder_datasets.integrations.client import RewardClient
from evolvecoder_datasets.integrations.server import RewardServer, ServeConfig
from evolvecoder_datasets.rewards import RewardConfig, make_code_reward


def latency(mode: str, repeats: int, without_loopers: bool) -> None:
    completions, tests, limits, kinds = bench_reward.batch(mode=mode)
    if without_loopers:
        keep = [i for i, kind in enumerate(kinds) if kind != "loops"]
        completions, tests, limits, kinds = ([xs[i] for i in keep] for xs in (completions, tests, limits, kinds))
    reward = make_code_reward(mode=mode)
    local = lambda: reward(completions=completions, tests=tests, time_limit_s=limits)
    with RewardServer(ServeConfig(port=0, token="bench", reward=RewardConfig(mode=mode))) as server:
        client = RewardClient(server.url, token="bench")
        remote = lambda: client.score(completions, tests=tests, time_limit_s=limits)
        local(), remote()  # warm: the sandbox is started, the connection path exercised
        times: dict[str, list[float]] = {"in process": [], "HTTP": []}
        values = {}
        for _ in range(repeats):
            for label, fn in (("in process", local), ("HTTP", remote)):
                rewards.clear_cache()
                start = time.perf_counter()
                values[label] = fn()
                times[label].append(time.perf_counter() - start)
    if values["in process"] != values["HTTP"]:
        raise SystemExit("the rewards through HTTP differ from those in process")
    here, there = statistics.median(times["in process"]), statistics.median(times["HTTP"])
    print(f"batch: {len(completions)} completions x {bench_reward.N_TESTS} tests ({kinds.count('loops')} looping), "
          f"mode {mode}, {bench_reward.CORES} cores, {repeats} repeats, load average {os.getloadavg()[0]:.1f}; "
          f"identical rewards ({int(sum(values['HTTP']))} rewarded 1.0)")  # fmt: skip
    print("| path | median per batch | all repeats |")
    print("|---|---:|---|")
    for label, ts in times.items():
        print(f"| {label} | {statistics.median(ts):.3f} s | {', '.join(f'{t:.3f}' for t in ts)} |")
    print(f"| ratio HTTP / in process | {there / here:.2f} | |")


# --- soak --------------------------------------------------------------------------------------------------------


def _tree(pid: int) -> list[int]:
    """``pid`` and all its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def _sample(pid: int) -> dict[str, int]:
    pids = _tree(pid)
    fds = rss = 0
    for p in pids:
        try:
            fds += len(os.listdir(f"/proc/{p}/fd"))
            with open(f"/proc/{p}/statm") as fh:
                rss += int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            pass
    with open(f"/proc/{pid}/statm") as fh:
        own = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    return {"processes": len(pids), "open_files": fds, "rss_tree_mb": rss >> 20, "rss_server_mb": own >> 20}


def _metric(url: str, token: str, name: str) -> int:
    req = urllib.request.Request(f"{url}/metrics", headers={"Authorization": f"Bearer {token}"})
    for line in urllib.request.urlopen(req, timeout=30).read().decode().splitlines():
        if line.startswith(name + " "):
            return int(float(line.split()[1]))
    return -1


def _post(url: str, data: bytes, headers: dict[str, str]) -> int:
    req = urllib.request.Request(url, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=300) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as err:
        err.read()
        return err.code


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            stat = fh.read()
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmd = fh.read().replace(b"\0", b" ")[:80].decode(errors="replace")
        return f"{pid} {stat.rsplit(')', 1)[1].split()[0]} {cmd}"
    except OSError:
        return f"{pid} gone"


def soak(seconds: float, mode: str, cache_size: int) -> None:
    completions, tests, limits, kinds = bench_reward.batch(mode=mode)
    token = "soak-token"
    port = 18700 + os.getpid() % 1000
    env = {**os.environ, "EVOLVECODER_REWARD_TOKEN": token}
    exe = Path(sys.executable).with_name("evolvecoder-datasets")
    proc = subprocess.Popen([str(exe), "serve", "--port", str(port), "--mode", mode, "--cache-size", str(cache_size)],
                            env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    url = proc.stdout.readline().strip().rsplit(" ", 1)[-1]
    print(f"server pid {proc.pid}: {url}")
    auth = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    rng = random.Random(0)
    codes: dict[int, int] = {}

    def request(step: int) -> int:
        choice = step % 10
        if choice < 3:  # the whole batch, binary or pass rate
            body = {"completions": completions, "tests": tests, "time_limit_s": limits,
                    "kind": "pass_rate" if choice == 2 else "binary"}
        elif choice < 6:  # a random slice, new programs each time (a changed comment), so the cache does not answer
            idx = rng.sample(range(64), 16)
            body = {"completions": [completions[i].replace("# sample", f"# s{step}") for i in idx],
                    "tests": [tests[i] for i in idx], "time_limit_s": [limits[i] for i in idx]}
        elif choice < 8:  # OpenRLHF single samples
            i = rng.randrange(64)
            body = {"query": [f"<|im_start|>assistant\n{completions[i]}<|im_end|>"], "prompts": [""],
                    "labels": [json.dumps({"tests": tests[i], "time_limit_s": limits[i]})]}
            return _post(f"{url}/openrlhf?token={token}", json.dumps(body).encode(), {})
        elif choice == 8:  # bad requests: no token, malformed, oversize
            kind = step % 3
            if kind == 0:
                return _post(f"{url}/score", b"{}", {})
            if kind == 1:
                return _post(f"{url}/score", b'{"completions": [', auth)
            return _post(f"{url}/score", b"x" * (17 << 20), auth)
        else:
            return 200 if urllib.request.urlopen(f"{url}/health", timeout=30).status == 200 else 0
        return _post(f"{url}/score", json.dumps(body).encode(), auth)

    samples = []
    start = time.monotonic()
    next_sample = start + 30
    step = 0
    try:
        with ThreadPoolExecutor(8) as pool:
            while time.monotonic() - start < seconds:
                for code in pool.map(request, range(step, step + 8)):
                    codes[code] = codes.get(code, 0) + 1
                step += 8
                if time.monotonic() >= next_sample:
                    s = _sample(proc.pid)
                    s["t"] = round(time.monotonic() - start)
                    s["cache_entries"] = _metric(url, token, "ecd_reward_cache_entries")
                    samples.append(s)
                    print(s, flush=True)
                    next_sample += 30
    finally:
        children = [p for p in _tree(proc.pid) if p != proc.pid]  # the fork servers (and their bwrap parents)
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=120)
    time.sleep(2.0)  # --die-with-parent: the fork servers end when their parent does, asynchronously
    left = [_state(p) for p in children if os.path.exists(f"/proc/{p}")]
    print(f"requests: {step} ({dict(sorted(codes.items()))}); server exit status {proc.returncode}; "
          f"processes left behind: {len(left)} {left}")  # fmt: skip
    print(out.strip().splitlines()[-1] if out.strip() else "")
    if len(samples) >= 3:
        first, last = samples[1], samples[-1]  # samples[0] is the warm-up
        print("| after | processes | open files | RSS of server + fork servers | RSS of server | reward cache entries |")
        print("|---|---:|---:|---:|---:|---:|")
        for s in (first, last):
            print(f"| {s['t']} s | {s['processes']} | {s['open_files']} | {s['rss_tree_mb']} MB | "
                  f"{s['rss_server_mb']} MB | {s['cache_entries']} |")
        print(f"max RSS of server over the run: {max(s['rss_server_mb'] for s in samples)} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--mode", default="isolated", choices=["isolated", "fast"])
    parser.add_argument("--without-loopers", action="store_true")
    parser.add_argument("--soak", type=float, default=None, metavar="SECONDS", help="run the soak instead")
    parser.add_argument("--cache-size", type=int, default=65536, help="the served reward's cache size (soak)")
    args = parser.parse_args()
    if args.soak:
        soak(args.soak, args.mode, args.cache_size)
    else:
        latency(args.mode, args.repeats, args.without_loopers)


if __name__ == "__main__":
    main()
