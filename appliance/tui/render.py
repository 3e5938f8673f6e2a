"""Plain-text and Markdown renderings the TUI shows (and exports): pure functions, no Textual.

Kept apart from the widgets so the exact words on screen can be unit-tested and reused by the
export command of the history panel.
"""

from __future__ import annotations

from appliance.errors import terminal_safe

import json
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

FOLD_LINES = 6  # observations longer than this start folded
ARGS_MAX_CHARS = 160

_STATUS_WORDS = {
    "finished": "finished",
    "max_steps": "stopped at the step limit",
    "budget": "stopped by the token/time budget",
    "cancelled": "cancelled",
    "error": "failed",
    "interrupted": "interrupted",
    "running": "running",
}


_SHORT_STATUS = {"max_steps": "step limit", "budget": "budget", "error": "failed"}


def short_status(status: str) -> str:
    """At most 11 characters, for the history table."""
    return _SHORT_STATUS.get(status, status)[:11]


def status_words(status: str) -> str:
    return _STATUS_WORDS.get(status, status)


def answer_title(status: str) -> str:
    return "Answer" if status == "finished" else f"Answer ({status_words(status)})"


def format_args(args: Mapping[str, Any] | None, limit: int = ARGS_MAX_CHARS) -> str:
    """Compact one-line JSON of a tool's arguments, cut at `limit` characters."""
    text = json.dumps(dict(args or {}), ensure_ascii=False, separators=(", ", ": "), default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def step_stats(tokens_per_second: float, threads: int | None, threads_batch: int | None) -> str:
    """'61 tok/s · threads 1/2' for a step card's border ('' when nothing is known)."""
    parts = []
    if tokens_per_second:
        parts.append(f"{tokens_per_second:.0f} tok/s")
    if threads is not None:
        parts.append(f"threads {threads}/{threads_batch if threads_batch is not None else threads}")
    return " · ".join(parts)


def should_fold(text: str, max_lines: int = FOLD_LINES) -> bool:
    """Long observations start folded so the steps stay readable on 24 rows."""
    return text.count("\n") + 1 > max_lines or len(text) > max_lines * 80


def observation_title(status: str, summary: str, cached: bool = False, width: int = 60) -> str:
    head = f"observation · {status}" + (" (reused)" if cached else "")
    summary = " ".join((summary or "").split())
    if summary:
        head += f" — {summary}"
    return head if len(head) <= width else head[: width - 1] + "…"


def answer_markdown(
    *,
    answer: str,
    evidence: Sequence[str] = (),
    result: Mapping[str, Any] | None = None,
    status: str = "finished",
    error: str = "",
    forced: bool = False,
    heading: bool = True,
    raw_key: str = "",
    as_read: Sequence[str] | None = None,
) -> str:
    """The final answer as Markdown: the prose and the evidence it cites, in plain words (the
    structured result stays in the run's record: `appliance runs show`).

    heading=False leaves the title out (the TUI puts it in the answer box's border instead).
    raw_key: the key that shows the evidence as read, named beside its title; as_read: the cited
    facts as the tools returned them, shown instead of the plain words.
    """
    # what the machine, the model or the database wrote reaches the terminal without control sequences
    answer, error = terminal_safe(answer), terminal_safe(error)
    evidence = [terminal_safe(item) for item in evidence]
    raw = [terminal_safe(item).replace("```", "` ` `") for item in as_read or ()]
    parts: list[str] = []
    if heading:
        parts.append(f"## {answer_title(status)}")
    if answer.strip():
        parts.append(answer.strip())
    elif status != "finished":
        parts.append(f"_No answer: the run {status_words(status)}._")
    if forced:
        parts.append("_The appliance wrote this answer itself from what it found._")
    if error:
        parts.append(f"**Error:** {error}")
    title = "### Evidence" if heading else "**Evidence**"
    if as_read is not None:
        parts.append(f"{title} as the tools returned it" + (f" ({raw_key}: in words)" if raw_key else ""))
        parts.append("```\n" + ("\n".join(raw) or "(the answer cites no fact)") + "\n```")
    elif evidence:
        parts.append(title + (f" ({raw_key}: as read)" if raw_key else ""))
        parts.append("\n".join(f"- {item}" for item in evidence))
    return "\n\n".join(parts) + "\n"


@dataclass
class StatusState:
    """What the status bar shows; the app changes it in reaction to messages only."""

    model: str = ""
    phase: str = "starting"  # starting, loading, ready, running, cancelling, no model, error
    step: int = 0
    max_steps: int = 0
    tokens_per_second: float = 0.0
    prompt_tokens_reused: int = 0
    prompt_tokens: int = 0
    elapsed: float | None = None
    threads: int | None = None
    threads_batch: int | None = None


def status_text(state: StatusState, width: int = 80) -> str:
    """One line: model · phase · step n/limit · tok/s · reused prompt tokens · elapsed · threads.

    Every optional field has a long and a short form; the short forms are used when the long line
    does not fit, so the whole line stays readable in an 80-column terminal.
    """
    fixed = [state.model or "no model", state.phase]
    if state.max_steps:
        fixed.append(f"step {state.step}/{state.max_steps}")
    pairs: list[tuple[str, str]] = []
    if state.tokens_per_second:
        tps = f"{state.tokens_per_second:.0f}"
        pairs.append((f"{tps} tok/s", f"{tps}t/s"))
    if state.prompt_tokens:
        reused = f"{state.prompt_tokens_reused}/{state.prompt_tokens}"
        pairs.append((f"reused {reused}", f"kv {reused}"))
    if state.elapsed is not None:
        pairs.append((f"{state.elapsed:.0f}s", f"{state.elapsed:.0f}s"))
    if state.threads is not None:
        batch = state.threads_batch if state.threads_batch is not None else state.threads
        pairs.append((f"threads {state.threads}/{batch}", f"thr {state.threads}/{batch}"))
    model = fixed[0]
    for choice in (0, 1):
        line = " · ".join(fixed + [pair[choice] for pair in pairs])
        if len(line) <= width:
            return line
    # Still too wide: shorten the model name, which the person knows anyway, not the numbers.
    rest = " · ".join(fixed[1:] + [pair[1] for pair in pairs])
    room = width - len(rest) - 3
    if room >= 8:
        return (model if len(model) <= room else model[: room - 1] + "…") + " · " + rest
    return rest[:width]
