"""Shared pytest set-up for the tests and the package doctests: every cache points into a temporary folder.

Slow tests run with ``--run-slow`` (CI sets it); ``gpu`` tests run only where CUDA is visible.
"""

from __future__ import annotations

import os
import tempfile

import pytest

# Caches must point away from ~/.cache before `datasets` is imported (it reads them at import time).
_CACHE_ROOT = tempfile.mkdtemp(prefix="ecd-test-hf-")
os.environ["HF_HOME"] = _CACHE_ROOT
os.environ["HF_DATASETS_CACHE"] = os.path.join(_CACHE_ROOT, "datasets")
os.environ["HF_HUB_CACHE"] = os.path.join(_CACHE_ROOT, "hub")
# Fidelity oracles are kept across the session's runs (as a user's are across theirs), never across sessions: a
# changed oracle builder is always exercised by the next session.
os.environ["EVOLVECODER_ORACLE_CACHE"] = os.path.join(_CACHE_ROOT, "oracles")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", default=False, help="also run tests marked slow")


def _has_cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def pytest_collection_modifyitems(config, items):
    run_slow = config.getoption("--run-slow")
    skip_slow = pytest.mark.skip(reason="slow: run with --run-slow (CI does)")
    gpu_items = [item for item in items if "gpu" in item.keywords]
    skip_gpu = pytest.mark.skip(reason="needs a CUDA device") if gpu_items and not _has_cuda() else None
    for item in items:
        if "slow" in item.keywords and not run_slow:
            item.add_marker(skip_slow)
        if "gpu" in item.keywords and skip_gpu is not None:
            item.add_marker(skip_gpu)
