"""Two execution services of one user, side by side: a job's verdict does not depend on what the other one runs.

Each service (a runtime folder of its own: two checkouts, two test sessions, a trainer beside a recipe) runs
programs under sandbox uids, and the process limit is per uid. When two services' fork servers could share a uid,
one service's programs holding processes made a right program of the other fail to fork (``BlockingIOError``:
``crash`` for a right program, measured on a loaded machine). The uids are claimed machine-wide per user
(:func:`~evolvecoder_datasets.execution._worker.uid_claims_folder`), so two services never share one. Here a second
service, in another process, holds every process its uids may have while this one judges a right program that
forks children; the control is the same program alone. Needs root (only root drops programs to sandbox uids).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from evolvecoder_datasets.execution import Sandbox

from .conftest import own_service

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: programs run as sandbox uids only then")

# A right program whose test forks 12 short-lived children (under a per-uid limit of 32 processes).
FORKS = textwrap.dedent("""\
    import os
    def f(n):
        done = 0
        for _ in range(n):
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
            done += 1
        return done
""")
TESTS = ["assert f(12) == 12"]

# The other service: its programs hold as many processes as their uid may have, for a while.
HOG = textwrap.dedent("""\
    import json, os, sys, time
    from evolvecoder_datasets.execution import Job, Sandbox
    HOLD = '''
    import os, time
    def f(x):
        kids = []
        while True:
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                time.sleep(6)
                os._exit(0)
            kids.append(pid)
        time.sleep(5)
        return len(kids)
    '''
    with Sandbox(workers=2, mode="fast", timeout_s=10.0) as sb:
        sb.start()
        print(json.dumps(sorted(sb.sandbox_uids)), flush=True)
        sb.run_many([Job(HOLD, tests=["assert f(0) >= 0"])] * 2)
""")


def test_a_second_service_holding_its_uids_processes_changes_no_verdict_here(tmp_path):
    env = {**os.environ, "EVOLVECODER_SERVICE_DIR": str(tmp_path / "other")}
    other = subprocess.Popen([sys.executable, "-c", HOG], env=env, stdout=subprocess.PIPE, text=True)
    try:
        with own_service(tmp_path / "ours"), Sandbox(workers=2, mode="fast", timeout_s=2.0) as sb:
            theirs = set(json.loads(other.stdout.readline()))
            time.sleep(1.0)  # their programs are forking up to the limit now
            assert other.poll() is None, "the other service's programs ended before the check"
            ours = sb.sandbox_uids
            assert ours and theirs and not (ours & theirs)  # never one uid for two services
            reports = [sb.run(FORKS, TESTS) for _ in range(4)]
            assert [r.statuses for r in reports] == [["pass"]] * 4
    finally:
        other.wait(timeout=60)
    assert other.returncode == 0
