"""The recipe's configuration: :class:`RecipeConfig` (what ``recipes/configs/*.yaml`` map onto) and the demo's.

Example:
    >>> from evolvecoder_datasets.llm import LLMConfig
    >>> from evolvecoder_datasets.recipe.config import RecipeConfig
    >>> RecipeConfig(output_dir="runs/x", llm=LLMConfig(model="m"), mutants=8, store="none").store_location() is None
    True
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field

from ..config import resolve_store, store_location
from ..distributed import DistributedConfig
from ..errors import ConfigError
from ..llm.config import LLMConfig
from ..search.oracle import FidelityConfig
from ..stages.evolve import EvolveConfig
from ..stages.execute import ExecuteConfig
from ..stages.finalize import FinalizeConfig
from ..stages.refine import RefineConfig
from ..stages.sample import ModelSpec, SampleConfig

__all__ = ["DEMO_MODELS", "PROBLEM_KINDS", "RECIPE_VERSION", "SOURCES", "RecipeConfig", "demo_config"]

#: Seed sources known by name (anything else in ``RecipeConfig.sources`` is a local dataset path).
SOURCES = ("humaneval", "leetcode")
#: What ``RecipeConfig.problem_kind`` may say: keep every seed (a mix refused), only stdin/stdout ones, only functions.
PROBLEM_KINDS = ("auto", "stdin", "function")
RECIPE_VERSION = "evolvecoder-recipe-1"


@dataclass(frozen=True)
class RecipeConfig:
    """Everything a run of the recipe depends on; the YAML files in ``recipes/configs/`` map onto it.

    Args:
        output_dir (`str`, defaults to ``"runs/evolvecoder"``): run folder: stage checkpoints, the LLM request cache,
            figures, and the default round store.
        store (`str`, *optional*): where rounds are published: a Hub dataset repository (``"org/name"``) or a
            folder. Defaults to ``<output_dir>/store``; ``"none"`` publishes nowhere (the old spelling ``""`` is
            accepted with a ``FutureWarning``).
        sources (`tuple[str, ...]`, defaults to ``("humaneval",)``): seed sources: ``"humaneval"``, ``"leetcode"``, or
            a path to a ``save_to_disk`` folder, a folder of contest problem packages, or a ``.jsonl``/``.json`` or
            ``.parquet`` file in the seed schema or a known source layout (TACO, APPS, CodeContests, Codeforces, ...).
        limit_per_source (`int`, *optional*): keep the first N seeds of each source (after ``problem_ids`` and
            ``problem_kind``).
        problem_ids (`tuple[str, ...]`, *optional*): keep only these seed ids.
        problem_kind (`str`, defaults to ``"auto"``): ``"stdin"`` keeps only stdin/stdout problems, ``"function"``
            only function (assert) problems; ``"auto"`` keeps all and refuses a mix (TACO and APPS hold both: a run
            evolves one kind).
        dedup (`bool`, defaults to `True`): drop near-duplicate seeds first (embedding cosine, one kept per group).
        dedup_threshold (`float`, defaults to 0.9): cosine similarity at or above which seeds are duplicates.
        dedup_model (`str`, *optional*): embedding model; default the offline all-MiniLM-L6-v2.
        rounds (`int`, defaults to 3): evolution rounds after round 0.
        seed (`int`, defaults to 0): seed of every random choice (dedup, selections, mutants, final filter).
        llm (`LLMConfig`): the test writer (refine and evolve prompts). Its ``cache_dir`` defaults to
            ``<output_dir>/llm``.
        models (`tuple[ModelSpec, ...]`): the solution pool's models (sampled once, at round 0).
        mutants (`int`, defaults to 0): AST mutants of the reference per problem added to the pool (model
            ``"mutant"``); they also give the mutation score of every round.
        refine (`RefineConfig`): refine settings (its ``llm`` defaults to ``llm``).
        evolve (`EvolveConfig`): round settings (``llm`` and ``round`` are filled in per round).
        llm_rounds (`int`, *optional*): the LLM test writers (``evolve.adversarial``, ``evolve.discriminative``)
            are asked in rounds 1..``llm_rounds`` only; later rounds write tests by search alone (``evolve.search``
            must be set). ``None`` (default) asks them every round. Where a model's answers cost most of a run
            (a local model on CPU), later rounds can still grow the suites by search.
        finalize (`FinalizeConfig`): final filter settings.
        execute (`ExecuteConfig`): sandbox settings of every stage.
        fidelity (`FidelityConfig`): the oracle behind each round's test fidelity (TPR/TNR over the pool, in
            ``stats.json``, the cards and ``inspect``); ``fidelity: {enabled: false}`` turns it off.
        figures (`bool`, defaults to `True`): draw the round figures (extra ``viz``).
        batch_size (`int`, defaults to 16): problems per ``Dataset.map`` batch (requests sent together).
        num_proc (`int`, *optional*): processes for the stages.
        keep_source (`bool`, defaults to `False`): also publish the ``source`` column in ``main`` (by default
            ``main`` has exactly ``id``, ``question`` and ``tests``, as the released dataset).
        distributed (`DistributedConfig`, *optional*): where the heavy CPU work runs: unset (or ``engine: local``)
            runs everything on this machine; ``engine: ray`` (with ``address``: a cluster, or unset for a private
            local instance) runs the execute stage (the pool's pass matrices), the seed embeddings of dedup and
            the reference runs of the mutation score as coarse Ray tasks. Results and published rounds are the
            same on either engine, so this setting is not part of any checkpoint key; ``results_dir`` defaults to
            ``<output_dir>/shards``.

    Raises:
        ConfigError: an unknown named source, ``rounds < 0``, or no model and no mutants.

    Example:
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> cfg = RecipeConfig(output_dir="runs/x", llm=LLMConfig(model="gpt-4o-mini"), mutants=8, rounds=2)
        >>> cfg.store_location().endswith("runs/x/store")
        True
    """

    output_dir: str = "runs/evolvecoder"
    store: str | None = None
    sources: tuple[str, ...] = ("humaneval",)
    limit_per_source: int | None = None
    problem_ids: tuple[str, ...] = ()
    problem_kind: str = "auto"
    dedup: bool = True
    dedup_threshold: float = 0.9
    dedup_model: str | None = None
    rounds: int = 3
    seed: int = 0
    llm: LLMConfig = field(default_factory=LLMConfig)
    models: tuple[ModelSpec, ...] = ()
    mutants: int = 0
    refine: RefineConfig = field(default_factory=RefineConfig)
    evolve: EvolveConfig = field(default_factory=EvolveConfig)
    llm_rounds: int | None = None
    finalize: FinalizeConfig = field(default_factory=FinalizeConfig)
    execute: ExecuteConfig = field(default_factory=ExecuteConfig)
    fidelity: FidelityConfig = field(default_factory=FidelityConfig)
    figures: bool = True
    batch_size: int = 16
    num_proc: int | None = None
    keep_source: bool = False
    distributed: DistributedConfig | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "output_dir", os.fspath(self.output_dir))
        object.__setattr__(self, "store", resolve_store(self.store, where="RecipeConfig.store"))
        for name in ("sources", "problem_ids", "models"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if not self.sources:
            raise ConfigError("RecipeConfig.sources is empty")
        for source in self.sources:
            if source.lower() not in SOURCES and not any(source.endswith(s) for s in (".jsonl", ".json", ".parquet")) \
                    and os.sep not in source and not source.startswith("."):
                raise ConfigError(f"unknown seed source {source!r}: use {SOURCES} or a path to a local dataset")
        if isinstance(self.rounds, bool) or self.rounds < 0:
            raise ConfigError(f"rounds must be >= 0, got {self.rounds}")
        if not self.models and not self.mutants:
            raise ConfigError("RecipeConfig needs at least one model in `models` (or mutants > 0)")
        if self.problem_kind not in PROBLEM_KINDS:
            raise ConfigError(f"problem_kind must be one of {PROBLEM_KINDS}, got {self.problem_kind!r}")
        if self.limit_per_source is not None and self.limit_per_source < 1:
            raise ConfigError("limit_per_source must be >= 1 when set")
        if self.llm_rounds is not None:
            if isinstance(self.llm_rounds, bool) or self.llm_rounds < 0:
                raise ConfigError(f"llm_rounds must be >= 0 or null, got {self.llm_rounds!r}")
            if self.llm_rounds < self.rounds and self.evolve.search is None:
                raise ConfigError(f"rounds after llm_rounds ({self.llm_rounds}) write tests by search only: "
                                  "set evolve.search, or raise llm_rounds to rounds")

    def store_location(self) -> str | None:
        """Where rounds are published (``None`` when ``store`` is ``"none"``)."""
        return store_location(self.store, self.output_dir)

    def with_cache(self, llm: LLMConfig) -> LLMConfig:
        """``llm`` with the run's request cache unless it names its own."""
        return llm if llm.cache_dir else llm.replace(cache_dir=os.path.join(self.output_dir, "llm"))

    def refine_config(self) -> RefineConfig:
        """The refine stage's configuration, with the run's test writer, sandbox and seed filled in."""
        return self.refine.replace(llm=self.with_cache(self.refine.llm or self.llm), execute=self.execute,
                                   seed=self.seed)

    def sample_config(self) -> SampleConfig:
        """The sample stage's configuration (every model's cache in the run folder)."""
        models = tuple(dataclasses.replace(m, llm=self.with_cache(m.llm)) for m in self.models)
        return SampleConfig(models=models, mutants=self.mutants, seed=self.seed)

    def evolve_config(self, round: int) -> EvolveConfig:
        """Round ``round``'s configuration, with the run's test writer, sandbox and seed filled in (and the LLM
        writers off after ``llm_rounds``).

        Example:
            >>> cfg = demo_config("runs/demo")
            >>> [(cfg.evolve_config(r).adversarial, cfg.evolve_config(r).search is not None) for r in (1, 2)]
            [(True, True), (False, True)]
        """
        evolve = self.evolve
        if self.llm_rounds is not None and round > self.llm_rounds:
            evolve = evolve.replace(adversarial=False, discriminative=False)
        return evolve.replace(llm=self.with_cache(self.evolve.llm or self.llm), round=round,
                              execute=self.execute, seed=self.seed)

    def llm_writes_tests(self) -> bool:
        """Whether some round asks the LLM test writers (adversarial or discriminative prompts).

        Example:
            >>> cfg = demo_config("runs/demo")
            >>> cfg.llm_writes_tests(), dataclasses.replace(cfg, llm_rounds=0).llm_writes_tests()
            (True, False)
        """
        asked = self.evolve.adversarial or self.evolve.discriminative
        return asked and self.rounds > 0 and (self.llm_rounds is None or self.llm_rounds > 0)

    def on_ray(self) -> DistributedConfig | None:
        """The engine settings when the heavy CPU work runs on Ray (``None`` when it runs here), with the shard
        store in the run folder unless ``distributed.results_dir`` names one."""
        if self.distributed is None or self.distributed.engine != "ray":
            return None
        if self.distributed.results_dir is not None:
            return self.distributed
        return dataclasses.replace(self.distributed, results_dir=os.path.join(self.output_dir, "shards"))

    def endpoints(self) -> list[tuple[str, LLMConfig]]:
        """Each model this run will ask, with its role: the test writer where refine asks it or a round writes
        LLM tests, and every pool model. What :func:`~evolvecoder_datasets.llm.preflight.preflight` checks.

        Example:
            >>> from evolvecoder_datasets.llm import LLMConfig
            >>> [role for role, _ in demo_config("runs/demo").endpoints()]
            ['test writer (evolve)', "pool model 'qwen2.5-coder-0.5b'"]
        """
        found: list[tuple[str, LLMConfig]] = []
        if self.refine.ask:
            found.append(("test writer (refine)", self.refine.llm or self.llm))
        if self.llm_writes_tests():
            found.append(("test writer (evolve)", self.evolve.llm or self.llm))
        found += [(f"pool model {m.name!r}", m.llm) for m in self.models]
        return found

    def finalize_config(self) -> FinalizeConfig:
        """The final filter's configuration with the run's seed."""
        return self.finalize.replace(seed=self.seed)



#: The HumanEval seeds of the demo: problems whose own asserts let AST mutants of the canonical solution survive.
DEMO_HUMANEVAL = (6, 31, 39, 40, 43, 46, 59, 80, 81, 89, 94, 95, 105, 126, 127, 157)
#: What the demo's solution samples are told beside the solve prompt: a small model otherwise spends most of its
#: tokens explaining the code.
DEMO_SYSTEM_PROMPT = ("You are a Python programmer. Reply with only the code in one ```python block: no explanation, "
                      "and do not copy the docstring.")
DEMO_MODELS = ("qwen", "qwen-1.5b", "smollm2")


def demo_config(output_dir: str = "runs/demo", *, rounds: int = 2, model: str = "qwen") -> RecipeConfig:
    """The embedded demo: 16 HumanEval and 4 LeetCode seeds, a pool of samples of the embedded model plus up to 40
    AST mutants per reference, and rounds in which the model writes adversarial *inputs* (valued by the reference
    in the sandbox: :mod:`~evolvecoder_datasets.prompts.inputs`) and the search
    (:mod:`~evolvecoder_datasets.search.writer`) writes tests that kill what the suite lets through; published to a
    local store with cards. The HumanEval seeds are the ones whose own asserts let AST mutants of the canonical
    solution survive (``benchmarks/bench_search.py`` lists them): on the first 16 problems the asserts already kill
    95% of the mutants and the rounds show nothing. The search keeps one test per problem and round (the one that
    kills the most), so a round leaves work for the next one.

    ``model="qwen"`` (default): Qwen2.5-Coder-0.5B-Instruct through llama.cpp (the ``llamacpp`` extra:
    ``xllamacpp`` and the model's six PyPI parts), sampling one solution per problem and writing four inputs per
    problem in round 1 (its prompt tokens are the demo's slowest part: the writer is shown the problem without its
    worked examples, the reference, and the three strongest programs of the pool as diffs against it where they are
    its mutants, and asked for four inputs, each with its reason first, at temperature 0.7; greedy answers killed
    nothing in a measured run, and five inputs took the demo past 5 minutes). ``"qwen-1.5b"``: the same with the 1.5B sibling
    (better, 2-3x slower; extra ``qwen15b``). ``"smollm2"``: the fallback where ``xllamacpp`` does not install,
    SmolLM2-135M through transformers, which writes almost nothing usable (its adversarial prompt asks for whole
    asserts).

    Round 0 keeps the seeds' own asserts (``refine.ask=False``, checked against the reference). LeetCode seeds have
    no reference solution, so they get no mutants, no search tests, and the model is not asked for them
    (``without_reference="skip"``: nothing could value their inputs). The final filter counts the mutants as
    solutions (``exclude_models=()``): a test no program of the pool passes is dropped, and a problem more than 6
    of whose programs pass every kept test is too easy.

    Args:
        output_dir (`str`, defaults to ``"runs/demo"``): the run folder.
        rounds (`int`, defaults to 2): evolution rounds.
        model (`str`, defaults to ``"qwen"``): ``"qwen"``, ``"qwen-1.5b"`` or ``"smollm2"``.

    Raises:
        ConfigError: an unknown model.

    Example:
        >>> demo_config("runs/demo").models[0].name
        'qwen2.5-coder-0.5b'
        >>> demo_config("runs/demo", model="smollm2").llm.backend
        'transformers'
    """
    from ..search.writer import SearchConfig

    if model not in DEMO_MODELS:
        raise ConfigError(f"demo model must be one of {DEMO_MODELS}, got {model!r}")
    ids = tuple(f"HumanEval_{k}" for k in DEMO_HUMANEVAL) + tuple(f"LeetCode_{k}" for k in (3, 5, 9, 11))
    common = dict(
        output_dir=output_dir,
        sources=("humaneval", "leetcode"),
        problem_ids=ids,
        dedup=True,
        rounds=rounds,
        mutants=40,
        refine=RefineConfig(ask=False, min_tests=1),
        llm_rounds=1,
        finalize=FinalizeConfig(min_tests=1, max_perfect=6, exclude_models=()),
        execute=ExecuteConfig(mode="fast", timeout_s=1.0),
        fidelity=FidelityConfig(inputs=64, candidates=192),  # a small oracle: the demo stays within its time
        batch_size=32,  # every problem in one map batch: one generation call samples them all
    )
    search = SearchConfig(budget=800, max_tests=1)
    if model == "smollm2":
        smol = LLMConfig(backend="transformers", model="smollm2", batch_size=8)  # writer: long prompts, few a batch
        return RecipeConfig(
            llm=smol,
            models=(ModelSpec("smollm2", smol.replace(batch_size=24), n=1, temperature=0.8, max_tokens=64),),
            evolve=EvolveConfig(discriminative=False, num_tests=1, max_tokens=40, n_top=1, n_diverse=0,
                                test_mode="asserts", search=search),
            **common,
        )
    name = "qwen2.5-coder-0.5b" if model == "qwen" else "qwen2.5-coder-1.5b"
    qwen = LLMConfig(backend="llamacpp", model=name, max_concurrency=4)
    return RecipeConfig(
        llm=qwen,
        models=(ModelSpec(name, qwen, n=1, temperature=0.2, max_tokens=256, system_prompt=DEMO_SYSTEM_PROMPT,
                          complete_stub=True),),
        evolve=EvolveConfig(discriminative=False, num_tests=4, max_tokens=200, n_top=3, n_diverse=0,
                            without_reference="skip", search=search),
        **common,
    )
