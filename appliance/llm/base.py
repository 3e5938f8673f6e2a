"""The contract between the ReAct engine and a language model.

The engine hands over the whole conversation each step; the model renders it with its chat
template, reuses the longest common token prefix of the previous call (KV cache) and generates one
JSON object constrained by a JSON schema. Everything the engine and the store need to know about
the call comes back as a plain `Generation` value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence, runtime_checkable


@dataclass(frozen=True)
class Message:
    """One chat message: role is 'system', 'user' or 'assistant'."""

    role: str
    content: str


@dataclass(frozen=True)
class GenerationStats:
    """Token accounting for one model call (what the store and the status bar show)."""

    prompt_tokens_evaluated: int = 0
    prompt_tokens_reused: int = 0
    completion_tokens: int = 0
    forced_tokens: int = 0
    copied_tokens: int = 0  # drafts copied from the context and kept (llm/lookup.py)
    generation_ms: float = 0.0
    prompt_ms: float = 0.0
    threads: int | None = None
    threads_batch: int | None = None

    @property
    def tokens_per_second(self) -> float:
        seconds = self.generation_ms / 1000.0
        return self.completion_tokens / seconds if seconds > 0 else 0.0


@dataclass(frozen=True)
class Generation:
    """The text a model produced and how the call ended.

    finish_reason: 'stop' (the grammar or model ended the object), 'length' (max_tokens reached),
    'cancelled' (should_stop returned True).
    """

    text: str
    finish_reason: str = "stop"
    stats: GenerationStats = field(default_factory=GenerationStats)


@dataclass(frozen=True)
class ModelInfo:
    """What identifies the model of a run in the trajectory store."""

    name: str
    path: str = ""
    size: int = 0
    sha256: str = ""
    context_length: int = 0


OnText = Callable[[str], None]
ShouldStop = Callable[[], bool]
OnProgress = Callable[[int, int, float], None]  # prompt tokens evaluated, of how many, seconds left


@runtime_checkable
class ChatModel(Protocol):
    """A model the engine can drive. Real: `appliance.llm.runtime.LlamaChatModel`; fake: `ScriptedModel`.

    Optional: `begin_run()`, called by the engine when a new question starts (the real model has
    its thread policy read the load afresh then); `take_load_seconds()`, the model's load time
    once (charged to the first run); `runtime_report()`, the settings and prompt-cache use to
    record with a run; `warm(messages, should_stop=, on_progress=)`, bring the system prompt
    into the context ahead of a question."""

    info: ModelInfo

    @property
    def context_length(self) -> int: ...

    def count_tokens(self, messages: Sequence[Message]) -> int:
        """Tokens the rendered conversation takes (used to keep the context from overflowing)."""
        ...

    def generate(
        self,
        messages: Sequence[Message],
        schema: dict,
        *,
        max_tokens: int,
        temperature: float = 0.0,
        on_text: OnText | None = None,
        should_stop: ShouldStop | None = None,
        on_progress: OnProgress | None = None,
    ) -> Generation:
        """Continue the conversation with one assistant message that is a JSON object valid under
        `schema`. `on_text` receives each decoded piece as it is produced (for streaming the
        thought); `should_stop` is polled between tokens and between chunks of prompt evaluation
        so a cancel takes effect within a second; `on_progress` hears how prompt evaluation goes.
        """
        ...
