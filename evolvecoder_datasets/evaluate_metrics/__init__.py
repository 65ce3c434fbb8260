"""``evaluate`` metrics shipped inside the package, loadable offline from their folder (no Hub).

``sandboxed_code_eval`` is a drop-in for HF ``code_eval``: the same ``compute(predictions, references, k,
num_workers, timeout)`` call and the same ``(pass_at_k, results)`` answer, but the candidate programs run in this
package's sandbox (:class:`evolvecoder_datasets.execution.Sandbox`) instead of in threads of the caller, and
``HF_ALLOW_CODE_EVAL`` is not needed. ``evaluate`` itself is imported only when a metric is loaded.

Example:
    >>> from evolvecoder_datasets.evaluate_metrics import load_sandboxed_code_eval
    >>> code_eval = load_sandboxed_code_eval()
    >>> pass_at_k, results = code_eval.compute(
    ...     predictions=[["def add(a, b):\\n    return a * b", "def add(a, b):\\n    return a + b"]],
    ...     references=["assert add(2, 3) == 5"], k=[1, 2])
    >>> pass_at_k
    {'pass@1': 0.5, 'pass@2': 1.0}
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._deps import require
from .references import split_reference

__all__ = ["load_sandboxed_code_eval", "sandboxed_code_eval_path", "split_reference"]


def sandboxed_code_eval_path() -> str:
    """The folder of the ``sandboxed_code_eval`` metric, the argument ``evaluate.load`` takes.

    Returns:
        `str`: an absolute path to a folder holding ``sandboxed_code_eval.py``.

    Example:
        >>> import evaluate
        >>> from evolvecoder_datasets.evaluate_metrics import sandboxed_code_eval_path
        >>> code_eval = evaluate.load(sandboxed_code_eval_path(), config_name="fast")
        >>> code_eval.compute(predictions=[["x = 1"]], references=["assert x == 1"], k=[1])[0]
        {'pass@1': 1.0}
    """
    return str(Path(__file__).resolve().parent / "sandboxed_code_eval")


def load_sandboxed_code_eval(**kwargs: Any):
    """Load the ``sandboxed_code_eval`` metric with ``evaluate.load``, from the package (works offline).

    Args:
        **kwargs: passed to ``evaluate.load``: ``config_name`` (``"isolated"``, the default, forks a fresh copy
            of the loaded program per test; ``"fast"`` runs a program's tests in sequence in one process),
            ``cache_dir``, ``keep_in_memory``, ..., and the metric's own ``mode``, ``memory_mb``, ``preamble``
            and ``isolation`` (see ``SandboxedCodeEval``).

    Returns:
        `evaluate.Metric`: the metric; call ``.compute(predictions=..., references=..., k=...)``.

    Raises:
        MissingExtraError: ``evaluate`` is not installed (``pip install 'evolvecoder-datasets[all]'``).
        ConfigError: an unknown ``config_name``/``mode``, or both given and different.

    Example:
        >>> from evolvecoder_datasets.evaluate_metrics import load_sandboxed_code_eval
        >>> code_eval = load_sandboxed_code_eval(config_name="fast", memory_mb=512)
        >>> scores, results = code_eval.compute(predictions=[["def f():\\n    return 2"]],
        ...                                     references=["assert f() == 1"], k=[1])
        >>> scores, results[0][0][1]["passed"]
        ({'pass@1': 0.0}, False)
    """
    evaluate = require("evaluate", extra="all", feature="the sandboxed code_eval metric")
    return evaluate.load(sandboxed_code_eval_path(), **kwargs)
