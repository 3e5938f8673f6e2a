"""A small terminal (80x24, as over SSH): the answer keeps at least 60 columns, the side panels
collapse out of its way, and come back beside it when the terminal is wide enough."""

from __future__ import annotations

from appliance.analyzers import Finding
from appliance.tui.panels import ANSWER_MIN, PanelLayout
from support.tui import ask, make_app, run, wait_for

WIDTHS = {"system": 30, "checks": 38}  # as in app.tcss
PROBLEM = Finding("zombies", "warning", "worker (pid 7) holds 3 zombie children", {"zombies": 3},
                  culprit="worker", pid=7)


def problems() -> list[Finding]:
    return [PROBLEM]


def test_open_panels_sit_beside_the_answer_only_while_it_keeps_its_columns():
    layout = PanelLayout()
    layout.open("checks", by_person=False)
    assert layout.arrange(140, WIDTHS).beside == {"checks"}
    assert layout.arrange(80, WIDTHS).beside == set() and layout.arrange(80, WIDTHS).front is None
    layout.open("system", by_person=True)
    assert layout.arrange(140, WIDTHS).beside == {"system", "checks"}
    assert layout.arrange(100, WIDTHS).beside == {"system"}  # the latest first; checks waits for room
    wanted = layout.arrange(80, WIDTHS)
    assert wanted.beside == set() and wanted.front == "system"  # asked for: shown alone
    layout.tuck()
    assert layout.arrange(80, WIDTHS).front is None and layout.is_open("system")
    layout.close("system")
    assert not layout.is_open("system") and layout.arrange(140, WIDTHS).beside == {"checks"}


def test_at_80x24_the_answer_gets_60_columns_and_the_panels_collapse():
    app = make_app(checker=problems, sample_interval=3600)

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            screen = app.run_screen
            await wait_for(pilot, lambda: screen.checks_panel.findings)
            await ask(pilot, "why is my fan loud?")
            await wait_for(pilot, lambda: screen.last_run_id is not None and not screen.run_active)
            await pilot.pause(0.2)
            answer = screen.transcript.query_one(".answer")
            assert answer.region.width >= ANSWER_MIN
            assert not screen.system_panel.display and not screen.checks_panel.display
            assert any("Ctrl+G" in note.message for note in app._notifications)  # where the problem is

            await pilot.press("ctrl+g")  # asked for: shown in place of the transcript, full width
            await pilot.pause(0.1)
            assert screen.checks_panel.display and not screen.transcript.display
            assert screen.checks_panel.region.width == 80
            await pilot.press("ctrl+g")
            await pilot.pause(0.1)
            assert screen.transcript.display and not screen.checks_panel.display

            await pilot.press("ctrl+t")
            await pilot.pause(0.1)
            assert screen.system_panel.display and not screen.transcript.display
            await ask(pilot, "why is my fan loud?")  # a new question brings the run back into view
            await pilot.pause(0.1)
            assert screen.transcript.display and not screen.system_panel.display

            await pilot.resize_terminal(140, 30)  # wide: the open panel comes back beside it (not the closed one)
            await wait_for(pilot, lambda: screen.system_panel.display)
            assert not screen.checks_panel.display
            await wait_for(pilot, lambda: not screen.run_active)
            await pilot.pause(0.2)
            assert screen.transcript.display
            assert screen.transcript.query(".answer").last().region.width >= ANSWER_MIN

    run(scenario())


def test_a_resize_behind_another_screen_is_arranged_when_the_run_screen_comes_back():
    app = make_app(checker=problems)

    async def scenario():
        async with app.run_test(size=(140, 30)) as pilot:
            screen = app.run_screen
            await wait_for(pilot, lambda: screen.checks_panel.display)  # a problem, and room beside the answer
            await pilot.press("ctrl+r")
            await wait_for(pilot, lambda: type(app.screen).__name__ == "HistoryScreen")
            await pilot.resize_terminal(80, 24)
            await pilot.pause(0.1)
            await pilot.press("ctrl+r")
            await wait_for(pilot, lambda: app.screen is screen)
            await wait_for(pilot, lambda: not screen.checks_panel.display)
            assert screen.transcript.display and screen.transcript.region.width == 80

    run(scenario())
