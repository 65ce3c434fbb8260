"""The attack suite of issue 12: wrong or hostile programs never earn ``pass``, leave no trace, read no secret and
return within their limits, in both modes and through every entry point (``Sandbox``, the rewards, the metric).

The programs live in ``attack_programs.py``, grouped by the issue's classes (harness, lie, oracle, state, host),
with honest controls so that a judge failing everything cannot pass this file. Each attack runs once per mode on a
shared sandbox; the checks read what that one run observed:

- no ``pass`` for the tests a correct judge never passes (``Attack.attacked_in``);
- no secret placed on the host (checkout files, a fake ``.git``, root-only files, host sockets, the host's ``/tmp``)
  appears in the report's messages, the rewards' logged outcomes or the metric's results;
- nothing is left behind: no process of the sandbox, nothing in ``/tmp``, ``/var/tmp``, ``/dev/shm``, ``$HOME`` or
  the working folder, no System V IPC object (a census program run on every worker after each attack), nothing
  on the host;
- the job returns within its limits plus a few seconds (a containment bound, not a benchmark);
- the sandbox does not report a failure of its own (a hostile program must not turn its verdict into an infra
  error, which a reward turns into ``None`` instead of the failing value).

Values that are small on the wire but expand in the judge (``JUDGE_BOMB``) run in a memory-capped child process
with a per-test watchdog, since the judge works in the caller's process and a hang there would freeze this run.

The bait goes under the checkout this file sits in; ``ECD_ATTACK_CHECKOUT`` points it elsewhere (when running a
copy of the tree exported under ``/tmp``, say, whose private ``/tmp`` would hide it anyway).
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from evolvecoder_datasets.execution import Job, Sandbox

from .attack_programs import (
    ATTACKS,
    CONTROLS,
    JUDGE_BOMB,
    MODES,
    MUTABLE_DEFAULT,
    MUTABLE_DEFAULT_TESTS,
    Attack,
    fill,
)
from .conftest import processes_of_uids

# Where the bait goes: the checkout this file sits in (a copy elsewhere may point it at the real one).
CHECKOUT = Path(os.environ.get("ECD_ATTACK_CHECKOUT") or Path(__file__).resolve().parents[2])
LIMITS = {"workers": 2, "timeout_s": 0.5, "memory_mb": 512, "wall_timeout_s": 1.5}
REWARD_LIMITS = {"workers": 2, "timeout_s": 0.5, "memory_mb": 512}
SLACK_S = 5.0  # "a few seconds" past the limits

CONSISTENCY = Attack("consistency_mutable_default_correct_only_on_its_first_call", "consistency", MUTABLE_DEFAULT,
                     MUTABLE_DEFAULT_TESTS)  # fmt: skip


# ------------------------------------------------------------------------------------------------------------------
# Bait on the host: secrets the programs must not read, sockets they must not reach.
# ------------------------------------------------------------------------------------------------------------------


def _sha(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


class HostBait:
    """Secret files under the checkout (world-readable, a fake ``.git``, root-only), in ``/root`` and in the host's
    ``/tmp``; a Unix socket at a host path and an abstract one, each answering with a secret."""

    def __init__(self) -> None:
        self.token = secrets.token_hex(8)
        self.secrets: dict[str, str] = {}
        self.hits: list[str] = []
        self._paths: list[Path] = []
        self._stop = threading.Event()
        tok = self.token
        self.dir = CHECKOUT / f".ecd-attack-{tok}"
        self.dir.mkdir(mode=0o755)
        os.chmod(self.dir, 0o755)
        self._paths.append(self.dir)
        (self.dir / ".git").mkdir(mode=0o755)
        ctx = {"TOKEN": tok, "CHECKOUT": str(CHECKOUT), "GIT_DIR": str(self.dir), "SECRET_NAME": "secret.txt",
               "SHM_KEY": str(random.randint(0x10000000, 0x7FFFFF00))}  # fmt: skip
        ctx["SECRET_FILE"], ctx["SECRET_SHA"] = self._plant(self.dir / "secret.txt", "checkout", 0o644)
        _, ctx["GIT_SHA"] = self._plant(self.dir / ".git" / "config", "git", 0o644)
        ctx["ROOTONLY_FILE"], _ = self._plant(self.dir / "rootonly.txt", "rootonly", 0o600)
        ctx["ROOTONLY_SECRET"] = self.secrets["rootonly"]
        ctx["ROOTONLY_FILE_B"], _ = self._plant(self.dir / "rootonly_b.txt", "rootonly_b", 0o600)
        root_dir = Path("/root") if os.access("/root", os.W_OK) else self.dir
        ctx["ROOT_SECRET_FILE"], ctx["ROOT_SECRET_SHA"] = self._plant(root_dir / f".ecd-attack-{tok}-secret", "root",
                                                                      0o600)  # fmt: skip
        ctx["HOST_TMP_FILE"], ctx["HOST_TMP_SHA"] = self._plant(Path("/tmp") / f"ecd-attack-{tok}-host-secret",
                                                                "host_tmp", 0o644)  # fmt: skip
        head = CHECKOUT / ".git" / "HEAD"
        ctx["HEAD_SHA"] = _sha(head.read_bytes()) if head.is_file() else _sha(secrets.token_hex(8))
        self.socket_path = self.dir / "bait.sock"
        self.abstract_name = f"ecd-attack-{tok}-host"
        self.secrets["socket"] = f"ecd-secret-socket-{secrets.token_hex(12)}"
        self.secrets["abstract"] = f"ecd-secret-abstract-{secrets.token_hex(12)}"
        ctx.update(SOCKET_PATH=str(self.socket_path), SOCKET_SHA=_sha(self.secrets["socket"]),
                   ABSTRACT_NAME=self.abstract_name, ABSTRACT_SHA=_sha(self.secrets["abstract"]))  # fmt: skip
        self.ctx = ctx
        self._listeners = []
        for address, label in ((str(self.socket_path), "socket"), ("\0" + self.abstract_name, "abstract")):
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(address)
            listener.listen(16)
            listener.settimeout(0.2)
            self._listeners.append(listener)
            threading.Thread(target=self._serve, args=(listener, label), daemon=True).start()
        os.chmod(self.socket_path, 0o777)

    def _plant(self, path: Path, label: str, mode: int) -> tuple[str, str]:
        value = f"ecd-secret-{label}-{secrets.token_hex(12)}"
        path.write_text(value)
        os.chmod(path, mode)
        self.secrets[label] = value
        self._paths.append(path)
        return str(path), _sha(value)

    def _serve(self, listener: socket.socket, label: str) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            self.hits.append(label)
            try:
                conn.sendall(self.secrets[label].encode())
            finally:
                conn.close()

    def traces(self) -> list[str]:
        """What a program left on the host: files named after this run's token, System V objects with its keys."""
        mine = {str(p) for p in self._paths}
        found = []
        for folder in ("/tmp", "/var/tmp", "/dev/shm", "/root", str(CHECKOUT), str(self.dir)):
            try:
                names = os.listdir(folder)
            except OSError:
                continue
            for name in names:
                path = os.path.join(folder, name)
                if self.token in name and path not in mine and path != str(self.socket_path):
                    found.append(path)
        keys = {int(self.ctx["SHM_KEY"]) + i for i in range(3)}
        for kind in ("shm", "msg", "sem"):
            try:
                with open(f"/proc/sysvipc/{kind}") as fh:
                    rows = fh.read().splitlines()[1:]
            except OSError:
                continue
            found += [f"host {kind} {row.split()[0]}" for row in rows if row.split() and int(row.split()[0]) in keys]
        return found

    def leaked(self, texts, attack: Attack) -> list[str]:
        """Secrets found in ``texts``, except those the attack's own tests or outputs hold (the judge may echo
        the expected side)."""
        own = " ".join(self.fill_all(attack))
        blob = "\n".join(str(t) for t in texts)
        return [label for label, value in self.secrets.items() if value in blob and value not in own]

    def fill_all(self, attack: Attack) -> list[str]:
        return [fill(t, self.ctx) for t in (*attack.tests, *(attack.outputs or ()))]

    def close(self) -> None:
        self._stop.set()
        for listener in self._listeners:
            listener.close()
        for path in reversed(self._paths):
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        for path in self.traces():
            if path.startswith("/"):
                shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else Path(path).unlink(missing_ok=True)


@pytest.fixture(scope="module")
def bait():
    host = HostBait()
    try:
        yield host
    finally:
        host.close()


# ------------------------------------------------------------------------------------------------------------------
# What a sandbox leaves behind.
# ------------------------------------------------------------------------------------------------------------------

# Run as the sandbox uid on each worker after every attack: lists what survives in the usual places and in the
# System V tables, then removes what it can so that the next attack is judged on its own.
# Its stdin lists the folders the sandbox itself binds in (a checkout or virtualenv under /tmp, say): not traces.
CENSUS = r'''
import json, os, shutil, sys
cwd = os.getcwd()
binds = [p for p in json.loads(sys.stdin.read() or "[]") if p]
own = set()
for fd in (0, 1, 2):
    try:
        own.add(os.readlink("/proc/self/fd/%d" % fd))
    except OSError:
        pass
# Work folders of other jobs or workers, named like this job's own top folder (shared /tmp without isolation).
top = "/" + "/".join(cwd.strip("/").split("/")[:2]) if cwd.count("/") >= 2 else cwd
stem = os.path.basename(top).rstrip("0123456789")
found = []
def _ours(path):
    if stem and os.path.dirname(path) == os.path.dirname(top) and os.path.basename(path).startswith(stem):
        return True
    if path in own or path == cwd or cwd.startswith(path.rstrip("/") + "/") or path.startswith(cwd + "/"):
        return True
    return any(b == path or b.startswith(path.rstrip("/") + "/") for b in binds)
for folder in ("/tmp", "/var/tmp", "/dev/shm", "/run/shm", os.path.expanduser("~"), os.environ.get("TMPDIR", "/tmp"),
               cwd):
    try:
        names = os.listdir(folder)
    except OSError:
        continue
    for name in names:
        path = os.path.join(folder, name)
        try:
            owner = os.lstat(path).st_uid
        except OSError:
            continue
        if _ours(path) or (owner == 0 and os.getuid() != 0):
            continue  # the census's own folders, or the judge's files for this job (a program cannot make those)
        if path not in found:
            found.append(path)
try:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
except Exception:  # the census still reports what it cannot remove
    libc = None
for kind in ("shm", "msg", "sem"):
    try:
        rows = open("/proc/sysvipc/" + kind).read().splitlines()[1:]
    except OSError:
        continue
    for row in rows:
        fields = row.split()
        if len(fields) < 2:
            continue
        found.append("sysv %s key=%s" % (kind, fields[0]))
        ident = int(fields[1])
        if libc is None:
            continue
        if kind == "shm":
            libc.shmctl(ident, 0, None)
        elif kind == "msg":
            libc.msgctl(ident, 0, None)
        else:
            libc.semctl(ident, 0, 0)
for path in found:
    if path.startswith("/"):
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.remove(path)
        except OSError:
            pass
print(json.dumps(sorted(found)))
'''


def _children(pid: int) -> list[int]:
    kids = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                kids += [int(x) for x in fh.read().split()]
    except OSError:
        pass
    return kids


def _uid_and_state(pid: int) -> tuple[int, str]:
    try:
        with open(f"/proc/{pid}/status") as fh:
            fields = dict(line.split(":", 1) for line in fh.read().splitlines() if ":" in line)
    except OSError:
        return -1, "gone"
    return int(fields.get("Uid", "-1").split()[0]), fields.get("State", "").strip()[:1]


def _unprivileged_descendants(roots: list[int]) -> set[int]:
    """Live processes under the fork servers that do not run as root (the servers do; solutions do not)."""
    found, stack, seen = set(), list(roots), set()
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        stack += _children(pid)
        uid, state = _uid_and_state(pid)
        if pid not in roots and uid not in (0, -1) and state not in ("Z", "X", "g"):
            found.add(pid)
    return found


def _sandbox_uids(sb: Sandbox) -> set[int]:
    return set(sb.sandbox_uids)


def _leftover_processes(sb: Sandbox, baseline: set[int]) -> list[int]:
    """Processes of the sandbox still alive after its job (given a second to be reaped); killed once recorded."""
    deadline = time.monotonic() + 1.0
    while True:
        alive = (_unprivileged_descendants(sb.server_pids) | set(processes_of_uids(_sandbox_uids(sb)))) - baseline
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    for pid in alive:  # started by this test's sandbox: end them by pid so the next attack starts clean
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return sorted(alive)


def _own_binds() -> list[str]:
    import evolvecoder_datasets

    roots = {Path(evolvecoder_datasets.__file__).resolve().parents[1], Path(sys.prefix), Path(sys.base_prefix),
             Path(os.path.realpath(sys.executable)).parents[1]}  # fmt: skip
    return sorted({str(p) for r in roots for p in (r, r.resolve())})


def _census(sb: Sandbox) -> list[str]:
    """Run the census on every worker at once (each job holds its worker until done); what any of them found."""
    job = Job(CENSUS, inputs=[json.dumps(_own_binds())], outputs=["[]"])
    reports = sb.run_many([job] * sb.settings.worker_count)
    return [f"{r.statuses[0]}: {r.messages[0]}" for r in reports if r.statuses != ["pass"]]


# ------------------------------------------------------------------------------------------------------------------
# One run per (mode, attack), observed once, checked by several tests.
# ------------------------------------------------------------------------------------------------------------------


@dataclass
class Observation:
    statuses: list[str]
    messages: list[str]
    infra_error: str | None
    elapsed: float
    bound: float
    leftovers: list[int] = field(default_factory=list)
    census: list[str] = field(default_factory=list)
    host_traces: list[str] = field(default_factory=list)
    socket_hits: list[str] = field(default_factory=list)


@pytest.fixture(scope="module", params=MODES)
def sb(request, bait):
    with Sandbox(mode=request.param, **LIMITS) as sandbox:
        # Warm up, then note any unprivileged process a judge keeps on purpose (none today).
        sandbox.run("x = 1", ["assert x == 1"])
        sandbox.baseline = _unprivileged_descendants(sandbox.server_pids)
        _census(sandbox)
        sandbox.observed = {}
        yield sandbox


def _bound(sb: Sandbox, attack: Attack) -> float:
    settings = sb.settings
    return max(settings.load_limit_s, settings.wall_limit_s) + attack.size * settings.wall_limit_s + SLACK_S


def _observe(sb: Sandbox, bait: HostBait, attack: Attack) -> Observation:
    if attack.name in sb.observed:
        return sb.observed[attack.name]
    ctx = bait.ctx
    if attack.plant is not None:
        for _ in range(sb.settings.worker_count):  # one plant per worker: whatever it leaves waits wherever the attack runs
            sb.run(fill(attack.plant, ctx), [fill(t, ctx) for t in attack.plant_tests])
    hits_before = len(bait.hits)
    program = fill(attack.program, ctx)
    start = time.monotonic()
    if attack.kind == "stdio":
        report = sb.run_stdio(program, [fill(t, ctx) for t in attack.inputs],
                              [fill(t, ctx) for t in attack.outputs])  # fmt: skip
    else:
        report = sb.run(program, [fill(t, ctx) for t in attack.tests])
    elapsed = time.monotonic() - start
    obs = Observation(list(report.statuses), list(report.messages), report.infra_error, elapsed, _bound(sb, attack))
    obs.leftovers = _leftover_processes(sb, sb.baseline)
    obs.census = _census(sb)
    obs.host_traces = bait.traces()
    obs.socket_hits = bait.hits[hits_before:]
    sb.observed[attack.name] = obs
    return obs


ATTACK_PARAMS = [pytest.param(a, id=a.name) for a in ATTACKS]
CONTROL_PARAMS = [pytest.param(a, id=a.name) for a in CONTROLS]

# Attacks that still get wrong code judged pass, all on test shapes the judge cannot split yet and runs whole inside
# the sandbox (a walrus, a loop over itertools, a test judged inside that carries its expected values): the residual that
# docs/threat-model.md states under "What is not guaranteed", flagged per test as judged "inside". Marked xfail
# (not strict: some entry points already refuse some of their tests, e.g. the metric's whole-suite run).
KNOWN_GAPS: dict[str, str] = {}  # attack name -> why a correct judge still passes it (none today)


def _gap(param):
    """``param`` with an xfail mark when its attack is a known gap (for the tests that judge verdicts)."""
    attack = param.values[-1]
    reason = KNOWN_GAPS.get(attack.name)
    if reason is None:
        return param
    return pytest.param(*param.values, id=param.id, marks=pytest.mark.xfail(reason=reason, strict=False))


VERDICT_PARAMS = [_gap(p) for p in ATTACK_PARAMS]


def _show(attack: Attack, obs: Observation) -> str:
    return f"{attack.name}: statuses={obs.statuses} messages={[m[:160] for m in obs.messages]}"


@pytest.mark.parametrize("attack", VERDICT_PARAMS)
def test_attack_is_never_judged_pass(sb, bait, attack):
    obs = _observe(sb, bait, attack)
    assert len(obs.statuses) == attack.size, _show(attack, obs)
    passed = [i for i in attack.attacked_in(sb.settings.mode) if obs.statuses[i] == "pass"]
    assert passed == [], f"wrong code judged pass on tests {passed} in {sb.settings.mode} mode; " + _show(attack, obs)


@pytest.mark.parametrize("attack", ATTACK_PARAMS)
def test_attack_reads_no_secret(sb, bait, attack):
    obs = _observe(sb, bait, attack)
    leaked = bait.leaked(obs.messages, attack)
    assert leaked == [], f"secrets {leaked} came back in the messages; " + _show(attack, obs)
    assert obs.socket_hits == [], f"the program reached the host's sockets {obs.socket_hits}"


@pytest.mark.parametrize("attack", ATTACK_PARAMS)
def test_attack_leaves_no_trace(sb, bait, attack):
    obs = _observe(sb, bait, attack)
    assert obs.leftovers == [], f"processes of the sandbox outlived the job: {obs.leftovers}"
    assert obs.census == [], f"left for the next program: {obs.census}"
    assert obs.host_traces == [], f"left on the host: {obs.host_traces}"


@pytest.mark.parametrize("attack", ATTACK_PARAMS)
def test_attack_returns_within_its_limits(sb, bait, attack):
    obs = _observe(sb, bait, attack)
    assert obs.elapsed <= obs.bound, f"took {obs.elapsed:.1f} s, limits allow {obs.bound:.1f} s; " + _show(attack, obs)


@pytest.mark.parametrize("attack", ATTACK_PARAMS)
def test_attack_cannot_make_the_sandbox_report_a_failure_of_its_own(sb, bait, attack):
    obs = _observe(sb, bait, attack)
    assert obs.infra_error is None, f"infra_error={obs.infra_error!r}; " + _show(attack, obs)


@pytest.mark.parametrize("control", CONTROL_PARAMS)
def test_honest_control_passes_in_the_sandbox(sb, bait, control):
    obs = _observe(sb, bait, control)
    assert obs.statuses == ["pass"] * control.size, _show(control, obs)
    assert obs.leftovers == [] and obs.census == []


def test_program_correct_only_on_its_first_call_is_judged_the_same_on_every_run(sb):
    runs = [sb.run(MUTABLE_DEFAULT, list(MUTABLE_DEFAULT_TESTS)).statuses for _ in range(3)]
    assert runs[0] == runs[1] == runs[2], runs
    if sb.settings.mode == "fast":  # one process runs the tests in sequence: the second call sees the first one's list
        assert runs[0] == ["pass", "fail", "fail"], runs


# ------------------------------------------------------------------------------------------------------------------
# The rewards and the metric: the assert-style attacks (and the controls) in one batch per mode.
# ------------------------------------------------------------------------------------------------------------------

BATCH = [a for a in (*ATTACKS, *CONTROLS, CONSISTENCY) if a.kind == "assert" and a.plant is None and a.batch]
_BATCHES: dict[str, dict] = {}


@pytest.fixture(scope="module")
def batches(bait):
    yield _BATCHES
    from evolvecoder_datasets.rewards import make_code_reward

    for mode in MODES:  # the rewards' per-process sandboxes: close them with the module
        make_code_reward(mode=mode, **REWARD_LIMITS).sandbox.close()
    _BATCHES.clear()


def _batch(batches: dict, bait: HostBait, mode: str) -> dict:
    if mode in batches:
        return batches[mode]
    from evolvecoder_datasets.evaluate_metrics import load_sandboxed_code_eval
    from evolvecoder_datasets.rewards import make_code_reward, make_pass_rate_reward

    programs = [fill(a.program, bait.ctx) for a in BATCH]
    tests = [[fill(t, bait.ctx) for t in a.tests] for a in BATCH]
    completions = [f"Here is my solution.\n```python\n{p}\n```\n" for p in programs]
    logged: list[str] = []

    def log_extra(_name, values):
        logged.extend(str(v) for v in values)

    binary = make_code_reward(mode=mode, failing_value=-1.0, **REWARD_LIMITS)
    rate = make_pass_rate_reward(mode=mode, **REWARD_LIMITS)
    start = time.monotonic()
    binary_rewards = binary(completions=completions, tests=tests, log_extra=log_extra, log_metric=lambda *a: None)
    rate_rewards = rate(completions=completions, tests=tests, log_extra=log_extra, log_metric=lambda *a: None)
    reward_s = time.monotonic() - start
    metric = load_sandboxed_code_eval(config_name=mode)
    start = time.monotonic()
    scores, results = metric.compute(predictions=[[p] for p in programs], references=[repr(t) for t in tests],
                                     k=[1], num_workers=2, timeout=0.5)  # fmt: skip
    metric_s = time.monotonic() - start
    half = len(logged) // 2  # log_extra got one column from each reward: binary first, then pass rate
    batches[mode] = {
        "binary": dict(zip((a.name for a in BATCH), binary_rewards)),
        "rate": dict(zip((a.name for a in BATCH), rate_rewards)),
        "outcomes": {a.name: (logged[i], logged[half + i]) for i, a in enumerate(BATCH)},
        "metric": {a.name: results[i][0][1] for i, a in enumerate(BATCH)},
        "pass@1": scores["pass@1"],
        "seconds": (reward_s, metric_s),
    }
    return batches[mode]


BATCH_ATTACKS = [pytest.param(mode, a, id=f"{mode}-{a.name}") for mode in MODES for a in BATCH if a.klass != "control"
                 and a.klass != "consistency" and a.attacked_in(mode)]  # fmt: skip
BATCH_CONTROLS = [pytest.param(mode, a, id=f"{mode}-{a.name}") for mode in MODES for a in BATCH if a.klass == "control"]
BATCH_VERDICTS = [_gap(p) for p in BATCH_ATTACKS]


@pytest.mark.parametrize(("mode", "attack"), BATCH_VERDICTS)
def test_code_reward_gives_attack_only_the_failing_value(batches, bait, mode, attack):
    batch = _batch(batches, bait, mode)
    reward = batch["binary"][attack.name]
    assert reward == -1.0, f"{attack.name} got reward {reward!r} ({batch['outcomes'][attack.name][0]})"


@pytest.mark.parametrize(("mode", "attack"), BATCH_VERDICTS)
def test_pass_rate_reward_gives_no_credit_for_attacked_tests(batches, bait, mode, attack):
    batch = _batch(batches, bait, mode)
    reward = batch["rate"][attack.name]
    free = attack.size - len(attack.attacked_in(mode))
    assert reward is not None and reward <= free / attack.size + 1e-9, (
        f"{attack.name} got pass rate {reward!r} ({batch['outcomes'][attack.name][1]})")


@pytest.mark.parametrize(("mode", "attack"), BATCH_VERDICTS)
def test_metric_gives_attack_no_pass_at_1(batches, bait, mode, attack):
    result = _batch(batches, bait, mode)["metric"][attack.name]
    assert result["passed"] is False, f"{attack.name}: {result}"


@pytest.mark.parametrize(("mode", "attack"), BATCH_ATTACKS)
def test_rewards_and_metric_log_no_secret_for_attack(batches, bait, mode, attack):
    batch = _batch(batches, bait, mode)
    texts = [*batch["outcomes"][attack.name], json.dumps(batch["metric"][attack.name])]
    leaked = bait.leaked(texts, attack)
    assert leaked == [], f"secrets {leaked} in logged outcomes of {attack.name}: {texts}"


@pytest.mark.parametrize(("mode", "control"), BATCH_CONTROLS)
def test_honest_control_is_rewarded_and_passes_the_metric(batches, bait, mode, control):
    batch = _batch(batches, bait, mode)
    assert batch["binary"][control.name] == 1.0, batch["outcomes"][control.name]
    assert batch["rate"][control.name] == 1.0, batch["outcomes"][control.name]
    assert batch["metric"][control.name]["passed"] is True, batch["metric"][control.name]


@pytest.mark.parametrize("mode", MODES)
def test_metric_pass_at_1_counts_only_the_honest_programs(batches, bait, mode):
    batch = _batch(batches, bait, mode)
    # May pass: programs no test of theirs constrains, the known gaps (xfailed above), and the first-call-only
    # program, which passes exactly where the sandbox passes it (checked on its own below).
    allowed = {a.name for a in BATCH if a.klass != "control" and not a.attacked_in(mode)} | set(KNOWN_GAPS) | {
        CONSISTENCY.name}
    passing = sum(r["passed"] for name, r in batch["metric"].items() if name in allowed)
    controls = sum(1 for a in BATCH if a.klass == "control")
    assert batch["pass@1"] == pytest.approx((controls + passing) / len(BATCH)), batch["pass@1"]


@pytest.mark.parametrize("mode", MODES)
def test_program_correct_only_on_its_first_call_is_judged_alike_by_rewards_and_metric(batches, bait, mode):
    batch = _batch(batches, bait, mode)
    with Sandbox(mode=mode, **LIMITS) as sandbox:
        report = sandbox.run(MUTABLE_DEFAULT, list(MUTABLE_DEFAULT_TESTS))
    name = CONSISTENCY.name
    assert batch["rate"][name] == pytest.approx(report.pass_rate), (batch["outcomes"][name], report.statuses)
    assert batch["binary"][name] == (1.0 if report.all_passed else -1.0)
    assert batch["metric"][name]["passed"] is report.all_passed


# ------------------------------------------------------------------------------------------------------------------
# The judge's own work on small values that expand (a range of 10**18 items, a 200,000-digit int). The judge runs in
# the caller's process, so these run in a memory-capped child process with a watchdog: a hang is recorded against
# the test that caused it, the child is killed, and a fresh one goes on with the remaining tests.
# ------------------------------------------------------------------------------------------------------------------

_JUDGE_RUNNER = r"""
import json, resource, sys, time
cap = 2 << 30
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
spec = json.loads(sys.stdin.readline())
from evolvecoder_datasets.execution import Job, Sandbox
with Sandbox(mode=spec["mode"], **spec["limits"]) as sb:
    for i in spec["todo"]:
        print(json.dumps({"start": i}), flush=True)
        start, peak = time.monotonic(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            r = sb.run(spec["program"], [spec["tests"][i]])
            out = {"done": i, "status": r.statuses[0], "message": r.messages[0][:200], "infra": r.infra_error}
        except BaseException as err:
            out = {"done": i, "status": "raised", "message": repr(err)[:200], "infra": None}
        out["elapsed"] = time.monotonic() - start
        out["grew_mb"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak) / 1024  # peak RSS, KiB
        print(json.dumps(out), flush=True)
    if spec["reward"]:
        from evolvecoder_datasets.rewards import make_code_reward
        reward = make_code_reward(mode=spec["mode"], failing_value=-1.0, **spec["reward_limits"])
        tests = [spec["tests"][i] for i in spec["reward"]]
        print(json.dumps({"start": "reward"}), flush=True)
        value = reward(completions=["```python\n" + spec["program"] + "\n```"], tests=[tests])[0]
        reward.sandbox.close()
        print(json.dumps({"done": "reward", "value": value}), flush=True)
"""
_JUDGE_RESULTS: dict[str, dict] = {}
JUDGE_MEMORY_MB = 512  # what the judge may add to the caller's peak memory for one test (a program gets as much)


def _drive(spec: dict, budget_s: float) -> tuple[dict, object]:
    """Run the runner child on ``spec``; return what it finished and the step it hung or died on (or None)."""
    proc = subprocess.Popen([sys.executable, "-c", _JUDGE_RUNNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, start_new_session=True)  # fmt: skip
    lines: queue.Queue = queue.Queue()

    def pump():
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    proc.stdin.write(json.dumps(spec) + "\n")
    proc.stdin.flush()
    finished: dict = {}
    current, started, limit = "startup", time.monotonic(), 60.0
    try:
        while True:
            try:
                line = lines.get(timeout=max(0.1, started + limit - time.monotonic()))
            except queue.Empty:
                return finished, (current, {"hung": round(time.monotonic() - started, 1)})
            if line is None:
                return finished, None if current is None else (current, {"died": proc.wait()})
            msg = json.loads(line)
            if "start" in msg:
                current, started, limit = msg["start"], time.monotonic(), budget_s
            else:
                finished[msg["done"]] = msg
                current = None
                if msg.get("grew_mb", 0) >= JUDGE_MEMORY_MB:
                    return finished, None  # a fresh child, so that the next test's peak memory is its own
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the child we started, and its sandbox (they die with it)
        proc.wait()


def _judge_bomb_results(mode: str) -> dict:
    """Per test index (and ``"reward"``): the judge's answer and time, or ``{"hung": s}`` / ``{"died": rc}``."""
    if mode in _JUDGE_RESULTS:
        return _JUDGE_RESULTS[mode]
    per_test = LIMITS["wall_timeout_s"] + max(2.0, LIMITS["wall_timeout_s"]) + SLACK_S
    spec = {"mode": mode, "limits": LIMITS, "reward_limits": REWARD_LIMITS, "program": JUDGE_BOMB.program,
            "tests": list(JUDGE_BOMB.tests), "reward": []}  # fmt: skip
    results: dict = {}
    todo = list(range(len(JUDGE_BOMB.tests)))
    while todo:  # a hang costs one child: a fresh one goes on with the rest
        finished, stuck = _drive({**spec, "todo": todo}, per_test)
        results.update(finished)
        if stuck is not None:
            results[stuck[0]] = stuck[1]
        if "startup" in results:
            break
        todo = [i for i in todo if i not in results]
    answered = [i for i in range(len(JUDGE_BOMB.tests)) if "status" in results.get(i, {})]
    if answered:  # the reward over the tests the judge did answer (it would hang on the others too)
        finished, stuck = _drive({**spec, "todo": [], "reward": answered}, 3 * per_test)
        results.update(finished)
        if stuck is not None:
            results[stuck[0]] = stuck[1]
    _JUDGE_RESULTS[mode] = results
    return results


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("index", range(len(JUDGE_BOMB.tests)))
def test_judge_bounds_its_own_work_on_values_that_expand(mode, index):
    results = _judge_bomb_results(mode)
    assert "startup" not in results, results["startup"]
    outcome = results.get(index, {})
    test = JUDGE_BOMB.tests[index]
    assert "status" in outcome, f"the judge hung or died in the caller's process on {test!r} ({mode}): {outcome}"
    assert outcome["status"] not in ("pass", "raised"), f"{test!r}: {outcome}"
    assert outcome["infra"] is None, outcome
    # The child runs under a 2 GiB cap: a judge that stops only there would take a trainer's memory without it.
    assert outcome["grew_mb"] < JUDGE_MEMORY_MB, f"the judge's own memory grew {outcome['grew_mb']:.0f} MB on {test!r}"


@pytest.mark.parametrize("mode", MODES)
def test_code_reward_gives_the_judge_bomb_only_the_failing_value(mode):
    results = _judge_bomb_results(mode)
    if "reward" not in results:
        pytest.skip("the judge answered none of these tests (see the test above)")
    assert results["reward"].get("value") == -1.0, results["reward"]
