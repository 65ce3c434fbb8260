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
import sys

from evolvecoder_datasets.config import load_recipe_config
from evolvecoder_datasets.errors import exit_status
from evolvecoder_datasets.recipe.code_instruct import CodeInstructRecipe, RepoSpec, run

__all__ = ["CodeInstructRecipe", "RepoSpec", "main", "run"]


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
