"""Round statistics only count (issue 39): ``recipe/stats.py`` imports and calls no execution code, and counts what
``recipe/measures.py`` measured.

- **No execution imports.** ``stats.py`` is read with ``ast``: none of its imports (at module level or inside a
  function; those under ``if TYPE_CHECKING:`` are left out, as in ``tests/test_import_graph.py``) names the sandbox,
  the Ray placement, the reference runner, the oracle builders or the measuring modules, and no name it uses is one
  of their entry points.
- **Counted from what is handed in.** :func:`round_stats` and :func:`final_stats` run on a small dataset with the
  measurements passed in, with every way to run a program replaced by one that fails the test, and give the
  figures the rows and measurements say.
- **Measured once.** :func:`~evolvecoder_datasets.recipe.measures.reference_passes` sends the executor only the
  tests the run has no verdict for.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest
from datasets import Dataset

from evolvecoder_datasets import schema
from evolvecoder_datasets.recipe import demo_config
from evolvecoder_datasets.recipe.measures import RoundMeasures, reference_passes
from evolvecoder_datasets.recipe.stats import RunHistory, final_stats, round_stats
from evolvecoder_datasets.stages.execute import ExecuteConfig

STATS = Path(__file__).resolve().parents[2] / "evolvecoder_datasets" / "recipe" / "stats.py"

#: Modules whose import would let the statistics run programs (a prefix covers its submodules).
FORBIDDEN_MODULES = (
    "evolvecoder_datasets.execution",
    "evolvecoder_datasets.distributed",
    "evolvecoder_datasets.stages.references",
    "evolvecoder_datasets.stages.execute",
    "evolvecoder_datasets.search.oracle",
    "evolvecoder_datasets.search.stdio_oracle",
    "evolvecoder_datasets.recipe.fidelity",
    "evolvecoder_datasets.recipe.measures",
)
#: Entry points of those modules; the statistics use none of these names (``reference_passes`` is also the
#: history's attribute, so the import check covers that function).
FORBIDDEN_NAMES = {"Sandbox", "shared_sandbox", "jobs_here", "map_shards", "execute_on_ray_nodes", "Executor",
                   "reference_verdicts", "build_oracles", "label_programs", "FidelityTracker",
                   "RunMeasures", "prepared_oracle", "on_ray", "run_many"}


def _imports(path: Path) -> list[tuple[int, str]]:
    """``(line, absolute module)`` of each import of ``path`` outside ``if TYPE_CHECKING:`` blocks (``from a import
    b`` gives ``a.b`` and ``a``, so a submodule imported by name counts too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    hidden = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
              for n in ast.walk(node)}
    package = ["evolvecoder_datasets", "recipe"]
    found = []
    for node in ast.walk(tree):
        if id(node) in hidden:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else node.module or ""
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{a.name}") for a in node.names]
    return found


def _forbidden(module: str) -> bool:
    return any(module == f or module.startswith(f + ".") for f in FORBIDDEN_MODULES)


def test_the_reader_resolves_relative_imports_and_skips_type_checking_blocks(tmp_path):
    source = tmp_path / "stats.py"
    source.write_text("from typing import TYPE_CHECKING\nfrom ..execution import Sandbox\nif TYPE_CHECKING:\n"
                      "    from .measures import RoundMeasures\ndef f():\n    from ..distributed import map_shards\n")
    modules = [m for _, m in _imports(source)]
    assert "evolvecoder_datasets.execution" in modules and "evolvecoder_datasets.distributed.map_shards" in modules
    assert not any("measures" in m for m in modules)
    assert [m for m in modules if _forbidden(m)] == ["evolvecoder_datasets.execution",
                                                     "evolvecoder_datasets.execution.Sandbox",
                                                     "evolvecoder_datasets.distributed",
                                                     "evolvecoder_datasets.distributed.map_shards"]


def test_stats_imports_no_execution_code():
    bad = [(line, module) for line, module in _imports(STATS) if _forbidden(module)]
    assert bad == [], f"recipe/stats.py imports execution code (line, module): {bad}"


def test_stats_names_no_runner():
    tree = ast.parse(STATS.read_text(encoding="utf-8"))
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    used |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    used |= {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    assert used & FORBIDDEN_NAMES == set()


# ------------------------------------------------------------------------------------------------ the figures
def _solutions(*models):
    return [{"model": m, "sample": k, "code": f"def f(x):\n    return {k}"} for k, m in enumerate(models)]


T1, T2, T3 = "assert f(1) == 2", "assert f(2) == 3", "assert f(3) == 4"


def _round(tests, matrices, origins):
    """Two problems: P_1 with a sample and two mutants, P_2 (no mutant) with two samples."""
    return Dataset.from_dict({
        schema.ID: ["P_1", "P_2"], schema.SOURCE: ["demo", "demo"],
        schema.TESTS: tests,
        schema.SOLUTIONS: [_solutions("m", "mutant", "mutant"), _solutions("m", "m")],
        schema.PASS_MATRIX: matrices,
        schema.TEST_ORIGIN: origins,
    })


def _no_program_runs(monkeypatch):
    """Every way the package runs a program fails the test."""
    from evolvecoder_datasets import execution
    from evolvecoder_datasets.distributed import shards
    from evolvecoder_datasets.execution import sandbox
    from evolvecoder_datasets.recipe import fidelity

    def refuse(*args, **kwargs):
        raise AssertionError("the statistics ran a program")

    monkeypatch.setattr(execution, "shared_sandbox", refuse)
    for name in ("run", "run_many", "run_stdio", "__init__"):
        monkeypatch.setattr(sandbox.Sandbox, name, refuse)
    monkeypatch.setattr(shards, "map_shards", refuse)
    for name in ("prepare", "round_report", "final_rules"):
        monkeypatch.setattr(fidelity.FidelityTracker, name, refuse)


def test_round_and_final_statistics_count_the_measurements_handed_in(monkeypatch):
    _no_program_runs(monkeypatch)
    config = dataclasses.replace(demo_config("unused"), mutants=2)
    seed = {"round": 0, "method": "seed"}
    round0 = _round([[T1, T2], [T1]],
                    [[[True, True], [True, False], [False, True]], [[True], [False]]],
                    [[seed, seed], [seed]])
    history = RunHistory()
    suite0 = {"right": 3, "wrong": 2, "tpr": 1.0, "tnr": 0.5}
    measured = RoundMeasures(reference_passes={"P_1": {T1: True, T2: False}},
                             fidelity={"suite": suite0, "round": 0, "oracle": {"problems": 1}})
    stats0 = round_stats(round0, 0, config, history, measured, run_key="k0", drop_reasons={}, dedup=None)

    assert stats0.num_problems == 2 and stats0.num_tests == 3
    # P_1: T2 fails the reference, so only T1 is trusted: it kills the mutant that fails it (1 of 2)
    assert stats0.mutation_score == {"0": 0.5} and history.mutation_rows[0] == [{"killed": 1, "considered": 2}]
    assert history.reference_passes == {"P_1": {T1: True, T2: False}}
    # the whole pool passing every test: P_1 1 of 3, P_2 1 of 2
    assert stats0.pool_pass_at_1 == {"0": pytest.approx((1 / 3 + 1 / 2) / 2)}
    assert stats0.pass_at_k["0"]["1"] == pytest.approx(0.75)  # the samples: P_1 1 of 1, P_2 1 of 2
    assert stats0.fidelity == {"suite": suite0, "round": 0, "oracle": {"problems": 1}, "by_round": {"0": suite0}}
    assert measured.fidelity == {"suite": suite0, "round": 0, "oracle": {"problems": 1}}  # the input is not changed

    # round 1 adds T3; the reference's verdict on it is the only one measured
    new = {"round": 1, "method": "search"}
    round1 = _round([[T1, T2, T3], [T1]],
                    [[[True, True, True], [True, False, False], [False, True, False]], [[True], [False]]],
                    [[seed, seed, new], [seed]])
    suite1 = {"right": 3, "wrong": 2, "tpr": 1.0, "tnr": 1.0}
    stats1 = round_stats(round1, 1, config, history, RoundMeasures({"P_1": {T3: True}}, {"suite": suite1}),
                         run_key="k1", drop_reasons={"no_reference": 1}, dedup=None)
    assert stats1.mutation_score == {"0": 0.5, "1": 1.0}
    assert history.reference_passes == {"P_1": {T1: True, T2: False, T3: True}}
    assert stats1.fidelity["by_round"] == {"0": suite0, "1": suite1}
    assert stats1.drop_reasons == {"no_reference": 1} and stats1.tests_by_method["search"]["retained"] == 1

    # main keeps P_1 with T1 and T2 only: T3's kill is gone, the verdicts are the rounds' own
    final = round1.select([0]).map(lambda row: {schema.TESTS: [T1, T2]})
    rules = {"published": "cover", "cover": {"tests": 2}}
    stats = final_stats(round1, final, config, history,
                        RoundMeasures(fidelity={"suite": suite1}, fidelity_rules=rules),
                        run_key="kf", drop_reasons={}, dedup=None)
    assert stats.mutation_score == {"0": 0.5, "1": 1.0, "main": 0.5}
    assert stats.num_problems == 1 and stats.num_tests == 2
    assert stats.fidelity == {"suite": suite1, "by_round": {"0": suite0, "1": suite1, "final": suite1},
                              "rules": rules}


def test_without_fidelity_or_mutants_nothing_measured_is_needed(monkeypatch):
    _no_program_runs(monkeypatch)
    config = dataclasses.replace(demo_config("unused"), mutants=0)
    ds = _round([[T1], [T1]], [[[True], [True], [False]], [[True], [False]]],
                [[{"round": 0, "method": "seed"}]] * 2)
    stats = round_stats(ds, 0, config, RunHistory(), RoundMeasures(), run_key="k", drop_reasons={}, dedup=None)
    assert stats.fidelity is None and stats.mutation_score is None and stats.num_tests == 2


# ------------------------------------------------------------------------------------------------ the measuring
class _RecordingExecutor:
    """An executor that answers every reference with ``True`` and keeps the batches it was sent."""

    def __init__(self):
        self.sent = []

    def map(self, ds, fn, *, fn_kwargs=None, **_):
        self.sent.append((list(ds[schema.REFERENCE]), [list(t) for t in ds[schema.TESTS]]))
        return ds.add_column(schema.REFERENCE_PASSED, [[True] * len(t) for t in ds[schema.TESTS]])


def test_reference_passes_sends_only_the_tests_without_a_verdict():
    ds = _round([[T1, T2, T1], [T1]], [[[True] * 3] * 3, [[True], [True]]], [[{}] * 3, [{}]])
    ds = ds.add_column(schema.REFERENCE_SOLUTIONS, [["def f(x):\n    return x + 1"], ["def f(x):\n    return 2"]])
    executor = _RecordingExecutor()
    found = reference_passes(ds, {"P_1": {T1: False}}, ExecuteConfig(), executor)
    # P_2 has no mutant; P_1's T1 was judged in an earlier round (and T1 listed twice is one test)
    assert executor.sent == [(["def f(x):\n    return x + 1"], [[T2]])]
    assert found == {"P_1": {T2: True}}
    again = _RecordingExecutor()
    assert reference_passes(ds, {"P_1": {T1: False, T2: True}}, ExecuteConfig(), again) == {} and again.sent == []
