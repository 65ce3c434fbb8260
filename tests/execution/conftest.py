"""Fixtures for sandbox tests: one started sandbox per module and mode, and a process census of its uids."""

from __future__ import annotations

import contextlib
import os

import pytest

from evolvecoder_datasets.execution import Sandbox, _client


def processes_of_uids(uids: set[int]) -> list[int]:
    """Pids of live, non-zombie processes owned by any of ``uids`` (host-wide /proc scan)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as fh:
                status = fh.read()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        uid = int(fields.get("Uid", "-1").split()[0])
        if uid in uids and not fields.get("State", "").strip().startswith("Z"):
            found.append(int(entry))
    return found


def sandbox_per_mode(**settings):
    """A module-scoped fixture: a ``Sandbox(**settings)`` in each mode, isolated then fast (``name =
    sandbox_per_mode(...)`` in a test module)."""

    @pytest.fixture(scope="module", params=["isolated", "fast"])
    def per_mode(request):
        with Sandbox(mode=request.param, **settings) as sb:
            yield sb

    return per_mode


sandbox = sandbox_per_mode(workers=2, timeout_s=0.5, memory_mb=512)


@pytest.fixture(scope="module")
def isolated_sandbox():
    with Sandbox(workers=2, timeout_s=0.5, memory_mb=512, mode="isolated") as sb:
        yield sb


@contextlib.contextmanager
def own_service(folder) -> object:
    """Point this process's sandboxes at a service of their own (runtime folder ``folder``) for the block, release
    that service at the end and restore the previous setting: a test that kills or floods a service touches no
    other test's."""
    saved = os.environ.get("EVOLVECODER_SERVICE_DIR")
    os.environ["EVOLVECODER_SERVICE_DIR"] = str(folder)
    try:
        yield
        _client.release_service(wait_s=10.0)
    finally:
        if saved is None:
            os.environ.pop("EVOLVECODER_SERVICE_DIR", None)
        else:
            os.environ["EVOLVECODER_SERVICE_DIR"] = saved
