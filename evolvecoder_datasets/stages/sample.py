"""Sample the solution pool: N models x k samples per problem, code extracted, plus optional AST mutants.

Each model is a :class:`ModelSpec` with its own backend and sampling parameters; each problem gets one request per
model asking for ``n`` samples. The code is taken from the answer with
:func:`~evolvecoder_datasets.execution.extract_code` and stored with the model name and the sample index. As in
the released EvolveCoder code the pool is sampled once, at round 0, and every later round re-executes the same
programs against its new tests.

Mutants (``SampleConfig.mutants > 0``) join the pool as an extra model named ``"mutant"``: single-edit AST mutants
of the problem's reference solution (only where the refine stage confirmed that the reference passes the tests,
``reference_ok``). They are near-correct adversaries that need no LLM, and the fraction of them the tests kill is
the mutation score reported per round.

Columns read: ``id``, ``question``; optional ``tests`` or ``inputs`` (a row with ``inputs`` and no ``tests`` is a
stdin/stdout problem and is asked for a script), ``reference_solutions`` and ``reference_ok`` (for mutants),
``drop_reason`` (dropped rows get an empty pool).
Columns written: ``solutions`` (``list[{model, sample, code}]``), ``sample_errors`` (``list[str]``, one line per
failed request).

Example:
    >>> from evolvecoder_datasets.llm import LLMConfig
    >>> from evolvecoder_datasets.stages.sample import ModelSpec, SampleConfig, sample_dataset
    >>> config = SampleConfig(models=(ModelSpec("qwen3-4b", LLMConfig(model="Qwen/Qwen3-4B",
    ...                                         base_url="http://127.0.0.1:8000/v1"), n=16),), mutants=8)
    >>> pool = sample_dataset(refined, config)  # doctest: +SKIP
    >>> pool[0]["solutions"][0]["model"]  # doctest: +SKIP
    'qwen3-4b'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import schema
from ..errors import ConfigError, SchemaError
from ..llm.config import LLMConfig
from ..llm.types import ChatRequest
from ..mutants import MUTATOR_VERSION, OPERATORS, generate_mutants
from ..prompts import solve as solve_prompt
from ..checks import check_list_cells, check_on_llm_error, check_positive, check_text_cells
from .support.llm_stage import raise_unrecordable
from .support.resources import get_backend
from ..seeding import stable_int

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = [
    "MUTANT_MODEL",
    "SOLVE_VERSION",
    "ModelSpec",
    "SampleConfig",
    "build_solve_request",
    "is_sample",
    "sample",
    "sample_dataset",
]

MUTANT_MODEL = "mutant"
SOLVE_VERSION = solve_prompt.VERSION
_STAGE_VERSION = "1"


def is_sample(solution: dict) -> bool:
    """Whether a pool entry is a model's sample (not a mutant, not a problem package's labelled submission).

    Example:
        >>> from evolvecoder_datasets.stages.sample import is_sample
        >>> is_sample({"model": "qwen"}), is_sample({"model": "mutant"}), is_sample({"model": "submission:accepted"})
        (True, False, False)
    """
    model = str(solution["model"])
    return model != MUTANT_MODEL and not model.startswith(schema.SUBMISSION_MODEL)


@dataclass(frozen=True)
class ModelSpec:
    """One model of the solution pool and how to sample it.

    Args:
        name (`str`): the label stored as ``solutions[i]["model"]`` (and in per-model statistics).
        llm (`LLMConfig`): how to reach the model.
        n (`int`, defaults to 8): samples per problem (the paper: 8 models x 8 samples).
        temperature (`float`, *optional*, defaults to 0.6): sampling temperature.
        top_p (`float`, *optional*, defaults to 0.95): nucleus mass.
        max_tokens (`int`, *optional*, defaults to 4096): generation cap per sample.
        seed (`int`, *optional*): base of a per-problem sampling seed (when the server honours seeds).
        system_prompt (`str`, *optional*): a system message sent before the task.
        complete_stub (`bool`, defaults to `False`): where a question is a function stub (HumanEval's form), the
            request ends with the stub as the beginning of the answer and the model writes only the body
            (:func:`~evolvecoder_datasets.prompts.solve.stub_prefill`; backends that continue a final assistant
            message: ``llamacpp``, vLLM servers with ``continue_final_message``).

    Raises:
        ConfigError: an empty name, a reserved name (``"mutant"``) or ``n < 1``.

    Example:
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> ModelSpec("smol", LLMConfig(backend="transformers"), n=4, temperature=0.8).n
        4
    """

    name: str
    llm: LLMConfig
    n: int = 8
    temperature: float | None = 0.6
    top_p: float | None = 0.95
    max_tokens: int | None = 4096
    seed: int | None = None
    system_prompt: str | None = None
    complete_stub: bool = False

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise ConfigError("ModelSpec.name must be a non-empty string")
        if self.name == MUTANT_MODEL:
            raise ConfigError(f"ModelSpec.name {MUTANT_MODEL!r} is reserved for AST mutants")
        if not isinstance(self.llm, LLMConfig):
            raise ConfigError(f"ModelSpec.llm must be an LLMConfig, got {type(self.llm).__name__}")
        check_positive(f"ModelSpec({self.name!r}).n", self.n)


@dataclass(frozen=True)
class SampleConfig:
    """Settings of the sample stage (they enter the ``datasets`` fingerprint).

    Args:
        models (`tuple[ModelSpec, ...]`): the models of the pool, in order.
        mutants (`int`, defaults to 0): at most this many AST mutants of the reference per problem join the pool
            as model ``"mutant"`` (a seeded sample of all single-edit mutants); 0 disables them.
        mutant_operators (`tuple[str, ...]`, *optional*): mutation operators (see
            :data:`evolvecoder_datasets.mutants.OPERATORS`).
        extract (`str`, defaults to ``"last"``): :func:`extract_code` strategy (``last``, ``first``, ``longest``,
            ``all``).
        seed (`int`, defaults to 0): seed of the mutant sample.
        on_llm_error (`str`, defaults to ``"raise"``): ``"raise"`` stops the stage when a request fails after all
            retries (the answers received so far stay cached, so a rerun resumes); ``"record"`` marks the problem
            instead and carries on.
        version (`str`): stage and prompt version; a change invalidates cached results.

    Raises:
        ConfigError: no model and no mutants, duplicate model names, an unknown operator or strategy.

    Example:
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> cfg = SampleConfig(models=(ModelSpec("a", LLMConfig(model="a")), ModelSpec("b", LLMConfig(model="b"), n=2)))
        >>> [m.name for m in cfg.models], cfg.samples_per_problem
        (['a', 'b'], 10)
    """

    models: tuple[ModelSpec, ...] = ()
    mutants: int = 0
    mutant_operators: tuple[str, ...] = OPERATORS
    extract: str = "last"
    seed: int = 0
    on_llm_error: str = "raise"
    version: str = f"sample-stage-{_STAGE_VERSION}+{SOLVE_VERSION}+mutants-{MUTATOR_VERSION}"

    def __post_init__(self) -> None:
        check_on_llm_error(self.on_llm_error)
        object.__setattr__(self, "models", tuple(self.models))
        object.__setattr__(self, "mutant_operators", tuple(self.mutant_operators))
        names = [m.name for m in self.models]
        if len(set(names)) != len(names):
            raise ConfigError(f"model names in the pool must be unique, got {names}")
        check_positive("mutants", self.mutants, minimum=0)
        if not self.models and not self.mutants:
            raise ConfigError("SampleConfig needs at least one model or mutants > 0")
        unknown = set(self.mutant_operators) - set(OPERATORS)
        if unknown:
            raise ConfigError(f"unknown mutation operators {sorted(unknown)}; choose from {list(OPERATORS)}")
        if self.extract not in ("last", "first", "longest", "all"):
            raise ConfigError(f"extract must be 'last', 'first', 'longest' or 'all', got {self.extract!r}")

    @property
    def samples_per_problem(self) -> int:
        """LLM samples per problem (mutants not counted)."""
        return sum(m.n for m in self.models)

    def replace(self, **changes: Any) -> SampleConfig:
        """A copy with ``changes`` applied (validated again)."""
        return dataclasses.replace(self, **changes)


def build_solve_request(question: str, spec: ModelSpec, *, stdio: bool = False, problem_id: str = "") -> ChatRequest:
    """The request asking ``spec``'s model for ``spec.n`` solutions of ``question``.

    Args:
        question (`str`): the problem statement.
        spec (`ModelSpec`): model and sampling parameters.
        stdio (`bool`, defaults to `False`): ask for a stdin/stdout script instead of a function.
        problem_id (`str`, *optional*): mixed into the sampling seed when ``spec.seed`` is set.

    Example:
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> req = build_solve_request("Write `def one() -> int`.", ModelSpec("m", LLMConfig(model="m"), n=3))
        >>> req.n, req.prompt_version
        (3, 'solve-1')
    """
    seed = None if spec.seed is None else stable_int(spec.seed, problem_id) & 0x7FFFFFFF
    return solve_prompt.build_request(question, stdio=stdio, system_prompt=spec.system_prompt,
                                      complete_stub=spec.complete_stub, n=spec.n, temperature=spec.temperature,
                                      top_p=spec.top_p, max_tokens=spec.max_tokens, seed=seed)


def _mutant_solutions(references: Sequence[str], ok: bool, config: SampleConfig, problem_id: str) -> list[dict]:
    if not config.mutants or not ok or not references:
        return []
    try:
        mutants = generate_mutants(
            references[0],
            max_mutants=config.mutants,
            seed=stable_int(config.seed, problem_id, "mutants") & 0x7FFFFFFF,
            operators=config.mutant_operators,
        )
    except SchemaError:  # the reference does not parse: no mutants for this problem
        return []
    return [{"model": MUTANT_MODEL, "sample": j, "code": m.code} for j, m in enumerate(mutants)]


def sample(batch: dict[str, list], *, config: SampleConfig) -> dict[str, list]:
    """Batched ``Dataset.map`` function: build each problem's solution pool.

    For each model, the requests of the whole batch are sent together (cached answers are replayed).

    Args:
        batch (`dict[str, list]`): columns ``id`` and ``question``; optional ``tests``, ``inputs``,
            ``reference_solutions``, ``reference_ok``, ``drop_reason``.
        config (`SampleConfig`): models, sampling parameters and mutants.

    Returns:
        `dict[str, list]`: ``solutions`` and ``sample_errors``.

    Raises:
        SchemaError: ``id`` or ``question`` is missing, a live row's question is not a string, or ``tests``,
            ``inputs`` or ``reference_solutions`` is not a list of strings per row.
        LLMCacheMissError: a replayed run met a request its cache does not hold.

    Example:
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
        >>> with ScriptedOpenAIServer(lambda body: "```python\\ndef one():\\n    return 1\\n```") as server:
        ...     spec = ModelSpec("m", LLMConfig(model="m", base_url=server.base_url), n=2)
        ...     out = sample({"id": ["X_1"], "question": ["Write one()."]}, config=SampleConfig(models=(spec,)))
        >>> [(s["model"], s["sample"]) for s in out["solutions"][0]]
        [('m', 0), ('m', 1)]
    """
    from ..execution import extract_code

    schema.check_columns(batch, [schema.ID, schema.QUESTION], stage="sample")
    ids = batch[schema.ID]
    n = len(ids)
    drops = batch.get(schema.DROP_REASON) or [None] * n
    tests = batch.get(schema.TESTS) or [None] * n
    inputs = batch.get(schema.INPUTS) or [None] * n
    references = batch.get(schema.REFERENCE_SOLUTIONS) or [None] * n
    reference_ok = batch.get(schema.REFERENCE_OK) or [False] * n
    live = [i for i in range(n) if not drops[i]]
    check_text_cells(batch, schema.QUESTION, stage="sample", rows=live)
    for column in (schema.TESTS, schema.INPUTS, schema.REFERENCE_SOLUTIONS):
        check_list_cells(batch, column, stage="sample", rows=live)
    pools: list[list[dict]] = [[] for _ in range(n)]
    errors: list[list[str]] = [[] for _ in range(n)]

    for spec in config.models:
        requests = [
            build_solve_request(batch[schema.QUESTION][i], spec, stdio=bool(inputs[i]) and not tests[i],
                                problem_id=ids[i])
            for i in live
        ]
        if not requests:
            continue
        answers = get_backend(spec.llm).generate(requests, return_exceptions=config.on_llm_error == "record",
                                                 desc=f"sample {spec.name}")
        for i, request, answer in zip(live, requests, answers):
            if isinstance(answer, BaseException):
                raise_unrecordable(answer)
                errors[i].append(f"{spec.name}: {type(answer).__name__}: {answer}")
                continue
            for k, text in enumerate(answer.texts):
                code = extract_code(solve_prompt.answer_text(request, text), strategy=config.extract)
                pools[i].append({"model": spec.name, "sample": k, "code": code})

    for i in live:
        pools[i].extend(_mutant_solutions(references[i] or (), bool(reference_ok[i]), config, ids[i]))
    return {schema.SOLUTIONS: pools, schema.SAMPLE_ERRORS: errors}


def sample_dataset(ds: Dataset, config: SampleConfig, *, batch_size: int = 16, num_proc: int | None = None) -> Dataset:
    """Sample the solution pool of every problem in ``ds`` (a thin wrapper over ``ds.map(sample, batched=True)``).

    Args:
        ds (`datasets.Dataset`): problem rows (typically the output of the refine stage).
        config (`SampleConfig`): models, sampling parameters and mutants.
        batch_size (`int`, defaults to 16): problems whose requests are sent together.
        num_proc (`int`, *optional*): processes for ``Dataset.map``.

    Returns:
        `datasets.Dataset`: ``ds`` with ``solutions`` and ``sample_errors``.

    Raises:
        SchemaError: ``id`` or ``question`` is missing.

    Example:
        >>> pool = sample_dataset(refined, SampleConfig(models=(spec,), mutants=8))  # doctest: +SKIP
    """
    from datasets import List, Value

    schema.check_columns(ds.column_names, [schema.ID, schema.QUESTION], stage="sample")
    features = ds.features.copy()
    features[schema.SOLUTIONS] = schema.solution_features()[schema.SOLUTIONS]
    features[schema.SAMPLE_ERRORS] = List(Value("string"))
    stale = [c for c in (schema.SOLUTIONS, schema.SAMPLE_ERRORS) if c in ds.column_names]
    return ds.map(
        sample,
        batched=True,
        batch_size=batch_size,
        fn_kwargs={"config": config},
        remove_columns=stale,
        features=features,
        num_proc=num_proc,
        desc="sample",
    )
