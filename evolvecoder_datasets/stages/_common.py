"""Helpers the LLM stages share: per-process backends and sandboxes, seeded per-problem randomness, test names.

Nothing here captures a live object in a ``Dataset.map`` closure: stages receive frozen configs, and the backend
or sandbox a config describes is built on first use inside the worker process and reused by later batches.

Example:
    >>> from evolvecoder_datasets.stages._common import problem_rng
    >>> bool(problem_rng(0, "HumanEval_3", 1).integers(1000) == problem_rng(0, "HumanEval_3", 1).integers(1000))
    True
"""

from __future__ import annotations

import ast
import atexit
import builtins
import dataclasses
import hashlib
import json
import os
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from .. import keys as _keys
from .. import schema
from ..errors import ConfigError, LLMCacheMissError, SchemaError
from ..llm.config import LLMConfig  # at run time: typing.get_type_hints of every stage config resolves `llm`

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

    from ..execution import Sandbox
    from ..llm import Backend
    from .execute import ExecuteConfig

__all__ = [
    "LLMStageConfig",
    "called_names",
    "check_list_cells",
    "check_on_llm_error",
    "check_text_cells",
    "config_digest",
    "defined_names",
    "drop_reason_counts",
    "get_backend",
    "get_sandbox",
    "independent_tests",
    "normalise_test",
    "problem_rng",
    "raise_unrecordable",
    "reference_for",
    "stable_int",
    "without_dropped",
]

_BUILTIN_NAMES = frozenset(dir(builtins))
_backends: dict[tuple[int, str], Backend] = {}
_backends_lock = threading.Lock()


# Checkpoint keys are defined once, in evolvecoder_datasets.keys (with the request cache key's notion of an answer).
config_digest = _keys.config_digest


def get_backend(config: LLMConfig) -> Backend:
    """The backend ``config`` describes, built once per process and closed at interpreter exit.

    A local model (``transformers``, ``vllm``) therefore loads once for every batch of every stage that uses the
    same configuration.

    Args:
        config (`LLMConfig`): the backend configuration a stage received.

    Raises:
        ConfigError: the configuration is incomplete.
        MissingExtraError: the backend's optional dependency is not installed.
    """
    from ..llm import make_backend

    full = json.dumps(dataclasses.asdict(config), sort_keys=True, default=str)  # transport included
    key = (os.getpid(), full)
    with _backends_lock:
        backend = _backends.get(key)
        if backend is None:
            backend = _backends[key] = make_backend(config)
            atexit.register(backend.close)
        return backend


def close_backends() -> None:
    """Close every backend this process built (their request caches flush; models are released)."""
    with _backends_lock:
        for backend in _backends.values():
            backend.close()
        _backends.clear()


def get_sandbox(config: ExecuteConfig) -> Sandbox:
    """The process-wide sandbox for ``config`` (see :func:`evolvecoder_datasets.execution.shared_sandbox`)."""
    from ..execution import shared_sandbox

    return shared_sandbox(**config.sandbox_settings())


def stable_int(*parts: Any) -> int:
    """A 64-bit integer derived from ``parts`` that is the same in every process and Python version.

    Example:
        >>> stable_int("a", 1) == stable_int("a", 1), stable_int("a", 1) == stable_int("a", 2)
        (True, False)
    """
    digest = hashlib.sha256(json.dumps([str(p) for p in parts]).encode()).digest()
    return int.from_bytes(digest[:8], "little")


def problem_rng(seed: int, problem_id: str, *salt: Any) -> np.random.Generator:
    """A generator seeded by the run seed, the problem id and a salt (round, stage).

    Each problem draws from its own stream, so its choices do not depend on the batch size, on ``num_proc`` or
    on which other problems are in the dataset, and a recorded seed reproduces every choice.

    Args:
        seed (`int`): the run's seed.
        problem_id (`str`): the problem's ``id``.
        *salt: anything else that should give an independent stream (round number, stage name).
    """
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, stable_int(problem_id, *salt) & 0xFFFFFFFFFFFF])


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def called_names(test: str) -> set[str]:
    """Names called as functions (or classes) in ``test``, builtins excluded.

    Example:
        >>> sorted(called_names("assert fib(3) == len([1, 2]) and Solver().run(1)"))
        ['Solver', 'fib']
    """
    tree = _parse(test)
    if tree is None:
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id not in _BUILTIN_NAMES:
            names.add(node.func.id)
    return names


def defined_names(program: str) -> set[str]:
    """Top-level function, class and variable names a program defines (empty when it does not parse).

    Example:
        >>> sorted(defined_names("import math\\nK = 3\\ndef f(x):\\n    return x\\nclass A: pass"))
        ['A', 'K', 'f', 'math']
    """
    tree = _parse(program)
    if tree is None:
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def _bound_and_free(test: str) -> tuple[set[str], set[str]]:
    tree = _parse(test)
    if tree is None:
        return set(), set()
    bound, loaded = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, (ast.Store, ast.Del)) else loaded).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
    return bound, loaded - bound - _BUILTIN_NAMES


def independent_tests(tests: Sequence[str]) -> tuple[list[str], int]:
    """Drop tests that read a name only another test binds (they would fail alone, or pass only in order).

    Each test runs in a fresh copy of the program, so a test that uses ``x`` defined by an earlier ``x = ...; assert``
    item depends on it. Names the tests call as functions belong to the program and are not counted.

    Args:
        tests (`Sequence[str]`): parsed, syntactically valid tests.

    Returns:
        `tuple[list[str], int]`: the independent tests (in order) and how many were dropped.

    Example:
        >>> independent_tests(["xs = [3, 1]\\nassert srt(xs) == [1, 3]", "assert srt(xs) == [1, 3]", "assert srt([]) == []"])
        (['xs = [3, 1]\\nassert srt(xs) == [1, 3]', 'assert srt([]) == []'], 1)
    """
    info = [_bound_and_free(t) for t in tests]
    kept = []
    for k, (test, (_, free)) in enumerate(zip(tests, info)):
        bound_elsewhere = set().union(*(b for j, (b, _) in enumerate(info) if j != k)) if len(info) > 1 else set()
        if free & bound_elsewhere:
            continue
        kept.append(test)
    return kept, len(tests) - len(kept)


def normalise_test(test: str) -> str:
    """Whitespace-insensitive form of a test, for duplicate detection across rounds.

    Example:
        >>> normalise_test("assert  f( 1 )==2") == normalise_test("assert f(1) == 2")
        True
    """
    tree = _parse(test)
    if tree is not None:
        return ast.dump(tree)
    return " ".join(test.split())


def _row_label(batch: Mapping[str, Any], i: int) -> str:
    ids = batch.get(schema.ID)
    return f"row {i} (id {ids[i]!r})" if ids is not None and i < len(ids) else f"row {i}"


def check_list_cells(
    batch: Mapping[str, Any],
    column: str,
    *,
    stage: str,
    items: str = "text",
    rows: Iterable[int] | None = None,
) -> None:
    """Raise :class:`SchemaError` naming ``column`` and the row when a cell is not a list of the expected items.

    A missing column and a ``None`` cell pass (the stages treat them as empty). A plain string is refused: iterated,
    it would silently become one test (or program) per character.

    Args:
        batch (`Mapping[str, Any]`): the batch a stage received.
        column (`str`): the column to check.
        stage (`str`): the stage name, for the message.
        items (`str`, defaults to ``"text"``): ``"text"`` (every item a string) or ``"solutions"`` (every item a
            string, ``None``, or a mapping whose ``code`` is a string or ``None``).
        rows (`Iterable[int]`, *optional*): only these rows (default: all).

    Raises:
        SchemaError: a cell is not a list, or holds an item of the wrong type.

    Example:
        >>> check_list_cells({"id": ["X_1"], "tests": [["assert f() == 1"]]}, "tests", stage="execute")
        >>> check_list_cells({"id": ["X_1"], "tests": ["assert f() == 1"]}, "tests", stage="execute")
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.errors.SchemaError: stage 'execute': column 'tests' must hold a list per row, got str in row 0 (id 'X_1')
    """
    cells = batch.get(column)
    if cells is None:
        return
    for i in range(len(cells)) if rows is None else rows:
        cell = cells[i]
        if cell is None:
            continue
        if isinstance(cell, (str, bytes, Mapping)) or not isinstance(cell, (Sequence, np.ndarray)):
            raise SchemaError(f"stage {stage!r}: column {column!r} must hold a list per row, got "
                              f"{type(cell).__name__} in {_row_label(batch, i)}")
        for k, item in enumerate(cell):
            if isinstance(item, str):
                continue
            if items == "solutions" and (item is None or (isinstance(item, Mapping)
                                                          and isinstance(item.get("code") or "", str))):
                continue
            raise SchemaError(f"stage {stage!r}: column {column!r} item {k} of {_row_label(batch, i)} must be a "
                              f"{'program' if items == 'solutions' else 'string'}, got {type(item).__name__}")


def check_text_cells(batch: Mapping[str, Any], column: str, *, stage: str, rows: Iterable[int] | None = None) -> None:
    """Raise :class:`SchemaError` naming ``column`` and the row when a cell is not a string (``None`` included).

    Example:
        >>> check_text_cells({"id": ["X_1"], "question": [None]}, "question", stage="sample")
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.errors.SchemaError: stage 'sample': column 'question' must hold a string, got NoneType in row 0 (id 'X_1')
    """
    cells = batch.get(column)
    if cells is None:
        return
    for i in range(len(cells)) if rows is None else rows:
        if not isinstance(cells[i], str):
            raise SchemaError(f"stage {stage!r}: column {column!r} must hold a string, got "
                              f"{type(cells[i]).__name__} in {_row_label(batch, i)}")


def drop_reason_counts(reasons: Iterable[str | None]) -> dict[str, int]:
    """``{reason: count}`` of the non-empty drop reasons, most common first.

    Example:
        >>> drop_reason_counts([None, "refine_no_json", "too_few_tests", "refine_no_json"])
        {'refine_no_json': 2, 'too_few_tests': 1}
    """
    return dict(Counter(r for r in reasons if r).most_common())


def without_dropped(ds: Dataset, *, column: str = "drop_reason") -> Dataset:
    """The rows of ``ds`` whose ``drop_reason`` is empty (the others were recorded, not silently lost).

    Args:
        ds (`datasets.Dataset`): rows with a ``drop_reason`` column.
        column (`str`, defaults to ``"drop_reason"``): the column to test.
    """
    reasons = list(ds[column])
    keep = [i for i, reason in enumerate(reasons) if not reason]
    return ds if len(keep) == len(ds) else ds.select(keep)


def as_origin_list(value: Any) -> list[dict[str, Any]]:
    """A ``test_origin`` cell as plain dicts ``{"round": int, "method": str}``."""
    return [{"round": int(o["round"]), "method": str(o["method"])} for o in value or ()]


def check_fraction(name: str, value: float) -> None:
    """Raise :class:`ConfigError` unless ``0 <= value <= 1``."""
    if not 0.0 <= float(value) <= 1.0:
        raise ConfigError(f"{name} must lie in [0, 1], got {value!r}")


def check_positive(name: str, value: int, *, minimum: int = 1) -> None:
    """Raise :class:`ConfigError` unless ``value`` is an integer ``>= minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{name} must be an integer >= {minimum}, got {value!r}")


def mapping_or_none(value: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A plain dict copy, or None."""
    return None if value is None else dict(value)


def check_on_llm_error(value: str) -> None:
    """Raise :class:`ConfigError` unless ``value`` is ``"raise"`` or ``"record"``."""
    if value not in ("raise", "record"):
        raise ConfigError(f"on_llm_error must be 'raise' or 'record', got {value!r}")


def raise_unrecordable(answer: BaseException) -> None:
    """Re-raise a failed request that ``on_llm_error="record"`` must not turn into a recorded row.

    An interrupt (any non-``Exception``) stops the run, and so does a cache miss of a replayed run: recording it
    would silently change a run that is meant to be reproduced exactly.
    """
    if not isinstance(answer, Exception) or isinstance(answer, LLMCacheMissError):
        raise answer


def reference_for(references: Sequence[str], tests: Sequence[str]) -> str | None:
    """The first reference program that defines a function (or class) the tests call.

    Example:
        >>> reference_for(["print(input())", "def sq(x):\\n    return x * x"], ["assert sq(3) == 9"])
        'def sq(x):\\n    return x * x'
    """
    wanted = set().union(*(called_names(t) for t in tests)) if tests else set()
    for program in references:
        if program and wanted & defined_names(program):
            return program
    return None


_Config = TypeVar("_Config", bound="LLMStageConfig")


class LLMStageConfig:
    """Methods shared by the frozen configs of the stages that ask a test-writer model (refine, evolve).

    A subclass is a dataclass with an ``llm`` field (``LLMConfig | None``) and calls :meth:`_check_llm_field` from
    its ``__post_init__``.
    """

    llm: LLMConfig | None  # declared by the dataclass subclass

    def _check_llm_field(self) -> None:
        from ..llm.config import LLMConfig

        if self.llm is not None and not isinstance(self.llm, LLMConfig):
            raise ConfigError(f"{type(self).__name__}.llm must be an LLMConfig, got {type(self.llm).__name__}")

    def replace(self: _Config, **changes: Any) -> _Config:
        """A copy with ``changes`` applied (validated again)."""
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]

    def require_llm(self) -> LLMConfig:
        """The test-writer configuration.

        Raises:
            ConfigError: ``llm`` is unset.
        """
        if self.llm is None:
            raise ConfigError(f"{type(self).__name__}.llm is unset: give the stage a test-writer LLMConfig")
        return self.llm
