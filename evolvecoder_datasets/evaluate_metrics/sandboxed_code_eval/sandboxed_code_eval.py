"""Sandboxed code_eval: the unbiased pass@k of candidate programs, run in the evolvecoder-datasets sandbox.

A drop-in for HF ``code_eval`` that loads offline from this package and never runs model code in the caller's
process. Each candidate runs in a fork server of :class:`evolvecoder_datasets.execution.Sandbox` (bubblewrap or
unshare where available: no network, private ``/tmp``, an unprivileged uid when run as root, rlimits on memory,
files and processes, CPU-time limits per test). Verdicts come from the trusted server, never from the program's
exit code, and ``assert <expr> == <literal>`` tests compare a canonical copy of the value, so ``os._exit(0)``
or an object whose ``__eq__`` always answers True does not pass. ``HF_ALLOW_CODE_EVAL`` is not needed.

Example:
    >>> import evaluate
    >>> from evolvecoder_datasets.evaluate_metrics import sandboxed_code_eval_path
    >>> code_eval = evaluate.load(sandboxed_code_eval_path())
    >>> pass_at_k, results = code_eval.compute(
    ...     predictions=[["def add(a, b):\\n    return a * b", "def add(a, b):\\n    return a + b"]],
    ...     references=["assert add(2, 3) == 5\\nassert add(0, 0) == 0"], k=[1, 2])
    >>> pass_at_k
    {'pass@1': 0.5, 'pass@2': 1.0}
    >>> [(cid, r["passed"], r["statuses"]) for cid, r in results[0]]
    [(0, False, ['fail', 'pass']), (1, True, ['pass', 'pass'])]
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import datasets
import evaluate
import numpy as np

from evolvecoder_datasets.errors import ConfigError
from evolvecoder_datasets.evaluate_metrics.references import split_reference
from evolvecoder_datasets.execution import Job, Sandbox
from evolvecoder_datasets.limits import MODES
from evolvecoder_datasets.metrics import pass_at_k as unbiased_pass_at_k

logger = logging.getLogger(__name__)

_CITATION = """\
@misc{chen2021codex,
      title={Evaluating Large Language Models Trained on Code},
      author={Mark Chen and Jerry Tworek and Heewoo Jun and Qiming Yuan and Henrique Ponde de Oliveira Pinto and
              Jared Kaplan and others},
      year={2021},
      eprint={2107.03374},
      archivePrefix={arXiv},
      primaryClass={cs.LG}
}
"""

_DESCRIPTION = """\
Estimates pass@k of code generations by running each candidate program against its problem's tests in the
evolvecoder-datasets sandbox (forked servers under bubblewrap/unshare, rlimits, CPU-time limits, hardened
comparisons), then applying the unbiased estimator of Chen et al. (2021). Same call and answer as HF code_eval.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list[list[str]]`): per problem, the candidate programs (complete Python sources).
    references (`list[str]`): per problem, its test code: a block of top-level asserts or the repr of a list of
        asserts (each assert becomes its own test), or any other code, run whole as one test (e.g. HumanEval's
        ``check`` function followed by ``check(entry_point)``). An empty reference checks only that the program
        loads.
    k (`int` or `list[int]`, defaults to ``[1, 10, 100]``): the k of pass@k; a k is reported only when every
        problem has at least k candidates, as in code_eval.
    num_workers (`int`, defaults to 4): sandbox fork servers, i.e. candidates run at once.
    timeout (`float`, defaults to 3.0): CPU seconds one test may use (code_eval's is wall seconds per program);
        a wall-clock backstop of ``4 * timeout + 1`` seconds catches programs that sleep.
Returns:
    pass_at_k (`dict[str, float]`): ``{"pass@1": ..., ...}``, each the mean over problems.
    results (`dict[int, list[tuple[int, dict]]]`): per problem index, ``(completion_id, result)`` pairs in
        candidate order; ``result`` has ``task_id``, ``completion_id``, ``passed`` (every test passed),
        ``result`` (``"passed"``, ``"timed out"`` or ``"failed: <status>: <message>"`` for the first test that
        did not pass), ``statuses`` (one per test) and ``infra_error`` (set when the sandbox itself failed).
Examples:
    >>> from evolvecoder_datasets.evaluate_metrics import load_sandboxed_code_eval
    >>> code_eval = load_sandboxed_code_eval()
    >>> scores, _ = code_eval.compute(references=["assert add(2, 3) == 5"],
    ...                               predictions=[["def add(a, b): return a * b", "def add(a, b): return a + b"]],
    ...                               k=[1, 2])
    >>> scores
    {'pass@1': 0.5, 'pass@2': 1.0}
"""

_NO_TESTS = "pass"  # an empty reference: the candidate must still load, as code_eval would run it


def _string_list_feature():
    """``List(Value("string"))`` in datasets >= 4, ``Sequence(Value("string"))`` before."""
    list_type = getattr(datasets, "List", None) or datasets.Sequence
    return list_type(datasets.Value("string"))


def _normalise_ks(k: int | Iterable[int]) -> list[int]:
    ks = [k] if isinstance(k, (int, np.integer)) else list(k)
    for value in ks:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ConfigError(f"every k must be an integer >= 1, got {value!r}")
    return [int(value) for value in ks]


def _verdict(statuses: list[str], messages: list[str], infra_error: str | None) -> str:
    """code_eval's ``result`` string for one candidate."""
    if infra_error is not None:
        return f"failed: sandbox failure: {infra_error}"
    for i, status in enumerate(statuses):
        if status == "timeout":
            return "timed out"
        if status != "pass":
            message = messages[i] if i < len(messages) else ""
            return f"failed: {status}: {message}" if message else f"failed: {status}"
    return "passed"


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class SandboxedCodeEval(evaluate.Metric):
    """``code_eval`` with every candidate run in the evolvecoder-datasets sandbox.

    Args:
        config_name (`str`, *optional*): ``"isolated"`` (the default; a fresh fork of the loaded program per test,
            so tests cannot share state) or ``"fast"`` (a program's tests run in sequence in one process, ~4x
            more executions per second). ``"default"`` means ``"isolated"``.
        mode (`str`, *optional*): the same choice as a keyword, for ``evaluate.load(path, mode="fast")``.
        memory_mb (`int`, defaults to 1024): address-space limit of a candidate process.
        preamble (`str`, *optional*): code run before every candidate (e.g. ``"from typing import List"``).
        isolation (`str`, defaults to ``"auto"``): ``"bwrap"``, ``"unshare"``, ``"none"`` or ``"auto"``.
        **kwargs: the usual ``evaluate.Metric`` arguments (``cache_dir``, ``keep_in_memory``, ...).

    Raises:
        ConfigError: an unknown ``config_name`` or ``mode``, or both given and different.

    Example:
        >>> import evaluate
        >>> from evolvecoder_datasets.evaluate_metrics import sandboxed_code_eval_path
        >>> metric = evaluate.load(sandboxed_code_eval_path(), mode="fast")
        >>> metric.sandbox_mode
        'fast'
        >>> metric.compute(predictions=[["import os\\nos._exit(0)"]], references=["assert False"], k=1)[0]
        {'pass@1': 0.0}
    """

    def __init__(
        self,
        config_name: str | None = None,
        *,
        mode: str | None = None,
        memory_mb: int = 1024,
        preamble: str | None = None,
        isolation: str = "auto",
        **kwargs: Any,
    ) -> None:
        named = None if config_name in (None, "default") else config_name
        if named is not None and named not in MODES:
            raise ConfigError(f"config_name must be one of {('default', *MODES)}, got {config_name!r}")
        if mode is not None and mode not in MODES:
            raise ConfigError(f"mode must be one of {MODES}, got {mode!r}")
        if named is not None and mode is not None and named != mode:
            raise ConfigError(f"config_name={config_name!r} and mode={mode!r} disagree")
        if int(memory_mb) < 64:
            raise ConfigError(f"memory_mb must be >= 64, got {memory_mb!r}")
        self.sandbox_mode = mode or named or "isolated"
        self.memory_mb = int(memory_mb)
        self.preamble = preamble
        self.isolation = isolation
        super().__init__(config_name=config_name, **kwargs)

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": _string_list_feature(), "references": datasets.Value("string")}
            ),
            homepage="https://github.com/evolvecoder/evolvecoder-datasets",
            codebase_urls=["https://github.com/evolvecoder/evolvecoder-datasets"],
            reference_urls=["https://arxiv.org/abs/2107.03374"],
            license="Apache-2.0",
        )

    def _compute(
        self,
        predictions: list[list[str]],
        references: list[str],
        k: int | Iterable[int] = (1, 10, 100),
        num_workers: int = 4,
        timeout: float = 3.0,
    ) -> tuple[dict[str, float], dict[int, list[tuple[int, dict[str, Any]]]]]:
        ks = _normalise_ks(k)
        if len(predictions) != len(references):
            raise ConfigError(f"{len(predictions)} prediction lists for {len(references)} references")
        if num_workers < 1 or timeout <= 0:
            raise ConfigError("num_workers must be >= 1 and timeout > 0")

        tests = [split_reference(reference) or [_NO_TESTS] for reference in references]
        slots = [
            (task_id, completion_id)
            for task_id, cands in enumerate(predictions)
            for completion_id in range(len(cands))
        ]
        jobs = [
            Job(predictions[task_id][completion_id], tests=tests[task_id]) for task_id, completion_id in slots
        ]
        reports = []
        if jobs:
            workers = min(int(num_workers), len(jobs))
            with Sandbox(
                workers=workers,
                timeout_s=float(timeout),
                memory_mb=self.memory_mb,
                mode=self.sandbox_mode,
                isolation=self.isolation,
                preamble=self.preamble,
            ) as sandbox:
                reports = sandbox.run_many(jobs)

        results: dict[int, list[tuple[int, dict[str, Any]]]] = {
            task_id: [] for task_id in range(len(predictions))
        }
        correct = np.zeros(len(predictions), dtype=np.int64)
        infra_failures = 0
        for (task_id, completion_id), report in zip(slots, reports):
            passed = report.infra_error is None and report.all_passed
            correct[task_id] += passed
            infra_failures += report.infra_error is not None
            results[task_id].append((completion_id, {
                "task_id": task_id,
                "completion_id": completion_id,
                "passed": passed,
                "result": _verdict(report.statuses, report.messages, report.infra_error),
                "statuses": list(report.statuses),
                "infra_error": report.infra_error,
            }))  # fmt: skip
        if infra_failures:
            logger.warning("the sandbox itself failed on %d of %d candidates; they count as not passing",
                           infra_failures, len(jobs))  # fmt: skip

        total = np.array([len(cands) for cands in predictions], dtype=np.int64)
        scores = {
            f"pass@{value}": float(unbiased_pass_at_k(total, correct, value).mean())
            for value in ks
            if total.size and (total >= value).all()
        }
        return scores, results
