"""The checks panel: the analyzers' findings (what `appliance check` prints), problems first.

The findings are computed by an injected checker in a thread worker when the app opens and after
each run (see RunScreen); this module only renders them. Verdicts quote machine text, so they
are shown as plain `Text`, never parsed as markup.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from appliance.analyzers.base import SEVERITY_RANK, by_severity

Checker = Callable[[], Sequence[Any]]  # () -> list of appliance.analyzers.Finding

MARKS = {
    "critical": ("✖", "bold red"),
    "warning": ("▲", "bold yellow"),
    "unknown": ("?", "dim"),
    "ok": ("✓", "green"),
}
LINE_WIDTH = 34  # the panel's text width (#checks in app.tcss: 38 wide, border and padding 4)


def summary(findings: Iterable[Any]) -> str:
    """'1 critical · 2 warnings', or 'all clear' when nothing is wrong."""
    counts = {"critical": 0, "warning": 0}
    for finding in findings:
        if finding.severity in counts:
            counts[finding.severity] += 1
    parts = [f"{n} {name}{'s' if n != 1 and name == 'warning' else ''}" for name, n in counts.items() if n]
    return " · ".join(parts) if parts else "all clear"


def has_problems(findings: Iterable[Any]) -> bool:
    return any(SEVERITY_RANK.get(f.severity, 0) > 0 for f in findings)


def findings_text(findings: Sequence[Any]) -> Text:
    """One entry per finding, worst first: problems with their whole verdict, the rest on one line."""
    text = Text()
    if not findings:
        text.append("checking the machine…", style="dim")
        return text
    for finding in by_severity(list(findings)):
        mark, style = MARKS.get(finding.severity, ("·", ""))
        text.append(f"{mark} {finding.family}", style=style)
        if SEVERITY_RANK.get(finding.severity, 0) > 0:
            text.append(f"\n  {finding.verdict}\n")
        else:
            room = max(8, LINE_WIDTH - len(finding.family) - 4)  # "✓ family: " and the verdict on one line
            verdict = finding.verdict if len(finding.verdict) <= room else finding.verdict[:room - 1] + "…"
            text.append(f": {verdict}\n", style="dim")
    text.rstrip()
    return text


class ChecksPanel(VerticalScroll):
    """The findings of the last check, scrollable; the border says how many problems."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.findings: list[Any] = []

    def compose(self) -> ComposeResult:
        yield Static(findings_text([]), id="checks-text")

    def on_mount(self) -> None:
        self.border_title = "Checks"

    def show_findings(self, findings: Sequence[Any]) -> None:
        self.findings = list(findings)
        self.border_subtitle = summary(self.findings)
        self.query_one("#checks-text", Static).update(findings_text(self.findings))
