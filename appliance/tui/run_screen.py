"""The main screen: the question box, the running transcript, its status bar, the side panels.

RunScreen owns a run from the question to the answer: the engine runs in a Textual thread worker
that records each event and posts it back as a message; only this screen's handlers touch its
widgets. It also owns the two side panels and their workers (the system sampler, the checks).
What it cannot decide alone goes to the app as a request: a submitted question becomes
`QuestionAsked` (the app knows whether a model is loaded), and the app calls `start_run` with the
engine to use. The app also tells it what the model is doing (`show_status`, `show_message`).
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Protocol

from textual import events, on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input
from textual.worker import Worker

from appliance.agent import events as ev
from appliance.agent.cited import cited_lines
from appliance.tui import messages as msg
from appliance.tui.batching import DELTA_INTERVAL, DeltaBatcher
from appliance.tui.checks import Checker, ChecksPanel, has_problems
from appliance.tui.live import ended_answer, show_event
from appliance.errors import one_line
from appliance.tui.panels import PanelLayout
from appliance.tui.render import answer_markdown, answer_title, status_words
from appliance.tui.screens import AskUserScreen
from appliance.tui.system_sampler import Sampler
from appliance.tui.welcome import WELCOME
from appliance.tui.widgets import StatusBar, SystemPanel, Transcript

if TYPE_CHECKING:
    from appliance.agent.engine import Engine

class Recorder(Protocol):
    """Where the run's worker writes each event (SafeRecorder, MemoryHistory). It may also carry
    `failure` (why it could not record) and `close()`, called when the run ends."""

    def record(self, event: Any) -> None: ...


RecorderFactory = Callable[[], Recorder]  # called in the run's thread, once per run


class RunScreen(Screen[None]):
    """The app's default screen; never popped, so messages for the run keep arriving here while
    the history, a replay or the agent's question is shown over it."""

    def __init__(
        self,
        *,
        recorder_factory: RecorderFactory,
        max_steps: int,
        clock: Callable[[], float] = time.monotonic,
        delta_interval: float = DELTA_INTERVAL,
        sampler: Sampler | None = None,
        sample_interval: float = 1.0,
        checker: Checker | None = None,
        show_system: bool = False,
    ) -> None:
        super().__init__()
        self._recorder_factory = recorder_factory
        self._max_steps = max_steps
        self._clock = clock
        self._delta_interval = delta_interval
        self._sampler = sampler
        self._sample_interval = sample_interval
        self._checker = checker
        self._show_system_at_start = show_system
        self._checks_seen = False
        self.run_active = False
        self.run_id: str | None = None
        self.last_run_id: str | None = None
        self.last_answer = ""
        self.events_seen: list[Any] = []  # every engine event handled, in order (for tests)
        self._cancel: threading.Event | None = None
        self._run_done = threading.Event()  # set when the run's worker has recorded its RunEnded
        self._run_done.set()
        self._quitting = False  # the app is quitting: events are still counted, no longer drawn
        self._run_started = 0.0
        self._final: Any = None
        self._ended: Any = None  # the RunEnded of the answer on screen
        self._observations: list[str] = []  # what this run's model read, step by step (the facts by id)
        self._as_read = False  # the answer's evidence is shown as the tools returned it
        self._tick: Timer | None = None
        self._sample_timer: Timer | None = None
        self._ask_screen: AskUserScreen | None = None
        self.status = StatusBar(id="status")
        self.transcript = Transcript(id="transcript")
        self.system_panel = SystemPanel(id="system")
        self.checks_panel = ChecksPanel(id="checks")
        self.question_box = Input(placeholder="Ask about this machine… (Enter)", id="question")
        self.panels = PanelLayout()
        self._panel_widths: dict[str, int] = {}

    # ----- layout, and what the app tells the screen -------------------------------------------
    def compose(self) -> ComposeResult:
        yield self.status
        with Horizontal(id="body"):
            yield self.transcript
            yield self.system_panel
            yield self.checks_panel
        yield self.question_box
        yield Footer()

    def on_mount(self) -> None:
        self.status.change(max_steps=self._max_steps, phase="starting")
        self._panel_widths = {name: int(panel.styles.width.value) if panel.styles.width else 30
                              for name, panel in self._side_panels().items()}
        self._arrange()
        self.transcript.show_message(WELCOME)
        self.question_box.focus()
        if self._show_system_at_start:
            self.toggle_system()
        self.run_checks()

    def show_status(self, **fields: Any) -> None:
        """Change fields of the status bar (see render.StatusState)."""
        self.status.change(**fields)

    def show_message(self, text: str = "", *, loading: bool = False, welcome: bool = False) -> None:
        """One message in place of the transcript; welcome=True puts the welcome text below it."""
        if welcome:
            text = f"{text}\n\n{WELCOME}" if text else WELCOME
        self.transcript.show_message(text, loading=loading)

    # ----- a run --------------------------------------------------------------------------------
    @on(Input.Changed, "#question")
    def typing_question(self, event: Input.Changed) -> None:
        if event.value.strip() and not self.run_active:
            self.post_message(msg.QuestionTyped(event.value.strip()))

    @on(Input.Submitted, "#question")
    def submit_question(self, event: Input.Submitted) -> None:
        question = event.value.strip()
        if not question:
            return
        if self.run_active:
            self.notify("A run is in progress: Esc cancels it.", severity="warning")
            return
        event.input.value = ""
        self.panels.tuck()  # the run is what the person wants to see now
        self._arrange()
        self.post_message(msg.QuestionAsked(question))

    def start_run(self, question: str, make_engine: Callable[[], "Engine"], max_steps: int) -> None:
        """Show the run at once, then build its engine and run it in a thread worker."""
        self.run_active = True
        self._final = None
        self._cancel = threading.Event()
        self._run_done.clear()
        self._run_started = self._clock()
        self.transcript.begin(question)
        self.status.change(
            phase="running", step=0, max_steps=max_steps, elapsed=0.0,
            tokens_per_second=0.0, prompt_tokens=0, prompt_tokens_reused=0,
        )
        self._tick = self.set_interval(1.0, self._update_elapsed)
        try:
            engine = make_engine()
        except Exception as exc:
            self._run_done.set()
            self.post_message(msg.RunCrashed(one_line(exc)))
            return
        self._run_engine(engine, question, self._cancel)

    @work(thread=True, exclusive=True, group="run", name="engine")
    def _run_engine(self, engine: "Engine", question: str, cancel: threading.Event) -> None:
        """The worker: iterate the engine, record each event, post it to the screen."""
        try:
            recorder: Recorder | None = self._recorder_factory()
        except Exception as exc:  # the run still answers when the store cannot be opened
            recorder = None
            self.post_message(msg.BackgroundFailed("recording", one_line(exc)))
        batcher = DeltaBatcher(self._delta_interval)
        try:
            for event in engine.run(question, ask=partial(self._ask_from_thread, cancel), cancel=cancel):
                if recorder is not None:
                    recorder.record(event)
                for ready in batcher.feed(event):
                    self.post_message(msg.EngineEmitted(ready))
        except Exception as exc:
            for ready in batcher.flush():
                self.post_message(msg.EngineEmitted(ready))
            self.post_message(msg.RunCrashed(one_line(exc)))
        finally:
            self._run_done.set()
            self._close_recorder(recorder)

    def _close_recorder(self, recorder: Recorder | None) -> None:
        failure = getattr(recorder, "failure", None)
        if failure:
            self.post_message(msg.BackgroundFailed("recording", str(failure)))
        close = getattr(recorder, "close", None)
        if callable(close):
            try:
                close()
            except Exception:
                pass

    def _ask_from_thread(self, cancel: threading.Event, question: str) -> str | None:
        """Called by the engine in the worker: show the prompt and wait for the reply (or cancel)."""
        replies: "queue.Queue[str | None]" = queue.Queue()
        self.post_message(msg.UserAsked(question, replies))
        while not cancel.is_set() and self.is_running:
            try:
                return replies.get(timeout=0.05)
            except queue.Empty:
                continue
        return None

    def on_user_asked(self, message: msg.UserAsked) -> None:
        def reply(value: str | None) -> None:
            self._ask_screen = None
            message.replies.put(value)

        self._ask_screen = AskUserScreen(message.question)
        self.app.push_screen(self._ask_screen, callback=reply)

    def on_engine_emitted(self, message: msg.EngineEmitted) -> None:
        event = message.event
        self.events_seen.append(event)
        if self._quitting:
            return  # the screen is going away; the store has the run
        if isinstance(event, ev.RunStarted):
            self.run_id = event.run_id
            self._observations, self._ended, self._as_read = [], None, False
        elif isinstance(event, ev.ObservationMade):
            self._observations.append(event.text)
        if isinstance(event, ev.FinalAnswer):
            self._final = event
        elif isinstance(event, ev.RunEnded):
            self._end_run(event)
            return
        show_event(self.transcript, self.status, event)

    def _end_run(self, ended: Any) -> None:
        self._ended = ended
        markdown, answer = ended_answer(ended, self._final)
        self.transcript.show_answer(markdown, answer_title(ended.status))
        self.last_answer = answer
        self.last_run_id = ended.run_id
        self._finish_run(status_words(ended.status), elapsed=ended.seconds)

    def toggle_as_read(self) -> bool:
        """The answer's evidence as the tools returned it (the cited facts' lines), or back in words;
        False when no answer with evidence is on screen."""
        if self._ended is None or self._final is None or not self._final.evidence:
            return False
        self._as_read = not self._as_read
        cites = (self._final.result or {}).get("cites") or ()
        as_read = cited_lines(self._observations, cites) if self._as_read else None
        return self.transcript.change_answer(ended_answer(self._ended, self._final, as_read)[0])

    def on_run_crashed(self, message: msg.RunCrashed) -> None:
        self.transcript.show_answer(answer_markdown(answer="", status="error", error=message.error, heading=False),
                                    answer_title("error"))
        self._finish_run("failed")

    def _finish_run(self, phase: str, elapsed: float | None = None) -> None:
        self.run_active = False
        if self._tick is not None:
            self._tick.stop()
            self._tick = None
        if elapsed is None:
            elapsed = self._clock() - self._run_started
        self.status.change(phase=phase, elapsed=elapsed)
        if self._ask_screen is not None and self._ask_screen in self.app.screen_stack:
            self._ask_screen.dismiss(None)
        self.question_box.focus()
        self.run_checks()

    def _update_elapsed(self) -> None:
        if self.run_active:
            self.status.change(elapsed=self._clock() - self._run_started)

    def cancel_run(self) -> bool:
        """Ask the running engine to stop (it records the run as cancelled); False when none runs."""
        if not (self.run_active and self._cancel is not None):
            return False
        self._cancel.set()
        self.status.change(phase="cancelling")
        return True

    def stop(self) -> None:
        """The app is going away: tell a running engine to stop, and draw nothing more."""
        self._quitting = True
        if self._cancel is not None:
            self._cancel.set()

    async def wait_for_run_end(self, timeout: float) -> None:
        """Give a stopped run up to `timeout` seconds to record its end (it stops within a second,
        even during prompt evaluation), so it is not left `running` in the store."""
        if not self._run_done.is_set():
            self.status.change(phase="cancelling")
            await asyncio.to_thread(self._run_done.wait, timeout)

    def on_background_failed(self, message: msg.BackgroundFailed) -> None:
        self.notify(f"{message.what}: {message.error}", severity="error", timeout=8)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        failure = msg.worker_failure(event)
        if failure is None:
            return
        if event.worker.group == "system panel":
            self._stop_sampling()  # rather than repeat the same error every second
        self.notify(failure, severity="error", timeout=8)

    # ----- side panels --------------------------------------------------------------------------
    def _side_panels(self) -> dict[str, Any]:
        return {"system": self.system_panel, "checks": self.checks_panel}

    def on_resize(self, event: events.Resize) -> None:
        self._arrange()

    def _arrange(self) -> None:
        """Show the open panels that leave the answer room at this width (appliance.tui.panels)."""
        if not self._panel_widths:
            return  # not mounted yet
        arrangement = self.panels.arrange(self.size.width or self.app.size.width, self._panel_widths)
        for name, panel in self._side_panels().items():
            panel.display = arrangement.shows(name)
            panel.set_class(arrangement.front == name, "front")
        self.transcript.display = arrangement.front is None

    def _toggle(self, name: str) -> bool:
        """Ctrl+T / Ctrl+G: hide the panel if it is on screen, else show it (in place of the
        transcript when it does not fit beside it). True when it is now open."""
        if self._side_panels()[name].display:
            self.panels.close(name)
        else:
            self.panels.open(name, by_person=True)
        self._arrange()
        return self.panels.is_open(name)

    def toggle_system(self) -> None:
        self._stop_sampling()
        if self._toggle("system") and self._sampler is not None:
            self._sample()
            self._sample_timer = self.set_interval(self._sample_interval, self._sample)

    def _stop_sampling(self) -> None:
        if self._sample_timer is not None:
            self._sample_timer.stop()
            self._sample_timer = None

    @work(thread=True, exclusive=True, group="system panel", exit_on_error=False)
    def _sample(self) -> None:
        if self._sampler is not None:
            self.post_message(msg.SystemSampled(self._sampler()))

    def on_system_sampled(self, message: msg.SystemSampled) -> None:
        self.system_panel.show_sample(message.sample)

    # ----- checks panel -------------------------------------------------------------------------
    def run_checks(self) -> None:
        """The analyzers' findings, computed in a thread worker (they sample the machine for about
        half a second and run dmesg and the like), when the app opens and after each run."""
        if self._checker is not None:
            self._check(self._checker)

    @work(thread=True, exclusive=True, group="checks", exit_on_error=False)
    def _check(self, checker: Checker) -> None:
        self.post_message(msg.ChecksDone(list(checker())))

    def on_checks_done(self, message: msg.ChecksDone) -> None:
        self.checks_panel.show_findings(message.findings)
        if not self._checks_seen and has_problems(message.findings):
            # the first check found something: show it once, without taking the focus from
            # whatever the person is doing (typing a question, or in the command palette)
            focused = self.app.focused
            self.panels.open("checks", by_person=False)
            self._arrange()
            if focused is not None and self.app.focused is not focused:
                focused.focus()
            if not self.checks_panel.display:  # no room beside the answer: say where it is
                self.notify(f"The checks found a problem ({self.checks_panel.border_subtitle}): Ctrl+G shows them.",
                            markup=False)
        self._checks_seen = True

    def toggle_checks(self) -> None:
        self._toggle("checks")
