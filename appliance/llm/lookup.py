"""Drafts copied from the context: the tokens that followed the latest n-gram where it last appeared.

Why: an agent's answer repeats what it read. Its evidence field copies observation lines, its
answer quotes verdicts, names and paths from them. When the last few generated tokens already
stand somewhere in the context, the tokens that followed them there are a good guess for what
comes next ("prompt lookup decoding", llama.cpp's `lookup` example). The fast decoder evaluates
such a guess in one batch with the sampled token and keeps only the part the model itself would
have chosen, position by position, so the output is the model's own; a batch of k tokens costs far
less than k decodes on a CPU, whose decode time is mostly reading the weights once.

A wrong guess costs the extra positions of one batch, so the draft length adapts: it grows while
guesses are taken whole and shrinks when they are refused early.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np


class LookupDrafter:
    """Proposes up to `size` tokens after the latest `ngram` tokens, from their last earlier
    occurrence in the context; `taken` adapts `size` between `shortest` and `longest`."""

    def __init__(self, *, ngram: int = 3, first: int = 6, shortest: int = 2, longest: int = 16,
                 never: Iterable[int] = ()) -> None:
        self.ngram = ngram
        self.size = first
        self.shortest = shortest
        self.longest = longest
        self.never = frozenset(never)  # end-of-generation tokens: a draft never runs past one
        self.proposed = 0
        self.accepted = 0

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

    def taken(self, proposed: int, accepted: int) -> None:
        """Record how much of a proposed draft the model kept; grow or shrink the next draft."""
        if proposed <= 0:
            return
        self.proposed += proposed
        self.accepted += accepted
        if accepted == proposed:
            self.size = min(self.longest, self.size + 2)
        elif accepted < proposed // 2:
            self.size = max(self.shortest, self.size // 2)
