"""The GGUF header check: real files pass with the right facts, every kind of bad file is refused
with a message that names the file and the reason, and corrupt length fields never make the parser
read past the end or allocate what they claim."""

from __future__ import annotations

import shutil
import struct

import pytest

from appliance.errors import ModelError
from appliance.llm.gguf import check_file, kv_cache_bytes


def _gguf_string(text: str) -> bytes:
    return struct.pack("<Q", len(text.encode())) + text.encode()


def test_real_smollm2_header(smollm2_path):
    info = check_file(smollm2_path, expected_size=98_362_432)
    assert info.architecture == "llama"
    assert info.context_length == 8192
    assert info.vocab_size == 49152
    assert info.block_count == 30
    assert "<|im_start|>" in (info.chat_template or "")
    assert info.min_size == info.size  # the tensor table accounts for every byte
    assert kv_cache_bytes(info, 8192) == 2 * 2 * 30 * 3 * 64 * 8192


def test_synthetic_file_passes(tmp_path, make_gguf):
    path = make_gguf(tmp_path / "ok.gguf", architecture="qwen2", context_length=4096)
    info = check_file(path)
    assert (info.architecture, info.context_length, info.tensor_count) == ("qwen2", 4096, 1)
    assert info.min_size == path.stat().st_size


def _message(path, **kwargs) -> str:
    with pytest.raises(ModelError) as caught:
        check_file(path, **kwargs)
    message = caught.value.message
    assert "\n" not in message and str(path) in message
    return message


def test_missing_file(tmp_path):
    assert "does not exist" in _message(tmp_path / "nope.gguf")


def test_directory(tmp_path):
    (tmp_path / "dir.gguf").mkdir()
    assert "is a directory" in _message(tmp_path / "dir.gguf")


def test_empty_file(tmp_path):
    (tmp_path / "empty.gguf").write_bytes(b"")
    assert "is empty" in _message(tmp_path / "empty.gguf")


def test_wrong_magic(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(b"PK\x03\x04" + b"\0" * 100)
    assert "is not a GGUF file" in _message(path)


def test_unsupported_version(tmp_path, make_gguf):
    path = make_gguf(tmp_path / "v1.gguf", version=1)
    assert "version 1" in _message(path)


def test_truncated_copy_of_real_model(tmp_path, smollm2_path):
    path = tmp_path / "truncated.gguf"
    with open(smollm2_path, "rb") as src, open(path, "wb") as dst:
        dst.write(src.read(40_000_000))
    message = _message(path)
    assert "truncated" in message and "40,000,000" in message


def test_truncated_inside_the_header(tmp_path, smollm2_path):
    path = tmp_path / "cut.gguf"
    with open(smollm2_path, "rb") as src, open(path, "wb") as dst:
        dst.write(src.read(300_000))  # the header (vocabulary) is longer than this
    assert "cut short" in _message(path)


def test_size_differs_from_catalog(tmp_path, smollm2_path):
    path = tmp_path / "copy.gguf"
    shutil.copyfile(smollm2_path, path)
    with open(path, "ab") as handle:
        handle.write(b"\0" * 10)
    assert "the catalog expects 98,362,432" in _message(path, expected_size=98_362_432)


def test_huge_string_length_is_refused_without_allocating(tmp_path, make_gguf):
    bad = _gguf_string("general.description") + struct.pack("<I", 8) + struct.pack("<Q", 2**60)
    path = make_gguf(tmp_path / "bad.gguf", extra=bad, extra_count=1)
    assert "corrupt or truncated" in _message(path)


def test_huge_array_count_is_refused(tmp_path, make_gguf):
    bad = _gguf_string("tokenizer.ggml.tokens") + struct.pack("<I", 9) + struct.pack("<IQ", 8, 2**40)
    path = make_gguf(tmp_path / "bad.gguf", extra=bad, extra_count=1)
    assert "claims 1,099,511,627,776 items" in _message(path)


def test_implausible_tensor_count(tmp_path):
    path = tmp_path / "bad.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 10**12, 0) + b"\0" * 64)
    assert "implausible header counts" in _message(path)


def test_unknown_value_type(tmp_path, make_gguf):
    bad = _gguf_string("weird") + struct.pack("<I", 99) + b"\0" * 8
    path = make_gguf(tmp_path / "bad.gguf", extra=bad, extra_count=1)
    assert "unknown value type 99" in _message(path)
