"""Bring the fixed system prompt into a context: already there, loaded from disk, or evaluated.

Why a step of its own before each prompt: the system prompt is the part of every run's prompt that
never changes, so it is worth having in the KV cache before a question arrives (the TUI warms it
while the person types) and worth saving once evaluated, so the next process loads it instead.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any, Mapping, Sequence

from appliance.llm.base import OnProgress, ShouldStop
from appliance.llm.session import Session
from appliance.llm.prompt_cache import CacheMiss, PromptCache, prompt_key

PRESENT = "present"  # the context already held it (a later question in the same process)
LOADED = "loaded"  # read from the prompt cache on disk
EVALUATED = "evaluated"  # evaluated now (and saved, when a cache is configured)
STOPPED = "stopped"  # cancel or the deadline cut the evaluation short


@dataclass(frozen=True)
class PrefixReport:
    """How the system prompt got into the context: status (above), its tokens, the seconds it took,
    the cache file used or written, and a note when a cache file was refused."""

    status: str
    tokens: int
    seconds: float = 0.0
    evaluated: int = 0
    file: str = ""
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def ensure_prefix(session: Session, cache: PromptCache | None, context: Mapping[str, Any] | None, text: str,
                  tokens: Sequence[int], *, should_stop: ShouldStop | None = None,
                  on_progress: OnProgress | None = None) -> PrefixReport:
    """Make the first `len(tokens)` cells of the context hold `tokens` (the system prompt)."""
    started = time.perf_counter()
    n = len(tokens)
    if session.common_prefix(tokens) == n:
        return PrefixReport(PRESENT, n)
    note = ""
    key = prompt_key(context, text, tokens) if cache is not None and context is not None else None
    if cache is not None and key is not None:
        try:
            path = cache.load(session.llama, key, tokens)
            return PrefixReport(LOADED, n, time.perf_counter() - started, file=str(path))
        except CacheMiss as miss:
            note = str(miss)
    done = session.prefill(list(tokens), should_stop=should_stop, on_progress=on_progress)
    seconds = time.perf_counter() - started
    if done.stopped:
        return PrefixReport(STOPPED, n, seconds, evaluated=done.evaluated, note=note)
    written = cache.save(session.llama, key, tokens) if cache is not None and key is not None else None
    return PrefixReport(EVALUATED, n, seconds, evaluated=done.evaluated,
                        file=str(written) if written else "", note=note)
