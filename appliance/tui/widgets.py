"""The widgets of the main screen: status bar, step cards, the run transcript, the system panel.

Widgets expose small methods (`add_delta`, `set_action`, ...) that only the app's message handlers
call, on the event loop. Model output is shown as plain `Text` (never parsed as markup), since
tool output and model text are untrusted.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Mapping

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Collapsible, Markdown, ProgressBar, Sparkline, Static

from appliance.errors import terminal_safe
from appliance.tui.render import (
    StatusState,
    answer_markdown,
    answer_title,
    step_stats,
    format_args,
    observation_title,
    should_fold,
    status_text,
)
from appliance.tui.system_sampler import SystemSample
from appliance.tui.thought_stream import FieldStream


class StatusBar(Static):
    """One line at the top: model, phase, step, speed, prompt reuse, elapsed time, threads."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", markup=False, **kwargs)
        self.state = StatusState()

    def render(self) -> Text:
        width = self.size.width or 80
        return Text(status_text(self.state, width=width), no_wrap=True, overflow="ellipsis")

    def change(self, **fields: Any) -> None:
        for name, value in fields.items():
            setattr(self.state, name, value)
        self.refresh()


class StepCard(Vertical):
    """One ReAct step, filled in live: thought, action, observation (folded if long), reflection.

    All parts exist from the start and are shown as they fill in: mounting new children later
    would race with the card's own mounting when events arrive in a burst, and could show the
    parts out of order.
    """

    def __init__(self, step: int, max_steps: int = 0, **kwargs: Any) -> None:
        super().__init__(classes="step-card", **kwargs)
        self.step = step
        self.max_steps = max_steps
        self._thought_stream = FieldStream("thought")
        self._reflection_stream = FieldStream("reason")
        self.thought = ""
        self.notes: list[str] = []
        self._thought = Static(Text("thinking…", style="dim"), classes="thought")
        self._action = Static("", classes="action")
        self._observation_text = Static("", classes="observation-text")
        self._observation = Collapsible(self._observation_text, title="observation", collapsed=True,
                                        classes="observation")
        self._reflection = Static("", classes="reflection")
        self._notes = Static("", classes="note")
        for part in (self._action, self._observation, self._reflection, self._notes):
            part.display = False
        if step == 0:  # the engine's first look at the machine: no thought of the model's
            self._thought.display = False

    def compose(self) -> ComposeResult:
        yield self._thought
        yield self._action
        yield self._observation
        yield self._reflection
        yield self._notes

    def on_mount(self) -> None:
        if self.step == 0:
            self.border_title = "Snapshot of the machine"
        else:
            self.border_title = f"Step {self.step}" + (f"/{self.max_steps}" if self.max_steps else "")

    def set_stats(self, tokens_per_second: float, threads: int | None, threads_batch: int | None) -> None:
        """The step's speed and the threads chosen for it, in the card's bottom border."""
        self.border_subtitle = step_stats(tokens_per_second, threads, threads_batch)

    def add_delta(self, text: str, kind: str = "step") -> None:
        """A raw piece of the model's JSON: show only the thought (or reflection reason) text."""
        if kind == "reflection":
            if self._reflection_stream.feed(text):
                self._reflection.update(Text(f"reflecting: {terminal_safe(self._reflection_stream.text)}"))
                self._reflection.display = True
            return
        new = self._thought_stream.feed(text)
        if new:
            self.thought += new
            self._thought.update(Text(terminal_safe(self.thought)))

    def set_waiting(self, text: str) -> None:
        """What the step waits for before its first token (prompt evaluation progress)."""
        if not self.thought:
            self._thought.update(Text(text, style="dim"))

    def set_thought(self, thought: str) -> None:
        self.thought = thought
        self._thought.update(Text(terminal_safe(thought)) if thought else Text("(no thought)", style="dim"))

    def set_action(self, action: str, action_input: Mapping[str, Any] | None) -> None:
        line = Text()
        line.append("→ ", style="bold")
        line.append(action, style="bold")
        line.append(" ")
        if action == "finish":  # its input is the answer, shown in full below the steps
            line.append("(the answer is below)", style="dim")
        else:
            line.append(format_args(action_input), style="dim")
        self._action.update(line)
        self._action.display = True

    def add_observation(self, status: str, summary: str, text: str, cached: bool = False) -> None:
        self._observation_text.update(Text(terminal_safe(text) or "(empty)"))
        self._observation.title = observation_title(status, summary, cached)
        self._observation.collapsed = should_fold(text) or self.step == 0
        self._observation.add_class(f"status-{status}")
        self._observation.display = True

    def add_reflection(self, should_continue: bool, reason: str, next_plan: str, trigger: str = "") -> None:
        words = Text()
        words.append("reflection", style="bold")
        if trigger:
            words.append(f" ({trigger})", style="dim")
        words.append(": " + ("continue" if should_continue else "stop") + f" — {reason}")
        if next_plan:
            words.append(f"\nplan: {next_plan}")
        self._reflection.update(words)
        self._reflection.display = True

    def add_note(self, text: str, kind: str = "note") -> None:
        self.notes.append(text)
        self._notes.update(Text(terminal_safe("\n".join(self.notes))))
        self._notes.display = True


class Transcript(VerticalScroll):
    """The current run (or a replayed one): question, step cards, answer."""

    def __init__(self, *, follow: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.follow = follow  # keep the newest step in view (a live run); a replay starts at the top
        self.cards: dict[int, StepCard] = {}
        self.answer_text = ""
        self._answer: Markdown | None = None

    def show_message(self, text: str, *, loading: bool = False) -> None:
        """Replace everything with one message (welcome, loading, errors)."""
        self.cards.clear()
        self.remove_children()
        self.mount(Static(text, classes="banner"))
        if loading:
            self.mount(ProgressBar(total=None, show_eta=False, show_percentage=False, id="loading-bar"))

    def begin(self, question: str) -> None:
        self.cards.clear()
        self.answer_text = ""
        self.remove_children()
        heading = Text()
        heading.append("Q: ", style="bold")
        heading.append(question)
        self.mount(Static(heading, classes="question"))

    def card(self, step: int, max_steps: int = 0) -> StepCard:
        existing = self.cards.get(step)
        if existing is not None:
            return existing
        card = StepCard(step, max_steps)
        self.cards[step] = card
        self.mount(card)
        self._follow()
        return card

    def show_answer(self, markdown: str, title: str = "Answer") -> None:
        self.answer_text = markdown
        answer = Markdown(markdown, classes="answer")
        self._answer = answer
        answer.border_title = title
        self.mount(answer)
        if self.follow:  # show the answer from its first line, not its last
            self.call_after_refresh(self.scroll_to_widget, answer, animate=False, top=True)

    def change_answer(self, markdown: str) -> bool:
        """Other words in the answer box shown (its evidence as read, and back); False when there is none."""
        if self._answer is None or not self._answer.is_attached:
            return False
        self.answer_text = markdown
        self._answer.update(markdown)
        return True

    def _follow(self) -> None:
        if self.follow:
            self.call_after_refresh(self.scroll_end, animate=False)


def replay_into(transcript: Transcript, replay: Any) -> None:
    """Fill a transcript with a stored run (a RunReplay), every step complete."""
    transcript.begin(replay.row.question)
    for row in replay.steps:
        card = transcript.card(row.step)
        card.set_thought(row.thought)
        card.set_action(row.action, row.action_input)
        card.set_stats(row.tokens_per_second, row.threads, row.threads_batch)
        card.add_observation(row.observation_status, row.observation_summary, row.observation)
        if row.reflection:  # a StepRecord's ReflectionRecord: one spelling, read by the store
            card.add_reflection(row.reflection.should_continue, row.reflection.reason, row.reflection.next_plan)
    transcript.show_answer(
        answer_markdown(
            answer=replay.answer,
            evidence=replay.evidence,
            result=replay.result,
            status=replay.row.status,
            error=replay.error,
            forced=replay.forced,
            heading=False,
        ),
        answer_title(replay.row.status),
    )


class SystemPanel(Vertical):
    """CPU and memory over the last minute as sparklines, and the busiest processes."""

    HISTORY = 60

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cpu: deque[float] = deque(maxlen=self.HISTORY)
        self.memory: deque[float] = deque(maxlen=self.HISTORY)

    def compose(self) -> ComposeResult:
        yield Static("CPU", id="cpu-label", classes="panel-label")
        yield Sparkline([], id="cpu-spark", summary_function=max)
        yield Static("Memory", id="mem-label", classes="panel-label")
        yield Sparkline([], id="mem-spark", summary_function=max)
        yield Static("", id="top-processes")

    def on_mount(self) -> None:
        self.border_title = "System"

    def show_sample(self, sample: SystemSample) -> None:
        self.cpu.append(sample.cpu_percent)
        self.memory.append(sample.memory_percent)
        self.query_one("#cpu-label", Static).update(f"CPU {sample.cpu_percent:.0f}%")
        self.query_one("#mem-label", Static).update(
            f"Memory {sample.memory_percent:.0f}% ({sample.memory_used_gb:.1f}/{sample.memory_total_gb:.0f} GiB)"
        )
        self.query_one("#cpu-spark", Sparkline).data = list(self.cpu)
        self.query_one("#mem-spark", Sparkline).data = list(self.memory)
        table = Text()
        table.append(f"{'PID':>7} {'CPU%':>5} {'MB':>6} NAME\n", style="bold")
        for proc in sample.top:
            table.append(f"{proc.pid:>7} {proc.cpu_percent:>5.0f} {proc.memory_mb:>6.0f} {proc.name}\n")
        self.query_one("#top-processes", Static).update(table)
