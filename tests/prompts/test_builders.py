"""Prompt builders: versions, requests, matrix rendering and shape checks."""

from __future__ import annotations

import numpy as np
import pytest

from evolvecoder_datasets import prompts
from evolvecoder_datasets.errors import SchemaError
from evolvecoder_datasets.llm.cache import request_key
from evolvecoder_datasets.prompts import adversarial, code_instruct, discriminative, refine

PROGRAMS = [f"def f(x):\n    return x + {i}" for i in range(5)]
TESTS = [f"assert f({i}) == {i}" for i in range(7)]


def test_every_family_has_a_distinct_version_that_enters_the_cache_key():
    assert len(set(prompts.VERSIONS.values())) == len(prompts.VERSIONS) == 6
    a = refine.build_request("Seed problem text.", max_tokens=10)
    b = refine.build_request("Seed problem text.", max_tokens=10).__class__(
        a.messages, max_tokens=10, prompt_version="refine-999"
    )
    assert request_key(a, backend="openai", model="m") != request_key(b, backend="openai", model="m")
    # a JSON Schema constrains the answer, so it enters the key; a request without one keeps its old key
    c = a.__class__(a.messages, max_tokens=10, prompt_version=a.prompt_version, response_schema={"type": "object"})
    assert request_key(c, backend="openai", model="m") != request_key(a, backend="openai", model="m")
    assert "response_schema" not in a.to_json() and a.__class__.from_json(c.to_json()) == c


def test_refine_includes_the_reference_solution_only_when_present():
    with_solution = refine.build_messages("Seed", solution="def f(): pass")[0]["content"]
    without = refine.build_messages("Seed", solution="   ")[0]["content"]
    assert "def f(): pass" in with_solution and "Reference solution" not in without


@pytest.mark.parametrize("family", [adversarial, discriminative])
def test_matrix_renders_one_row_per_program_from_numpy_or_lists(family):
    matrix = np.zeros((5, 7), dtype=bool)
    matrix[0] = True
    matrix[1, :3] = True
    from_numpy = family.build_messages("Q", PROGRAMS, TESTS, matrix)[0]["content"]
    from_lists = family.build_messages("Q", PROGRAMS, TESTS, matrix.tolist())[0]["content"]
    assert from_numpy == from_lists
    assert "Program 1: 11111 11  (7/7 pass)" in from_numpy
    assert "Program 2: 11100 00  (3/7 pass)" in from_numpy
    assert "T7. assert f(6) == 6" in from_numpy
    assert family.build_request("Q", PROGRAMS, TESTS, matrix, n=2).stage == family.STAGE


@pytest.mark.parametrize("family", [adversarial, discriminative])
def test_a_matrix_of_the_wrong_shape_is_a_schema_error(family):
    with pytest.raises(SchemaError):
        family.build_messages("Q", PROGRAMS, TESTS, np.ones((5, 6), dtype=bool))


def test_code_instruct_names_repository_file_and_package():
    content = code_instruct.build_messages("x = 1", repo="pallets/click", path="src/click/utils.py", package="click")[0][
        "content"
    ]
    assert "repository pallets/click, file src/click/utils.py" in content
    assert "(`click`)" in content
