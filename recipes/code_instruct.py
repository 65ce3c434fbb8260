"""Run the code_instruct recipe: ``python recipes/code_instruct.py CONFIG.yaml [--num-seeds N] [--output-dir DIR]``.

For every repository of the configuration (a local checkout, an sdist/wheel file, or a pinned ``name==version``
fetched from PyPI with ``pip download``): build its virtualenv once, draw seed windows, ask the model for tasks,
gate them, verify them in two stages inside the sandbox, then

* push the rows as round ``round`` of the store (a local folder or a Hub dataset repository) with the yield report
  in the card's statistics,
* export task folders (``instruction.md``, ``tests/``, ``solution/``, ``task.toml``) under ``<output_dir>/tasks``,
* write ``<output_dir>/yield.json`` and ``<output_dir>/rejected.jsonl``,
* print the yield report.

Example::

    python recipes/code_instruct.py recipes/configs/code_instruct.yaml          # an OpenAI-compatible endpoint
    python recipes/code_instruct.py recipes/configs/code_instruct_local.yaml    # the embedded SmolLM2, offline LLM
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from evolvecoder_datasets.cli import exit_status, load_recipe_config
from evolvecoder_datasets.code_instruct import (
    CodeInstructConfig,
    Deduplicator,
    VenvBackend,
    YieldReport,
    export_task_folders,
    generate_tasks,
    open_repository,
    tasks_to_dataset,
)
from evolvecoder_datasets.code_instruct.gates import DecontaminationIndex
from evolvecoder_datasets.code_instruct.repository import fetch_sdist
from evolvecoder_datasets.errors import ConfigError
from evolvecoder_datasets.llm import LLMConfig


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
            ``<output_dir>/store``; ``"none"`` skips the push.
        round (`int`, defaults to 0): the revision to push (``round{round}``).
        llm (`LLMConfig`): the model; its ``cache_dir`` defaults to ``output_dir``.
        pipeline (`CodeInstructConfig`): seeds, attempts, gates, timeouts.
        env_cache_dir (`str`, *optional*): where virtualenvs are kept (default ``~/.cache/evolvecoder_datasets/envs``).
        isolation (`str`, defaults to ``"auto"``): sandbox isolation for verification.
        pip_args (`list[str]`, defaults to ``[]``): extra ``pip install`` arguments for the environments.
        export_tasks (`bool`, defaults to `True`): write task folders.
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

    def __post_init__(self) -> None:
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
    """Run the recipe; returns the yield report over all repositories."""
    output = Path(config.output_dir)
    output.mkdir(parents=True, exist_ok=True)
    llm = config.llm if config.llm.cache_dir is not None else config.llm.replace(cache_dir=str(output))
    backend = VenvBackend(cache_dir=config.env_cache_dir, isolation=config.isolation, pip_args=config.pip_args)
    index = (DecontaminationIndex.from_benchmarks(config.pipeline.decontamination, n=config.pipeline.ngram)
             if config.pipeline.decontamination else None)  # fmt: skip
    dedup = Deduplicator()  # shared: no duplicate across repositories either
    total = YieldReport()
    tasks, rejected = [], []
    for spec in config.repos:
        repo = open_repository(_resolve_source(spec, output), package=spec.package,
                               cache_dir=output / "sources" / "extracted")  # fmt: skip
        pipeline = dataclasses.replace(config.pipeline, repo_label=spec.label or config.pipeline.repo_label)
        result = generate_tasks(repo, llm=llm, environment=backend, config=pipeline, index=index, dedup=dedup)
        print(result.report, flush=True)
        total = total.merge(result.report)
        tasks += result.tasks
        rejected += [{"repository": repo.name, **record} for record in result.rejected]
    (output / "yield.json").write_text(json.dumps(total.to_dict(), indent=2) + "\n")
    with open(output / "rejected.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(record) + "\n" for record in rejected)
    if config.export_tasks and tasks:
        export_task_folders(tasks, output / "tasks", overwrite=True)
    store = config.store or str(output / "store")
    if tasks and store != "none":
        from evolvecoder_datasets.rounds import push_round

        stats = {
            "num_problems": len(tasks),
            "num_tests": len(tasks),
            "problems_by_source": {"code_instruct": {"problems": len(tasks), "tests": len(tasks)}},
            "drop_reasons": dict(total.skip_reasons),
            "provenance": {
                "models": sorted({task.model for task in tasks}),
                "repositories": sorted({f"{task.repo}=={task.repo_version}" for task in tasks}),
                "yield": total.to_dict(),
                "pipeline": config.pipeline.to_dict(),
            },
        }
        commit = push_round(tasks_to_dataset(tasks), store, config.round, stats=stats,
                            config={"code_instruct": dataclasses.asdict(config)})  # fmt: skip
        print(f"pushed {len(tasks)} task(s) to {store} @ {commit.revision}", flush=True)
    return total


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, load the configuration and run; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", help="recipe configuration (YAML)")
    parser.add_argument("--num-seeds", type=int, help="override pipeline.num_seeds")
    parser.add_argument("--output-dir", help="override output_dir")
    args = parser.parse_args(argv)

    def build_and_run() -> None:
        config = load_recipe_config(args.config, CodeInstructRecipe)
        if args.num_seeds is not None:
            config = dataclasses.replace(config, pipeline=dataclasses.replace(config.pipeline,
                                                                              num_seeds=args.num_seeds))
        if args.output_dir is not None:
            config = dataclasses.replace(config, output_dir=args.output_dir)
        print(run(config))

    return exit_status(build_and_run)


if __name__ == "__main__":
    sys.exit(main())
