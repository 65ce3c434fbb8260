"""A round split in two passes (the model writers, then the search as a function of the rows alone) gives the rows
one pass gives, whatever the shards of the second pass.

This is what lets a cluster run the search writer's per-problem work on the nodes (``Executor.evolve``): the second
pass is shipped as shard tasks there. Here it runs through ``map_shards``' local engine with shards of 2 rows (the
first pass keeps the recipe's batches of 16), so a problem's search never shares its batch with the same problems
as in one pass. The Ray path itself is checked by ``tests/recipe/test_recipe_ray.py`` and
``tests/recipe/test_recipe_two_nodes.py`` (CI), whose rounds have the search on.
"""

from __future__ import annotations

import pytest
from datasets import Dataset

from evolvecoder_datasets.distributed import DistributedConfig, map_shards
from evolvecoder_datasets.llm import LLMConfig
from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
from evolvecoder_datasets.search.writer import SearchConfig
from evolvecoder_datasets.stages.evolve import EvolveConfig, evolve_dataset
from evolvecoder_datasets.stages.execute import ExecuteConfig
from evolvecoder_datasets.stages.support.resources import close_backends
from evolvecoder_datasets.stages.support.split_round import SEARCH_STATE, evolve_in_two

CLAMP = "def clamp(x):\n    return max(0, min(x, 10))"
CLAMP_POOL = [CLAMP, "def clamp(x):\n    return max(0, x)", "def clamp(x):\n    return min(x, 10)",
              "def clamp(x):\n    return 5"]  # fmt: skip
SUM = "def total(xs):\n    return sum(xs)"
SUM_POOL = [SUM, "def total(xs):\n    return sum(xs[1:]) + (xs[0] if xs else 0)",
            "def total(xs):\n    return sum(x for x in xs if x > 0)", "def total(xs):\n    return len(xs)",
            "def total(xs):\n    return sum(xs[:-1]) + xs[-1]"]  # fmt: skip
INT_DOMAIN = {"how": "statement", "contract": "def precondition(x):\n    return type(x) is int", "shape": None,
              "seed_violations": 0}  # fmt: skip


def _row(pid, question, tests, pool, matrix, reference, *, domain=None, drop=None, limit=0.5):
    return {"id": pid, "question": question, "tests": tests,
            "test_origin": [{"round": 0, "method": "refine"}] * len(tests),
            "solutions": [{"model": "m" if k % 2 else "n", "sample": k, "code": c} for k, c in enumerate(pool)],
            "pass_matrix": matrix, "statuses": [["pass" if ok else "fail" for ok in row] for row in matrix],
            "reference_solutions": [reference] if reference else [], "reference_ok": reference is not None,
            "domain": domain, "drop_reason": drop, "time_limit_s": limit}  # fmt: skip


def _dataset() -> Dataset:
    clamp_tests = ["assert clamp(5) == 5", "assert clamp(7) == 7"]
    clamp_matrix = [[True, True], [True, True], [True, True], [True, False]]
    sum_tests = ["assert total([1, 2, 3]) == 6", "assert total([4]) == 4"]
    sum_matrix = [[True, True], [True, True], [True, True], [False, False], [True, True]]
    rows = [
        _row("C_1", "Clamp x to [0, 10].", clamp_tests, CLAMP_POOL, clamp_matrix, CLAMP, domain=INT_DOMAIN),
        _row("S_1", "Return the sum of the list xs.", sum_tests, SUM_POOL, sum_matrix, SUM),  # domain derived now
        _row("C_2", "Clamp x to [0, 10] (no reference).", clamp_tests, CLAMP_POOL, clamp_matrix, None,
             domain=INT_DOMAIN),
        _row("C_3", "Clamp, dropped earlier.", clamp_tests, CLAMP_POOL, clamp_matrix, CLAMP, drop="no_tests"),
        {**_row("C_4", "Clamp, no pool.", clamp_tests, [], [], CLAMP), "statuses": []},
        _row("S_2", "Return the sum of xs (calibrated tight).", sum_tests, SUM_POOL, sum_matrix, SUM, limit=None),
    ]
    return Dataset.from_list(rows)


def _answer(body: dict) -> str:
    prompt = body["messages"][-1]["content"]
    if "clamp" in prompt:
        return '{"tests": ["assert clamp(50) == 10", "assert clamp(3) == 4"]}'  # the second is wrong: dropped
    return '{"tests": ["assert total([]) == 0", "assert total([-1, 2]) == 1"]}'


@pytest.fixture(autouse=True)
def _fresh_backends():
    close_backends()
    yield
    close_backends()


def _shards_of_two(ds, fn, *, fn_kwargs, features, desc):
    return map_shards(ds, fn, fn_kwargs=fn_kwargs, features=features, desc=desc,
                      config=DistributedConfig(engine="local", shard_size=2, progress=False))  # fmt: skip


@pytest.mark.parametrize("writers", [True, False], ids=["writers_and_search", "search_alone"])
def test_two_passes_give_the_rows_of_one(writers):
    ds = _dataset()
    with ScriptedOpenAIServer(_answer) as server:
        llm = LLMConfig(model="w", base_url=server.base_url, max_retries=0)
        config = EvolveConfig(llm=llm if writers else None, adversarial=writers, discriminative=writers,
                              search=SearchConfig(budget=150, max_tests=3), round=1, seed=4,
                              execute=ExecuteConfig(mode="fast", workers=1, timeout_s=1.0))  # fmt: skip
        one = evolve_dataset(ds, config)
        close_backends()
        two = evolve_in_two(ds, config, map_search=_shards_of_two)
    assert SEARCH_STATE not in two.column_names
    assert two.column_names == one.column_names
    one_rows, two_rows = one.to_list(), two.to_list()
    for a, b in zip(one_rows, two_rows):
        for name in one.column_names:
            assert b[name] == a[name], (a["id"], name)
    # Not 0 == 0: the search and (when asked) the writers added tests, the log says so in one order on both sides.
    clamp, total = one_rows[0], one_rows[1]
    assert any(o["method"] == "search" for o in clamp["test_origin"]), clamp["evolve_log"]
    assert total["domain"] is not None  # derived at this first round, and carried to the second pass
    methods = [e["method"] for e in clamp["evolve_log"]]
    assert methods[-1] == "search" and (("adversarial" in methods) == writers)
    assert one_rows[3]["evolve_log"] == two_rows[3]["evolve_log"]  # the dropped row: untouched on both sides
