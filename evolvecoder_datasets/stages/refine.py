"""Round 0: seed problem -> refined function-signature question and independent assert tests.

For each seed the refine prompt (:mod:`evolvecoder_datasets.prompts.refine`) asks the test-writer model for a
harder, self-contained problem and ``num_tests`` asserts. The answer is parsed by the model-proof parser, tests
that are not valid single statements are discarded, and tests that read names bound only by other tests are
dropped so each test stands alone.

When the seed carries a reference solution that defines a function the new tests call, the reference is run
against them in the sandbox and only the tests it passes are kept; a problem left with fewer than ``min_tests``
is dropped (the AceCoder practice; the released EvolveCoder code never checks, so ours is stricter). A seed whose
reference cannot be matched to the tests (a stdin/stdout program, or a renamed function) is kept unchecked and
says so in ``reference_failed_tests = -1``.

Nothing is deleted here: a problem that cannot be refined keeps its row with a ``drop_reason`` (see
:data:`DROP_REASONS`), so the recipe can count every loss;
:func:`~evolvecoder_datasets.stages.support.drops.without_dropped` removes them.

Columns read: ``id``, ``question``; optional ``solutions`` (seed reference programs, ``list[str]``), ``tests``
(seed asserts), ``drop_reason`` (rows already dropped are passed through without an LLM call).
Columns written: ``question`` (refined), ``seed_question``, ``tests``, ``test_origin``, ``round`` (0),
``drop_reason``, ``reference_solutions``, ``reference_ok``, ``refine_dropped_tests``, ``reference_failed_tests``.
:func:`refine_dataset` also removes the seed columns ``solutions``, ``inputs`` and ``outputs`` (the refined problem
is function-based; ``solutions`` is the name of the solution pool in later stages).

Example:
    >>> from datasets import Dataset
    >>> from evolvecoder_datasets.llm import LLMConfig
    >>> from evolvecoder_datasets.stages.refine import RefineConfig, refine_dataset
    >>> seeds = Dataset.from_dict({"id": ["X_1"], "question": ["Return the square of x."],
    ...                            "solutions": [["def sq(x):\\n    return x * x"]]})
    >>> config = RefineConfig(llm=LLMConfig(model="gpt-4o-mini", cache_dir="runs/demo"), num_tests=10)
    >>> refined = refine_dataset(seeds, config)  # doctest: +SKIP
    >>> refined[0]["tests"][:1], refined[0]["reference_failed_tests"]  # doctest: +SKIP
    (['assert sq(3) == 9'], 0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import schema
from ..errors import ConfigError, LLMResponseError
from ..llm.config import LLMConfig
from ..prompts import refine as refine_prompt
from ..suite import TestSuite
from .execute import ExecuteConfig
from ..checks import check_list_cells, check_on_llm_error, check_positive
from ..code_names import called_names, independent_tests, normalise_test, reference_for
from .support.llm_stage import LLMStageConfig, raise_unrecordable
from ..execution import shared_sandbox
from .support.resources import get_backend
from ..seeding import stable_int

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["DROP_REASONS", "REFERENCE_CHECKS", "RefineConfig", "refine", "refine_dataset"]

REFERENCE_CHECKS = ("auto", "off")

#: Drop reasons this stage writes (``refine_<parser reason>`` covers every reason of the prompt parser).
DROP_REASONS = {
    "seed_no_question": "the seed row has no question text (nothing to refine; no request sent)",
    "refine_llm_error": "the test-writer request failed after all retries",
    "refine_empty": "the model answered nothing usable",
    "refine_no_json": "the answer held no JSON object",
    "refine_invalid_json": "the answer's JSON could not be repaired",
    "refine_wrong_shape": "the JSON was not an object with question and tests",
    "refine_missing_question": "no usable problem statement",
    "refine_no_tests": "no usable assert among the tests",
    "refine_too_few_tests": "fewer than min_tests independent tests",
    "reference_rejected_tests": "fewer than min_tests tests left after the reference check",
}

_STAGE_VERSION = "1"


@dataclass(frozen=True)
class RefineConfig(LLMStageConfig):
    """Settings of the refine stage (all of them enter the ``datasets`` fingerprint).

    Args:
        llm (`LLMConfig`, *optional*): the test-writer model. Required to run; may be left unset in a recipe
            configuration, which fills in its shared test-writer.
        num_tests (`int`, defaults to 20): asserts asked for (the released code asks for 20).
        min_tests (`int`, defaults to 5): problems with fewer surviving tests are dropped.
        reference_check (`str`, defaults to ``"auto"``): ``"auto"`` runs a seed's reference solution against the
            new tests when it defines a function they call, and keeps only the tests it passes; ``"off"`` trusts
            the model (as the released code does).
        include_seed_tests (`bool`, defaults to `False`): also keep the seed's own asserts (origin ``seed``) when
            they call only functions the refined tests call and, where checked, pass the reference.
        fallback_to_seed (`bool`, defaults to `False`): when the answer cannot be used (unparseable, or too few
            tests), keep the seed's own question and asserts (origin ``seed``) instead of dropping the problem, and
            record why in ``refine_fallback``. Meant for weak local models (the offline demo); off for real runs.
        ask (`bool`, defaults to `True`): ask the test writer. ``False`` sends nothing and keeps every seed's own
            question and asserts (origin ``seed``, ``refine_fallback = "refine_off"``), checked against its reference
            like refined tests; no model is needed (a search-only recipe, or the offline demo).
        temperature (`float`, *optional*, defaults to 0.6): sampling temperature of the test writer.
        max_tokens (`int`, *optional*, defaults to 4096): generation cap per answer.
        seed (`int`, defaults to 0): base of the per-problem sampling seed sent with each request.
        execute (`ExecuteConfig`, *optional*): sandbox settings of the reference check.
        on_llm_error (`str`, defaults to ``"raise"``): ``"raise"`` stops the stage when a request fails after all
            retries (the answers received so far stay cached, so a rerun resumes); ``"record"`` marks the problem
            instead and carries on.
        version (`str`): stage and prompt version; a change invalidates cached results.

    Raises:
        ConfigError: an unknown ``reference_check`` or a count below 1.

    Example:
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> RefineConfig(llm=LLMConfig(model="gpt-4o-mini"), num_tests=10, min_tests=3).version
        'refine-stage-1+refine-1'
    """

    llm: LLMConfig | None = None
    num_tests: int = 20
    min_tests: int = 5
    reference_check: str = "auto"
    include_seed_tests: bool = False
    fallback_to_seed: bool = False
    ask: bool = True
    temperature: float | None = 0.6
    max_tokens: int | None = 4096
    seed: int = 0
    execute: ExecuteConfig = field(default_factory=ExecuteConfig)
    on_llm_error: str = "raise"
    version: str = f"refine-stage-{_STAGE_VERSION}+{refine_prompt.VERSION}"

    def __post_init__(self) -> None:
        check_on_llm_error(self.on_llm_error)
        if self.reference_check not in REFERENCE_CHECKS:
            raise ConfigError(f"reference_check must be one of {REFERENCE_CHECKS}, got {self.reference_check!r}")
        check_positive("num_tests", self.num_tests)
        check_positive("min_tests", self.min_tests, minimum=0)
        self._check_llm_field()


@dataclass
class _Row:
    """One problem's state while the batch is processed."""

    question: str
    suite: TestSuite = field(default_factory=lambda: TestSuite((), ()))
    drop_reason: str | None = None
    dropped_tests: int = 0
    reference: str | None = None
    reference_failed: int = -1
    fallback: str | None = None


def _column(batch: dict[str, list], name: str, n: int) -> list[Any]:
    return batch[name] if name in batch else [None] * n


def refine(batch: dict[str, list], *, config: RefineConfig) -> dict[str, list]:
    """Batched ``Dataset.map`` function: refine each seed into a question and independent assert tests.

    All requests of the batch go to the backend at once (answered from the run's request cache when present);
    all reference checks of the batch run at once over the sandbox workers.

    Args:
        batch (`dict[str, list]`): columns ``id`` and ``question``; optional ``solutions`` (reference programs),
            ``tests`` (seed asserts) and ``drop_reason``.
        config (`RefineConfig`): the stage settings.

    Returns:
        `dict[str, list]`: the columns this stage writes (``Dataset.map`` keeps the others).

    Raises:
        SchemaError: ``id`` or ``question`` is missing, or ``solutions``/``tests`` is not a list of strings per row.
        ConfigError: ``config.llm`` is unset while ``config.ask`` is on.
        LLMCacheMissError: a replayed run met a request its cache does not hold.

    Example:
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
        >>> answer = '{"question": "Write `def sq(x: int) -> int` returning x squared.", "tests": ["assert sq(2) == 4"]}'
        >>> with ScriptedOpenAIServer(lambda body: answer) as server:
        ...     cfg = RefineConfig(llm=LLMConfig(model="m", base_url=server.base_url), min_tests=1)
        ...     out = refine({"id": ["X_1"], "question": ["Square x."]}, config=cfg)
        >>> out["tests"], out["drop_reason"]
        ([['assert sq(2) == 4']], [None])
    """
    schema.check_columns(batch, [schema.ID, schema.QUESTION], stage="refine")
    llm_config = config.require_llm() if config.ask else None
    n = len(batch[schema.ID])
    check_list_cells(batch, schema.SOLUTIONS, stage="refine")
    check_list_cells(batch, schema.TESTS, stage="refine")
    references = [list(r or ()) for r in _column(batch, schema.SOLUTIONS, n)]
    seed_tests = [list(t or ()) for t in _column(batch, schema.TESTS, n)]
    rows = _seed_rows(batch, n)

    # 1. one refine request per live row, all sent together (none when the stage keeps the seeds as they are)
    live = [i for i, row in enumerate(rows) if row.drop_reason is None]
    if not config.ask:
        for i in live:
            if not _fall_back_to_seed(rows[i], batch[schema.QUESTION][i], seed_tests[i], "refine_off"):
                rows[i].drop_reason = "refine_no_tests"
            elif config.reference_check == "auto":
                rows[i].reference = reference_for(references[i], rows[i].suite.tests)
    requests = _requests(rows, live, batch, references, config)
    record = config.on_llm_error == "record"
    answers = get_backend(llm_config).generate(requests, return_exceptions=record, desc="refine") if requests else []
    asked = live if config.ask else []

    # 2. parse, clean, make independent
    for i, answer in zip(asked, answers):
        _take_answer(rows[i], answer, (batch[schema.QUESTION][i], seed_tests[i]), references[i], config)

    # 3. reference check, every checked row in one sandbox call
    _check_references(rows, [i for i in live if rows[i].reference is not None and rows[i].suite.tests], config)

    # 4. too few tests left (weak models may fall back to the seed's own asserts, checked the same way)
    _keep_min_tests(rows, live, batch[schema.QUESTION], seed_tests, references, config)
    return _columns(batch, rows, references, n)


def _seed_rows(batch: dict[str, list], n: int) -> list[_Row]:
    """One :class:`_Row` per seed, already dropped where the seed was, or where it has no question to refine."""
    previous = _column(batch, schema.DROP_REASON, n)
    rows = [_Row(question=q or "", drop_reason=d or None) for q, d in zip(batch[schema.QUESTION], previous)]
    for row, question in zip(rows, batch[schema.QUESTION]):
        if row.drop_reason is None and not (isinstance(question, str) and question.strip()):
            row.question, row.drop_reason = "", "seed_no_question"  # nothing to refine: no paid request
    return rows


def _requests(rows: list[_Row], live: list[int], batch: dict[str, list], references: list[list[str]],
              config: RefineConfig) -> list:
    """One refine request per live row (none when the stage does not ask)."""
    return [
        refine_prompt.build_request(
            rows[i].question,
            solution=references[i][0] if references[i] else None,
            num_tests=config.num_tests,
            temperature=config.temperature,
            max_tokens=config.max_tokens,
            seed=stable_int(config.seed, batch[schema.ID][i]) & 0x7FFFFFFF,
        )
        for i in live
        if config.ask
    ]


def _take_answer(row: _Row, answer: Any, seed: tuple[str, list[str]], references: list[str],
                 config: RefineConfig) -> None:
    """Read one answer into its row: the refined question and its independent tests, or why there are none."""
    if isinstance(answer, BaseException):
        raise_unrecordable(answer)
        row.drop_reason = "refine_llm_error"
        return
    try:
        parsed = refine_prompt.parse(answer.text)
    except LLMResponseError as err:
        if not (config.fallback_to_seed and _fall_back_to_seed(row, *seed, f"refine_{err.reason}")):
            row.drop_reason = f"refine_{err.reason}"
        elif config.reference_check == "auto":
            row.reference = reference_for(references, row.suite.tests)
        return
    tests, dependent = independent_tests(parsed.tests)
    row.question = parsed.question
    row.suite = TestSuite.of(tests, round=0, method="refine")
    row.dropped_tests = sum(parsed.dropped_tests.values()) + dependent
    if config.include_seed_tests:
        _add_seed_tests(row, seed[1])
    if config.reference_check == "auto":
        row.reference = reference_for(references, row.suite.tests)


def _keep_min_tests(rows: list[_Row], live: list[int], questions: list, seed_tests: list[list[str]],
                    references: list[list[str]], config: RefineConfig) -> None:
    """Drop the live rows left with fewer than ``min_tests`` tests, or give them the seed's own (checked alike)."""
    fell_back = []
    for i in live:
        row = rows[i]
        if row.drop_reason is None and len(row.suite) < config.min_tests:
            reason = "reference_rejected_tests" if row.reference_failed > 0 else "refine_too_few_tests"
            seed = (questions[i], seed_tests[i])
            if config.fallback_to_seed and row.fallback is None and _fall_back_to_seed(row, *seed, reason):
                row.reference = reference_for(references[i], row.suite.tests) if config.reference_check == "auto" else None
                row.reference_failed = -1
                fell_back.append(i)
            else:
                row.drop_reason = reason
    _check_references(rows, [i for i in fell_back if rows[i].reference is not None], config)
    for i in fell_back:
        if len(rows[i].suite) < config.min_tests:
            rows[i].drop_reason = "reference_rejected_tests"


def _columns(batch: dict[str, list], rows: list[_Row], references: list[list[str]], n: int) -> dict[str, list]:
    """The columns the stage writes, from its rows."""
    out: dict[str, list] = {}
    out[schema.QUESTION] = [row.question for row in rows]
    out[schema.SEED_QUESTION] = list(batch[schema.QUESTION])
    cells = [row.suite.row() for row in rows]
    out[schema.TESTS] = [c[schema.TESTS] for c in cells]
    out[schema.TEST_ORIGIN] = [c[schema.TEST_ORIGIN] for c in cells]
    out[schema.ROUND] = [0] * n
    out[schema.DROP_REASON] = [row.drop_reason for row in rows]
    out[schema.REFERENCE_SOLUTIONS] = references
    out[schema.REFERENCE_OK] = [row.reference is not None and row.reference_failed >= 0 for row in rows]
    out[schema.REFINE_DROPPED_TESTS] = [row.dropped_tests for row in rows]
    out[schema.REFERENCE_FAILED_TESTS] = [row.reference_failed for row in rows]
    out[schema.REFINE_FALLBACK] = [row.fallback for row in rows]
    return out


def _check_references(rows: list[_Row], checked: list[int], config: RefineConfig) -> None:
    """Run each row's reference against its tests (one sandbox call) and keep only the tests it passes."""
    if not checked:
        return
    reports = shared_sandbox(config.execute).run_many([(rows[i].reference, list(rows[i].suite.tests)) for i in checked])
    for i, report in zip(checked, reports):
        row = rows[i]
        if report.infra_error:  # the sandbox failed, not the tests: keep them unchecked
            row.reference = None
            continue
        keep = np.asarray(report.passed, dtype=bool)
        row.reference_failed = int((~keep).sum())
        row.suite = row.suite.select(keep)


def _fall_back_to_seed(row: _Row, question: str, seed_tests: Sequence[str], reason: str) -> bool:
    """Keep the seed's question and asserts instead of the failed refinement; False when the seed has none."""
    if not seed_tests:
        return False
    row.question = question or row.question
    row.suite = TestSuite.of(seed_tests, round=0, method="seed")
    row.fallback = reason
    return True


def _add_seed_tests(row: _Row, seed_tests: Sequence[str]) -> None:
    """Append the seed's asserts that call only functions the refined tests call (origin ``seed``)."""
    if not seed_tests or not row.suite.tests:
        return
    allowed = set().union(*(called_names(t) for t in row.suite.tests))
    seen = {normalise_test(t) for t in row.suite.tests}
    added = []
    for test in seed_tests:
        names = called_names(test)
        key = normalise_test(test)
        if names and names <= allowed and key not in seen:
            seen.add(key)
            added.append(test)
    row.suite = row.suite.extend(TestSuite.of(added, round=0, method="seed"))


def refine_features(features: Any) -> Any:
    """The output ``datasets.Features`` of :func:`refine_dataset` given the seed features (explicit types keep
    empty batches and all-null columns well typed)."""
    from datasets import Features, List, Value

    out = {k: v for k, v in features.items() if k not in (schema.SOLUTIONS, schema.INPUTS, schema.OUTPUTS)}
    problem = schema.problem_features()
    for name in (schema.QUESTION, schema.TESTS, schema.TEST_ORIGIN, schema.ROUND, schema.DROP_REASON):
        out[name] = problem[name]
    out[schema.SEED_QUESTION] = Value("string")
    out[schema.REFERENCE_SOLUTIONS] = List(Value("string"))
    out[schema.REFERENCE_OK] = Value("bool")
    out[schema.REFINE_DROPPED_TESTS] = Value("int32")
    out[schema.REFERENCE_FAILED_TESTS] = Value("int32")
    out[schema.REFINE_FALLBACK] = Value("string")
    return Features(out)


def refine_dataset(
    ds: Dataset, config: RefineConfig, *, batch_size: int = 16, num_proc: int | None = None
) -> Dataset:
    """Refine every seed of ``ds`` (a thin wrapper over ``ds.map(refine, batched=True)``).

    Args:
        ds (`datasets.Dataset`): seed rows (see :mod:`evolvecoder_datasets.sources`).
        config (`RefineConfig`): the stage settings; ``config.llm`` must be set.
        batch_size (`int`, defaults to 16): problems whose requests are sent together.
        num_proc (`int`, *optional*): processes for ``Dataset.map`` (each builds its own backend and sandbox).

    Returns:
        `datasets.Dataset`: every input row, dropped ones marked in ``drop_reason``.

    Raises:
        SchemaError: ``id`` or ``question`` is missing.
        ConfigError: ``config.llm`` is unset.

    Example:
        >>> from evolvecoder_datasets.sources import load_humaneval
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> refined = refine_dataset(load_humaneval().select(range(5)),
        ...                          RefineConfig(llm=LLMConfig(model="gpt-4o-mini")))  # doctest: +SKIP
    """
    schema.check_columns(ds.column_names, [schema.ID, schema.QUESTION], stage="refine")
    if config.ask:
        config.require_llm()
    drop = [c for c in (schema.SOLUTIONS, schema.INPUTS, schema.OUTPUTS) if c in ds.column_names]
    return ds.map(
        refine,
        batched=True,
        batch_size=batch_size,
        fn_kwargs={"config": config},
        remove_columns=drop,
        features=refine_features(ds.features),
        num_proc=num_proc,
        desc="refine",
    )
