"""What `pip install evolvecoder-datasets` ships: every subpackage and the card templates of the top-level cards/."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _declared_packages() -> list[str]:
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["tool"]["setuptools"]["packages"]


def test_every_subpackage_of_the_tree_is_declared_for_the_wheel():
    on_disk = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "evolvecoder_datasets").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    declared = set(_declared_packages())
    assert on_disk - declared == set(), "subpackages a wheel would leave out"
    assert declared - on_disk == {"evolvecoder_datasets._cards"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    # Build from a copy so the checkout gets no build/ or egg-info folders.
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for name in ("evolvecoder_datasets", "cards"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(src)],
        check=True, capture_output=True,
    )
    (built,) = out.glob("evolvecoder_datasets-*.whl")
    return built


def test_wheel_renders_a_round_card_without_a_checkout(wheel, tmp_path):
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    assert (site / "evolvecoder_datasets" / "_cards" / "round.md.jinja").read_text() == (
        ROOT / "cards" / "round.md.jinja"
    ).read_text()
    script = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from evolvecoder_datasets.cards import render_round_card, template_path\n"
        "import evolvecoder_datasets\n"
        "assert evolvecoder_datasets.__file__.startswith(sys.argv[1]), evolvecoder_datasets.__file__\n"
        "print(template_path())\n"
        "print(render_round_card({'round': 3, 'num_problems': 2048}, repo_id='org/x').content)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", script, str(site)], capture_output=True, text=True, env=env,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    first, _, card = done.stdout.partition("\n")
    assert Path(first) == site / "evolvecoder_datasets" / "_cards" / "round.md.jinja"
    assert "2,048 problems" in card
