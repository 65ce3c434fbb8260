"""``tests/`` mirrors the package (issue 39): one place for a test, found from the module it tests.

Every test file under ``tests/`` is one of:

- in ``tests/<room>/`` (or a deeper folder), where the folder's path is a subpackage of ``evolvecoder_datasets``:
  the tests of that room (``tests/rewards/`` for ``evolvecoder_datasets/rewards/``);
- at the top, named ``test_<module>.py`` or ``test_<module>_<aspect>.py`` after a ground-floor module of the package
  (``test_cards_published.py`` for ``cards.py``);
- at the top and named in :data:`WHOLE_PRODUCT`: a test whose subject is the product as a whole (a shipped script,
  the README, the wheel, a rule over every room), each with the reason it belongs to no one room or module.

``tests/data/`` holds fixtures (repositories with test suites of their own, which pytest does not collect:
``norecursedirs`` in ``pyproject.toml``) and is not part of the mirror.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "evolvecoder_datasets"
TESTS = ROOT / "tests"
FIXTURES = TESTS / "data"

#: Top-level tests of the whole product, each with why it has no room or module of its own. Kept short on purpose:
#: a test of one room or one ground-floor module goes in that room's folder or takes that module's name instead.
WHOLE_PRODUCT = {
    "test_bench_runner.py": "benchmarks/run_all.py lists every benchmark: the benchmarks/ folder, not the package",
    "test_colab_notebook.py": "the shipped notebook recipes/evolvecoder_colab.ipynb, run top to bottom",
    "test_fail_fast.py": "the shipped entry points (recipes/code_instruct.py and the CLI) in fresh processes",
    "test_grpo_train_recipe.py": "the shipped script recipes/grpo_train.py, run as a user runs it",
    "test_import_graph.py": "the layers of docs/layers.md, read from the imports of every module",
    "test_layout.py": "the layout of tests/ itself (this file)",
    "test_packaging.py": "what pip install ships: every subpackage and the top-level cards/ templates",
    "test_public_names.py": "every __all__ of the package imported cold, and column names over every module",
    "test_readme.py": "the README's blocks, run as pasted",
    "test_settings_form.py": "one form of sandbox settings across the rooms (execution, search, stages)",
}


def _is_test_file(path: Path) -> bool:
    """pytest's default ``python_files``: ``test_*.py`` and ``*_test.py``."""
    return path.suffix == ".py" and (path.name.startswith("test_") or path.stem.endswith("_test"))


def _skipped(path: Path) -> bool:
    """Fixtures, caches and hidden folders: nothing pytest collects as a test of this package."""
    return (
        path == FIXTURES
        or FIXTURES in path.parents
        or any(part == "__pycache__" or part.startswith(".") for part in path.relative_to(TESTS).parts)
    )


def _test_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if _is_test_file(p) and not _skipped(p))


def _ground_floor() -> set[str]:
    """The package's top-level modules, without a leading underscore (``_parse.py`` -> ``parse``)."""
    return {p.stem.lstrip("_") for p in PACKAGE.glob("*.py") if p.stem != "__init__"}


def _is_room(relative: Path) -> bool:
    return (PACKAGE / relative / "__init__.py").is_file()


def _names_a_ground_floor_module(name: str, modules: set[str]) -> bool:
    subject = name.removeprefix("test_").removesuffix(".py")
    return any(subject == module or subject.startswith(module + "_") for module in modules)


def test_every_test_file_is_in_its_rooms_folder_or_names_a_ground_floor_module_or_the_whole_product():
    modules, misplaced = _ground_floor(), []
    files = _test_files()
    for path in files:
        folder = path.parent.relative_to(TESTS)
        if folder != Path("."):
            if not _is_room(folder):
                misplaced.append(
                    f"{path.relative_to(ROOT)}: evolvecoder_datasets/{folder.as_posix()} is no package"
                )
        elif not (_names_a_ground_floor_module(path.name, modules) or path.name in WHOLE_PRODUCT):
            misplaced.append(
                f"{path.relative_to(ROOT)}: names no ground-floor module and is not in WHOLE_PRODUCT "
                "(move it to tests/<room>/ of the room it tests)"
            )
    # The walk saw the suite (rooms and top level), not an empty or wrong folder.
    assert len(files) > 100 and any(p.parent == TESTS for p in files)
    assert misplaced == []


def test_every_folder_of_tests_is_a_room_with_an_init():
    """A folder of ``tests/`` is named after a room and is a package (``__init__.py``), so two rooms can each hold a
    ``test_fidelity.py`` under pytest's default import mode."""
    wrong = []
    for folder in sorted(p for p in TESTS.rglob("*") if p.is_dir()):
        if _skipped(folder):
            continue
        relative = folder.relative_to(TESTS)
        if not _is_room(relative):
            wrong.append(f"tests/{relative.as_posix()}: no room evolvecoder_datasets/{relative.as_posix()}")
        elif not (folder / "__init__.py").is_file():
            wrong.append(f"tests/{relative.as_posix()}: no __init__.py")
    assert wrong == []


def test_the_whole_product_list_names_only_top_level_tests_that_need_it():
    modules = _ground_floor()
    stale = [name for name in WHOLE_PRODUCT if not (TESTS / name).is_file()]
    redundant = [name for name in WHOLE_PRODUCT if _names_a_ground_floor_module(name, modules)]
    assert stale == [] and redundant == []
