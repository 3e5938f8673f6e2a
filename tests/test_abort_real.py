"""A stop ends a prompt chunk in the middle of llama.cpp's evaluation (llm/abort.py), on a real model.

Why a real model (Qwen 0.5B): the abort happens inside `llama_decode`, between the nodes of the
compute graph, and what must hold afterwards is llama.cpp's KV cache: the aborted micro-batch
dropped, the tokens before it kept, and an evaluation resumed from there giving the logits an
uninterrupted one gives. One chunk of 512 tokens takes over a second on this model, so a stop
0.3 s in lands in its middle.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

llama_cpp = pytest.importorskip("llama_cpp")

from appliance.llm.runtime import load_llama  # noqa: E402
from appliance.llm.session import Pacing, Session  # noqa: E402

ONE_CHUNK = Pacing(target=1e9, first=512, smallest=512)
STOP_AFTER = 0.3


@pytest.fixture(scope="module")
def llama(qwen05_path):
    return load_llama(qwen05_path, n_ctx=2048, n_threads=2)


@pytest.fixture(scope="module")
def tokens(llama):
    text = " ".join(f"line {i}: the disk at /srv/data{i % 7} is {i % 100} % full and growing." for i in range(200))
    return llama.tokenize(text.encode(), add_bos=False)[:64 + 512]


def kv_end(llama) -> int:
    return llama_cpp.llama_memory_seq_pos_max(llama_cpp.llama_get_memory(llama.ctx), 0) + 1


def test_a_stop_aborts_the_chunk_in_progress_and_keeps_what_came_before(llama, tokens):
    session = Session(llama, pacing=ONE_CHUNK)
    session.trim(0)
    session.prefill(tokens[:64])
    started = time.perf_counter()
    session.prefill(tokens)  # the whole 512-token chunk, uninterrupted
    whole = time.perf_counter() - started
    reference = session.logits(-1).copy()
    assert whole > 3 * STOP_AFTER, f"the chunk took {whole:.2f} s: too fast to stop in its middle"

    session.trim(64)
    started = time.perf_counter()
    done = session.prefill(tokens, should_stop=lambda: time.perf_counter() - started > STOP_AFTER)
    elapsed = time.perf_counter() - started
    assert done.stopped and done.evaluated == 0
    assert elapsed < STOP_AFTER + 0.3 < whole, f"returned {elapsed:.2f} s after the start; the chunk takes {whole:.2f} s"
    # the cache holds exactly the 64 tokens from before the aborted chunk
    assert session.n_tokens == 64 and kv_end(llama) == 64

    resumed = session.prefill(tokens)
    assert not resumed.stopped and resumed.reused == 64 and resumed.evaluated == 512
    assert np.array_equal(session.logits(-1), reference)


def test_the_switch_is_cleared_after_a_stop_so_the_next_evaluation_runs(llama, tokens):
    session = Session(llama, pacing=ONE_CHUNK)
    session.trim(0)
    started = time.perf_counter()
    assert session.prefill(tokens, should_stop=lambda: time.perf_counter() - started > 0.1).stopped
    after = session.prefill(tokens[:100])
    assert not after.stopped and session.n_tokens == 100 and kv_end(llama) == 100
    session.decode([int(np.argmax(session.logits(-1)))])  # a decode after it is not aborted either
    assert session.n_tokens == 101


def test_sessions_on_one_context_share_its_one_switch(llama, tokens):
    first, second = Session(llama), Session(llama, pacing=ONE_CHUNK)
    assert first._abort is second._abort is not None
    first.trim(0)
    started = time.perf_counter()
    assert second.prefill(tokens, should_stop=lambda: time.perf_counter() - started > STOP_AFTER).stopped
    assert time.perf_counter() - started < STOP_AFTER + 0.3


def test_a_stop_between_chunks_only_lets_the_chunk_in_progress_finish(llama, tokens):
    session = Session(llama, pacing=Pacing(target=1e9, first=256, smallest=256))
    session.trim(0)
    session.prefill(tokens[:64])
    started = time.perf_counter()
    done = session.prefill(tokens, between_chunks=lambda: time.perf_counter() - started > 0.1)
    assert done.stopped and done.evaluated == 256  # the first chunk was under way at 0.1 s: kept whole
    assert session.n_tokens == 64 + 256 and kv_end(llama) == 64 + 256
