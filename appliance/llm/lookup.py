"""Drafts copied from the context: the tokens that followed the latest n-gram where it last appeared.

Why: an agent's answer repeats what it read. Its evidence field copies observation lines, its
answer quotes verdicts, names and paths from them. When the last few generated tokens already
stand somewhere in the context, the tokens that followed them there are a good guess for what
comes next ("prompt lookup decoding", llama.cpp's `lookup` example). The fast decoder evaluates
such a guess in one batch with the sampled token and keeps only the part the model itself would
have chosen, position by position, so the output is the model's own; a batch of k tokens costs far
less than k decodes on a CPU, whose decode time is mostly reading the weights once.

What a guess costs decides its length. On this project's 2-core machines a batch of 8 or 16 tokens
costs the same (~165 ms on Qwen 1.5B) and 3.3 times a single token (~50 ms), while a batch of 2
costs 1.8 times one: a draft is worth making long or not at all, so it is 15 tokens (the batch
of 16) and made only after a 3-token match (a 2-token match guessed wrong too often to pay).
Measured side by side by scripts/bench_lookup.py (docs/performance-decode.md).
"""

from __future__ import annotations

from typing import Iterable

import numpy as np


class LookupDrafter:
    """Proposes up to `size` tokens after the latest `ngram` tokens, from their last earlier
    occurrence in the context."""

    def __init__(self, *, ngram: int = 3, size: int = 15, never: Iterable[int] = ()) -> None:
        self.ngram = ngram
        self.size = size
        self.never = frozenset(never)  # end-of-generation tokens: a draft never runs past one

    def propose(self, context: np.ndarray, last: int, budget: int) -> list[int]:
        """The draft after `context` + `last` (the token sampled, not yet evaluated)."""
        n = self.ngram
        limit = min(self.size, budget)
        if limit <= 0 or len(context) < n:
            return []
        seq = np.append(context, np.asarray([last], dtype=context.dtype))
        tail = seq[-n:]
        windows = np.lib.stride_tricks.sliding_window_view(seq[:-1], n)
        hits = np.flatnonzero((windows == tail).all(axis=1))
        if hits.size == 0:
            return []
        start = int(hits[-1]) + n
        draft = []
        for token in seq[start : start + limit].tolist():
            if token in self.never:
                break
            draft.append(int(token))
        return draft
