"""Run the EvolveCoder recipe: ``python recipes/evolvecoder.py [CONFIG.yaml] [--rounds N] [--output-dir DIR]``.

Without a configuration it runs the embedded demo (SmolLM2-135M on CPU, a handful of HumanEval and LeetCode seeds,
mutants in the pool, one round, a local round store with cards). Everything happens in
:func:`evolvecoder_datasets.recipe.run_recipe`; this file only reads the arguments.

Example::

    python recipes/evolvecoder.py                                   # the offline demo in runs/demo
    python recipes/evolvecoder.py recipes/configs/evolvecoder.yaml  # the paper's settings (needs model servers)
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from evolvecoder_datasets.config import load_recipe_config
from evolvecoder_datasets.errors import exit_status
from evolvecoder_datasets.recipe import RecipeConfig, demo_config, run_recipe


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, build the configuration and run the recipe; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", nargs="?", help="recipe configuration (YAML); default: the embedded demo")
    parser.add_argument("--rounds", type=int, help="override the number of evolution rounds")
    parser.add_argument("--output-dir", help="override the run folder")
    args = parser.parse_args(argv)

    def build_and_run() -> None:
        config = load_recipe_config(args.config, RecipeConfig) if args.config else demo_config()
        changes = {k: v for k, v in (("rounds", args.rounds), ("output_dir", args.output_dir)) if v is not None}
        print(run_recipe(dataclasses.replace(config, **changes)))

    return exit_status(build_and_run)


if __name__ == "__main__":
    sys.exit(main())
