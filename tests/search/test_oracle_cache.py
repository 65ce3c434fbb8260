"""Fidelity oracles kept across runs (issue 41): a second build of the same oracles runs nothing and returns the same
asserts, labels read back equal labels computed, anything the oracle depends on changes its key, and a cache that is
not private or holds garbage is never believed."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest

from evolvecoder_datasets.execution import Sandbox
from evolvecoder_datasets.execution.sandbox import local_counts
from evolvecoder_datasets.search.domain import Domain
from evolvecoder_datasets.search.oracle import FidelityConfig, OracleProblem, build_oracles, label_programs
from evolvecoder_datasets.search.oracle_cache import OracleCache, oracle_key, program_key

CLAMP = "def clamp(x):\n    return max(0, min(x, 10))\n"
VOWELS = "def vowels(s):\n    return sum(c in 'aeiou' for c in s.lower())\n"
PROBLEMS = [
    OracleProblem("P_clamp", CLAMP, ["assert clamp(5) == 5", "assert clamp(-3) == 0"]),
    OracleProblem("P_vowels", VOWELS, ["assert vowels('hello') == 2"]),
]
PROGRAMS = [
    [CLAMP, "def clamp(x):\n    return max(0, min(x, 11))\n", "def clamp(x):\n    return max(0, x)\n"],
    [VOWELS, "def vowels(s):\n    return sum(c in 'aeio' for c in s.lower())\n"],
]
CONFIG = FidelityConfig(inputs=40, candidates=120)
NONNEGATIVE = "def precondition(x):\n    return x >= 0\n"


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(workers=2, mode="fast") as sb:
        yield sb


def _sent() -> int:
    return local_counts()["jobs"]


def test_a_second_build_and_labelling_run_nothing_and_agree_with_the_first(sandbox, tmp_path):
    cache = OracleCache(tmp_path / "oracles")
    first = build_oracles(PROBLEMS, CONFIG, sandbox=sandbox, cache=cache)
    labels = label_programs(first, PROGRAMS, CONFIG, sandbox=sandbox, cache=cache)
    assert all(o.available for o in first) and cache.stored == 2 and cache.hits == 0
    assert [lab.tolist() for lab in labels] == [[1, 0, 0], [1, 0]]  # the control: the builds really label

    before = _sent()
    again = OracleCache(tmp_path / "oracles")  # a new run: a new object over the same folder
    second = build_oracles(PROBLEMS, CONFIG, sandbox=sandbox, cache=again)
    relabelled = label_programs(second, PROGRAMS, CONFIG, sandbox=sandbox, cache=again)
    assert _sent() == before  # not one job sent
    assert again.hits == 2 and again.labels_read == 5
    assert [o.tests for o in second] == [o.tests for o in first]
    assert [o.cpu for o in second] == [o.cpu for o in first] and all(o.reads == 0 for o in second)
    assert [lab.tolist() for lab in relabelled] == [lab.tolist() for lab in labels]

    # a program never labelled on this oracle runs (and only it); its label is kept for next time
    extra = [PROGRAMS[0] + ["def clamp(x):\n    return min(max(x, 0), 10)\n"], PROGRAMS[1]]
    before = _sent()
    mixed = label_programs(second, extra, CONFIG, sandbox=sandbox, cache=again)
    assert _sent() == before + 1 and mixed[0].tolist() == [1, 0, 0, 1]
    assert again.labels(second[0].cache_key)[program_key(extra[0][3])] == 1


def test_the_same_oracles_are_built_without_a_cache(sandbox, tmp_path):
    """The cache changes what runs, never what comes out: a build without it writes the same asserts."""
    cached = build_oracles(PROBLEMS, CONFIG, sandbox=sandbox, cache=OracleCache(tmp_path / "o"))
    plain = build_oracles(PROBLEMS, CONFIG, sandbox=sandbox)
    assert [o.tests for o in plain] == [o.tests for o in cached]
    assert all(o.cache_key is None for o in plain)


@pytest.mark.parametrize("change", [
    lambda p, c: (dataclasses.replace(p, reference=p.reference + "# another reference\n"), c),
    lambda p, c: (dataclasses.replace(p, tests=p.tests + ["assert clamp(20) == 10"]), c),
    lambda p, c: (dataclasses.replace(p, id="P_other"), c),
    lambda p, c: (dataclasses.replace(p, domain=Domain("statement", contract=NONNEGATIVE)), c),
    lambda p, c: (dataclasses.replace(p, programs=["def clamp(x):\n    return max(0, min(x, 12))\n"]), c),
    lambda p, c: (p, dataclasses.replace(c, inputs=41)),
    lambda p, c: (p, dataclasses.replace(c, seed=2)),
    lambda p, c: (p, dataclasses.replace(c, cpu_s=0.2)),
    lambda p, c: (p, dataclasses.replace(c, batch=8)),
    lambda p, c: (p, dataclasses.replace(c, sandbox=dataclasses.replace(c.sandbox, timeout_s=2.0))),
], ids=["reference", "tests", "id", "domain", "pool", "inputs", "seed", "cpu_s", "batch", "timeout"])
def test_anything_the_oracle_depends_on_changes_its_key(change):
    problem, config = change(PROBLEMS[0], CONFIG)
    assert oracle_key(problem, config) != oracle_key(PROBLEMS[0], CONFIG)


def test_settings_that_change_no_oracle_keep_its_key():
    for changed in (dataclasses.replace(CONFIG, sample=3), dataclasses.replace(CONFIG, rewrites=False),
                    dataclasses.replace(CONFIG, cache=False), dataclasses.replace(CONFIG, max_listed=2)):
        assert oracle_key(PROBLEMS[0], changed) == oracle_key(PROBLEMS[0], CONFIG)


@pytest.mark.parametrize("garbage", [
    b"not json", b"[]",
    b'{"id": "P_clamp", "tests": "assert clamp(1) == 1", "cpu": [], "candidates": 1, "usable": 1}',
    b'{"id": "P_clamp", "tests": ["assert True"], "cpu": [0.1, 0.2], "candidates": 1, "usable": 1}',
    b'{"id": "P_clamp", "tests": ["assert True"], "cpu": [true], "candidates": 1, "usable": 1}',
    b'{"id": "P_clamp", "tests": [], "cpu": [], "candidates": 1, "usable": 1}',
], ids=["not_json", "a_list", "tests_not_a_list", "cpu_of_another_length", "cpu_not_numbers", "no_tests"])
def test_an_entry_that_is_not_an_oracle_is_built_again(sandbox, tmp_path, garbage):
    cache = OracleCache(tmp_path / "oracles")
    key = oracle_key(PROBLEMS[0], CONFIG)
    cache._ready()
    (tmp_path / "oracles" / f"{key}.oracle.json").write_bytes(garbage)
    (tmp_path / "oracles" / f"{key}.labels.json").write_bytes(b'{"%s": 1}' % program_key(PROGRAMS[0][2]).encode())
    [oracle] = build_oracles(PROBLEMS[:1], CONFIG, sandbox=sandbox, cache=cache)
    assert cache.hits == 0 and oracle.available and oracle.reads > 0  # built, and kept over the garbage
    assert json.loads((tmp_path / "oracles" / f"{key}.oracle.json").read_text())["tests"] == oracle.tests


def test_a_label_file_planted_beside_an_oracle_counts_only_labels_that_are_labels(tmp_path):
    cache = OracleCache(tmp_path / "oracles")
    cache._ready()
    key = "ab" * 32
    planted = {"a": 1, "b": 0, "c": True, "d": 2, "e": "1"}
    (tmp_path / "oracles" / f"{key}.labels.json").write_text(json.dumps(planted))
    assert cache.labels(key) == {"a": 1, "b": 0}


def test_a_cache_folder_others_may_write_is_not_used_and_the_run_goes_on(sandbox, tmp_path, caplog):
    """Another user who could write the folder could plant expected values: such a folder is refused (said once),
    nothing is read from or written to it, and the oracles are built as without a cache."""
    folder = tmp_path / "oracles"
    folder.mkdir(mode=0o700)
    os.chmod(folder, 0o777)
    key = oracle_key(PROBLEMS[0], CONFIG)
    (folder / f"{key}.oracle.json").write_text(json.dumps(
        {"id": "P_clamp", "tests": ["assert clamp(5) == 5"], "callee": "clamp", "candidates": 1, "usable": 1,
         "cpu": [0.001]}))  # a planted oracle that would label every wrong clamp right
    cache = OracleCache(folder)
    with caplog.at_level("WARNING"):
        [oracle] = build_oracles(PROBLEMS[:1], CONFIG, sandbox=sandbox, cache=cache)
    assert cache.hits == 0 and len(oracle.tests) > 1
    assert "the fidelity oracle cache is not used" in caplog.text and "EVOLVECODER_ORACLE_CACHE" in caplog.text
    assert sorted(p.name for p in folder.iterdir()) == [f"{key}.oracle.json"]  # nothing written there


def test_a_cache_folder_that_is_a_link_is_not_used(sandbox, tmp_path):
    real = tmp_path / "elsewhere"
    real.mkdir(mode=0o700)
    (tmp_path / "oracles").symlink_to(real)
    cache = OracleCache(tmp_path / "oracles")
    build_oracles(PROBLEMS[:1], CONFIG, sandbox=sandbox, cache=cache)
    assert cache.stored == 0 and list(real.iterdir()) == []
