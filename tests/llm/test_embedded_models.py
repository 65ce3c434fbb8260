"""Models shipped as split PyPI parts: assembled in order, refused when a byte differs, named when a part is missing.

The fake parts are real installed-looking packages (a folder with ``__init__.py`` and one file under ``data/``) on
``sys.path``, found the way the real ones are (``importlib.util.find_spec``); the last test assembles the real
Qwen2.5-Coder-0.5B parts where they are installed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os

import pytest

from evolvecoder_datasets.errors import ConfigError, MissingExtraError
from evolvecoder_datasets.llm.embedded import EMBEDDED_MODELS, EmbeddedModel, embedded_gguf


def _install_parts(root, pieces: list[bytes], prefix: str) -> list[str]:
    names = []
    for i, piece in enumerate(pieces, 1):
        name = f"{prefix}-part{i}"
        folder = root / name.replace("-", "_")
        (folder / "data").mkdir(parents=True)
        (folder / "__init__.py").write_text("")
        (folder / "data" / f"part{i:02d}.bin").write_bytes(piece)
        names.append(name)
    return names


@pytest.fixture
def fake_model(tmp_path, monkeypatch):
    """A three-part model registered under ``fake-model`` with the digest of its true bytes."""
    pieces = [os.urandom(3000), os.urandom(1), os.urandom(5000)]
    whole = b"".join(pieces)
    site = tmp_path / "site"
    packages = _install_parts(site, pieces, f"ecdfake{os.getpid()}")
    monkeypatch.syspath_prepend(str(site))
    spec = EmbeddedModel("fake-model", "a test model", "fake.gguf", tuple(packages), "1.0", len(whole),
                         hashlib.sha256(whole).hexdigest(), "llamacpp")
    monkeypatch.setitem(EMBEDDED_MODELS, "fake-model", spec)
    return spec, whole, site


def test_parts_are_joined_in_order_into_the_cache_and_reused(fake_model, tmp_path):
    _, whole, _ = fake_model
    path = embedded_gguf("fake-model", cache_root=str(tmp_path / "cache"))
    assert path == str(tmp_path / "cache" / "models" / "fake.gguf")
    with open(path, "rb") as f:
        assert f.read() == whole
    assert embedded_gguf("fake-model", cache_root=str(tmp_path / "cache")) == path
    assert [p.name for p in (tmp_path / "cache" / "models").iterdir()] == ["fake.gguf"]  # no staging file left


def test_a_part_that_changed_upstream_is_refused_and_nothing_is_left_under_the_model_name(fake_model, tmp_path):
    spec, _, site = fake_model
    (site / spec.packages[1].replace("-", "_") / "data" / "part02.bin").write_bytes(b"\xff")  # a re-upload
    with pytest.raises(ConfigError, match="sha256"):
        embedded_gguf("fake-model", cache_root=str(tmp_path / "cache"))
    assert list((tmp_path / "cache" / "models").iterdir()) == []


@pytest.mark.parametrize("tamper", ["flip_a_byte", "truncate"])
def test_an_assembled_file_that_changed_is_refused_before_it_loads(fake_model, tmp_path, tamper):
    path = embedded_gguf("fake-model", cache_root=str(tmp_path / "cache"))
    with open(path, "rb") as f:
        data = bytearray(f.read())
    if tamper == "flip_a_byte":
        data[len(data) // 2] ^= 1
    else:
        data = data[:-1]
    with open(path, "wb") as f:
        f.write(data)
    with pytest.raises(ConfigError, match="sha256" if tamper == "flip_a_byte" else "bytes"):
        embedded_gguf("fake-model", cache_root=str(tmp_path / "cache"))


def test_a_missing_part_names_the_package_and_the_install_command(fake_model, tmp_path, monkeypatch):
    spec, _, _ = fake_model
    missing = dataclasses.replace(spec, packages=spec.packages + ("ecd-no-such-part7",))
    monkeypatch.setitem(EMBEDDED_MODELS, "fake-model", missing)
    assert spec.installed() and not missing.installed()
    with pytest.raises(MissingExtraError) as info:
        embedded_gguf("fake-model", cache_root=str(tmp_path / "cache"))
    assert "ecd-no-such-part7" in str(info.value) and "pip install" in str(info.value)


def test_an_unknown_model_name_lists_the_known_ones():
    with pytest.raises(ConfigError, match="qwen2.5-coder-0.5b"):
        embedded_gguf("gpt-17")


def test_the_real_qwen_parts_assemble_to_the_pinned_file(tmp_path):
    """Where the ``llamacpp`` extra is installed: the six parts join to 491,400,064 bytes with the pinned sha256."""
    spec = EMBEDDED_MODELS["qwen2.5-coder-0.5b"]
    if not spec.installed():
        pytest.skip("the Qwen2.5-Coder-0.5B parts are not installed")
    path = embedded_gguf(spec.name, cache_root=str(tmp_path))
    assert os.path.getsize(path) == spec.size == 491_400_064
    with open(path, "rb") as f:
        assert f.read(4) == b"GGUF"
