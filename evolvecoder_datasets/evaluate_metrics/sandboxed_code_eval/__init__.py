"""The ``sandboxed_code_eval`` metric folder: load it with ``evaluate.load`` on this folder's path.

This ``__init__`` makes the folder a package so the metric script ships in the wheel; it imports nothing, so
``evaluate`` stays unimported until the metric is loaded (see
:func:`evolvecoder_datasets.evaluate_metrics.load_sandboxed_code_eval`).
"""

__all__: list[str] = []  # nothing is exported here: import the modules themselves
