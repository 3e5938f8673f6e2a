"""A scripted stand-in for a model: a queue of replies, streamed piece by piece.

Right for testing the loop's logic, the store and the TUI; never a substitute where the real
model's behaviour is the point.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from typing import Callable, Iterable, Sequence

from appliance.llm.base import Generation, GenerationStats, Message, ModelInfo, OnProgress, OnText, ShouldStop

Reply = str | dict | Callable[[Sequence[Message], dict], "str | dict"]


class ScriptedModel:
    """Returns the scripted replies in order, one per `generate` call.

    A reply may be a string (returned as is), a dict (dumped as JSON) or a callable that receives
    the messages and schema and returns either. `delay` seconds pass between streamed pieces (for
    responsiveness tests); `release`, when given, makes each reply's last piece wait until it is set
    (or the caller stops), so a test can look at the screen while the model is provably still writing
    however slow the host, and once it is set the rest streams without delay; `fail_on_call` raises on the nth call (0-based) to simulate a model failure.
    Every call is kept in `calls` as (messages, schema) so tests can inspect the prompts.
    """

    def __init__(
        self,
        replies: Iterable[Reply],
        *,
        name: str = "scripted",
        context_length: int = 8192,
        delay: float = 0.0,
        piece_size: int = 4,
        fail_on_call: int | None = None,
        release: threading.Event | None = None,
        labels: Iterable[str | dict] = (),
    ) -> None:
        self.replies: deque[Reply] = deque(replies)
        self.info = ModelInfo(name=name, path="", size=0, sha256="", context_length=context_length)
        self._context_length = context_length
        self.delay = delay
        self.piece_size = piece_size
        self.fail_on_call = fail_on_call
        self.release = release
        self.calls: list[tuple[list[Message], dict]] = []
        self.labels: deque[str | dict] = deque(labels)
        self.label_calls: list[tuple[list[Message], dict]] = []
        self._previous_tokens = 0

    @property
    def context_length(self) -> int:
        return self._context_length

    def count_tokens(self, messages: Sequence[Message]) -> int:
        # Roughly four characters a token, like real BPE vocabularies on English and JSON.
        return sum(len(m.content) // 4 + 4 for m in messages)

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
        if _asks_labels(schema):
            return self._labels(messages, schema)
        call_index = len(self.calls)
        self.calls.append((list(messages), schema))
        if self.fail_on_call is not None and call_index == self.fail_on_call:
            raise RuntimeError("scripted model failure")
        if not self.replies:
            raise RuntimeError("scripted model ran out of replies")
        reply = self.replies.popleft()
        if callable(reply):
            reply = reply(messages, schema)
        text = reply if isinstance(reply, str) else json.dumps(reply)
        prompt_tokens = self.count_tokens(messages)
        reused = min(self._previous_tokens, prompt_tokens)
        self._previous_tokens = prompt_tokens + len(text) // 4
        started = time.perf_counter()
        produced: list[str] = []
        finish = "stop"
        for start in range(0, len(text), self.piece_size):
            if should_stop is not None and should_stop():
                finish = "cancelled"
                break
            if start + self.piece_size >= len(text) and not self._released(should_stop):
                finish = "cancelled"
                break
            piece = text[start : start + self.piece_size]
            produced.append(piece)
            if on_text is not None:
                on_text(piece)
            if self.delay and not (self.release is not None and self.release.is_set()):
                time.sleep(self.delay)
        out = "".join(produced)
        elapsed_ms = (time.perf_counter() - started) * 1000.0
        stats = GenerationStats(
            prompt_tokens_evaluated=prompt_tokens - reused,
            prompt_tokens_reused=reused,
            completion_tokens=max(1, len(out) // 4),
            generation_ms=elapsed_ms,
        )
        return Generation(text=out, finish_reason=finish, stats=stats)

    def _labels(self, messages: Sequence[Message], schema: dict) -> Generation:
        """The question's labels: the next scripted one, or an empty reply (the engine then keeps
        the words' reading). Kept apart from `calls` and `replies`, so a test of the loop scripts
        only its steps."""
        self.label_calls.append((list(messages), schema))
        reply = self.labels.popleft() if self.labels else ""
        return Generation(text=reply if isinstance(reply, str) else json.dumps(reply), finish_reason="stop")

    def _released(self, should_stop: ShouldStop | None) -> bool:
        """Waits for `release` (when there is one); False when the caller stopped meanwhile."""
        while self.release is not None and not self.release.wait(0.02):
            if should_stop is not None and should_stop():
                return False
        return True


def _asks_labels(schema: dict) -> bool:
    """The call asks for the question's labels (agent/question/classify.py's schema: asks, resource, fault)."""
    return set(schema.get("properties", {})) == {"asks", "resource", "fault"}
