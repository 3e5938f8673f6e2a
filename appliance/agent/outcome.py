"""What one action produced, before the engine turns it into events and the next prompt.

Why one value: a tool call, a question to the person, a refused finish and an unparsable reply all
end a step the same way (an observation, the loop control's verdict, maybe a reflection), so the
step handles them through one shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from appliance.agent.observe import clean, render_result, wrap
from appliance.llm.base import GenerationStats
from appliance.tools.procs import label_records

REPEAT = "repeat"  # the status of a call answered from the run's memory


@dataclass
class Outcome:
    """What one action produced, before it becomes events."""

    status: str
    body: str
    source: str
    notes: list[str] = field(default_factory=list)
    tool_ms: float = 0.0
    cached: bool = False
    new_info: bool = False
    evaluation: str = ""
    repeats: int = 0
    repeat_of: int | None = None  # the step whose call this one repeats
    unparsable: bool = False  # the model's reply was no step at all

    @property
    def text(self) -> str:
        return wrap(self.source, self.status, self.body)


def add_stats(a: GenerationStats, b: GenerationStats) -> GenerationStats:
    """Two model calls of one step (the action and its reflection) as one record."""
    values = {}
    for f in fields(GenerationStats):
        x, y = getattr(a, f.name), getattr(b, f.name)
        values[f.name] = (x if y is None else y) if f.name.startswith("threads") else x + y
    return GenerationStats(**values)


def split_headline(result: Any) -> tuple[Any, str | None]:
    """A ranked tool's one-line answer (`data["headline"]`) taken out of its data, so the engine
    shows it as the observation's first line, on its own, before the list it sums up."""
    if isinstance(result, dict) and isinstance(result.get("data"), dict) and "headline" in result["data"]:
        data = dict(result["data"])
        headline = str(data.pop("headline"))
        return dict(result, data=data), headline
    return result, None


def render_with_headline(result: Any, budget: int) -> tuple[str, str, bool]:
    """render_result with the headline (if any) as the first line: (status, body, has_headline)."""
    result, headline = split_headline(result)
    status, body = render_result(result, budget)
    if headline:
        body = f"headline: {clean(headline)}\n{body}"
    return status, body, headline is not None


def render_tool_result(result: Any, self_pids: frozenset[int], budget: int) -> tuple[str, str, bool]:
    """A tool's result as the model reads it, the appliance's own processes labelled (the safety
    net for data a tool did not label itself): (status, body, has_headline)."""
    if isinstance(result, dict) and "data" in result:
        result = dict(result, data=label_records(result["data"], self_pids))
    return render_with_headline(result, budget)
