"""Snapshot tests of the main screens (pytest-textual-snapshot), at 80x24 and at 120x40.

Deterministic by construction: fixed clocks, a fixed machine snapshot, a fixed system sampler,
fixed token statistics and history rows with fixed times (shown in UTC). Update after a deliberate
change with `pytest tests/test_tui_snapshots.py --snapshot-update` and look at the SVGs.
"""

from __future__ import annotations

import time

import pytest

from appliance.agent import events as ev
from appliance.errors import ModelError
from appliance.llm.base import ModelInfo
from appliance.tui.history_source import MemoryHistory
from appliance.tui.loading import ModelNotOnDisk
from support.tui import STEP_ASK, STEP_FINISH, STEP_TOOL, ask, make_app, wait_for

FIXED_START = 1795900000.0  # 2026-11-28 21:06:40 UTC


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


async def steady(pilot) -> None:
    """No blinking cursors, and every answer box rendered: a snapshot must not depend on the
    moment it is taken (on a busy machine the Markdown may still be parsing)."""
    from textual.widgets import Input, Markdown

    for answer in pilot.app.screen.query(Markdown):
        await wait_for(pilot, lambda answer=answer: len(answer.children) > 0)
    for screen in pilot.app.screen_stack:
        for box in screen.query(Input):
            box.cursor_blink = False
    await pilot.pause(0.05)


def until(condition):
    async def before(pilot):
        await wait_for(pilot, condition)
        await steady(pilot)

    return before


async def finished_run(pilot, *, top: bool = False) -> None:
    await ask(pilot, "why is my fan loud?")
    await wait_for(pilot, lambda: pilot.app.run_screen.last_run_id is not None and not pilot.app.run_screen.run_active)
    await pilot.pause(0.2)
    if top:
        pilot.app.run_screen.transcript.scroll_home(animate=False)
    await steady(pilot)


def fixed_history() -> MemoryHistory:
    history = MemoryHistory()
    model = ModelInfo(name="qwen2.5-coder-1.5b-instruct")
    runs = [
        ("a1", "why is my fan loud?", ev.FINISHED, 3),
        ("b2", "what is filling my disk?", ev.MAX_STEPS, 8),
        ("c3", "why does nginx keep failing?", ev.CANCELLED, 2),
    ]
    for index, (run_id, question, status, steps) in enumerate(runs):
        started = FIXED_START + index * 600
        history.record(ev.RunStarted(run_id, question, model, {}, started, "0.1.0"))
        for step in range(1, steps + 1):
            history.record(ev.StepRecorded(run_id, step, started + step, f"thought {step}", "top_processes",
                                           {"limit": 5}, "ok", "pid=4242 name=burn cpu_percent=99.0",
                                           "burn 99%", None, "ok"))
        history.record(ev.FinalAnswer(run_id, steps, f"answer to {question}", {"culprit": "burn"}, ("burn 99%",)))
        history.record(ev.RunEnded(run_id, status, f"answer to {question}", {"culprit": "burn"}, "", steps,
                                   0, 0, 0, 10.0, started + 10))
    return history


def test_welcome_80x24(snap_compare):
    app = make_app(deterministic=True)
    assert snap_compare(app, terminal_size=(80, 24), run_before=until(lambda: app.model))


def test_finished_run_answer_80x24(snap_compare):
    assert snap_compare(make_app(deterministic=True), terminal_size=(80, 24), run_before=finished_run)


def test_finished_run_steps_120x40(snap_compare):
    async def before(pilot):
        await finished_run(pilot, top=True)

    assert snap_compare(make_app(deterministic=True), terminal_size=(120, 40), run_before=before)


async def system_panel_shown(pilot) -> None:
    await finished_run(pilot, top=True)
    await pilot.press("ctrl+t")
    await wait_for(pilot, lambda: len(pilot.app.run_screen.system_panel.cpu) >= 1)
    await steady(pilot)


def test_system_panel_80x24(snap_compare):
    """Too narrow for it beside the answer: shown alone, in place of the transcript."""
    app = make_app(deterministic=True, sample_interval=3600)
    assert snap_compare(app, terminal_size=(80, 24), run_before=system_panel_shown)


def test_system_panel_120x40(snap_compare):
    app = make_app(deterministic=True, sample_interval=3600)
    assert snap_compare(app, terminal_size=(120, 40), run_before=system_panel_shown)


def test_ask_user_prompt_80x24(snap_compare):
    async def before(pilot):
        await ask(pilot, "why does my service keep failing?")
        await wait_for(pilot, lambda: type(pilot.app.screen).__name__ == "AskUserScreen")
        await steady(pilot)

    assert snap_compare(make_app([STEP_ASK, STEP_TOOL, STEP_FINISH], deterministic=True),
                        terminal_size=(80, 24), run_before=before)


def test_history_80x24(snap_compare):
    async def before(pilot):
        await wait_for(pilot, lambda: pilot.app.model)
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: type(pilot.app.screen).__name__ == "HistoryScreen")
        table = pilot.app.screen.query_one("DataTable")
        await wait_for(pilot, lambda: table.row_count == 3)
        # Column widths follow the rows on the next refresh: wait for them, not for a fixed time.
        await wait_for(pilot, lambda: table.ordered_columns[0].content_width >= len("11-28 21:26"))
        await steady(pilot)

    assert snap_compare(make_app(deterministic=True, history=fixed_history()), terminal_size=(80, 24),
                        run_before=before)


def test_replay_80x24(snap_compare):
    async def before(pilot):
        await wait_for(pilot, lambda: pilot.app.model)
        pilot.app.request_replay("a1")
        await wait_for(pilot, lambda: type(pilot.app.screen).__name__ == "ReplayScreen")
        await steady(pilot)

    assert snap_compare(make_app(deterministic=True, history=fixed_history()), terminal_size=(80, 24),
                        run_before=before)


def test_missing_model_80x24(snap_compare):
    def loader(spec):
        raise ModelNotOnDisk("qwen2.5-coder-1.5b-instruct", size=1_117_320_768,
                             detail="It is kept in /home/me/.local/share/appliance/models.")

    app = make_app(loader=loader, puller=lambda name, progress: None)
    assert snap_compare(app, terminal_size=(80, 24),
                        run_before=until(lambda: app.model_phase == "missing"))


def test_model_error_80x24(snap_compare):
    def loader(spec):
        raise ModelError("model file /models/broken.gguf is not a GGUF file (it starts with b'PK\\x03\\x04')")

    app = make_app(loader=loader)
    assert snap_compare(app, terminal_size=(80, 24),
                        run_before=until(lambda: app.model_phase == "error"))


def test_light_theme_80x24(snap_compare):
    async def before(pilot):
        await finished_run(pilot, top=True)
        await pilot.app.run_action("toggle_theme")
        await steady(pilot)

    assert snap_compare(make_app(deterministic=True), terminal_size=(80, 24), run_before=before)


def fixed_findings():
    from appliance.analyzers import Finding

    return [
        Finding("uptime", "ok", "up 3 d 4 h since 2026-11-25 17:02; 1 boot in the last 7 days (wtmp)", {"uptime_seconds": 1}),
        Finding("zombies", "warning", "worker (pid 4242) holds 3 zombie children it has not reaped (pids 4243, 4244, "
                "4245); 3 zombies on the machine, pid_max 32768", {"zombies": 3}, culprit="worker", pid=4242),
        Finding("sensors", "unknown", "no sensors: this machine exposes no temperature, fan or battery readings",
                {"sensors": 0}),
        Finding("kernel_errors", "critical", "the kernel logged 2 errors in the last hour (worst level crit, 3 min "
                "ago): «nvme nvme0: controller is down»", {"errors_last_hour": 2}, culprit="nvme nvme0"),
    ]


def test_checks_panel_80x24(snap_compare):
    """Problems found, and no room beside the answer: the panel stays collapsed (a notice says
    Ctrl+G shows it), then Ctrl+G shows it alone."""
    async def before(pilot):
        await wait_for(pilot, lambda: app.model and app.run_screen.checks_panel.findings)
        assert not app.run_screen.checks_panel.display
        app.clear_notifications()
        await pilot.press("ctrl+g")
        await steady(pilot)

    app = make_app(deterministic=True, checker=fixed_findings)
    assert snap_compare(app, terminal_size=(80, 24), run_before=before)


def test_checks_panel_120x40(snap_compare):
    app = make_app(deterministic=True, checker=fixed_findings)
    assert snap_compare(app, terminal_size=(120, 40),
                        run_before=until(lambda: app.model and app.run_screen.checks_panel.findings))
