"""Merge the model's token pieces into a few screen updates a second.

A small model streams 50-130 pieces a second; repainting a step card for each one keeps the event
loop busy for no visible gain. The run's worker passes every engine event through `DeltaBatcher`:
TextDelta pieces of the same step are held for at most `interval` seconds and handed on as one
TextDelta; any other event first flushes what is held, so the order of events never changes.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Iterator

from appliance.agent.events import TextDelta

DELTA_INTERVAL = 0.05  # seconds: at most ~20 thought updates a second reach the screen


class DeltaBatcher:
    def __init__(self, interval: float = DELTA_INTERVAL, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self.clock = clock
        self._held: list[TextDelta] = []
        self._last = clock()

    def feed(self, event: Any) -> Iterator[Any]:
        """The events to hand on now, in order (possibly none)."""
        if not isinstance(event, TextDelta):
            yield from self.flush()
            yield event
            return
        if self._held and (self._held[0].step, self._held[0].kind) != (event.step, event.kind):
            yield from self.flush()
        self._held.append(event)
        if self.clock() - self._last >= self.interval:
            yield from self.flush()

    def flush(self) -> Iterator[TextDelta]:
        if self._held:
            merged = dataclasses.replace(self._held[0], text="".join(piece.text for piece in self._held))
            self._held.clear()
            self._last = self.clock()
            yield merged
