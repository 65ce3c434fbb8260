"""Repository intake: distribution vs import names, layouts, archives, and public symbols read by AST."""

from __future__ import annotations

import io
import tarfile
import zipfile

import pytest

from evolvecoder_datasets.code_instruct import find_packages, open_repository, public_symbols
from evolvecoder_datasets.errors import RepositoryError

from .conftest import TINYTEXT


def test_checkout_distribution_and_import_names_differ(tinytext_repo):
    assert tinytext_repo.dist_name == "tiny-textkit"
    assert tinytext_repo.package == "tinytext"
    assert tinytext_repo.version == "0.3.1"
    assert tinytext_repo.kind == "checkout"
    assert tinytext_repo.name == "tiny-textkit==0.3.1"
    assert tinytext_repo.package_dir == TINYTEXT / "src" / "tinytext"


def test_public_symbols_follow_all_and_skip_private_names(tinytext_repo):
    assert tinytext_repo.public_symbols == {"TextStats", "normalize_space", "slugify", "split_words", "wrap_words"}


def test_public_symbols_without_all_include_definitions_imports_and_star_imports(tmp_path):
    pkg = tmp_path / "demo"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from .core import *\nfrom .extra import Helper as Helper, _hidden\nimport json\n"
        "VERSION = '1'\n_private = 2\ndef build(): ...\nclass Widget: ...\n"
    )
    (pkg / "core.py").write_text("__all__ = ['run', 'stop']\ndef run(): ...\ndef stop(): ...\ndef other(): ...\n")
    (pkg / "extra.py").write_text("class Helper: ...\n_hidden = 1\n")
    assert public_symbols(pkg) == {"run", "stop", "Helper", "json", "VERSION", "build", "Widget"}


def _sdist_bytes(members: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tf:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_sdist_is_extracted_once_and_reads_pkg_info(tmp_path):
    archive = tmp_path / "Fancy_Dist-1.2.tar.gz"
    archive.write_bytes(_sdist_bytes({
        "Fancy_Dist-1.2/PKG-INFO": "Metadata-Version: 2.1\nName: Fancy-Dist\nVersion: 1.2\n",
        "Fancy_Dist-1.2/setup.py": "from setuptools import setup\nsetup(name='Fancy-Dist', version='1.2')\n",
        "Fancy_Dist-1.2/fancy/__init__.py": "__all__ = ['shine']\ndef shine(): ...\n",
        "Fancy_Dist-1.2/tests/__init__.py": "",
    }))  # fmt: skip
    repo = open_repository(archive, cache_dir=tmp_path / "cache")
    assert (repo.kind, repo.dist_name, repo.version, repo.package) == ("sdist", "Fancy-Dist", "1.2", "fancy")
    assert repo.import_names == ("fancy",)
    again = open_repository(archive, cache_dir=tmp_path / "cache")
    assert again.root == repo.root
    assert len(list((tmp_path / "cache").iterdir())) == 1


def test_archive_with_a_path_leaving_the_tree_is_refused(tmp_path):
    archive = tmp_path / "evil-1.0.tar.gz"
    archive.write_bytes(_sdist_bytes({"evil-1.0/../../escape.py": "x = 1\n", "evil-1.0/evil/__init__.py": ""}))
    with pytest.raises(RepositoryError, match="unsafe path"):
        open_repository(archive, cache_dir=tmp_path / "cache")
    assert not (tmp_path / "escape.py").exists()


def test_wheel_metadata_and_flat_packages(tmp_path):
    wheel = tmp_path / "wheelpkg-0.9-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("wheelpkg_core/__init__.py", "def go(): ...\n")
        zf.writestr("wheelpkg-0.9.dist-info/METADATA", "Metadata-Version: 2.1\nName: wheelpkg\nVersion: 0.9\n")
    repo = open_repository(wheel, cache_dir=tmp_path / "cache")
    assert (repo.kind, repo.dist_name, repo.version) == ("wheel", "wheelpkg", "0.9")
    assert repo.package == "wheelpkg_core" and repo.public_symbols == {"go"}


def test_src_layout_wins_and_test_folders_are_not_packages(tmp_path):
    (tmp_path / "src" / "real").mkdir(parents=True)
    (tmp_path / "src" / "real" / "__init__.py").write_text("")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "__init__.py").write_text("")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "something-else"\nversion = "2.0"\n')
    assert list(find_packages(tmp_path)) == ["real"]
    repo = open_repository(tmp_path)
    assert (repo.dist_name, repo.version, repo.package) == ("something-else", "2.0", "real")


def test_missing_source_and_unknown_package_raise_repository_error(tmp_path):
    with pytest.raises(RepositoryError, match="does not exist"):
        open_repository(tmp_path / "nope")
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup()\n")
    with pytest.raises(RepositoryError, match="no importable package"):
        open_repository(tmp_path)
    with pytest.raises(RepositoryError, match="is not in"):
        open_repository(TINYTEXT, package="attr")


def test_tree_hash_changes_with_any_file(tmp_path):
    (tmp_path / "setup.cfg").write_text("[metadata]\nname = pkg\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("A = 1\n")
    first = open_repository(tmp_path).tree_hash()
    assert open_repository(tmp_path).tree_hash() == first
    (tmp_path / "pkg" / "__init__.py").write_text("A = 2\n")
    assert open_repository(tmp_path).tree_hash() != first


def test_tree_without_build_files_is_refused_at_intake_with_the_reason(tmp_path):
    (tmp_path / "lonely").mkdir()
    (tmp_path / "lonely" / "__init__.py").write_text("def f(): ...\n")
    with pytest.raises(RepositoryError, match="no pyproject.toml, setup.py or setup.cfg"):
        open_repository(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.black]\nline-length = 100\n")
    with pytest.raises(RepositoryError, match=r"neither \[build-system\] nor \[project\].*UNKNOWN"):
        open_repository(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "lonely"\nversion = "1"\n')
    assert open_repository(tmp_path).package == "lonely"


def _namespace_tree(root, *, src: bool, pkgutil: bool = False):
    base = root / "src" if src else root
    member = base / "acme" / "widgets"
    member.mkdir(parents=True)
    (member / "__init__.py").write_text("__all__ = ['Gear']\nclass Gear: ...\n")
    (member / "core.py").write_text("def turn(): ...\n")
    if pkgutil:
        (base / "acme" / "__init__.py").write_text("__path__ = __import__('pkgutil').extend_path(__path__, __name__)\n")
    (root / "pyproject.toml").write_text('[project]\nname = "acme.widgets"\nversion = "0.1"\n')


@pytest.mark.parametrize("src, pkgutil", [(True, False), (False, False), (False, True)])
def test_namespace_packages_resolve_to_the_dotted_package_inside(tmp_path, src, pkgutil):
    _namespace_tree(tmp_path, src=src, pkgutil=pkgutil)
    repo = open_repository(tmp_path)
    assert (repo.dist_name, repo.package, repo.import_names) == ("acme.widgets", "acme.widgets", ("acme.widgets",))
    assert repo.package_dir == (tmp_path / "src" if src else tmp_path) / "acme" / "widgets"
    assert repo.public_symbols == {"Gear"}


def test_flat_namespace_folder_unrelated_to_the_distribution_is_refused_with_a_hint(tmp_path):
    member = tmp_path / "acme" / "widgets"
    member.mkdir(parents=True)
    (member / "__init__.py").write_text("class Gear: ...\n")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "gearbox"\nversion = "0.1"\n')
    with pytest.raises(RepositoryError, match=r"\['acme'\] hold Python files but no __init__.py.*PEP 420.*package="):
        open_repository(tmp_path)
    repo = open_repository(tmp_path, package="acme.widgets")
    assert repo.package == "acme.widgets" and repo.public_symbols == {"Gear"}


def test_single_module_distribution_leaves_its_test_modules_out(tmp_path):
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='solo', py_modules=['solo'])\n")
    (tmp_path / "solo.py").write_text("def go(): ...\n")
    (tmp_path / "test_solo.py").write_text("import solo\n")
    (tmp_path / "solo_test.py").write_text("import solo\n")
    repo = open_repository(tmp_path)
    assert (repo.package, repo.import_names, repo.public_symbols) == ("solo", ("solo",), {"go"})
