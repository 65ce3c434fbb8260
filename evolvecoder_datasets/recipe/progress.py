"""One line per step of a recipe run on stderr (stage, model round, oracle, publish), with the run's clock.

A run used to be silent for minutes (sampling, the model round, the fidelity oracle) and, from Python, to print
every ``datasets`` bar underneath (~30 for a four-problem run). Now each step says when it starts and how long it
took, and the bars underneath are off while the run lasts. The switch is the one ``datasets`` users know:
after ``datasets.disable_progress_bars()`` a run prints nothing; ``run_recipe(config, progress=True)`` (the CLI and
the demo) prints the lines whatever the switch says.

Example:
    >>> import io
    >>> out = io.StringIO()
    >>> with run_progress(True, stream=out):
    ...     with stepping("round 0: running the pool"):
    ...         pass
    >>> out.getvalue().splitlines()[0][-27:]
    'round 0: running the pool …'
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from typing import TextIO

from .._deps import datasets_bars_off

__all__ = ["describe_stage", "on_interrupt", "run_progress", "step", "stepping"]

_STAGES = {
    "dedup": "deduplicating the seeds (sentence embeddings)",
    "references": "the seeds' reference solutions",
    "domains": "each problem's input domain",
    "refine": "problems from the seeds (refine, where the config asks the test writer)",
    "sample": "sampling solutions (pool models)",
    "execute": "round 0: every program of the pool on every test",
    "final": "the final filter",
}


class _Lines:
    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self.start = time.monotonic()

    def write(self, text: str) -> None:
        elapsed = int(time.monotonic() - self.start)
        stream = self.stream or sys.stderr
        print(f"[{elapsed // 60:d}:{elapsed % 60:02d}] {text}", file=stream, flush=True)


_active: list[_Lines] = []


def describe_stage(name: str) -> str:
    """What a checkpointed stage does, from its folder name (``03_execute``, ``04_round1``).

    Example:
        >>> describe_stage("04_round1"), describe_stage("02_sample")
        ('round 1: new tests (test writer and search)', 'sampling solutions (pool models)')
    """
    stem = name.split("_", 1)[-1]
    if stem.startswith("round") and stem[5:].isdigit():
        return f"round {stem[5:]}: new tests (test writer and search)"
    return _STAGES.get(stem, stem.replace("_", " "))


_interrupts: list[int] = []  # Ctrl-Cs seen by on_interrupt and not yet honoured


def on_interrupt(signum: int, frame) -> None:
    """The CLI's SIGINT handler: raises ``KeyboardInterrupt`` as Python's own does, and keeps a note of it, so a
    Ctrl-C that lands in a finalizer (``Dataset.__del__``: Python prints the exception there and goes on) still
    stops the run, at its next step line, instead of being lost while the run finishes.

    Example:
        >>> import signal
        >>> previous = signal.signal(signal.SIGINT, on_interrupt)   # as `evolvecoder-datasets run` does
        >>> _ = signal.signal(signal.SIGINT, previous)
    """
    _interrupts.append(signum)
    raise KeyboardInterrupt


def step(text: str) -> None:
    """One line of the running recipe's progress (nothing outside a run, or in a quiet one). A Ctrl-C that
    :func:`on_interrupt` saw and that did not stop the run (it was swallowed in a finalizer) stops it here.

    Example:
        >>> step("publishing round 1")   # prints only inside run_progress(True)
    """
    if _interrupts:
        _interrupts.clear()
        raise KeyboardInterrupt
    if _active:
        _active[-1].write(text)


@contextlib.contextmanager
def stepping(text: str) -> Iterator[None]:
    """A step's start line, then its end line with the seconds it took (or that it failed).

    Example:
        >>> with stepping("the fidelity oracle"):
        ...     pass
    """
    step(f"{text} …")
    start = time.monotonic()
    try:
        yield
    except BaseException:
        _interrupts.clear()  # a run already ending: an interrupt it saw is honoured by that
        step(f"{text}: stopped after {time.monotonic() - start:.0f} s")
        raise
    step(f"{text}: done in {time.monotonic() - start:.0f} s")


@contextlib.contextmanager
def run_progress(enabled: bool | None = None, *, library_bars: bool = False,
                 stream: TextIO | None = None) -> Iterator[bool]:
    """Progress lines for the run inside the block; ``datasets``' own bars off meanwhile unless ``library_bars``.

    Args:
        enabled (`bool`, *optional*): print the lines; by default, where ``datasets``' progress bars are on.
        library_bars (`bool`, defaults to `False`): keep ``datasets``' bars too (the CLI's ``--verbose``).
        stream (`TextIO`, *optional*): where the lines go (default ``sys.stderr``).

    Example:
        >>> with run_progress(False):
        ...     step("not shown")
    """
    with datasets_bars_off(not library_bars) as bars_on:
        shown = bars_on if enabled is None else bool(enabled)
        if shown:
            _active.append(_Lines(stream))
        try:
            yield shown
        finally:
            if shown:
                _active.pop()
