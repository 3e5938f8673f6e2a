"""What a decode produced, shared by both decoders."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass
class DecodeResult:
    """What one decode produced: the completion tokens (not end-of-generation), why it ended,
    and how many of the tokens were drafts accepted without a decode of their own: grammar-forced
    ones, and ones copied from the context (lookup.py)."""

    tokens: list[int] = field(default_factory=list)
    finish_reason: str = "stop"
    forced_tokens: int = 0
    copied_tokens: int = 0
    full_masks: int = 0


OnToken = Callable[[int], None]
