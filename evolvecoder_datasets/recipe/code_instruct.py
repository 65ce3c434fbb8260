"""The code_instruct recipe as a library call: repository-grounded, execution-verified coding tasks.

:class:`CodeInstructRecipe` is what ``recipes/configs/code_instruct*.yaml`` map onto; :func:`run` runs it (the CLI's
``evolvecoder-datasets run`` and ``recipes/code_instruct.py`` both call it).

Example:
    >>> from evolvecoder_datasets.recipe.code_instruct import CodeInstructRecipe, RepoSpec
    >>> CodeInstructRecipe(repos=[RepoSpec("tests/data/code_instruct/tinytext")], store="none").store
    'none'
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..code_instruct import (
    CodeInstructConfig,
    Deduplicator,
    VenvBackend,
    YieldReport,
    export_task_folders,
    generate_tasks,
    open_repository,
    tasks_to_dataset,
)
from ..code_instruct.gates import DecontaminationIndex
from ..code_instruct.repository import fetch_sdist
from ..config import resolve_store, store_location
from ..errors import ConfigError
from ..llm import LLMConfig

__all__ = ["CodeInstructRecipe", "RepoSpec", "run"]


@dataclass(frozen=True)
class RepoSpec:
    """One repository: ``source`` is a folder, an archive, or ``name==version`` (fetched from PyPI).

    Args:
        source (`str`): where the code comes from.
        package (`str`, *optional*): the import name, when the heuristic picks the wrong one.
        label (`str`, *optional*): how the prompt names it (``"pallets/click"``).
    """

    source: str
    package: str | None = None
    label: str | None = None


@dataclass(frozen=True)
class CodeInstructRecipe:
    """The recipe's configuration (the YAML file maps onto it).

    Args:
        repos (`list[RepoSpec]`): the repositories.
        output_dir (`str`, defaults to ``"runs/code_instruct"``): run folder (LLM cache, sources, tasks, reports).
        store (`str`, *optional*): round store to push to (local folder or ``org/name``); defaults to
            ``<output_dir>/store``; ``"none"`` publishes nowhere (see :func:`evolvecoder_datasets.config.resolve_store`).
        round (`int`, defaults to 0): the revision to push (``round{round}``).
        llm (`LLMConfig`): the model; its ``cache_dir`` defaults to ``output_dir``.
        pipeline (`CodeInstructConfig`): seeds, attempts, gates, timeouts.
        env_cache_dir (`str`, *optional*): where virtualenvs are kept (default ``~/.cache/evolvecoder_datasets/envs``).
        isolation (`str`, defaults to ``"auto"``): sandbox isolation for verification.
        pip_args (`list[str]`, defaults to ``[]``): extra ``pip install`` arguments for the environments.
        export_tasks (`bool`, defaults to `True`): write task folders (Harbor tasks, with the container recipe of
            the environment the tasks were verified in).
        environment (`str`, defaults to ``"venv"``): where tasks are verified: ``"venv"`` (a virtualenv per
            repository under the sandbox; offline once built) or ``"container"`` (the exported Dockerfile, built and
            run by Docker or Podman; see :class:`~evolvecoder_datasets.code_instruct.ContainerBackend`).
        container_engine (`str`, defaults to ``"auto"``): ``"auto"``, ``"docker"`` or ``"podman"``.
        container_engine_args (`list[str]`, defaults to ``[]``): global engine options (``["--runtime", "runc"]``).
        container_build_args (`list[str]`, defaults to ``[]``): extra build options (``["--network", "host"]``).
        base_image (`str`, *optional*): digest-pinned python image for the Dockerfiles (default: the one known for
            the environment's Python).
    """

    repos: list[RepoSpec]
    output_dir: str = "runs/code_instruct"
    store: str | None = None
    round: int = 0
    llm: LLMConfig = field(default_factory=LLMConfig)
    pipeline: CodeInstructConfig = field(default_factory=CodeInstructConfig)
    env_cache_dir: str | None = None
    isolation: str = "auto"
    pip_args: list[str] = field(default_factory=list)
    export_tasks: bool = True
    environment: str = "venv"
    container_engine: str = "auto"
    container_engine_args: list[str] = field(default_factory=list)
    container_build_args: list[str] = field(default_factory=list)
    base_image: str | None = None

    def __post_init__(self) -> None:
        if self.environment not in ("venv", "container"):
            raise ConfigError(f"environment must be 'venv' or 'container'; got {self.environment!r}")
        object.__setattr__(self, "store", resolve_store(self.store, where="CodeInstructRecipe.store"))
        if not self.repos:
            raise ConfigError("repos: list at least one repository")
        if self.round < 0:
            raise ConfigError(f"round must be >= 0; got {self.round}")


def _resolve_source(spec: RepoSpec, output: Path) -> str:
    path = Path(spec.source).expanduser()
    if path.exists():
        return str(path)
    if "==" in spec.source:
        return str(fetch_sdist(spec.source, output / "sources"))
    raise ConfigError(f"repository {spec.source!r} is neither an existing path nor a pinned 'name==version'")


def run(config: CodeInstructRecipe) -> YieldReport:
    """Run the recipe over every repository; returns the yield report over all of them.

    For each repository: build its virtualenv once, draw seed windows, ask the model for tasks, gate them and
    verify them in the sandbox; then push the tasks as round ``config.round`` of the store (unless
    ``store: none``), export task folders, and write ``yield.json`` and ``rejected.jsonl`` in ``output_dir``.

    Args:
        config (`CodeInstructRecipe`): the recipe configuration.

    Raises:
        ConfigError: a repository is neither a path nor a pinned ``name==version``.
        MissingExtraError: an optional dependency of the LLM backend is missing.
        LLMUnavailableError: the model's endpoint is unreachable, down or lacks its key (checked first), or every
            request of a batch failed (the run stops instead of skipping seed after seed).

    Example:
        >>> from evolvecoder_datasets.config import load_config
        >>> kind, config = load_config("recipes/configs/code_instruct_local.yaml")   # doctest: +SKIP
        >>> print(run(config))                                                      # doctest: +SKIP
    """
    from ..llm.preflight import preflight

    preflight([("task writer", config.llm)])  # seconds, before downloading sources and building environments
    output = Path(config.output_dir)
    output.mkdir(parents=True, exist_ok=True)
    llm = config.llm if config.llm.cache_dir is not None else config.llm.replace(cache_dir=str(output))
    backend = VenvBackend(cache_dir=config.env_cache_dir, isolation=config.isolation, pip_args=config.pip_args)
    if config.environment == "container":
        from ..code_instruct import ContainerBackend

        backend = ContainerBackend(engine=config.container_engine, base_image=config.base_image, lock=backend,
                                   engine_args=config.container_engine_args,
                                   build_args=config.container_build_args)  # fmt: skip
    index = (DecontaminationIndex.from_benchmarks(config.pipeline.decontamination, n=config.pipeline.ngram)
             if config.pipeline.decontamination else None)  # fmt: skip
    dedup = Deduplicator()  # shared: no duplicate across repositories either
    total = YieldReport()
    tasks, rejected, runs = [], [], []
    for spec in config.repos:
        repo = open_repository(_resolve_source(spec, output), package=spec.package,
                               cache_dir=output / "sources" / "extracted")  # fmt: skip
        pipeline = dataclasses.replace(config.pipeline, repo_label=spec.label or config.pipeline.repo_label)
        result = generate_tasks(repo, llm=llm, environment=backend, config=pipeline, index=index, dedup=dedup)
        print(result.report, flush=True)
        total = total.merge(result.report)
        tasks += result.tasks
        runs.append(result)
        rejected += [{"repository": repo.name, **record} for record in result.rejected]
    (output / "yield.json").write_text(json.dumps(total.to_dict(), indent=2) + "\n")
    with open(output / "rejected.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(record) + "\n" for record in rejected)
    inside = config.pipeline.export_judged_inside  # tasks verified in the solution's process (see Task.judged)
    judged = {where: sum(t.judged == where for t in tasks) for where in ("outside", "inside")}
    print(f"judged outside the solution's process: {judged['outside']}, inside: {judged['inside']}"
          f"{'' if inside else ' (left out of the exports)'}", flush=True)
    tasks = [t for t in tasks if inside or t.judged != "inside"] if tasks else tasks
    if config.export_tasks and tasks:
        export_task_folders(runs, output / "tasks", overwrite=True, base_image=config.base_image,
                            include_judged_inside=inside)  # fmt: skip
    store = store_location(config.store, output)
    if tasks and store is not None:
        from ..rounds import push_round

        stats = {
            "num_problems": len(tasks),
            "num_tests": len(tasks),
            "problems_by_source": {"code_instruct": {"problems": len(tasks), "tests": len(tasks)}},
            "drop_reasons": dict(total.skip_reasons),
            "provenance": {
                "models": sorted({task.model for task in tasks}),
                "repositories": sorted({f"{task.repo}=={task.repo_version}" for task in tasks}),
                "yield": total.to_dict(),
                "judged": judged,
                "pipeline": config.pipeline.to_dict(),
            },
        }
        commit = push_round(tasks_to_dataset(tasks, include_judged_inside=inside), store, config.round, stats=stats,
                            config={"code_instruct": dataclasses.asdict(config)})  # fmt: skip
        print(f"pushed {len(tasks)} task(s) to {store} @ {commit.revision}", flush=True)
    return total
