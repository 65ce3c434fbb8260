"""The ``evolvecoder-datasets`` command: a thin layer where every command is one library call.

Commands:

- ``run CONFIG.yaml``: validate a recipe configuration against ``evolvecoder_datasets.recipe.RecipeConfig`` and
  call ``evolvecoder_datasets.recipe.run(config)`` (``--check`` validates only);
- ``card REPO@REV``: re-render a revision's card from its ``stats.json`` (``--push`` commits it, ``-o`` writes it);
- ``inspect REPO@REV``: a revision's statistics in the terminal;
- ``rounds REPO``: the revisions with their headline numbers.

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
import dataclasses
import difflib
import enum
import os
import sys
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import ConfigError, EvolveCoderError

__all__ = ["COMMANDS", "build_parser", "config_from_dict", "exit_status", "load_recipe_config", "main"]

_RECIPE_MODULE = "evolvecoder_datasets.recipe"


# ---------------------------------------------------------------------------- typed configuration files
def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def _coerce(value: Any, tp: Any, where: str) -> Any:
    """Check ``value`` against the annotation ``tp`` (converting where YAML cannot express the type)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any or tp is object:
        return value
    if origin is typing.Union or (hasattr(types, "UnionType") and isinstance(tp, types.UnionType)):
        if value is None and type(None) in args:
            return None
        errors = []
        for option in (a for a in args if a is not type(None)):
            try:
                return _coerce(value, option, where)
            except ConfigError as err:
                errors.append(str(err))
        raise ConfigError(f"{where}: {value!r} matches none of {' | '.join(_type_name(a) for a in args)}")
    if origin is typing.Literal:
        if value not in args:
            raise ConfigError(f"{where}: {value!r} is not one of {list(args)}")
        return value
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if isinstance(value, tp):
            return value
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: expected a mapping for {tp.__name__}, got {type(value).__name__}")
        return config_from_dict(tp, value, where=where)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(value)
        except ValueError:
            raise ConfigError(f"{where}: {value!r} is not one of {[m.value for m in tp]}") from None
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true/false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: expected an integer, got {value!r}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a string, got {value!r}")
        return value
    if tp in (Path, os.PathLike):
        if not isinstance(value, str | os.PathLike):
            raise ConfigError(f"{where}: expected a path, got {value!r}")
        return Path(value)
    if origin in (list, tuple, set, frozenset, Sequence, typing.Sequence) or tp in (list, tuple):
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            if len(args) != len(value):
                raise ConfigError(f"{where}: expected {len(args)} items, got {len(value)}")
            return tuple(_coerce(v, a, f"{where}[{i}]") for i, (v, a) in enumerate(zip(value, args)))
        item = args[0] if args else Any
        items = [_coerce(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
        if origin in (set, frozenset):
            return origin(items)
        return tuple(items) if origin is tuple or tp is tuple else items
    if origin in (dict, Mapping, typing.Mapping) or tp is dict:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: expected a mapping, got {value!r}")
        key_tp, val_tp = args if len(args) == 2 else (Any, Any)
        return {_coerce(k, key_tp, f"{where} key"): _coerce(v, val_tp, f"{where}.{k}") for k, v in value.items()}
    if isinstance(tp, type) and not isinstance(value, tp):
        raise ConfigError(f"{where}: expected {tp.__name__}, got {type(value).__name__}")
    return value


def config_from_dict(config_cls: type, data: Mapping[str, Any], *, where: str = "config") -> Any:
    """Build the dataclass ``config_cls`` from ``data`` (parsed YAML), rejecting unknown keys and wrong types.

    Args:
        config_cls (`type`): a dataclass; nested dataclass fields are built from nested mappings.
        data (`Mapping[str, Any]`): the values.
        where (`str`, *optional*, defaults to `"config"`): the prefix of error messages.

    Raises:
        ConfigError: an unknown key (with the closest known one), a value of the wrong type, a missing required
            key, or a value the dataclass's own validation rejects.

    Example:
        >>> from dataclasses import dataclass
        >>> from evolvecoder_datasets.cli import config_from_dict
        >>> @dataclass
        ... class Cfg:
        ...     rounds: int = 4
        ...     models: list[str] = None
        >>> config_from_dict(Cfg, {"rounds": 2, "models": ["a"]})
        Cfg(rounds=2, models=['a'])
        >>> config_from_dict(Cfg, {"round": 2})
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.errors.ConfigError: config: unknown key 'round' (did you mean 'rounds'?); known keys: models, rounds
    """
    if not (dataclasses.is_dataclass(config_cls) and isinstance(config_cls, type)):
        raise ConfigError(f"{config_cls!r} is not a dataclass")
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: expected a mapping of keys to values, got {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(config_cls) if f.init}
    hints = typing.get_type_hints(config_cls)
    for key in data:
        if key not in fields:
            close = difflib.get_close_matches(str(key), list(fields), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{where}: unknown key {key!r}{hint}; known keys: {', '.join(sorted(fields))}")
    missing = [name for name, f in fields.items() if name not in data and f.default is dataclasses.MISSING
               and f.default_factory is dataclasses.MISSING]
    if missing:
        raise ConfigError(f"{where}: missing required key(s) {missing}")
    values = {key: _coerce(value, hints.get(key, Any), f"{where}.{key}") for key, value in data.items()}
    try:
        return config_cls(**values)
    except EvolveCoderError:
        raise
    except (TypeError, ValueError) as err:
        raise ConfigError(f"{where}: {err}") from err


def _yaml_problem(err: Exception) -> str:
    """A YAML parse error on one line: where and what (PyYAML's own text spans several lines)."""
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or getattr(err, "context", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return where + (problem or " ".join(str(err).split()))


def load_recipe_config(path: str | os.PathLike, config_cls: type) -> Any:
    """Read a YAML file and build ``config_cls`` from it with :func:`config_from_dict`.

    Args:
        path (`str` or `os.PathLike`): the YAML file.
        config_cls (`type`): the recipe's configuration dataclass.

    Raises:
        ConfigError: the file is missing, is not valid YAML, or does not fit ``config_cls``.

    Example:
        >>> from evolvecoder_datasets.cli import load_recipe_config
        >>> cfg = load_recipe_config("recipes/configs/evolvecoder.yaml", RecipeConfig)   # doctest: +SKIP
    """
    import yaml

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"cannot read {path}: {err.strerror or err}") from err
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path} is not a UTF-8 text file (byte {err.start}: {err.reason})") from err
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ConfigError(f"{path} is not valid YAML: {_yaml_problem(err)}") from err
    return config_from_dict(config_cls, data if data is not None else {}, where=path.name)


# ---------------------------------------------------------------------------- commands
def _register_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", type=Path, help="the recipe configuration (YAML)")
    parser.add_argument("--check", action="store_true", help="validate the configuration and print it, do not run")


def _run_run(args: argparse.Namespace) -> int:
    import importlib

    try:
        recipe = importlib.import_module(_RECIPE_MODULE)
    except ModuleNotFoundError as err:
        if err.name != _RECIPE_MODULE:
            raise
        raise ConfigError(f"this installation has no recipe runner ({_RECIPE_MODULE}); "
                          "`run` needs it to execute a recipe configuration") from err
    config = load_recipe_config(args.config, recipe.RecipeConfig)
    if args.check:
        print(f"{args.config}: valid {type(config).__name__}")
        print(config)
        return 0
    result = recipe.run(config)
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
    parser.add_argument("--token", default=None, help="Hub token (default: the logged-in one)")


def _run_inspect(args: argparse.Namespace) -> int:
    from .rounds import describe_round, split_repo_revision

    repo, revision = split_repo_revision(args.target)
    print(describe_round(repo, revision, token=args.token))
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


def _run_demo(args: argparse.Namespace) -> int:
    from .demo import engine_demo, run_pipeline_demo

    engine_demo(args.problems)
    if not args.engine_only:
        run_pipeline_demo(args.output_dir)
    return 0


COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {
    "demo": ("run the embedded default job offline (sandbox on HumanEval, then a small round pipeline)",
             _register_demo, _run_demo),
    "run": ("run a recipe from its YAML configuration", _register_run, _run_run),
    "card": ("re-render the dataset card of a revision", _register_card, _run_card),
    "inspect": ("print the statistics of a revision", _register_inspect, _run_inspect),
    "rounds": ("list the revisions of a repository with their headline numbers", _register_rounds, _run_rounds),
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


def exit_status(action: Callable[[], int | None]) -> int:
    """Call ``action`` and turn the library's errors into the exit status every entry point uses.

    A bad configuration (:class:`ConfigError`) gives 2 and any other library error (:class:`EvolveCoderError`)
    gives 1, each after one ``error:`` line on stderr; other exceptions propagate. Otherwise the status is what
    ``action`` returns (0 when it returns None).

    Args:
        action (`Callable[[], int | None]`): the work of the command, without arguments.

    Returns:
        `int`: the exit status.

    Example:
        >>> from evolvecoder_datasets.cli import exit_status
        >>> from evolvecoder_datasets.errors import ConfigError
        >>> def bad():
        ...     raise ConfigError("rounds must be >= 1")
        >>> exit_status(bad), exit_status(lambda: None)
        (2, 0)
    """
    try:
        status = action()
    except ConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except EvolveCoderError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0 if status is None else status


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
    args = build_parser().parse_args(argv)
    _, _, run = COMMANDS[args.command]
    return exit_status(lambda: run(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
