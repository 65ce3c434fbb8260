"""Outputs of code_instruct: dataset rows (pushed like any round) and task folders for agent harnesses.

Rows carry the published columns (``id``, ``question``, ``tests``) so :func:`evolvecoder_datasets.rounds.push_round`
takes them as they are: ``question`` is the instruction with its delivery contract and ``tests`` holds one element,
the pytest module. The other columns keep the solution and the provenance.

A task folder is what agent harnesses (Harbor / Terminal-Bench style) read::

    <task id>/
      instruction.md          the instruction, delivery contract included
      task.toml               metadata, provenance, environment and verification commands
      tests/test_task.py      the pytest module
      tests/test.sh           runs it from the agent's working directory
      solution/task_module.py the reference solution
      solution/solve.sh       copies it into the working directory

Example:
    >>> from evolvecoder_datasets.code_instruct import export_task_folders, tasks_to_dataset
    >>> ds = tasks_to_dataset(run.tasks)                              # doctest: +SKIP
    >>> export_task_folders(ds, "out/tasks")                          # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, SchemaError
from .pipeline import SOLUTION_FILE, TEST_FILE, VERSION, Task

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["ROW_COLUMNS", "SOURCE", "export_task_folders", "task_features", "task_row", "tasks_to_dataset", "to_toml"]

SOURCE = "code_instruct"
ROW_COLUMNS = (
    "id", "source", "question", "tests", "problem", "solution", "repo", "repo_version", "package", "path",
    "start_line", "end_line", "model", "attempts", "seed_index", "environment", "pipeline_version", "prompt_version",
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
    }


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


def tasks_to_dataset(tasks: Iterable[Task]) -> Dataset:
    """A ``datasets.Dataset`` of task rows, ready for ``push_round(ds, repo_id, round=0, ...)``.

    Args:
        tasks (`Iterable[Task]`): emitted tasks (e.g. ``run.tasks``).

    Example:
        >>> ds = tasks_to_dataset(run.tasks)     # doctest: +SKIP
        >>> ds.column_names[:4]                   # doctest: +SKIP
        ['id', 'source', 'question', 'tests']
    """
    from datasets import Dataset

    rows = [task_row(task) for task in tasks]
    columns = {name: [row[name] for row in rows] for name in ROW_COLUMNS}
    return Dataset.from_dict(columns, features=task_features())


# -- task folders ------------------------------------------------------------------------------------------------


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise ConfigError(f"cannot write {type(value).__name__} to TOML")


def to_toml(data: Mapping[str, Any]) -> str:
    """A small TOML writer for flat tables of strings, numbers, booleans and lists (what ``task.toml`` needs).

    Args:
        data (`Mapping[str, Any]`): top-level keys, and sub-mappings written as ``[table]`` sections.

    Raises:
        ConfigError: a value of another type.

    Example:
        >>> print(to_toml({"version": "1.0", "metadata": {"lines": [3, 40], "ok": True}}))
        version = "1.0"
        <BLANKLINE>
        [metadata]
        lines = [3, 40]
        ok = true
        <BLANKLINE>
    """
    bare = re.compile(r"^[A-Za-z0-9_-]+$")

    def key(name: str) -> str:
        return name if bare.match(name) else json.dumps(name)

    lines = [f"{key(k)} = {_toml_value(v)}" for k, v in data.items() if not isinstance(v, Mapping)]
    for name, table in data.items():
        if isinstance(table, Mapping):
            lines += ["", f"[{key(name)}]"]
            lines += [f"{key(k)} = {_toml_value(v)}" for k, v in table.items() if v is not None]
    return "\n".join(lines) + "\n"


_TEST_SH = """#!/usr/bin/env bash
# Runs the task's tests against task_module.py in the working directory (default: the current one).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "${1:-$PWD}"
exec python -m pytest -q -p no:cacheprovider "$HERE/test_task.py"
"""

_SOLVE_SH = """#!/usr/bin/env bash
# Writes the reference solution to task_module.py in the working directory (default: the current one).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cp "$HERE/task_module.py" "${1:-$PWD}/task_module.py"
"""


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
    tasks: Iterable[Task] | Dataset, out_dir: str | os.PathLike, *, overwrite: bool = False
) -> list[Path]:
    """Write one folder per task (see the module docstring for the layout).

    Args:
        tasks (`Iterable[Task]` or `datasets.Dataset`): tasks, or rows with the columns of :data:`ROW_COLUMNS`.
        out_dir (`str` or `os.PathLike`): parent folder; created if needed.
        overwrite (`bool`, defaults to `False`): replace the files of a task folder that exists.

    Returns:
        `list[Path]`: the task folders, in input order.

    Raises:
        SchemaError: a row lacks ``id``, ``question``, ``tests`` or ``solution``.
        ConfigError: a task id is not a safe folder name, or a folder exists and ``overwrite`` is `False`.

    Example:
        >>> folders = export_task_folders(run.tasks, "out/tasks")      # doctest: +SKIP
        >>> sorted(p.name for p in folders[0].iterdir())                 # doctest: +SKIP
        ['instruction.md', 'solution', 'task.toml', 'tests']
    """
    out = Path(out_dir)
    folders = []
    for row in _as_rows(tasks):
        task_id = str(row["id"])
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", task_id):
            raise ConfigError(f"task id {task_id!r} is not a safe folder name")
        folder = out / task_id
        if folder.exists() and not overwrite:
            raise ConfigError(f"{folder} exists; pass overwrite=True to replace it")
        (folder / "tests").mkdir(parents=True, exist_ok=True)
        (folder / "solution").mkdir(parents=True, exist_ok=True)
        (folder / "instruction.md").write_text(str(row["question"]).rstrip() + "\n", encoding="utf-8")
        tests = row["tests"]
        (folder / "tests" / TEST_FILE).write_text(tests[0] if isinstance(tests, Sequence) else str(tests),
                                                  encoding="utf-8")  # fmt: skip
        (folder / "solution" / SOLUTION_FILE).write_text(str(row["solution"]), encoding="utf-8")
        for path, text in ((folder / "tests" / "test.sh", _TEST_SH), (folder / "solution" / "solve.sh", _SOLVE_SH)):
            path.write_text(text, encoding="utf-8")
            path.chmod(0o755)
        repo, version = row.get("repo"), row.get("repo_version")
        requirement = f"{repo}=={version}" if repo and version and version != "unknown" else repo
        meta = {
            "version": "1.0",
            "metadata": {
                "id": task_id,
                "source": row.get("source", SOURCE),
                "repo": repo,
                "repo_version": version,
                "package": row.get("package"),
                "seed_path": row.get("path"),
                "seed_lines": [row["start_line"], row["end_line"]] if row.get("start_line") is not None else None,
                "model": row.get("model"),
                "attempts": row.get("attempts"),
                "pipeline_version": row.get("pipeline_version"),
                "prompt_version": row.get("prompt_version"),
            },
            "environment": {
                "python_requirements": [r for r in (requirement, "pytest") if r],
                "verified_in": row.get("environment"),
                "solution_file": SOLUTION_FILE,
            },
            "verifier": {"command": "bash tests/test.sh", "timeout_sec": 180.0},
            "solution": {"command": "bash solution/solve.sh"},
        }
        (folder / "task.toml").write_text(to_toml(meta), encoding="utf-8")
        folders.append(folder)
    return folders

