"""verl's conventions: a ``compute_score`` for ``custom_reward_function`` and a round in verl's parquet rows.

verl 0.9 loads ``reward.custom_reward_function.path`` as a standalone file (``verl.utils.import_utils.load_module``),
so this module uses absolute imports only and works whether it is imported or loaded by its path (print the path
with ``python -c "import evolvecoder_datasets.integrations.verl as m; print(m.__file__)"``). Its reward manager calls
``compute_score(data_source=, solution_str=, ground_truth=, extra_info=, **reward_kwargs)`` once per sample, from
threads; :func:`compute_score` answers a float: ``code_reward``'s value in this process's sandbox, or the reward
service's when ``reward_kwargs`` (or ``$EVOLVECODER_REWARD_URL``) names one.

verl has no way to leave a sample out (``None`` and NaN break its reward tensors), so a sandbox failure raises
:class:`~evolvecoder_datasets.errors.SandboxCrashed` after a retry instead of scoring 0.

:func:`to_verl` turns problem rows into verl's RL rows: ``data_source``, ``prompt`` (a message list: verl's
``RLHFDataset`` drops rows whose prompt is not one), ``ability``, ``reward_model{style, ground_truth}`` (the tests as
JSON text, one Arrow type whatever the row's test kind) and ``extra_info{split, index, id, time_limit_s}``.

Example:
    >>> from datasets import Dataset
    >>> from evolvecoder_datasets.integrations.verl import compute_score, to_verl
    >>> row = to_verl(Dataset.from_dict({"id": ["P_1"], "question": ["Set x to 1."], "tests": [["assert x == 1"]]}))[0]
    >>> row["reward_model"]["ground_truth"], row["prompt"][-1]["role"]
    ('["assert x == 1"]', 'user')
    >>> compute_score(row["data_source"], "```python\\nx = 1\\n```", row["reward_model"]["ground_truth"],
    ...               row["extra_info"])
    1.0
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

from evolvecoder_datasets import schema
from evolvecoder_datasets.errors import SandboxCrashed, SchemaError
from evolvecoder_datasets.limits import SandboxSettings
from evolvecoder_datasets.schema import TIME_LIMIT

__all__ = ["DATA_SOURCE", "compute_score", "export_verl_parquet", "to_verl"]

#: The ``data_source`` of exported rows (verl routes default scorers by it; ours ignores it).
DATA_SOURCE = "evolvecoder"

_REWARDS: dict[tuple, Any] = {}


def _tests(ground_truth: Any) -> Any:
    """The row's tests from ``ground_truth``: JSON text, or the list/dict itself (numpy arrays from parquet too)."""
    if isinstance(ground_truth, (bytes, str)):
        try:
            ground_truth = json.loads(ground_truth)
        except ValueError:
            raise SchemaError(f"ground_truth is not JSON: {str(ground_truth)[:80]!r}") from None
    if hasattr(ground_truth, "tolist"):
        ground_truth = ground_truth.tolist()
    if isinstance(ground_truth, dict) and "tests" in ground_truth:
        ground_truth = ground_truth["tests"]
    if isinstance(ground_truth, dict):  # the cases as lists; a checker, language or tolerance beside them as is
        return {k: list(v.tolist() if hasattr(v, "tolist") else v) if k in ("inputs", "outputs") else v
                for k, v in ground_truth.items()}  # fmt: skip
    return list(ground_truth)


def _reward(kind: str, mode: str, timeout_s: float, workers: int | None):
    from evolvecoder_datasets.rewards import make_code_reward

    key = (kind, mode, timeout_s, workers)
    if key not in _REWARDS:
        _REWARDS[key] = make_code_reward(kind=kind, mode=mode, timeout_s=timeout_s, workers=workers)
    return _REWARDS[key]


def compute_score(data_source: str | None = None, solution_str: str = "", ground_truth: Any = None,
                  extra_info: dict | None = None, *, url: str | None = None, token: str | None = None,
                  kind: str = "binary", mode: str = SandboxSettings.mode, timeout_s: float = SandboxSettings.timeout_s,
                  workers: int | None = None,
                  **_: Any) -> float:  # fmt: skip
    """The reward of one response, in verl's ``custom_reward_function`` convention.

    Args:
        data_source (`str`, *optional*): the row's ``data_source`` (unused).
        solution_str (`str`): the decoded response.
        ground_truth: the row's ``reward_model.ground_truth`` (the tests as JSON text, as :func:`to_verl` writes).
        extra_info (`dict`, *optional*): the row's ``extra_info``; its ``time_limit_s`` is the calibrated limit.
        url (`str`, *optional*): a reward service (``evolvecoder-datasets serve``); defaults to
            ``$EVOLVECODER_REWARD_URL``, else the sandbox of this process.
        token (`str`, *optional*): the service's token; defaults to ``$EVOLVECODER_REWARD_TOKEN``.
        kind (`str`, defaults to ``"binary"``): ``"binary"`` (``code_reward``) or ``"pass_rate"``.
        mode, timeout_s, workers: the in-process sandbox's settings (as ``make_code_reward``'s; their defaults are
            :class:`~evolvecoder_datasets.limits.SandboxSettings`'s).
        **_: what else verl passes (``reward_router_address``, ...), ignored.

    Returns:
        `float`: the reward.

    Raises:
        SandboxCrashed: the sandbox failed on this response (verl cannot leave it out; 0 would be a lie).
        SchemaError: ``ground_truth`` holds no tests.

    Example:
        >>> compute_score("evolvecoder", "def f():\\n    return 2", '["assert f() == 2"]', {})
        1.0
    """
    tests = _tests(ground_truth)
    limit = (extra_info or {}).get(TIME_LIMIT)
    limit = None if limit is None or math.isnan(float(limit)) else float(limit)  # NaN: pandas' missing value
    url = url or os.environ.get("EVOLVECODER_REWARD_URL")
    if url:
        from evolvecoder_datasets.integrations.client import RewardClient

        return RewardClient(url, token=token).score([solution_str], tests=[tests], time_limit_s=[limit],
                                                    kind=kind)[0]  # fmt: skip
    reward = _reward(kind, mode, timeout_s, workers)
    for _attempt in range(2):  # sandbox failures are not cached: a second try reruns the job
        scored = reward.score_details([solution_str], tests=[tests], **{TIME_LIMIT: [limit]})[0]
        if not scored.infra:
            if scored.reward is None:
                raise SchemaError(f"the row has no tests ({scored.outcome}); verl cannot leave a sample out")
            return scored.reward
    raise SandboxCrashed(f"the sandbox failed on this response twice: {scored.outcome}")


def to_verl(dataset, *, data_source: str = DATA_SOURCE, ability: str = "code", split: str = "train",
            system_prompt: str | None = None, num_proc: int | None = None):  # fmt: skip
    """Problem rows (``id``, ``question``, ``tests``, optional ``time_limit_s``) as verl's RL rows.

    Args:
        dataset (`datasets.Dataset`): a round's rows (e.g. ``load_round(repo, round=3)``).
        data_source (`str`, defaults to :data:`DATA_SOURCE`): the ``data_source`` column.
        ability (`str`, defaults to ``"code"``): the ``ability`` column.
        split (`str`, defaults to ``"train"``): written to ``extra_info.split``.
        system_prompt (`str`, *optional*): a system message (default: the rewards' ``SYSTEM_PROMPT``).
        num_proc (`int`, *optional*): processes for ``map``.

    Returns:
        `datasets.Dataset` with exactly ``data_source``, ``prompt``, ``ability``, ``reward_model``, ``extra_info``.

    Raises:
        SchemaError: a column the export reads is missing.

    Example:
        >>> from datasets import Dataset
        >>> to_verl(Dataset.from_dict({"id": ["P_1"], "question": ["q"], "tests": [["assert True"]]})).column_names
        ['data_source', 'prompt', 'ability', 'reward_model', 'extra_info']
    """
    from evolvecoder_datasets.rewards.prompts import SYSTEM_PROMPT, build_prompts

    schema.check_columns(dataset.column_names, [schema.ID, schema.QUESTION], stage="to_verl")
    if schema.TESTS not in dataset.column_names and schema.INPUTS not in dataset.column_names:
        raise SchemaError(f"to_verl needs a {schema.TESTS!r} or {schema.INPUTS!r} column")
    system = SYSTEM_PROMPT if system_prompt is None else system_prompt

    def rows(batch: dict[str, list], indices: list[int]) -> dict[str, list]:
        n = len(batch[schema.ID])
        tests = batch.get(schema.TESTS) or [None] * n
        truths = []
        for i in range(n):
            value = tests[i]
            if not value and batch.get(schema.INPUTS) and batch[schema.INPUTS][i]:  # stdin/stdout cases instead
                value = {"inputs": batch[schema.INPUTS][i], "outputs": batch[schema.OUTPUTS][i]}
                for key in (schema.CHECKER, schema.LANGUAGE, schema.FLOAT_TOL):  # how the row is judged, if not default
                    if batch.get(key) is not None and batch[key][i] is not None:
                        value[key] = batch[key][i]
            truths.append(json.dumps(value))
        limits = batch.get(TIME_LIMIT) or [None] * n
        return {
            "data_source": [data_source] * n,
            "prompt": build_prompts(batch, system_prompt=system)["prompt"],
            "ability": [ability] * n,
            "reward_model": [{"style": "rule", "ground_truth": truth} for truth in truths],
            "extra_info": [{"split": split, "index": index, "id": row_id, TIME_LIMIT: limit}
                           for index, row_id, limit in zip(indices, batch[schema.ID], limits)],  # fmt: skip
        }

    return dataset.map(rows, batched=True, with_indices=True, remove_columns=dataset.column_names,
                       num_proc=num_proc, desc="verl rows")  # fmt: skip


def export_verl_parquet(dataset, path: str | os.PathLike, **kwargs: Any) -> str:
    """Write :func:`to_verl`'s rows to one parquet file (what ``data.train_files`` names) and return its path.

    Args:
        dataset (`datasets.Dataset`): a round's rows.
        path (`str` or `os.PathLike`): the parquet file to write.
        **kwargs: :func:`to_verl`'s options.

    Example:
        >>> from evolvecoder_datasets.rounds import load_round                               # doctest: +SKIP
        >>> export_verl_parquet(load_round("./my-run", round=2), "data/train.parquet")      # doctest: +SKIP
        'data/train.parquet'
    """
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    to_verl(dataset, **kwargs).to_parquet(str(path))
    return str(path)
