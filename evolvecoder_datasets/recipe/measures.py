"""The measurements behind a round's statistics: the steps that run programs to measure the suites.

The pipeline calls them explicitly, each round, before :func:`~evolvecoder_datasets.recipe.stats.round_stats` counts
(the statistics themselves run nothing). Two steps execute programs:

- **reference verdicts** (:func:`reference_passes`): the reference on each test it has not been judged on earlier
  in the run, for the mutation score (a mutant counts as killed only by a test the reference passes). The
  reference runs once per test over the whole run, so this cost grows with the tests, not with rounds x tests. It
  runs where the run's :class:`~evolvecoder_datasets.distributed.executor.Executor` says: here or as Ray tasks.
- **fidelity** (:class:`RunMeasures`): the oracle of :mod:`~evolvecoder_datasets.recipe.fidelity`, built once from
  round 0 (or read back from ``<output_dir>/stages/fidelity_oracle.json`` where this run's round 0 saved it), then
  each round's suite judged against it (the reference's rewrites run on the tests they have not met yet). Always on
  this machine's execution service: a measurement every run redoes, never a reason to start a cluster.

What they return is plain data, :class:`RoundMeasures`.

Example:
    >>> from evolvecoder_datasets.recipe import demo_config
    >>> from evolvecoder_datasets.recipe.measures import RunMeasures
    >>> measures = RunMeasures(demo_config("runs/demo"))
    >>> measured = measures.round(round0, 0, known={}, key="k")   # doctest: +SKIP
    >>> sorted(measured.fidelity["suite"])[:3]                    # doctest: +SKIP
    ['fnr', 'fpr', 'right']
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import schema
from ..keys import chain, config_digest
from ..stages.sample import MUTANT_MODEL

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

    from ..distributed.executor import Executor
    from ..stages.execute import ExecuteConfig
    from .config import RecipeConfig
    from .fidelity import FidelityTracker

__all__ = ["RoundMeasures", "RunMeasures", "prepared_oracle", "reference_passes"]


@dataclass
class RoundMeasures:
    """What one round's measurements found: the input of :func:`~evolvecoder_datasets.recipe.stats.round_stats`.

    Attributes:
        reference_passes (`dict[str, dict[str, bool]]`): problem id -> test -> whether the reference passes it, for
            the tests of the problems with mutants that were judged this round (a stdin/stdout problem's cases are
            all ``True``: its reference passed every case before any became one).
        fidelity (`dict`, *optional*): the suite's fidelity report against the oracle
            (:meth:`~evolvecoder_datasets.recipe.fidelity.FidelityTracker.round_report`); ``None`` when the run
            measures no fidelity.
        fidelity_rules (`dict`, *optional*): for ``main``, the paper's rule and the reduced suite side by side
            (:meth:`~evolvecoder_datasets.recipe.fidelity.FidelityTracker.final_rules`).

    Example:
        >>> RoundMeasures(reference_passes={"P_1": {"assert f(1) == 2": True}}).fidelity is None
        True
    """

    reference_passes: dict[str, dict[str, bool]] = field(default_factory=dict)
    fidelity: dict[str, Any] | None = None
    fidelity_rules: dict[str, Any] | None = None


def _cases(ds: Dataset) -> list[list[str]]:
    """Each problem's cases: its asserts, or a stdin/stdout problem's inputs."""
    tests = ds[schema.TESTS]
    inputs = ds[schema.INPUTS] if schema.INPUTS in ds.column_names else [None] * len(tests)
    return [list(t) if t else list(i or []) for t, i in zip(tests, inputs)]


def reference_passes(ds: Dataset, known: Mapping[str, Mapping[str, bool]], execute: ExecuteConfig,
                     executor: Executor | None = None) -> dict[str, dict[str, bool]]:
    """The reference's verdict on each test of a problem with mutants that ``known`` has no verdict for.

    Args:
        ds (`datasets.Dataset`): the round's problems (``id``, ``solutions``, ``tests``, ``reference_solutions``;
            ``inputs`` for stdin/stdout problems).
        known (`Mapping`): problem id -> test -> verdict, from earlier rounds (not changed).
        execute (`ExecuteConfig`): the sandbox settings the references run under.
        executor (`Executor`, *optional*): where they run (defaults to this machine).

    Returns:
        `dict[str, dict[str, bool]]`: problem id -> test -> verdict, for the tests judged now; a stdin/stdout problem
        (no asserts) gets every case as ``True`` without a run.

    Example:
        >>> from datasets import Dataset
        >>> from evolvecoder_datasets.stages.execute import ExecuteConfig
        >>> ds = Dataset.from_dict({"id": ["S_1"], "tests": [[]], "inputs": [["1\\n", "2\\n"]],
        ...                         "solutions": [[{"model": "mutant", "code": "print(0)"}]],
        ...                         "reference_solutions": [["print(input())"]]})
        >>> reference_passes(ds, {}, ExecuteConfig())
        {'S_1': {'1\\n': True, '2\\n': True}}
    """
    from ..distributed.executor import Executor

    rows = [i for i, sols in enumerate(ds[schema.SOLUTIONS]) if any(s["model"] == MUTANT_MODEL for s in sols)]
    if not rows:
        return {}
    every = _cases(ds)
    out: dict[str, dict[str, bool]] = {}
    jobs, owners = [], []
    for i in rows:
        row = ds[i]
        pid, suite = str(row[schema.ID]), row[schema.TESTS]
        if not suite:  # a stdin/stdout problem: its reference passed every case before any became one
            out.setdefault(pid, {}).update((case, True) for case in every[i])
            continue
        seen = known.get(pid, {})
        new = [t for t in dict.fromkeys(suite) if t not in seen]
        if new:
            jobs.append((row[schema.REFERENCE_SOLUTIONS][0], new))
            owners.append(pid)
    if jobs:
        for pid, (_, new), passed in zip(owners, jobs, _run_references(jobs, execute, executor or Executor())):
            out.setdefault(pid, {}).update(zip(new, passed))
    return out


def _run_references(jobs: list[tuple[str, list[str]]], execute: ExecuteConfig, executor: Executor) -> list[list[bool]]:
    """Each reference's verdict on its tests, where the executor runs the run's work."""
    from datasets import Dataset

    from ..stages.references import reference_verdicts

    ds = Dataset.from_dict({schema.REFERENCE: [j[0] for j in jobs], schema.TESTS: [j[1] for j in jobs]})
    done = executor.map(ds, reference_verdicts, fn_kwargs={"config": execute}, desc="reference verdicts")
    return [list(map(bool, row)) for row in done[schema.REFERENCE_PASSED]]


class RunMeasures:
    """The measurements of one run, round after round (it keeps the fidelity oracle built at round 0).

    Args:
        config (`RecipeConfig`): the run (``mutants``, ``fidelity``, ``execute``, ``output_dir``).
        executor (`Executor`, *optional*): where the reference verdicts run (defaults to this machine).

    Example:
        >>> from evolvecoder_datasets.recipe import demo_config
        >>> RunMeasures(demo_config("runs/demo")).oracle is None
        True
    """

    def __init__(self, config: RecipeConfig, executor: Executor | None = None) -> None:
        self.config = config
        self.executor = executor
        self.oracle: FidelityTracker | None = None

    def round(self, ds: Dataset, r: int, *, known: Mapping[str, Mapping[str, bool]], key: str) -> RoundMeasures:
        """Round ``r``'s measurements: the reference verdicts on the tests ``known`` lacks (with mutants), then the
        fidelity report (the oracle is built, or read back, on the first call).

        Args:
            ds (`datasets.Dataset`): the round's problems with pool and pass matrix.
            r (`int`): the round.
            known (`Mapping`): problem id -> test -> the reference's verdict from earlier rounds
                (:attr:`~evolvecoder_datasets.recipe.stats.RunHistory.reference_passes`).
            key (`str`): the run key of the round (names the saved oracle).

        Example:
            >>> measured = RunMeasures(config).round(round0, 0, known={}, key="k")   # doctest: +SKIP
        """
        passes = (reference_passes(ds, known, self.config.execute, self.executor) if self.config.mutants else {})
        return RoundMeasures(reference_passes=passes, fidelity=self._fidelity(ds, r, key=key))

    def final(self, last: Dataset, final: Dataset) -> RoundMeasures:
        """The measurements of ``main``: the fidelity of the published suites and of both reduction rules (no
        reference runs: the rounds judged every test ``main`` keeps).

        Example:
            >>> measured = measures.final(last_round, final)   # doctest: +SKIP
        """
        if not self.config.fidelity.enabled:
            return RoundMeasures()
        from ..execution.sandbox import jobs_here

        with jobs_here():  # as each round's (see _fidelity)
            tracker = self._tracker(final, None)
            report = tracker.round_report(final, "final")
            rules = tracker.final_rules(last, final)
        return RoundMeasures(fidelity=report, fidelity_rules=rules)

    def _tracker(self, ds: Dataset, key: str | None) -> FidelityTracker:
        if self.oracle is None:
            self.oracle = prepared_oracle(ds, self.config, key)
        return self.oracle

    def _fidelity(self, ds: Dataset, r: int | str, key: str | None = None) -> dict[str, Any] | None:
        if not self.config.fidelity.enabled:
            return None
        from ..execution.sandbox import jobs_here

        # A measurement, redone by every run (a rerun with every stage stored too): on this machine's execution
        # service, never a reason to start a cluster.
        with jobs_here():
            return self._tracker(ds, key).round_report(ds, r)


def prepared_oracle(ds: Dataset, config: RecipeConfig, key: str | None) -> FidelityTracker:
    """The fidelity oracle of round 0: read back where this run's round 0 (same ``key``) saved it, else built and
    saved in ``<output_dir>/stages/fidelity_oracle.json`` (an interrupted run keeps it; minutes at scale). A ``key``
    of ``None`` builds it without saving.

    Example:
        >>> tracker = prepared_oracle(round0, config, key)   # doctest: +SKIP
        >>> tracker.summary["pool"]                          # doctest: +SKIP
        {'right': 412, 'wrong': 2410, 'unlabelled': 0}
    """
    from .fidelity import FidelityTracker
    from .progress import step, stepping

    tracker = FidelityTracker(config)
    path = Path(config.output_dir) / "stages" / "fidelity_oracle.json"
    digest = chain(key, "fidelity", config_digest(config.fidelity)) if key else None
    if digest and tracker.load(path, digest):
        step("the fidelity oracle: saved by an earlier run, reused")
        return tracker
    with stepping("the fidelity oracle: reference-valued inputs, kept apart from the tests"):
        tracker.prepare(ds)
    if digest:
        tracker.save(path, digest)
    return tracker
