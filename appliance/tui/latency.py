"""Measure how responsive the TUI is: key press -> visible change, and event-loop lag.

Used by the responsiveness test (scripted slow model) and by scripts/bench_tui_responsiveness.py
(the real model). Two numbers, because they fail differently: a key's latency shows what a person
feels; the loop lag (how late a 10 ms timer fires) shows the event loop being blocked by anything,
even when no key is pressed.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Latencies:
    samples_ms: tuple[float, ...]

    @property
    def p50(self) -> float:
        return statistics.median(self.samples_ms) if self.samples_ms else 0.0

    @property
    def p95(self) -> float:
        if not self.samples_ms:
            return 0.0
        ordered = sorted(self.samples_ms)
        return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]

    @property
    def max(self) -> float:
        return max(self.samples_ms, default=0.0)

    def describe(self) -> str:
        return f"n={len(self.samples_ms)} p50={self.p50:.1f} ms p95={self.p95:.1f} ms max={self.max:.1f} ms"


def send_key(app: Any, key: str) -> None:
    """Deliver a key the way the terminal driver does, without Pilot's waits for an idle process
    (which would measure the machine's load, not the app's response)."""
    from textual import events

    event = events.Key(key, key if len(key) == 1 else None)
    event.set_sender(app)
    app._driver.send_message(event)


async def key_latencies(
    pilot: Any,
    key: str,
    probe: Callable[[], Any],
    *,
    presses: int = 10,
    keep_going: Callable[[], bool] = lambda: True,
    gap: float = 0.05,
    timeout: float = 5.0,
) -> Latencies:
    """Press `key` up to `presses` times; each time, the ms until `probe()` (what the screen shows,
    e.g. whether a panel is displayed) differs from its value just before the press."""
    samples: list[float] = []
    for _ in range(presses):
        if not keep_going():
            break
        before = probe()
        started = time.perf_counter()
        send_key(pilot.app, key)
        while probe() == before:
            if time.perf_counter() - started > timeout:
                raise AssertionError(f"{key} made no visible change within {timeout} s")
            await asyncio.sleep(0.001)
        samples.append((time.perf_counter() - started) * 1000.0)
        await asyncio.sleep(gap)
    return Latencies(tuple(samples))


async def loop_lag(seconds: float, *, tick: float = 0.01, keep_going: Callable[[], bool] = lambda: True) -> Latencies:
    """How late a `tick`-second sleep wakes up on this event loop, sampled for `seconds`."""
    samples: list[float] = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end and keep_going():
        started = time.perf_counter()
        await asyncio.sleep(tick)
        samples.append(max(0.0, (time.perf_counter() - started - tick) * 1000.0))
    return Latencies(tuple(samples))
