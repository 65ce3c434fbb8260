"""YAML files to frozen configs, for every consumer: the CLI, the scripts in ``recipes/`` and the Ray engine.

The CLI only parses argv and calls this module; nothing here imports the CLI. A configuration file is one mapping
whose keys are the fields of a frozen dataclass (nested dataclasses from nested mappings). Every mistake is a
:class:`~evolvecoder_datasets.errors.ConfigError` of one line that names the file and the key:

    evolvecoder.yaml: refine.num_test: unknown key (did you mean 'num_tests'?) ...

Which recipe a file configures is read from its optional ``recipe:`` key, or recognised from its keys
(:func:`recipe_kind`): ``evolvecoder`` (:class:`evolvecoder_datasets.recipe.RecipeConfig`), ``code_instruct``
(:class:`evolvecoder_datasets.recipe.code_instruct.CodeInstructRecipe`) or ``grpo`` (TRL's trainer arguments, read by
``recipes/grpo_train.py``).

Publishing nowhere has one spelling in every recipe: ``store: none`` (:data:`NO_STORE`).

Example:
    >>> from evolvecoder_datasets.config import load_config
    >>> kind, config = load_config("recipes/configs/demo_smollm2.yaml")   # doctest: +SKIP
    >>> kind, config.rounds                                               # doctest: +SKIP
    ('evolvecoder', 1)
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import importlib
import inspect
import os
import sys
import types
import typing
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import ConfigError, EvolveCoderError

__all__ = [
    "NO_STORE",
    "RECIPES",
    "config_from_dict",
    "load_config",
    "load_recipe_config",
    "nest_flat_keys",
    "read_yaml",
    "recipe_kind",
    "resolve_store",
    "store_location",
]

#: The value of ``store`` that publishes nowhere, in every recipe.
NO_STORE = "none"

#: Recipe kind -> (module, configuration class) that ``evolvecoder-datasets run`` builds and runs (the module's
#: ``run(config)``). ``grpo`` files are TRL argument files: ``recipes/grpo_train.py`` reads them.
RECIPES: dict[str, tuple[str, str] | None] = {
    "evolvecoder": ("evolvecoder_datasets.recipe", "RecipeConfig"),
    "code_instruct": ("evolvecoder_datasets.recipe.code_instruct", "CodeInstructRecipe"),
    "grpo": None,
}

# Keys that only one kind of file has, to recognise a file without a ``recipe:`` key.
_SIGNATURES = (("code_instruct", ("repos",)), ("grpo", ("model_name_or_path", "dataset_name", "reward_mode")))


# ---------------------------------------------------------------------------------------------- types
def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def _field_types(config_cls: type) -> dict[str, Any]:
    """The resolved annotation of each init field of ``config_cls``.

    Each field's annotation is evaluated in the module of the class that declares it (the nearest in the MRO), so
    a base class whose own annotations name types imported only for type checkers does not matter, as it does for
    ``typing.get_type_hints``.
    """
    out: dict[str, Any] = {}
    for f in dataclasses.fields(config_cls):
        if not f.init:
            continue
        if not isinstance(f.type, str):
            out[f.name] = f.type
            continue
        owner = next((k for k in config_cls.__mro__ if f.name in inspect.get_annotations(k)), config_cls)
        namespace = dict(vars(sys.modules[owner.__module__]))
        try:
            out[f.name] = eval(f.type, namespace, {owner.__name__: owner})  # our own annotations, not user input
        except Exception as err:  # a bug of the config class, said in one line all the same
            raise ConfigError(f"{config_cls.__name__}.{f.name}: cannot resolve its type {f.type!r} ({err})") from err
    return out


def _coerce(value: Any, tp: Any, where: str) -> Any:
    """Check ``value`` against the annotation ``tp`` (converting where YAML cannot express the type)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any or tp is object:
        return value
    if origin is typing.Union or isinstance(tp, types.UnionType):
        if value is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        if len(options) == 1:  # ``X | None``: X's own error names the key that is wrong inside it
            return _coerce(value, options[0], where)
        for option in options:
            try:
                return _coerce(value, option, where)
            except ConfigError:
                continue
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
    if origin in (list, tuple, set, frozenset, Sequence) or tp in (list, tuple):
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
    if origin in (dict, Mapping) or tp is dict:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: expected a mapping, got {value!r}")
        key_tp, val_tp = args if len(args) == 2 else (Any, Any)
        return {_coerce(k, key_tp, f"{where} key"): _coerce(v, val_tp, f"{where}.{k}") for k, v in value.items()}
    if isinstance(tp, type) and not isinstance(value, tp):
        raise ConfigError(f"{where}: expected {tp.__name__}, got {type(value).__name__}")
    return value


def _over_default(f: dataclasses.Field, tp: Any, value: Any) -> Any:
    """A mapping for a nested config, with the settings where the field's default differs from the nested class's
    own defaults filled in first: ``search: {sandbox: {timeout_s: 2.0}}`` keeps the search's ``mode: fast`` (its
    field default), not ``SandboxSettings``'s ``isolated``. Any other value is returned as it is."""
    if not (isinstance(value, Mapping) and dataclasses.is_dataclass(tp) and isinstance(tp, type)):
        return value
    if f.default_factory is not dataclasses.MISSING:
        default = f.default_factory()
    elif f.default is not dataclasses.MISSING:
        default = f.default
    else:
        return value
    if not isinstance(default, tp):
        return value
    try:
        plain = tp()
    except (TypeError, EvolveCoderError):  # required fields, or defaults it refuses alone: nothing to differ from
        return value
    differs = {g.name: getattr(default, g.name) for g in dataclasses.fields(tp)
               if g.init and getattr(default, g.name) != getattr(plain, g.name)}
    return {**differs, **value}


def nest_flat_keys(config_cls: type, data: Mapping[str, Any], *, where: str = "config") -> dict[str, Any]:
    """``data`` with the flat keys ``config_cls`` took before some of its settings were nested moved under the field
    that holds them now, so that YAML written for the flat form keeps working.

    A config class names those keys in its ``FLAT_KEYS`` (old key -> field): ``SearchConfig`` holds its sandbox
    settings in ``sandbox`` (a :class:`~evolvecoder_datasets.limits.SandboxSettings`), and with
    ``FLAT_KEYS = {"mode": "sandbox", "timeout_s": "sandbox"}`` the old ``search: {mode: fast, timeout_s: 2.0}``
    reads as ``search: {sandbox: {mode: fast, timeout_s: 2.0}}``. :func:`config_from_dict` applies it to every
    class it builds; a class without ``FLAT_KEYS`` gets ``data`` unchanged.

    Args:
        config_cls (`type`): the dataclass ``data`` is for.
        data (`Mapping[str, Any]`): its keys and values (parsed YAML).
        where (`str`, *optional*, defaults to `"config"`): the prefix of error messages.

    Raises:
        ConfigError: a key given both flat and under its field, or a field that is not a mapping to put it in.

    Example:
        >>> from dataclasses import dataclass, field
        >>> from evolvecoder_datasets.config import nest_flat_keys
        >>> @dataclass
        ... class Inner:
        ...     mode: str = "fast"
        ...     timeout_s: float = 1.0
        >>> @dataclass
        ... class Outer:
        ...     budget: int = 1
        ...     sandbox: Inner = field(default_factory=Inner)
        ...     FLAT_KEYS = {"mode": "sandbox", "timeout_s": "sandbox"}
        >>> nest_flat_keys(Outer, {"budget": 2, "timeout_s": 0.5})
        {'budget': 2, 'sandbox': {'timeout_s': 0.5}}
        >>> nest_flat_keys(Outer, {"mode": "fast", "sandbox": {"mode": "isolated"}})
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.errors.ConfigError: config: mode is given both flat and under sandbox; keep sandbox.mode
    """
    flat = getattr(config_cls, "FLAT_KEYS", None) or {}
    out = dict(data)
    for key, holder in flat.items():
        if key not in out:
            continue
        value = out.pop(key)
        inner = out.get(holder)
        if inner is None:
            out[holder] = {key: value}
        elif dataclasses.is_dataclass(inner) and not isinstance(inner, type):  # a built config, from Python
            out[holder] = dataclasses.replace(inner, **{key: value})
        elif not isinstance(inner, Mapping):
            raise ConfigError(f"{where}: {key} belongs under {holder}, which is not a mapping ({inner!r})")
        elif key in inner:
            raise ConfigError(f"{where}: {key} is given both flat and under {holder}; keep {holder}.{key}")
        else:
            out[holder] = {**inner, key: value}
    return out


def config_from_dict(config_cls: type, data: Mapping[str, Any], *, where: str = "config") -> Any:
    """Build the dataclass ``config_cls`` from ``data`` (parsed YAML), rejecting unknown keys and wrong types.

    Args:
        config_cls (`type`): a dataclass; nested dataclass fields are built from nested mappings. The flat keys it
            names in ``FLAT_KEYS`` are moved under their field first (:func:`nest_flat_keys`).
        data (`Mapping[str, Any]`): the values.
        where (`str`, *optional*, defaults to `"config"`): the prefix of error messages (the file, then the keys).

    Raises:
        ConfigError: an unknown key (with the closest known one), a value of the wrong type, a missing required
            key, or a value the dataclass's own validation rejects; always one line naming the key.

    Example:
        >>> from dataclasses import dataclass
        >>> from evolvecoder_datasets.config import config_from_dict
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
    data = nest_flat_keys(config_cls, data, where=where)
    fields = {f.name: f for f in dataclasses.fields(config_cls) if f.init}
    for key in data:
        if key not in fields:
            close = difflib.get_close_matches(str(key), list(fields), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{where}: unknown key {key!r}{hint}; known keys: {', '.join(sorted(fields))}")
    missing = [name for name, f in fields.items() if name not in data and f.default is dataclasses.MISSING
               and f.default_factory is dataclasses.MISSING]
    if missing:
        raise ConfigError(f"{where}: missing required key(s) {missing}")
    hints = _field_types(config_cls)
    values = {key: _coerce(_over_default(fields[key], hints.get(key, Any), value), hints.get(key, Any),
                           f"{where}.{key}") for key, value in data.items()}
    try:
        return config_cls(**values)
    except ConfigError as err:
        raise ConfigError(f"{where}: {err}") from err
    except EvolveCoderError:
        raise
    except (TypeError, ValueError) as err:
        raise ConfigError(f"{where}: {err}") from err


# ---------------------------------------------------------------------------------------------- files
def _yaml_problem(err: Exception) -> str:
    """A YAML parse error on one line: where and what (PyYAML's own text spans several lines)."""
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or getattr(err, "context", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return where + (problem or " ".join(str(err).split()))


def read_yaml(path: str | os.PathLike) -> dict[str, Any]:
    """Read a configuration file: one YAML mapping (an empty file is an empty mapping).

    Args:
        path (`str` or `os.PathLike`): the YAML file.

    Raises:
        ConfigError: the file is missing, is not UTF-8 text, is not valid YAML, or is not a mapping.

    Example:
        >>> from evolvecoder_datasets.config import read_yaml
        >>> read_yaml("recipes/configs/evolvecoder.yaml")["rounds"]   # doctest: +SKIP
        4
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
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path.name}: expected a mapping of keys to values, got {type(data).__name__}")
    return dict(data)


def load_recipe_config(path: str | os.PathLike, config_cls: type) -> Any:
    """Read a YAML file and build ``config_cls`` from it with :func:`config_from_dict`.

    A top-level ``recipe:`` key, when present, must name the kind ``config_cls`` belongs to and is not passed on.

    Args:
        path (`str` or `os.PathLike`): the YAML file.
        config_cls (`type`): the recipe's configuration dataclass.

    Raises:
        ConfigError: the file is missing, is not valid YAML, or does not fit ``config_cls``.

    Example:
        >>> from evolvecoder_datasets.config import load_recipe_config
        >>> from evolvecoder_datasets.recipe import RecipeConfig
        >>> load_recipe_config("recipes/configs/evolvecoder.yaml", RecipeConfig).rounds   # doctest: +SKIP
        4
    """
    data = read_yaml(path)
    data.pop("recipe", None)
    return config_from_dict(config_cls, data, where=Path(path).name)


def recipe_kind(data: Mapping[str, Any], *, where: str = "config") -> str:
    """Which recipe a parsed configuration file is for: its ``recipe:`` key, else recognised from its keys.

    Args:
        data (`Mapping[str, Any]`): the parsed file.
        where (`str`, *optional*, defaults to `"config"`): the prefix of error messages.

    Returns:
        `str`: a key of :data:`RECIPES`.

    Raises:
        ConfigError: ``recipe:`` names no known recipe.

    Example:
        >>> from evolvecoder_datasets.config import recipe_kind
        >>> recipe_kind({"repos": [{"source": "."}]}), recipe_kind({"rounds": 2}), recipe_kind({"recipe": "grpo"})
        ('code_instruct', 'evolvecoder', 'grpo')
    """
    kind = data.get("recipe")
    if kind is not None:
        if kind not in RECIPES:
            close = difflib.get_close_matches(str(kind), list(RECIPES), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{where}: recipe: {kind!r} is not a recipe{hint}; known: {', '.join(RECIPES)}")
        return kind
    for name, keys in _SIGNATURES:
        if any(key in data for key in keys):
            return name
    return "evolvecoder"


def load_config(path: str | os.PathLike, overrides: dict[str, Any] | None = None) -> tuple[str, Any]:
    """Read a recipe configuration file of any kind into its frozen configuration.

    Args:
        path (`str` or `os.PathLike`): the YAML file.
        overrides (`dict`, *optional*): top-level keys set over the file's before it is checked (what ``run
            --output-dir/--rounds/--limit`` pass); a key the recipe does not have is the same one-line error as in
            the file.

    Returns:
        `tuple[str, Any]`: the recipe kind (see :func:`recipe_kind`) and its configuration object.

    Raises:
        ConfigError: the file cannot be read or does not fit its recipe's configuration (one line naming the key);
            a ``grpo`` file, which TRL's parser reads (``python recipes/grpo_train.py --config FILE``).

    Example:
        >>> from evolvecoder_datasets.config import load_config
        >>> kind, config = load_config("recipes/configs/code_instruct_local.yaml")   # doctest: +SKIP
        >>> kind, config.store_location()                                           # doctest: +SKIP
        ('code_instruct', None)
    """
    from ._shell import venv_command

    name = Path(path).name
    data = read_yaml(path)
    kind = recipe_kind(data, where=name)
    target = RECIPES[kind]
    if target is None:
        raise ConfigError(f"{name} is a GRPO training configuration (TRL trainer arguments), not a dataset recipe: "
                          f"train with `{venv_command('python')} recipes/grpo_train.py --config {path}`")
    module, cls_name = target
    try:
        config_cls = getattr(importlib.import_module(module), cls_name)
    except ModuleNotFoundError as err:
        if err.name != module:
            raise
        raise ConfigError(f"this installation has no recipe runner ({module}); it is needed to run {name}") from err
    data.pop("recipe", None)
    data.update(overrides or {})
    return kind, config_from_dict(config_cls, data, where=name)


# ---------------------------------------------------------------------------------------------- the store
def resolve_store(store: str | None, *, where: str = "store") -> str | None:
    """Normalise a recipe's ``store`` value: ``None`` (the default store), :data:`NO_STORE`, or a location.

    ``"none"`` in any case publishes nowhere. The old spelling ``""`` still means the same, with a
    ``FutureWarning``; a folder really named ``none`` is written ``./none``.

    Args:
        store (`str`, *optional*): the configured value.
        where (`str`, *optional*, defaults to `"store"`): the key, for messages.

    Raises:
        ConfigError: ``store`` is not a string.

    Example:
        >>> from evolvecoder_datasets.config import resolve_store
        >>> resolve_store("None"), resolve_store(None), resolve_store("org/run")
        ('none', None, 'org/run')
    """
    if store is None:
        return None
    if not isinstance(store, str | os.PathLike):
        raise ConfigError(f"{where}: expected a Hub repository id, a folder or 'none', got {store!r}")
    store = os.fspath(store)
    if store.strip() == "":
        warnings.warn(f"{where}: an empty string to publish nowhere is deprecated; write `store: {NO_STORE}`",
                      FutureWarning, stacklevel=3)
        return NO_STORE
    return NO_STORE if store.lower() == NO_STORE else store


def store_location(store: str | None, output_dir: str | os.PathLike) -> str | None:
    """Where a recipe publishes: ``None`` for ``store: none``, ``<output_dir>/store`` (absolute) when unset.

    Example:
        >>> from evolvecoder_datasets.config import store_location
        >>> store_location("none", "runs/x") is None, store_location("org/run", "runs/x")
        (True, 'org/run')
    """
    store = resolve_store(store)
    if store == NO_STORE:
        return None
    # Absolute: a relative default ("demo-output/store") that does not exist yet must not pass for a Hub id.
    return store or os.path.abspath(os.path.join(os.fspath(output_dir), "store"))
