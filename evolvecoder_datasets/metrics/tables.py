"""Per-round tables for cards and reports: tests by source, pass@k by round, methods, models, mutation scores.

Example:
    >>> from evolvecoder_datasets.metrics.tables import mutation_table
    >>> mutation_table({0: {"killed": 1, "considered": 2}})[0]["score"]
    0.5
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import SchemaError
from ..mutants.score import pooled_score
from .passk import DEFAULT_KS, _mean_pass_at, solution_counts

__all__ = ["difficulty_table", "method_table", "mutation_table", "per_model_table", "source_table", "unique_kills"]


def source_table(
    sources: Sequence[str], tests: Sequence[Sequence[str]] | Sequence[int]
) -> list[dict[str, Any]]:
    """Problems and mean tests per problem, by source, plus an ``"all"`` row (the paper's Table 2).

    Args:
        sources (`Sequence[str]`): the ``source`` column (or id prefixes such as ``"TACO"``).
        tests (`Sequence[Sequence[str]]` or `Sequence[int]`): the ``tests`` column, or test counts.

    Returns:
        `list[dict]`: rows ``{"source", "problems", "mean_tests", "total_tests"}`` sorted by source, then
        ``"all"``.

    Raises:
        SchemaError: the two columns differ in length.

    Example:
        >>> from evolvecoder_datasets.metrics import source_table
        >>> source_table(["TACO", "LeetCode", "TACO"], [["a", "b"], ["c"], ["d", "e", "f", "g"]])[-1]
        {'source': 'all', 'problems': 3, 'mean_tests': 2.3333333333333335, 'total_tests': 7}
    """
    if len(sources) != len(tests):
        raise SchemaError(f"{len(sources)} sources but {len(tests)} test lists")
    counts = [t if isinstance(t, (int, np.integer)) else len(t) for t in tests]
    totals: dict[str, list[int]] = defaultdict(list)
    for source, count in zip(sources, counts):
        totals[str(source)].append(int(count))
    rows = [
        {"source": s, "problems": len(v), "mean_tests": sum(v) / len(v), "total_tests": sum(v)}
        for s, v in sorted(totals.items())
    ]
    total = sum(counts)
    rows.append(
        {
            "source": "all",
            "problems": len(counts),
            "mean_tests": total / len(counts) if counts else float("nan"),
            "total_tests": int(total),
        }
    )
    return rows


def difficulty_table(
    rounds: Mapping[int, Iterable[Any]], *, ks: Sequence[int] = DEFAULT_KS
) -> list[dict[str, Any]]:
    """Mean unbiased pass@k of the solution pool per round (the paper's Figure 4).

    A sample counts as correct when it passes every test of that round, so pass@k falls as the suites harden.

    Args:
        rounds (`Mapping[int, Iterable[array-like]]`): round -> the pass matrices of its problems.
        ks (`Sequence[int]`, *optional*, defaults to `(1, 4, 8)`): the k values.

    Returns:
        `list[dict]`: rows ``{"round", "problems", "pass@1", "pass@4", "pass@8"}``, by round.

    Raises:
        ConfigError: a k is < 1.
        SchemaError: a matrix is not 2-D boolean.

    Example:
        >>> from evolvecoder_datasets.metrics import difficulty_table
        >>> difficulty_table({0: [[[1], [1]]], 1: [[[1], [0]]]}, ks=(1,))
        [{'round': 0, 'problems': 1, 'pass@1': 1.0}, {'round': 1, 'problems': 1, 'pass@1': 0.5}]
    """
    rows = []
    for r in sorted(rounds):
        n, c = solution_counts(rounds[r])
        rows.append({"round": int(r), "problems": len(n), **_mean_pass_at(n, c, ks)})
    return rows


def _origin_counts(origins: Iterable[Iterable[Mapping[str, Any]]]) -> Counter:
    counts: Counter = Counter()
    for row in origins:
        for origin in row:
            try:
                counts[(int(origin["round"]), str(origin["method"]))] += 1
            except (KeyError, TypeError) as err:
                raise SchemaError(f"test_origin entries need 'round' and 'method', got {origin!r}") from err
    return counts


def method_table(
    generated: Iterable[Iterable[Mapping[str, Any]]], retained: Iterable[Iterable[Mapping[str, Any]]]
) -> list[dict[str, Any]]:
    """Generated versus retained tests per round and method (the paper's Figure 5).

    Args:
        generated (`Iterable[Iterable[dict]]`): the ``test_origin`` column before the final filter (rounds only
            append tests, so the last round's dataset holds every generated test).
        retained (`Iterable[Iterable[dict]]`): the ``test_origin`` column after the final filter.

    Returns:
        `list[dict]`: rows ``{"round", "method", "generated", "retained", "retention"}`` sorted by round and
        method; ``retention`` is retained / generated.

    Raises:
        SchemaError: an origin lacks ``round`` or ``method``.

    Example:
        >>> from evolvecoder_datasets.metrics import method_table
        >>> gen = [[{"round": 0, "method": "refine"}] * 4 + [{"round": 1, "method": "adversarial"}] * 2]
        >>> kept = [[{"round": 0, "method": "refine"}] * 3 + [{"round": 1, "method": "adversarial"}]]
        >>> [(r["method"], r["generated"], r["retained"], r["retention"]) for r in method_table(gen, kept)]
        [('refine', 4, 3, 0.75), ('adversarial', 2, 1, 0.5)]
    """
    made, kept = _origin_counts(generated), _origin_counts(retained)
    rows = []
    for key in sorted(set(made) | set(kept)):
        g, r = made.get(key, 0), kept.get(key, 0)
        rows.append(
            {
                "round": key[0],
                "method": key[1],
                "generated": g,
                "retained": r,
                "retention": r / g if g else float("nan"),
            }
        )
    return rows


def unique_kills(
    origins: Iterable[Sequence[Mapping[str, Any]]], pass_matrices: Iterable[Any]
) -> dict[str, dict[str, int]]:
    """Per method, the programs that only its tests reject: each program of a pool that fails at least one test is
    credited to the method of its failed tests when they all come from one method (a program that a seed test and
    a search test both reject is nobody's alone).

    Args:
        origins (`Iterable[Sequence[dict]]`): the ``test_origin`` column (``{"round", "method"}`` per test).
        pass_matrices (`Iterable[array-like]`): the ``pass_matrix`` column, programs x tests, aligned with it.

    Returns:
        `dict`: method -> ``{"programs": killed only by it, "problems": problems where it killed such a program}``;
        every method that wrote a test appears, with zeros where it killed nothing alone.

    Raises:
        SchemaError: a matrix's columns disagree with its origins.

    Example:
        >>> from evolvecoder_datasets.metrics import unique_kills
        >>> origin = [[{"round": 0, "method": "seed"}, {"round": 1, "method": "adversarial"},
        ...            {"round": 1, "method": "search"}]]
        >>> unique_kills(origin, [[[True, False, True], [False, False, True], [True, True, False]]])
        {'adversarial': {'programs': 1, 'problems': 1}, 'search': {'programs': 1, 'problems': 1}, 'seed': {'programs': 0, 'problems': 0}}
    """
    from ..passmatrix import as_pass_matrix

    out: dict[str, dict[str, int]] = {}
    for problem, (row, matrix) in enumerate(zip(origins, pass_matrices, strict=True)):
        methods = [str(o["method"]) for o in row or ()]
        for method in methods:
            out.setdefault(method, {"programs": 0, "problems": 0})
        M = as_pass_matrix(matrix) if matrix is not None else np.zeros((0, len(methods)), bool)
        if M.size == 0:
            continue
        if M.shape[1] != len(methods):
            raise SchemaError(f"problem {problem}: {len(methods)} test origins but {M.shape[1]} pass-matrix columns")
        names = np.asarray(methods)
        credited: set[str] = set()
        for failed in ~M:
            killers = set(names[failed].tolist())
            if len(killers) == 1:
                method = killers.pop()
                out[method]["programs"] += 1
                credited.add(method)
        for method in credited:
            out[method]["problems"] += 1
    return dict(sorted(out.items()))


def per_model_table(
    solutions: Iterable[Sequence[Mapping[str, Any]]],
    pass_matrices: Iterable[Any],
    *,
    ks: Sequence[int] = DEFAULT_KS,
) -> list[dict[str, Any]]:
    """Mean unbiased pass@k per model that sampled the pool (the paper's Figure 6).

    Args:
        solutions (`Iterable[Sequence[dict]]`): the ``solutions`` column: per problem, one ``{"model", ...}``
            per row of the pass matrix.
        pass_matrices (`Iterable[array-like]`): the ``pass_matrix`` column, aligned with ``solutions``.
        ks (`Sequence[int]`, *optional*, defaults to `(1, 4, 8)`): the k values.

    Returns:
        `list[dict]`: rows ``{"model", "problems", "samples", "pass@1", ...}`` sorted by model.

    Raises:
        SchemaError: a problem's solution list and pass matrix disagree in length.
        ConfigError: a k is < 1.

    Example:
        >>> from evolvecoder_datasets.metrics import per_model_table
        >>> sols = [[{"model": "a"}, {"model": "a"}, {"model": "b"}]]
        >>> per_model_table(sols, [[[1, 1], [0, 1], [1, 1]]], ks=(1,))
        [{'model': 'a', 'problems': 1, 'samples': 2, 'pass@1': 0.5}, {'model': 'b', 'problems': 1, 'samples': 1, 'pass@1': 1.0}]
    """
    from ..passmatrix import as_pass_matrix

    counts: dict[str, tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
    for problem, (sols, matrix) in enumerate(zip(solutions, pass_matrices, strict=True)):
        M = as_pass_matrix(matrix)
        if M.shape[0] != len(sols):
            raise SchemaError(f"problem {problem}: {len(sols)} solutions but {M.shape[0]} pass-matrix rows")
        perfect = M.all(axis=1) if M.shape[1] else np.zeros(M.shape[0], dtype=bool)
        per_model: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for sol, ok in zip(sols, perfect.tolist()):
            slot = per_model[str(sol["model"])]
            slot[0] += 1
            slot[1] += int(ok)
        for model, (n, c) in per_model.items():
            counts[model][0].append(n)
            counts[model][1].append(c)
    rows = []
    for model in sorted(counts):
        n, c = (np.asarray(x, dtype=np.int64) for x in counts[model])
        rows.append({"model": model, "problems": len(n), "samples": int(n.sum()), **_mean_pass_at(n, c, ks)})
    return rows


def mutation_table(scores: Mapping[int, Any]) -> list[dict[str, Any]]:
    """Mutation score per round, pooled over problems.

    Args:
        scores (`Mapping[int, Iterable[MutationScore | dict]]`): round -> the per-problem results of
            :func:`evolvecoder_datasets.mutants.mutation_score` (objects or their ``as_dict()``), or a single
            result per round.

    Returns:
        `list[dict]`: rows ``{"round", "problems", "killed", "considered", "score", "mean_problem_score"}``;
        ``score`` pools all mutants, ``mean_problem_score`` averages per problem (problems without mutants
        are left out of it).

    Example:
        >>> from evolvecoder_datasets.metrics import mutation_table
        >>> mutation_table({1: [{"killed": 3, "considered": 4}, {"killed": 1, "considered": 1}]})
        [{'round': 1, 'problems': 2, 'killed': 4, 'considered': 5, 'score': 0.8, 'mean_problem_score': 0.875}]
    """
    rows = []
    for r in sorted(scores):
        results = scores[r]
        if not isinstance(results, (list, tuple)):
            results = [results]
        dicts = [x.as_dict() if hasattr(x, "as_dict") else dict(x) for x in results]
        killed, considered, score = pooled_score(dicts)
        per_problem = [int(d["killed"]) / int(d["considered"]) for d in dicts if int(d["considered"])]
        rows.append(
            {
                "round": int(r),
                "problems": len(dicts),
                "killed": killed,
                "considered": considered,
                "score": score,
                "mean_problem_score": float(np.mean(per_problem)) if per_problem else float("nan"),
            }
        )
    return rows
