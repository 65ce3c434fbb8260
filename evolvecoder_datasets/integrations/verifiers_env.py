"""A verifiers v1 environment built from a round: a ``Taskset`` package whose reward is our judge.

:func:`build_verifiers_environment` writes a package folder (``pyproject.toml``, ``<name>/__init__.py``,
``<name>/tasks.jsonl``) that verifiers loads by its single importable module name (``vf-eval <name>``; its loader
``verifiers/v1/utils/loaders.py`` imports the id as a module, so dotted ids do not work). The package's
``__init__`` builds its ``Taskset`` class with :func:`taskset_class` from this module (so the judge's code is the
installed ``evolvecoder-datasets``, not a copy), and exports it through ``__all__`` as verifiers requires.

Each task is one problem: its question as the prompt (after the rewards' ``SYSTEM_PROMPT``), its tests and its
calibrated limit as task data. The reward ``code_reward`` is an ``async`` ``@vf.reward`` that scores the last
reply with :class:`~evolvecoder_datasets.rewards.CodeReward` in this process's sandbox, or on the reward service
named by ``$EVOLVECODER_REWARD_URL`` (token ``$EVOLVECODER_REWARD_TOKEN``). verifiers passes rewards through
``float()``, so a sandbox failure raises (:class:`~evolvecoder_datasets.errors.SandboxCrashed`): the rollout is
recorded as an error and left out, never scored 0. ``$EVOLVECODER_REWARD_KIND=pass_rate`` scores the fraction of
tests passed; ``$EVOLVECODER_REWARD_MODE=fast`` runs the sandbox in fast mode.

This module imports ``verifiers`` when :func:`taskset_class` runs (the generated package calls it), not before.

Example:
    >>> from datasets import Dataset
    >>> from evolvecoder_datasets.integrations.verifiers_env import build_verifiers_environment
    >>> rows = Dataset.from_dict({"id": ["P_1"], "question": ["Set x to 1."], "tests": [["assert x == 1"]]})
    >>> folder = build_verifiers_environment(rows, "envs", name="evolvecoder_round0")   # doctest: +SKIP
    >>> # pip install -e envs/evolvecoder_round0 && vf-eval evolvecoder_round0 --env.agent.harness.id null ...
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from .. import schema
from ..errors import ConfigError, SandboxCrashed, SchemaError
from ..schema import TIME_LIMIT

__all__ = ["build_verifiers_environment", "score_reply", "taskset_class"]

_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")

_INIT = '''"""{title}: a verifiers v1 taskset of {n} problems from {source}, scored by evolvecoder-datasets' judge.

Load it by this module's name: ``vf-eval {name} --env.agent.harness.id null ...``.
"""

from pathlib import Path

from evolvecoder_datasets.integrations.verifiers_env import taskset_class

{cls} = taskset_class("{cls}", Path(__file__).with_name("tasks.jsonl"))

__all__ = ["{cls}"]
'''

_PYPROJECT = '''[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "{dist}"
version = "0.1.0"
description = "{title}: a verifiers v1 taskset scored by evolvecoder-datasets' judge"
requires-python = ">=3.10"
dependencies = ["verifiers>=0.4.0", "evolvecoder-datasets"]

[tool.setuptools]
packages = ["{name}"]

[tool.setuptools.package-data]
{name} = ["tasks.jsonl"]
'''

_REWARDS: dict[tuple, Any] = {}


async def score_reply(reply: str, tests: Any, time_limit_s: float | None = None) -> float:
    """The reward of one reply: on the reward service (``$EVOLVECODER_REWARD_URL``) or this process's sandbox.

    Raises:
        SandboxCrashed: the sandbox failed on it (verifiers then records the rollout as an error).
        SchemaError: the task has no tests.

    Example:
        >>> import asyncio
        >>> asyncio.run(score_reply("```python\\nx = 1\\n```", ["assert x == 1"]))
        1.0
    """
    import asyncio

    kind = os.environ.get("EVOLVECODER_REWARD_KIND", "binary")
    if os.environ.get("EVOLVECODER_REWARD_URL"):
        from .client import RewardClient

        return (await RewardClient().ascore([reply], tests=[tests], time_limit_s=[time_limit_s], kind=kind))[0]
    from ..rewards import make_code_reward

    mode = os.environ.get("EVOLVECODER_REWARD_MODE", "isolated")
    key = (kind, mode)
    if key not in _REWARDS:
        _REWARDS[key] = make_code_reward(kind=kind, mode=mode)
    scored = (await asyncio.to_thread(_REWARDS[key].score_details, [reply], tests=[tests],
                                      **{TIME_LIMIT: [time_limit_s]}))[0]  # fmt: skip
    if scored.infra:
        raise SandboxCrashed(f"the sandbox failed on this reply: {scored.outcome}")
    if scored.reward is None:
        raise SchemaError(f"the task cannot be scored: {scored.outcome}")
    return scored.reward


def taskset_class(class_name: str, tasks_file: str | os.PathLike):
    """A ``vf.Taskset`` subclass named ``class_name`` whose tasks are the problems in ``tasks_file`` (JSON lines of
    ``id``, ``question``, ``tests``, ``time_limit_s``), each scored by :func:`score_reply`.

    Example:
        >>> cls = taskset_class("EvolveCoderTaskset", "envs/evolvecoder_round0/evolvecoder_round0/tasks.jsonl")  # doctest: +SKIP
        >>> cls.__name__                                                                                 # doctest: +SKIP
        'EvolveCoderTaskset'
    """
    import verifiers.v1 as vf

    from ..rewards.prompts import SYSTEM_PROMPT

    path = Path(tasks_file)

    class CodeTaskData(vf.TaskData):
        tests: Any = None
        time_limit_s: float | None = None

    class CodeTask(vf.Task[CodeTaskData, vf.State]):
        @property
        def key(self) -> str:  # the problem's id is durable; the default content hash would do too
            return self.data.id or self.hash

        @vf.reward
        async def code_reward(self, task, trace) -> float:
            return await score_reply(trace.last_reply, task.tests, task.time_limit_s)

    class _Taskset(vf.Taskset[CodeTask]):
        def load(self):
            with path.open(encoding="utf-8") as fh:
                for line in fh:
                    row = json.loads(line)
                    data = CodeTaskData(id=row["id"], name=row["id"], prompt=row["question"],
                                        system_prompt=SYSTEM_PROMPT, tests=row["tests"],
                                        time_limit_s=row.get(TIME_LIMIT))  # fmt: skip
                    yield CodeTask(data, self.config.task)

    _Taskset.__name__ = _Taskset.__qualname__ = class_name
    return _Taskset


def build_verifiers_environment(dataset, output_dir: str | os.PathLike, *, name: str = "evolvecoder_env",
                                source: str = "an EvolveCoder round") -> Path:  # fmt: skip
    """Write a verifiers v1 environment package for ``dataset``'s problems and return its folder.

    Args:
        dataset (`datasets.Dataset`): problem rows (``id``, ``question``, ``tests`` or ``inputs``/``outputs``,
            optional ``time_limit_s``), e.g. ``load_round(repo, round=3)``.
        output_dir (`str` or `os.PathLike`): where the package folder ``<name>/`` goes.
        name (`str`, defaults to ``"evolvecoder_env"``): the module name verifiers loads (letters, digits and
            ``_``; no dots).
        source (`str`, *optional*): where the rows come from, for the package's description.

    Returns:
        `Path`: the package folder (``pip install -e`` it, or put it on ``sys.path``).

    Raises:
        ConfigError: ``name`` is not a single importable module name.
        SchemaError: a column the environment reads is missing.

    Example:
        >>> from evolvecoder_datasets.rounds import load_round                                     # doctest: +SKIP
        >>> build_verifiers_environment(load_round("./my-run", round=2), "envs", name="my_round2")  # doctest: +SKIP
        PosixPath('envs/my_round2')
    """
    if not _NAME.match(name):
        raise ConfigError(f"name must be one importable module name (lowercase letters, digits, _), got {name!r}")
    columns = dataset.column_names
    schema.check_columns(columns, [schema.ID, schema.QUESTION], stage="build_verifiers_environment")
    if schema.TESTS not in columns and schema.INPUTS not in columns:
        raise SchemaError(f"build_verifiers_environment needs a {schema.TESTS!r} or {schema.INPUTS!r} column")
    folder = Path(output_dir) / name
    package = folder / name
    package.mkdir(parents=True, exist_ok=True)
    with (package / "tasks.jsonl").open("w", encoding="utf-8") as fh:
        n = 0
        for row in dataset:
            tests = row.get(schema.TESTS)
            if tests is None:
                tests = {"inputs": row[schema.INPUTS], "outputs": row[schema.OUTPUTS]}
            fh.write(json.dumps({"id": row[schema.ID], "question": row[schema.QUESTION], "tests": tests,
                                 TIME_LIMIT: row.get(TIME_LIMIT)}) + "\n")  # fmt: skip
            n += 1
    cls = "".join(part.capitalize() for part in name.split("_") if part) + "Taskset"
    title = name.replace("_", " ")
    (package / "__init__.py").write_text(_INIT.format(title=title, n=n, source=source, name=name, cls=cls),
                                         encoding="utf-8")  # fmt: skip
    (folder / "pyproject.toml").write_text(_PYPROJECT.format(dist=name.replace("_", "-"), title=title, name=name),
                                           encoding="utf-8")  # fmt: skip
    return folder
