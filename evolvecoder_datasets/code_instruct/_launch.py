"""Started inside the sandbox by the repository's interpreter: apply limits, drop privileges, exec pytest.

Usage: ``python _launch.py <spec.json>``. The spec carries the rlimits, the uid to drop to (when running as root),
the environment pytest gets, its argv, and the run's verdict key. The key never reaches pytest's environment or a
file: the launcher writes it into a pipe whose read end pytest inherits (``ECD_VERDICT_FD`` names it), and the verdict
plugin reads and closes it before any test module is imported. Standard library only (it runs in the repository's
virtualenv).
"""

from __future__ import annotations

import json
import os
import resource
import sys


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as handle:
        spec = json.load(handle)
    os.unlink(sys.argv[1])  # it holds the verdict key: gone before any untrusted code runs
    env = dict(spec["env"])
    if spec.get("key"):
        read_end, write_end = os.pipe()
        os.write(write_end, spec["key"].encode("ascii"))
        os.close(write_end)
        os.set_inheritable(read_end, True)
        env["ECD_VERDICT_FD"] = str(read_end)
    for name, (soft, hard) in spec["limits"].items():
        try:
            resource.setrlimit(getattr(resource, name), (soft, hard))
        except (ValueError, OSError):
            pass
    uid = spec.get("uid")
    if uid is not None and os.geteuid() == 0:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    os.chdir(spec["cwd"])
    argv = spec["argv"]
    os.execve(argv[0], argv, env)


if __name__ == "__main__":
    main()
