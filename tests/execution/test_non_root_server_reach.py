"""A program cannot reach its fork server, even where it runs as the server's uid (a caller that is not root).

As root each program runs under a sandbox uid of its own and cannot signal or trace its server. A caller that is
not root has no uid drop: program and server share a uid inside the namespaces. Measured with the previous code
(uid 61234, bubblewrap, both modes): a wrong program that SIGKILLed its server at load (``os.kill(os.getppid(),
SIGKILL)``, or ``os.kill(-1, SIGKILL)``, or every pid it could see) got ``crash`` with ``infra_error`` set, a reward
of ``None`` instead of its 0.0: the program's own doing passed for the machine's; one that SIGSTOPped its server
held the job 65 s; and ``PTRACE_SEIZE`` of the server, or opening its ``/proc/<pid>/mem``, succeeded from the
program's load (a program holding its server's memory can write any verdict). Now the server is not dumpable (nor
any process forked from it), and the solution process's seccomp filter refuses signals to the server, the zygote,
their group and -1: each attack is the program's verdict, never ``None``, and the same server judges on.

Run as root, with the system interpreter and a copy of the package, as a fresh uid through ``setpriv``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

import evolvecoder_datasets

UID = 61234  # a uid nothing else on the machine uses: nothing of another test's runs as it
SYSTEM_PYTHON = "/usr/bin/python3"

_WRONG = "def f(x):\n    return 0\n"
_PTRACE = """import ctypes, os
_libc = ctypes.CDLL(None, use_errno=True)
_seized = _libc.ptrace(0x4206, os.getppid(), 0, 0) == 0  # PTRACE_SEIZE
try:
    open(f"/proc/{os.getppid()}/mem", "rb").close()
    _mem = True
except OSError:
    _mem = False
def f(x):
    return x * 2 if _seized or _mem else 0  # a pass says the server was reachable
"""
_KIDS_OF_PARENT = """import os, signal
def _others():
    me, parent = os.getpid(), os.getppid()
    with open(f"/proc/{parent}/task/{parent}/children") as fh:
        return [int(p) for p in fh.read().split() if int(p) != me]
"""
ATTACKS = {
    "sigkill_the_server_at_load": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n" + _WRONG,
    "sigkill_minus_1_at_load": "import os, signal\nos.kill(-1, signal.SIGKILL)\n" + _WRONG,
    "sigkill_the_servers_group": "import os, signal\nos.killpg(os.getpgid(os.getppid()), signal.SIGKILL)\n" + _WRONG,
    "sigstop_the_server": "import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)\n" + _WRONG,
    "sigkill_the_zygote": _KIDS_OF_PARENT + "for _p in _others():\n    os.kill(_p, signal.SIGKILL)\n" + _WRONG,
    "tgkill_the_server": "import ctypes, os\n_nr = {'x86_64': 234, 'aarch64': 131}[os.uname().machine]\n"
    "ctypes.CDLL(None).syscall(_nr, os.getppid(), os.getppid(), 9)\n" + _WRONG,
    "sigkill_everything_seen": "import os, signal\nfor _p in os.listdir('/proc'):\n"
    "    if _p.isdigit() and int(_p) not in (os.getpid(), 1):\n        try:\n"
    "            os.kill(int(_p), signal.SIGKILL)\n        except OSError:\n            pass\n" + _WRONG,
    "sigkill_the_server_from_a_test": _WRONG,  # its test does it (below)
    # guards: failures the program causes with the server's uid stay its own (they were before too)
    "fork_bomb_leaving_sleepers": "import os, time\nfor _ in range(10000):\n    try:\n        if os.fork() == 0:\n"
    "            os.setsid()\n            if os.fork() == 0:\n                time.sleep(60)\n            os._exit(0)\n"
    "    except OSError:\n        break\n" + _WRONG,
    "memory_bomb": "_hog = [bytearray(1 << 26) for _ in range(10**4)]\n" + _WRONG,
    "ptrace_the_server": _PTRACE,
}
TESTS = ["assert f(2) == 4", "assert f(3) == 6"]
FROM_A_TEST = ["assert __import__('os').kill(__import__('os').getppid(), 9) or f(2) == 4", "assert f(3) == 6"]

SCRIPT = r"""
import json, os, sys
from evolvecoder_datasets.execution import Sandbox, _client, run_tests
from evolvecoder_datasets.rewards import make_code_reward

attacks, tests, from_a_test = json.loads(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
RIGHT = "def f(x):\n    return x * 2\n"
out = {}


def seen(r):
    return [r.statuses, r.infra_error, r.isolation]


for mode in ("fast", "isolated"):
    with Sandbox(workers=1, mode=mode, timeout_s=1.0, wall_timeout_s=3.0) as sb:
        out[f"{mode}/control"] = seen(sb.run(RIGHT, tests))
        if out[f"{mode}/control"][2] not in ("bwrap", "unshare"):  # no pid namespace: the attacks would reach
            break                                                 # every process of this uid; none is run
        servers = sorted(sb.server_pids)
        for name, program in attacks.items():
            out[f"{mode}/{name}"] = seen(sb.run(program, from_a_test if name.endswith("from_a_test") else tests))
        many = sb.run_many([(attacks["sigkill_the_server_at_load"], tests), (RIGHT, tests)])
        out[f"{mode}/run_many"] = [seen(r) for r in many]
        out[f"{mode}/after"] = seen(sb.run(RIGHT, tests))
        out[f"{mode}/same_servers"] = sorted(sb.server_pids) == servers
    reward = make_code_reward(mode=mode, timeout_s=1.0)
    out[f"{mode}/code_reward"] = reward(completions=[attacks["sigkill_the_server_at_load"], RIGHT,
                                                     attacks["ptrace_the_server"]], tests=[tests] * 3)
    reward.sandbox.close()
out["run_tests"] = seen(run_tests(attacks["sigkill_the_server_at_load"], tests, timeout_s=1.0))
_client.release_service(wait_s=10)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def as_another_uid():
    """The outcome of :data:`SCRIPT` run as :data:`UID` on a copy of the package (removed at the end)."""
    if os.geteuid() != 0 or not shutil.which("setpriv") or not os.path.exists(SYSTEM_PYTHON):
        pytest.skip("needs root, setpriv and /usr/bin/python3 to act as another uid")
    base = Path(tempfile.mkdtemp(prefix="ecd-reach-"))
    try:
        shutil.copytree(Path(evolvecoder_datasets.__file__).parent, base / "evolvecoder_datasets",
                        ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
        home = base / "home"
        home.mkdir()
        for path in [base, *base.rglob("*")]:
            os.chmod(path, 0o755 if path.is_dir() else 0o644)
        os.chown(home, UID, UID)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "PYTHONPATH": str(base),
               "EVOLVECODER_SERVICE_DIR": str(home / "svc"), "PYTHONDONTWRITEBYTECODE": "1"}  # fmt: skip
        command = ["setpriv", f"--reuid={UID}", f"--regid={UID}", "--clear-groups", SYSTEM_PYTHON, "-c", SCRIPT,
                   json.dumps(ATTACKS), json.dumps(TESTS), json.dumps(FROM_A_TEST)]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=400, cwd="/", env=env, check=False)
        if done.returncode != 0 and "ModuleNotFoundError" in done.stderr:
            pytest.skip(f"the system interpreter cannot import the package: {done.stderr[-300:]}")
        assert done.returncode == 0, done.stderr[-3000:]
        yield json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("mode", ["fast", "isolated"])
def test_a_program_of_the_servers_uid_cannot_reach_its_server_and_keeps_its_verdict(as_another_uid, mode):
    out = as_another_uid
    control = out[f"{mode}/control"]
    if control[2] not in ("bwrap", "unshare"):
        pytest.skip(f"no namespace level for another uid here: {control}")
    assert control[:2] == [["pass", "pass"], None]
    for name in ATTACKS:
        statuses, infra, _ = out[f"{mode}/{name}"]
        assert infra is None, (name, out[f"{mode}/{name}"])  # the program's doing, never the machine's
        assert "pass" not in statuses, (name, statuses)  # a wrong program: a pass would mean it reached the server
    (attack, _, _), (right, right_infra, _) = out[f"{mode}/run_many"]
    assert "pass" not in attack and right == ["pass", "pass"] and right_infra is None
    assert out[f"{mode}/after"][:2] == [["pass", "pass"], None]
    assert out[f"{mode}/same_servers"]  # no server was killed and replaced meanwhile
    assert out[f"{mode}/code_reward"] == [0.0, 1.0, 0.0]  # never None
    statuses, infra, _ = out["run_tests"]
    assert infra is None and "pass" not in statuses
