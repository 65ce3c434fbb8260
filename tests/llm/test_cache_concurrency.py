"""The sqlite request cache with several writer processes, after a writer is killed, and on a read-only mount."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from evolvecoder_datasets.llm.cache import RequestCache

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

WRITER = textwrap.dedent(
    """
    import os, signal, sys
    from evolvecoder_datasets.llm.cache import RequestCache, request_key
    from evolvecoder_datasets.llm.types import ChatRequest, Completion
    run_dir, name, count, die = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "die"
    cache = RequestCache(run_dir)
    for i in range(count):
        request = ChatRequest(f"{name} {i}", max_tokens=8)
        cache.put(request_key(request, backend="openai", model="m"), request,
                  Completion((f"{name}-{i}" * 50,), ("stop",), 3, 50, "m"))
    if die:
        os.kill(os.getpid(), signal.SIGKILL)  # no close, no checkpoint: the rows live only in the WAL
    cache.close()
    """
)


def _writer(run_dir, name: str, count: int, *, die: bool = False) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": REPO}
    args = [sys.executable, "-c", WRITER, str(run_dir), name, str(count), "die" if die else "live"]
    return subprocess.Popen(args, env=env)


def test_concurrent_writer_processes_lose_no_row(tmp_path):
    writers = [_writer(tmp_path, f"w{k}", 60) for k in range(4)]
    assert [w.wait(timeout=120) for w in writers] == [0, 0, 0, 0]
    with RequestCache(tmp_path) as cache:
        texts = sorted(c.text for _, c in cache.items())
    assert len(texts) == 240 and texts == sorted(f"w{k}-{i}" * 50 for k in range(4) for i in range(60))


def test_rows_of_a_killed_writer_are_all_readable_and_the_cache_stays_writable(tmp_path):
    assert _writer(tmp_path, "dead", 40, die=True).wait(timeout=120) == -9
    with RequestCache(tmp_path, read_only=True) as replay:
        assert len(replay) == 40
    with RequestCache(tmp_path) as cache:
        assert len(cache) == 40
        [(request, completion)] = [(r, c) for r, c in cache.items() if r.messages[-1]["content"] == "dead 7"]
        cache.put("k", request, completion)
        assert len(cache) == 41


def _can_bind_mount_read_only() -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("mount") is None:
        return False
    probe = subprocess.run(["unshare", "--mount", "true"], capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not _can_bind_mount_read_only(), reason="needs root and unshare to bind-mount read-only")
@pytest.mark.parametrize("killed", [False, True], ids=["closed", "writer-killed"])
def test_replay_reads_a_run_directory_on_a_read_only_mount(tmp_path, killed):
    assert _writer(tmp_path, "w", 25, die=killed).wait(timeout=120) == (-9 if killed else 0)
    reader = textwrap.dedent(
        f"""
        from evolvecoder_datasets.llm import ChatRequest, LLMConfig, make_backend
        config = LLMConfig(model="m", base_url="http://127.0.0.1:9/v1", cache_dir={str(tmp_path)!r},
                           cache_mode="replay")
        with make_backend(config) as llm:
            out = llm.generate([ChatRequest(f"w {{i}}", max_tokens=8) for i in range(25)])
        assert [c.text for c in out] == [f"w-{{i}}" * 50 for i in range(25)]
        assert all(c.cached for c in out)
        print("replayed", len(out))
        """
    )
    script = (f"mount --bind -o ro {tmp_path} {tmp_path} && ! touch {tmp_path}/probe 2>/dev/null && "
              f'{sys.executable} -c "$READER"')  # fmt: skip
    done = subprocess.run(["unshare", "--mount", "bash", "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": REPO, "READER": reader})  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "replayed 25" in done.stdout


def test_the_switch_to_wal_waits_for_a_reader_holding_the_new_file(tmp_path):
    """sqlite can refuse the journal-mode switch at once (``database is locked``) while another process holds the
    new file; seen in CI when four writers opened one new cache together. A connection with no busy wait of its own
    stands in for that case: the switch must wait for the reader, not fail."""
    import sqlite3
    import threading
    import time

    from evolvecoder_datasets.llm.cache import _enter_wal

    path = str(tmp_path / "c.sqlite")
    reader = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    reader.execute("CREATE TABLE t(x)")
    reader.execute("BEGIN")
    reader.execute("SELECT * FROM t").fetchall()  # a shared lock: the switch cannot take the file
    impatient = sqlite3.connect(path, timeout=0, isolation_level=None)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        impatient.execute("PRAGMA journal_mode=WAL")
    threading.Timer(0.3, lambda: reader.execute("COMMIT")).start()
    started = time.monotonic()
    _enter_wal(impatient)
    assert impatient.execute("PRAGMA journal_mode").fetchone()[0] == "wal" and time.monotonic() - started >= 0.25
