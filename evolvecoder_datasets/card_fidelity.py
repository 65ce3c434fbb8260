"""The "Test fidelity" block of a round's card and of ``evolvecoder-datasets inspect``: preformatted rows from the
``fidelity`` entry of a round's statistics (:class:`~evolvecoder_datasets.recipe.stats.RoundStats`).

Kept apart from :mod:`evolvecoder_datasets.cards` (which merges :func:`fidelity_context` into the template's
variables), so the block can change without touching the rest of the card. A rate over no program prints ``–``;
problems without an oracle (no reference, as LeetCode seeds) are named with their reason, never given a number.

Example:
    >>> from evolvecoder_datasets.card_fidelity import fidelity_context
    >>> stats = {"round": 1, "fidelity": {"suite": {"right": 4, "wrong": 10, "tpr": 1.0, "tnr": 0.9, "fpr": 0.1,
    ...          "fnr": 0.0}, "by_round": {"0": {"right": 4, "wrong": 10, "tpr": 1.0, "tnr": 0.8, "fpr": 0.2,
    ...          "fnr": 0.0}}, "no_oracle": {"no_reference": 3}}}
    >>> ctx = fidelity_context(stats)
    >>> ctx["fidelity_rows"][0], ctx["fidelity_no_oracle"]
    (['0', '4', '10', '1.000', '0.800', '0.200', '0.000'], '3 problems have no oracle (no_reference 3): no figure is given for them.')
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["FIDELITY_HEADER", "fidelity_context"]

#: Columns of the per-round, per-kind and per-method tables.
FIDELITY_HEADER = ["right", "wrong", "TPR", "TNR", "FPR", "FNR"]
_KEYS = ("right", "wrong", "tpr", "tnr", "fpr", "fnr")


def _fmt(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return "–"
    if isinstance(value, int):
        return f"{value:,}"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value).replace("|", "\\|")
    return "nan" if math.isnan(number) else f"{number:.3f}"


def _row(name: Any, entry: Any) -> list[str]:
    entry = entry if isinstance(entry, Mapping) else {}
    return [str(name).replace("|", "\\|")] + [_fmt(entry.get(k)) for k in _KEYS]


def _order(key: Any) -> tuple[bool, Any]:
    text = str(key)
    return (not text.isdigit(), int(text) if text.isdigit() else text)


def fidelity_context(stats: Mapping[str, Any]) -> dict[str, Any]:
    """The template variables of the fidelity block (all empty when the statistics have no ``fidelity``).

    Returns:
        `dict`: ``fidelity_rows`` (per round: round + :data:`FIDELITY_HEADER`), ``fidelity_kind_rows`` and
        ``fidelity_method_rows`` (this round, per program kind and per test-writing method), ``fidelity_rule_rows``
        (``main``: the paper's rule and the reduced suite: rule, tests, then the header), ``fidelity_rejects`` and
        ``fidelity_accepts`` (one line each naming the problems), ``fidelity_oracle`` (what the oracle is) and
        ``fidelity_no_oracle`` (the problems without one).

    Example:
        >>> fidelity_context({})["fidelity_rows"]
        []
    """
    fid = stats.get("fidelity")
    if not isinstance(fid, Mapping):
        return {"fidelity_rows": [], "fidelity_kind_rows": [], "fidelity_method_rows": [], "fidelity_rule_rows": [],
                "fidelity_rejects": "", "fidelity_accepts": "", "fidelity_oracle": "", "fidelity_no_oracle": ""}
    by_round = fid.get("by_round") if isinstance(fid.get("by_round"), Mapping) else {}
    rows = [_row(r, by_round[r]) for r in sorted(by_round, key=_order)]
    kinds = fid.get("by_kind") if isinstance(fid.get("by_kind"), Mapping) else {}
    methods = fid.get("by_method") if isinstance(fid.get("by_method"), Mapping) else {}
    rules = fid.get("rules") if isinstance(fid.get("rules"), Mapping) else {}
    rule_rows = []
    names = {"groups": "paper: at most 5 tests per identical pass vector", "cover": "reduced: greedy set cover"}
    for rule in ("groups", "cover"):
        if isinstance(rules.get(rule), Mapping):
            entry = rules[rule]
            published = " (published)" if rules.get("published") == rule else ""
            rule_rows.append([names[rule] + published, _fmt(entry.get("tests"))] + _row("", entry)[1:])

    def listed(key: str, what: str) -> str:
        part = fid.get(key) if isinstance(fid.get(key), Mapping) else {}
        n = part.get("problems") or 0
        if not n:
            return f"No problem {what}."
        items = []
        for item in part.get("listed") or ():
            cause = f", {item['cause']}" if item.get("cause") else ""
            items.append(f"`{item.get('id')}` ({_fmt(item.get('programs'))}{cause})")
        more = f" and {n - len(items)} more" if n > len(items) else ""
        return f"{_fmt(n)} problems {what} ({_fmt(part.get('programs'))} programs): " + ", ".join(items) + more + "."

    oracle = fid.get("oracle") if isinstance(fid.get("oracle"), Mapping) else {}
    sizes = oracle.get("inputs_per_problem") if isinstance(oracle.get("inputs_per_problem"), Mapping) else {}
    pool = oracle.get("pool") if isinstance(oracle.get("pool"), Mapping) else {}
    rewrites = oracle.get("rewrites") if isinstance(oracle.get("rewrites"), Mapping) else {}
    oracle_line = ""
    if oracle:
        oracle_line = (
            f"Oracle: {_fmt(oracle.get('problems'))} problems, {_fmt(sizes.get('mean'))} reference-valued inputs per "
            f"problem on average (min {_fmt(sizes.get('min'))}), generated apart from the published tests and never "
            f"used to choose them. It labels {_fmt(pool.get('right'))} programs of the pool right and "
            f"{_fmt(pool.get('wrong'))} wrong; {_fmt(rewrites.get('right'))} of {_fmt(rewrites.get('generated'))} "
            f"semantics-preserving rewrites of the references agree with it and join the right programs "
            f"(never the published pool).")
    missing = fid.get("no_oracle") if isinstance(fid.get("no_oracle"), Mapping) else {}
    total = sum(int(v) for v in missing.values() if isinstance(v, int))
    no_oracle = ""
    if total:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(missing.items()))
        no_oracle = f"{total} problems have no oracle ({reasons}): no figure is given for them."
    return {
        "fidelity_rows": rows,
        "fidelity_kind_rows": [_row(k, kinds[k]) for k in sorted(kinds)],
        "fidelity_method_rows": [_row(m, methods[m]) for m in sorted(methods)],
        "fidelity_rule_rows": rule_rows,
        "fidelity_rejects": listed("rejects_right", "reject a program the oracle calls right"),
        "fidelity_accepts": listed("accepts_wrong", "accept a program the oracle calls wrong"),
        "fidelity_oracle": oracle_line,
        "fidelity_no_oracle": no_oracle,
    }
