"""The interface stays responsive while the model generates (issue 6 and issue 9).

A scripted model streams a long step slowly (one piece every 10 ms, in the engine's worker
thread); meanwhile the test presses Ctrl+T repeatedly and times each press until the system panel
has visibly toggled, and samples how late a 10 ms timer fires on the event loop. Both are compared
with the same measurements while idle. The bounds are generous (a shared 2-core CI machine); a UI
that did the model's work on the event loop would miss them by far: the step takes seconds.
"""

from __future__ import annotations

import asyncio
import threading

from appliance.agent import events as ev
from appliance.tui.latency import key_latencies, loop_lag
from support.tui import STEP_FINISH, ask, make_app, run, wait_for

LONG_STEP = {"thought": "checking the processes that use the CPU " * 60, "action": "top_processes",
             "action_input": {"limit": 5}}


def test_key_presses_are_handled_promptly_while_tokens_stream():
    release = threading.Event()  # the model cannot finish its step before the keys were measured
    app = make_app([LONG_STEP, STEP_FINISH], delay=0.01, sample_interval=3600, release=release)
    results = {}

    def panel_shown():
        return app.run_screen.system_panel.display

    def generating():
        return app.run_screen.run_active and not any(isinstance(e, ev.ThoughtMade) for e in app.run_screen.events_seen)

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: app.model is not None)
            results["idle_keys"] = await key_latencies(pilot, "ctrl+t", panel_shown, presses=6)
            results["idle_lag"] = await loop_lag(0.5)
            await ask(pilot, "why is my fan loud?")
            await wait_for(pilot, lambda: 1 in app.run_screen.transcript.cards and app.run_screen.transcript.cards[1].thought)
            shown_before = len(app.run_screen.transcript.cards[1].thought)
            lag_task = asyncio.create_task(loop_lag(1.5, keep_going=generating))
            results["busy_keys"] = await key_latencies(pilot, "ctrl+t", panel_shown, presses=10,
                                                        keep_going=generating)
            results["busy_lag"] = await lag_task
            results["shown"] = len(app.run_screen.transcript.cards[1].thought) - shown_before
            results["still_generating"] = generating()
            release.set()
            await wait_for(pilot, lambda: not app.run_screen.run_active, timeout=30)

    run(scenario())
    busy_keys, busy_lag = results["busy_keys"], results["busy_lag"]
    print("idle keys:", results["idle_keys"].describe(), "| idle loop lag:", results["idle_lag"].describe())
    print("busy keys:", busy_keys.describe(), "| busy loop lag:", busy_lag.describe())
    assert len(busy_keys.samples_ms) >= 5, "the model finished before the keys could be measured"
    assert results["shown"] > 100  # the thought kept growing on screen meanwhile
    assert busy_keys.p50 < 150 and busy_keys.max < 1000
    assert busy_lag.p95 < 100 and busy_lag.max < 500
