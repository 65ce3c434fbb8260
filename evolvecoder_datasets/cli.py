"""The ``evolvecoder-datasets`` command: a thin layer where every command is one library call.

Commands:

- ``run CONFIG.yaml``: load a recipe configuration of any kind with :func:`evolvecoder_datasets.config.load_config`
  (the EvolveCoder recipe or code_instruct) and call that recipe's ``run(config)`` (``--check`` validates only;
  ``--output-dir``, ``--rounds`` and ``--limit`` set those keys over the file's, ``--verbose`` logs each step);
- ``card REPO@REV``: re-render a revision's card from its ``stats.json`` (``--push`` commits it, ``-o`` writes it);
- ``inspect REPO@REV``: a revision's statistics in the terminal;
- ``rounds REPO``: the revisions with their headline numbers;
- ``serve``: the reward service for trainers that call a reward over HTTP (verl, OpenRLHF, verifiers), see
  :mod:`evolvecoder_datasets.integrations.server`.

``REPO`` is a Hub dataset repository (``org/name``) or a local store folder; ``REV`` is a round number,
``round{r}``, ``main`` (the default), a tag or a commit. Errors exit with status 2 for a bad configuration and 1
for everything else, printing one ``error:`` line.

Each command is a ``(register, run)`` pair in :data:`COMMANDS`, so a new command is one more entry.

Example:
    >>> from evolvecoder_datasets.cli import main
    >>> main(["rounds", "./my-run"])        # doctest: +SKIP
    revision  commit      tags       problems  tests  mean tests  pass@1  mutation
    round0    1a2b3c4d5e  round0-v1       120  1,440       12.00   0.610         –
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .config import RECIPES, config_from_dict, load_config, load_recipe_config
from .errors import ConfigError, EvolveCoderError, exit_status

# config_from_dict, load_recipe_config and exit_status are importable from here as before; they live in
# evolvecoder_datasets.config and evolvecoder_datasets.errors, which the recipes and the engine import instead.
__all__ = ["COMMANDS", "build_parser", "config_from_dict", "exit_status", "load_recipe_config", "main"]


# ---------------------------------------------------------------------------- commands
def _register_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", type=Path, help="the recipe configuration (YAML)")
    parser.add_argument("--check", action="store_true", help="validate the configuration and print it, do not run")
    parser.add_argument("--output-dir", metavar="DIR", help="the run folder, over the file's output_dir")
    parser.add_argument("--rounds", type=int, metavar="N", help="evolution rounds, over the file's rounds")
    parser.add_argument("--limit", type=int, metavar="N",
                        help="at most N seed problems per source (the file's limit_per_source)")
    parser.add_argument("--verbose", action="store_true", help="log each step of the run (INFO) on stderr")


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The configuration keys ``run``'s options set over the file's (only those given)."""
    given = {"output_dir": args.output_dir, "rounds": args.rounds, "limit_per_source": args.limit}
    return {key: value for key, value in given.items() if value is not None}


def _run_run(args: argparse.Namespace) -> int:
    if args.verbose:
        import logging

        logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s: %(message)s", stream=sys.stderr)
        logging.getLogger("evolvecoder_datasets").setLevel(logging.INFO)
    kind, config = load_config(args.config, _overrides(args))
    if args.check:
        if hasattr(config, "sources") and hasattr(config, "limit_per_source"):  # the EvolveCoder recipe's seeds
            from .recipe.seeds import check_sources

            check_sources(config)
        print(f"{args.config}: valid {kind} recipe ({type(config).__name__}); the resolved settings:")
        print(_as_yaml(config), end="")
        return 0
    module, _ = RECIPES[kind]  # type: ignore[misc]  # load_config refuses the kinds without a runner
    runner = importlib.import_module(module).run
    import inspect

    options = {"progress": True, "library_bars": args.verbose}  # one line per step; --verbose keeps every bar
    accepted = inspect.signature(runner).parameters
    result = runner(config, **{k: v for k, v in options.items() if k in accepted})
    if result is not None:
        print(result)
    return 0


def _register_card(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="REPO@REV", help="repository (Hub id or local store) and revision")
    parser.add_argument("--template", default="round", help="template stem in cards/ or a path (default: round)")
    parser.add_argument("--push", action="store_true", help="commit the re-rendered README.md to the branch")
    parser.add_argument("-o", "--output", type=Path, help="write the card to this file instead of stdout")
    parser.add_argument("--token", default=None, help="Hub token (default: the logged-in one)")


def _run_card(args: argparse.Namespace) -> int:
    from .rounds import rerender_card, split_repo_revision

    repo, revision = split_repo_revision(args.target)
    card = rerender_card(repo, revision, template=args.template, push=args.push, token=args.token)
    if args.output is not None:
        try:
            args.output.write_text(str(card), encoding="utf-8")
        except OSError as err:
            raise ConfigError(f"cannot write the card to {args.output}: {err.strerror or err}") from err
    elif not args.push:
        print(str(card))
    return 0


def _register_inspect(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="REPO@REV", help="repository (Hub id or local store) and revision")
    parser.add_argument("--dropped", action="store_true",
                        help="also list every removed problem with its stage and reason")
    parser.add_argument("--token", default=None, help="Hub token (default: the logged-in one)")


def _run_inspect(args: argparse.Namespace) -> int:
    from .rounds import describe_round, split_repo_revision

    repo, revision = split_repo_revision(args.target)
    print(describe_round(repo, revision, dropped=args.dropped, token=args.token))
    return 0


def _register_rounds(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("repo", metavar="REPO", help="repository (Hub id or local store)")
    parser.add_argument("--token", default=None, help="Hub token (default: the logged-in one)")


def _format_rounds(infos: Sequence[Any]) -> str:
    from .cards import _fmt, headline

    header = ["revision", "commit", "tags", "problems", "tests", "mean tests", "pass@1", "mutation"]
    rows = []
    for info in infos:
        head = headline(info.stats)
        rows.append([info.revision, info.commit[:10], ",".join(info.tags) or "–", _fmt(head["problems"]),
                     _fmt(head["tests"]), _fmt(head["mean_tests"], 2), _fmt(head["pass@1"]),
                     _fmt(head["mutation_score"])])
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
             for row in [header, *rows]]
    return "\n".join(lines)


def _run_rounds(args: argparse.Namespace) -> int:
    from .rounds import list_rounds

    infos = list_rounds(args.repo, token=args.token)
    print(_format_rounds(infos) if infos else f"{args.repo} has no revisions")
    return 0


def _register_demo(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output-dir", default="demo-output", help="where the round store and card go")
    parser.add_argument("--engine-only", action="store_true", help="only the sandbox on HumanEval (part 1)")
    parser.add_argument("--problems", type=int, default=None, help="HumanEval problems for part 1 (default: all)")
    parser.add_argument("--verbose", action="store_true",
                        help="keep the progress bars of datasets/transformers (default: one bar per stage)")


def _run_demo(args: argparse.Namespace) -> int:
    from .demo import engine_demo, run_pipeline_demo

    engine_demo(args.problems)
    if not args.engine_only:
        run_pipeline_demo(args.output_dir, verbose=args.verbose)
    return 0


def _register_serve(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="TCP port (default: 8765; 0 picks a free one)")
    parser.add_argument("--token-file", type=Path, default=None,
                        help="file holding the bearer token (default: $EVOLVECODER_REWARD_TOKEN, else a new one, "
                             "printed once)")
    parser.add_argument("--dataset", metavar="REPO@REV", default=None,
                        help="a revision whose rows requests may name by id (Hub repository or local store)")
    parser.add_argument("--kind", choices=["binary", "pass_rate"], default="binary",
                        help="the reward (default: binary, as code_reward)")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = _SERVE_ENDPOINTS
    parser.add_argument("--mode", choices=["isolated", "fast"], default="isolated",
                        help="sandbox mode (default: isolated)")
    parser.add_argument("--timeout", type=float, default=1.0, help="CPU seconds per test (default: 1.0)")
    parser.add_argument("--workers", type=int, default=None, help="fork servers (default: the usable cores)")
    parser.add_argument("--failing-value", type=float, default=0.0,
                        help="binary reward of a failing completion (default: 0.0)")
    parser.add_argument("--cache-size", type=int, default=65536,
                        help="results of identical (program, tests) pairs kept (default: 65536, ~50 MB when full)")
    parser.add_argument("--max-body-mb", type=float, default=16.0, help="largest request body (default: 16)")
    parser.add_argument("--max-queued-mb", type=float, default=256.0,
                        help="request bytes admitted and unanswered before 429 (default: 256)")
    parser.add_argument("--grace", type=float, default=30.0,
                        help="seconds a shutdown waits for batches in flight (default: 30)")


def _as_yaml(config: Any) -> str:
    """A resolved configuration as YAML, every default written out (what ``run --check`` prints)."""
    import dataclasses
    import json

    import yaml

    data = dataclasses.asdict(config) if dataclasses.is_dataclass(config) else config
    return yaml.safe_dump(json.loads(json.dumps(data, default=str)), sort_keys=False)


_SERVE_ENDPOINTS = """endpoints (/score, /openrlhf and /metrics need `Authorization: Bearer <token>`):
  POST /score      {"completions": [...], "tests": [[...], ...]} or "ids" naming rows of --dataset instead of
                   "tests"; optional "time_limit_s", "kind" -> {"rewards": [...]}
  POST /openrlhf   OpenRLHF's remote reward: {"query": [...], "prompts": [...], "labels": [...]}
  GET  /health     {"status": "ok", ...}; 503 while draining
  GET  /metrics    counters as text"""


def _run_serve(args: argparse.Namespace) -> int:
    from .integrations.server import ServeConfig, serve, service_token
    from .rewards import RewardConfig

    token, generated = service_token(args.token_file)
    if generated:
        print(f"token (new; pass --token-file or set EVOLVECODER_REWARD_TOKEN to choose one): {token}", flush=True)
    reward = RewardConfig(kind=args.kind, mode=args.mode, timeout_s=args.timeout, workers=args.workers,
                          failing_value=args.failing_value, cache_size=args.cache_size)  # fmt: skip
    config = ServeConfig(host=args.host, port=args.port, token=token, reward=reward, dataset=args.dataset,
                         max_body_bytes=int(args.max_body_mb * (1 << 20)),
                         max_queued_bytes=int(args.max_queued_mb * (1 << 20)), shutdown_grace_s=args.grace)
    serve(config, announce=lambda line: print(line, flush=True))
    return 0


COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {
    "demo": ("run the embedded default job offline (sandbox on HumanEval, then a small round pipeline)",
             _register_demo, _run_demo),
    "run": ("run a recipe from its YAML configuration", _register_run, _run_run),
    "card": ("re-render the dataset card of a revision", _register_card, _run_card),
    "inspect": ("print the statistics of a revision", _register_inspect, _run_inspect),
    "rounds": ("list the revisions of a repository with their headline numbers", _register_rounds, _run_rounds),
    "serve": ("serve the reward over HTTP for verl, OpenRLHF and verifiers", _register_serve, _run_serve),
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``evolvecoder-datasets`` (one sub-command per entry of :data:`COMMANDS`).

    Example:
        >>> from evolvecoder_datasets.cli import build_parser
        >>> build_parser().parse_args(["rounds", "org/run"]).command
        'rounds'
    """
    from . import __version__

    parser = argparse.ArgumentParser(prog="evolvecoder-datasets",
                                     description="Build, publish and inspect EvolveCoder datasets.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (help_text, register, _) in COMMANDS.items():
        register(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def _output_dir(args: argparse.Namespace) -> str | None:
    """The run folder a ``run`` or ``demo`` command writes (what an interrupted run keeps)."""
    if args.command == "demo":
        return str(args.output_dir)
    if args.command == "run":
        try:
            return str(load_config(args.config, _overrides(args))[1].output_dir)
        except (EvolveCoderError, OSError, AttributeError):
            return None
    return None


def _interrupted(args: argparse.Namespace, argv: Sequence[str]) -> int:
    """One line on Ctrl-C: what is kept and the command that resumes (exit status 130, as a shell reports SIGINT)."""
    from ._shell import venv_command

    folder = _output_dir(args)
    kept = (f"finished stages are kept in {folder}/stages and every model answer in {folder}/llm"
            if folder else "nothing was lost that a rerun cannot redo")
    command = " ".join([venv_command("evolvecoder-datasets"), *argv])
    print(f"interrupted: {kept}; resume with: {command}", file=sys.stderr)
    return 130


def _report_reuse() -> None:
    """Say on stderr which saved stages a rerun reuses (the checkpoints log it at INFO)."""
    import logging

    log = logging.getLogger("evolvecoder_datasets.recipe.checkpoints")
    if not any(getattr(h, "_ecd_reuse", False) for h in log.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        handler._ecd_reuse = True  # type: ignore[attr-defined]
        log.addHandler(handler)
        log.setLevel(logging.INFO)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``evolvecoder-datasets``; returns the exit status.

    Args:
        argv (`Sequence[str]`, *optional*): the arguments (default: ``sys.argv[1:]``).

    Returns:
        `int`: 0 on success, 2 for a bad configuration or usage, 1 for any other library error.

    Example:
        >>> from evolvecoder_datasets.cli import main
        >>> main(["inspect", "./my-run@1"])      # doctest: +SKIP
        0
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    _, _, run = COMMANDS[args.command]
    previous = None
    if args.command in ("run", "demo"):
        _report_reuse()
        # left alone where SIGINT is ignored (a background job) or where signals cannot be set (not the main thread)
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # fmt: skip
            from .recipe.progress import on_interrupt

            previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        return exit_status(lambda: run(args))
    except KeyboardInterrupt:
        return _interrupted(args, argv)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
