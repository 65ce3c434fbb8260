"""Repository-grounded, execution-verified coding tasks (the second pipeline).

Each task is grounded in one repository and proven by execution: from a window of the repository's own code an
LLM writes a problem, a pytest test and a reference ``task_module.py``; static gates check that the task really
uses the repository (and is not a benchmark copy, a weak test or a duplicate); then, inside the repository's own
environment, the test must fail without the solution and pass with it.

Pieces, one module each: :mod:`.repository` (intake), :mod:`.backend` (what an environment backend does, and the
work box every run fills), :mod:`.verdict` (the nonce-stamped verdict file and the pytest run read from it),
:mod:`.environment` (per-repository venv, sandboxed pytest verdicts), :mod:`.containers` (the same in Docker/Podman
images), :mod:`.dockerfile` (the container recipe of a verified environment), :mod:`.seeds` (code windows),
:mod:`.gates`, :mod:`.split` (a pytest module as planned asserts, judged outside the solution's process),
:mod:`.config` (a run's settings), :mod:`.tasks` (the task record, its delivery contract, the yield report),
:mod:`.verification` (the two stages of a candidate), :mod:`.pipeline` (the run: LLM calls, retries, gates,
verification), :mod:`.export` (dataset rows, Harbor task folders, re-verification from a folder), :mod:`.verifier`
(an exported folder's verifier) and :mod:`.harbor` (Harbor's own linter in its own venv). Importing this package
imports neither torch nor the LLM clients.

Example:
    >>> from evolvecoder_datasets.code_instruct import (CodeInstructConfig, VenvBackend, export_task_folders,
    ...     generate_tasks, open_repository, tasks_to_dataset)
    >>> from evolvecoder_datasets.llm import LLMConfig
    >>> repo = open_repository("click-8.1.7.tar.gz")                                              # doctest: +SKIP
    >>> run = generate_tasks(repo, llm=LLMConfig(model="gpt-4o-mini", cache_dir="runs/ci"),
    ...                      environment=VenvBackend(), config=CodeInstructConfig(num_seeds=20))    # doctest: +SKIP
    >>> print(run.report)                                                                          # doctest: +SKIP
    >>> export_task_folders(run, "out/tasks")                                                      # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

_LAZY = {
    "open_repository": "repository",
    "find_packages": "repository",
    "public_symbols": "repository",
    "VenvBackend": "environment",
    "RepoEnvironment": "backend",
    "read_verdict": "verdict",
    "ContainerBackend": "containers",
    "detect_engine": "containers",
    "SeedConfig": "seeds",
    "sample_snippets": "seeds",
    "eligible_files": "seeds",
    "DecontaminationIndex": "gates",
    "Deduplicator": "gates",
    "run_gates": "gates",
    "CodeInstructConfig": "config",
    "CodeInstructRun": "tasks",
    "Task": "tasks",
    "YieldReport": "tasks",
    "generate_tasks": "pipeline",
    "verify_task": "verification",
    "tasks_to_dataset": "export",
    "export_task_folders": "export",
    "verify_task_folder": "export",
}

__all__ = list(_LAZY)


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)


if TYPE_CHECKING:  # pragma: no cover
    from .backend import RepoEnvironment  # noqa: F401
    from .config import CodeInstructConfig  # noqa: F401
    from .containers import ContainerBackend, detect_engine  # noqa: F401
    from .environment import VenvBackend  # noqa: F401
    from .export import export_task_folders, tasks_to_dataset, verify_task_folder  # noqa: F401
    from .gates import DecontaminationIndex, Deduplicator, run_gates  # noqa: F401
    from .pipeline import generate_tasks  # noqa: F401
    from .repository import find_packages, open_repository  # noqa: F401
    from .repository import public_symbols as public_symbols
    from .seeds import SeedConfig, eligible_files, sample_snippets  # noqa: F401
    from .tasks import CodeInstructRun, Task, YieldReport  # noqa: F401
    from .verdict import read_verdict  # noqa: F401
    from .verification import verify_task  # noqa: F401
