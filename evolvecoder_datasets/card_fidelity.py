"""The "Test fidelity" and "Problem domains" blocks of a round's card and of ``evolvecoder-datasets inspect``:
preformatted rows from the ``fidelity`` and ``domains`` entries of a round's statistics
(:class:`~evolvecoder_datasets.recipe.stats.RoundStats`).

Kept apart from :mod:`evolvecoder_datasets.cards` (which merges :func:`fidelity_context` into the template's
variables), so the block can change without touching the rest of the card. A rate over no program prints ``–``;
a TPR or TNR with its 95% interval in the statistics prints it after the rate (``0.968 (0.95–0.98)``);
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

__all__ = ["FIDELITY_HEADER", "domain_context", "fidelity_context"]

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


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _interval(value: Any) -> str:
    """`` (0.95–0.98)``: a rate's 95% interval after it, or nothing where the statistics have none."""
    if isinstance(value, list | tuple) and len(value) == 2 and all(_is_number(v) for v in value):
        return f" ({value[0]:.2f}–{value[1]:.2f})"
    return ""


def _row(name: Any, entry: Any) -> list[str]:
    entry = entry if isinstance(entry, Mapping) else {}
    cells = []
    for k in _KEYS:
        cell = _fmt(entry.get(k))
        if k in ("tpr", "tnr") and entry.get(k) is not None:
            cell += _interval(entry.get(f"{k}_ci"))
        cells.append(cell)
    return [str(name).replace("|", "\\|")] + cells


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
        verb, rest = what.split(" ", 1)  # "reject a program ...": one problem rejects, two reject
        if not n:
            return f"No problem {verb}s {rest}."
        items = []
        for item in part.get("listed") or ():
            cause = f", {item['cause']}" if item.get("cause") else ""
            items.append(f"`{item.get('id')}` ({_fmt(item.get('programs'))}{cause})")
        more = f" and {n - len(items)} more" if n > len(items) else ""
        programs = part.get("programs")
        subject = f"1 problem {verb}s" if n == 1 else f"{_fmt(n)} problems {verb}"
        count = f"{_fmt(programs)} {'program' if programs == 1 else 'programs'}"
        return f"{subject} {rest} ({count}): " + ", ".join(items) + more + "."

    oracle = fid.get("oracle") if isinstance(fid.get("oracle"), Mapping) else {}
    sizes = oracle.get("inputs_per_problem") if isinstance(oracle.get("inputs_per_problem"), Mapping) else {}
    pool = oracle.get("pool") if isinstance(oracle.get("pool"), Mapping) else {}
    rewrites = oracle.get("rewrites") if isinstance(oracle.get("rewrites"), Mapping) else {}
    oracle_line = ""
    if oracle:
        settings = oracle.get("settings") if isinstance(oracle.get("settings"), Mapping) else {}
        mean = sizes.get("mean")
        asked = ""
        if settings.get("inputs"):
            asked = (f"; the setting asks for {_fmt(settings.get('inputs'))} per problem"
                     + (f" out of {_fmt(settings.get('candidates'))} candidates, and every usable candidate is kept "
                        f"where the reference's values are cheap to read" if settings.get("candidates") else "")
                     + ", fewer where the domain admits fewer distinct inputs")
        sampled = oracle.get("sampled") if isinstance(oracle.get("sampled"), Mapping) else {}
        drawn = ""
        if _is_number(sampled.get("of")) and _is_number(sampled.get("problems")):
            drawn = (f" (a seeded sample of {_fmt(sampled.get('problems'))} of the {_fmt(sampled.get('of'))} problems "
                     f"with a reference; the rest are not sampled, and each rate is given with its 95% Wilson "
                     f"interval)" if sampled["problems"] < sampled["of"]
                     else f" (every one of the {_fmt(sampled.get('of'))} problems with a reference)")
        oracle_line = (
            f"Oracle: {_fmt(oracle.get('problems'))} problems{drawn}, {f'{mean:.1f}' if _is_number(mean) else _fmt(mean)} "
            f"reference-valued inputs per problem on average (min {_fmt(sizes.get('min'))}, max "
            f"{_fmt(sizes.get('max'))}{asked}), generated apart from the published tests and never "
            f"used to choose them. It labels {_fmt(pool.get('right'))} programs of the pool right and "
            f"{_fmt(pool.get('wrong'))} wrong; {_fmt(rewrites.get('right'))} of {_fmt(rewrites.get('generated'))} "
            f"semantics-preserving rewrites of the references agree with it and join the right programs "
            f"(never the published pool)")
        variants = oracle.get("domain_variants") if isinstance(oracle.get("domain_variants"), Mapping) else {}
        if variants.get("generated"):
            oracle_line += (
                f", and so do {_fmt(variants.get('right'))} of {_fmt(variants.get('generated'))} variants that differ "
                f"from the references only outside the problems' domains (one raises ValueError there, one returns "
                f"None: kind `variant`)")
        domains = oracle.get("domains") if isinstance(oracle.get("domains"), Mapping) else {}
        oracle_line += (". TPR counts the programs that agree with the reference on every oracle input as right"
                        + (" (inputs drawn inside each problem's domain: "
                           + ", ".join(f"{_fmt(v)} {k}" for k, v in sorted(domains.items())) + ")" if domains else "")
                        + ".")
    missing = fid.get("no_oracle") if isinstance(fid.get("no_oracle"), Mapping) else {}
    total = sum(int(v) for v in missing.values() if isinstance(v, int))
    no_oracle = ""
    if total:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(missing.items()))
        no_oracle = f"{total} problems have no oracle ({reasons}): no figure is given for them."
    not_sampled = fid.get("not_sampled")
    if _is_number(not_sampled) and not_sampled:
        no_oracle = (no_oracle + " " if no_oracle else "") + (
            f"{_fmt(not_sampled)} problems were not sampled for the oracle (not an error): no figure is given for them.")
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


def domain_context(stats: Mapping[str, Any]) -> dict[str, Any]:
    """The "Problem domains" block: ``domain_line`` (how the problems' domains were obtained and their own asserts
    found outside them), ``domain_rules`` and ``domain_rows`` (per round, inputs and tests each rule left out).

    Example:
        >>> ctx = domain_context({"domains": {"problems": {"statement": 3}, "seed_violations": 1,
        ...                                   "out_of_domain": {"1": {"statement": 7, "sign": 2}}}})
        >>> ctx["domain_rules"], ctx["domain_rows"]
        (['sign', 'statement'], [['1', '2', '7']])
        >>> domain_context({})["domain_line"]
        ''
    """
    domains = stats.get("domains") if isinstance(stats.get("domains"), Mapping) else {}
    if not domains:
        return {"domain_line": "", "domain_rules": [], "domain_rows": []}
    hows = domains.get("problems") if isinstance(domains.get("problems"), Mapping) else {}
    line = ("Inputs stay inside each problem's domain: "
            + ", ".join(f"{_fmt(v)} problems {k}" for k, v in sorted(hows.items()))
            + " (statement: a precondition written from the problem's statement; constraints: one read from its "
            "Constraints block; model: one the test writer wrote, checked against the problem's own inputs; inferred: "
            "the shape its own inputs show). "
            + f"{_fmt(domains.get('seed_violations'))} of the problems' own asserts lie outside it and were dropped.")
    outside = domains.get("out_of_domain") if isinstance(domains.get("out_of_domain"), Mapping) else {}
    rules = sorted({str(rule) for per in outside.values() if isinstance(per, Mapping) for rule in per})
    rows = [[str(r)] + [_fmt((outside[r] or {}).get(rule, 0)) for rule in rules]
            for r in sorted(outside, key=lambda x: (not str(x).isdigit(), int(x) if str(x).isdigit() else 0, str(x)))]
    return {"domain_line": line, "domain_rules": rules, "domain_rows": rows}
