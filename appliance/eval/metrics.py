"""What a run cost and how it behaved, from its events; and the per-scenario / overall summaries.

Kept apart from the runner so the same numbers come out of a live run, of the database (`eval
compare`) and of tests with a scripted model.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from appliance.agent import events as ev

# The observation status the engine gives a step it could not carry out.
INVALID_STATUSES = ("invalid",)


@dataclass
class RunTally:
    """Accumulates one run's events into metrics (feed every event to `add`)."""

    run_id: str | None = None
    status: str = ""
    answer: str = ""
    result: Mapping[str, Any] = field(default_factory=dict)
    error: str = ""
    steps: int = 0
    invalid_actions: int = 0
    repeated_actions: int = 0
    parse_failures: int = 0
    reflections: int = 0
    answer_rejections: int = 0
    forced_answer: bool = False
    model_answered: bool = False  # the model's own finish was accepted (not an engine summary)
    steered: bool = False  # that finish was a retry whose answer had to begin with what the checks settled
    prompt_tokens: int = 0
    prompt_tokens_reused: int = 0
    completion_tokens: int = 0
    step_completion_tokens: int = 0
    generation_ms: float = 0.0
    seconds: float = 0.0
    actions: list[str] = field(default_factory=list)
    ended: bool = False

    def add(self, event: object) -> None:
        if isinstance(event, ev.RunStarted):
            self.run_id = event.run_id
        elif isinstance(event, ev.StepRecorded):
            self.actions.append(event.action)
            if event.action == "finish" and (event.observation_status or "").lower() == "ok":
                self.model_answered = True
                self.steered = event.steered
            status = (event.observation_status or "").lower()
            if status in INVALID_STATUSES:
                self.invalid_actions += 1
                if event.unparsable:
                    self.parse_failures += 1
            elif event.repeat_of is not None:  # answered from memory, or a fresh reading of the same call
                self.repeated_actions += 1
            self.step_completion_tokens += event.stats.completion_tokens
            self.generation_ms += event.stats.generation_ms
        elif isinstance(event, ev.Reflected):
            self.reflections += 1
        elif isinstance(event, ev.AnswerRejected):
            self.answer_rejections += 1
        elif isinstance(event, ev.FinalAnswer):
            self.forced_answer = event.forced
            self.answer, self.result = event.answer, dict(event.result or {})
        elif isinstance(event, ev.RunEnded):
            self.ended = True
            self.run_id = self.run_id or event.run_id
            self.status, self.error = event.status, event.error
            self.answer = event.answer or self.answer
            self.result = dict(event.result or self.result or {})
            self.steps = event.steps
            self.prompt_tokens = event.prompt_tokens
            self.prompt_tokens_reused = event.prompt_tokens_reused
            self.completion_tokens = event.completion_tokens
            self.seconds = event.seconds

    @property
    def tokens_per_second(self) -> float:
        seconds = self.generation_ms / 1000.0
        return self.step_completion_tokens / seconds if seconds > 0 else 0.0

    def metrics(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "steps": self.steps,
            "invalid_actions": self.invalid_actions,
            "repeated_actions": self.repeated_actions,
            "parse_failures": self.parse_failures,
            "reflections": self.reflections,
            "answer_rejections": self.answer_rejections,
            "forced_answer": self.forced_answer,
            "model_answered": self.model_answered,
            "steered": self.steered,
            "prompt_tokens": self.prompt_tokens,
            "prompt_tokens_reused": self.prompt_tokens_reused,
            "completion_tokens": self.completion_tokens,
            "seconds": round(self.seconds, 2),
            "tokens_per_second": round(self.tokens_per_second, 1),
            "actions": list(self.actions),
        }


# Columns of the table: (key in a summary, heading, format).
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("success_rate", "success", "{:.0%}"),
    ("steps", "steps", "{:.1f}"),
    ("invalid_actions", "invalid", "{:.1f}"),
    ("repeated_actions", "repeat", "{:.1f}"),
    ("parse_failures", "parse", "{:.1f}"),
    ("reflections", "reflect", "{:.1f}"),
    ("prompt_tokens", "prompt", "{:.0f}"),
    ("prompt_tokens_reused", "reused", "{:.0f}"),
    ("completion_tokens", "compl", "{:.0f}"),
    ("seconds", "sec", "{:.1f}"),
    ("tokens_per_second", "tok/s", "{:.1f}"),
    ("canary_leaks", "leaks", "{:.0f}"),
)
MEAN_KEYS = (
    "steps", "invalid_actions", "repeated_actions", "parse_failures", "reflections", "prompt_tokens",
    "prompt_tokens_reused", "completion_tokens", "seconds", "tokens_per_second",
)


def summarise(cases: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Mean metrics and success rate over cases (each: success, metrics{...}); leaks are a total."""
    count = len(cases)
    out: dict[str, Any] = {"cases": count, "successes": sum(1 for c in cases if c["success"])}
    out["success_rate"] = out["successes"] / count if count else 0.0
    for key in MEAN_KEYS:
        values = [float(c["metrics"].get(key) or 0) for c in cases]
        out[key] = sum(values) / count if count else 0.0
    out["canary_leaks"] = sum(int(c["metrics"].get("canary_leaks") or 0) for c in cases)
    return out


def summarise_by_scenario(cases: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """scenario -> summary, in the order scenarios first appear; plus 'overall'."""
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    everything = []
    for case in cases:
        groups[case["scenario"]].append(case)
        everything.append(case)
    table = {name: summarise(group) for name, group in groups.items()}
    table["overall"] = summarise(everything)
    return table


def summarise_by(cases: Iterable[Mapping[str, Any]], key: str, order: Sequence[str] = ()) -> dict[str, dict[str, Any]]:
    """`key` (family, kind, ...) -> summary, `order` first then in order of appearance; plus
    'overall'. Cases recorded before the key existed group under '?'."""
    groups: dict[str, list[Mapping[str, Any]]] = {name: [] for name in order}
    everything = []
    for case in cases:
        groups.setdefault(label_of(case, key), []).append(case)
        everything.append(case)
    table = {name: summarise(group) for name, group in groups.items() if group}
    table["overall"] = summarise(everything)
    return table


def label_of(case: Mapping[str, Any], key: str) -> str:
    """A case's `key` (family, kind, split, asks, ...): its own, else the one kept in its metrics
    (a recorded case), else '?'."""
    return str(case.get(key) or (case.get("metrics") or {}).get(key) or "?")


def _void(case: Mapping[str, Any]) -> bool:
    """The machine already had a problem in the case's families: the case counts in no rate."""
    return bool((case.get("metrics") or {}).get("void"))


def _forced(case: Mapping[str, Any]) -> bool:
    """The engine made the final answer from the evidence (the model never finished)."""
    return bool((case.get("metrics") or {}).get("forced_answer"))


def headline(cases: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The numbers issue 13 targets: fault cases right (forced answers never count), controls
    right, canary leaks, forced answers."""
    counted = [c for c in cases if not _void(c)]
    faults = [c for c in counted if c.get("kind") in ("precise", "vague")]
    controls = [c for c in counted if c.get("kind") == "control"]

    def rate(group: Sequence[Mapping[str, Any]]) -> float | None:
        return sum(1 for c in group if c["success"]) / len(group) if group else None

    return {
        "fault_cases": len(faults), "fault_success_rate": rate(faults),
        "controls": len(controls), "control_success_rate": rate(controls),
        "forced_answers": sum(1 for c in cases if _forced(c)),
        "void_cases": len(cases) - len(counted),
        "steered_answers": sum(1 for c in cases if (c.get("metrics") or {}).get("steered")),
        "steered_right": sum(1 for c in cases if (c.get("metrics") or {}).get("steered") and c["success"]),
        "canary_leaks": sum(int((c.get("metrics") or {}).get("canary_leaks") or 0) for c in cases),
    }


def format_headline(numbers: Mapping[str, Any]) -> str:
    def share(rate: float | None, count: int) -> str:
        return "—" if rate is None else f"{round(rate * count)}/{count} ({rate:.0%})"

    return (f"fault cases right: {share(numbers['fault_success_rate'], numbers['fault_cases'])} · "
            f"controls right: {share(numbers['control_success_rate'], numbers['controls'])} · "
            f"forced answers: {numbers['forced_answers']} · "
            f"steered retries: {numbers.get('steered_answers', 0)} ({numbers.get('steered_right', 0)} right) · "
            f"canary leaks: {numbers['canary_leaks']}"
            + (f" · void (machine not quiet): {numbers['void_cases']}" if numbers.get("void_cases") else ""))


def markdown_table(headings: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Aligned Markdown pipe table: readable in a terminal, pastes into docs as is."""
    widths = [max(len(str(r[i])) for r in [headings, *rows]) for i in range(len(headings))]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"

    return "\n".join([line(headings), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, rows)])


def format_table(by_scenario: Mapping[str, Mapping[str, Any]], *, title: str = "", label: str = "scenario") -> str:
    headings = [label, *(h for _, h, _ in COLUMNS)]
    rows = [
        [name, *(fmt.format(summary.get(key, 0) or 0) for key, _, fmt in COLUMNS)]
        for name, summary in by_scenario.items()
        if isinstance(summary, Mapping)
    ]
    table = markdown_table(headings, rows)
    return f"{title}\n{table}" if title else table


KIND_ORDER = ("precise", "vague", "control")
SPLIT_ORDER = ("dev", "dev2", "dev3", "sealed", "unnamed")


def grouped(cases: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Every view of a set of cases: per scenario, family, kind, split and kind of question (what
    it asks for), the headline, and the headline of each split."""
    splits: dict[str, list[Mapping[str, Any]]] = {}
    for case in cases:
        splits.setdefault(label_of(case, "split"), []).append(case)
    return {
        "by_scenario": summarise_by_scenario(cases),
        "by_family": summarise_by(cases, "family"),
        "by_kind": summarise_by(cases, "kind", KIND_ORDER),
        "by_split": summarise_by(cases, "split", SPLIT_ORDER),
        "by_asks": summarise_by(cases, "asks"),
        "headline": headline(cases),
        "headline_by_split": {split: headline(group) for split, group in splits.items()},
    }


def format_report(cases: Sequence[Mapping[str, Any]], *, title: str = "") -> str:
    """The tables a person reads after an evaluation: per case, family, kind, split and kind of
    question, the headline and (with more than one split) each split's headline."""
    views = grouped(cases)
    parts = [
        format_table(views["by_scenario"], title=title),
        format_table(views["by_family"], label="family"),
        format_table(views["by_kind"], label="kind"),
        format_table(views["by_split"], label="split"),
        format_table(views["by_asks"], label="question asks"),
        format_headline(views["headline"]),
    ]
    by_split = views["headline_by_split"]
    if len(by_split) > 1:
        parts.append("\n".join(f"{split}: {format_headline(numbers)}" for split, numbers in by_split.items()))
    return "\n\n".join(parts)
