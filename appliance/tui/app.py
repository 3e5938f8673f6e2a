"""The Textual app: ask a question, watch the agent's steps live, steer it, look back.

Every dependency comes in through the constructor (model loader, engine factory, settings, the
recorder and history source, the system sampler, the clock), so tests drive the real app with a
scripted model and a temporary store. Slow work runs in thread workers that post past-tense
messages (`appliance.tui.messages`); only the handlers below touch widgets.
"""

from __future__ import annotations

import asyncio
import dataclasses
import queue
import threading
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.containers import Horizontal
from textual.timer import Timer
from textual.widgets import Footer, Input

from appliance.agent.timing import progress_line, timing_line
from appliance.errors import one_line
from appliance.tui import messages as msg
from appliance.tui.batching import DELTA_INTERVAL, DeltaBatcher
from appliance.tui.checks import Checker, ChecksPanel, has_problems
from appliance.tui.commands import ApplianceCommands
from appliance.tui.export import MarkdownExporter
from appliance.tui.history_source import HistorySource, MemoryHistory, RunReplay
from appliance.tui.loading import ModelLoader, ModelNotOnDisk, Puller
from appliance.tui.render import answer_markdown, answer_title, status_words
from appliance.tui.screens import AskUserScreen, HistoryScreen, ModelErrorScreen, ModelMissingScreen, ReplayScreen
from appliance.tui.system_sampler import Sampler
from appliance.tui.warmup import warm_model
from appliance.tui.widgets import StatusBar, SystemPanel, Transcript

if TYPE_CHECKING:
    from appliance.store.recorder import Recorder
    from appliance.wiring import EngineFactory

RecorderFactory = Callable[[], "Recorder"]  # called in the run's thread

WELCOME = (
    "Ask about this machine below and press Enter. For example:\n"
    "  • why is my computer slow?\n"
    "  • what is filling my disk?\n"
    "  • is anything listening on port 22?\n\n"
    "Esc cancels a run · Ctrl+R history · Ctrl+T system · Ctrl+P commands"
)


class ApplianceApp(App):
    CSS_PATH = "app.tcss"
    TITLE = "appliance"
    COMMANDS = App.COMMANDS | {ApplianceCommands}
    BINDINGS = [
        Binding("escape", "cancel_run", "Cancel"),
        Binding("ctrl+c", "cancel_run", "Cancel", show=False, priority=True),
        Binding("ctrl+r", "history", "History"),
        Binding("ctrl+t", "toggle_system", "System"),
        Binding("ctrl+g", "toggle_checks", "Checks", show=False),
        Binding("ctrl+s", "export_run", "Export", show=False),
        Binding("ctrl+y", "copy_answer", "Copy", show=False),
        Binding("ctrl+q", "quit", "Quit"),
    ]

    def __init__(
        self,
        *,
        model_loader: ModelLoader,
        engine_factory: EngineFactory,
        settings: Any,
        recorder_factory: RecorderFactory | None = None,
        history: HistorySource | None = None,
        model_spec: str | None = None,
        model_choices: Callable[[], Iterable[tuple[str, str]]] | None = None,
        puller: Puller | None = None,
        sampler: Sampler | None = None,
        sample_interval: float = 1.0,
        exporter: Callable[[RunReplay], Path] | None = None,
        clock: Callable[[], float] = time.monotonic,
        show_system: bool = False,
        delta_interval: float = DELTA_INTERVAL,
        checker: Checker | None = None,
    ) -> None:
        super().__init__()
        self._model_loader = model_loader
        self._engine_factory = engine_factory
        self.settings = settings
        memory = MemoryHistory()
        self._recorder_factory = recorder_factory or (lambda: memory)
        self.history = history if history is not None else memory
        self.model_spec = model_spec
        self._model_choices = model_choices or (lambda: ())
        self._puller = puller
        self._sampler = sampler
        self._sample_interval = sample_interval
        self._exporter = exporter or MarkdownExporter(Path.cwd())
        self._clock = clock
        self._show_system_at_start = show_system
        self._delta_interval = delta_interval
        self._checker = checker
        self._checks_seen = False
        self.model: Any = None
        self.model_phase = "starting"  # loading, ready, missing, error
        self.run_active = False
        self.run_id: str | None = None
        self.last_run_id: str | None = None
        self.last_answer = ""
        self._cancel: threading.Event | None = None
        self._run_done = threading.Event()  # set when the run's worker has recorded its RunEnded
        self._run_done.set()
        self._quitting = threading.Event()
        self._pending_question: str | None = None
        self._run_started = 0.0
        self._tick: Timer | None = None
        self._sample_timer: Timer | None = None
        self._ask_screen: AskUserScreen | None = None
        self._final: Any = None
        self.events_seen: list[Any] = []  # every engine event handled, in order (for tests and export)

    # ----- layout -------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        # Kept as attributes: `App.query_one` searches the screen on top, and messages keep
        # arriving for the main screen while history or a prompt is shown over it.
        self.status = StatusBar(id="status")
        self.transcript = Transcript(id="transcript")
        self.system_panel = SystemPanel(id="system")
        self.checks_panel = ChecksPanel(id="checks")
        self.question_box = Input(placeholder="Ask about this machine… (Enter)", id="question")
        yield self.status
        with Horizontal(id="body"):
            yield self.transcript
            yield self.system_panel
            yield self.checks_panel
        yield self.question_box
        yield Footer()

    def on_mount(self) -> None:
        self.status.change(max_steps=self.settings.max_steps, phase="starting")
        self.system_panel.display = False
        self.checks_panel.display = False
        self.transcript.show_message(WELCOME)
        self.question_box.focus()
        if self._show_system_at_start:
            self.action_toggle_system()
        self.run_checks()
        self.load_model(self.model_spec)

    # ----- model loading ------------------------------------------------------------------------
    def model_choices(self) -> list[tuple[str, str]]:
        return list(self._model_choices())

    def load_model(self, spec: str | None) -> None:
        """Show the screen at once and load the model in a thread, with a progress indicator."""
        self.model = None
        self.model_spec = spec
        self.model_phase = "loading"
        self.status.change(model=spec or "default model", phase="loading model")
        self.transcript.show_message(f"Loading {spec or 'the default model'}…\n\n{WELCOME}", loading=True)
        self.run_worker(partial(self._load_in_thread, spec), thread=True, exclusive=True, group="model", name="load-model")

    def _load_in_thread(self, spec: str | None) -> None:
        try:
            model = self._model_loader(spec)
        except ModelNotOnDisk as exc:
            self.post_message(msg.ModelMissing(exc.name, exc.size, exc.detail, spec))
        except Exception as exc:  # any failure is shown on screen, never a traceback
            self.post_message(msg.ModelLoadFailed(one_line(exc), spec))
        else:
            self.post_message(msg.ModelLoaded(model, spec))

    def on_model_loaded(self, message: msg.ModelLoaded) -> None:
        self.model = message.model
        self.model_phase = "ready"
        name = getattr(getattr(message.model, "info", None), "name", "") or message.spec or "model"
        self.status.change(model=name, phase="ready")
        self.transcript.show_message(WELCOME)
        self._warm()
        if self._pending_question:
            question, self._pending_question = self._pending_question, None
            self.start_run(question)

    def _warm(self) -> None:
        """Evaluate (or load from the prompt cache) the system prompt in the background."""
        try:
            engine = self._engine_factory(self.model, self.settings)
        except Exception:
            return  # the first question reports the problem
        model = self.model
        self.run_worker(partial(warm_model, self.post_message, engine,
                                lambda: self._quitting.is_set() or self.model is not model),
                        thread=True, exclusive=True, group="warm", name="warm-prompt")

    def on_warm_progressed(self, message: msg.WarmProgressed) -> None:
        if not self.run_active:
            self.status.change(phase=progress_line(message.done, message.total, message.seconds_left))

    def on_warm_finished(self, message: msg.WarmFinished) -> None:
        if message.report and message.report.get("note"):
            self.notify(message.report["note"], severity="warning")
        if not self.run_active and self.model_phase == "ready":
            # short: the status line also carries the step, the speed and the time, and an 80-column
            # terminal cut them off behind the long form (runs show keeps that)
            short = {"loaded": "prompt from cache", "evaluated": "prompt cached", "present": "prompt ready",
                     "stopped": "prompt stopped"}.get(str((message.report or {}).get("status")))
            ready = f"ready ({short})" if short else "ready"
            self.status.change(phase=ready)

    def on_model_missing(self, message: msg.ModelMissing) -> None:
        self.model_phase = "missing"
        self.status.change(model=message.name, phase="no model")
        self.transcript.show_message(f"Model {message.name} is missing. {message.detail}")
        self.push_screen(ModelMissingScreen(message.name, message.size, message.detail, self._puller is not None))

    def on_model_load_failed(self, message: msg.ModelLoadFailed) -> None:
        self.model_phase = "error"
        self.status.change(phase="model error")
        self.transcript.show_message(f"Cannot load the model: {message.error}")
        self.push_screen(ModelErrorScreen(message.error, message.spec))

    def switch_model(self, spec: str) -> None:
        if self.run_active:
            self.notify("Wait for the run to end (or Esc to cancel it) before switching model.", severity="warning")
            return
        while len(self.screen_stack) > 1:
            self.pop_screen()
        self.load_model(spec)

    # ----- pulling a missing model --------------------------------------------------------------
    def start_pull(self, name: str) -> None:
        # A daemon thread, not a Textual worker: a pull of a gigabyte cannot be interrupted, and
        # quitting must not wait for it (the pull writes to a temporary file and renames at the end).
        threading.Thread(target=self._pull_in_thread, args=(name,), name="pull-model", daemon=True).start()

    def _pull_in_thread(self, name: str) -> None:
        assert self._puller is not None
        last = [0.0]

        def progress(done: int, total: int) -> None:
            now = time.monotonic()
            if now - last[0] >= 0.1 or done >= total:  # at most ten updates a second
                last[0] = now
                self.post_message(msg.PullProgressed(done, total))

        try:
            path = self._puller(name, progress)
        except Exception as exc:
            self.post_message(msg.PullFailed(one_line(exc)))
        else:
            self.post_message(msg.PullFinished(str(path)))

    def on_pull_progressed(self, message: msg.PullProgressed) -> None:
        if isinstance(self.screen, ModelMissingScreen):
            self.screen.show_progress(message.done, message.total)

    def on_pull_failed(self, message: msg.PullFailed) -> None:
        if isinstance(self.screen, ModelMissingScreen):
            self.screen.show_failure(message.error)
        else:
            self.notify(f"Pull failed: {message.error}", severity="error")

    def on_pull_finished(self, message: msg.PullFinished) -> None:
        self.notify(f"Model saved to {message.path}")
        if isinstance(self.screen, ModelMissingScreen):
            self.pop_screen()
        self.load_model(self.model_spec)

    # ----- runs ---------------------------------------------------------------------------------
    @on(Input.Submitted, "#question")
    def submit_question(self, event: Input.Submitted) -> None:
        question = event.value.strip()
        if not question:
            return
        if self.run_active:
            self.notify("A run is in progress: Esc cancels it.", severity="warning")
            return
        event.input.value = ""
        if self.model is None:
            if self.model_phase == "loading":
                self._pending_question = question
                self.notify("The model is still loading; your question starts as soon as it is ready.")
            else:
                self.notify("No model is loaded: Ctrl+P → Switch model, or see the model screen.", severity="error")
            return
        self.start_run(question)

    def start_run(self, question: str) -> None:
        self.run_active = True
        self._final = None
        self._cancel = threading.Event()
        self._run_done.clear()
        self._run_started = self._clock()
        self.transcript.begin(question)
        self.status.change(
            phase="running", step=0, max_steps=self.settings.max_steps, elapsed=0.0,
            tokens_per_second=0.0, prompt_tokens=0, prompt_tokens_reused=0,
        )
        self._tick = self.set_interval(1.0, self._update_elapsed)
        try:
            engine = self._engine_factory(self.model, self.settings)
        except Exception as exc:
            self.post_message(msg.RunCrashed(one_line(exc)))
            return
        self.run_worker(
            partial(self._run_in_thread, engine, question, self._cancel),
            thread=True, exclusive=True, group="run", name="engine",
        )

    def _run_in_thread(self, engine: Any, question: str, cancel: threading.Event) -> None:
        """The worker: iterate the engine, record each event, post it to the app."""
        try:
            recorder = self._recorder_factory()
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
            failure = getattr(recorder, "failure", None)
            if failure:
                self.post_message(msg.BackgroundFailed("recording", str(failure)))
            close = getattr(recorder, "close", None)
            if callable(close) and recorder is not self.history:
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
        self.push_screen(self._ask_screen, callback=reply)

    def on_engine_emitted(self, message: msg.EngineEmitted) -> None:
        from appliance.agent import events as ev

        event = message.event
        self.events_seen.append(event)
        if self._quitting.is_set():
            return  # the screen is going away; the store has the run
        transcript = self.transcript
        if isinstance(event, ev.RunStarted):
            self.run_id = event.run_id
            self.status.change(model=event.model.name or self.status.state.model)
        elif isinstance(event, ev.StepStarted):
            transcript.card(event.step, event.max_steps)
            self.status.change(step=event.step, max_steps=event.max_steps)
        elif isinstance(event, ev.TextDelta):
            transcript.card(event.step).add_delta(event.text, event.kind)
        elif isinstance(event, ev.PromptProgress):
            transcript.card(event.step).set_waiting(progress_line(event.done, event.total, event.seconds_left))
        elif isinstance(event, ev.ThoughtMade):
            transcript.card(event.step).set_thought(event.thought)
        elif isinstance(event, ev.ActionChosen):
            transcript.card(event.step).set_action(event.action, event.action_input)
        elif isinstance(event, ev.ObservationMade):
            transcript.card(event.step).add_observation(event.status, event.summary, event.text, event.cached)
        elif isinstance(event, ev.Reflected):
            transcript.card(event.step).add_reflection(event.should_continue, event.reason, event.next_plan, event.trigger)
        elif isinstance(event, ev.AskedUser):
            transcript.card(event.step).add_note(f"asked you: {event.question}", "ask")
        elif isinstance(event, ev.UserReplied):
            transcript.card(event.step).add_note(f"you replied: {event.reply if event.reply is not None else '(no reply)'}", "reply")
        elif isinstance(event, ev.AnswerRejected):
            transcript.card(event.step).add_note(f"answer rejected: {event.reason}", "rejected")
        elif isinstance(event, ev.StepRecorded) and event.stats.completion_tokens:
            stats = event.stats
            transcript.card(event.step).set_stats(stats.tokens_per_second, stats.threads, stats.threads_batch)
            self.status.change(
                tokens_per_second=stats.tokens_per_second,
                prompt_tokens=stats.prompt_tokens_reused + stats.prompt_tokens_evaluated,
                prompt_tokens_reused=stats.prompt_tokens_reused,
                threads=stats.threads,
                threads_batch=stats.threads_batch,
            )
        elif isinstance(event, ev.FinalAnswer):
            self._final = event
        elif isinstance(event, ev.RunEnded):
            self._end_run(event)

    def _end_run(self, ended: Any) -> None:
        final = self._final
        markdown = answer_markdown(
            answer=ended.answer or (final.answer if final else ""),
            evidence=tuple(final.evidence) if final else (),
            result=ended.result or (final.result if final else {}),
            status=ended.status,
            error=ended.error,
            forced=bool(final.forced) if final else False,
            heading=False,
        )
        if ended.timing:
            markdown += f"\n\n*Time {timing_line(ended.timing)}*"
        self.transcript.show_answer(markdown, answer_title(ended.status))
        self.last_answer = ended.answer or (final.answer if final else "")
        self.last_run_id = ended.run_id
        self._finish_run(status_words(ended.status), elapsed=ended.seconds)

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
        if self._ask_screen is not None and self._ask_screen in self.screen_stack:
            self._ask_screen.dismiss(None)
        self.question_box.focus()
        self.run_checks()

    def _update_elapsed(self) -> None:
        if self.run_active:
            self.status.change(elapsed=self._clock() - self._run_started)

    def action_cancel_run(self) -> None:
        if self.run_active and self._cancel is not None:
            self._cancel.set()
            self.status.change(phase="cancelling")
        elif len(self.screen_stack) > 1:
            self.pop_screen()
        else:
            self.notify("No run to cancel. Ctrl+Q quits.", timeout=2)

    def ask_again(self, question: str) -> None:
        while len(self.screen_stack) > 1:
            self.pop_screen()
        if self.run_active:
            self.notify("A run is in progress: Esc cancels it.", severity="warning")
            return
        if self.model is None:
            self.notify("No model is loaded yet.", severity="warning")
            return
        self.start_run(question)

    def set_step_limit(self, limit: int) -> None:
        self.settings = dataclasses.replace(self.settings, max_steps=limit)
        if not self.run_active:
            self.status.change(max_steps=limit, step=0)
        self.notify(f"Step limit: {limit} (from the next run)")

    # ----- history, replay, export ---------------------------------------------------------------
    def action_history(self) -> None:
        if isinstance(self.screen, HistoryScreen):
            self.pop_screen()
        else:
            self.push_screen(HistoryScreen())

    def in_background(
        self,
        what: str,
        work: Callable[[], Any],
        done: Callable[[Any], Message],
        *,
        exclusive: bool = True,
        on_error: Callable[[], None] | None = None,
    ) -> None:
        """Run `work` in a thread worker; post `done(result)`, or BackgroundFailed(what, error)."""

        def job() -> None:
            try:
                value = work()
            except Exception as exc:
                if on_error is not None:
                    self.call_from_thread(on_error)
                self.post_message(msg.BackgroundFailed(what, one_line(exc)))
            else:
                self.post_message(done(value))

        self.run_worker(job, thread=True, exclusive=exclusive, group=what, name=what)

    def request_history(self, query: str) -> None:
        self.in_background("history", partial(self.history.list_runs, query),
                           lambda runs: msg.HistoryListed(runs, query))

    def on_history_listed(self, message: msg.HistoryListed) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, HistoryScreen):
                screen.show_runs(message.runs)

    def request_replay(self, run_id: str) -> None:
        self.in_background("replay", partial(self.history.get_run, run_id), lambda run: msg.RunLoaded(run, run_id))

    def on_run_loaded(self, message: msg.RunLoaded) -> None:
        if message.run is None:
            self.notify(f"Run {message.run_id} is not in the database.", severity="error")
            return
        self.push_screen(ReplayScreen(message.run))

    def action_export_run(self) -> None:
        if not self.last_run_id:
            self.notify("No run to export yet.", severity="warning")
            return
        self.request_export(self.last_run_id)

    def request_export(self, run_id: str) -> None:
        self.in_background("export", partial(self._export, run_id), lambda path: msg.RunExported(str(path)),
                           exclusive=False)

    def _export(self, run_id: str) -> Path:
        run = self.history.get_run(run_id)
        if run is None:
            raise LookupError(f"run {run_id} is not in the database")
        return self._exporter(run)

    def on_run_exported(self, message: msg.RunExported) -> None:
        self.notify(f"Exported to {message.path}")

    def on_background_failed(self, message: msg.BackgroundFailed) -> None:
        self.notify(f"{message.what}: {message.error}", severity="error", timeout=8)

    def action_copy_answer(self) -> None:
        self.copy_text(self.last_answer)

    def copy_text(self, text: str) -> None:
        if not text:
            self.notify("No answer to copy yet.", severity="warning")
            return
        self.copy_to_clipboard(text)
        self.notify("Answer copied to the clipboard.")

    def on_unmount(self) -> None:
        """However the app ends, tell a running engine to stop so its thread does not linger."""
        self._quitting.set()
        if self._cancel is not None:
            self._cancel.set()

    async def action_quit(self) -> None:
        """Quit: a running run is cancelled and given up to two seconds to record its end (the
        engine stops within a second, even during prompt evaluation), so it is not left `running`."""
        self._quitting.set()
        if self._cancel is not None:
            self._cancel.set()
        if not self._run_done.is_set():
            self.status.change(phase="cancelling")
            await asyncio.to_thread(self._run_done.wait, 2.0)
        self.exit()

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"

    # ----- system panel -------------------------------------------------------------------------
    def action_toggle_system(self) -> None:
        panel = self.system_panel
        panel.display = not panel.display
        if panel.display and self._sampler is not None:
            self._sample()
            self._sample_timer = self.set_interval(self._sample_interval, self._sample)
        else:
            self._stop_sampling()

    def _stop_sampling(self) -> None:
        if self._sample_timer is not None:
            self._sample_timer.stop()
            self._sample_timer = None

    def _sample(self) -> None:
        # On an error, stop sampling rather than repeat the same error every second.
        self.in_background("system panel", self._sampler, msg.SystemSampled,  # type: ignore[arg-type]
                           on_error=self._stop_sampling)

    def on_system_sampled(self, message: msg.SystemSampled) -> None:
        self.system_panel.show_sample(message.sample)

    # ----- checks panel -------------------------------------------------------------------------
    def run_checks(self) -> None:
        """The analyzers' findings, computed in a thread worker (they sample the machine for about
        half a second and run dmesg and the like), when the app opens and after each run."""
        if self._checker is not None:
            self.in_background("checks", lambda: list(self._checker()), msg.ChecksDone)  # type: ignore[misc]

    def on_checks_done(self, message: msg.ChecksDone) -> None:
        self.checks_panel.show_findings(message.findings)
        if not self._checks_seen and has_problems(message.findings):
            # the first check found something: show it once, without taking the focus from
            # whatever the person is doing (typing a question, or in the command palette)
            focused = self.focused
            self.checks_panel.display = True
            if focused is not None and self.focused is not focused:
                focused.focus()
        self._checks_seen = True

    def action_toggle_checks(self) -> None:
        self.checks_panel.display = not self.checks_panel.display
