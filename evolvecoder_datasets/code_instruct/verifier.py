"""The verifier of an exported task judged outside: its split test against an agent's ``task_module.py``.

An exported task folder whose verification was judged outside ships this module, the sandbox and the judge as
``tests/ecd_judge.zip`` (standard library only; :func:`judge_archive`). Its ``tests/test.sh`` unpacks them and runs
``python -m evolvecoder_datasets.code_instruct.verifier TESTS WORK LOGS``: the test module is split into planned
asserts (:func:`~.split.split_pytest_module`), the agent's ``task_module.py`` is the sandbox's program (it imports
the image's installed packages), and the verdicts are decided by the judge, in processes that never run the agent's
code. pytest never runs the agent's code here, so nothing in it can reach the verdict. The split must give the test
ids recorded at export (``judge.json``'s ``test_ids``: the tests verification checked against pytest's own
collection); the exception classes the test names are learned again in this image, in a sandbox job of their own
(:mod:`.exceptions`). The reward is 1 only when every test function passed and every one was judged outside;
``LOGS/verdict.json`` keeps each test's status.

Example:
    >>> from evolvecoder_datasets.code_instruct.verifier import main
    >>> main(["tests", "/app", "/logs/verifier"])   # doctest: +SKIP
    0
"""

from __future__ import annotations

import io
import json
import os
import sys
import zipfile
from pathlib import Path

__all__ = ["JUDGE_ARCHIVE", "JUDGE_CONFIG", "judge_archive", "main", "read_solution"]

#: The archive ``test.sh`` unpacks, and the settings file beside it (written at export).
JUDGE_ARCHIVE = "ecd_judge.zip"
JUDGE_CONFIG = "judge.json"
#: The largest ``task_module.py`` the verifier reads (a larger one is a failed task, reward 0).
MAX_SOLUTION_BYTES = 1 << 20

_PACKAGE = Path(__file__).resolve().parents[1]
# What the verifier imports, in the package's folder: the sandbox, the judge, the split and this module.
_SHIPPED = ("__init__.py", "_lazy.py", "_parse.py", "chat.py", "errors.py", "limits.py", "schema.py",
            "execution", "code_instruct/__init__.py", "code_instruct/split.py", "code_instruct/raises.py",
            "code_instruct/exceptions.py", "code_instruct/verifier.py")  # fmt: skip


def judge_archive() -> bytes:
    """This package's verifier as a zip archive (its sources, ``__pycache__`` left out), the same bytes for the same
    sources.

    Example:
        >>> import io, zipfile
        >>> names = zipfile.ZipFile(io.BytesIO(judge_archive())).namelist()
        >>> "evolvecoder_datasets/code_instruct/verifier.py" in names, any("__pycache__" in n for n in names)
        (True, False)
    """
    files = []
    for entry in _SHIPPED:
        path = _PACKAGE / entry
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in files:
            if "__pycache__" in path.parts:
                continue
            info = zipfile.ZipInfo(f"{_PACKAGE.name}/{path.relative_to(_PACKAGE).as_posix()}", (1980, 1, 1, 0, 0, 0))
            info.compress_type, info.external_attr = zipfile.ZIP_DEFLATED, 0o644 << 16
            archive.writestr(info, path.read_bytes())
    return buffer.getvalue()


def read_solution(path: str | os.PathLike) -> str | None:
    """The agent's ``task_module.py``: a regular file (no link followed, no FIFO or device waited on) of at most
    :data:`MAX_SOLUTION_BYTES` bytes of UTF-8, else ``None``.

    Example:
        >>> read_solution("/nonexistent/task_module.py") is None
        True
    """
    from ..execution._forkserver.tools import read_regular

    try:
        data = read_regular(path, MAX_SOLUTION_BYTES)
    except OSError:
        return None
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def main(argv: list[str] | None = None) -> int:
    """Judge ``WORK/task_module.py`` against ``TESTS/<test file>``; write ``LOGS/reward.txt`` (1 or 0) and
    ``LOGS/verdict.json``. Returns 0 when a reward was written (whatever it is).

    Example:
        >>> main(["/tests", "/app", "/logs/verifier"])   # doctest: +SKIP
        0
    """
    from ..execution import Sandbox
    from .exceptions import exception_references, learn_exception_classes
    from .split import SPLIT_MODE, TEST_TIMEOUT_S, NotSplittable, split_pytest_module, split_settings

    tests_dir, work, logs = (Path(a) for a in (argv if argv is not None else sys.argv[1:]))
    logs.mkdir(parents=True, exist_ok=True)
    config = json.loads((tests_dir / JUDGE_CONFIG).read_text(encoding="utf-8"))
    verdict: dict = {"tests": {}, "judged": [], "reason": ""}
    test = (tests_dir / config["test_file"]).read_text(encoding="utf-8")
    try:
        suite = split_pytest_module(test, test_file=config["test_file"])
    except NotSplittable as err:  # the folder was written for a test that splits: it was edited since
        suite, verdict["reason"] = None, f"the test no longer splits: {err}"
    if suite is not None and "test_ids" in config and list(suite.names) != list(config["test_ids"]):
        # the tests verified (and checked against pytest's own collection) are these: anything else was edited
        suite, verdict["reason"] = None, "the test's split differs from the tests that were verified"
    solution = read_solution(work / "task_module.py")
    if suite is not None and solution is None:
        verdict["reason"] = "no readable task_module.py (a regular UTF-8 file of at most 1 MiB)"
    if suite is not None and solution is not None:
        settings = split_settings(test_timeout_s=float(config.get("test_timeout_s", TEST_TIMEOUT_S)),
                                  memory_mb=int(config.get("memory_mb", 4096)), workers=1,
                                  isolation=str(config.get("isolation", "auto")),
                                  mode=str(config.get("mode", SPLIT_MODE)))  # fmt: skip
        with Sandbox(settings) as sandbox:
            references = exception_references(test)
            if references:  # learned in this image, in a sandbox job of their own (the agent's code is not in it)
                classes = learn_exception_classes(references, settings=settings, sandbox=sandbox)
                suite = split_pytest_module(test, test_file=config["test_file"], exceptions=classes)
            report = sandbox.run(suite.program(solution), list(suite.tests))
        verdict["tests"] = dict(zip(suite.names, report.statuses))
        verdict["messages"] = dict(zip(suite.names, report.messages))
        verdict["judged"] = list(report.judged)
        verdict["isolation"] = report.isolation
    ok = bool(verdict["tests"]) and all(s == "pass" for s in verdict["tests"].values()) and all(
        j == "outside" for j in verdict["judged"]
    )
    (logs / "verdict.json").write_text(json.dumps(verdict, indent=1), encoding="utf-8")
    (logs / "reward.txt").write_text(f"{1 if ok else 0}\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
