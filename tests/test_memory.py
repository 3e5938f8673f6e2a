"""Refusing a model that would push the machine into swap, with the readings simulated."""

from __future__ import annotations

import pytest

from appliance.config import resolve_paths
from appliance.errors import ModelError
from appliance.llm.gguf import check_file
from appliance.llm.memory import MB, MemoryReading, NotEnoughMemory, check_memory, estimate_need, read_memory
from appliance.llm.runtime import memory_need, open_chat_model


def test_fits_with_headroom():
    reading = MemoryReading(available=1000 * MB, total=4000 * MB)
    assert check_memory(800 * MB, reading).fits
    assert not check_memory(950 * MB, reading).fits  # within the 10 % kept for everything else


def test_refusal_suggests_the_largest_smaller_model_that_fits():
    reading = MemoryReading(available=1000 * MB, total=4000 * MB)
    verdict = check_memory(2000 * MB, reading, [("medium", 1200 * MB), ("small", 600 * MB), ("tiny", 300 * MB)])
    assert (verdict.fits, verdict.suggestion) == (False, "small")
    message = verdict.message("big")
    assert message == ("model big needs about 2,000 MB of memory but only 1,000 MB is available; loading it "
                       "would push this machine into swap; use the smaller model instead: appliance --model small")
    nothing = check_memory(2000 * MB, reading, [("medium", 1200 * MB)])
    assert nothing.suggestion is None and "close some programs" in nothing.message("big")


def test_estimate_grows_with_file_and_context():
    small = estimate_need(100 * MB, kv_cache=10 * MB, n_ctx=1024)
    assert estimate_need(200 * MB, kv_cache=10 * MB, n_ctx=1024) > small
    assert estimate_need(100 * MB, kv_cache=20 * MB, n_ctx=1024) > small


def test_estimate_covers_the_measured_footprint(smollm2_path, qwen05_path):
    """Resident memory measured after loading with n_ctx 8192 and a 3,000-token prompt:
    SmolLM2 424 MB, Qwen 0.5B 811 MB. The estimate must not be below what was measured."""
    assert memory_need(check_file(smollm2_path), 8192) >= 424 * MB
    assert memory_need(check_file(qwen05_path), 8192) >= 811 * MB


def test_real_reading_is_plausible():
    reading = read_memory()
    assert 0 < reading.available <= reading.total


def test_model_larger_than_available_memory_is_refused(smollm2_path, qwen05_path):
    """Qwen 0.5B on a machine with 700 MB available: refused before llama.cpp is touched, and the
    smaller installed SmolLM2 is offered."""
    low = lambda: MemoryReading(available=700 * MB, total=2048 * MB)  # noqa: E731
    with pytest.raises(ModelError) as caught:
        open_chat_model("small", paths=resolve_paths(), env={}, memory_reader=low)
    message = caught.value.message
    assert isinstance(caught.value, NotEnoughMemory) and caught.value.verdict.suggestion == "smollm2-135m-instruct"
    assert message.startswith("model qwen2.5-coder-0.5b-instruct needs about 1,0")
    assert "only 700 MB is available" in message
    assert message.endswith("use the smaller model instead: appliance --model smollm2-135m-instruct")


def test_nothing_smaller_to_offer(smollm2_path):
    low = lambda: MemoryReading(available=200 * MB, total=512 * MB)  # noqa: E731
    with pytest.raises(ModelError, match="close some programs and try again"):
        open_chat_model("tiny", paths=resolve_paths(), env={}, memory_reader=low)


def test_override_loads_anyway(smollm2_path):
    low = lambda: MemoryReading(available=200 * MB, total=512 * MB)  # noqa: E731
    model = open_chat_model("tiny", paths=resolve_paths(), env={"APPLIANCE_IGNORE_MEMORY": "1"},
                            memory_reader=low, n_ctx=512)
    assert model.info.name == "smollm2-135m-instruct"


def test_estimate_covers_the_default_model():
    """Measured for Qwen 1.5B: 2,095 MB resident (28 layers, 2 KV heads of 128, n_ctx 8192)."""
    assert estimate_need(1_117_320_768, kv_cache=2 * 2 * 28 * 2 * 128 * 8192, n_ctx=8192) >= 2095 * MB
