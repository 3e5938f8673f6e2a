"""Each TUI flow driven with Textual's Pilot: the real app and engine, a scripted model."""

from __future__ import annotations

import threading
import time

from textual.widgets import DataTable, Input, Markdown

from appliance.agent import events as ev
from appliance.errors import ModelError
from appliance.store import open_recorder, open_store
from appliance.tui.history_source import StoreHistory
from appliance.tui.loading import ModelNotOnDisk
from appliance.tui.screens import (
    AskUserScreen,
    HistoryScreen,
    ModelErrorScreen,
    ModelMissingScreen,
    ReplayScreen,
)
from appliance.tui.widgets import StepCard, SystemPanel
from support.tui import (
    STEP_ASK,
    STEP_FINISH,
    STEP_TOOL,
    THOUGHT_1,
    FixedStatsModel,
    ask,
    make_app,
    run,
    wait_for,
)



def screen_shows(app, kind, selector: str) -> bool:
    """The screen is up *and* composed: a pushed screen's widgets mount a moment later, and a
    query in between raised NoMatches (seen once in a CI run)."""
    return isinstance(app.screen, kind) and bool(app.screen.query(selector))


async def one_run_in_history(pilot) -> DataTable:
    """Ask once, wait for the answer, open the history and wait for its one row."""
    app = pilot.app
    await ask(pilot, "why is my fan loud?")
    await wait_for(pilot, lambda: ended(app) is not None)
    await pilot.press("ctrl+r")
    await wait_for(pilot, lambda: screen_shows(app, HistoryScreen, "DataTable"))
    table = app.screen.query_one(DataTable)
    await wait_for(pilot, lambda: table.row_count == 1)
    return table


def ended(app) -> ev.RunEnded | None:
    found = [e for e in app.run_screen.events_seen if isinstance(e, ev.RunEnded)]
    return found[-1] if found else None


async def answered(pilot) -> Markdown:
    """Ask once and wait for the answer box."""
    await ask(pilot, "why is my fan loud?")
    await wait_for(pilot, lambda: ended(pilot.app) is not None)
    await pilot.pause(0.1)
    return pilot.app.query_one(".answer", Markdown)


def test_ask_streams_steps_and_shows_the_answer():
    app = make_app()

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            await answered(pilot)
            cards = list(app.query(StepCard))
            steps = {card.step: card for card in cards}
            assert set(steps) == {0, 1, 2}  # snapshot, the tool step, the finish step
            assert steps[1].thought == THOUGHT_1  # built from the streamed JSON pieces
            action = str(steps[1].query_one(".action").render())
            assert "top_processes" in action and '"limit": 5' in action
            assert steps[1].border_subtitle == "50 tok/s · threads 1/2"  # this step's speed and threads
            observation = steps[1].query_one(".observation")
            assert "observation · ok" in observation.title
            answer = app.query_one(".answer", Markdown)
            assert "burn" in answer.source and "pid 4242" in answer.source
            assert "**Evidence**" in answer.source and "burn (pid 4242)" in answer.source and "```" not in answer.source
            status = str(app.run_screen.status.render())
            assert "finished" in status and "step 2/6" in status
            assert "thr 1/2" in status and "50t/s" in status and "kv 700/800" in status  # short forms at 80 columns
            assert app.run_screen.last_answer.startswith("The **burn** process")
            assert app.focused is app.query_one("#question", Input)

    run(scenario())
    assert ended(app).status == ev.FINISHED


def test_ctrl_o_shows_the_evidence_as_the_tools_returned_it_and_back():
    app = make_app()

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            answer = await answered(pilot)
            assert "burn (pid 4242)" in answer.source and "(ctrl+o: as read)" in answer.source
            await pilot.press("ctrl+o")
            await wait_for(pilot, lambda: "as the tools returned it" in app.query_one(".answer", Markdown).source)
            raw = app.query_one(".answer", Markdown).source
            assert "pid=4242 name=burn" in raw and "```" in raw
            await pilot.press("ctrl+o")
            await wait_for(pilot, lambda: "(ctrl+o: as read)" in app.query_one(".answer", Markdown).source)

    run(scenario())


def test_typing_a_question_begins_the_machine_check_at_most_every_few_seconds():
    """The first step's check is begun while the person types (its windows pass meanwhile): at the
    first key, again once CHECK_WHILE_TYPING seconds have passed, and not for an empty box."""
    from appliance.tui.warmup import CHECK_WHILE_TYPING

    now = [100.0]
    begun: list[float] = []
    app = make_app(begin_check=lambda: begun.append(now[0]), clock=lambda: now[0])

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            box = app.query_one("#question", Input)
            box.focus()
            await pilot.press("space")
            await pilot.pause(0.05)
            assert begun == []  # only a blank
            await pilot.press("w", "h", "y")
            await wait_for(pilot, lambda: begun == [100.0])
            now[0] += CHECK_WHILE_TYPING + 0.1
            await pilot.press("x")
            await wait_for(pilot, lambda: len(begun) == 2)
            await pilot.press("y")
            await pilot.pause(0.05)
            assert len(begun) == 2

    run(scenario())


def test_thought_appears_while_the_model_is_still_writing():
    slow = {"thought": "x" * 20 + " checking the processes that use the CPU " + "y" * 60,
            "action": "top_processes", "action_input": {"limit": 2}}
    release = threading.Event()
    app = make_app([slow, STEP_FINISH], delay=0.01, release=release)

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            await ask(pilot, "why is it slow?")
            await wait_for(pilot, lambda: 1 in app.run_screen.transcript.cards and "checking" in app.run_screen.transcript.cards[1].thought)
            # Part of the thought is on screen while the model is held before its step's last piece.
            assert not any(isinstance(e, ev.ThoughtMade) for e in app.run_screen.events_seen)
            assert "{" not in app.run_screen.transcript.cards[1].thought
            release.set()
            await wait_for(pilot, lambda: ended(app) is not None)

    run(scenario())


def test_escape_cancels_within_a_moment_and_the_run_is_recorded_cancelled(tmp_path):
    db = tmp_path / "runs.db"
    long_step = {"thought": "thinking " * 200, "action": "top_processes", "action_input": {"limit": 5}}
    app = make_app([long_step, STEP_FINISH], delay=0.01,
                   recorder_factory=lambda: open_recorder(db), history=StoreHistory(db))
    timing = {}

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            await ask(pilot, "why is my fan loud?")
            await wait_for(pilot, lambda: 1 in app.run_screen.transcript.cards and len(app.run_screen.transcript.cards[1].thought) > 20)
            started = time.perf_counter()
            await pilot.press("escape")
            await wait_for(pilot, lambda: ended(app) is not None, timeout=5)
            timing["cancel"] = time.perf_counter() - started
            assert "cancelled" in str(app.run_screen.status.render())
            assert app.query_one(".answer", Markdown).border_title == "Answer (cancelled)"

    run(scenario())
    assert ended(app).status == ev.CANCELLED
    assert timing["cancel"] < 1.5, timing
    with open_store(db, readonly=True) as store:
        runs = store.list_runs()
    assert [r["status"] for r in runs] == [ev.CANCELLED]


def test_quitting_during_a_run_records_it_cancelled_not_running(tmp_path):
    db = tmp_path / "runs.db"
    long_step = {"thought": "thinking " * 200, "action": "top_processes", "action_input": {"limit": 5}}
    app = make_app([long_step, STEP_FINISH], delay=0.01, recorder_factory=lambda: open_recorder(db))

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            await ask(pilot, "why is my fan loud?")
            await wait_for(pilot, lambda: 1 in app.run_screen.transcript.cards and len(app.run_screen.transcript.cards[1].thought) > 20)
            await pilot.press("ctrl+q")

    started = time.perf_counter()
    run(scenario())
    assert time.perf_counter() - started < 10
    with open_store(db, readonly=True) as store:
        runs = store.list_runs()
        assert [r["status"] for r in runs] == [ev.CANCELLED]
        recorded = store.get_run(runs[0]["id"])
    assert recorded["steps"] and recorded["steps"][0]["action"] == "snapshot"
    assert set(recorded["timing"]) >= {"prompt", "generation", "tools", "engine", "total"}


def test_ctrl_c_cancels_too():
    long_step = {"thought": "thinking " * 200, "action": "top_processes", "action_input": {"limit": 5}}
    app = make_app([long_step], delay=0.01)

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            await ask(pilot, "why?")
            await wait_for(pilot, lambda: 1 in app.run_screen.transcript.cards and app.run_screen.transcript.cards[1].thought)
            await pilot.press("ctrl+c")
            await wait_for(pilot, lambda: ended(app) is not None, timeout=5)

    run(scenario())
    assert ended(app).status == ev.CANCELLED


def test_ask_user_prompt_sends_the_reply_back_to_the_agent():
    model = FixedStatsModel([STEP_ASK, STEP_TOOL, STEP_FINISH], name="scripted")
    app = make_app(model=model)

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            await ask(pilot, "why does my service keep failing?")
            await wait_for(pilot, lambda: screen_shows(app, AskUserScreen, "#ask-question"))
            assert "Which service keeps failing?" in str(app.screen.query_one("#ask-question").render())
            await pilot.press(*"nginx", "enter")
            await wait_for(pilot, lambda: ended(app) is not None)

    run(scenario())
    replies = [e for e in app.run_screen.events_seen if isinstance(e, ev.UserReplied)]
    assert [r.reply for r in replies] == ["nginx"]
    second_prompt = "\n".join(m.content for m in model.calls[1][0])
    assert "nginx" in second_prompt
    assert ended(app).status == ev.FINISHED


def test_escape_on_the_prompt_declines_to_answer():
    model = FixedStatsModel([STEP_ASK, STEP_TOOL, STEP_FINISH], name="scripted")
    app = make_app(model=model)

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            await ask(pilot, "why?")
            await wait_for(pilot, lambda: screen_shows(app, AskUserScreen, "#ask-question"))
            await pilot.press("escape")
            await wait_for(pilot, lambda: ended(app) is not None)

    run(scenario())
    assert [e.reply for e in app.run_screen.events_seen if isinstance(e, ev.UserReplied)] == [None]


def test_history_lists_searches_replays_exports_and_asks_again(tmp_path):
    db = tmp_path / "runs.db"
    exports = tmp_path / "exports"
    from appliance.tui.export import MarkdownExporter

    replies = [STEP_TOOL, STEP_FINISH, STEP_TOOL, STEP_FINISH]
    app = make_app(replies, recorder_factory=lambda: open_recorder(db), history=StoreHistory(db),
                   exporter=MarkdownExporter(exports))

    async def scenario():
        async with app.run_test(size=(100, 30)) as pilot:
            table = await one_run_in_history(pilot)
            await pilot.press(*"nothing-like-this")
            await wait_for(pilot, lambda: table.row_count == 0)
            for _ in range(len("nothing-like-this")):
                await pilot.press("backspace")
            await pilot.press(*"fan")
            await wait_for(pilot, lambda: table.row_count == 1)
            await pilot.press("down", "enter")
            await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen))
            replay = app.screen
            cards = {card.step: card for card in replay.query(StepCard)}
            assert set(cards) == {0, 1, 2}
            assert cards[1].thought == THOUGHT_1
            assert "burn" in replay.query_one(".answer", Markdown).source
            await pilot.press("x")
            await wait_for(pilot, lambda: exports.exists() and any(exports.iterdir()))
            await pilot.press("a")
            await wait_for(pilot, lambda: len([e for e in app.run_screen.events_seen if isinstance(e, ev.RunEnded)]) == 2)

    run(scenario())
    exported = next(exports.iterdir()).read_text()
    assert exported.startswith("# why is my fan loud?") and "top_processes" in exported and "burn" in exported
    questions = [e.question for e in app.run_screen.events_seen if isinstance(e, ev.RunStarted)]
    assert questions == ["why is my fan loud?", "why is my fan loud?"]


def test_replay_copies_its_answer_and_a_failing_history_is_a_notification_not_a_crash():
    from appliance.tui.history_source import MemoryHistory

    class BrokenSearch(MemoryHistory):
        def list_runs(self, query="", limit=200):
            if query:
                raise OSError("database disk image is malformed")
            return super().list_runs(query, limit)

    history = BrokenSearch()
    app = make_app(recorder_factory=lambda: history, history=history)
    copied = []
    app.copy_to_clipboard = copied.append

    async def scenario():
        async with app.run_test(size=(100, 30)) as pilot:
            table = await one_run_in_history(pilot)
            await pilot.press("x")
            await wait_for(pilot, lambda: any("history: OSError: database disk image is malformed" in n.message
                                              for n in app._notifications))
            assert isinstance(app.screen, HistoryScreen) and table.row_count == 1
            await pilot.press("down", "enter")
            await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen))
            await pilot.press("c")
            await wait_for(pilot, lambda: copied)

    run(scenario())
    assert copied == [app.run_screen.last_answer] and "burn" in copied[0]


def test_missing_model_offers_a_pull_with_progress_then_loads_it():
    model = FixedStatsModel([STEP_TOOL, STEP_FINISH], name="qwen2.5-coder-1.5b-instruct")
    state = {"pulled": False, "loads": 0}

    def loader(spec):
        state["loads"] += 1
        if not state["pulled"]:
            raise ModelNotOnDisk("qwen2.5-coder-1.5b-instruct", size=1_117_320_768, detail="It is kept in /tmp/models.")
        return model

    def puller(name, progress):
        for done in range(0, 101, 25):
            progress(done * 1_000_000, 100_000_000)
            time.sleep(0.02)
        state["pulled"] = True
        return f"/tmp/models/{name}.gguf"

    app = make_app(loader=loader, puller=puller)

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: screen_shows(app, ModelMissingScreen, "#missing-text"))
            text = str(app.screen.query_one("#missing-text").render())
            assert "qwen2.5-coder-1.5b-instruct (1,117 MB) is not on this machine" in text
            assert "appliance models import" in text and "Press p to pull it" in text
            await pilot.press("p")
            await wait_for(pilot, lambda: app.model is model)
            assert not isinstance(app.screen, ModelMissingScreen)
            assert "qwen2.5-coder-1.5b-instruct" in str(app.run_screen.status.render())

    run(scenario())
    assert state["loads"] == 2


def test_missing_model_without_a_puller_explains_how_to_import():
    def loader(spec):
        raise ModelNotOnDisk("smollm2-135m-instruct", size=98_362_432, detail="It is kept in /tmp/m.")

    app = make_app(loader=loader, puller=None)

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: screen_shows(app, ModelMissingScreen, "#missing-text"))
            text = str(app.screen.query_one("#missing-text").render())
            assert "Press p" not in text and "appliance models import /path/to/model.gguf" in text

    run(scenario())


def test_corrupt_model_file_shows_the_loaders_error_on_screen(tmp_path):
    from appliance.commands.tui import make_model_loader
    from appliance.config import Paths

    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"this is not a gguf file" * 100)
    loader = make_model_loader(Paths(home=tmp_path, db=tmp_path / "r.db", models_dir=tmp_path / "models"))
    app = make_app(loader=loader, model_spec=str(bad))
    try:
        loader(str(bad))
    except ModelError as exc:
        expected = exc.message
    else:  # pragma: no cover - the loader must refuse this file
        raise AssertionError("a garbage file was loaded as a model")

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: screen_shows(app, ModelErrorScreen, "#model-error-text"))
            shown = str(app.screen.query_one("#model-error-text").render())
            assert expected in shown
            assert "model error" in str(app.run_screen.status.render())

    run(scenario())


def test_a_model_failure_during_the_run_ends_it_with_the_error():
    model = FixedStatsModel([STEP_TOOL], name="scripted", fail_on_call=0)
    app = make_app(model=model)

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            await ask(pilot, "why?")
            await wait_for(pilot, lambda: ended(app) is not None)
            await pilot.pause(0.05)
            answer = app.query_one(".answer", Markdown)
            assert answer.border_title == "Answer (failed)" and "scripted model failure" in answer.source
            assert "failed" in str(app.run_screen.status.render())

    run(scenario())
    assert ended(app).status == ev.ERROR


def test_question_typed_while_loading_starts_when_the_model_is_ready():
    import threading

    gate = threading.Event()
    model = FixedStatsModel([STEP_TOOL, STEP_FINISH], name="slow-loader")

    def loader(spec):
        gate.wait(5)
        return model

    app = make_app(loader=loader)

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause(0.05)
            assert app.model is None and "loading model" in str(app.run_screen.status.render())
            await pilot.press(*"why is it hot?", "enter")
            gate.set()
            await wait_for(pilot, lambda: ended(app) is not None)

    run(scenario())
    assert ended(app).status == ev.FINISHED


def test_palette_sets_the_step_limit_and_switches_model():
    loaded = []

    def loader(spec):
        loaded.append(spec)
        return FixedStatsModel([], name=spec or "default")

    app = make_app(loader=loader, model_choices=lambda: [("smollm2-135m-instruct", "smollm2-135m-instruct")])

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: app.model is not None)
            await pilot.press("ctrl+p")
            await pilot.pause(0.2)
            await pilot.press(*"set step limit: 7")
            await pilot.pause(0.3)
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.settings.max_steps == 7)
            assert "step 0/7" in str(app.run_screen.status.render())
            await pilot.press("ctrl+p")
            await pilot.pause(0.2)
            await pilot.press(*"switch model smollm2")
            await pilot.pause(0.3)
            await pilot.press("enter")
            await wait_for(pilot, lambda: loaded[-1] == "smollm2-135m-instruct" and app.model is not None)

    run(scenario())
    assert loaded == [None, "smollm2-135m-instruct"]


def test_palette_lists_the_preset_step_limits_and_finds_any_other_typed():
    from appliance.tui.app import MAX_STEP_LIMIT, STEP_LIMITS

    app = make_app()

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: app.model is not None)
            commands = list(app.get_system_commands(app.screen))
            limits = [c for c in commands if c.title.startswith("Set step limit: ")]
            assert [int(c.title.split()[-1]) for c in limits] == list(range(1, MAX_STEP_LIMIT + 1))
            assert [int(c.title.split()[-1]) for c in limits if c.discover] == list(STEP_LIMITS)
            assert "Quit" in [c.title for c in commands]  # Textual's own stay in the palette
            for typed, limit in (("step limit 37", 37), ("set step limit: 5", 5), ("step limit 1", 1)):
                await pilot.press("ctrl+p")
                await pilot.pause(0.2)
                await pilot.press(*typed)
                await pilot.pause(0.3)
                await pilot.press("enter")
                await wait_for(pilot, lambda limit=limit: app.settings.max_steps == limit)

    run(scenario())


def test_system_panel_toggles_and_shows_the_samplers_readings():
    app = make_app(sample_interval=0.05)

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            panel = app.query_one(SystemPanel)
            assert not panel.display
            await pilot.press("ctrl+t")
            await wait_for(pilot, lambda: len(panel.cpu) >= 3)
            assert panel.display
            assert "CPU 42%" in str(panel.query_one("#cpu-label").render())
            assert "burn" in str(panel.query_one("#top-processes").render())
            await pilot.press("ctrl+t")
            count = len(panel.cpu)
            await pilot.pause(0.2)
            assert not panel.display and len(panel.cpu) <= count + 1  # sampling stopped

    run(scenario())


def test_real_sampler_reads_this_machine():
    from appliance.tui.system_sampler import PsutilSampler

    sampler = PsutilSampler()
    time.sleep(0.1)
    sample = sampler()
    assert 0.0 <= sample.cpu_percent <= 100.0
    assert 0.0 < sample.memory_percent < 100.0 and sample.memory_total_gb > 0.5
    assert sample.top and all(p.pid > 0 for p in sample.top)


def test_copy_and_export_need_a_run_first(tmp_path):
    app = make_app()

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: app.model is not None)
            await pilot.press("ctrl+y")
            await pilot.press("ctrl+s")
            await pilot.pause(0.05)
            messages = [n.message for n in app._notifications]
            assert "No answer to copy yet." in messages and "No run to export yet." in messages

    run(scenario())


def test_a_store_that_cannot_record_is_reported_and_the_run_still_answers():
    from appliance.store import SafeRecorder

    app = make_app(recorder_factory=lambda: SafeRecorder(None, failure="the disk holding /x/runs.db is full"))

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            await ask(pilot, "why is my fan loud?")
            await wait_for(pilot, lambda: ended(app) is not None)
            await wait_for(pilot, lambda: any("disk holding" in n.message for n in app._notifications))

    run(scenario())
    assert ended(app).status == ev.FINISHED and "burn" in app.run_screen.last_answer


def test_run_tui_wires_the_real_parts(tmp_path):
    import argparse

    from appliance.commands.tui import build_app, run_tui
    from appliance.tui.system_sampler import PsutilSampler

    assert callable(run_tui)
    args = argparse.Namespace(db=str(tmp_path / "runs.db"), model="smollm2-135m-instruct", verbose=False)
    app = build_app(args, env={"APPLIANCE_HOME": str(tmp_path)})
    assert isinstance(app.history, StoreHistory) and str(app.history.db_path) == str(tmp_path / "runs.db")
    assert app.model_spec == "smollm2-135m-instruct" and isinstance(app.run_screen._sampler, PsutilSampler)
    names = [name for name, spec in app.model_choices()]
    assert any(name.startswith("smollm2-135m-instruct") for name in names)


def test_a_failing_sampler_is_reported_once_and_sampling_stops():
    calls = []

    def broken():
        calls.append(1)
        raise PermissionError("/proc is not readable here")

    app = make_app(sampler=broken, sample_interval=0.05)

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("ctrl+t")
            await wait_for(pilot, lambda: any("/proc is not readable" in n.message for n in app._notifications))
            await pilot.pause(0.3)
            assert app.run_screen._sample_timer is None

    run(scenario())
    assert len(calls) <= 2
