"""The Textual app: the model, the screens, and the requests the screens send up.

Every dependency comes in through the constructor (model loader, engine factory, settings, the
recorder and history source, the system sampler, the clock), so tests drive the real app with a
scripted model and a temporary store. The app owns what outlives one run: the model (loading,
warming, pulling, switching), the settings, the history, replay and export, the command palette
(`get_system_commands`) and quitting. The run itself (transcript, status bar, the engine's worker,
the side panels) lives in `RunScreen`, the app's default screen. Screens never call the app: they
post request messages (`appliance.tui.messages`) or return a value with `dismiss`.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker

from appliance.agent.settings import MAX_STEPS_LIMIT
from appliance.agent.timing import progress_line
from appliance.errors import one_line
from appliance.tui import messages as msg
from appliance.tui.batching import DELTA_INTERVAL
from appliance.tui.checks import Checker
from appliance.tui.export import MarkdownExporter
from appliance.tui.history_source import HistorySource, MemoryHistory, RunReplay
from appliance.tui.live import RAW_KEY
from appliance.tui.loading import ModelLoader, ModelNotOnDisk, Puller
from appliance.tui.pulling import PullsModels
from appliance.tui.run_screen import RecorderFactory, RunScreen
from appliance.tui.screens import HistoryScreen, ModelErrorScreen, ModelMissingScreen, ReplayScreen
from appliance.tui.system_sampler import Sampler
from appliance.tui.warmup import TypingAhead, read_ahead, warm_model

if TYPE_CHECKING:
    from appliance.agent.settings import EngineSettings
    from appliance.llm.base import ChatModel
    from appliance.wiring import EngineFactory

STEP_LIMITS = (2, 3, 4, 6, 8, 10, 12, 16, 20)  # offered in the palette's list
MAX_STEP_LIMIT = MAX_STEPS_LIMIT  # any limit up to this one is found by typing it ("step limit 7")
WARM_WORDS = {"loaded": "prompt from cache", "evaluated": "prompt cached", "present": "prompt ready",
              "stopped": "prompt stopped"}


class ApplianceApp(PullsModels, App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "appliance"
    BINDINGS = [
        Binding("escape", "cancel_run", "Cancel"),
        Binding("ctrl+c", "cancel_run", "Cancel", show=False, priority=True),
        Binding("ctrl+r", "history", "History"),
        Binding("ctrl+t", "toggle_system", "System"),
        Binding("ctrl+g", "toggle_checks", "Checks", show=False),
        Binding("ctrl+s", "export_run", "Export", show=False),
        Binding("ctrl+y", "copy_answer", "Copy", show=False),
        Binding(RAW_KEY, "toggle_as_read", "Evidence as read", show=False),
        Binding("ctrl+q", "quit", "Quit"),
    ]

    def __init__(
        self,
        *,
        model_loader: ModelLoader,
        engine_factory: EngineFactory,
        settings: "EngineSettings",
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
        begin_check: Callable[[], None] | None = None,
        read_ahead: bool = True,
    ) -> None:
        super().__init__()
        self._model_loader = model_loader
        self._engine_factory = engine_factory
        self._typing = TypingAhead(begin_check, clock, read_ahead=read_ahead)
        self._clock = clock
        self.settings = settings
        memory = MemoryHistory()
        self.history: HistorySource = history if history is not None else memory
        self.model_spec = model_spec
        self._model_choices = model_choices or (lambda: ())
        self._puller = puller
        self._exporter = exporter or MarkdownExporter(Path.cwd())
        self._quitting = threading.Event()
        self._pending_question: str | None = None
        self.model: "ChatModel | None" = None
        self.model_phase = "starting"  # loading, ready, missing, error
        self.run_screen = RunScreen(
            recorder_factory=recorder_factory or (lambda: memory), max_steps=settings.max_steps, clock=clock,
            delta_interval=delta_interval, sampler=sampler, sample_interval=sample_interval, checker=checker,
            show_system=show_system,
        )

    def get_default_screen(self) -> Screen[Any]:
        return self.run_screen

    def on_ready(self) -> None:
        """The run screen is up and drawn (Textual's Ready follows its first frame): load the model
        behind it. Not on_mount: the app mounts before its default screen has composed."""
        self.load_model(self.model_spec)

    # ----- model loading ------------------------------------------------------------------------
    def model_choices(self) -> list[tuple[str, str]]:
        return list(self._model_choices())

    def load_model(self, spec: str | None) -> None:
        """Show the screen at once and load the model in a thread, with a progress indicator."""
        self.model = None
        self.model_spec = spec
        self.model_phase = "loading"
        self.run_screen.show_status(model=spec or "default model", phase="loading model")
        self.run_screen.show_message(f"Loading {spec or 'the default model'}…", loading=True, welcome=True)
        self._load(spec)

    @work(thread=True, exclusive=True, group="model", name="load-model")
    def _load(self, spec: str | None) -> None:
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
        self.run_screen.show_status(model=name, phase="ready")
        self.run_screen.show_message(welcome=True)
        self._warm()
        if self._pending_question:
            question, self._pending_question = self._pending_question, None
            self.start_run(question, message.model)

    def _warm(self) -> None:
        """Evaluate (or load from the prompt cache) the system prompt in the background."""
        model = self.model
        if model is None:
            return
        try:
            engine = self._engine_factory(model, self.settings)
        except Exception:
            return  # the first question reports the problem
        self.run_worker(partial(warm_model, self.post_message, engine,
                                lambda: self._quitting.is_set() or self.model is not model),
                        thread=True, exclusive=True, group="warm", name="warm-prompt")

    def on_warm_progressed(self, message: msg.WarmProgressed) -> None:
        if not self.run_screen.run_active:
            self.run_screen.show_status(phase=progress_line(message.done, message.total, message.seconds_left))

    def on_warm_finished(self, message: msg.WarmFinished) -> None:
        if message.report and message.report.get("note"):
            self.notify(message.report["note"], severity="warning")
        if not self.run_screen.run_active and self.model_phase == "ready":
            # short: the status line also carries the step, the speed and the time, and an 80-column
            # terminal cut them off behind the long form (runs show keeps that)
            short = WARM_WORDS.get(str((message.report or {}).get("status")))
            self.run_screen.show_status(phase=f"ready ({short})" if short else "ready")

    def on_model_missing(self, message: msg.ModelMissing) -> None:
        self.model_phase = "missing"
        self.run_screen.show_status(model=message.name, phase="no model")
        self.run_screen.show_message(f"Model {message.name} is missing. {message.detail}")
        self.push_screen(ModelMissingScreen(message.name, message.size, message.detail, self._puller is not None))

    def on_model_load_failed(self, message: msg.ModelLoadFailed) -> None:
        self.model_phase = "error"
        self.run_screen.show_status(phase="model error")
        self.run_screen.show_message(f"Cannot load the model: {message.error}")
        self.push_screen(ModelErrorScreen(message.error, message.spec))

    def switch_model(self, spec: str) -> None:
        if self.run_screen.run_active:
            self.notify("Wait for the run to end (or Esc to cancel it) before switching model.", severity="warning")
            return
        self._close_screens()
        self.load_model(spec)

    # ----- runs ---------------------------------------------------------------------------------
    def on_question_asked(self, message: msg.QuestionAsked) -> None:
        if self.model is not None:
            self.start_run(message.question, self.model)
        elif self.model_phase == "loading":
            self._pending_question = message.question
            self.notify("The model is still loading; your question starts as soon as it is ready.")
        else:
            self.notify("No model is loaded: Ctrl+P → Switch model, or see the model screen.", severity="error")

    def on_question_typed(self, message: msg.QuestionTyped) -> None:
        """Begin the first step's machine check while the person types (warmup.TypingAhead) and,
        with the first one, read the first prompt ahead (warmup.read_ahead, one worker until a run
        starts)."""
        model = self.model
        if not self._typing.typed(message.draft, can_read_ahead=model is not None) or model is None:
            return
        try:
            engine = self._engine_factory(model, self.settings)
        except Exception:
            self._typing.run_started()
            return  # the run reports the problem
        self.run_worker(partial(read_ahead, engine, lambda: self._typing.draft,
                                lambda: self._quitting.is_set() or self.model is not model or not self._typing.reading),
                        thread=True, exclusive=True, group="read-ahead", name="read-ahead")

    def start_run(self, question: str, model: "ChatModel") -> None:
        self._typing.run_started()  # the run takes the check begun so far and stops the read-ahead
        make_engine = partial(self._engine_factory, model, self.settings)
        self.run_screen.start_run(question, make_engine, self.settings.max_steps)

    def ask_again(self, question: str | None) -> None:
        """A question from a replay (its `a`): back to the run screen, and ask it."""
        if question is None:
            return
        self._close_screens()
        if self.run_screen.run_active:
            self.notify("A run is in progress: Esc cancels it.", severity="warning")
        elif self.model is None:
            self.notify("No model is loaded yet.", severity="warning")
        else:
            self.start_run(question, self.model)

    def _close_screens(self) -> None:
        while len(self.screen_stack) > 1:
            self.pop_screen()

    def set_step_limit(self, limit: int) -> None:
        self.settings = dataclasses.replace(self.settings, max_steps=limit)
        if not self.run_screen.run_active:
            self.run_screen.show_status(max_steps=limit, step=0)
        self.notify(f"Step limit: {limit} (from the next run)")

    def action_cancel_run(self) -> None:
        if self.run_screen.cancel_run():
            return
        if len(self.screen_stack) > 1:
            self.pop_screen()
        else:
            self.notify("No run to cancel. Ctrl+Q quits.", timeout=2)

    # ----- history, replay, export, copy ----------------------------------------------------------
    def action_history(self) -> None:
        if isinstance(self.screen, HistoryScreen):
            self.pop_screen()
        else:
            self.push_screen(HistoryScreen(self.history))

    def on_replay_requested(self, message: msg.ReplayRequested) -> None:
        self.request_replay(message.run_id)

    @work(thread=True, exclusive=True, group="replay", exit_on_error=False)
    def request_replay(self, run_id: str) -> None:
        self.post_message(msg.RunLoaded(self.history.get_run(run_id), run_id))

    def on_run_loaded(self, message: msg.RunLoaded) -> None:
        if message.run is None:
            self.notify(f"Run {message.run_id} is not in the database.", severity="error")
            return
        self.push_screen(ReplayScreen(message.run), callback=self.ask_again)

    def action_export_run(self) -> None:
        if not self.run_screen.last_run_id:
            self.notify("No run to export yet.", severity="warning")
            return
        self._export(self.run_screen.last_run_id)

    def on_export_requested(self, message: msg.ExportRequested) -> None:
        self._export(message.run_id)

    @work(thread=True, group="export", exit_on_error=False)
    def _export(self, run_id: str) -> None:
        run = self.history.get_run(run_id)
        if run is None:
            raise LookupError(f"run {run_id} is not in the database")
        self.post_message(msg.RunExported(str(self._exporter(run))))

    def on_run_exported(self, message: msg.RunExported) -> None:
        self.notify(f"Exported to {message.path}")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        failure = msg.worker_failure(event)
        if failure:
            self.notify(failure, severity="error", timeout=8)

    def action_copy_answer(self) -> None:
        self.copy_text(self.run_screen.last_answer)

    def on_copy_requested(self, message: msg.CopyRequested) -> None:
        self.copy_text(message.text)

    def copy_text(self, text: str) -> None:
        if not text:
            self.notify("No answer to copy yet.", severity="warning")
            return
        self.copy_to_clipboard(text)
        self.notify("Answer copied to the clipboard.")

    # ----- panels, theme, palette, quitting ----------------------------------------------------
    def action_toggle_system(self) -> None:
        self.run_screen.toggle_system()

    def action_toggle_checks(self) -> None:
        self.run_screen.toggle_checks()

    def action_toggle_as_read(self) -> None:
        if self.screen is not self.run_screen or not self.run_screen.toggle_as_read():
            self.notify("No answer with evidence on screen.", severity="warning", timeout=2)

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The palette (Ctrl+P): Textual's own commands, then the appliance's."""
        yield from super().get_system_commands(screen)
        yield SystemCommand("Toggle system panel", "CPU, memory and top processes, refreshed every second",
                            self.action_toggle_system)
        yield SystemCommand("Toggle checks panel",
                            "The machine's checks (what `appliance check` prints), problems first; Ctrl+G",
                            self.action_toggle_checks)
        yield SystemCommand("Open history", "Past runs: search, replay, ask again, export", self.action_history)
        yield SystemCommand("Export run", "Write the last run (steps and answer) to a Markdown file",
                            self.action_export_run)
        yield SystemCommand("Copy answer", "Copy the last answer to the clipboard", self.action_copy_answer)
        yield SystemCommand("Toggle light/dark theme", "Switch between the light and dark themes",
                            self.action_toggle_theme)
        for limit in range(1, MAX_STEP_LIMIT + 1):  # the presets listed; any other found by typing it
            yield SystemCommand(f"Set step limit: {limit}", f"Stop runs after {limit} steps (now {self.settings.max_steps})",
                                partial(self.set_step_limit, limit), discover=limit in STEP_LIMITS)
        for name, spec in self.model_choices():
            yield SystemCommand(f"Switch model: {name}", f"Load {spec}", partial(self.switch_model, spec))

    def on_unmount(self) -> None:
        """However the app ends, tell a running engine to stop so its thread does not linger."""
        self._quitting.set()
        self.run_screen.stop()

    async def action_quit(self) -> None:
        """Quit: a running run is cancelled and given up to two seconds to record its end, so it
        is not left `running`."""
        self._quitting.set()
        self.run_screen.stop()
        await self.run_screen.wait_for_run_end(2.0)
        self.exit()
