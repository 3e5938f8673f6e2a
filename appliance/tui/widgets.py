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

from appliance.tui.render import (
    StatusState,
    answer_markdown,
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
    """One ReAct step, filled in live: thought, action, observation (folded if long), reflection."""

    def __init__(self, step: int, max_steps: int = 0, **kwargs: Any) -> None:
        super().__init__(classes="step-card", **kwargs)
        self.step = step
        self.max_steps = max_steps
        self._thought_stream = FieldStream("thought")
        self._reflection_stream = FieldStream("reason")
        self.thought = ""
        self._thought = Static(Text("…", style="dim"), classes="thought")
        self._action = Static("", classes="action")
        self._action.display = False

    def compose(self) -> ComposeResult:
        yield self._thought
        yield self._action

    def on_mount(self) -> None:
        self.border_title = f"Step {self.step}" + (f"/{self.max_steps}" if self.max_steps else "")

    def add_delta(self, text: str, kind: str = "step") -> None:
        """A raw piece of the model's JSON: show only the thought (or reflection reason) text."""
        if kind == "reflection":
            new = self._reflection_stream.feed(text)
            if new:
                self._reflection_live().update(Text(f"reflecting: {self._reflection_stream.text}", style="italic"))
            return
        new = self._thought_stream.feed(text)
        if new:
            self.thought += new
            self._thought.update(Text(self.thought))

    def set_thought(self, thought: str) -> None:
        self.thought = thought
        self._thought.update(Text(thought) if thought else Text("(no thought)", style="dim"))

    def set_action(self, action: str, action_input: Mapping[str, Any] | None) -> None:
        line = Text()
        line.append("→ ", style="bold")
        line.append(action, style="bold")
        line.append(" ")
        line.append(format_args(action_input), style="dim")
        self._action.update(line)
        self._action.display = True

    def add_observation(self, status: str, summary: str, text: str, cached: bool = False) -> None:
        body = Static(Text(text or "(empty)"), classes="observation-text")
        folded = should_fold(text)
        box = Collapsible(body, title=observation_title(status, summary, cached), collapsed=folded)
        box.add_class("observation", f"status-{status}")
        self.mount(box)

    def add_reflection(self, should_continue: bool, reason: str, next_plan: str, trigger: str = "") -> None:
        for live in self.query(".reflection-live"):
            live.remove()
        words = Text()
        words.append("reflection", style="bold")
        if trigger:
            words.append(f" ({trigger})", style="dim")
        words.append(": " + ("continue" if should_continue else "stop") + f" — {reason}")
        if next_plan:
            words.append(f"\nplan: {next_plan}")
        self.mount(Static(words, classes="reflection"))

    def add_note(self, text: str, kind: str = "note") -> None:
        self.mount(Static(Text(text), classes=f"note {kind}"))

    def _reflection_live(self) -> Static:
        found = self.query(".reflection-live")
        if found:
            return found.first(Static)
        live = Static("", classes="reflection reflection-live")
        self.mount(live)
        return live


class Transcript(VerticalScroll):
    """The current run (or a replayed one): question, step cards, answer."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cards: dict[int, StepCard] = {}
        self.answer_text = ""

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

    def show_answer(self, markdown: str) -> None:
        self.answer_text = markdown
        self.mount(Markdown(markdown, classes="answer"))
        self._follow()

    def _follow(self) -> None:
        self.call_after_refresh(self.scroll_end, animate=False)


def replay_into(transcript: Transcript, replay: Any) -> None:
    """Fill a transcript with a stored run (a RunReplay), every step complete."""
    transcript.begin(replay.row.question)
    for row in replay.steps:
        card = transcript.card(row.step)
        card.set_thought(row.thought)
        card.set_action(row.action, row.action_input)
        card.add_observation(row.observation_status, row.observation_summary, row.observation)
        if row.reflection:
            card.add_reflection(
                bool(row.reflection.get("continue", row.reflection.get("should_continue", True))),
                str(row.reflection.get("reason", "")),
                str(row.reflection.get("next_plan", "")),
            )
    transcript.show_answer(
        answer_markdown(
            answer=replay.answer,
            evidence=replay.evidence,
            result=replay.result,
            status=replay.row.status,
            error=replay.error,
            forced=replay.forced,
        )
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
