#!/usr/bin/env python3
"""How responsive is the TUI while the real model works? (issue 9: "keep the TUI responsive")

Runs the real app headless (Textual's test driver, 80x24) with a real GGUF model, the real engine
and the real tools. For each configuration it measures, while idle and then while a run is going
(prompt evaluation and token generation in the worker thread):
  - key latency: Ctrl+T delivered like a terminal key -> the system panel has toggled;
  - event-loop lag: how late a 10 ms timer fires.
Configurations, side by side in one process on the same model, after one unmeasured warm-up run
(so every measured run finds the same prompt in the KV cache): token pieces batched (the default,
<= 20 screen updates a second), unbatched (one update per piece), and batched with Python's thread
switch interval at 1 ms instead of 5 ms (how long the event loop may wait for the GIL).

    .venv/bin/python scripts/bench_tui_responsiveness.py [--model PATH|NAME] [--steps 2]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from appliance.agent import events as ev  # noqa: E402
from appliance.agent.settings import EngineSettings  # noqa: E402
from appliance.commands.tui import make_model_loader  # noqa: E402
from appliance.config import resolve_paths  # noqa: E402
from appliance.tui.app import ApplianceApp  # noqa: E402
from appliance.tui.history_source import MemoryHistory  # noqa: E402
from appliance.tui.latency import key_latencies, loop_lag  # noqa: E402
from appliance.wiring import prepare  # noqa: E402


async def measure(model, *, steps: int, question: str, delta_interval: float, switch: float | None = None) -> dict:
    history = MemoryHistory()
    app = ApplianceApp(
        model_loader=lambda spec: model, engine_factory=prepare().engine, settings=EngineSettings(max_steps=steps),
        recorder_factory=lambda: history, history=history, sampler=None, delta_interval=delta_interval,
    )
    out: dict = {}
    default_switch = sys.getswitchinterval()
    if switch is not None:
        sys.setswitchinterval(switch)
    try:
        return await _measure(app, out, question)
    finally:
        sys.setswitchinterval(default_switch)


async def _measure(app: ApplianceApp, out: dict, question: str) -> dict:
    async with app.run_test(size=(80, 24)) as pilot:
        while app.model is None:
            await pilot.pause(0.05)
        probe = lambda: app.run_screen.system_panel.display  # noqa: E731
        out["idle_keys"] = await key_latencies(pilot, "ctrl+t", probe, presses=10, gap=0.1)
        out["idle_lag"] = await loop_lag(1.0)
        box = app.run_screen.question_box
        box.value = question
        await pilot.press("enter")
        started = time.perf_counter()
        while not app.run_screen.run_active:
            await pilot.pause(0.01)
        running = lambda: app.run_screen.run_active  # noqa: E731
        lag = asyncio.create_task(loop_lag(600, keep_going=running))
        out["busy_keys"] = await key_latencies(pilot, "ctrl+t", probe, presses=2000, gap=0.2, keep_going=running)
        out["busy_lag"] = await lag
        while app.run_screen.run_active:
            await pilot.pause(0.05)
        out["seconds"] = time.perf_counter() - started
        steps_done = [e for e in app.run_screen.events_seen if isinstance(e, ev.StepRecorded) and e.stats.completion_tokens]
        out["tokens"] = sum(e.stats.completion_tokens for e in steps_done)
        gen_s = sum(e.stats.generation_ms for e in steps_done) / 1000
        out["tok_s"] = out["tokens"] / gen_s if gen_s else 0.0
        out["pieces"] = sum(1 for e in app.run_screen.events_seen if isinstance(e, ev.TextDelta))
        ended = [e for e in app.run_screen.events_seen if isinstance(e, ev.RunEnded)]
        out["status"] = ended[-1].status if ended else "?"
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(ROOT / "models" / "smollm2-135m-instruct-q4_1.gguf"))
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--question", default="why is my computer slow?")
    args = parser.parse_args()
    loaded = time.perf_counter()
    model = make_model_loader(resolve_paths())(args.model)
    print(f"model {model.info.name} loaded in {time.perf_counter() - loaded:.1f} s")
    warm = asyncio.run(measure(model, steps=args.steps, question=args.question, delta_interval=0.05))
    print(f"warm-up run: {warm['status']} in {warm['seconds']:.1f} s")
    rows = []
    configs = (("batched (0.05 s)", 0.05, None), ("unbatched", 0.0, None), ("batched, switch interval 1 ms", 0.05, 0.001))
    for label, interval, switch in configs:
        result = asyncio.run(measure(model, steps=args.steps, question=args.question, delta_interval=interval,
                                     switch=switch))
        rows.append((label, result))
    for label, r in rows:
        print(f"\n== {label}: run {r['status']} in {r['seconds']:.1f} s, {r['tokens']} tokens at "
              f"{r['tok_s']:.1f} tok/s, {r['pieces']} screen updates of the thought")
        print(f"  idle  key latency: {r['idle_keys'].describe()}")
        print(f"  idle  loop lag   : {r['idle_lag'].describe()}")
        print(f"  busy  key latency: {r['busy_keys'].describe()}")
        print(f"  busy  loop lag   : {r['busy_lag'].describe()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
