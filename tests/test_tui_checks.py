"""The checks panel: the analyzers' findings, problems first, computed in a thread worker when the
app opens and after each run, never blocking the screen. The real analyzers find a real zombie."""

from __future__ import annotations

import threading
import time

from appliance.analyzers import Finding, Readings, run_all
from appliance.tui.checks import findings_text, summary
from support.analyzers import planted
from test_analyzers_processes import ZOMBIE_PARENT
from support.tui import ask, make_app, run, wait_for

OK_ONE = Finding("uptime", "ok", "up 2 h 3 min since 2026-12-01 08:00", {"uptime_seconds": 7380})
WARN_ONE = Finding("zombies", "warning", "worker (pid 7) holds 3 zombie children", {"zombies": 3}, culprit="worker", pid=7)
CRIT_ONE = Finding("threads", "critical", "31000 threads, 95% of the limit", {"threads_total": 31000}, culprit="x", pid=8)


def test_problems_come_first_and_the_summary_counts_them():
    text = findings_text([OK_ONE, WARN_ONE, CRIT_ONE]).plain
    assert text.index("threads") < text.index("zombies") < text.index("uptime")
    assert "31000 threads, 95% of the limit" in text and "holds 3 zombie children" in text
    assert summary([OK_ONE, WARN_ONE, CRIT_ONE]) == "1 critical · 1 warning"
    assert summary([OK_ONE]) == "all clear"


def test_the_real_analyzers_show_a_real_zombie_parent_when_the_app_opens_and_again_after_a_run(tmp_path):
    calls: list[str] = []

    def checker():
        calls.append(threading.current_thread().name)
        return run_all(Readings(), families=["zombies", "uptime"])

    with planted(ZOMBIE_PARENT, "appliance-test-zombie-parent", tmp_path) as (pid, _):
        app = make_app(checker=checker)

        async def scenario():
            async with app.run_test(size=(110, 30)) as pilot:  # room for the panel beside the answer
                await wait_for(pilot, lambda: app.run_screen.checks_panel.findings)
                assert app.run_screen.checks_panel.display  # a problem on the first check opens the panel
                shown = findings_text(app.run_screen.checks_panel.findings).plain
                assert f"pid {pid}" in shown and "zombie" in shown
                assert "warning" in app.run_screen.checks_panel.border_subtitle  # other sessions may plant more
                await ask(pilot, "why is my fan loud?")
                await wait_for(pilot, lambda: len(calls) >= 2 and not app.run_screen.run_active)
                await pilot.press("ctrl+g")
                assert not app.run_screen.checks_panel.display

        run(scenario())
    assert len(calls) >= 2 and threading.main_thread().name not in calls


def test_a_slow_check_never_blocks_the_screen():
    release = threading.Event()

    def slow_checker():
        release.wait(5)
        return [OK_ONE]

    app = make_app(checker=slow_checker)

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: app.model is not None)
            started = time.perf_counter()
            await pilot.press("ctrl+t")
            await wait_for(pilot, lambda: app.run_screen.system_panel.display, timeout=1.0)
            assert time.perf_counter() - started < 1.0 and not app.run_screen.checks_panel.findings
            release.set()
            await wait_for(pilot, lambda: app.run_screen.checks_panel.findings)
            assert not app.run_screen.checks_panel.display  # nothing wrong: the panel stays closed until asked for

    run(scenario())
