"""One evolution round: adversarial, discriminative and search-written tests from the pass matrix, run and appended.

For each problem, from the pass matrix ``M`` (solutions x tests) at the start of the round:

1. **context**: tests that fewer than ``hide_below`` of the solutions pass are hidden (probably wrong);
2. **adversarial**: the two strongest programs and the three most mutually different ones from the pass-rate band
   (:func:`~evolvecoder_datasets.passmatrix.select_adversarial`) are shown with the visible tests, and the model
   writes tests meant to break them;
3. **discriminative**: one test per identical pass vector stays in the context, five programs that behave alike are
   picked (:func:`~evolvecoder_datasets.passmatrix.select_similar`) and the model writes tests that split them;
4. the new tests are parsed, de-duplicated against every earlier test, run against the **whole** pool (and the
   reference solution, when the refine stage confirmed one; tests it fails are dropped;
   :mod:`~evolvecoder_datasets.stages.support.new_tests`), and appended with ``test_origin = {round, method}``. The
   pass matrix grows by the new columns.

5. **search** (optional, no LLM; :mod:`~evolvecoder_datasets.search.writer`): after the prompts' tests are in, new
   inputs are mutated from the problem's asserts, valued by its confirmed reference in the sandbox, and kept when
   they kill programs the grown suite lets pass or split programs it cannot tell apart. A round may use search alone
   (``adversarial=False, discriminative=False, search=SearchConfig()``), then no test-writer model is needed.

As in the released EvolveCoder code, both prompts see the start-of-round matrix and are sent together
(``sequential=True`` runs the adversarial tests first and builds the discriminative prompt from the grown matrix).
The discriminative prompt asks that each new test be passed by at least one of the five programs and failed by at
least one; the released code only asks. Here the split is **checked** on the programs that were shown: the count of
tests that fail it is recorded in ``evolve_log``, and ``drop_failed_split=True`` removes them. Nothing else is removed
until the final filter.

Columns read: ``id``, ``question``, ``tests``, ``solutions``, ``pass_matrix``; optional ``test_origin``,
``statuses``, ``drop_reason``, ``reference_solutions``, ``reference_ok``, ``evolve_log``, ``time_limit_s``; for
stdin/stdout problems ``inputs``, ``outputs``, ``language``, ``checker``, ``float_tol``, ``validator`` (their cases
grow by the search: :mod:`~evolvecoder_datasets.search.stdio_writer`, written back to ``inputs``/``outputs``).
Columns written: ``tests``, ``test_origin``, ``pass_matrix``, ``statuses`` (when present), ``round``, ``evolve_log``
(one entry per round and method: the programs shown, selection notes, counts, errors), ``time_limit_s`` (when
present: the pool runs the new tests under the problem's calibrated limit, raised where the reference needs more on
them; see :mod:`evolvecoder_datasets.limits`).

Example:
    >>> from evolvecoder_datasets.llm import LLMConfig
    >>> from evolvecoder_datasets.stages.evolve import EvolveConfig, evolve_dataset
    >>> config = EvolveConfig(llm=LLMConfig(model="gpt-4o-mini", cache_dir="runs/demo"), round=1)
    >>> round1 = evolve_dataset(round0, config)  # doctest: +SKIP
    >>> round1[0]["evolve_log"][0]["method"], round1[0]["evolve_log"][0]["added"]  # doctest: +SKIP
    ('adversarial', 17)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import passmatrix, schema
from ..errors import ConfigError, LLMResponseError
from ..llm.config import LLMConfig
from ..prompts import adversarial as adversarial_prompt
from ..prompts import discriminative as discriminative_prompt
from ..prompts import domain as domain_prompt
from ..prompts import inputs as inputs_prompt
from ..schema import TIME_LIMIT
from ..search.valued import ValueRequest
from ..search.writer import SearchConfig
from .execute import ExecuteConfig
from ..checks import (
    check_fraction,
    check_list_cells,
    check_on_llm_error,
    check_positive,
    check_text_cells,
)
from ..code_names import independent_tests, normalise_test, reference_for
from .support.llm_stage import LLMStageConfig, parse_each, raise_unrecordable
from .support.model_domains import model_domains
from .support.model_inputs import input_call, read_inputs, value_answers
from .support.round_state import (SEARCH_STATE, RoundProblem, append_tests, assign_domains, log_entry, round_problem,
                                  search_round, search_states)
from .support.round_columns import round_columns
from .support.stdio_round import StdioRoundProblem, stdio_model_round, stdio_problem, stdio_search_round
from .support.resources import get_backend
from ..seeding import stable_int

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["METHODS", "EvolveConfig", "evolve", "evolve_dataset"]

METHODS = ("adversarial", "discriminative", "search")
LLM_METHODS = ("adversarial", "discriminative")
TEST_MODES = ("inputs", "asserts")
_PROMPTS = {"adversarial": adversarial_prompt, "discriminative": discriminative_prompt}
_STAGE_VERSION = "3"


@dataclass(frozen=True)
class EvolveConfig(LLMStageConfig):
    """Settings of one evolution round (they enter the ``datasets`` fingerprint).

    Args:
        llm (`LLMConfig`, *optional*): the test-writer model. Required to run; a recipe fills in its shared one.
        round (`int`, defaults to 1): the round number written into ``test_origin`` and ``round``.
        num_tests (`int`, defaults to 20): new tests asked for per prompt.
        answers (`int`, defaults to 1): answers sampled per prompt (the request's ``n``, each with a seed of its
            own); the tests or inputs of all of them join the problem's candidates, duplicates once. A backend that
            keeps its prompts (llama.cpp) processes a prompt once for all its answers, so a second answer costs its
            generated tokens only.
        adversarial (`bool`, defaults to `True`): send the adversarial prompt.
        discriminative (`bool`, defaults to `True`): send the discriminative prompt.
        search (`SearchConfig`, *optional*): also write tests by input search against the pool, after the prompts'
            tests are in (method ``search``, no LLM); its seed is the round's ``seed``. ``None`` (default) is off.
        test_mode (`str`, defaults to ``"inputs"``): what the prompts ask the model for. ``"inputs"``: calls of the
            problem's function with literal arguments (:mod:`~evolvecoder_datasets.prompts.inputs`), valued by the
            problem's confirmed reference in the sandbox, so no test is wrong about the reference; a problem without
            a reference or without a literal call in its tests falls back to whole asserts (noted in its log).
            ``"asserts"``: the paper's whole asserts, expected values written by the model.
        value_cpu_s (`float`, defaults to 0.1): CPU seconds the reference may take on a model's input (input mode;
            a problem's calibrated limit, the ``time_limit_s`` column, raises it); an input it does not finish,
            raises on or answers with no plain value gives no test.
        domain_from_model (`bool`, defaults to `True`): at a problem's first round, where no precondition ships
            with its statement (:mod:`~evolvecoder_datasets.sources.statement_domains`) and ``llm`` is set, ask the
            model for one (checked in the sandbox against the problem's own inputs before it replaces the domain the
            seeds show: :mod:`~evolvecoder_datasets.stages.support.model_domains`). ``False``: the inferred domain.
        without_reference (`str`, defaults to ``"asserts"``): in input mode, what a problem gets whose inputs no
            reference can value (no confirmed reference, or no literal call in its tests): ``"asserts"`` (the paper's
            whole-assert prompt) or ``"skip"`` (no prompt; its log says why).
        sequential (`bool`, defaults to `False`): run the adversarial tests first and build the discriminative
            prompt from the grown matrix (the released code builds both from the start-of-round matrix).
        hide_below (`float`, defaults to 0.1): tests with a lower pass rate are hidden from both prompts.
        hide_above (`float`, *optional*): tests with a higher pass rate are hidden too (the paper's upper cut;
            off in the released code).
        n_top (`int`, defaults to 2): strongest programs shown to the adversarial prompt.
        n_diverse (`int`, defaults to 3): diverse programs from the band shown to the adversarial prompt.
        band (`tuple[float, float]`, defaults to `(0.4, 0.9)`): pass-rate band of the diverse programs.
        n_similar (`int`, defaults to 5): programs shown to the discriminative prompt.
        drop_failed_split (`bool`, defaults to `False`): remove discriminative tests that do not split the shown
            programs (at least one passes, at least one fails); they are counted either way.
        reference_check (`bool`, defaults to `True`): drop new tests the problem's confirmed reference fails.
        select_from (`tuple[str, ...]`, *optional*): only programs of these models are shown to the prompts;
            empty (default) means every program of the pool, mutants included.
        temperature (`float`, *optional*, defaults to 0.7): sampling temperature of the test writer.
        max_tokens (`int`, *optional*, defaults to 4096): generation cap per answer.
        seed (`int`, defaults to 0): seed of every random choice (per problem and round) and of the request seeds.
        execute (`ExecuteConfig`, *optional*): sandbox settings for the new tests.
        on_llm_error (`str`, defaults to ``"raise"``): ``"raise"`` stops the stage when a request fails after all
            retries (the answers received so far stay cached, so a rerun resumes); ``"record"`` marks the problem
            instead and carries on.
        version (`str`): stage and prompt versions; a change invalidates cached results.

    Raises:
        ConfigError: every method disabled, a round below 1, a rate outside [0, 1] or a count below 1.

    Example:
        >>> EvolveConfig(round=2, sequential=True, drop_failed_split=True).version
        'evolve-stage-3+adversarial-1+discriminative-1+inputs-3+domain-1'
    """

    llm: LLMConfig | None = None
    round: int = 1
    num_tests: int = 20
    answers: int = 1
    adversarial: bool = True
    discriminative: bool = True
    search: SearchConfig | None = None
    test_mode: str = "inputs"
    value_cpu_s: float = 0.1
    domain_from_model: bool = True
    without_reference: str = "asserts"
    sequential: bool = False
    hide_below: float = 0.1
    hide_above: float | None = None
    n_top: int = 2
    n_diverse: int = 3
    band: tuple[float, float] = (0.4, 0.9)
    n_similar: int = 5
    drop_failed_split: bool = False
    reference_check: bool = True
    select_from: tuple[str, ...] = ()
    temperature: float | None = 0.7
    max_tokens: int | None = 4096
    seed: int = 0
    execute: ExecuteConfig = field(default_factory=ExecuteConfig)
    on_llm_error: str = "raise"
    version: str = (f"evolve-stage-{_STAGE_VERSION}+{adversarial_prompt.VERSION}+{discriminative_prompt.VERSION}"
                    f"+{inputs_prompt.VERSION}+{domain_prompt.VERSION}")

    def __post_init__(self) -> None:
        check_on_llm_error(self.on_llm_error)
        if self.test_mode not in TEST_MODES:
            raise ConfigError(f"EvolveConfig.test_mode must be one of {TEST_MODES}, got {self.test_mode!r}")
        if self.without_reference not in ("asserts", "skip"):
            raise ConfigError(f"EvolveConfig.without_reference must be 'asserts' or 'skip', got "
                              f"{self.without_reference!r}")
        if not self.value_cpu_s > 0:
            raise ConfigError(f"EvolveConfig.value_cpu_s must be positive, got {self.value_cpu_s}")
        object.__setattr__(self, "band", tuple(float(b) for b in self.band))
        object.__setattr__(self, "select_from", tuple(self.select_from))
        if self.search is not None and not isinstance(self.search, SearchConfig):
            raise ConfigError(f"EvolveConfig.search must be a SearchConfig or None, got {type(self.search).__name__}")
        if not self.methods:
            raise ConfigError("EvolveConfig needs adversarial, discriminative or search enabled")
        check_positive("round", self.round)
        check_positive("num_tests", self.num_tests)
        check_positive("answers", self.answers)
        check_positive("n_top", self.n_top, minimum=0)
        check_positive("n_diverse", self.n_diverse, minimum=0)
        check_positive("n_similar", self.n_similar)
        check_fraction("hide_below", self.hide_below)
        if self.hide_above is not None:
            check_fraction("hide_above", self.hide_above)
        if len(self.band) != 2 or not 0.0 <= self.band[0] <= self.band[1] <= 1.0:
            raise ConfigError(f"band must be (low, high) with 0 <= low <= high <= 1, got {self.band}")
        self._check_llm_field()

    @property
    def methods(self) -> tuple[str, ...]:
        """The enabled methods in the order they run: adversarial, discriminative, search."""
        return tuple(m for m in METHODS if getattr(self, m) not in (False, None))

    @property
    def llm_methods(self) -> tuple[str, ...]:
        """The enabled methods that ask the test-writer model.

        Example:
            >>> EvolveConfig(discriminative=False, search=SearchConfig()).llm_methods
            ('adversarial',)
        """
        return tuple(m for m in self.methods if m in LLM_METHODS)

    def require_writer(self) -> None:
        """Raise :class:`ConfigError` when a prompt method is on and ``llm`` is unset (search alone needs none).

        Example:
            >>> EvolveConfig(adversarial=False, discriminative=False, search=SearchConfig()).require_writer()
        """
        if self.llm_methods:
            self.require_llm()


def _log_entry(config: EvolveConfig, method: str, **values: Any) -> dict[str, Any]:
    return log_entry(config.round, method, **{"requested": config.num_tests * config.answers, **values})


def _prompt_for(problem: RoundProblem, method: str, config: EvolveConfig) -> tuple[Any, list[int], list[str], str | None]:
    """The request for ``method`` built from the problem's current matrix, the programs shown, the notes and the
    callee whose inputs the answer gives (``None``: the answer gives whole asserts)."""
    eligible = problem.eligible(config.select_from)
    Me = problem.M[eligible]
    visible = passmatrix.hide_tests(Me, config.hide_below, max_pass_rate=config.hide_above)
    if method == "adversarial":
        shown_tests = visible
        selection = passmatrix.select_adversarial(
            Me[:, shown_tests], rng=problem.rng, n_top=config.n_top, n_diverse=config.n_diverse, band=config.band,
            min_rate=config.hide_below,
        )
    else:
        shown_tests = passmatrix.dedupe_tests(Me, rng=problem.rng, keep=1, among=visible)
        selection = passmatrix.select_similar(Me[:, shown_tests], rng=problem.rng, k=config.n_similar)
    programs = eligible[selection.indices]
    sampling = {"temperature": config.temperature, "max_tokens": config.max_tokens, "n": config.answers,
                "seed": stable_int(config.seed, problem.id, config.round, method) & 0x7FFFFFFF}
    notes = list(selection.notes)
    call, fallback = input_call(problem.suite.tests, problem.search_reference) if config.test_mode == "inputs" \
        else (None, None)
    if call is not None:
        passed = "all of them"
        if method == "adversarial" and len(programs) and len(shown_tests):
            row = problem.M[programs[0], shown_tests]
            passed = "all of them" if row.all() else f"{int(row.sum())} of {len(shown_tests)}"
        request = inputs_prompt.build_request(
            method, problem.question, call.callee, [problem.codes[p] for p in programs],
            [problem.suite.tests[t] for t in shown_tests], example=call.seeds[0], num_tests=config.num_tests,
            passed=passed, reference=problem.search_reference, **sampling)
        return request, programs.tolist(), notes, call.callee
    if fallback and config.without_reference == "skip":
        return None, programs.tolist(), notes + [f"skipped: {fallback}"], None
    if fallback:
        notes.append(f"asserts: {fallback}")
    request = _PROMPTS[method].build_request(
        problem.question,
        [problem.codes[p] for p in programs],
        [problem.suite.tests[t] for t in shown_tests],
        problem.M[np.ix_(programs, shown_tests)],
        num_tests=config.num_tests,
        **sampling,
    )
    return request, programs.tolist(), notes, None


def _ask(problems: list[RoundProblem], method: str, config: EvolveConfig) -> list[tuple[Any, list[int], list[str], str | None]]:
    """Each problem's request for ``method``, built from its current matrix."""
    return [_prompt_for(p, method, config) for p in problems]


def _parse_answer(problem: RoundProblem, method: str, callee: str | None, answer: Any, entry: dict[str, Any],
                  config: EvolveConfig) -> list[str] | ValueRequest | None:
    """One answer's whole asserts, or (input mode) its inputs as a request for the reference's values."""
    if answer is None:  # not asked (input mode without a reference, ``without_reference="skip"``)
        entry["requested"] = 0
        return []
    if isinstance(answer, BaseException):
        raise_unrecordable(answer)
        entry["error"] = f"llm: {type(answer).__name__}"
        return []
    entry["answers"] = len(answer.texts)
    if callee is not None:
        return read_inputs(answer.texts, callee, problem.search_reference or "", problem.limit, entry,
                           value_cpu_s=config.value_cpu_s, domain=problem.domain)
    try:
        parsed = parse_each(answer.texts, _PROMPTS[method].parse, entry)
    except LLMResponseError as err:
        entry["error"] = f"parse: {err.reason}"
        return []
    tests = [test for result in parsed for test in result.tests]
    entry["parsed"] = len(tests)
    return tests


def _collect(
    problems: list[RoundProblem], method: str, built: list[tuple[Any, list[int], list[str], str | None]],
    answers: list[Any], config: EvolveConfig,
) -> None:
    """Parse one method's answers (value the inputs of input-mode answers with each reference), run the new tests
    against each pool (and reference), append what survives."""
    entries = [_log_entry(config, method, programs=programs, notes=notes) for _, programs, notes, _ in built]
    parsed = [_parse_answer(problem, method, callee, answer, entry, config)
              for problem, (_, _, _, callee), answer, entry in zip(problems, built, answers, entries)]
    asked = [k for k, p in enumerate(parsed) if isinstance(p, ValueRequest)]
    if asked:
        valued = value_answers([parsed[k] for k in asked], [entries[k] for k in asked], config.execute,
                               value_cpu_s=config.value_cpu_s)
        for k, tests in zip(asked, valued):
            parsed[k] = tests
    candidates: list[list[str]] = []
    for problem, tests, entry in zip(problems, parsed, entries):
        tests = tests or []  # an input-mode answer without calls: its reason is in the entry
        assert isinstance(tests, list)
        seen = {normalise_test(t) for t in problem.suite.tests}
        fresh = []
        for test in tests:
            key = normalise_test(test)
            if key in seen:
                entry["duplicates"] += 1
                continue
            seen.add(key)
            fresh.append(test)
        fresh, dependent = independent_tests(fresh)
        entry["dependent"] = dependent
        candidates.append(fresh)
    append_tests(problems, method, candidates, entries, round_=config.round, execute=config.execute,
                 drop_failed_split=config.drop_failed_split)


def _domain_writer(config: EvolveConfig) -> Any:
    """The model's checked preconditions for problems whose domain is only inferred (``None`` without a model)."""
    if config.llm is None or not config.domain_from_model:
        return None

    def propose(problems: list[RoundProblem], seeds: list[tuple]) -> list[Any]:
        from ..execution import shared_sandbox

        sampling = {"temperature": config.temperature, "max_tokens": min(config.max_tokens or 512, 512)}
        return model_domains(problems, seeds, backend=get_backend(config.require_llm()),
                             sandbox=shared_sandbox(config.execute, mode="fast"), round_=config.round,
                             seed=config.seed, sampling=sampling, record=config.on_llm_error == "record")

    return propose


def _run_round(problems: list[RoundProblem], config: EvolveConfig, *, search: bool = True) -> None:
    """Ask, parse, run and append every enabled method (the search only with ``search``).

    By default every prompt is built from the start-of-round matrix and all requests of the round go to the
    backend in one concurrent call; with ``sequential`` each method sees the tests the previous one added. The
    search runs last, on the grown matrix.
    """
    if config.llm_methods:
        _run_prompts(problems, config)
    if config.search is not None and search:
        search_round(problems, config.search, seed=config.seed, round_=config.round, execute=config.execute)


def _generate(backend: Any, requests: list[Any], record: bool, desc: str) -> list[Any]:
    """The answers to ``requests`` in order; a ``None`` request (a problem not asked) gets ``None``."""
    asked = [r for r in requests if r is not None]
    answers = iter(backend.generate(asked, return_exceptions=record, desc=desc) if asked else [])
    return [None if r is None else next(answers) for r in requests]


def _run_prompts(problems: list[RoundProblem], config: EvolveConfig) -> None:
    backend = get_backend(config.require_llm())
    record = config.on_llm_error == "record"
    if config.sequential:
        for method in config.llm_methods:
            built = _ask(problems, method, config)
            answers = _generate(backend, [b[0] for b in built], record, f"round {config.round} {method}")
            _collect(problems, method, built, answers, config)
        return
    built = {method: _ask(problems, method, config) for method in config.llm_methods}
    requests = [b[0] for method in config.llm_methods for b in built[method]]
    answers = _generate(backend, requests, record, f"round {config.round}")
    for k, method in enumerate(config.llm_methods):
        _collect(problems, method, built[method], answers[k * len(problems) : (k + 1) * len(problems)], config)


def evolve(batch: dict[str, list], *, config: EvolveConfig, defer_search: bool = False) -> dict[str, list]:
    """Batched ``Dataset.map`` function: run one evolution round on each problem.

    Rows that are dropped or have no solutions pass through with a log entry saying why. A stdin/stdout problem
    (``inputs``/``outputs``, no ``tests``) grows by the stdin texts the model writers propose and by the search
    (:mod:`~.support.stdio_round`; its reference, the first of ``reference_solutions`` in the row's ``language``,
    values every text, judged by its ``checker``); in the whole-assert mode without the search it passes through,
    noted ``stdin_problem``.

    Args:
        batch (`dict[str, list]`): columns ``id``, ``question``, ``tests``, ``solutions``, ``pass_matrix``;
            optional ``test_origin``, ``statuses``, ``drop_reason``, ``reference_solutions``, ``reference_ok``,
            ``evolve_log``.
        config (`EvolveConfig`): the round's settings.
        defer_search (`bool`, defaults to `False`): run all but the assert problems' search, and return each row's
            state for it (:mod:`~.support.split_round`).

    Returns:
        `dict[str, list]`: ``tests``, ``test_origin``, ``pass_matrix``, ``round``, ``evolve_log`` (and
        ``statuses`` when the batch has it).

    Raises:
        SchemaError: a required column is missing, a live row's ``question`` is not a string or its ``tests`` or
            ``solutions`` not a list, or a pass matrix does not match its solutions and tests.
        ConfigError: ``config.llm`` is unset while a prompt method is on.
        LLMCacheMissError: a replayed run met a request its cache does not hold.

    Example:
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
        >>> batch = {"id": ["X_1"], "question": ["Write `def inc(x: int) -> int` returning x + 1."],
        ...          "tests": [["assert inc(-1) == 0"]], "pass_matrix": [[[True], [True]]],
        ...          "solutions": [[{"model": "m", "sample": 0, "code": "def inc(x):\\n    return x + 1"},
        ...                         {"model": "m", "sample": 1, "code": "def inc(x):\\n    return abs(x) + 1"}]]}
        >>> with ScriptedOpenAIServer(lambda body: '{"tests": ["assert inc(-3) == -2"]}') as server:
        ...     cfg = EvolveConfig(llm=LLMConfig(model="m", base_url=server.base_url), discriminative=False)
        ...     out = evolve(batch, config=cfg)
        >>> out["tests"][0], out["pass_matrix"][0]
        (['assert inc(-1) == 0', 'assert inc(-3) == -2'], [[True, True], [True, False]])
    """
    schema.check_columns(batch, [schema.ID, schema.QUESTION, schema.TESTS, schema.SOLUTIONS, schema.PASS_MATRIX],
                         stage="evolve")
    config.require_writer()
    n = len(batch[schema.ID])
    drops = batch.get(schema.DROP_REASON) or [None] * n
    inputs = batch.get(schema.INPUTS) or [None] * n
    references = batch.get(schema.REFERENCE_SOLUTIONS) or [None] * n
    reference_ok = batch.get(schema.REFERENCE_OK) or [False] * n
    limits = batch.get(TIME_LIMIT) or [None] * n
    logs = [list(log or ()) for log in (batch.get(schema.EVOLVE_LOG) or [None] * n)]
    rounds = list(batch.get(schema.ROUND) or [0] * n)
    live_rows = [i for i in range(n) if not drops[i]]
    check_text_cells(batch, schema.QUESTION, stage="evolve", rows=live_rows)
    check_list_cells(batch, schema.TESTS, stage="evolve", rows=live_rows)
    check_list_cells(batch, schema.SOLUTIONS, stage="evolve", items="solutions", rows=live_rows)

    problems: list[RoundProblem | None] = []
    stdio: dict[int, StdioRoundProblem] = {}
    for i in range(n):
        tests = list(batch[schema.TESTS][i] or ())
        solutions = batch[schema.SOLUTIONS][i] or []
        skip = None
        if drops[i]:
            skip = "dropped"
        elif not solutions:
            skip = "empty_pool"
        elif not tests and inputs[i]:
            skip = _stdio_problem(batch, i, config, stdio, references[i], reference_ok[i], limits[i])
        if skip is not None or i in stdio:
            if skip is not None and skip != "dropped":
                logs[i].append(_log_entry(config, "skipped", notes=[skip], requested=0))
            problems.append(None)
            continue
        confirmed = reference_for(references[i] or (), tests) if reference_ok[i] else None
        problems.append(round_problem(batch, i, seed=config.seed, round_=config.round,
                                      reference=confirmed if config.reference_check else None,
                                      search_reference=confirmed))

    live = [p for p in problems if p is not None]
    if live:
        cells = batch.get(schema.DOMAIN) or [None] * n
        # a problem's first round: nothing in its log from an earlier evolution round (its own asserts are judged)
        first = [not any(int(e.get("round") or 0) >= 1 and e.get("method") != "skipped" for e in logs[i])
                 for i, p in enumerate(problems) if p is not None]
        assign_domains(live, [cells[i] for i, p in enumerate(problems) if p is not None], round_=config.round,
                       execute=config.execute, propose=_domain_writer(config), first=first)
        _run_round(live, config, search=not defer_search)
    if stdio and config.llm_methods and config.test_mode == "inputs":
        stdio_model_round(list(stdio.values()), config)
    if stdio and config.search is not None:
        stdio_search_round(list(stdio.values()), config.search, seed=config.seed, round_=config.round,
                           execute=config.execute)

    out = round_columns(batch, problems, logs, rounds, limits, config.round, stdio)
    if defer_search:  # the assert problems' search runs in a second pass (:mod:`.support.split_round`)
        out[SEARCH_STATE] = search_states(problems)
    return out


def _stdio_problem(batch: dict[str, list], i: int, config: EvolveConfig, stdio: dict[int, StdioRoundProblem],
                   references: Any, reference_ok: Any, limit: Any) -> str | None:
    """Row ``i``, a stdin/stdout problem, as a live problem of the round (``None``), or why it is passed through:
    its cases grow by stdin texts the model writers propose (never in the whole-assert mode) and by the search."""
    if config.search is None and (config.test_mode == "asserts" or not config.llm_methods):
        return "stdin_problem"
    reference = (list(references or ()) or [None])[0] if reference_ok else None
    stdio[i] = stdio_problem(batch, i, reference=reference, limit=limit)
    return None


def evolve_features(features: Any, *, defer_search: bool = False) -> Any:
    """Output ``datasets.Features`` of :func:`evolve_dataset` given the input features (with ``defer_search``,
    the first pass's column for the search, :data:`.support.round_state.SEARCH_STATE`, too).

    Example:
        >>> sorted(evolve_features({"id": None}))
        ['domain', 'evolve_log', 'id', 'pass_matrix', 'round', 'test_origin', 'tests']
    """
    from datasets import Features, Value

    out = dict(features)
    problem = schema.problem_features()
    for name in (schema.TESTS, schema.TEST_ORIGIN, schema.ROUND):
        out[name] = problem[name]
    out[schema.PASS_MATRIX] = schema.solution_features()[schema.PASS_MATRIX]
    if schema.STATUSES in features:
        out[schema.STATUSES] = schema.solution_features()[schema.STATUSES]
    out[schema.EVOLVE_LOG] = schema.evolve_log_feature()
    out[schema.DOMAIN] = schema.domain_feature()
    if defer_search:
        out[SEARCH_STATE] = Value("string")
    return Features(out)


def evolve_dataset(ds: Dataset, config: EvolveConfig, *, batch_size: int = 16, num_proc: int | None = None,
                   defer_search: bool = False) -> Dataset:
    """Run one evolution round over ``ds`` (a thin wrapper over ``ds.map(evolve, batched=True)``).

    Args:
        ds (`datasets.Dataset`): problems with their pool and pass matrix (the output of the execute stage, or
            of the previous round).
        config (`EvolveConfig`): the round's settings; ``config.llm`` must be set unless search is the only method.
        batch_size (`int`, defaults to 16): problems whose requests and executions are sent together.
        num_proc (`int`, *optional*): processes for ``Dataset.map``.
        defer_search (`bool`, defaults to `False`): leave the assert problems' search to a second pass
            (:func:`~evolvecoder_datasets.stages.support.split_round.evolve_search`), each row's state for it in a
            column of its own; the recipe does so on a cluster, where that pass runs on the nodes.

    Returns:
        `datasets.Dataset`: ``ds`` with the round's tests appended.

    Raises:
        SchemaError: a required column is missing or a pass matrix has the wrong shape.
        ConfigError: ``config.llm`` is unset while a prompt method is on.

    Example:
        >>> round1 = evolve_dataset(executed, EvolveConfig(llm=LLMConfig(model="gpt-4o-mini"), round=1))  # doctest: +SKIP
    """
    schema.check_columns(ds.column_names, [schema.ID, schema.QUESTION, schema.TESTS, schema.SOLUTIONS,
                                           schema.PASS_MATRIX], stage="evolve")
    config.require_writer()
    return ds.map(
        evolve,
        batched=True,
        batch_size=batch_size,
        fn_kwargs={"config": config, "defer_search": defer_search},
        features=evolve_features(ds.features, defer_search=defer_search),
        num_proc=num_proc,
        desc=f"evolve round {config.round}",
    )
