"""Stdin inputs of a problem's shape: layouts read off seed inputs, the checks that keep an input inside the problem,
the statement's stated bounds, the mutator (every candidate admitted, counts rewritten), and the validator program
agreeing with the check when it runs in the real sandbox."""

from __future__ import annotations

import random

import pytest

from evolvecoder_datasets.execution import Sandbox
from evolvecoder_datasets.search.text_inputs import (
    TextMutator,
    statement_bounds,
    statement_rules,
    validator_program,
)
from evolvecoder_datasets.search.text_shape import check, infer_shape, parse, render


def kinds(shape):
    return [seg["t"] for seg in shape["layout"]]


@pytest.mark.parametrize(
    ("seeds", "layout"),
    [
        (["5 7\n", "1 2\n"], ["fixed"]),
        (["3\n4 1 2\n", "1\n9\n"], ["fixed", "row"]),
        (["4 2\n1 2\n3 4\n", "5 3\n1 2\n2 3\n3 5\n"], ["fixed", "block"]),
        (["3 1 2 3\n", "2 7 7\n"], ["tail"]),
        (["2\n3\n1 2 3\n1\n5\n", "1\n2\n4 4\n"], ["fixed", "repeat"]),
        (["abc\n", "hello\n"], ["fixed"]),
    ],
    ids=["fixed", "row", "block", "tail", "test_cases", "word"],
)
def test_every_common_contest_layout_is_read_and_reads_its_seeds_back(seeds, layout):
    shape = infer_shape(seeds)
    assert kinds(shape) == layout
    for text in seeds:
        assert check(shape, text) is None
        assert render(shape, parse(shape, text)) == text


def test_a_resized_row_gets_its_count_rewritten_and_two_rows_of_one_count_must_agree():
    shape = infer_shape(["3\n1 2 3\n4 5 6\n", "2\n7 8\n9 9\n"])
    assert kinds(shape) == ["fixed", "row", "row"]
    values = parse(shape, "2\n7 8\n9 9\n")
    values[1].append("5")
    values[2].append("1")
    assert render(shape, values) == "3\n7 8 5\n9 9 1\n"
    values[2].pop()
    assert render(shape, values) is None  # n cannot be 3 and 2 at once


def test_the_check_names_the_rule_an_input_breaks():
    seeds = ["4 3\n1 2\n2 3\n3 4\n", "5 4\n1 2\n2 3\n3 4\n4 5\n", "3 2\n1 3\n2 3\n"]
    shape = infer_shape(seeds, bounds=[(1, 100), (0, 200)])
    assert check(shape, "6 1\n2 6\n") is None
    assert check(shape, "6 2\n2 6\n") == "layout"  # m says two roads, one follows
    assert check(shape, "6 1\n2 x\n") == "kind"
    assert check(shape, "6 1\n2 7\n") == "index"  # a town past n
    assert check(shape, "6 1\n4 4\n") == "distinct"  # every seed road joins two towns
    assert check(shape, "6 2\n1 2\n1 2\n") == "distinct"  # no seed repeats a road
    assert check(shape, "101 1\n1 2\n") == "range"  # the statement's n <= 100
    assert check(shape, "6 1\r\n1 2\n") == "layout"
    assert check(shape, "6 1\n1 2\n" + "x" * 5000) == "size"


def test_words_keep_their_alphabet_and_lengths_and_numbers_their_kind():
    shape = infer_shape(["2\nab 0.50\ncd 1.25\n", "1\nzz 3.00\n"])
    assert check(shape, "1\nqq 2.75\n") is None
    assert check(shape, "1\nQq 2.75\n") == "charset"
    assert check(shape, "1\nqqq 2.75\n") == "length"
    assert check(shape, "1\nqq 2.7511\n") == "kind"  # more decimals than any seed
    assert check(shape, "1\nqq 9.00\n") == "range"


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        (r"$1 \le n \le 2 \cdot 10^5$", (1, 200000)),
        (r"$1 \leq n \leq 10^{9}$", (1, 10**9)),
        ("1 ≤ N ≤ 100", (1, 100)),
        ("0 <= x <= 1000", (0, 1000)),
        (r"$|a_i| \le 10^9$", (-(10**9), 10**9)),
        ("1 ≤ n, m ≤ 5000", (1, 5000)),
        ("0 < k < 10", (1, 9)),
        ("1 <= n <= 100,000", (1, 100000)),
    ],
)
def test_stated_bounds_are_read_from_latex_unicode_and_plain_statements(statement, expected):
    assert expected in statement_bounds(statement)


def test_a_statement_without_bounds_gives_none_and_the_seeds_range_holds():
    assert statement_bounds("Print the sum of the numbers you read.") == []
    shape = infer_shape(["2\n3 9\n"], bounds=[])
    assert check(shape, "2\n3 10\n") == "range"


def test_every_mutated_input_is_admitted_new_and_the_same_for_the_same_seed():
    seeds = ["3 5\n1 2 3\n", "4 -2\n0 0 -1 -1\n"]
    bounds = statement_bounds(r"$1 \le n \le 50$, $|k| \le 10^9$, $|a_i| \le 10^9$")
    shape = infer_shape(seeds, bounds)
    first = TextMutator(shape, seeds, random.Random(7)).draw(60)
    again = TextMutator(shape, seeds, random.Random(7)).draw(60)
    assert first == again and len(first) == 60 and len(set(first)) == 60
    assert not set(first) & set(seeds)
    assert all(check(shape, text) is None for text in first)
    # the edits reach the stated bounds and change sizes, with n rewritten each time
    tokens = {tok for text in first for tok in text.split()}
    assert {"1000000000", "-1000000000"} & tokens
    assert {len(text.splitlines()[1].split()) for text in first} >= {1, 5}
    for text in first:
        n = int(text.split()[0])
        assert len(text.splitlines()[1].split()) == n


def test_mutated_test_cases_and_blocks_stay_consistent():
    seeds = ["2\n3\n1 2 3\n1\n5\n", "1\n2\n4 4\n"]
    shape = infer_shape(seeds, bounds=[(1, 10)])
    for text in TextMutator(shape, seeds, random.Random(1)).draw(40):
        lines = text.splitlines()
        t, k = int(lines[0]), 1
        for _ in range(t):
            n = int(lines[k])
            assert len(lines[k + 1].split()) == n
            k += 2
        assert k == len(lines)


@pytest.fixture(scope="module")
def sb():
    with Sandbox(workers=1) as sandbox:
        yield sandbox


def test_the_validator_program_decides_in_the_sandbox_exactly_as_the_check(sb):
    seeds = ["4 3\n1 2\n2 3\n3 4\n", "5 4\n1 2\n2 3\n3 4\n4 5\n", "3 2\n1 3\n2 3\n"]
    shape = infer_shape(seeds, bounds=[(1, 100), (0, 200)])
    texts = seeds + TextMutator(shape, seeds, random.Random(3)).draw(15) + [
        "6 2\n2 6\n", "6 1\n2 7\n", "6 1\n4 4\n", "", "6 1\n1 2", "6 1\n1 2\n\n", "\x00\n", "6 1\n1\t2\n"]
    report = sb.run_stdio(validator_program(shape), texts, [""] * len(texts))
    assert report.passed == [check(shape, t) is None for t in texts]
    assert sum(report.passed) >= len(seeds) + 15 and not all(report.passed)


def test_seed_shapes_the_statement_does_not_state_are_not_rules_when_it_states_bounds():
    from evolvecoder_datasets.search.text_inputs import statement_rules

    seeds = ["3\n3 1 2\n", "4\n1 2 3 4\n"]  # distinct by chance
    plain = r"Count the pairs i < j with $a_i > a_j$. $1 \le n \le 40$, $1 \le a_i \le 10^9$."
    stated = plain + " The numbers are pairwise distinct."
    loose = infer_shape(seeds, statement_bounds(plain), rules=statement_rules(plain))
    strict = infer_shape(seeds, statement_bounds(stated), rules=statement_rules(stated))
    assert check(loose, "3\n5 5 1\n") is None
    assert check(strict, "3\n5 5 1\n") == "distinct"
    # a statement that bounds nothing says too little: every shape the seeds share stays a rule
    silent = "Count the inversions."
    assert check(infer_shape(seeds, statement_bounds(silent), rules=statement_rules(silent)), "3\n2 2 1\n") == "distinct"
    # an edge's ends: u != v stated with LaTeX's \ne
    graph = r"$1 \le n \le 10$, $0 \le m \le 20$; each road joins $u \ne v$."
    roads = ["4 3\n1 2\n2 3\n3 4\n", "3 2\n1 3\n2 3\n"]
    shape = infer_shape(roads, statement_bounds(graph), rules=statement_rules(graph))
    assert check(shape, "3 1\n2 2\n") == "distinct" and check(shape, "3 2\n1 2\n1 2\n") is None


@pytest.mark.parametrize("seed", range(8))
def test_the_mutator_never_leaves_a_block_line_short_whatever_it_draws(seed):
    seeds = ["2 1\n1 2\n", "5 0\n", "4 4\n1 2\n1 3\n2 4\n3 4\n"]
    shape = infer_shape(seeds, bounds=[(1, 100), (0, 200)])
    texts = TextMutator(shape, seeds, random.Random(seed)).draw(80)
    assert texts and all(check(shape, t) is None for t in texts)


def test_a_stated_order_between_two_columns_is_kept_and_an_unstated_one_is_not():
    seeds = ["3 2\n1 2 3\n1 2\n2 3\n", "4 3\n5 -1 0 2\n1 4\n3 3\n2 4\n"]
    stated = r"$1 \le n, q \le 30$, $|a_i| \le 10^6$; each query $l, r$ has $1 \le l \le r \le n$."
    shape = infer_shape(seeds, statement_bounds(stated), rules=statement_rules(stated))
    assert check(shape, "3 1\n1 2 3\n2 3\n") is None
    assert check(shape, "3 1\n1 2 3\n3 1\n") == "sorted"  # l > r
    assert check(shape, "3 1\n1 2 3\n1 4\n") == "index"  # r > n
    unstated = r"$1 \le n, q \le 30$, $|a_i| \le 10^6$; each query gives two positions."
    loose = infer_shape(seeds, statement_bounds(unstated), rules=statement_rules(unstated))
    assert check(loose, "3 1\n1 2 3\n3 1\n") is None


@pytest.mark.parametrize(
    ("seeds", "miscounted", "repaired"),
    [
        (["3\n4 1 2\n", "1\n9\n"], "2\n4 1 2 7", "4\n4 1 2 7\n"),
        (["4 2\n1 2\n3 4\n", "5 3\n1 2\n2 3\n3 5\n"], "5 9\n1 2\n2 3\n", "5 2\n1 2\n2 3\n"),
        (["3 1 2 3\n", "2 7 7\n"], "9 1 2\n", "2 1 2\n"),
        (["2\n3\n1 2 3\n1\n5\n", "1\n2\n4 4\n"], "3\n2\n1 2 3\n1\n5 5\n", "2\n3\n1 2 3\n2\n5 5\n"),
        (["2\nabba\nabc\n", "3\na\nbb\nccc\n"], "5\nab\nbac\ncab\n\n\n", "3\nab\nbac\ncab\n"),
        (["3\n4 1 2\n", "1\n9\n"], "3\r\n4  1 2 \r\n", "3\n4 1 2\n"),
    ],
    ids=["row", "block_to_end", "tail", "test_cases_to_end", "words_blank_lines", "spacing"],
)
def test_repair_writes_counts_from_what_they_count_and_changes_no_value(seeds, miscounted, repaired):
    from evolvecoder_datasets.search.text_shape import repair

    shape = infer_shape(seeds)
    assert check(shape, miscounted) is not None
    assert repair(shape, miscounted) == repaired
    for seed in seeds:  # a valid text comes back as it was
        assert check(shape, seed) is None and repair(shape, seed) == seed


def test_repair_leaves_values_and_unreadable_texts_to_the_check():
    from evolvecoder_datasets.search.text_shape import repair

    shape = infer_shape(["3\n4 1 2\n", "1\n9\n"], bounds=[(1, 5), (1, 9)])
    # the count is rewritten, a value out of range stays out of range
    assert repair(shape, "1\n4 100\n") == "2\n4 100\n" and check(shape, "2\n4 100\n") == "range"
    for hostile in ("", "x", "3\n1 2 3\n4 5\n", "\x00", "3\nfoo\n", None, 3):
        fixed = repair(shape, hostile)
        assert fixed is None or check(shape, fixed) is not None, hostile


def test_miscounted_model_texts_are_recounted_in_the_sandbox_and_then_valued():
    from evolvecoder_datasets.search.stdio_writer import StdioProblem, value_stdin

    problem = StdioProblem("P", "n = int(input())\nprint(sum(map(int, input().split())))", ["3\n4 1 2\n", "1\n9\n"],
                           ["7\n", "9\n"], [], [], question="$1 \\le n \\le 10$, $1 \\le a_i \\le 9$")
    with Sandbox(workers=1) as sb:
        [valued] = value_stdin([(problem, ["2\n1 2 3\n", "4\n1 99\n", "1\n9\n", "zzz"])], sb)
    assert valued.inputs == ["3\n1 2 3\n"] and valued.outputs == ["6\n"]
    assert valued.repaired == 2 and valued.invalid == 3  # 99 out of range, a seen input, prose


def test_a_grid_keeps_its_rows_as_wide_as_its_header_says_and_the_mutator_resizes_both():
    """`n m` then n rows of m cells: a row of another width is outside the problem (a reference may still answer
    it), so the check refuses it; the mutator changes `m` and the rows together, and `n` with the row count."""
    seeds = ["3 4\n#..#\n.##.\n....\n", "2 3\n###\n.#.\n", "4 2\n..\n#.\n.#\n##\n"]
    shape = infer_shape(seeds, bounds=[(1, 20)])
    assert shape["slots"]["1.0"]["width"] == "0.1"
    assert check(shape, "2 3\n###\n.#\n") == "length" and check(shape, "2 3\n###\n.#..\n") == "length"
    assert check(shape, "1 7\n#.#.#.#\n") is None
    drawn = TextMutator(shape, seeds, random.Random(3)).draw(40)
    assert len(drawn) >= 30
    widths = set()
    for text in drawn:
        lines = text.split("\n")[:-1]
        n, m = map(int, lines[0].split())
        assert len(lines) == n + 1 and all(len(row) == m for row in lines[1:]), text
        widths.add(m)
    assert widths - {2, 3, 4}  # widths the seeds never had
    # a string whose length a number states, the same way
    word = infer_shape(["3\nabc\n", "5\nhello\n"])
    assert check(word, "4\nabc\n") == "length" and check(word, "3\nxyz\n") is None
    assert all(len(t.split("\n")[1]) == int(t.split("\n")[0]) for t in TextMutator(word, ["3\nabc\n", "5\nhello\n"],
                                                                                     random.Random(1)).draw(20))
