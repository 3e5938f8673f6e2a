"""One llama.cpp context as a token sequence in its KV cache, for the decoders.

Why a layer of our own over `Llama`: the fast decoder evaluates batches (a sampled token plus
its grammar-forced draft) through llama.cpp's low-level `llama_decode`, which `Llama` does not
track. `Session` keeps `llama.input_ids` / `llama.n_tokens` consistent with whatever was
evaluated, so the fast decoder and llama-cpp-python's own `Llama.generate` (whose prefix check
reads them) can be used on the same context one after another.
"""

from __future__ import annotations

import contextlib
import ctypes
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from appliance.errors import ModelError
from appliance.llm.abort import ABORTED, AbortSwitch
from appliance.llm.base import OnProgress, ShouldStop


@dataclass(frozen=True)
class Prefill:
    """What a prefill did: tokens kept from the cache, tokens evaluated, whether a stop cut it short."""

    reused: int
    evaluated: int
    stopped: bool = False


@dataclass(frozen=True)
class Pacing:
    """How `ChunkPacer` sizes chunks: seconds a chunk aims at, the first chunk's tokens (before
    any rate is known) and the fewest tokens a chunk may have."""

    target: float = 2.0
    first: int = 128
    smallest: int = 64


class ChunkPacer:
    """Chunk sizes for prompt evaluation that take about `target` seconds each.

    Why chunks at all: each one reports progress (tokens done, seconds left) and gives a stop a
    clean place to act even where the abort callback is not installed. Why not small ones: every
    decode call pays a fixed cost, so 30-token chunks evaluate a prompt at two thirds of the speed
    of 100-token ones (docs/performance-prompt.md), and a rate measured on small chunks is lower,
    which would shrink the next chunk further; hence the floor of `smallest` tokens. A stop does
    not wait for the chunk: the abort callback (llm/abort.py) ends it within a graph node.
    """

    def __init__(self, n_batch: int, pacing: Pacing = Pacing()) -> None:
        self.largest = max(1, int(n_batch))
        self.smallest = min(pacing.smallest, self.largest)
        self.size = min(pacing.first, self.largest)
        self.target = pacing.target
        self.tokens = 0
        self.seconds = 0.0

    def observe(self, n_tokens: int, seconds: float) -> None:
        self.tokens += n_tokens
        self.seconds += max(seconds, 1e-6)
        rate = n_tokens / max(seconds, 1e-6)
        self.size = max(self.smallest, min(self.largest, int(rate * self.target)))

    def seconds_for(self, n_tokens: int) -> float:
        return n_tokens * self.seconds / self.tokens if self.tokens else 0.0


class Session:
    """One `Llama` context as a token sequence in its KV cache.

    Keeps `llama.input_ids` / `llama.n_tokens` in step with what the decoders evaluate, so the
    built-in `Llama.generate` prefix check sees the truth.
    """

    def __init__(self, llama, *, max_batch: int = 64, pacing: Pacing = Pacing(), abort: bool = True) -> None:
        import llama_cpp

        self.llama = llama
        self.lib = llama_cpp
        self.ctx = llama.ctx
        self.vocab = llama_cpp.llama_model_get_vocab(llama.model)
        self.n_vocab = llama.n_vocab()
        self.max_batch = max(2, min(max_batch, llama.n_batch))
        self._batch = llama_cpp.llama_batch_init(self.max_batch, 0, 1)
        self._pieces: dict[int, bytes] = {}
        self.pacing = pacing
        self._abort = AbortSwitch.of(llama) if abort else None
        self.eog_ids = sorted(
            {t for t in (llama.token_eos(), llama_cpp.llama_vocab_eot(self.vocab)) if t is not None and t >= 0}
        )

    def close(self) -> None:
        if self._batch is not None:
            self.lib.llama_batch_free(self._batch)
            self._batch = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    # --- the token sequence in the KV cache -------------------------------------------------
    @property
    def n_tokens(self) -> int:
        return self.llama.n_tokens

    def evaluated(self) -> np.ndarray:
        return self.llama.input_ids[: self.llama.n_tokens]

    def common_prefix(self, tokens: Sequence[int]) -> int:
        """How many leading tokens of `tokens` are already in the KV cache."""
        cached = self.evaluated()
        n = min(len(cached), len(tokens))
        if n == 0:
            return 0
        same = cached[:n] == np.asarray(tokens[:n], dtype=cached.dtype)
        return n if same.all() else int(np.argmin(same))

    def trim(self, n: int) -> None:
        """Forget every cached token from position n on."""
        if n < self.llama.n_tokens:
            if not self.llama._ctx.kv_cache_seq_rm(-1, n, -1):
                # A model whose memory cannot drop a tail (recurrent): start over.
                self.llama.reset()
                n = 0
            self.llama.n_tokens = n
            self.llama._requires_eval = True

    def prefill(self, tokens: Sequence[int], *, should_stop: ShouldStop | None = None,
                on_progress: OnProgress | None = None, between_chunks: ShouldStop | None = None) -> "Prefill":
        """Make the cache hold `tokens` with logits for the last one, reusing the cached prefix.

        At least one token is always evaluated so that fresh logits exist (a fully cached prompt
        re-evaluates its last token). The new tokens go in paced chunks (`ChunkPacer`), and
        `should_stop` (cancel or the time budget) is watched during each one: a long prompt
        (1,300 tokens are ~25 s on Qwen 1.5B with 2 busy cores) is then stopped within a fraction
        of a second. A stop leaves the cache holding the chunks already done, so nothing
        evaluated is wasted. `between_chunks` is a stop asked only between chunks (a read-ahead
        whose text became outdated keeps the chunk in progress, which may well be of use).
        """
        if not tokens:
            raise ModelError("empty prompt")
        reused = min(self.common_prefix(tokens), len(tokens) - 1)
        self.trim(reused)
        suffix = list(tokens[reused:])
        pacer = ChunkPacer(self.llama.n_batch, self.pacing)
        done = 0
        while done < len(suffix):
            if (should_stop is not None and should_stop()) or (between_chunks is not None and between_chunks()):
                return Prefill(reused, done, stopped=True)
            chunk = suffix[done : done + pacer.size]
            started = time.perf_counter()
            if not self._evaluate(chunk, should_stop):
                return Prefill(reused, done, stopped=True)
            pacer.observe(len(chunk), time.perf_counter() - started)
            done += len(chunk)
            if on_progress is not None:
                on_progress(done, len(suffix), pacer.seconds_for(len(suffix) - done))
        return Prefill(reused, done)

    def _evaluate(self, chunk: Sequence[int], should_stop: ShouldStop | None) -> bool:
        """Evaluate one chunk; False when a stop aborted it, leaving the cache as it was before."""
        before = self.llama.n_tokens
        watching = self._abort.watching(should_stop) if self._abort else contextlib.nullcontext()
        try:
            with watching:
                self.llama.eval(chunk)
        except RuntimeError as exc:
            if self._abort is not None and self._abort.fired and str(exc).endswith(f"returned {ABORTED}"):
                # llama.cpp dropped the unfinished micro-batch; drop any earlier one of this chunk too.
                self.llama.n_tokens = before
                self.llama._ctx.kv_cache_seq_rm(-1, before, -1)
                self.llama._requires_eval = True
                return False
            raise ModelError(f"llama.cpp could not evaluate the prompt: {exc}") from exc
        return True

    def decode(self, tokens: Sequence[int]) -> None:
        """Append `tokens` (at most max_batch) to the cache with logits at every position."""
        k = len(tokens)
        n_past = self.llama.n_tokens
        if n_past + k > self.llama.n_ctx():
            raise ModelError("the context is full")
        self.llama._ctx.kv_cache_seq_rm(-1, n_past, -1)
        batch = self._batch
        batch.n_tokens = k
        for i, token in enumerate(tokens):
            batch.token[i] = token
            batch.pos[i] = n_past + i
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = True
        rc = self.lib.llama_decode(self.ctx, batch)
        if rc != 0:
            raise ModelError(f"llama_decode returned {rc}")
        self.llama.input_ids[n_past : n_past + k] = tokens
        self.llama.n_tokens = n_past + k
        self.llama._requires_eval = False

    def logits(self, row: int) -> np.ndarray:
        """The logits of batch row `row` of the last decode (-1: the last row), as a view."""
        pointer = self.lib.llama_get_logits_ith(self.ctx, row)
        return np.ctypeslib.as_array(pointer, shape=(self.n_vocab,))

    # --- text of tokens ----------------------------------------------------------------------
    def piece(self, token: int) -> bytes:
        """The bytes a token stands for (cached; no leading-space stripping)."""
        cached = self._pieces.get(token)
        if cached is None:
            buf = ctypes.create_string_buffer(64)
            n = self.lib.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, False)
            if n < 0:
                buf = ctypes.create_string_buffer(-n)
                n = self.lib.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, False)
            cached = buf.raw[: max(n, 0)]
            self._pieces[token] = cached
        return cached

    def is_eog(self, token: int) -> bool:
        return bool(self.lib.llama_vocab_is_eog(self.vocab, token))

    def tokenize(self, text: str) -> list[int]:
        return self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)

