"""Preconditions written from problem statements, shipped with the sources whose statements state a domain.

A precondition says whether a call's arguments lie inside what the problem's statement defines (types, ranges,
formats, relations between arguments); where the statement is silent it admits what the problem's own tests exercise
and what has one obvious answer, and nothing whose answer hangs on an unstated convention. The writers keep only
inputs it admits (:mod:`evolvecoder_datasets.search.domain`), so no published test pins the reference's accidental
behaviour on an input the statement leaves open. EvalPlus did the same for HumanEval+ by hand; ours are written for
this project from HumanEval's docstrings (``data/humaneval_domains.json``: per problem the ``contract`` source,
examples it ``rejects``, the indices of the problem's own seed inputs that break the statement, and ``why``).

A precondition is code: it runs in the sandbox beside the reference, never in the caller.

Example:
    >>> from evolvecoder_datasets.sources.statement_domains import statement_contract
    >>> print(statement_contract("HumanEval_39").splitlines()[0])
    def precondition(n):
    >>> statement_contract("LeetCode_1") is None
    True
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["statement_contract", "statement_domains"]

_FILES = {"HumanEval": "humaneval_domains.json"}


@cache
def statement_domains(source: str = "HumanEval") -> dict[str, dict[str, Any]]:
    """Every shipped precondition of ``source``, by problem id (empty for a source without any).

    Example:
        >>> len(statement_domains("HumanEval"))
        164
    """
    name = _FILES.get(source)
    if name is None:
        return {}
    with open(Path(__file__).with_name("data") / name, encoding="utf-8") as handle:
        return json.load(handle)


def statement_contract(problem_id: str) -> str | None:
    """The precondition source shipped for ``problem_id`` (``<SOURCE>_<n>``), or ``None``.

    Example:
        >>> "n >= 1" in statement_contract("HumanEval_39")
        True
    """
    source = str(problem_id).rsplit("_", 1)[0]
    entry = statement_domains(source).get(str(problem_id)) if source in _FILES else None
    return entry.get("contract") if entry else None
