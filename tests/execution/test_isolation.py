"""The host side of the sandbox, proved from inside a running Sandbox: what a program can read, reach and leave behind.

Each isolation that builds a filesystem (bubblewrap, and ``unshare`` with its bootstrap) is checked with real
processes; a mechanism this machine lacks is skipped with the reason. The last tests make both unavailable and
check that ``auto`` then says ``none``, loudly, and still judges.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import warnings
from pathlib import Path

import pytest

from evolvecoder_datasets.errors import SandboxUnavailable
from evolvecoder_datasets.execution import Sandbox, isolation
from evolvecoder_datasets.execution.isolation import IsolationWarning, Mount, isolation_available, mount_plan

REPO = Path(__file__).resolve().parents[2]
TOKEN = secrets.token_hex(6)

# Helpers every probing program defines: each returns "blocked" when the access fails.
PROBES = """
import os, socket

def read(path):
    try:
        with open(path, "rb") as fh:
            return fh.read(20000).decode(errors="replace")
    except OSError:
        return "blocked"

def listing(path):
    try:
        return sorted(os.listdir(path))
    except OSError:
        return "blocked"

def connect(address, family=socket.AF_UNIX):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        s.connect(address)
        return "connected"
    except OSError:
        return "blocked"
    finally:
        s.close()

def write(path):
    try:
        with open(path, "w") as fh:
            fh.write("left by a program")
        return "written"
    except OSError:
        return "denied"
"""


@pytest.fixture(scope="module", params=["bwrap", "unshare"])
def walled(request):
    """A started sandbox per namespace isolation (isolated mode), skipped where the mechanism cannot run here."""
    if not isolation_available(request.param):
        pytest.skip(f"{request.param} cannot build the sandbox on this machine")
    with Sandbox(workers=1, timeout_s=2.0, memory_mb=1024, isolation=request.param) as sb:
        yield sb


def _passes(report, tests):
    assert report.statuses == ["pass"] * len(tests), list(zip(tests, report.statuses, report.messages))


@pytest.fixture()
def host_secrets(tmp_path):
    """Files a program must not read: under the checkout, the home folder, /root, /work and the host's /tmp."""
    places = [REPO, Path.home(), Path("/root"), Path("/work"), tmp_path]
    made = []
    for folder in dict.fromkeys(places):
        path = folder / f".ecd-isolation-secret-{TOKEN}"
        try:
            path.write_text(f"secret {TOKEN}")
        except OSError:
            continue  # a folder this user cannot write (or that does not exist) proves nothing here
        made.append(path)
    yield made
    for path in made:
        path.unlink(missing_ok=True)


def test_host_files_outside_the_allowlist_are_unreadable(walled, host_secrets):
    assert host_secrets, "no host folder to plant a secret in"
    paths = [str(p) for p in host_secrets] + ["/etc/passwd", "/etc/shadow", "/etc/hostname"]
    tests = [f"assert read({p!r}) == 'blocked'" for p in paths]
    tests += [f"assert not os.path.lexists({str(p)!r})" for p in host_secrets]
    report = walled.run(PROBES, tests)
    _passes(report, tests)
    assert report.isolation == walled.isolation


def test_a_checkouts_git_folder_and_the_checkout_itself_are_gone(walled):
    if not (REPO / ".git").exists():
        pytest.skip("this checkout has no .git folder")
    tests = [
        f"assert read({str(REPO / '.git' / 'HEAD')!r}) == 'blocked'",
        f"assert not os.path.lexists({str(REPO / '.git')!r})",
        f"assert not os.path.lexists({str(REPO / 'pyproject.toml')!r})",
        f"assert not os.path.lexists({str(REPO / 'tests')!r})",
        # What is left of the checkout is only what the allowlist needs (this package, maybe a virtualenv).
        f"assert set(listing({str(REPO)!r})) <= {{'evolvecoder_datasets', '.venv', 'venv'}} or listing({str(REPO)!r}) == 'blocked'",
        "assert listing('/') != 'blocked' and 'home' not in listing('/') and 'run' not in listing('/')",
        "assert 'srv' not in listing('/') and 'opt' not in listing('/') and 'sys' not in listing('/')",
    ]
    _passes(walled.run(PROBES, tests), tests)


def test_a_unix_socket_bound_at_a_host_path_cannot_be_connected_to(walled, tmp_path):
    paths = [tmp_path / "host.sock", REPO / f".ecd-isolation-{TOKEN}.sock"]
    listeners = []
    try:
        for path in paths:
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind(str(path))
            os.chmod(path, 0o777)  # reachable for any uid, were the path visible
            server.listen(8)
            listeners.append(server)
        abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # abstract names live in the network namespace
        abstract.bind(f"\0ecd-isolation-{TOKEN}")
        abstract.listen(8)
        listeners.append(abstract)
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tcp.bind(("127.0.0.1", 0))
        tcp.listen(8)
        listeners.append(tcp)
        # Connectable from here: the probes would notice a visible socket.
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.connect(str(paths[0]))
        probe.close()
        tests = [f"assert connect({str(p)!r}) == 'blocked'" for p in paths]
        tests += [f"assert connect('\\0ecd-isolation-{TOKEN}') == 'blocked'",
                  f"assert connect(('127.0.0.1', {tcp.getsockname()[1]}), socket.AF_INET) == 'blocked'"]  # fmt: skip
        _passes(walled.run(PROBES, tests), tests)
    finally:
        for server in listeners:
            server.close()
        paths[1].unlink(missing_ok=True)


def test_a_program_can_still_talk_to_itself_over_its_own_loopback(walled):
    program = (
        "import socket\n"
        "def echo():\n"
        "    with socket.create_server(('127.0.0.1', 0)) as server:\n"
        "        with socket.create_connection(server.getsockname(), timeout=2) as client:\n"
        "            peer, _ = server.accept()\n"
        "            client.sendall(b'ping')\n"
        "            return peer.recv(4).decode()\n"
    )
    tests = ["assert echo() == 'ping'"]
    _passes(walled.run(program, tests), tests)


def test_writes_to_tmp_var_tmp_and_dev_shm_stay_inside(walled):
    names = {folder: f"{folder}/ecd-isolation-{TOKEN}-{i}" for i, folder in enumerate(isolation.PRIVATE_FOLDERS)}
    try:
        tests = [f"assert write({path!r}) in ('written', 'denied')" for path in names.values()]
        # The working folder is writable inside: a file left there must not appear in the host's /tmp either.
        tests.append(f"assert write('ecd-isolation-{TOKEN}-cwd') == 'written' and os.getcwd().startswith('/tmp/')")
        tests += [f"assert listing({folder!r}) != 'blocked'" for folder in ("/var/tmp", "/dev/shm")]
        _passes(walled.run(PROBES, tests), tests)
        for folder, path in names.items():
            assert not os.path.lexists(path), f"a program's write reached the host's {folder}"
        assert not list(Path("/tmp").glob(f"ecd-work-*/**/ecd-isolation-{TOKEN}-cwd"))
    finally:
        for path in names.values():
            if os.path.lexists(path):
                os.unlink(path)


def test_private_folders_start_empty_and_hide_what_the_host_keeps_there(walled):
    planted = [f"{folder}/ecd-isolation-{TOKEN}-planted" for folder in isolation.PRIVATE_FOLDERS]
    made = []
    try:
        for path in planted:
            try:
                Path(path).write_text("host")
                made.append(path)
            except OSError:
                pass
        tests = [f"assert not os.path.lexists({p!r})" for p in made]
        tests += ["assert listing('/var/tmp') == [] and listing('/dev/shm') == []"]
        _passes(walled.run(PROBES, tests), tests)
    finally:
        for path in made:
            os.unlink(path)


def test_compiled_and_stdlib_extension_modules_still_import(walled):
    program = (
        "import numpy, ssl, sqlite3, decimal, hashlib, zlib, lzma, bz2, ctypes, json, math\n"
        "def probe():\n"
        "    db = sqlite3.connect(':memory:')\n"
        "    ssl.create_default_context()\n"
        "    return [int(numpy.arange(4).sum()), float(numpy.linalg.det(numpy.eye(2))),\n"
        "            db.execute('select 40 + 2').fetchone()[0], str(decimal.Decimal('1.10') + decimal.Decimal('2.2')),\n"
        "            hashlib.sha256(b'').hexdigest()[:8], len(zlib.compress(b'a' * 100)) < 100]\n"
    )
    tests = ["assert probe() == [6, 1.0, 42, '3.30', 'e3b0c442', True]"]
    _passes(walled.run(program, tests), tests)


def test_no_host_process_or_environment_is_visible(walled, monkeypatch):
    tests = [
        "assert [p for p in listing('/proc') if p.isdigit() and 'pytest' in read(f'/proc/{p}/cmdline')] == []",
        "assert not [k for k in os.environ if k.startswith('ECD_ISOLATION_SECRET')]",
    ]
    monkeypatch.setenv(f"ECD_ISOLATION_SECRET_{TOKEN}", "token")  # set before this sandbox starts
    with Sandbox(workers=1, timeout_s=2.0, isolation=walled.isolation) as sb:
        _passes(sb.run(PROBES, tests), tests)


def test_pseudo_terminals_and_cgroups_are_the_sandboxs_own(walled):
    tests = [
        "assert len(os.openpty()) == 2",  # a private devpts instance
        "assert all(line.endswith(':/') for line in read('/proc/self/cgroup').split())",  # the host's paths hidden
    ]
    _passes(walled.run(PROBES, tests), tests)


def test_host_system_v_ipc_objects_are_invisible(walled):
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    shmid = libc.shmget(0, 4096, 0o1666)  # IPC_PRIVATE, IPC_CREAT, readable and writable by anyone
    if shmid < 0:
        pytest.skip(f"cannot create a System V segment here (errno {ctypes.get_errno()})")
    try:
        with open("/proc/sysvipc/shm") as fh:
            assert any(line.split()[1] == str(shmid) for line in fh.readlines()[1:])  # visible from the host
        tests = [f"assert all(line.split()[1] != '{shmid}' for line in read('/proc/sysvipc/shm').splitlines()[1:])"]
        _passes(walled.run(PROBES, tests), tests)
    finally:
        libc.shmctl(shmid, 0, None)  # IPC_RMID


HOST_THAT_DIES = """
import os, sys, time
from evolvecoder_datasets.execution import Sandbox

def descendants(root):
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found

import threading
sb = Sandbox(workers=1, isolation=sys.argv[1], timeout_s=60).start()
assert sb.run("def f():\\n    return 1\\n", ["assert f() == 1"]).statuses == ["pass"]
# A job in flight: the server is busy supervising a sleeping program, not reading its (soon closed) input.
threading.Thread(target=sb.run, args=("import time\\ndef f():\\n    time.sleep(120)\\n", ["assert f() is None"]),
                 daemon=True).start()
time.sleep(1.5)
# The service's fork servers are shared: the one running the host's job is the one with a sandbox uid below it.
uids = sb.sandbox_uids
def uid_of(pid):
    try:
        with open(f"/proc/{pid}/status") as fh:
            return int(fh.read().split("Uid:")[1].split()[0])
    except (OSError, IndexError, ValueError):
        return -1
busy = [s for s in sb.server_pids if any(uid_of(p) in uids for p in descendants(s))]
print(" ".join(str(p) for s in busy for p in [s, *descendants(s)]), flush=True)
os.kill(os.getpid(), 9)  # no atexit, no finalizer: only the kernel and the isolation can clean up
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("level", ["bwrap", "unshare"])
def test_the_sandbox_dies_with_the_process_that_started_it(level):
    """The service outlives its callers, but a caller's job does not: the service sees the caller hang up and
    stops the job's judge process, whose fork server, program and test processes then go (the kernel's
    parent-death signal and the isolation's own)."""
    import subprocess
    import sys
    import time

    if not isolation_available(level):
        pytest.skip(f"{level} cannot build the sandbox on this machine")
    out = subprocess.run([sys.executable, "-c", HOST_THAT_DIES, level], capture_output=True, text=True, timeout=60,
                         cwd=str(REPO), check=False)  # fmt: skip
    pids = [int(p) for p in out.stdout.split()]
    assert pids, out.stderr[-2000:]
    deadline = time.monotonic() + 10
    while any(map(_alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p in pids if _alive(p)]
    for pid in left:  # leave nothing running, whatever the verdict
        with contextlib.suppress(OSError):
            os.kill(pid, 9)
    assert not left, "sandbox processes outlived the process that started them"


@pytest.mark.parametrize("level", ["bwrap", "unshare"])
def test_a_virtualenv_reached_through_a_symlink_still_provides_its_packages(level, tmp_path):
    """The server's package folders are passed at their real paths, where the sandbox binds them: a venv reached
    through a symlink under the host's /tmp (replaced inside) must still import numpy."""
    import subprocess
    import sys

    if sys.prefix == sys.base_prefix:
        pytest.skip("not running from a virtualenv")
    if not isolation_available(level):
        pytest.skip(f"{level} cannot build the sandbox on this machine")
    link = tmp_path / "venv-link"
    link.symlink_to(sys.prefix)
    script = (
        "import sys, warnings\n"
        "warnings.simplefilter('ignore')\n"
        f"sys.path.insert(0, {str(REPO)!r})\n"
        "from evolvecoder_datasets.execution import Sandbox\n"
        f"with Sandbox(workers=1, isolation={level!r}) as sb:\n"
        "    print(sb.run('import numpy\\ndef f():\\n    return int(numpy.ones(3).sum())\\n', ['assert f() == 3']).statuses)\n"
    )
    python = link / "bin" / Path(sys.executable).name
    out = subprocess.run([str(python), "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert out.stdout.strip() == "['pass']", out.stderr[-2000:]


def test_building_the_sandbox_leaves_the_hosts_mounts_alone(walled):
    """The mounts are made in the sandbox's own mount namespace (private propagation): the host's table is the
    same after a server started and ran a job."""
    with open("/proc/self/mountinfo") as fh:
        before = sorted(line.split()[4] for line in fh)
    with Sandbox(workers=1, isolation=walled.isolation) as sb:
        tests = ["assert listing('/tmp') != 'blocked'"]
        _passes(sb.run(PROBES, tests), tests)
        with open("/proc/self/mountinfo") as fh:
            during = sorted(line.split()[4] for line in fh)
    assert during == before


def test_the_plan_is_an_allowlist():
    plan = mount_plan()
    binds = {m.dest: m for m in plan if m.kind in ("ro", "rw")}
    assert "/" not in binds and not any(m.kind in ("ro", "rw") and m.dest in ("/root", "/home", "/work", "/run") for m in plan)
    assert not any(str(REPO) == dest or str(REPO / ".git").startswith(dest.rstrip("/") + "/") for dest in binds)
    assert all(binds[d].kind == "ro" for d in binds)  # nothing writable unless a caller asks
    assert {m.dest for m in plan if m.kind == "tmpfs"} == set(isolation.PRIVATE_FOLDERS)
    # Parents before children: /tmp's tmpfs before anything bound below it, /dev before /dev/shm.
    order = [m.dest for m in plan]
    assert order.index("/dev") < order.index("/dev/shm")
    assert [m.depth for m in plan] == sorted(m.depth for m in plan)


def test_extra_binds_below_tmp_come_after_the_private_tmp(tmp_path):
    (tmp_path / "venv").mkdir()
    plan = mount_plan(read_only=[str(tmp_path / "venv")], writable=[(str(tmp_path), "/tmp/box")])
    order = [m.dest for m in plan]
    assert order.index("/tmp") < order.index(str(tmp_path / "venv")) and order.index("/tmp") < order.index("/tmp/box")
    assert Mount("rw", "/tmp/box", str(tmp_path)) in plan
    with pytest.raises(ValueError):
        mount_plan(read_only=["/"])


NON_ROOT_INSIDE = """
import ctypes, json, os
status = open("/proc/self/status").read()
libc = ctypes.CDLL(None, use_errno=True)
def write(path):
    try:
        with open(path, "w") as fh:
            fh.write("x")
        return "written"
    except OSError as err:
        return err.strerror
print(json.dumps({"uid": os.getuid(), "caps": status.split("CapEff:")[1].split()[0],
                  "nnp": status.split("NoNewPrivs:")[1].split()[0], "root": sorted(os.listdir("/")),
                  "remount": libc.mount(None, b"/usr", None, 4096 | 32, None), "usr": write("/usr/lib/ecd-x"),
                  "tmp": write("/tmp/ecd-x")}))
"""

NON_ROOT_HOST = """
import json, subprocess, sys
sys.path.insert(0, sys.argv[1])
from evolvecoder_datasets.execution import isolation
out = {}
for level in ("bwrap", "unshare"):
    ok = isolation.isolation_available(level)
    build = isolation.bwrap_command if level == "bwrap" else isolation.unshare_command
    done = None
    if ok:
        done = subprocess.run(build([isolation._python(), "-I", "-S", "-c", sys.argv[2]]), capture_output=True,
                              text=True, env=isolation.BASE_ENV)
    out[level] = {"available": ok, "inside": json.loads(done.stdout) if done and done.returncode == 0 else None}
print(json.dumps(out))
"""


def test_a_non_root_caller_gets_the_same_walls_without_capabilities():
    """As an unprivileged user (root runs this as uid 65534 through setpriv, with the system interpreter and a copy
    of the isolation modules), both levels start, show only the allowlist, and give the program no capabilities:
    it cannot remount the read-only binds or write them, only its private /tmp."""
    import json
    import shutil
    import subprocess
    import tempfile

    system_python = "/usr/bin/python3"
    if os.geteuid() != 0 or not shutil.which("setpriv") or not os.path.exists(system_python):
        pytest.skip("needs root, setpriv and /usr/bin/python3 to act as an unprivileged user")
    copy = Path(tempfile.mkdtemp(prefix="ecd-nonroot-"))
    try:
        execution = copy / "evolvecoder_datasets" / "execution"
        execution.mkdir(parents=True)
        (copy / "evolvecoder_datasets" / "__init__.py").write_text("")
        errors = "class ConfigError(ValueError):\n    pass\n\n\nclass SandboxUnavailable(RuntimeError):\n    pass\n"
        (copy / "evolvecoder_datasets" / "errors.py").write_text(errors)
        (execution / "__init__.py").write_text("")
        for name in ("isolation.py", "_mountns.py", "_wire.py", "_wire_own.py", "_wire_class.py"):
            shutil.copy(Path(isolation.__file__).with_name(name), execution / name)
        shutil.copytree(isolation.SERVER_PACKAGE, execution / isolation.SERVER_PACKAGE.name,
                        ignore=shutil.ignore_patterns("__pycache__"))
        for path in [copy, *copy.rglob("*")]:
            os.chmod(path, 0o755 if path.is_dir() else 0o644)
        command = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", system_python, "-I", "-c",
                   NON_ROOT_HOST, str(copy), NON_ROOT_INSIDE]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd="/", check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        results = json.loads(done.stdout)
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    ran = {level: r["inside"] for level, r in results.items() if r["available"]}
    if not ran:
        pytest.skip(f"no namespace level works for an unprivileged user here: {results}")
    for level, inside in ran.items():
        assert inside is not None, level
        assert inside["caps"] == "0000000000000000" and inside["nnp"] == "1", (level, inside)
        assert inside["remount"] == -1 and inside["usr"] == "Read-only file system", (level, inside)
        assert inside["tmp"] == "written", (level, inside)  # its own private /tmp
        assert not {"home", "run", "work", "root", "srv", "opt", "sys"} & set(inside["root"]), (level, inside)
        assert inside["uid"] in (65534, 0), (level, inside)  # the caller's uid (bwrap), root of its userns (unshare)


# --- when neither namespace level can run ------------------------------------------------------------------------


@pytest.fixture()
def fresh_probes():
    """Probes rerun in the test and after it (a test may replace ``isolation_available`` itself meanwhile)."""
    clear = isolation.isolation_available.cache_clear
    clear()
    yield
    clear()


def test_without_bwrap_and_unshare_on_path_auto_is_none_and_says_so(tmp_path, monkeypatch, fresh_probes):
    monkeypatch.setenv("PATH", str(tmp_path))  # neither tool can be found
    sandbox = Sandbox(workers=1, timeout_s=1.0)
    with pytest.warns(IsolationWarning, match="ISOLATION 'none'.*bwrap is not on PATH; unshare: unshare is not on PATH"):
        sandbox.start()
    with sandbox:
        report = sandbox.run("def f(x):\n    return x + 1\n", ["assert f(1) == 2", "assert f(1) == 3"])
    assert report.isolation == "none" and sandbox.isolation == "none"
    assert report.statuses == ["pass", "fail"]  # the verdict does not depend on kernel isolation


def test_when_the_probes_fail_auto_is_none_with_the_warning(monkeypatch, fresh_probes):
    monkeypatch.setattr(isolation, "isolation_available", lambda name: name == "none")
    with pytest.warns(IsolationWarning):
        assert isolation.detect_isolation("auto") == "none"
    with pytest.warns(IsolationWarning), Sandbox(workers=1, timeout_s=1.0) as sb:
        report = sb.run("def f():\n    return 'ok'\n", ["assert f() == 'ok'"])
    assert report.isolation == "none" and report.statuses == ["pass"]


def test_an_unshare_that_cannot_build_the_filesystem_is_refused_not_used(monkeypatch, fresh_probes):
    """A failing bootstrap step (here: a bind whose source is missing) must make ``unshare`` unavailable: the
    explicit request raises, and ``auto`` (bubblewrap refusing the same plan) falls to ``none`` with the warning."""
    if not isolation_available("unshare"):
        pytest.skip("unshare cannot build the sandbox on this machine")
    isolation.isolation_available.cache_clear()
    real_plan = isolation.mount_plan

    def broken_plan(**kwargs):
        missing = f"/nonexistent-ecd-{TOKEN}"
        return [*real_plan(**kwargs), Mount("ro", missing, missing)]

    monkeypatch.setattr(isolation, "mount_plan", broken_plan)
    with pytest.raises(SandboxUnavailable, match="cannot build the sandbox"):  # the bootstrap's own reason
        Sandbox(workers=1, isolation="unshare").start()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert isolation.detect_isolation("auto") == "none"
    assert any(issubclass(w.category, IsolationWarning) for w in caught)
