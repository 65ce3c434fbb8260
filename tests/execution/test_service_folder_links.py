"""The runtime folder is reached by its real path, never through a link another user can point elsewhere.

``XDG_RUNTIME_DIR`` (or the folder above ``EVOLVECODER_SERVICE_DIR``) was checked by ``os.stat``, which follows a
symbolic link: a link that uid 65534 owns in ``/tmp``, pointing at a folder of root's, passed, and every later path
(the lock, the socket) went through it. Measured with the previous code: root's ``bind_listener`` then bound its
socket and ran ``chmod 0600`` by that path; uid 65534, re-pointing the link between the two (made certain here by a
hook at that moment), had root's chmod land on a root file of 0644 (it became 0600). Now the folder above ours is
resolved to its real path once, checked there, and only that path is used.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import tempfile
from pathlib import Path

import pytest

from evolvecoder_datasets.execution import Sandbox, _client

OTHER = 65534


@pytest.fixture
def short_tmp():
    """A short folder (a socket's path must fit in 108 bytes), removed at the end."""
    path = Path(tempfile.mkdtemp(prefix="ecdl-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def layout(short_tmp, monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("needs root to act as another uid (chown)")
    tmp_path = short_tmp
    shared = tmp_path / "shared"  # a sticky folder everyone may write, as /tmp is
    shared.mkdir()
    os.chmod(shared, 0o1777)
    ours = tmp_path / "ours"  # root's runtime folder, the link's first target
    ours.mkdir(mode=0o700)
    theirs = tmp_path / "theirs"  # uid 65534's own folder
    theirs.mkdir()
    os.chown(theirs, OTHER, OTHER)
    victim = tmp_path / "victim"  # a root file others may read
    victim.write_text("root's\n")
    os.chmod(victim, 0o644)
    link = shared / "runtime"
    os.symlink(ours, link)
    os.lchown(link, OTHER, OTHER)  # uid 65534's link: it may point it anywhere at any time
    monkeypatch.delenv("EVOLVECODER_SERVICE_DIR", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(link))
    return {"link": link, "ours": ours, "theirs": theirs, "victim": victim}


def _repoint(link, target) -> None:
    """What uid 65534 may do to its link in a sticky folder: replace it by one to ``target``."""
    tmp = link.with_name("runtime.new")
    os.symlink(target, tmp)
    os.lchown(tmp, OTHER, OTHER)
    os.rename(tmp, link)


def test_a_link_another_user_owns_above_the_folder_cannot_redirect_roots_chmod(layout, monkeypatch):
    folder = _client.service_folder()
    digest = os.path.basename(folder)
    # uid 65534 prepares its folder: the same names, the socket's a link to root's file.
    fake = layout["theirs"] / f"evolvecoder-{os.geteuid()}" / digest
    fake.mkdir(parents=True)
    os.symlink(layout["victim"], fake / "service.sock")
    real_bind = socket.socket.bind

    class Racing(socket.socket):
        def bind(self, address):  # the moment between root's bind and its chmod: the link is re-pointed
            real_bind(self, address)
            _repoint(layout["link"], layout["theirs"])

    monkeypatch.setattr(_client.socket, "socket", Racing)
    listener = _client.bind_listener(folder)
    try:
        assert stat.S_IMODE(os.stat(layout["victim"]).st_mode) == 0o644  # before: 0600, root's chmod redirected
        assert os.path.realpath(folder) == folder  # no link on the way, ours or another's
    finally:
        if listener is not None:
            listener.close()


def test_the_service_still_works_through_a_link_of_ours(short_tmp, monkeypatch):
    """Control: a runtime folder reached through a link this user owns (to a folder of its own) is used, and a
    sandbox on it judges."""
    real = short_tmp / "real"
    real.mkdir(mode=0o700)
    link = short_tmp / "mine"
    os.symlink(real, link)
    monkeypatch.delenv("EVOLVECODER_SERVICE_DIR", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(link))
    folder = _client.service_folder()
    assert folder.startswith(str(real))
    try:
        with Sandbox(workers=1, mode="fast", timeout_s=1.0) as sb:
            assert sb.run("def f(x):\n    return x * 2\n", ["assert f(2) == 4"]).statuses == ["pass"]
    finally:
        _client.release_service(wait_s=10)
