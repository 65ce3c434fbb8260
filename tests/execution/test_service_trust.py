"""The execution service is proven this user's, never assumed from its path.

Without ``XDG_RUNTIME_DIR`` (root, containers) the service lives under the shared temp folder, where another local
user can make ``evolvecoder-<uid>`` first, leave links where the lock and log files will be opened, or answer on
a socket of their own. Each attack is played here as that user would play it, with a real second uid (65534,
through ``chown`` and ``setuid``) where it needs one, and each has a control that passes the same check.
"""

from __future__ import annotations

import json
import marshal
import os
import select
import shutil
import socket
import stat
import struct
import tempfile
import threading
import time

import pytest

from evolvecoder_datasets.errors import SandboxUntrusted
from evolvecoder_datasets.execution import Sandbox, _client, _protocol
from evolvecoder_datasets.execution._trust import open_private_file, peer_credentials, private_folder, safe_parent

OTHER = 65534  # nobody: a second local user
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: chown to, and setuid into, a second uid")


@pytest.fixture
def shared_tmp(tmp_path, monkeypatch):
    """A temp folder like /tmp (mode 1777) as the only root of the service's folder: no XDG_RUNTIME_DIR, no
    EVOLVECODER_SERVICE_DIR."""
    root = tmp_path / "tmp"
    root.mkdir()
    os.chmod(root, 0o1777)
    monkeypatch.delenv("EVOLVECODER_SERVICE_DIR", raising=False)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


@pytest.fixture
def service_dir(tmp_path, monkeypatch):
    """A runtime folder of this user (EVOLVECODER_SERVICE_DIR); the service a test starts there is released."""
    base = tmp_path / "svc"
    monkeypatch.setenv("EVOLVECODER_SERVICE_DIR", str(base))
    yield base
    _client.release_service(wait_s=10.0)


@pytest.fixture
def reachable():
    """A folder under /tmp that every user can traverse (pytest's own temp folders are 0700)."""
    folder = tempfile.mkdtemp(prefix="ecd-reach-", dir="/tmp")
    os.chmod(folder, 0o711)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


# -- the folders ---------------------------------------------------------------------------------------------------
@needs_root
def test_a_folder_another_user_made_first_is_refused_and_nothing_is_written_in_it(shared_tmp):
    top = shared_tmp / f"evolvecoder-{os.geteuid()}"
    top.mkdir(mode=0o700)
    os.chown(top, OTHER, OTHER)  # the other user made it first, private to them
    with pytest.raises(SandboxUntrusted) as caught:
        _client.service_folder()
    message = str(caught.value)
    assert str(top) in message and f"uid {OTHER}" in message and "0700" in message
    assert "EVOLVECODER_SERVICE_DIR" in message and "remove it" in message
    assert os.listdir(top) == []  # no digest folder, lock or log was made in their folder
    with pytest.raises(SandboxUntrusted):
        _client.connect()  # the caller's entry point refuses the same way, before any socket
    # Control: once it is gone, the same call makes the folder, ours, mode 0700 at each level.
    top.rmdir()
    folder = _client.service_folder()
    assert os.path.dirname(folder) == str(top)
    for path in (top, folder):
        assert os.lstat(path).st_uid == os.geteuid() and _mode(path) == 0o700


@needs_root
def test_a_digest_folder_of_another_user_inside_ours_is_refused(shared_tmp):
    top = shared_tmp / f"evolvecoder-{os.geteuid()}"
    top.mkdir(mode=0o700)
    digest = top / _client._digest()
    digest.mkdir(mode=0o700)
    os.chown(digest, OTHER, OTHER)
    with pytest.raises(SandboxUntrusted, match=f"uid {OTHER}"):
        _client.service_folder()
    os.chown(digest, os.geteuid(), os.getegid())  # control: the same folder, ours
    assert _client.service_folder() == str(digest)


def test_a_folder_others_may_write_is_refused_and_one_they_may_only_read_ends_0700(shared_tmp):
    top = shared_tmp / f"evolvecoder-{os.geteuid()}"
    top.mkdir()
    for mode in (0o777, 0o775, 0o757):
        os.chmod(top, mode)
        with pytest.raises(SandboxUntrusted, match=f"mode {mode:04o}.*may write"):
            _client.service_folder()
        assert _mode(top) == mode and os.listdir(top) == []  # refused as it was, nothing made in it
    # Ours and not writable by others (mode 0755, as earlier versions left it): nobody else can have put anything
    # in it, so it is narrowed to 0700 and used.
    os.chmod(top, 0o755)
    folder = _client.service_folder()
    assert _mode(top) == 0o700 and _mode(folder) == 0o700
    # A digest folder others may write is refused the same way.
    os.chmod(folder, 0o733)
    with pytest.raises(SandboxUntrusted, match="may write"):
        _client.service_folder()


def test_a_symlinked_folder_is_refused_and_its_target_is_left_alone(shared_tmp, tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)  # ours and private: only the link is wrong
    top = shared_tmp / f"evolvecoder-{os.geteuid()}"
    top.symlink_to(target)
    with pytest.raises(SandboxUntrusted, match="symbolic link") as caught:
        _client.service_folder()
    assert str(target) in str(caught.value)  # says where it points
    assert os.listdir(target) == []
    # The digest level, linked inside a folder of ours, is refused too.
    top.unlink()
    top.mkdir(mode=0o700)
    (top / _client._digest()).symlink_to(target)
    with pytest.raises(SandboxUntrusted, match="symbolic link"):
        _client.service_folder()
    assert os.listdir(target) == []
    # Control: a real folder in its place is used.
    (top / _client._digest()).unlink()
    assert os.path.isdir(_client.service_folder()) and not os.path.islink(_client.service_folder())


def test_a_shared_parent_others_may_rename_entries_of_is_refused(tmp_path, monkeypatch):
    loose = tmp_path / "loose"
    loose.mkdir()
    os.chmod(loose, 0o777)  # world-writable without the sticky bit: anyone may rename our folder away
    monkeypatch.delenv("EVOLVECODER_SERVICE_DIR", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(loose))
    with pytest.raises(SandboxUntrusted, match="not sticky.*chmod \\+t"):
        _client.service_folder()
    os.chmod(loose, 0o1777)  # control: sticky, as /tmp is
    assert safe_parent(str(loose)) == str(loose)
    assert _client.service_folder().startswith(str(loose))


def test_a_user_set_service_dir_gets_the_same_check(tmp_path, monkeypatch):
    base = tmp_path / "mine"
    base.mkdir()
    os.chmod(base, 0o777)
    monkeypatch.setenv("EVOLVECODER_SERVICE_DIR", str(base))
    with pytest.raises(SandboxUntrusted, match="may write"):
        _client.service_folder()
    os.chmod(base, 0o700)  # control
    assert _client.service_folder().startswith(str(base))


# -- the files in the folder ---------------------------------------------------------------------------------------
def test_links_planted_at_the_lock_and_log_paths_are_refused_and_their_targets_unchanged(service_dir, tmp_path):
    folder = _client.service_folder()
    secret = tmp_path / "root-only"
    secret.write_text("secret\n")
    os.chmod(secret, 0o600)
    before = (secret.read_bytes(), os.stat(secret).st_mtime_ns)
    chosen = tmp_path / "chosen-by-them"  # a file the other user wants made where they chose
    for name in ("start.lock", "service.log"):
        for target in (secret, chosen):
            os.symlink(target, os.path.join(folder, name))
            with pytest.raises(SandboxUntrusted, match=f"{name}.*symbolic link"):
                _client.connect()
            os.unlink(os.path.join(folder, name))
            assert (secret.read_bytes(), os.stat(secret).st_mtime_ns) == before
            assert not chosen.exists()
    assert not os.path.exists(os.path.join(folder, "service.sock"))  # no service was started meanwhile
    # A hard link to the file and a FIFO (an open that would block) are refused as well, at once.
    os.unlink(os.path.join(folder, "start.lock"))  # the real one, made while the log was tried
    os.link(secret, os.path.join(folder, "start.lock"))
    with pytest.raises(SandboxUntrusted, match="hard link"):
        _client.connect()
    os.unlink(os.path.join(folder, "start.lock"))
    os.mkfifo(os.path.join(folder, "service.log"), 0o600)
    started = time.monotonic()
    with pytest.raises(SandboxUntrusted, match="service.log"):
        _client.connect()
    assert time.monotonic() - started < 5
    os.unlink(os.path.join(folder, "service.log"))
    assert (secret.read_bytes(), os.stat(secret).st_mtime_ns) == before
    # Control: with the links gone the same call starts the service, and its files are plain files of ours.
    sock = _client.connect()
    sock.close()
    for name in ("start.lock", "service.log"):
        st = os.lstat(os.path.join(folder, name))
        assert stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and _mode(os.path.join(folder, name)) == 0o600


def test_a_non_socket_at_the_socket_path_is_refused_and_never_removed(tmp_path):
    folder = private_folder(str(tmp_path / "svc"))
    path = os.path.join(folder, "service.sock")
    with open(path, "w") as fh:
        fh.write("not a socket")
    with pytest.raises(SandboxUntrusted, match="not a socket"):
        _client.bind_listener(folder)
    with pytest.raises(SandboxUntrusted, match="not a socket"):
        _client._try_connect(folder)
    assert open(path).read() == "not a socket"
    os.unlink(path)
    os.symlink(tmp_path / "their.sock", path)
    with pytest.raises(SandboxUntrusted, match="not a socket"):
        _client.bind_listener(folder)
    assert os.path.islink(path) and not (tmp_path / "their.sock").exists()
    os.unlink(path)
    # Control: a dead service's socket is replaced by a live one.
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(path)
    stale.close()
    listener = _client.bind_listener(folder)
    assert listener is not None and _mode(path) == 0o600
    _client.release_listener(folder, listener)


def test_open_private_file_makes_a_new_file_exclusively_and_reopens_only_ours(tmp_path):
    folder = private_folder(str(tmp_path / "svc"))
    fd = open_private_file(folder, "start.lock", os.O_RDWR)
    os.write(fd, b"x")
    os.close(fd)
    fd = open_private_file(folder, "start.lock", os.O_RDWR)  # control: the same file again
    assert os.read(fd, 1) == b"x"
    os.close(fd)
    if os.geteuid() == 0:
        os.chown(os.path.join(folder, "start.lock"), OTHER, OTHER)
        with pytest.raises(SandboxUntrusted, match="another user"):
            open_private_file(folder, "start.lock", os.O_RDWR)


# -- the peer ------------------------------------------------------------------------------------------------------
def _as_other_user(work) -> tuple[int, int, int]:
    """Fork a child that drops to uid/gid 65534 (no groups) and runs ``work(stop_fd, ready)``; what it returns (a
    dict) comes back as JSON through a pipe. Returns once the child called ``ready()``, with ``(pid, result fd,
    stop fd)``: closing the stop fd tells the child to finish."""
    result_r, result_w = os.pipe()
    stop_r, stop_w = os.pipe()
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the other user: only what was imported before the fork, then _exit
        status = 1
        try:
            for fd in (result_r, stop_w, ready_r):
                os.close(fd)
            os.setgroups([])
            os.setresgid(OTHER, OTHER, OTHER)
            os.setresuid(OTHER, OTHER, OTHER)
            os.write(result_w, json.dumps(work(stop_r, lambda: os.write(ready_w, b"r"))).encode())
            status = 0
        finally:
            os._exit(status)
    for fd in (result_w, stop_r, ready_w):
        os.close(fd)
    assert os.read(ready_r, 1) == b"r"
    os.close(ready_r)
    return pid, result_r, stop_w


def _finish(pid: int, result_r: int, stop_w: int) -> dict:
    os.close(stop_w)
    data = b""
    while chunk := os.read(result_r, 65536):
        data += chunk
    os.close(result_r)
    assert os.waitpid(pid, 0)[1] == 0
    return json.loads(data)


def _fake_service(listener: socket.socket):
    """The other user's service: answers every connection with a ``pass`` at once, and counts what it is sent."""
    def work(stop_r: int, ready) -> dict:
        assert os.geteuid() == OTHER
        listener.listen(8)  # the kernel records the listener's credentials here: uid 65534
        listener.settimeout(0.05)
        ready()
        fake = marshal.dumps(("ok", [marshal.dumps((["pass"], [""], [0.0], "none", False, None, ["outside"]))]))
        got, connections = 0, 0
        while True:
            try:
                conn, _ = listener.accept()
            except TimeoutError:  # nothing waiting: finish once told to (connections queued before are served)
                if select.select([stop_r], [], [], 0)[0]:
                    break
                continue
            connections += 1
            try:
                conn.sendall(struct.pack(">I", len(fake)) + fake)  # believed by nobody, sent unasked
                conn.settimeout(0.5)
                while data := conn.recv(65536):
                    got += len(data)
            except OSError:
                pass
            conn.close()
        return {"connections": connections, "bytes": got}

    return work


@needs_root
def test_a_fake_service_of_another_uid_is_refused_and_never_receives_a_program(service_dir):
    folder = _client.service_folder()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(os.path.join(folder, "service.sock"))  # the path is right (a socket file of ours, in our folder):
    fake = _as_other_user(_fake_service(listener))       # only the process answering behind it is not ours
    listener.close()
    try:
        with pytest.raises(SandboxUntrusted) as caught:
            _client.connect()
        assert f"uid {OTHER}" in str(caught.value) and "nothing was sent" in str(caught.value)
        with pytest.raises(SandboxUntrusted, match=f"uid {OTHER}"):
            Sandbox(workers=1, isolation="none").run("def f():\n    return 0", ["assert f() == 1"])
        with pytest.raises(SandboxUntrusted, match=f"uid {OTHER}"):
            _client.release_service(wait_s=1.0)
    finally:
        seen = _finish(*fake)
    assert seen["connections"] >= 3  # it was reached each time, and it answered
    assert seen["bytes"] == 0  # but no request (no program, no test) ever reached it


def _other_client(path: str):
    def work(stop_r: int, ready) -> dict:
        ready()
        s = socket.socket(socket.AF_UNIX)
        s.connect(path)
        body = marshal.dumps(("ping",))
        try:
            s.sendall(struct.pack(">I", len(body)) + body)
        except OSError:
            pass
        s.settimeout(10)
        try:
            return {"answer": repr(s.recv(100))}
        except OSError as err:
            return {"answer": type(err).__name__}

    return work


@needs_root
def test_the_service_closes_a_connection_of_another_uid_without_reading_it(reachable):
    from evolvecoder_datasets.execution.service import Service

    folder = reachable  # as if the other user could reach the socket
    path = os.path.join(folder, "service.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o666)
    listener.listen(4)
    service = Service(folder, judges=1, idle_s=5.0)
    other = _as_other_user(_other_client(path))
    conn, _ = listener.accept()
    assert peer_credentials(conn)[1] == OTHER
    service._connection(conn)  # returns at once: nothing read, closed
    assert _finish(*other)["answer"] in ("b''", "ConnectionResetError") and service.refused == 1
    # Control: a caller of this uid on the same listener gets its answer.
    mine = socket.socket(socket.AF_UNIX)
    mine.connect(path)
    conn, _ = listener.accept()
    worker = threading.Thread(target=service._connection, args=(conn,))
    worker.start()
    _protocol.send(mine, ("ping",))
    assert _protocol.recv(mine) == ("ok", os.getpid())
    mine.close()
    worker.join(10)
    listener.close()
    assert service.refused == 1


def test_the_real_service_runs_as_its_callers_uid_and_passes_the_check(service_dir):
    sock = _client.connect()  # starts it
    try:
        pid, uid, _ = peer_credentials(sock)
        assert uid == os.geteuid() and pid != os.getpid()
        _protocol.send(sock, ("ping",))
        assert _protocol.recv(sock) == ("ok", pid)
    finally:
        sock.close()


# -- the uid claims (one folder per machine and user, whatever service folder a sandbox uses) --------------------
@needs_root
def test_a_uid_claims_folder_another_user_made_first_is_refused_and_nothing_is_written_in_it(shared_tmp):
    from evolvecoder_datasets.execution._worker import _claim_uid

    folder = shared_tmp / f"evolvecoder-sandbox-uids-{os.geteuid()}"
    folder.mkdir(mode=0o700)
    os.chmod(folder, 0o777)
    os.chown(folder, OTHER, OTHER)  # made first by the other user, open to everyone: they could plant lock files
    with pytest.raises(SandboxUntrusted, match=f"uid {OTHER}"):
        _claim_uid()
    assert os.listdir(folder) == []
    folder.rmdir()  # control: gone, the claim makes the folder, ours and 0700, and a lock file of ours in it
    uid, fd = _claim_uid()
    try:
        assert _mode(folder) == 0o700 and os.lstat(folder).st_uid == os.geteuid()
        lock = folder / f"{uid}.lock"
        assert stat.S_ISREG(os.lstat(lock).st_mode) and os.lstat(lock).st_uid == os.geteuid()
    finally:
        os.close(fd)


def test_links_planted_as_uid_lock_files_are_refused_and_their_targets_left_alone(shared_tmp, tmp_path):
    """A root caller opened ``<uid>.lock`` following links: a link planted there made it open (and create) a file
    where someone else chose."""
    from evolvecoder_datasets.execution._worker import _UID_BASE, _UID_SPAN, _claim_uid, uid_claims_folder

    folder = uid_claims_folder()
    precious = tmp_path / "precious"
    precious.write_text("keep me")
    absent = tmp_path / "made-by-us"
    for k, uid in enumerate(range(_UID_BASE, _UID_BASE + _UID_SPAN)):  # every uid a claim could try first
        os.symlink(precious if k % 2 else absent, os.path.join(folder, f"{uid}.lock"))
    with pytest.raises(SandboxUntrusted, match="symbolic link"):
        _claim_uid()
    assert precious.read_text() == "keep me" and not absent.exists()
