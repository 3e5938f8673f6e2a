"""The first prompt read ahead while the question is typed: the check begun ahead is peeked at and
left for the run, the engine reads ahead exactly the text the run's first prompt begins with, and
the TUI reads ahead from the first check begun until the run starts (a scripted model)."""

from __future__ import annotations

import os
import threading
import time

from textual.widgets import Input

from appliance.agent import events as ev
from appliance.agent.engine import Engine
from appliance.agent.evidence import MachineEvidence
from appliance.agent.prompt import QUESTION_LINE
from appliance.agent.settings import EngineSettings
from appliance.analyzers.base import WARNING, Analyzer, Finding
from appliance.llm.base import Message
from appliance.tools.registry import default_registry
from support.tui import STEP_FINISH, FixedStatsModel, make_app, run, wait_for

PIDS = frozenset({os.getpid()})


class _Verdicts:
    """A cpu analyzer with a fixed verdict that counts its runs (each a machine check)."""

    def __init__(self) -> None:
        self.runs = 0

    def __call__(self, readings) -> list[Finding]:
        self.runs += 1
        time.sleep(0.2)  # a window that passes in the background
        return [Finding("cpu", WARNING, f"CPU saturated: load 4.2 on 2 cores (check {self.runs})")]


def machine() -> tuple[MachineEvidence, _Verdicts]:
    verdicts = _Verdicts()
    return MachineEvidence(default_registry(), analyzers=[Analyzer("cpu", ("cpu",), verdicts)]), verdicts


class ReadingAheadModel(FixedStatsModel):
    """A scripted model that also keeps what it was asked to read ahead."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.read: list[tuple[list[Message], str]] = []

    def read_ahead(self, messages, *, upto, should_stop=None, outdated=None):
        self.read.append((list(messages), upto))
        return "read"


def before_question(message: Message) -> str:
    return message.content[: message.content.rfind(QUESTION_LINE)]


def test_a_peek_waits_for_the_check_begun_ahead_and_leaves_it_for_the_run():
    evidence, verdicts = machine()
    assert evidence.peek("is the cpu busy?", PIDS) is None  # nothing begun: nothing to read ahead
    evidence.prefetch(PIDS)
    first = evidence.peek("is the cpu busy?", PIDS)
    again = evidence.peek("why is it slow?", PIDS)
    assert first is not None and again is not None
    assert [f.verdict for f in first.findings] == [f.verdict for f in again.findings] == [
        "CPU saturated: load 4.2 on 2 cores (check 1)"]
    assert first.topics == ("cpu",)
    assert evidence.peek("is the cpu busy?", frozenset({99})) is None  # begun for other pids
    taken = evidence.gather("is the cpu busy?", PIDS)  # the run takes the same check ...
    assert [f.verdict for f in taken.findings] == [f.verdict for f in first.findings] and verdicts.runs == 1
    assert evidence.peek("is the cpu busy?", PIDS) is None  # ... and after it there is none to peek at


def test_the_engine_reads_ahead_what_the_first_prompt_begins_with():
    evidence, _ = machine()
    model = ReadingAheadModel([STEP_FINISH])
    engine = Engine(model, default_registry(), EngineSettings(max_steps=3), evidence=evidence)
    assert engine.read_ahead("is the cpu busy?") is None and model.read == []  # no check begun
    evidence.prefetch(PIDS)
    assert engine.read_ahead("is the cpu busy?") == "read"
    (messages, upto), = model.read
    assert upto == QUESTION_LINE and [m.role for m in messages] == ["system", "user"]
    assert "CPU saturated: load 4.2 on 2 cores (check 1)" in before_question(messages[1])

    events = list(engine.run("is the cpu busy?", ask=lambda q: None))
    assert isinstance(events[-1], ev.RunEnded) and model.calls
    prompt, _ = model.calls[0]
    assert prompt[0] == messages[0]  # the same system prompt (the run can ask, as the TUI's can)
    assert prompt[1].content.startswith(before_question(messages[1]))
    assert prompt[1].content[len(before_question(messages[1])):].startswith(QUESTION_LINE + "is the cpu busy?")


def test_nothing_is_read_ahead_without_verdicts_or_a_model_that_can():
    evidence, _ = machine()
    evidence.prefetch(PIDS)
    plain = FixedStatsModel([STEP_FINISH])
    assert Engine(plain, default_registry(), EngineSettings(), evidence=evidence).read_ahead("cpu?") is None
    off = ReadingAheadModel([STEP_FINISH])
    assert Engine(off, default_registry(), EngineSettings(snapshot=False), evidence=evidence).read_ahead("cpu?") is None
    assert off.read == []


def test_the_tui_reads_ahead_while_the_question_is_typed_and_stops_when_it_is_asked():
    evidence, verdicts = machine()
    model = ReadingAheadModel([STEP_FINISH])
    app = make_app(model=model, begin_check=lambda: evidence.prefetch(PIDS),
                   engine_factory=lambda m, settings: Engine(m, default_registry(), settings, evidence=evidence))

    async def scenario():
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: app.model is not None)
            box = app.query_one("#question", Input)
            box.focus()
            await pilot.press(*"is the cpu")
            await wait_for(pilot, lambda: len(model.read) >= 1)
            await pilot.press(*" busy")
            await wait_for(pilot, lambda: any("busy" in m[1].content for m, _ in model.read))
            assert all(upto == QUESTION_LINE for _, upto in model.read)
            await pilot.press("enter")
            await wait_for(pilot, lambda: any(isinstance(e, ev.RunEnded) for e in app.run_screen.events_seen))
            assert model.calls
            await wait_for(pilot, lambda: not [w for w in app.workers if w.group == "read-ahead" and w.is_running])
            read = len(model.read)
            await pilot.pause(0.5)
            assert len(model.read) == read  # stopped with the run: nothing read ahead since
            assert verdicts.runs == 1  # the run took the check the read-ahead used

    run(scenario())
    prompt, _ = model.calls[0]
    last, _ = model.read[-1]
    assert prompt[1].content.startswith(before_question(last[1]))


def test_the_read_ahead_worker_ends_when_told_to_and_survives_a_failing_engine():
    from appliance.tui.warmup import read_ahead

    class Failing:
        def read_ahead(self, question, *, should_stop=None, outdated=None):
            raise RuntimeError("no model")

    done = threading.Event()
    worker = threading.Thread(target=lambda: (read_ahead(Failing(), lambda: "cpu?", lambda: False), done.set()))
    worker.start()
    assert done.wait(2.0)  # a failure ends the worker quietly
    stop = threading.Event()
    seen: list[str] = []

    class Recording:
        """Busy (None) on its first call, as while the warm-up holds the model; then reads."""

        def read_ahead(self, question, *, should_stop=None, outdated=None):
            seen.append(question)
            return None if len(seen) == 1 else "read"

    drafts = iter(["c", "cp", "cp", "cpu"])
    thread = threading.Thread(target=read_ahead, args=(Recording(), lambda: next(drafts, "cpu"), stop.is_set))
    thread.start()
    time.sleep(2.5)
    stop.set()
    thread.join(2.0)
    assert not thread.is_alive()
    assert seen == ["c", "cp", "cpu"]  # the busy try for "c" retried a moment later (by then "cp"); each draft read once


def test_a_draft_that_asks_for_other_evidence_stops_the_read_ahead_in_progress():
    from appliance.tui.warmup import read_ahead

    evidence, _ = machine()
    key = evidence.question_key
    assert key("is the cpu bu") == key("is the cpu busy right now?")  # the same evidence: read once
    assert key("how full is") != key("how full is /srv/data?")  # a named place
    assert key("is port 8080 free?") != key("can't connect to port 8080")  # how a port is asked about

    typed = ["is the cpu bu"]
    reads: list[tuple[str, bool]] = []
    begun: list[str] = []

    class Slow:
        """A read-ahead that runs until told to stop (a long prompt), then says it was stopped."""

        def read_ahead_key(self, question):
            return key(question)

        def read_ahead(self, question, *, should_stop, outdated):
            begun.append(question)
            started = time.monotonic()
            while not (should_stop() or outdated()) and time.monotonic() - started < 5.0:
                time.sleep(0.02)
            reads.append((question, outdated()))
            return type("Report", (), {"stopped": should_stop() or outdated()})()

    stop = threading.Event()
    thread = threading.Thread(target=read_ahead, args=(Slow(), lambda: typed[0], stop.is_set))
    thread.start()
    time.sleep(0.3)
    typed[0] = "is the cpu busy right now?"  # same key: the read-ahead goes on
    time.sleep(0.3)
    assert reads == []
    typed[0] = "is the cpu busy, and how full is /srv/data?"  # another place: stop, read the new draft
    deadline = time.monotonic() + 2.0
    while len(begun) < 2 and time.monotonic() < deadline:  # the new draft's read has begun (a loaded machine is slow)
        time.sleep(0.02)
    stop.set()
    thread.join(6.0)
    assert not thread.is_alive()
    assert reads[0] == ("is the cpu bu", True)
    assert reads[1][0] == "is the cpu busy, and how full is /srv/data?"
