"""Outputs of code_instruct: dataset rows (pushed like any round) and task folders for agent harnesses.

Rows carry the published columns (``id``, ``question``, ``tests``) so :func:`evolvecoder_datasets.rounds.push_round`
takes them as they are: ``question`` is the instruction with its delivery contract and ``tests`` holds one element,
the pytest module. The other columns keep the solution and the provenance.

A task folder is a Harbor task (``harbor lint`` reports no finding on it)::

    <task id>/
      instruction.md            the instruction, delivery contract included
      task.toml                 Harbor's schema only: [task], [agent] (user "agent"), [verifier] (its own
                                container), [environment] limits, artifacts = ["/app/task_module.py"], and our
                                provenance in [metadata]
      environment/              the container recipe of the verified environment (see :mod:`.dockerfile`):
        Dockerfile              digest-pinned python image, pinned requirements, the repository's exact source, /app
        requirements.txt
        src/
      tests/test.sh             runs the tests against /app/task_module.py and writes /logs/verifier/reward.txt
      tests/test_task.py        the pytest module
      tests/ecd_judge.zip       (a task judged outside) the sandbox and the judge (:mod:`.verifier`), standard
      tests/judge.json          library only, and their limits: the test is split into planned asserts, the agent's
                                code runs in the sandbox and the verdicts are decided in processes that never ran it
      tests/ecd_verdict.py      (a task judged inside, exported only when asked) the verdict plugin of a pytest run
                                in the agent's interpreter: hardened, but a reward code in that interpreter can
                                still reach (docs/threat-model.md)
      solution/patch.diff       the reference solution, as a diff that creates task_module.py
      solution/solve.sh         applies it in /app

Harbor copies the agent's ``/app/task_module.py`` into the verifier's container (``artifacts``), so the tests never
run inside the agent's sandbox. :func:`verify_task_folder` re-verifies a folder from its own files only.

Example:
    >>> from evolvecoder_datasets.code_instruct import export_task_folders, tasks_to_dataset
    >>> folders = export_task_folders(run, "out/tasks")                # doctest: +SKIP
    >>> verify_task_folder(folders[0]).result.ok                       # doctest: +SKIP
    True
"""

from __future__ import annotations

import difflib
import json
import logging
import os
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, SchemaError
from .config import VERSION
from .dockerfile import AGENT_USER, WORKDIR, EnvironmentSpec, environment_spec, write_build_context
from .split import SPLIT_MODE, TEST_TIMEOUT_S, split_pytest_module
from .tasks import JUDGED_INSIDE, SOLUTION_FILE, TEST_FILE, CodeInstructRun, Task
from .verdict import HARNESS_FLAGS, PLUGIN_MODULE, PLUGIN_PATH
from .verification import Verification
from .verifier import JUDGE_ARCHIVE, JUDGE_CONFIG, judge_archive

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

    from .backend import EnvironmentBackend

logger = logging.getLogger(__name__)

__all__ = [
    "ROW_COLUMNS",
    "SOURCE",
    "environment_specs",
    "export_task_folders",
    "exportable",
    "files_from_patch",
    "solution_patch",
    "task_features",
    "task_row",
    "task_toml",
    "tasks_to_dataset",
    "verify_task_folder",
]

SOURCE = "code_instruct"
ROW_COLUMNS = (
    "id", "source", "question", "tests", "problem", "solution", "repo", "repo_version", "package", "path",
    "start_line", "end_line", "model", "attempts", "seed_index", "environment", "pipeline_version", "prompt_version",
    "judged",
)  # fmt: skip


def task_row(task: Task) -> dict[str, Any]:
    """One dataset row of ``task`` (the columns of :data:`ROW_COLUMNS`).

    Example:
        >>> row = task_row(task)            # doctest: +SKIP
        >>> row["tests"] == [task.test]     # doctest: +SKIP
        True
    """
    from ..prompts.code_instruct import VERSION as PROMPT_VERSION

    return {
        "id": task.id,
        "source": SOURCE,
        "question": task.instruction,
        "tests": [task.test],
        "problem": task.problem,
        "solution": task.solution,
        "repo": task.repo,
        "repo_version": task.repo_version,
        "package": task.package,
        "path": task.path,
        "start_line": task.start_line,
        "end_line": task.end_line,
        "model": task.model,
        "attempts": task.attempts,
        "seed_index": task.seed_index,
        "environment": task.environment,
        "pipeline_version": VERSION,
        "prompt_version": PROMPT_VERSION,
        "judged": task.judged,
    }


def exportable(tasks, include_judged_inside: bool = False) -> list:
    """The tasks (or rows) an export writes: those whose verification was judged outside the solution's process,
    and the others only when ``include_judged_inside`` (a row that does not say is taken as judged inside).

    Example:
        >>> exportable([{"id": "a", "judged": "inside"}, {"id": "b", "judged": "outside"}])
        [{'id': 'b', 'judged': 'outside'}]
        >>> len(exportable([{"id": "a"}], include_judged_inside=True))
        1
    """
    items = list(tasks)
    if include_judged_inside:
        return items
    kept = [t for t in items if (t.judged if isinstance(t, Task) else dict(t).get("judged", JUDGED_INSIDE))
            != JUDGED_INSIDE]  # fmt: skip
    if len(kept) < len(items):
        logger.warning("left %d task(s) out of the export: verified by a pytest run that shared the solution's "
                       "process (judged inside); pass include_judged_inside=True (config export_judged_inside) "
                       "to export them", len(items) - len(kept))  # fmt: skip
    return kept


def task_features():
    """``datasets.Features`` of code_instruct rows (imports ``datasets`` lazily).

    Example:
        >>> "solution" in task_features()
        True
    """
    from datasets import Features, List, Value

    strings = {name: Value("string") for name in ROW_COLUMNS}
    ints = {name: Value("int32") for name in ("start_line", "end_line", "attempts", "seed_index")}
    return Features({name: ints.get(name, strings[name]) if name != "tests" else List(Value("string"))
                     for name in ROW_COLUMNS})  # fmt: skip


def tasks_to_dataset(tasks: Iterable[Task], *, include_judged_inside: bool = False) -> Dataset:
    """A ``datasets.Dataset`` of task rows, ready for ``push_round(ds, repo_id, round=0, ...)``.

    Args:
        tasks (`Iterable[Task]`): emitted tasks (e.g. ``run.tasks``).
        include_judged_inside (`bool`, defaults to `False`): keep tasks whose verification was judged inside the
            solution's process (see :func:`exportable`); left out otherwise.

    Example:
        >>> ds = tasks_to_dataset(run.tasks)     # doctest: +SKIP
        >>> ds.column_names[:4]                   # doctest: +SKIP
        ['id', 'source', 'question', 'tests']
    """
    from datasets import Dataset

    rows = [task_row(task) for task in exportable(tasks, include_judged_inside)]
    columns = {name: [row[name] for row in rows] for name in ROW_COLUMNS}
    return Dataset.from_dict(columns, features=task_features())


# -- task folders ------------------------------------------------------------------------------------------------

#: Harbor task schema the folders are written for (``harbor tasks schema``, harbor 0.25).
SCHEMA_VERSION = "1.4"
#: Verifier and agent limits written to ``task.toml`` (the verification stages ran under the same memory limit).
VERIFIER_TIMEOUT_S = 180.0
AGENT_TIMEOUT_S = 1800.0
CPUS = 1
MEMORY_MB = 4096

# What both verifiers start with: where the tests, the agent's work and the logs are.
_SH_HEAD = f"""# Usage: test.sh [WORKDIR (default {WORKDIR})] [LOG_DIR (default /logs/verifier)]
set -uo pipefail
TESTS="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
WORK="${{1:-{WORKDIR}}}"
LOGS="${{2:-/logs/verifier}}"
mkdir -p "$LOGS"
"""

_TEST_SH = f"""#!/usr/bin/env bash
# Harbor verifier (a task judged inside): runs test_task.py with pytest against the agent's task_module.py and writes
# the reward (1 or 0). pytest runs the agent's code in its own interpreter, so the reward is that process's account:
# hardened, never proof (evolvecoder_datasets' docs/threat-model.md). The {PLUGIN_MODULE} plugin signs the outcomes
# with a key it reads from a pipe (never the environment); a separate collect-only run must have collected the same
# tests, every one must have passed, and pytest's exit code and its own must both be 0. Never pytest's exit code alone.
{_SH_HEAD}echo 0 > "$LOGS/reward.txt"
KEY="$(python -c 'import secrets; print(secrets.token_hex(32))')"
cd "$WORK"
run_pytest() {{  # $1: the result file, then pytest's extra arguments; the key goes through fd 3
  local result="$1"
  shift
  ECD_VERDICT_PATH="$result" ECD_VERDICT_FD=3 PYTHONPATH="$TESTS" PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 \\
    python -m pytest {" ".join(HARNESS_FLAGS)} --rootdir "$WORK" -o addopts= "$@" "$TESTS/{TEST_FILE}" \\
    3< <(printf '%s' "$KEY")
}}
run_pytest "$LOGS/collection.json" --collect-only > "$LOGS/collection.txt" 2>&1
run_pytest "$LOGS/verdict.json"
STATUS=$?
python - "$LOGS/collection.json" "$LOGS/verdict.json" "$STATUS" > "$LOGS/reward.txt" 3< <(printf '%s' "$KEY") <<'PY'
import hmac, json, os, sys
key = os.read(3, 256).strip()
def signed(path):
    try:
        with open(path, "rb") as handle:
            data = handle.read(8 << 20)
        payload, _, digest = data.rstrip(b"\\n").rpartition(b"\\n")
        if key and hmac.compare_digest(digest, hmac.new(key, payload, "sha256").hexdigest().encode()):
            value = json.loads(payload)
            return value if isinstance(value, dict) else {{}}
    except (OSError, ValueError):
        pass
    return {{}}
collection, run = signed(sys.argv[1]), signed(sys.argv[2])
try:
    collected = sorted(map(str, collection.get("collected") or []))
    tests = run.get("tests") or {{}}
    ok = (sys.argv[3] == "0" and run.get("exitstatus") == 0 and collection.get("exitstatus") == 0 and bool(collected)
          and collected == sorted(map(str, run.get("collected") or [])) and not run.get("collect_errors")
          and not run.get("tampered") and not collection.get("tampered")
          and sorted(tests) == sorted(entry[0] for entry in collection["collected"])
          and all(outcome == "passed" for outcome in tests.values()))
except Exception:  # an account of an unexpected shape is no pass
    ok = False
print(1 if ok else 0)
PY
echo "reward: $(cat "$LOGS/reward.txt")"
"""

# A task judged outside: the split test is judged by the shipped sandbox and judge; pytest never runs the agent's code.
_TEST_SH_OUTSIDE = f"""#!/usr/bin/env bash
# Harbor verifier: judges /app/task_module.py against test_task.py outside the agent's code and writes the reward
# (1 or 0). Each test function runs as planned asserts: the agent's code runs in a sandbox and returns values, the
# asserts are decided by a judge process that never ran it (ecd_judge.zip: evolvecoder_datasets' sandbox, judge and
# verifier, standard library only). pytest does not run the agent's code here.
{_SH_HEAD}echo 0 > "$LOGS/reward.txt"
# Where the sandbox has no bubblewrap or unshare (a container without user namespaces), the agent's code runs under
# an unprivileged uid with the host's files in view: the tests (their expected values) are made unreadable to it.
chmod -R go-rwx "$TESTS" "$LOGS" 2>/dev/null || true
JUDGE="$(mktemp -d)"
chmod 755 "$JUDGE"
python -I -m zipfile -e "$TESTS/{JUDGE_ARCHIVE}" "$JUDGE" && chmod -R a+rX "$JUDGE"
env -i PATH="$PATH" LANG=C.UTF-8 PYTHONPATH="$JUDGE" PYTHONDONTWRITEBYTECODE=1 \\
  python -m evolvecoder_datasets.code_instruct.verifier "$TESTS" "$WORK" "$LOGS"
rm -rf "$JUDGE"
echo "reward: $(cat "$LOGS/reward.txt")"
"""

_SOLVE_SH = f"""#!/usr/bin/env bash
# Applies the reference solution: patch.diff creates {SOLUTION_FILE} in the agent's working folder.
# Usage: solve.sh [WORKDIR (default {WORKDIR})]
set -euo pipefail
HERE="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
cd "${{1:-{WORKDIR}}}"
if command -v patch >/dev/null 2>&1; then
  patch -p1 --forward --quiet < "$HERE/patch.diff"
else
  # The image has no `patch`: the diff only creates files, so its added lines are the files.
  python - "$HERE/patch.diff" <<'PY'
import pathlib, sys
path, lines = None, []
def flush():
    if path is not None:
        pathlib.Path(path).write_text("".join(lines), encoding="utf-8")
for raw in pathlib.Path(sys.argv[1]).read_text(encoding="utf-8").splitlines(keepends=True):
    if raw.startswith("+++ "):
        flush()
        path, lines = raw[4:].strip().split("/", 1)[1], []
    elif raw.startswith("\\\\ No newline") and lines:
        lines[-1] = lines[-1].rstrip("\\n")
    elif raw.startswith("+") and path is not None:
        lines.append(raw[1:])
    elif raw.startswith((" ", "-")) and not raw.startswith("--- "):
        sys.exit("patch.diff changes an existing file; install `patch` to apply it")
flush()
PY
fi
"""


def solution_patch(solution: str, path: str = SOLUTION_FILE) -> str:
    """A git-style unified diff that creates ``path`` with the text ``solution`` (``patch -p1`` / ``git apply``).

    Example:
        >>> print(solution_patch("x = 1\\n"), end="")
        diff --git a/task_module.py b/task_module.py
        new file mode 100644
        --- /dev/null
        +++ b/task_module.py
        @@ -0,0 +1 @@
        +x = 1
    """
    lines = solution.splitlines(keepends=True)
    body = list(difflib.unified_diff([], lines, fromfile="/dev/null", tofile=f"b/{path}", lineterm="\n"))
    if lines and not lines[-1].endswith("\n"):
        body[-1] += "\n\\ No newline at end of file\n"
    return f"diff --git a/{path} b/{path}\nnew file mode 100644\n" + "".join(body)


def files_from_patch(diff: str) -> dict[str, str]:
    """The files a creation-only diff (as :func:`solution_patch` writes) creates: ``{path: text}``.

    Raises:
        SchemaError: the diff changes or deletes an existing file.

    Example:
        >>> files_from_patch(solution_patch("def f():\\n    return 1"))
        {'task_module.py': 'def f():\\n    return 1'}
    """
    files: dict[str, list[str]] = {}
    current: list[str] | None = None
    for raw in diff.splitlines(keepends=True):
        if raw.startswith("+++ "):
            current = files.setdefault(raw[4:].strip().split("/", 1)[1], [])
        elif raw.startswith("\\ No newline") and current:
            current[-1] = current[-1].rstrip("\n")
        elif raw.startswith("+") and current is not None:
            current.append(raw[1:])
        elif raw.startswith((" ", "-")) and not raw.startswith("--- "):
            raise SchemaError("the diff changes an existing file; only file creations are supported")
    return {path: "".join(lines) for path, lines in files.items()}


def task_toml(row: Mapping[str, Any], spec: EnvironmentSpec | None = None) -> dict[str, Any]:
    """The ``task.toml`` of a task row, as data: only fields of Harbor's task schema, our provenance in ``metadata``.

    Args:
        row (`Mapping[str, Any]`): a task row (:func:`task_row`).
        spec (`EnvironmentSpec`, *optional*): the environment, whose Python version, tree hash and base image
            enter the provenance.

    Example:
        >>> data = task_toml({"id": "tinytext_0", "question": "Write f.", "repo": "tinytext", "package": "tinytext"})
        >>> sorted(data), data["verifier"]["environment_mode"], data["agent"]["user"]
        (['agent', 'artifacts', 'environment', 'metadata', 'schema_version', 'task', 'verifier'], 'separate', 'agent')
    """
    task_id = str(row["id"])
    first_line = next((line.strip() for line in str(row.get("question", "")).splitlines() if line.strip()), "")
    metadata = {
        "id": task_id,
        "source": row.get("source", SOURCE),
        "repo": row.get("repo"),
        "repo_version": row.get("repo_version"),
        "package": row.get("package"),
        "seed_path": row.get("path"),
        "seed_lines": [row["start_line"], row["end_line"]] if row.get("start_line") is not None else None,
        "model": row.get("model"),
        "attempts": row.get("attempts"),
        "verified_in": row.get("environment"),
        "pipeline_version": row.get("pipeline_version"),
        "prompt_version": row.get("prompt_version"),
        "judged": row.get("judged", JUDGED_INSIDE),
    }
    if spec is not None:
        metadata.update(python_version=spec.python_version, source_tree_sha256=spec.tree_hash,
                        base_image=spec.base_image, environment_digest=spec.digest)  # fmt: skip
    keywords = ["code_instruct", "python", *(str(row[k]) for k in ("repo", "package") if row.get(k))]
    return {
        "schema_version": SCHEMA_VERSION,
        "artifacts": [f"{WORKDIR}/{SOLUTION_FILE}"],
        "task": {
            "name": f"evolvecoder/{task_id}",
            "description": first_line[:200],
            "keywords": list(dict.fromkeys(keywords)),
        },
        "metadata": {k: v for k, v in metadata.items() if v is not None},
        "agent": {"user": AGENT_USER, "timeout_sec": AGENT_TIMEOUT_S},
        "verifier": {"environment_mode": "separate", "timeout_sec": VERIFIER_TIMEOUT_S},
        "environment": {"cpus": CPUS, "memory_mb": MEMORY_MB, "build_timeout_sec": 1800.0},
    }


def environment_specs(runs: CodeInstructRun | Iterable[CodeInstructRun], *,
                      base_image: str | None = None) -> dict[str, EnvironmentSpec]:  # fmt: skip
    """``{"backend:key": EnvironmentSpec}`` for the environments of one or more runs (what tasks record).

    Raises:
        ConfigError: a run does not carry its repository (made by hand without ``repository=``).

    Example:
        >>> specs = environment_specs(run)            # doctest: +SKIP
        >>> list(specs) == [run.tasks[0].environment]  # doctest: +SKIP
        True
    """
    out: dict[str, EnvironmentSpec] = {}
    for run in [runs] if isinstance(runs, CodeInstructRun) else list(runs):
        key = f"{run.environment.backend}:{run.environment.key}"
        if key in out:
            continue
        if run.environment_spec is not None:
            out[key] = run.environment_spec
            continue
        if run.repository is None:
            raise ConfigError("the CodeInstructRun carries no repository; pass environments= to export its tasks")
        out[key] = environment_spec(run.repository, run.environment, base_image=base_image)
    return out


def _as_rows(tasks: Iterable[Task] | Dataset) -> list[dict[str, Any]]:
    rows = []
    for item in tasks:
        rows.append(task_row(item) if isinstance(item, Task) else dict(item))
    for row in rows:
        missing = [c for c in ("id", "question", "tests", "solution") if c not in row]
        if missing:
            raise SchemaError(f"export_task_folders needs column(s) {missing}; got {sorted(row)}")
    return rows


def export_task_folders(
    tasks: CodeInstructRun | Iterable[CodeInstructRun] | Iterable[Task] | Dataset,
    out_dir: str | os.PathLike,
    *,
    environments: Mapping[str, EnvironmentSpec] | None = None,
    base_image: str | None = None,
    overwrite: bool = False,
    include_judged_inside: bool = False,
) -> list[Path]:
    """Write one Harbor task folder per task (see the module docstring for the layout).

    Args:
        tasks (`CodeInstructRun`, runs, `Iterable[Task]` or `datasets.Dataset`): a run (or several) exports its
            tasks with the container recipe of its environment; tasks or rows need ``environments``.
        out_dir (`str` or `os.PathLike`): parent folder; created if needed.
        environments (`Mapping[str, EnvironmentSpec]`, *optional*): the environment of each task, keyed by what the
            task records in ``environment`` (``"venv:<key>"``); see :func:`environment_specs`.
        base_image (`str`, *optional*): digest-pinned base image, when the runs' environments are read here.
        overwrite (`bool`, defaults to `False`): replace the files of a task folder that exists.
        include_judged_inside (`bool`, defaults to `False`): also write tasks whose verification was judged inside
            the solution's process (their ``tests/test.sh`` is judged the same way: an agent's ``task_module.py``
            shares pytest's interpreter); ``task.toml`` records ``judged`` either way.

    Returns:
        `list[Path]`: the task folders, in input order.

    Raises:
        SchemaError: a row lacks ``id``, ``question``, ``tests`` or ``solution``.
        ConfigError: a task id is not a safe folder name, a folder exists and ``overwrite`` is `False`, or no
            environment is known for a task.
        MissingExtraError: ``tomli-w`` is not installed (extra ``code_instruct``).

    Example:
        >>> folders = export_task_folders(run, "out/tasks")             # doctest: +SKIP
        >>> sorted(p.name for p in folders[0].iterdir())                 # doctest: +SKIP
        ['environment', 'instruction.md', 'solution', 'task.toml', 'tests']
    """
    from .._deps import require

    tomli_w = require("tomli_w", extra="code_instruct", feature="writing task.toml", package="tomli-w")
    is_runs = isinstance(tasks, CodeInstructRun) or (
        isinstance(tasks, (list, tuple)) and tasks and all(isinstance(t, CodeInstructRun) for t in tasks)
    )
    specs = dict(environments or {})
    if is_runs:
        specs = {**environment_specs(tasks, base_image=base_image), **specs}
        runs = [tasks] if isinstance(tasks, CodeInstructRun) else list(tasks)
        tasks = [task for run in runs for task in run.tasks]
    out = Path(out_dir)
    rows = exportable(_as_rows(tasks), include_judged_inside)
    for row in rows:
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", str(row["id"])):
            raise ConfigError(f"task id {row['id']!r} is not a safe folder name")
        if row.get("environment") not in specs:
            raise ConfigError(f"task {row['id']} was verified in {row.get('environment')!r}, for which no environment "
                              f"is known (have {sorted(specs)}); export the CodeInstructRun, or pass environments=")  # fmt: skip
        if (out / str(row["id"])).exists() and not overwrite:
            raise ConfigError(f"{out / str(row['id'])} exists; pass overwrite=True to replace it")
    folders = []
    archive: bytes | None = None  # the verifier's archive, made once for every folder judged outside
    contexts: dict[str, Path] = {}  # one context per environment, copied into each folder
    for row in rows:
        task_id = str(row["id"])
        spec = specs[row["environment"]]
        folder = out / task_id
        for sub in ("environment", "tests", "solution"):
            shutil.rmtree(folder / sub, ignore_errors=True)
            (folder / sub).mkdir(parents=True)
        if row["environment"] in contexts:
            shutil.copytree(contexts[row["environment"]], folder / "environment", dirs_exist_ok=True)
        else:
            contexts[row["environment"]] = write_build_context(spec, folder / "environment")
        (folder / "instruction.md").write_text(str(row["question"]).rstrip() + "\n", encoding="utf-8")
        tests = row["tests"]
        test = tests[0] if isinstance(tests, Sequence) and not isinstance(tests, str) else str(tests)
        (folder / "tests" / TEST_FILE).write_text(test, encoding="utf-8")
        if row.get("judged", JUDGED_INSIDE) == JUDGED_INSIDE:
            shutil.copyfile(PLUGIN_PATH, folder / "tests" / f"{PLUGIN_MODULE}.py")
            test_sh = _TEST_SH
        else:
            archive = archive if archive is not None else judge_archive()
            (folder / "tests" / JUDGE_ARCHIVE).write_bytes(archive)
            limits = {"test_file": TEST_FILE, "test_timeout_s": TEST_TIMEOUT_S, "memory_mb": MEMORY_MB,
                      "mode": SPLIT_MODE, "test_ids": list(split_pytest_module(test, test_file=TEST_FILE).names)}
            (folder / "tests" / JUDGE_CONFIG).write_text(json.dumps(limits, indent=1) + "\n", encoding="utf-8")
            test_sh = _TEST_SH_OUTSIDE
        (folder / "solution" / "patch.diff").write_text(solution_patch(str(row["solution"])), encoding="utf-8")
        for path, text in ((folder / "tests" / "test.sh", test_sh), (folder / "solution" / "solve.sh", _SOLVE_SH)):
            path.write_text(text, encoding="utf-8")
            path.chmod(0o755)
        (folder / "task.toml").write_text(tomli_w.dumps(task_toml(row, spec)), encoding="utf-8")
        folders.append(folder)
    return folders


def verify_task_folder(
    folder: str | os.PathLike, *, backend: EnvironmentBackend | None = None, timeout_s: float = VERIFIER_TIMEOUT_S
) -> Verification:
    """Verify an exported task again from its folder alone: its environment rebuilt from ``environment/``, the test
    from ``tests/``, the solution from ``solution/patch.diff``.

    The environment is what the Dockerfile builds (``requirements.txt`` then ``src/``, no dependency resolution);
    with the default backend it is a virtualenv made from those files (no container engine needed), with a
    :class:`~.containers.ContainerBackend` it is the image the folder's own Dockerfile builds
    (:meth:`~.containers.ContainerBackend.prepare_context`). Then the two stages of :func:`verify_task`: the test must
    fail without ``task_module.py`` and pass with the patched-in solution.

    Args:
        folder (`str` or `os.PathLike`): a folder :func:`export_task_folders` wrote.
        backend (`EnvironmentBackend`, *optional*): defaults to a :class:`VenvBackend` installing the folder's pinned
            requirements with ``--no-deps``.
        timeout_s (`float`, defaults to 180): limit per stage.

    Returns:
        `Verification`: as :func:`verify_task` returns it.

    Raises:
        SchemaError: a file of the layout is missing.
        EnvironmentBuildError: the environment cannot be built from the folder's files.

    Example:
        >>> verify_task_folder("out/tasks/tiny_textkit_0").result.ok       # doctest: +SKIP
        True
    """
    from .environment import VenvBackend
    from .repository import open_repository
    from .verification import verify_task

    root = Path(folder)
    needed = [root / "environment" / "Dockerfile", root / "environment" / "requirements.txt",
              root / "environment" / "src", root / "tests" / TEST_FILE, root / "solution" / "patch.diff"]  # fmt: skip
    missing = [str(p.relative_to(root)) for p in needed if not p.exists()]
    if missing:
        raise SchemaError(f"{root} is not a complete task folder: missing {missing}")
    if backend is None:
        import sys

        dockerfile = (root / "environment" / "Dockerfile").read_text(encoding="utf-8")
        tag = re.search(r"^FROM\s+python:(\d+)\.(\d+)", dockerfile, re.MULTILINE)
        here = f"{sys.version_info.major}.{sys.version_info.minor}"
        if tag is not None and f"{tag.group(1)}.{tag.group(2)}" != here:
            raise ConfigError(f"{root} was verified with Python {tag.group(1)}.{tag.group(2)}, this is {here}: pass "
                              "backend=VenvBackend(python=<that interpreter>, ...) or a ContainerBackend")  # fmt: skip
        lines = (root / "environment" / "requirements.txt").read_text(encoding="utf-8").split()
        # The pins themselves (not the file's path) are the requirements, so they key the cached environment.
        backend = VenvBackend(requirements=tuple(lines), pip_args=("--no-deps",))
    package = None
    if (root / "task.toml").is_file():
        from .repository import _read_toml

        package = _read_toml(root / "task.toml").get("metadata", {}).get("package")
    from .containers import ContainerBackend

    if isinstance(backend, ContainerBackend):  # the folder's own Dockerfile, built as it is
        env = backend.prepare_context(root / "environment", package=package or open_repository(
            root / "environment" / "src").package)  # fmt: skip
    else:
        env = backend.prepare(open_repository(root / "environment" / "src", package=package))
    solution = files_from_patch((root / "solution" / "patch.diff").read_text(encoding="utf-8"))[SOLUTION_FILE]
    test = (root / "tests" / TEST_FILE).read_text(encoding="utf-8")
    return verify_task(test, solution, environment=env, backend=backend, timeout_s=timeout_s)
