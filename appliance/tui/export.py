"""Export a stored run as a Markdown file a person can attach to a ticket or read later."""

from __future__ import annotations

import time
from pathlib import Path

from appliance.tui.history_source import RunReplay
from appliance.tui.render import answer_markdown, format_args, status_words


def replay_markdown(replay: RunReplay) -> str:
    row = replay.row
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row.started_at))
    parts = [
        f"# {row.question}",
        f"Run `{row.run_id}` · {when} · {status_words(row.status)} · {row.steps} steps"
        + (f" · model {row.model}" if row.model else ""),
    ]
    for step in replay.steps:
        parts.append(f"## Step {step.step}: {step.action}")
        if step.thought:
            parts.append(f"**Thought:** {step.thought}")
        parts.append(f"**Action:** `{step.action}` `{format_args(step.action_input, limit=400)}`")
        parts.append(f"**Observation ({step.observation_status}):** {step.observation_summary}")
        if step.observation:
            parts.append("```\n" + step.observation.rstrip() + "\n```")
        if step.reflection:
            parts.append(f"**Reflection:** {step.reflection.reason} — plan: {step.reflection.next_plan}")
    parts.append(
        answer_markdown(
            answer=replay.answer,
            evidence=replay.evidence,
            result=replay.result,
            status=row.status,
            error=replay.error,
            forced=replay.forced,
        )
    )
    return "\n\n".join(parts).rstrip() + "\n"


class MarkdownExporter:
    """Writes `run-<id>.md` into a folder (created on first use); returns the path."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def __call__(self, replay: RunReplay) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"run-{replay.row.run_id[:12]}.md"
        path.write_text(replay_markdown(replay), encoding="utf-8")
        return path
