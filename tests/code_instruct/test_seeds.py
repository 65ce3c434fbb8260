"""Seed windows: seeded, within bounds, never from tests/docs/examples/__init__, rejected when mostly non-code."""

from __future__ import annotations

import pytest

from evolvecoder_datasets.code_instruct import SeedConfig, eligible_files, open_repository, sample_snippets
from evolvecoder_datasets.code_instruct.seeds import line_kinds
from evolvecoder_datasets.errors import ConfigError


def test_only_package_source_files_are_eligible(tinytext_repo):
    assert eligible_files(tinytext_repo) == ["src/tinytext/core.py", "src/tinytext/wrap.py"]
    everything = eligible_files(tinytext_repo, SeedConfig(package_only=False))
    assert everything == ["src/tinytext/core.py", "src/tinytext/wrap.py"]  # tests/, docs/, examples/ excluded


def test_windows_are_deterministic_and_within_bounds(tinytext_repo):
    config = SeedConfig(seed=11, min_lines=30, max_lines=200)
    first = sample_snippets(tinytext_repo, 12, config=config)
    assert first == sample_snippets(tinytext_repo, 12, config=config)
    assert sample_snippets(tinytext_repo, 12, config=SeedConfig(seed=12)) != first
    for snippet in first:
        assert snippet is not None
        size = snippet.end_line - snippet.start_line + 1
        assert 30 <= size <= 200
        source = (tinytext_repo.root / snippet.path).read_text().splitlines()
        assert snippet.text.splitlines() == source[snippet.start_line - 1 : snippet.end_line]
        assert snippet.code_fraction >= 0.5


def test_a_later_run_extends_the_earlier_seeds(tinytext_repo):
    config = SeedConfig(seed=5)
    assert sample_snippets(tinytext_repo, 6, config=config)[4:] == sample_snippets(tinytext_repo, 2, config=config,
                                                                                     start=4)


def test_mostly_comment_and_import_files_yield_no_window(tmp_path):
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='noisy')\n")
    pkg = tmp_path / "noisy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    chatter = "".join(f"# comment {i}\nimport os as os{i}\n\n" for i in range(40))
    (pkg / "chatter.py").write_text('"""A module that is mostly talk."""\n' + chatter + "x = 1\n")
    repo = open_repository(tmp_path)
    assert sample_snippets(repo, 3, config=SeedConfig(max_draws=20)) == [None, None, None]
    assert sample_snippets(repo, 1, config=SeedConfig(min_code_fraction=0.0))[0] is not None


def test_line_kinds_find_docstrings_and_multiline_imports():
    source = 'def f():\n    """Doc\n    more."""\n    return 1\nfrom os import (\n    path,\n)\n'
    assert line_kinds(source) == ["code", "docstring", "docstring", "code", "import", "import", "import"]


def test_bad_seed_configs_raise_config_error(tinytext_repo):
    with pytest.raises(ConfigError):
        SeedConfig(min_lines=50, max_lines=10)
    with pytest.raises(ConfigError):
        SeedConfig(min_code_fraction=1.5)
    with pytest.raises(ConfigError, match="eligible"):
        sample_snippets(tinytext_repo, 1, config=SeedConfig(include=("*.rst",)))
